// pcie_link: a full-duplex PCIe link between the GPU (endpoint side, target socket `tgt`) and
// the host (root complex side, initiator socket `init`, bound to host memory). Addresses
// pass through unchanged. Every number comes from link_math.h (one rule, one place).
//
//   initiator ──tgt──► [endpoint: split into TLPs, tags, credits]
//                           │ d2h direction: MWr, MRd (+ Ack/UpdateFC for completions)
//                           ▼ bandwidth_server at tlp_rate_Bps, + latency_ps
//                      [root complex: + rc_latency_ps, host memory access per TLP/request]
//                           │ h2d direction: CplD (+ Ack/UpdateFC for MWr/MRd)
//                           ▼ bandwidth_server at tlp_rate_Bps, + latency_ps
//                      [endpoint: completions in order, tag freed by the last] ──► response
//
// Each direction is its own bandwidth_server (serialisation of TLP and DLLP wire bytes at
// tlp_rate_Bps) and its own transmit queue. Both paths use the same bandwidth servers and the
// same link_math rules:
//
// LT (b_transport, analytic, no per-TLP event; the target never waits):
//   write: the MWr stream (mwr_split wire bytes) is reserved on d2h at now+delay; with finite
//          posted credits each MWr also waits for the credits the stream (all transactions so
//          far) has had back (pcie::credit_stream, the LT form of AT's UpdateFC loop); the root complex
//          writes host memory as TLPs arrive: everything but the last TLP from the first
//          arrival, the last TLP from the last arrival (+ rc_latency each); done = the later.
//          Ack / UpdateFC DLLPs (dllps_due, counted over the stream) are reserved on h2d.
//   read:  read tags are tracked over the whole stream of MRd, across transactions
//          (pcie::tag_scoreboard: the release time of every tag, i.e. the arrival of the last
//          CplD of the request that holds it), as the credits are. When every request of the
//          read finds a tag free at t0 and completion credits are infinite (the usual case):
//          the MRd stream on d2h (non-posted credits: credit_stream over all MRd); host memory
//          reads the first request when it arrives and the rest right after; the CplD stream
//          (cpld_split) on h2d from the first request's data; the end is bounded by the link,
//          by the last MRd's issue plus the first request's round trip and by host memory;
//          + latency; the requests' tags are released from the first one's completions to
//          the end, evenly (tag_scoreboard::release_run). The Acks and UpdateFCs the MRds
//          cause on h2d are booked before the CplDs they share h2d with, so a single large
//          read pays for them (as AT does); in lt_read_paced per request (those of requests
//          arriving while h2d is idle before the read's first completion is ready: counted,
//          no link time, as they use the idle h2d).
//          Otherwise (a request must wait for a tag, or finite CplH/CplD credits), request
//          by request with no event (lt_read_paced): the MRd takes the tag released
//          earliest and its non-posted credits, host memory is read for it when it arrives,
//          its CplDs go out when its data is there through the completion credits
//          (credit_stream over all CplD), and its tag is released when the last one arrives.
//          A failed read returns one completion without data (cpl_overhead_bytes) per
//          failing request (one for the read in the first case).
//   zero length: completes at once with TLM_OK_RESPONSE and no TLP.
// AT (nb_transport_fw, 4-phase base protocol, Accellera at_target shape): BEGIN_REQ is
//   answered TLM_ACCEPTED; a PEQ sends END_REQ and cuts the transaction into TLPs; two
//   transmit threads (one per direction) serialise TLPs one by one, oldest eligible first,
//   after taking flow-control credits (PH/PD, NPH, CplH/CplD) and, for MRd, a tag; receivers
//   send an Ack every ack_every TLPs and an UpdateFC every updatefc_every released TLPs of a
//   finite credit type; the root complex accesses host memory per MWr and per MRd
//   (b_transport; host memory never waits) and queues the CplDs when the data is there.
//   BEGIN_RESP goes out through a PEQ when the last MWr is in host memory / the last CplD has
//   arrived, respecting the response exclusion rule; END_RESP is accepted on the forward path.
// Whole-transaction check (LT and AT), before the transaction is split into TLPs: a read or
//   write whose address + length wraps past 2^64, or (once set_host_size() gave the host's
//   size) does not lie whole inside host memory [0, size), gets TLM_ADDRESS_ERROR_RESPONSE at
//   once: no TLP, no host access (nothing written), no time, one SC_REPORT_WARNING from the
//   link naming the caller's address and length. A null data pointer with a non-zero length
//   gets TLM_GENERIC_ERROR_RESPONSE and a warning (mem::check_data_ptr).
// Other commands, byte enables or streaming: forwarded unchanged to the host (no link traffic;
//   the host answers with its error response).
// DMI: refused (returns false for the whole address range) so every byte is timed.
// Debug transport: forwarded unchanged (a null data pointer with a length: 0 bytes and a
//   warning).
#pragma once
#include <cstdint>
#include <deque>
#include <vector>
#include <set>
#include <memory>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
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
  std::uint64_t wire_bytes = 0;     ///< TLP payload + TLP overheads, bytes (DLLPs excluded)
  std::uint64_t tlps = 0;           ///< TLPs sent
  ps_t busy_ps = 0;                 ///< time the direction was serialising TLPs and DLLPs, ps
  std::uint64_t dllps = 0;          ///< DLLPs sent (Ack, UpdateFC)
  std::uint64_t dllp_bytes = 0;     ///< their wire bytes
};

