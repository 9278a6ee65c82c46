// kernel_traffic: the GPU compute kernels' own DRAM traffic (ARCHITECTURE §3 `gpu_compute`:
// "contention with cDMA reads"), issued to GPU memory while the cDMA engine reads.
//
// When a layer's kernel starts (start_kernel(), called from vdnn_runtime::on_layer by the
// platform), the kernel's read and write bytes (kernel_bytes: the roofline's per-layer DRAM
// bytes, workloads/compute/roofline.h) are cut into requests of request_bytes and issued at
// evenly spaced times over the kernel's compute time, reads and writes interleaved in
// proportion. The kernel time is the roofline's, not stretched by the memory's answer; the
// traffic keeps at most outstanding() requests in flight (a GPU keeps many, not unboundedly
// many), so an oversubscribed DRAM shows up as queueing for every initiator, the cDMA engine
// included, and as kernel requests issued behind their schedule (late_bytes()).
//
// Every transaction carries dram_initiator_ext{initiator_id} so gpu_memory_controller keeps
// the kernels' statistics apart from the engine's (the engine's transactions carry no
// extension: id 0). Addresses cycle through a scratch region [base, base + span_bytes) (reads
// in its first half, writes in its second) placed where no functional data lives; the bytes
// are real transactions (the controller moves data), their content is meaningless.
//
// LT (default): b_transport, each request when the simulation reaches its start time (not up
// to a quantum ahead: the LT DRAM serves bookings in call order, so a request booked early
// would delay engine accesses due before it; docs/memory.md "LT and the quantum"): its planned
// time, or, once outstanding() requests are in flight, the earliest of their response times
// (a min-heap of the LT responses; since session 24, as AT's request limit: before, LT was
// open loop and a backlog the DRAM could not carry grew without bound);
// wait_idle() also waits for the last LT response. AT (params.approximately_timed): 4-phase
// nb_transport_fw with pooled payloads, up to max_outstanding requests in flight, request
// exclusion rule, END_REQ / BEGIN_RESP through a PEQ (Accellera at_initiator shape).
//
// The per-layer byte split and the issue schedule are pure functions (kernel_bytes,
// kernel_schedule) with their own tests.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "tlm/core/payload_pool.h"
#include "tlm/core/units.h"
#include "workloads/compute/roofline.h"
#include "workloads/network/network.h"

namespace cdma::workloads {

/// DRAM bytes one kernel reads and writes.
struct kernel_bytes {
  std::uint64_t read = 0, write = 0;
  std::uint64_t total() const { return read + write; }
};

/// Forward kernel of layer `l`: reads its input and weights, writes its output
/// (write = output.bytes(), read = forward_bytes - write; total = l.forward_bytes, the
/// roofline's forward DRAM bytes).
kernel_bytes forward_kernel_bytes(const layer& l);

/// Backward kernels of `l`: total = round(forward_bytes x backward_bytes_factor) (the
/// roofline's backward bytes). Split: the data gradient reads dY and W and writes dX, the
/// weight gradient reads X and dY and writes dW, so reads are in + 2 out + w and writes
/// in + w of 2 (in + out + w); that read fraction, (F + out) / 2F with F = forward_bytes,
/// is applied to the total (rounded to the nearest byte).
kernel_bytes backward_kernel_bytes(const layer& l, const gpu_params& g);

/// The issue plan of one kernel: `reads` + `writes` requests, request k (0-based) issued at
/// start + floor(duration x k / count); request k is a write iff
/// floor((k+1) x writes / count) > floor(k x writes / count) (writes spread evenly).
struct kernel_schedule {
  ps_t start = 0, duration = 0;
  std::uint64_t reads = 0, writes = 0;
  std::uint64_t count() const { return reads + writes; }
  ps_t issue_time(std::uint64_t k) const;
  bool is_write(std::uint64_t k) const;
  /// Requests of `bytes` in pieces of at most `request_bytes` (ceil).
  static std::uint64_t requests(std::uint64_t bytes, std::uint64_t request_bytes) {
    return request_bytes ? (bytes + request_bytes - 1) / request_bytes : 0;
  }
};

/// Parameters of kernel_traffic.
struct kernel_traffic_params {
  /// Bytes per request. Default 64 KiB (model choice: large enough to keep the simulation
  /// fast, small enough that one request occupies the Titan X's 12 channels for ~0.2 us,
  /// well below a layer's compute time; >= 64 B).
  std::uint64_t request_bytes = 64 * 1024;
  /// Scratch region the kernels' addresses cycle through: [base, base + span_bytes), reads
  /// in the first half, writes in the second. The platform puts it at the top of GPU memory.
  std::uint64_t base = 0;
  std::uint64_t span_bytes = 64ull << 20;  ///< default 64 MiB (>= 2 x request_bytes)
  /// dram_initiator_ext id of every transaction. Default 1 (the engine is 0).
  unsigned initiator_id = 1;
  /// false: LT (b_transport + quantum keeper); true: AT (4-phase nb_transport).
  bool approximately_timed = false;
  /// Requests in flight at most (AT and LT); 0 (default) = auto: enough requests to keep
  /// auto_bytes_in_flight in flight, i.e. max(16, ceil(1 MiB / request_bytes)) (16 with the
  /// default 64 KiB requests; 4,096 with 256 B requests). Model choice: 1 MiB in flight
  /// covers 268 GB/s (Titan X roofline DRAM bandwidth) x ~4 us of latency; with a fixed
  /// request count, small requests would cap the kernels' bandwidth far below the roofline's
  /// (16 x 256 B in flight sustain ~8 GB/s) and their traffic would fall behind the kernels.
  unsigned max_outstanding = 0;
  static constexpr std::uint64_t auto_bytes_in_flight = 1u << 20;
  /// The request limit in force: max_outstanding, or the auto value when it is 0.
  unsigned outstanding() const;
  /// Throws std::invalid_argument naming the field.
  void validate() const;
};

class kernel_traffic : public sc_core::sc_module {
public:
  tlm_utils::simple_initiator_socket<kernel_traffic> gpu_mem;

