// gpu_memory_controller: GPU DRAM (ARCHITECTURE §3), a pipeline of small named parts in the
// DRAMSys style, the parts being pure C++ in tlm/memory/dram/:
//   address decoder (address_mapping) -> per-channel queues and bank machines (channel) ->
//   scheduler FCFS / FR-FCFS -> command multiplexer -> timing checker (timing_checker) ->
//   completions -> response queue (this module, base-protocol exclusion rule).
//
// Timing models (gpu_memory_params::model):
//   dram (default)  AT: every transaction is cut into per-channel requests; commands are issued
//                   event-driven at the earliest legal time (no per-clock process); the response
//                   is sent controller_latency_ps after the last burst of the last part.
//                   LT: dram_system::lt_access() from the same decoder and the timing functions
//                   of dram/timing.h (row-hit streaming vs row misses, refresh).
//   bus             the first version: one data bus at peak x efficiency + latency_ps.
// DMI grants pages of the sparse store for functional access; transport_dbg reads/writes it.
//
// Statistics: bytes, requests and achieved bandwidth per initiator (ignorable extension
// dram_initiator_ext), DRAM utilisation, row hits/misses, refreshes, timing-rule violations.
#pragma once
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "tlm/core/bandwidth_server.h"
#include "tlm/core/units.h"
#include "tlm/memory/backing_store.h"
#include "tlm/memory/dram/dram_system.h"
#include "tlm/memory/dram/response_queue.h"
#include "tlm/memory/memory_target.h"

namespace cdma {

enum class gpu_memory_model : std::uint8_t { dram, bus };

/// Parameters of gpu_memory_controller, with defaults for the Titan X (Maxwell), 12 GB GDDR5
/// (ARCHITECTURE §9; NVIDIA spec sheet; the vDNN paper's system).
struct gpu_memory_params {
  /// Addressable bytes. Default 12 GiB (Titan X Maxwell: 12 GB GDDR5). Sparse.
  std::uint64_t size_bytes = 12ull << 30;
  /// Peak DRAM bandwidth, B/s. Default 336e9 = 384-bit bus / 8 x 7 Gb/s per pin (GDDR5).
  /// model=dram: must agree with the preset's peak within 1% (validate()).
  double peak_bandwidth_Bps = 336e9;
  /// Memory channels (Titan X: 12 x 32-bit GDDR5 channels = 384 bit), >= 1 (validate() refuses
  /// 0 for both models). model=dram: must equal the preset's channel count for GDDR presets
  /// (HBM presets: any count; their pseudo-channels come from the preset).
  unsigned channels = 12;
  /// model=bus only: achieved / peak bandwidth for streaming accesses, in (0, 1]. Default 0.9.
  double efficiency = 0.9;
  /// model=bus only: fixed access latency, ps, 0 .. 1 s (memory_params::max_latency_ps).
  /// Default 200 ns (estimate of a GPU DRAM load).
  ps_t latency_ps = 200 * ps_per_ns;
  /// Backing-store page and DMI granule, bytes, 1 .. 1 GiB (backing_store::kMaxPageBytes).
  std::size_t page_bytes = 65536;

  // ---- model=dram ----
  /// Timing model. Default dram.
  gpu_memory_model model = gpu_memory_model::dram;
  /// DRAM preset (dram::preset_names()): gddr5_titanx, gddr5x_titanxp, hbm2_p100, hbm2_v100,
  /// hbm3_h100, or "auto" (default): the preset whose peak bandwidth is within 1% of
  /// peak_bandwidth_Bps (and, for GDDR, whose channel count equals `channels`); if none
  /// matches (e.g. an A100 configuration), the bus model is used (effective_model()).
  std::string dram_preset = "auto";
  /// Address mapping text (dram/address_mapping.h); empty: the default GPU interleave.
  std::string address_mapping;
  /// Row-buffer policy. Default open page.
  dram::page_policy page_policy = dram::page_policy::open;
  /// Scheduler. Default FR-FCFS.
  dram::scheduler scheduler = dram::scheduler::frfcfs;
  /// Fixed latency of the controller front end and PHY (request decode, queues, PHY), ps,
  /// added to every response after the DRAM data, 0 .. 1 s (memory_params::max_latency_ps).
  /// Default 10 ns (estimate; model parameter).
  ps_t controller_latency_ps = 10 * ps_per_ns;
  /// AT: transactions accepted (END_REQ) and not yet answered; a BEGIN_REQ beyond this waits
  /// for END_REQ until one completes. 0 (default): auto, default_max_outstanding() of the
  /// DRAM preset (1024 for the GDDR and HBM2 presets, 2560 for hbm3_h100), 1024 for the bus
  /// model (which does not limit it). See outstanding_limit().
  unsigned max_outstanding = 0;