/// One CplD arriving at the endpoint (AT), recorded when record_completions(true).
struct cpl_event {
  ps_t time = 0;              ///< arrival at the endpoint, ps
  std::uint64_t request = 0;  ///< request number (per link, in issue order)
  std::uint32_t tag = 0;
  std::uint64_t addr = 0;
  std::uint32_t bytes = 0;
  bool last = false;          ///< last completion of its request
};
/// A tag freed at the endpoint (AT).
struct tag_event {
  ps_t time = 0;
  std::uint64_t request = 0;
  std::uint32_t tag = 0;
};

}  // namespace pcie

class pcie_link : public sc_core::sc_module {
public:
  tlm_utils::simple_target_socket<pcie_link> tgt;      ///< GPU-side initiators bind here
  tlm_utils::simple_initiator_socket<pcie_link> init;  ///< binds to the host memory

  /// Throws std::invalid_argument if `params` is invalid (link_params::validate).
  pcie_link(sc_core::sc_module_name name, const pcie::link_params& params = pcie::link_params{});
  ~pcie_link() override;

  const pcie::link_params& params() const { return params_; }
  /// Size of the host memory behind `init` (bytes; addresses [0, bytes)): every read and write
  /// is then checked whole against it before it is split into TLPs (see the file comment). 0
  /// (the default): unknown; only the wrap past 2^64 is checked and a range error of host
  /// memory comes back per TLP run from the host (the in-range runs are then written).
  /// The platform sets it to host_mem.size_bytes.
  void set_host_size(std::uint64_t bytes) { host_size_ = bytes; }
  std::uint64_t host_size() const { return host_size_; }
  /// Rate of each direction for TLP and DLLP bytes, B/s (tlp_rate_Bps).
  double rate_Bps() const { return dir_[0].server.rate(); }
  pcie::link_stats stats(pcie::direction dir) const;
  /// End of the latest reservation of a direction (ps): the direction is busy serializing
  /// TLPs/DLLPs while this lies in the future (LT and AT).
  ps_t busy_until(pcie::direction dir) const { return dir_[static_cast<int>(dir)].server.busy_until(); }

  /// Tags held by outstanding AT reads now.
  std::uint32_t tags_in_use() const { return params_.tags - static_cast<std::uint32_t>(free_tags_.size()); }
  /// Records AT completion and tag-free events (off by default: a 64 MiB read has 1 M CplD).
  void record_completions(bool on) { record_ = on; }
  const std::vector<pcie::cpl_event>& completion_log() const { return cpl_log_; }
  const std::vector<pcie::tag_event>& tag_log() const { return tag_log_; }

  const char* kind() const override { return "cdma::pcie_link"; }

private:
  struct txn;
  struct request;
  struct tlp;
  struct dllp {
    bool updatefc = false;
    int type = 0;  // credit type 0 posted, 1 non-posted, 2 completion
    std::uint64_t hdr = 0, data = 0;
  };
  struct action;
  /// One direction: its bandwidth server and transmitter state, the credits the far
  /// receiver advertised, and that receiver's Ack / UpdateFC counters.
  struct dir_state {
    bandwidth_server server;
    std::deque<tlp*> q[3];
    std::deque<dllp> dllps;
    std::uint64_t hdr_avail[3] = {0, 0, 0}, data_avail[3] = {0, 0, 0};
    bool hdr_inf[3] = {true, true, true}, data_inf[3] = {true, true, true};
    sc_core::sc_event wake;
    // receiver side
    std::uint64_t received = 0;
    /// Per credit type: TLPs released over the stream (dllps_due), and the header / data
    /// credits released since the last UpdateFC (what it returns).
    std::uint64_t rel_tlps[3] = {0, 0, 0}, rel_hdr[3] = {0, 0, 0}, rel_data[3] = {0, 0, 0};
    pcie::link_stats st;
  };

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

