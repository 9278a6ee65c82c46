// A small address-decoding router, the kind every virtual platform has: N initiators, M
// targets, each target mapped at [base, base + size). The router subtracts the base (targets
// see local addresses), answers unmapped addresses with TLM_ADDRESS_ERROR_RESPONSE and
// forwards all four entry points (b_transport, nb_transport, DMI, debug). Adds no delay.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

namespace embed {

class router : public sc_core::sc_module {
public:
  tlm_utils::multi_passthrough_target_socket<router> tgt;      ///< bind initiators here
  tlm_utils::multi_passthrough_initiator_socket<router> init;  ///< bind targets here, in map() order

  explicit router(sc_core::sc_module_name n) : sc_module(n), tgt("tgt"), init("init") {
    tgt.register_b_transport(this, &router::b_transport);
    tgt.register_nb_transport_fw(this, &router::nb_transport_fw);
    tgt.register_get_direct_mem_ptr(this, &router::get_direct_mem_ptr);
    tgt.register_transport_dbg(this, &router::transport_dbg);
    init.register_nb_transport_bw(this, &router::nb_transport_bw);
    init.register_invalidate_direct_mem_ptr(this, &router::invalidate_direct_mem_ptr);
  }

  /// Maps the target bound to init port `port` (binding order) at [base, base + size).
  void map(unsigned port, std::uint64_t base, std::uint64_t size, const std::string& what) {
    for (const auto& r : ranges_)
      if (base < r.base + r.size && r.base < base + size)
        throw std::invalid_argument(std::string(name()) + ": " + what + " overlaps " + r.what);
    ranges_.push_back({base, size, port, what});
  }

private:
  struct range { std::uint64_t base, size; unsigned port; std::string what; };
  struct pending { int from; std::uint64_t addr; };

  const range* decode(std::uint64_t a, unsigned len) const {
    for (const auto& r : ranges_)
      if (a >= r.base && a - r.base < r.size && len <= r.size - (a - r.base)) return &r;
    return nullptr;
  }

  void b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& d) {
    const std::uint64_t a = p.get_address();
    const range* r = decode(a, p.get_data_length());
    if (!r) { p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); return; }
    p.set_address(a - r->base);
    init[r->port]->b_transport(p, d);
    p.set_address(a);
  }

  unsigned int transport_dbg(int, tlm::tlm_generic_payload& p) {
    const std::uint64_t a = p.get_address();
    const range* r = decode(a, p.get_data_length());
    if (!r) { p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); return 0; }
    p.set_address(a - r->base);
    const unsigned n = init[r->port]->transport_dbg(p);
    p.set_address(a);
    return n;
  }

  bool get_direct_mem_ptr(int, tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
    const std::uint64_t a = p.get_address();
    const range* r = decode(a, 1);
    if (!r) return false;
    p.set_address(a - r->base);
    const bool ok = init[r->port]->get_direct_mem_ptr(p, dmi);
    p.set_address(a);
    // Back to the initiator's addresses, clipped to the mapped range.
    const std::uint64_t last = r->size - 1;
    dmi.set_start_address(std::min<std::uint64_t>(dmi.get_start_address(), last) + r->base);
    dmi.set_end_address(std::min<std::uint64_t>(dmi.get_end_address(), last) + r->base);
    return ok;
  }

  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                     sc_core::sc_time& d) {
    if (ph == tlm::BEGIN_REQ) {
      const range* r = decode(p.get_address(), p.get_data_length());
      if (!r) { p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); return tlm::TLM_COMPLETED; }
      pending_[&p] = {id, p.get_address()};
      port_[&p] = r->port;
      p.set_address(p.get_address() - r->base);
    }
    const auto it = port_.find(&p);
    if (it == port_.end()) return tlm::TLM_COMPLETED;
    const tlm::tlm_sync_enum s = init[it->second]->nb_transport_fw(p, ph, d);
    if (s == tlm::TLM_COMPLETED || ph == tlm::END_RESP) done(p);
    return s;
  }

  tlm::tlm_sync_enum nb_transport_bw(int, tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                     sc_core::sc_time& d) {
    const auto it = pending_.find(&p);
    if (it == pending_.end()) return tlm::TLM_COMPLETED;
    const int from = it->second.from;
    if (ph == tlm::BEGIN_RESP) p.set_address(it->second.addr);
    const tlm::tlm_sync_enum s = tgt[from]->nb_transport_bw(p, ph, d);
    if (s == tlm::TLM_COMPLETED) done(p);
    return s;
  }

  void done(tlm::tlm_generic_payload& p) {
    const auto it = pending_.find(&p);
    if (it != pending_.end()) p.set_address(it->second.addr);
    pending_.erase(&p);
    port_.erase(&p);
  }

  void invalidate_direct_mem_ptr(int port, sc_dt::uint64 s, sc_dt::uint64 e) {
    for (const auto& r : ranges_)
      if (static_cast<int>(r.port) == port)
        for (unsigned i = 0; i < tgt.size(); ++i)
          tgt[i]->invalidate_direct_mem_ptr(s + r.base, e + r.base);
  }

  std::vector<range> ranges_;
  std::map<tlm::tlm_generic_payload*, pending> pending_;
  std::map<tlm::tlm_generic_payload*, unsigned> port_;
};

}  // namespace embed