  kernel_traffic(sc_core::sc_module_name name, const kernel_traffic_params& p = {});

  /// A kernel starts now: issues `bytes` spread over `duration` ps. Kernels queue in order.
  void start_kernel(ps_t duration, const kernel_bytes& bytes);

  const kernel_traffic_params& params() const { return p_; }
  /// Successful transactions so far.
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t requests() const { return requests_; }
  std::uint64_t errors() const { return errors_; }
  /// Latest response time seen (ps).
  ps_t last_response_ps() const { return last_response_; }
  /// Kernels started and not yet fully issued.
  std::size_t pending_kernels() const { return jobs_.size() + (busy_ ? 1 : 0); }
  /// AT: requests in flight now.
  unsigned in_flight() const { return in_flight_; }
  /// True when every kernel started so far has issued all its requests and (AT) every
  /// response has arrived.
  bool idle() const { return jobs_.empty() && !busy_ && in_flight_ == 0; }
  /// Waits, in the calling SC_THREAD, until idle() and, in LT, until the last response is
  /// due (a backlogged LT DRAM answers after the issuing time); returns at once if both hold.
  /// The platform calls it at the end of a training step so the step's DRAM statistics hold
  /// all of its kernels' traffic and the next step starts on idle memory.
  void wait_idle();
  /// Bytes of requests issued after their kernel had ended (kernel start + duration): the
  /// traffic fell behind its schedule. It grows (in LT and AT) when outstanding() requests in
  /// flight cannot carry the roofline's DRAM bandwidth, or the DRAM cannot deliver it. LT
  /// overstates it while the cDMA engine books GPU DRAM writes ahead (docs/memory.md "Traffic
  /// behind schedule"). Cumulative since construction.
  std::uint64_t late_bytes() const { return late_bytes_; }
  /// Of late_bytes(), those of requests that had waited for a free slot (outstanding()
  /// requests in flight): the limit, not the memory's backpressure, held them back.
  std::uint64_t late_slot_bytes() const { return late_slot_bytes_; }
  /// Largest delay (ps) of a request's issue behind its planned time since the last
  /// reset_max_lag().
  ps_t max_lag_ps() const { return max_lag_; }
  void reset_max_lag() { max_lag_ = 0; }

private:
  void run();
  void issue(bool write, std::uint64_t len, ps_t at, ps_t kernel_end);
  /// Records the lag of a request issued at `issued` that was planned for `at`.
  void note_issue(std::uint64_t len, ps_t at, ps_t issued, ps_t kernel_end, bool slot_wait);
  void issue_lt(tlm::tlm_generic_payload& p, ps_t at);
  void issue_at(tlm::tlm_generic_payload& p, ps_t at);
  void prepare(tlm::tlm_generic_payload& p, bool write, std::uint64_t len);
  void finish(tlm::tlm_generic_payload& p, ps_t done);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                     sc_core::sc_time& d);
  void peq_cb(tlm::tlm_generic_payload& p, const tlm::tlm_phase& ph);

  kernel_traffic_params p_;
  std::deque<kernel_schedule> jobs_;
  std::deque<kernel_bytes> job_bytes_;
  bool busy_ = false;
  sc_core::sc_event job_ev_, at_ev_, idle_ev_;
  tlm::tlm_generic_payload lt_trans_;
  std::vector<std::uint8_t> buf_;
  std::uint64_t read_cursor_ = 0, write_cursor_ = 0;
  std::uint64_t bytes_read_ = 0, bytes_written_ = 0, requests_ = 0, errors_ = 0;
  ps_t last_response_ = 0;
  std::uint64_t late_bytes_ = 0, late_slot_bytes_ = 0;
  ps_t max_lag_ = 0;
  // LT: response times of the requests issued so far that may still be in flight (min-heap).
  std::priority_queue<ps_t, std::vector<ps_t>, std::greater<ps_t>> lt_responses_;
  // AT
  payload_pool pool_;
  tlm_utils::peq_with_cb_and_phase<kernel_traffic> peq_;
  tlm::tlm_generic_payload* req_owner_ = nullptr;
  unsigned in_flight_ = 0;
};

}  // namespace cdma::workloads
