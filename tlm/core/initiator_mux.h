// N-to-1 interconnect: several initiators share one target (e.g. the cDMA engine and the
// GPU compute model both reach the GPU memory controller). Forwards all four TLM entry
// points unchanged; the backward path of nb_transport is routed to the initiator that sent
// the payload. Adds no delay: arbitration is the target's bandwidth rule.
#pragma once
#include <map>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

namespace cdma {

class initiator_mux : public sc_core::sc_module {
public:
  /// Bind any number of initiators here.
  tlm_utils::multi_passthrough_target_socket<initiator_mux> tgt;
  /// Bind to the shared target.
  tlm_utils::simple_initiator_socket<initiator_mux> init;

  explicit initiator_mux(sc_core::sc_module_name name) : sc_module(name), tgt("tgt"), init("init") {
    tgt.register_b_transport(this, &initiator_mux::b_transport);
    tgt.register_nb_transport_fw(this, &initiator_mux::nb_transport_fw);
    tgt.register_get_direct_mem_ptr(this, &initiator_mux::get_direct_mem_ptr);
    tgt.register_transport_dbg(this, &initiator_mux::transport_dbg);
    init.register_nb_transport_bw(this, &initiator_mux::nb_transport_bw);
    init.register_invalidate_direct_mem_ptr(this, &initiator_mux::invalidate_direct_mem_ptr);
  }

private:
  void b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& d) { init->b_transport(p, d); }

  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                     sc_core::sc_time& d) {
    if (ph == tlm::BEGIN_REQ) owner_[&p] = id;
    const tlm::tlm_sync_enum r = init->nb_transport_fw(p, ph, d);
    if (r == tlm::TLM_COMPLETED || ph == tlm::END_RESP) owner_.erase(&p);
    return r;
  }

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                     sc_core::sc_time& d) {
    auto it = owner_.find(&p);
    if (it == owner_.end()) {
      SC_REPORT_ERROR(name(), "nb_transport_bw for a payload this mux never forwarded");
      return tlm::TLM_COMPLETED;
    }
    const int id = it->second;
    const tlm::tlm_sync_enum r = tgt[id]->nb_transport_bw(p, ph, d);
    if (r == tlm::TLM_COMPLETED || ph == tlm::END_RESP) owner_.erase(&p);
    return r;
  }

  bool get_direct_mem_ptr(int, tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
    return init->get_direct_mem_ptr(p, dmi);
  }

  unsigned int transport_dbg(int, tlm::tlm_generic_payload& p) { return init->transport_dbg(p); }

  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
    for (unsigned i = 0; i < tgt.size(); ++i) tgt[i]->invalidate_direct_mem_ptr(start, end);
  }

  std::map<tlm::tlm_generic_payload*, int> owner_;
};

}  // namespace cdma
