#include "workloads/compute/kernel_traffic.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "tlm/core/sc_time_util.h"
#include "tlm/memory/gpu_memory_controller.h"

namespace cdma::workloads {

using namespace tlm;

kernel_bytes forward_kernel_bytes(const layer& l) {
  kernel_bytes b;
  b.write = std::min(l.output.bytes(), l.forward_bytes);
  b.read = l.forward_bytes - b.write;
  return b;
}

kernel_bytes backward_kernel_bytes(const layer& l, const gpu_params& g) {
  const double f = static_cast<double>(l.forward_bytes);
  const auto total = static_cast<std::uint64_t>(std::llround(f * g.backward_bytes_factor));
  kernel_bytes b;
  if (l.forward_bytes == 0) return b;
  const double out = static_cast<double>(forward_kernel_bytes(l).write);
  b.read = static_cast<std::uint64_t>(std::llround(static_cast<double>(total) * (f + out) / (2.0 * f)));
  b.read = std::min(b.read, total);
  b.write = total - b.read;
  return b;
}

ps_t kernel_schedule::issue_time(std::uint64_t k) const {
  const std::uint64_t n = count();
  if (n == 0) return start;
  return start + static_cast<ps_t>(static_cast<long double>(duration) * k / n);
}

bool kernel_schedule::is_write(std::uint64_t k) const {
  const std::uint64_t n = count();
  if (n == 0) return false;
  const auto at = [&](std::uint64_t x) {
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(x) * writes / n);
  };
  return at(k + 1) > at(k);
}

unsigned kernel_traffic_params::outstanding() const {
  if (max_outstanding) return max_outstanding;
  const std::uint64_t n = request_bytes ? (auto_bytes_in_flight + request_bytes - 1) / request_bytes : 16;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(n, 16, 1u << 16));
}

void kernel_traffic_params::validate() const {
  if (request_bytes < 64 || request_bytes > (1u << 30))
    throw std::invalid_argument("kernel_traffic_params.request_bytes must be in [64 B, 1 GiB], got " +
                                std::to_string(request_bytes));
  if (span_bytes < 2 * request_bytes)
    throw std::invalid_argument("kernel_traffic_params.span_bytes must be >= 2 x request_bytes (" +
                                std::to_string(2 * request_bytes) + "), got " + std::to_string(span_bytes));
  if (max_outstanding > (1u << 16))
    throw std::invalid_argument("kernel_traffic_params.max_outstanding must be in [0 (auto), 65536], got " +
                                std::to_string(max_outstanding));
}

kernel_traffic::kernel_traffic(sc_core::sc_module_name name, const kernel_traffic_params& p)
    : sc_module(name), gpu_mem("gpu_mem"), p_(p), peq_(this, &kernel_traffic::peq_cb) {
  p_.validate();
  gpu_mem.register_nb_transport_bw(this, &kernel_traffic::nb_transport_bw);
  buf_.assign(p_.request_bytes, 0);
  lt_trans_.set_extension(new cdma::dram_initiator_ext(p_.initiator_id));
  SC_HAS_PROCESS(kernel_traffic);
  SC_THREAD(run);
}

void kernel_traffic::start_kernel(ps_t duration, const kernel_bytes& bytes) {
  if (bytes.total() == 0) return;
  kernel_schedule s;
  s.start = now_ps();
  s.duration = duration;
  s.reads = kernel_schedule::requests(bytes.read, p_.request_bytes);
  s.writes = kernel_schedule::requests(bytes.write, p_.request_bytes);
  jobs_.push_back(s);
  job_bytes_.push_back(bytes);
  job_ev_.notify(sc_core::SC_ZERO_TIME);
}

void kernel_traffic::run() {
  for (;;) {
    while (jobs_.empty()) wait(job_ev_);
    const kernel_schedule s = jobs_.front();
    kernel_bytes left = job_bytes_.front();
    jobs_.pop_front();
    job_bytes_.pop_front();
    busy_ = true;
    const ps_t end = s.start + s.duration;
    for (std::uint64_t k = 0; k < s.count(); ++k) {
      const bool wr = s.is_write(k);
      std::uint64_t& rem = wr ? left.write : left.read;
      const std::uint64_t len = std::min<std::uint64_t>(rem, p_.request_bytes);
      rem -= len;
      if (len) issue(wr, len, s.issue_time(k), end);
    }
    busy_ = false;
    if (idle()) idle_ev_.notify(sc_core::SC_ZERO_TIME);
  }
}

void kernel_traffic::wait_idle() {
  while (!idle()) wait(idle_ev_);
  // LT: every request has been issued, but its b_transport booked the DRAM ahead of the
  // present (a backlogged channel answers later): wait for the last response, as AT does, so
  // the next step starts on idle memory.
  if (!p_.approximately_timed && last_response_ > now_ps())
    wait(to_sc(last_response_) - sc_core::sc_time_stamp());
}

void kernel_traffic::note_issue(std::uint64_t len, ps_t at, ps_t issued, ps_t kernel_end,
                                bool slot_wait) {
  if (issued > at) max_lag_ = std::max(max_lag_, issued - at);
  if (issued > kernel_end) {
    late_bytes_ += len;
    if (slot_wait) late_slot_bytes_ += len;
  }
}

void kernel_traffic::prepare(tlm_generic_payload& p, bool write, std::uint64_t len) {
  const std::uint64_t half = p_.span_bytes / 2;
  std::uint64_t& cur = write ? write_cursor_ : read_cursor_;
  if (cur + len > half) cur = 0;
  p.set_command(write ? TLM_WRITE_COMMAND : TLM_READ_COMMAND);
  p.set_address(p_.base + (write ? half : 0) + cur);
  cur += len;
  p.set_data_ptr(buf_.data());
  p.set_data_length(static_cast<unsigned>(len));
  p.set_streaming_width(static_cast<unsigned>(len));
  p.set_byte_enable_ptr(nullptr);
  p.set_byte_enable_length(0);
  p.set_dmi_allowed(false);
  p.set_response_status(TLM_INCOMPLETE_RESPONSE);
}