  /// The AT window in force: max_outstanding, or when it is 0 (auto) the DRAM preset's
  /// default_max_outstanding() (model=dram), else 1024.
  unsigned outstanding_limit() const;
  /// Effective bandwidth of the bus model, B/s = peak x efficiency.
  double effective_bandwidth_Bps() const { return peak_bandwidth_Bps * efficiency; }
  /// Throws std::invalid_argument naming the field if a value is out of range.
  void validate() const;
  /// The preset model=dram uses ("" when "auto" finds none: the bus model is used).
  std::string resolved_dram_preset() const;
  /// Whether a DRAM preset of `preset_Bps` peak describes a memory of `peak_Bps` (B/s): within
  /// 1 % of peak_Bps (the presets' rates are rounded spec-sheet figures, e.g. 547.584 vs
  /// 547.6 GB/s). The one rule of "auto", of validate() and of the platform's message.
  static bool preset_bandwidth_matches(double preset_Bps, double peak_Bps) {
    return std::fabs(preset_Bps - peak_Bps) <= 0.01 * peak_Bps;
  }
  /// The timing model actually used: `model`, or bus when "auto" finds no preset.
  gpu_memory_model effective_model() const {
    return model == gpu_memory_model::dram && !resolved_dram_preset().empty()
               ? gpu_memory_model::dram : gpu_memory_model::bus;
  }
  memory_params to_memory_params() const {
    validate();
    memory_params m;
    m.size_bytes = size_bytes;
    m.bandwidth_Bps = effective_bandwidth_Bps();
    m.latency_ps = latency_ps;
    m.page_bytes = page_bytes;
    return m;
  }
};

/// Default AT window of the controller (gpu_memory_params::max_outstanding = 0) and of the
/// `bench dram` generator for a DRAM preset: max(1024, 16 x channels), i.e. 1024 for the
/// GDDR5 / GDDR5X (12 channels) and HBM2 (64 pseudo-channels) presets and 2560 for hbm3_h100
/// (160 pseudo-channels). Why (Little's law): with all-bank refresh (REFab, tRFC = 350 ns on
/// HBM2 / HBM3) the requests queued at a refreshing channel stay outstanding while the others
/// complete; tRFC / tREFI = 9 % of the channels are refreshing at any time, so the window must
/// grow with the channel count (and the peak bandwidth) or the blocked requests starve the
/// others: with 1024 x 512 B in flight a 64 MiB H100 read stream reaches 0.841 of peak in AT
/// (LT 0.895), with 2560 0.892 (docs/dram.md, Parameters).
unsigned default_max_outstanding(const dram::dram_spec& s);

/// Optional, ignorable extension naming the initiator of a transaction (`id`), for the
/// per-initiator statistics (traffic(id)). Without it a transaction counts as id 0.
struct dram_initiator_ext : tlm::tlm_extension<dram_initiator_ext> {
  unsigned id = 0;
  explicit dram_initiator_ext(unsigned i = 0) : id(i) {}
  tlm::tlm_extension_base* clone() const override { return new dram_initiator_ext(id); }
  void copy_from(const tlm::tlm_extension_base& e) override {
    id = static_cast<const dram_initiator_ext&>(e).id;
  }
};

/// Traffic of one initiator (or of all): counters are cumulative; diff two snapshots to get a
/// window (e.g. one layer).
struct dram_traffic {
  std::uint64_t reads = 0, writes = 0;            ///< successful transactions
  std::uint64_t bytes_read = 0, bytes_written = 0;
  ps_t first_request_ps = 0;  ///< arrival of the first transaction
  ps_t last_response_ps = 0;  ///< response time of the latest transaction
  ps_t latency_sum_ps = 0;    ///< sum of (response - arrival)
  /// Achieved bandwidth over [first request, last response], B/s.
  double achieved_Bps() const {
    const ps_t span = last_response_ps > first_request_ps ? last_response_ps - first_request_ps : 0;
    return span ? static_cast<double>(bytes_read + bytes_written) / ps_to_s(span) : 0.0;
  }
};

/// DRAM-side totals (model=dram).
struct dram_totals {
  /// Commands: the AT channels' (every kind) plus LT's estimate (ACTs, and one RD / WR per
  /// burst; LT issues no PRE or REF commands).
  std::uint64_t acts = 0, pres = 0, reads = 0, writes = 0, refreshes = 0;
  std::uint64_t row_hits = 0;      ///< requests served without an ACT (AT)
  std::uint64_t violations = 0;    ///< timing-rule violations counted by the checkers (0)
  ps_t data_busy_ps = 0;           ///< data-bus busy time summed over channels (AT + LT)
};

class gpu_memory_controller : public sc_core::sc_module, public mem::region_host {
public:
  tlm_utils::simple_target_socket<gpu_memory_controller> tgt;