  static bool link_carries(const tlm::tlm_generic_payload& trans);
  /// The whole-transaction check of a carried read/write with a non-zero length: false (the
  /// response status set, one warning) if it wraps past 2^64 or leaves host memory.
  bool check_whole(tlm::tlm_generic_payload& trans);
  /// Root complex -> host memory: [off, off+n) of `trans` from `ready_ps`; returns the time
  /// the access is done (ps); copies an error status into `trans`.
  ps_t host_access(tlm::tlm_generic_payload& trans, std::uint64_t off, std::uint64_t n,
                   ps_t ready_ps, bool* ok = nullptr);
  /// Reserves `bytes` of one LT block on `d` from `ready` and counts it; returns its end.
  ps_t lt_send(int d, const pcie::tlp_split& s, ps_t ready);
  /// `occupy` false: counted in the statistics only (sent on an idle direction).
  void lt_dllps(int d, std::uint64_t n, ps_t ready, bool occupy = true);
  ps_t lt_write(tlm::tlm_generic_payload& trans, ps_t t0);
  ps_t lt_read(tlm::tlm_generic_payload& trans, ps_t t0);
  /// lt_read request by request, for a read some of whose requests wait for a tag or whose
  /// completions take finite completion credits.
  ps_t lt_read_paced(tlm::tlm_generic_payload& trans, ps_t t0);

  // AT path.
  void peq_cb(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase);
  void send_response(tlm::tlm_generic_payload& trans);
  void start_txn(tlm::tlm_generic_payload& trans);
  void finish_txn(txn* t);
  void schedule(const action& a, ps_t at);
  void tx_thread_d2h() { tx_thread(0); }
  void tx_thread_h2d() { tx_thread(1); }
  void tx_thread(int d);
  tlp* pick(int d);
  void action_thread();
  void on_tlp_arrive(int d, tlp* x);
  void on_dllp_arrive(int d, const dllp& x);
  void release_credits(int d, int type, std::uint64_t hdr, std::uint64_t data);