void kernel_traffic::issue(bool write, std::uint64_t len, ps_t at, ps_t kernel_end) {
  if (!p_.approximately_timed) {
    // At most outstanding() requests in flight, as in AT: the request starts at its planned
    // time, or now, or (when the limit is reached) at the earliest response of those in
    // flight, whichever is latest. Without the limit a backlog the DRAM cannot carry would
    // grow without bound and every engine access booked after it would wait behind it all.
    ps_t start = std::max(at, now_ps());
    bool slot_wait = false;
    for (;;) {
      while (!lt_responses_.empty() && lt_responses_.top() <= start) lt_responses_.pop();
      if (lt_responses_.size() < p_.outstanding()) break;
      start = lt_responses_.top();  // a slot frees when that response arrives
      slot_wait = true;
    }
    prepare(lt_trans_, write, len);
    note_issue(len, at, start, kernel_end, slot_wait);
    issue_lt(lt_trans_, start);
    return;
  }
  // AT: wait for the planned time, a free slot and the request phase (exclusion rule).
  const ps_t now = now_ps();
  if (at > now) wait(to_sc(at) - sc_core::sc_time_stamp());
  const unsigned limit = p_.outstanding();
  bool slot_wait = false;
  while (in_flight_ >= limit || req_owner_ != nullptr) {
    slot_wait |= in_flight_ >= limit;
    wait(at_ev_);
  }
  note_issue(len, at, now_ps(), kernel_end, slot_wait);
  tlm_generic_payload* p = pool_.allocate();
  p->acquire();
  cdma::dram_initiator_ext* ext = nullptr;
  p->get_extension(ext);
  if (!ext) p->set_extension(new cdma::dram_initiator_ext(p_.initiator_id));
  prepare(*p, write, len);
  issue_at(*p, at);
}

void kernel_traffic::issue_lt(tlm_generic_payload& p, ps_t at) {
  // The request starts at `at` (its planned time, or later when outstanding() requests were
  // in flight: issue()); its response time frees its slot. The thread waits for that time
  // instead of running ahead by up to a quantum:
  // the LT DRAM books accesses first come, first served (dram_system::lt_access), so a
  // request booked ahead of its time would delay every access of the engine booked after
  // it, even one due earlier. Booked at its own time, a kernel request delays only accesses
  // due after it, and the result no longer depends on the quantum (docs/memory.md).
  if (at > now_ps()) wait(to_sc(at) - sc_core::sc_time_stamp());
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  gpu_mem->b_transport(p, d);
  lt_responses_.push(now_ps(d));
  finish(p, now_ps(d));
}

void kernel_traffic::issue_at(tlm_generic_payload& p, ps_t) {
  ++in_flight_;
  req_owner_ = &p;
  tlm_phase ph = BEGIN_REQ;
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  switch (gpu_mem->nb_transport_fw(p, ph, d)) {
    case TLM_ACCEPTED: break;  // END_REQ / BEGIN_RESP come on the backward path
    case TLM_UPDATED:
      if (ph == END_REQ || ph == BEGIN_RESP) {
        peq_.notify(p, ph, d);
      } else {
        std::ostringstream m;
        m << "BEGIN_REQ answered TLM_UPDATED with phase " << ph << " (expected END_REQ or BEGIN_RESP)";
        SC_REPORT_ERROR(name(), m.str().c_str());
      }
      break;
    case TLM_COMPLETED:
      req_owner_ = nullptr;
      finish(p, now_ps(d));
      --in_flight_;
      p.release();
      at_ev_.notify();
      if (idle()) idle_ev_.notify(sc_core::SC_ZERO_TIME);
      break;
  }
}

tlm_sync_enum kernel_traffic::nb_transport_bw(tlm_generic_payload& p, tlm_phase& ph,
                                              sc_core::sc_time& d) {
  peq_.notify(p, ph, d);
  return TLM_ACCEPTED;
}

void kernel_traffic::peq_cb(tlm_generic_payload& p, const tlm_phase& ph) {
  if (ph == END_REQ) {
    if (req_owner_ == &p) req_owner_ = nullptr;
  } else if (ph == BEGIN_RESP) {
    if (req_owner_ == &p) req_owner_ = nullptr;  // BEGIN_RESP ends the request phase too
    tlm_phase e = END_RESP;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    gpu_mem->nb_transport_fw(p, e, d);
    finish(p, now_ps());
    --in_flight_;
    p.release();
    if (idle()) idle_ev_.notify(sc_core::SC_ZERO_TIME);
  } else {
    std::ostringstream m;
    m << "illegal phase " << ph << " on the backward path (base protocol)";
    SC_REPORT_ERROR(name(), m.str().c_str());
  }
  at_ev_.notify();
}

void kernel_traffic::finish(tlm_generic_payload& p, ps_t done) {
  if (p.get_response_status() != TLM_OK_RESPONSE) {
    if (errors_++ == 0) {
      std::ostringstream m;
      m << (p.is_read() ? "read" : "write") << " of " << p.get_data_length() << " bytes at 0x"
        << std::hex << p.get_address() << " failed: " << p.get_response_string()
        << " (further errors are only counted)";
      SC_REPORT_WARNING(name(), m.str().c_str());
    }
    return;
  }
  ++requests_;
  (p.is_read() ? bytes_read_ : bytes_written_) += p.get_data_length();
  last_response_ = std::max(last_response_, done);
}

}  // namespace cdma::workloads
