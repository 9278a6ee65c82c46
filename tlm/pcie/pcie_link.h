// pcie_link: a full-duplex PCIe link between the GPU (endpoint side, target socket `tgt`) and
// the host (root complex side, initiator socket `init`, bound to host memory). Addresses
// pass through unchanged.
//
// Each direction is one bandwidth_server at raw_rate_Bps(gen, lanes); a transfer occupies
// it for its wire bytes (payload + per-TLP overhead, link_math.h). LT timing (b_transport):
//   write (MWr, posted):  t1 = d2h.reserve(now + delay, mwr wire bytes) + latency
//                         forwarded to the host with delay = t1 - now; host adds its delay.
//   read  (MRd + CplD):   t1 = d2h.reserve(now + delay, mrd wire bytes) + latency
//                         forwarded to the host with delay = t1 - now; host adds its delay
//                         (data ready at t2); t3 = h2d.reserve(t2, cpld wire bytes) + latency.
//                         A failed read returns one header-only completion (20 B + ECRC).
//   other commands:       forwarded unchanged, no link traffic (the host answers the error).
// AT (nb_transport_fw): BEGIN_REQ is accepted at once (TLM_UPDATED, END_REQ); a helper
// SC_THREAD runs the same LT computation and BEGIN_RESP is sent at the computed time through
// a PEQ, respecting the response exclusion rule. So LT and AT share one timing rule.
// DMI: refused (returns false for the whole address range) so that every byte crossing the
// link is timed by the link's bandwidth servers and counted in its stats.
// Debug transport: forwarded unchanged.
#pragma once
#include <cstdint>
#include <deque>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/peq_with_get.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm/core/bandwidth_server.h"
#include "tlm/pcie/link_math.h"

namespace cdma {

namespace pcie {

/// Link direction: d2h = device-to-host (upstream: MWr data, MRd requests), h2d =
/// host-to-device (downstream: read completions).
enum class direction { d2h = 0, h2d = 1 };

/// Traffic counters of one direction.
struct link_stats {
  std::uint64_t payload_bytes = 0;  ///< data bytes carried (MWr / CplD payload), bytes
  std::uint64_t wire_bytes = 0;     ///< payload + TLP overheads, bytes
  std::uint64_t tlps = 0;           ///< TLPs sent
  ps_t busy_ps = 0;                 ///< time the direction was serialising TLPs, ps
};

}  // namespace pcie

class pcie_link : public sc_core::sc_module {
public:
  tlm_utils::simple_target_socket<pcie_link> tgt;      ///< GPU-side initiators bind here
  tlm_utils::simple_initiator_socket<pcie_link> init;  ///< binds to the host memory

  /// Throws std::invalid_argument if `params` is invalid (link_params::validate).
  pcie_link(sc_core::sc_module_name name, const pcie::link_params& params = pcie::link_params{});

  const pcie::link_params& params() const { return params_; }
  /// Raw rate of each direction, B/s.
  double rate_Bps() const { return d2h_.rate(); }
  pcie::link_stats stats(pcie::direction dir) const;

  const char* kind() const override { return "cdma::pcie_link"; }

private:
  // Target side (from the GPU).
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  // Initiator side (from the host).
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);

  /// Sends the TLPs of `s` on `dir` from `ready_ps`; returns when the last byte has left (ps).
  ps_t send(pcie::direction dir, const pcie::tlp_split& s, ps_t ready_ps);

  // AT path.
  void at_thread();
  void resp_cb(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase);
  void send_response(tlm::tlm_generic_payload& trans);

  pcie::link_params params_;
  bandwidth_server d2h_;
  bandwidth_server h2d_;
  pcie::link_stats stats_[2];

  tlm_utils::peq_with_get<tlm::tlm_generic_payload> req_peq_;
  tlm_utils::peq_with_cb_and_phase<pcie_link> resp_peq_;
  tlm::tlm_generic_payload* resp_in_progress_ = nullptr;
  std::deque<tlm::tlm_generic_payload*> resp_queue_;
};

}  // namespace cdma