  SC_HAS_PROCESS(gpu_memory_controller);
  explicit gpu_memory_controller(sc_core::sc_module_name name,
                                 const gpu_memory_params& params = gpu_memory_params{});

  const gpu_memory_params& gpu_params() const { return gpu_params_; }
  /// The memory_target view of the parameters (bus-model bandwidth and latency).
  const memory_params& params() const { return mem_params_; }
  const char* kind() const override { return "cdma::gpu_memory_controller"; }
  mem::backing_store& store() { return store_; }
  const mem::backing_store& store() const { return store_; }
  /// Frees [addr, addr+len) after invalidating DMI pointers into it.
  void discard(std::uint64_t addr, std::uint64_t len);
  /// Maps a content region (backing_store::map_region) after invalidating DMI over the range.
  void map_region(std::uint64_t addr, std::uint64_t len, std::shared_ptr<mem::content_region> region) override;
  void unmap_region(std::uint64_t addr) override;

  /// Bytes read / written by successful b_transport and nb_transport_fw transactions.
  std::uint64_t bytes_read() const { return all_.bytes_read; }
  std::uint64_t bytes_written() const { return all_.bytes_written; }
  /// Data-bus busy time before now (ps): bus model: the bus; dram model: summed over
  /// channels, AT (the channels are first advanced to now; their completions are still
  /// taken at their wake-up) + LT. Only the part of the
  /// booked work that lies before now counts: LT and the bus model book a request's service
  /// when it is made, possibly ahead of now behind a backlog, and an AT burst's data ends
  /// CL/WL + burst after its command. Per resource: booked busy time minus what can lie
  /// after now (at most the end of its booked work - now), as a running maximum over the
  /// calls (dram::dram_system::lt_busy_before()), so over any interval between two calls
  /// the delta is at most (interval x resources): utilisation() is a true fraction.
  ps_t busy_ps();