  pcie::link_params params_;
  std::uint64_t host_size_ = 0;  ///< set_host_size(); 0 = unknown
  // Per-link constants of link_math (pure functions of params_), computed once: LT uses them
  // per transaction. ser_ps(params_, n) == transfer_ps(n, rate_).
  double rate_ = 0;                       ///< tlp_rate_Bps(params_), B/s
  std::uint32_t ovh_ = 0, cpl_ovh_ = 0;   ///< tlp_overhead_bytes / cpl_overhead_bytes
  std::uint64_t dllp_bytes_ = 0;          ///< dllp_wire_bytes
  std::uint64_t cpl_payload_ = 0;         ///< completion_payload
  ps_t ser_mps_ = 0;                      ///< ser_ps of a full MWr (mps + ovh_ bytes)
  ps_t ser_mrd_ = 0;                      ///< ser_ps of an MRd (ovh_ bytes)
  /// Root complex -> host memory payload of host_access(), reused (no payload construction,
  /// i.e. no extension-array allocation, per access). While a b_transport with it is under
  /// way (sub_busy_: the target may wait()), a nested or concurrent access uses its own.
  tlm::tlm_generic_payload sub_;
  bool sub_busy_ = false;
  /// Host memory advanced simulated time inside b_transport (it called wait()): warned once
  /// (warn_host_waited()). From then on the AT root complex makes each host access in a
  /// worker thread of its own (host_job), so that accesses overlap as with a host memory that
  /// annotates, instead of holding the link's action thread for each wait.
  bool host_waited_ = false;
  /// `waited`: how far simulated time advanced inside the call; `passed`: the delay given to it.
  void warn_host_waited(const tlm::tlm_generic_payload& sub, ps_t waited, ps_t passed);
  /// An AT host access handed to a worker: a TLP's MWr data (r == nullptr) or an MRd's read.
  struct host_job {
    txn* t = nullptr;
    request* r = nullptr;
    std::uint64_t off = 0, len = 0;
    ps_t ready = 0;         ///< the access's start (its arrival + rc_latency), ps
    std::uint64_t seq = 0;  ///< MWr: its number; MRd: the number of MWr dispatched before it
  };
  /// A worker thread and the job it runs (one event each: a job wakes one worker).
  struct host_worker_slot {
    sc_core::sc_event ev;
    host_job job;
    bool busy = false;
  };
  /// At most this many host accesses run at once (one worker thread each); later ones wait
  /// in host_jobs_ for a worker. A model bound (a root complex has a finite number of
  /// requests to memory in flight), not a published figure; it also bounds the threads'
  /// memory (breaker2 s21: a host waiting 200 us per access made 22 444 threads).
  static constexpr std::size_t kMaxHostWorkers = 1024;
  /// Gives `j` to an idle worker, a new one (below kMaxHostWorkers), or queues it.
  void dispatch_host_job(host_job j);
  /// Worker thread: runs its job, then queued ones, then waits for the next on its event.
  void host_worker(host_worker_slot* w);
  void run_host_job(const host_job& j);
  /// The part of on_tlp_arrive() after the host access: a write's completion, a read's
  /// completions scheduled (`done`: the access's end).
  void host_write_done(txn* t, ps_t done);
  void host_read_done(txn* t, request* r, ps_t done);
  std::vector<std::unique_ptr<host_worker_slot>> host_workers_;
  std::vector<host_worker_slot*> host_idle_;
  std::deque<host_job> host_jobs_;           ///< waiting for a worker (all kMaxHostWorkers busy)
  sc_core::sc_event host_writes_ev_;         ///< a worker's MWr finished
  std::uint64_t host_write_seq_ = 0;         ///< MWr jobs dispatched so far
  std::set<std::uint64_t> host_writes_open_; ///< numbers of the MWr jobs not finished
  dir_state dir_[2];
  std::vector<std::uint32_t> free_tags_;
  /// LT: posted (PH/PD, d2h MWr), non-posted (NPH, d2h MRd) and completion (CplH/CplD, h2d
  /// CplD) credits over the whole stream, and the read tags over the whole stream of MRd.
  pcie::credit_stream lt_posted_, lt_nonposted_, lt_completion_;
  /// LT: TLPs counted for the Ack and UpdateFC DLLPs over the whole stream (dllps_due): TLPs
  /// received per direction of travel, and per direction and credit type released.
  std::uint64_t lt_ack_count_[2] = {0, 0};
  std::uint64_t lt_fc_count_[2][3] = {{0, 0, 0}, {0, 0, 0}};
  /// The Ack and UpdateFC DLLPs due for `tlps` TLPs of credit type `type` that travelled in
  /// direction `d` (the DLLPs travel the other way); `finite`: that type's credits are finite.
  std::uint64_t lt_dllps_due(int d, int type, std::uint64_t tlps, bool finite);
  pcie::tag_scoreboard lt_tags_;
  std::uint64_t seq_ = 0, next_request_ = 0;

  tlm_utils::peq_with_cb_and_phase<pcie_link> peq_;
  tlm::tlm_generic_payload* resp_in_progress_ = nullptr;
  std::deque<tlm::tlm_generic_payload*> resp_queue_;
  /// The AT path's pending actions (TLP / DLLP arrivals, credit releases, completions ready),
  /// in time order and, at equal times, in the order scheduled: exactly the order in which
  /// tlm_utils::peq_with_get (a std::multimap on the time) returned them, kept by value in a
  /// binary heap on (time, sequence) so that an action costs no allocation. act_ev_ is
  /// notified for the earliest one (schedule(), action_thread()).
  /// TLP records of the AT path, reused (a 4 KiB window makes 16 MWr or 64 CplD: one
  /// allocation each before): new_tlp() takes a reset one, free_tlp() returns it.
  std::vector<tlp*> tlp_free_;
  tlp* new_tlp();
  void free_tlp(tlp* x) { tlp_free_.push_back(x); }
  struct timed_action;
  std::vector<timed_action> act_heap_;
  std::uint64_t act_seq_ = 0;
  sc_core::sc_event act_ev_{"actions"};

  bool record_ = false;
  std::vector<pcie::cpl_event> cpl_log_;
  std::vector<pcie::tag_event> tag_log_;
};

}  // namespace cdma
