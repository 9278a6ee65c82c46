#include "tlm/pcie/pcie_link.h"

#include <limits>
#include <sstream>

#include "tlm/core/sc_time_util.h"

namespace cdma {

using namespace sc_core;
using namespace tlm;

namespace {
pcie::link_params validated(const pcie::link_params& p) {
  p.validate();
  return p;
}
}  // namespace

pcie_link::pcie_link(sc_module_name name, const pcie::link_params& params)
    : sc_module(name),
      tgt("tgt"),
      init("init"),
      params_(validated(params)),
      d2h_(pcie::raw_rate_Bps(params.gen, params.lanes)),
      h2d_(pcie::raw_rate_Bps(params.gen, params.lanes)),
      req_peq_("req_peq"),
      resp_peq_(this, &pcie_link::resp_cb) {
  tgt.register_b_transport(this, &pcie_link::b_transport);
  tgt.register_nb_transport_fw(this, &pcie_link::nb_transport_fw);
  tgt.register_get_direct_mem_ptr(this, &pcie_link::get_direct_mem_ptr);
  tgt.register_transport_dbg(this, &pcie_link::transport_dbg);
  init.register_nb_transport_bw(this, &pcie_link::nb_transport_bw);
  init.register_invalidate_direct_mem_ptr(this, &pcie_link::invalidate_direct_mem_ptr);
  SC_HAS_PROCESS(pcie_link);
  SC_THREAD(at_thread);
}

pcie::link_stats pcie_link::stats(pcie::direction dir) const {
  pcie::link_stats s = stats_[static_cast<int>(dir)];
  s.busy_ps = (dir == pcie::direction::d2h ? d2h_ : h2d_).busy_ps();
  return s;
}

ps_t pcie_link::send(pcie::direction dir, const pcie::tlp_split& s, ps_t ready_ps) {
  auto& st = stats_[static_cast<int>(dir)];
  st.payload_bytes += s.payload_bytes;
  st.wire_bytes += s.wire_bytes;
  st.tlps += s.tlps;
  return (dir == pcie::direction::d2h ? d2h_ : h2d_).reserve(ready_ps, s.wire_bytes);
}

// ---- LT -------------------------------------------------------------------------------------

void pcie_link::b_transport(tlm_generic_payload& trans, sc_time& delay) {
  const std::uint64_t addr = trans.get_address();
  const std::uint64_t len = trans.get_data_length();
  const ps_t lat = params_.latency_ps;

  if (trans.is_write()) {
    const ps_t arrive = send(pcie::direction::d2h, pcie::mwr_split(addr, len, params_),
                             now_ps(delay)) + lat;
    delay = to_sc(arrive) - sc_time_stamp();
    init->b_transport(trans, delay);
  } else if (trans.is_read()) {
    const ps_t arrive = send(pcie::direction::d2h, pcie::mrd_split(addr, len, params_),
                             now_ps(delay)) + lat;
    delay = to_sc(arrive) - sc_time_stamp();
    init->b_transport(trans, delay);
    pcie::tlp_split cpl;
    if (trans.is_response_ok()) {
      cpl = pcie::cpld_split(addr, len, params_);
    } else {  // one completion without data (UR / CA status)
      cpl.tlps = 1;
      cpl.wire_bytes = pcie::cpl_overhead_bytes(params_);
    }
    const ps_t back = send(pcie::direction::h2d, cpl, now_ps(delay)) + lat;
    delay = to_sc(back) - sc_time_stamp();
  } else {
    init->b_transport(trans, delay);
  }
}

// ---- AT -------------------------------------------------------------------------------------

tlm_sync_enum pcie_link::nb_transport_fw(tlm_generic_payload& trans, tlm_phase& phase,
                                         sc_time& delay) {
  if (phase == BEGIN_REQ) {
    if (trans.has_mm()) trans.acquire();
    req_peq_.notify(trans, delay);
    phase = END_REQ;
    return TLM_UPDATED;
  }
  if (phase == END_RESP) {
    resp_peq_.notify(trans, END_RESP, delay);
    return TLM_COMPLETED;
  }
  std::ostringstream os;
  os << "nb_transport_fw: illegal phase " << phase << " from the initiator (base protocol)";
  SC_REPORT_ERROR(name(), os.str().c_str());
  return TLM_COMPLETED;
}

void pcie_link::at_thread() {
  for (;;) {
    wait(req_peq_.get_event());
    while (tlm_generic_payload* trans = req_peq_.get_next_transaction()) {
      sc_time delay = SC_ZERO_TIME;
      b_transport(*trans, delay);  // the same timing rule as LT
      resp_peq_.notify(*trans, BEGIN_RESP, delay);
    }
  }
}

void pcie_link::resp_cb(tlm_generic_payload& trans, const tlm_phase& phase) {
  if (phase == BEGIN_RESP) {
    if (resp_in_progress_ != nullptr)
      resp_queue_.push_back(&trans);  // response exclusion rule
    else
      send_response(trans);
    return;
  }
  if (phase == END_RESP) {
    if (resp_in_progress_ != &trans) {
      SC_REPORT_ERROR(name(), "END_RESP for a transaction whose response is not in progress");
      return;
    }
    resp_in_progress_ = nullptr;
    if (trans.has_mm()) trans.release();
    if (!resp_queue_.empty()) {
      tlm_generic_payload* next = resp_queue_.front();
      resp_queue_.pop_front();
      send_response(*next);
    }
  }
}

void pcie_link::send_response(tlm_generic_payload& trans) {
  resp_in_progress_ = &trans;
  tlm_phase phase = BEGIN_RESP;
  sc_time delay = SC_ZERO_TIME;
  const tlm_sync_enum status = tgt->nb_transport_bw(trans, phase, delay);
  if (status == TLM_COMPLETED || (status == TLM_UPDATED && phase == END_RESP))
    resp_peq_.notify(trans, END_RESP, delay);
}

// ---- DMI, debug, backward path --------------------------------------------------------------

bool pcie_link::get_direct_mem_ptr(tlm_generic_payload&, tlm_dmi& dmi) {
  dmi.allow_none();
  dmi.set_start_address(0);
  dmi.set_end_address(std::numeric_limits<std::uint64_t>::max());
  return false;
}

unsigned int pcie_link::transport_dbg(tlm_generic_payload& trans) {
  return init->transport_dbg(trans);
}

tlm_sync_enum pcie_link::nb_transport_bw(tlm_generic_payload&, tlm_phase&, sc_time&) {
  // The link talks to the host with b_transport only; an AT call back is a protocol error.
  SC_REPORT_ERROR(name(), "nb_transport_bw: unexpected call (the link uses b_transport)");
  return TLM_COMPLETED;
}

void pcie_link::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  tgt->invalidate_direct_mem_ptr(start, end);
}

}  // namespace cdma