  // ---- statistics for the platform / runtime ----
  /// Traffic of initiator `id` (dram_initiator_ext; 0 without the extension).
  dram_traffic traffic(unsigned id) const;
  /// Traffic of every initiator seen, by id.
  const std::map<unsigned, dram_traffic>& traffic_by_initiator() const { return per_init_; }
  /// Traffic of all initiators together.
  const dram_traffic& traffic_total() const { return all_; }
  /// Data-bus utilisation over [from_ps, to_ps) given the busy time accumulated in it:
  /// busy_delta / ((to - from) x channels). Take busy_ps() at both ends.
  double utilisation(ps_t busy_delta_ps, ps_t from_ps, ps_t to_ps) const;
  /// DRAM command totals (AT channels + LT estimate); issues pending commands up to now first.
  dram_totals dram_stats();
  /// The DRAM core (nullptr for model=bus).
  dram::dram_system* dram() { return dram_.get(); }
  const dram::dram_spec* spec() const { return dram_ ? &dram_->spec() : nullptr; }
  /// Accesses refused for their byte enables or streaming width (LT and AT; each answered
  /// TLM_BYTE_ENABLE_ERROR_RESPONSE / TLM_BURST_ERROR_RESPONSE, the first few warned one by
  /// one, then a count at each power of two: mem::refusal_log).
  std::uint64_t attribute_refusals() const { return refusals_.count; }
  /// AT transactions accepted and not yet answered.
  std::size_t outstanding() const { return outstanding_; }
  /// AT window in force (gpu_memory_params::outstanding_limit()).
  unsigned max_outstanding() const { return max_out_; }

private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);

  /// Checks and performs the access functionally; false (status set) on error.
  bool functional(tlm::tlm_generic_payload& trans);
  void account(tlm::tlm_generic_payload& trans, ps_t arrival, ps_t response);
  void account(unsigned id, bool read, std::uint64_t len, ps_t arrival, ps_t response);
  static unsigned initiator_id(tlm::tlm_generic_payload& trans);
  /// Simulated time now + `delay` in ps, and the sc_time of a delay in ps: integer fast forms
  /// when the time resolution is 1 ps (the default), else the sc_time_util conversions.
  ps_t at_ps(const sc_core::sc_time& delay = sc_core::SC_ZERO_TIME) {
    if (ps_resolution_ == 1)  // inside service_method() the time is the activation's
      return (in_service_ ? service_now_ : static_cast<ps_t>(sc_core::sc_time_stamp().value())) +
             static_cast<ps_t>(delay.value());
    return at_ps_general(delay);
  }
  ps_t at_ps_general(const sc_core::sc_time& delay);  ///< at_ps() before / without 1-ps resolution
  sc_core::sc_time delay_to(ps_t abs_ps);  ///< from now to the absolute time abs_ps (>= now)
  int ps_resolution_ = -1;  ///< -1 unknown, 1 the time resolution is 1 ps, 0 it is not
  void accept(tlm::tlm_generic_payload& trans, ps_t arrival);
  /// (Re)computes channel `ch`'s wake-up: the time by which it must be advanced so that no
  /// response is late (its completion bound + the controller latency).
  void schedule_wake(unsigned ch);
  /// The one AT process: advances the channels whose wake-up is due, then sends the
  /// responses that are due (in order of time, then acceptance), then re-arms ev_.
  void service_method();
  /// Arms ev_ for the absolute time `t` (ps) unless it is already armed for an earlier time.
  void notify_at(ps_t t) {
    if (t >= ev_at_) return;  // already armed for an earlier (or the same) time
    ev_at_ = t;
    // Inside service_method() the event is armed once, at its end: every re-arming of a
    // pending notification leaves a cancelled entry in the kernel's timed-event queue.
    if (!in_service_) ev_.notify(delay_to(t));
  }
  /// `mm`: the payload has a memory manager (read at acceptance, while the payload is in
  /// the cache: reading it again at response time costs a cache miss per transaction).
  void push_response(tlm::tlm_generic_payload* t, ps_t when, std::uint64_t seq, bool mm);
  void drain(unsigned ch);

  gpu_memory_params gpu_params_;
  unsigned max_out_;  ///< gpu_params_.outstanding_limit()
  memory_params mem_params_;
  mem::backing_store store_;
  bandwidth_server bus_;  // model=bus
  std::unique_ptr<dram::dram_system> dram_;

