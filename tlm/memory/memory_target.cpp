#include "tlm/memory/memory_target.h"
#include "tlm/memory/access_check.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <limits>
#include <sstream>

#include "tlm/core/sc_time_util.h"

namespace cdma {

using namespace sc_core;
using namespace tlm;

void memory_params::check_latency(const std::string& field, ps_t latency_ps) {
  if (latency_ps > max_latency_ps)
    throw std::invalid_argument(field + " = " + std::to_string(latency_ps) + ": expected 0 .. " +
                                std::to_string(max_latency_ps) + " ps (1 s)");
}

void memory_params::validate() const {
  check_latency("memory_params.latency_ps", latency_ps);
  mem::backing_store::check_page_bytes("memory_params.page_bytes", page_bytes);
  if (bandwidth_Bps == 0.0) return;  // infinitely fast
  if (!std::isfinite(bandwidth_Bps) || bandwidth_Bps < min_bandwidth_Bps) {
    std::ostringstream os;
    os << "memory_params.bandwidth_Bps = " << bandwidth_Bps
       << ": expected 0 (infinitely fast) or a finite rate >= " << min_bandwidth_Bps
       << " B/s (e.g. 25.6e9)";
    throw std::invalid_argument(os.str());
  }
}

namespace {
const memory_params& validated(const memory_params& p) {
  p.validate();
  return p;
}
}  // namespace

memory_target::memory_target(sc_module_name name, const memory_params& params)
    : sc_module(name),
      tgt("tgt"),
      params_(validated(params)),
      store_(params.spill ? mem::backing_store(params.size_bytes, params.page_bytes, params.spill_options)
                          : mem::backing_store(params.size_bytes, params.page_bytes)),
      bus_(params.bandwidth_Bps),
      peq_(this, &memory_target::peq_cb) {
  tgt.register_b_transport(this, &memory_target::b_transport);
  tgt.register_nb_transport_fw(this, &memory_target::nb_transport_fw);
  tgt.register_get_direct_mem_ptr(this, &memory_target::get_direct_mem_ptr);
  tgt.register_transport_dbg(this, &memory_target::transport_dbg);
}

void memory_target::discard(std::uint64_t addr, std::uint64_t len) {
  if (len == 0) return;
  tgt->invalidate_direct_mem_ptr(addr, addr + len - 1);
  store_.discard(addr, len);
}

void memory_target::map_region(std::uint64_t addr, std::uint64_t len,
                               std::shared_ptr<mem::content_region> region) {
  if (len) tgt->invalidate_direct_mem_ptr(addr, addr + len - 1);
  store_.map_region(addr, len, std::move(region));
}

void memory_target::unmap_region(std::uint64_t addr) { store_.unmap_region(addr); }

ps_t memory_target::execute(tlm_generic_payload& trans, ps_t ready_ps) {
  const tlm_command cmd = trans.get_command();
  const std::uint64_t addr = trans.get_address();
  const unsigned int len = trans.get_data_length();

  if (!mem::check_access(trans, store_, params_.size_bytes, name(), refusals_)) return ready_ps;

  if (!mem::perform(trans, store_, name())) return ready_ps;
  (cmd == TLM_READ_COMMAND ? bytes_read_ : bytes_written_) += len;
  // No access arrives before the present time (local time offsets are >= 0): the bus may
  // forget the intervals that ended by then.
  if (bus_.intervals() > 64) bus_.forget_before(now_ps());
  const ps_t finish = bus_.reserve(ready_ps, len);
  trans.set_dmi_allowed(store_.direct_access(addr));
  trans.set_response_status(TLM_OK_RESPONSE);
  return finish + params_.latency_ps;
}

// ---- LT -------------------------------------------------------------------------------------

void memory_target::b_transport(tlm_generic_payload& trans, sc_time& delay) {
  if (!mem::check_arrival(trans, delay, name())) return;
  const ps_t done = execute(trans, now_ps(delay));
  if (trans.is_response_ok()) delay = to_sc(done) - sc_now();
}

// ---- AT -------------------------------------------------------------------------------------

tlm_sync_enum memory_target::nb_transport_fw(tlm_generic_payload& trans, tlm_phase& phase,
                                             sc_time& delay) {
  if (phase == BEGIN_REQ) {
    if (!mem::check_arrival(trans, delay, name())) return TLM_COMPLETED;  // error response
    if (trans.has_mm()) trans.acquire();
    // The request is accepted at once (END_REQ on the return path); the access is done now
    // functionally and its response is scheduled at finish + latency.
    const ps_t done = execute(trans, now_ps(delay));
    peq_.notify(trans, BEGIN_RESP, to_sc(done) - sc_now());
    phase = END_REQ;
    return TLM_UPDATED;
  }
  if (phase == END_RESP) {
    peq_.notify(trans, END_RESP, delay);
    return TLM_COMPLETED;
  }
  return mem::other_fw_phase(trans, phase, name());
}

void memory_target::peq_cb(tlm_generic_payload& trans, const tlm_phase& phase) {
  if (phase == BEGIN_RESP) {
    // Response exclusion rule: one BEGIN_RESP outstanding until its END_RESP.
    if (resp_in_progress_ != nullptr)
      resp_queue_.push_back(&trans);
    else
      send_response(trans);
  } else if (phase == END_RESP) {
    end_response(trans);
  }
}

void memory_target::send_response(tlm_generic_payload& trans) {
  resp_in_progress_ = &trans;
  tlm_phase phase = BEGIN_RESP;
  sc_time delay = SC_ZERO_TIME;
  const tlm_sync_enum status = tgt->nb_transport_bw(trans, phase, delay);
  if (status == TLM_COMPLETED || (status == TLM_UPDATED && phase == END_RESP))
    peq_.notify(trans, END_RESP, delay);  // response ends without an explicit END_RESP call
  else if (status != TLM_ACCEPTED)
    mem::check_begin_resp_answer(trans, status, phase, name());  // an illegal answer: reported
}

void memory_target::end_response(tlm_generic_payload& trans) {
  if (resp_in_progress_ != &trans) {
    mem::stray_end_resp(trans, name());
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

// ---- DMI and debug --------------------------------------------------------------------------

bool memory_target::get_direct_mem_ptr(tlm_generic_payload& trans, tlm_dmi& dmi) {
  // The granted region is one page; its access latency is taken as the fixed latency plus
  // the time to stream the whole page over the data bus (an upper bound for one access).
  return mem::grant_dmi(trans, dmi, store_, params_.size_bytes,
                        to_sc(params_.latency_ps + transfer_ps(store_.page_bytes(), params_.bandwidth_Bps)));
}

unsigned int memory_target::transport_dbg(tlm_generic_payload& trans) {
  return mem::debug_access(trans, store_, params_.size_bytes, name());
}

}  // namespace cdma