  // AT state.
  /// An accepted AT transaction; its initiator id, direction and length are read from the
  /// payload once, at acceptance (the payload is then in the cache), for the statistics.
  struct alignas(64) txn {  // one cache line (read at acceptance and at completion)
    tlm::tlm_generic_payload* trans; ps_t arrival; ps_t done; std::uint64_t seq; unsigned parts;
    unsigned init_id; bool read; bool mm; std::uint64_t len;
  };
  /// log2(sizeof(txn)): a channel prefetches txns_[tag] when the request completes
  /// (dram::channel::set_completion_prefetch), as drain() then reads it.
  static constexpr unsigned kTxnShift = 6;
  static_assert(sizeof(txn) == std::size_t{1} << kTxnShift, "txn is one cache line");
  std::vector<txn> txns_;
  std::vector<std::uint32_t> free_txns_;
  std::uint64_t accept_seq_ = 0;  ///< acceptance order (orders responses due at equal times)
  std::size_t outstanding_ = 0;
  tlm::tlm_generic_payload* waiting_req_ = nullptr;  // BEGIN_REQ held back (no END_REQ yet)
  ps_t waiting_since_ = 0;
  /// Channel wake-ups: wake_at_[c] (kNever: none) and an indexed binary min-heap of the
  /// channels that have one, ordered by (wake_at_, channel); a changed wake-up moves its
  /// channel in place (no stale entries to push and pop later).
  std::vector<ps_t> wake_at_;
  /// A heap entry: the channel and its wake-up (a copy of wake_at_[c], so that a sift
  /// compares the entries it holds instead of loading each channel's time).
  struct wentry { ps_t t; std::uint32_t c; };
  std::vector<wentry> wheap_;         ///< channels with a wake-up, heap-ordered
  std::vector<std::int32_t> wpos_;    ///< position of each channel in wheap_ (-1: absent)
  static bool wake_before(const wentry& a, const wentry& b) {
    return a.t != b.t ? a.t < b.t : a.c < b.c;
  }
  void set_wake(unsigned c, ps_t w);  ///< wake_at_[c] = w (kNever removes), heap kept
  void wake_sift(std::size_t i);      ///< restores the heap order around position i
  void wake_sift_down(std::size_t i);  ///< wake_sift() for an entry whose time rose
  /// wake_sift() for an entry whose time fell (or a new one); returns its new position.
  inline std::size_t wake_sift_up(std::size_t i);
  /// A response waiting for its time: the payload and whether it has a memory manager.
  struct resp { tlm::tlm_generic_payload* trans; bool mm; };
  /// Responses by (time, acceptance); a timing wheel over the next few tens of ns (a DRAM
  /// response is due at most CL/WL + burst + controller latency ahead), see
  /// dram/response_queue.h. Set up in the constructor (window from the preset).
  dram::response_queue<resp> resp_q_;
  std::deque<std::pair<tlm::tlm_generic_payload*, bool>> resp_ready_;  ///< (payload, mm)
  tlm::tlm_generic_payload* resp_in_progress_ = nullptr;
  sc_core::sc_event ev_;          ///< wakes service_method (channel wake-ups and responses)
  ps_t ev_at_ = ~ps_t{0};         ///< time ev_ is armed for (~0: not armed)
  bool in_service_ = false;       ///< service_method() is running (it arms ev_ at its end)
  ps_t service_now_ = 0;          ///< simulated time of the running service_method() (ps)

  /// busy_ps(): running maximum of the busy time before now, per AT channel and of the bus.
  std::vector<ps_t> at_seen_;
  ps_t bus_seen_ = 0;

  dram_traffic all_;
  std::map<unsigned, dram_traffic> per_init_;
  dram_traffic* last_init_ = nullptr;  // per_init_ entry of last_init_id_ (map nodes are stable)
  unsigned last_init_id_ = 0;
  std::vector<std::pair<unsigned, dram::request>> parts_;  // accept(): parts of one transaction
  mem::refusal_log refusals_;  ///< byte-enable / streaming-width refusals (attribute_refusals())
};

}  // namespace cdma
