// cdma_engine: descriptor-driven DMA engine with compression units on the offload path and
// decompression units on the prefetch path (Rhu et al., HPCA 2018, "Compressing DMA Engine").
//
// Three layers (NVDLA cmod style):
//   ports      this sc_module: sockets, irq pin, the ring-walker thread, time
//   registers  cdma_regs (tlm/cdma/cdma_regs.h, pure C++): decode, side effects, interrupts
//   core       descriptor format (descriptor.h), window codecs (tlm/codec/window.h) and the
//              window pipeline timing (dma_pipeline.h, shared with a future AT path)
//
// Sockets (named after their member):
//   gpu_mem  initiator  -> GPU memory (reads activations, writes prefetched data; the
//                          descriptor ring when RING_CTRL.LOCATION = 0)
//   pcie     initiator  -> PCIe towards host memory (compressed data, metadata tables; the
//                          ring when RING_CTRL.LOCATION = 1)
//   regs     target     <- MMIO from the driver (docs/cdma_registers.md)
//   irq      sc_out<bool>, level: high while IRQ_STATUS & IRQ_ENABLE != 0
//
// Programming model: the driver writes 64-byte descriptors into a ring in memory and advances
// RING_TAIL; the engine fetches the descriptor at RING_HEAD with a timed read, executes it,
// writes its status back into the descriptor (timed), advances RING_HEAD and raises DONE
// (coalesced) or ERROR. A failing descriptor never stops the ring.
//
// Data formats on the host side (offload / prefetch): compressed windows are packed back to
// back from `dst` (window k starts where window k-1 ended); the metadata table at `meta` has
// one 8-byte entry per window (tlm/codec/window.h). Loosely timed: one SC_THREAD walks the
// ring with a tlm_quantumkeeper; each window's stage times come from the targets' annotated
// delays and dma_pipeline. Approximately timed (params.approximately_timed): the same thread
// drives 4-phase nb_transport with pooled payloads and up to max_outstanding windows in flight
// (cdma_engine_at.cpp; docs/cdma_engine.md "Approximately-timed path").
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>
#include <systemc>
#include <tlm>
#include <deque>
#include <functional>
#include <iterator>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include "tlm/cdma/cdma_regs.h"
#include "tlm/cdma/descriptor.h"
#include "tlm/cdma/dma_pipeline.h"
#include "tlm/codec/codec.h"
#include "tlm/core/payload_pool.h"
#include "tlm/core/units.h"
#include "tlm/memory/access_check.h"  // mem::refusal_log

namespace cdma {

/// Largest window the engine takes (cdma_engine_params::window_bytes), 1 MiB: 256 x the 4 KiB
/// default of ARCHITECTURE §5 (model choice). The engine holds every window it works on whole,
/// twice (read buffer and codec output, the output sized for the codec's worst case), once in
/// LT and once per window in flight in AT (up to max_outstanding, 32 by default): memory grows
/// with the window, not with the tensor (a 1 GiB window made a Fashion-MNIST batch-1 run take
/// 4.3 GB in LT, 3.2 GB in AT). A hardware unit stages its window in on-chip buffers, so real
/// windows are small; and past 1 MiB the window hardly changes the ratio any more (its 8-byte
/// metadata entry is 0.0008 % of the data, against 0.2 % at 4 KiB). Not from the paper.
constexpr std::size_t max_window_bytes = std::size_t{1} << 20;

/// Parameters of the cDMA engine. Defaults follow the thin first version: 4 units of
/// 32 B/cycle at 1 GHz (= 128 GB/s aggregate, enough for 13.8x x 12.8 GB/s / 1.4, HPCA 2018
/// sizes its units for the PCIe rate times the compression ratio).
struct cdma_engine_params {
  std::size_t window_bytes = 4096;       ///< uncompressed bytes per window (ARCHITECTURE §5), min_window_bytes .. max_window_bytes
  unsigned compression_units = 4;        ///< units on the offload path
  unsigned decompression_units = 4;      ///< units on the prefetch path
  double unit_bytes_per_cycle = 32.0;    ///< throughput of one unit, uncompressed bytes per cycle
  /// Per-codec throughput of one unit, uncompressed bytes per cycle at clock_hz, indexed by
  /// codec::codec_id (raw, zvc, rle, zlib, lz4, zstd); 0 (the default): unit_bytes_per_cycle.
  /// A model parameter for exploring codecs of unequal hardware cost (a zlib / zstd unit is
  /// slower and larger than a ZVC unit; no published rate for such units at this clock is
  /// used here): the same rate on the offload (compression) and the prefetch (decompression)
  /// path. Platform keys `cdma.codec_bytes_per_cycle.<codec>`.
  std::array<double, std::size(codec::all_codec_ids)> codec_bytes_per_cycle{};
  /// Per-codec throughput of one decompression unit (prefetch path), uncompressed bytes per
  /// cycle at clock_hz, indexed like codec_bytes_per_cycle; 0 (the default): the codec's
  /// compression rate, bytes_per_cycle(id). A model parameter for codecs whose decoder is
  /// faster or slower than their encoder (software zlib and zstd decode several times faster
  /// than they encode; no published hardware rate is used here). Platform keys
  /// `cdma.codec_decompression_bytes_per_cycle.<codec>`.
  std::array<double, std::size(codec::all_codec_ids)> codec_decompression_bytes_per_cycle{};
  /// One compression unit's throughput for `id`, bytes per cycle: codec_bytes_per_cycle[id],
  /// or unit_bytes_per_cycle when that is 0.
  double bytes_per_cycle(codec::codec_id id) const {
    const auto i = static_cast<std::size_t>(id);
    const double v = i < codec_bytes_per_cycle.size() ? codec_bytes_per_cycle[i] : 0.0;
    return v > 0.0 ? v : unit_bytes_per_cycle;
  }
  /// One decompression unit's throughput for `id`, bytes per cycle:
  /// codec_decompression_bytes_per_cycle[id], or bytes_per_cycle(id) when that is 0.
  double decompression_bytes_per_cycle(codec::codec_id id) const {
    const auto i = static_cast<std::size_t>(id);
    const double v = i < codec_decompression_bytes_per_cycle.size() ? codec_decompression_bytes_per_cycle[i] : 0.0;
    return v > 0.0 ? v : bytes_per_cycle(id);
  }
  double clock_hz = 1e9;                 ///< unit clock (Hz)
  unsigned pipeline_latency_cycles = 16; ///< per-window latency of a unit, cycles at clock_hz
  unsigned max_outstanding = 32;         ///< windows in flight between read issue and write done
  /// Largest descriptor ring accepted (RING_MAX register), entries; >= 2 (validate()). Default 4096
  /// (a 256 KiB ring; model choice). Platform key `cdma.queue_depth`.
  std::size_t queue_depth = 4096;
  ps_t register_latency_ps = 10000;      ///< MMIO access time (10 ns; model estimate), 0 .. 1e12 ps (1 s, memory_params::max_latency_ps)
  /// Reset value of IRQ_COALESCE_COUNT: raise DONE once per this many finished descriptors
  /// (0 or 1: every descriptor). Errors are never coalesced.
  unsigned irq_coalesce_count = 1;
  /// Reset value of IRQ_COALESCE_TIMEOUT, ns: raise DONE this long after the first finished
  /// descriptor not yet signalled (0: no timer; then only the count raises DONE).
  unsigned irq_coalesce_timeout_ns = 0;
  /// false: loosely timed (b_transport with a quantum keeper; the default, bit-for-bit the
  /// original path). true: approximately timed (4-phase nb_transport_fw on gpu_mem and pcie,
  /// payloads from a payload_pool, up to max_outstanding windows in flight; see
  /// docs/cdma_engine.md "Approximately-timed path"). Platform key `mode` (lt | at).
  bool approximately_timed = false;
  /// Where the (de)compression units sit (ARCHITECTURE §6; docs/cdma_engine.md "Placement"):
  /// dma (default: one pool at the engine, the crossbar link carries uncompressed data) or
  /// memory_controller (units beside the DRAM channels: only compressed bytes cross the link;
  /// the unit count and throughput above are then the total over all channels).
  /// Platform key `cdma.placement`.
  unit_placement placement = unit_placement::dma;
  /// Bandwidth of the GPU-crossbar link between GPU memory and the engine, B/s, each way;
  /// 0 (default) = unlimited (the link adds no time, as before placement was modelled). Model
  /// parameter without a published value for the Titan X; docs/cdma_engine.md gives a worked
  /// example. Platform key `cdma.xbar_bandwidth`.
  double xbar_Bps = 0.0;

  /// Smallest window accepted, 64 B (docs/cdma_engine.md; the platform key cdma.window's lower
  /// bound): one 8-byte metadata entry per window is then 12.5 % of the data.
  static constexpr std::size_t min_window_bytes = 64;
  /// Throws std::invalid_argument naming the field and the expected form: window_bytes in
  /// [min_window_bytes, max_window_bytes]; compression_units and decompression_units >= 1;
  /// unit_bytes_per_cycle and clock_hz finite and > 0, with their product (one unit's rate)
  /// >= 1 B/s (a window of at most 1 MiB then takes < 1.1e18 ps, inside the ps timeline);
  /// queue_depth >= 2 (a ring has at least 2 entries); xbar_Bps 0 (unlimited) or finite and
  /// >= 1 B/s; register_latency_ps <= 1 s (memory_params::check_latency). The constructor calls it.
  void validate() const;
};

/// Per-descriptor record, for reports: what moved and when (times in ps).
struct dma_record {
  std::uint64_t sequence = 0;         ///< 0-based count of descriptors started since construction
  std::uint32_t index = 0;            ///< ring index the descriptor was fetched from
  dma_descriptor desc;
  ps_t started = 0, finished = 0;    ///< fetch issued / status written back
  std::uint64_t out_data_bytes = 0;   ///< bytes written to the destination (data only)
  std::uint64_t meta_bytes = 0;       ///< metadata table bytes moved
  std::uint64_t windows = 0, windows_raw = 0;
  dma_error error = dma_error::none;
};

class cdma_engine : public sc_core::sc_module {
public:
  tlm_utils::simple_initiator_socket<cdma_engine> gpu_mem;
  tlm_utils::simple_initiator_socket<cdma_engine> pcie;
  tlm_utils::simple_target_socket<cdma_engine> regs;
  sc_core::sc_out<bool> irq;

  /// Throws std::invalid_argument (naming the module and the field) if `p` is invalid
  /// (cdma_engine_params::validate).
  cdma_engine(sc_core::sc_module_name name, const cdma_engine_params& p = {});

  const cdma_engine_params& params() const { return p_; }
  /// The register block (read-only view, e.g. for tests and reports).
  const cdma_regs& registers() const { return regs_; }
  /// Register accesses refused for their shape (data length other than 4 or streaming width
  /// below 4: TLM_BURST_ERROR_RESPONSE; byte enables: TLM_BYTE_ENABLE_ERROR_RESPONSE), timed
  /// accesses only; the first few warned one by one, then a count at each power of two
  /// (mem::refusal_log).
  std::uint64_t attribute_refusals() const { return reg_refusals_.count; }
  /// Every descriptor finished so far, in completion order.
  const std::vector<dma_record>& records() const { return records_; }
  /// Sum of compression / decompression unit busy time (ps).
  ps_t compression_busy_ps() const { return comp_busy_; }
  ps_t decompression_busy_ps() const { return decomp_busy_; }
  /// Bytes moved over the crossbar link between GPU memory and the engine (data windows;
  /// uncompressed with placement dma, compressed with memory_controller), and its busy time
  /// (ps; 0 while the link is unlimited).
  std::uint64_t xbar_bytes() const { return xbar_bytes_; }
  ps_t xbar_busy_ps() const { return xbar_busy_; }
  /// AT only: the payload pool of the engine's nb_transport transactions (bounded: at most
  /// max_outstanding + a few payloads are ever created).
  const payload_pool& pool() const { return pool_; }
  /// AT only: largest number of windows in flight (read issued, write not done) seen.
  unsigned peak_in_flight() const { return peak_in_flight_; }

private:
  using socket_t = tlm_utils::simple_initiator_socket<cdma_engine>;
  void run();
  /// Executes a fetched, validated descriptor; returns its error (none on success).
  dma_error execute(dma_record& r);
  /// Before an offload or prefetch allocates or moves anything: descriptor_problem() (a
  /// bad_descriptor) and the range query (mem::query_range) of its GPU range [SRC or DST,
  /// + LEN) on gpu_mem and of its metadata table on pcie (gpu_mem_response / pcie_response when
  /// a memory answers that the range is not whole inside it). Warns with the reason and sets
  /// fail_addr_ on an error. Copies: none.
  dma_error precheck(const dma_record& r);
  dma_error copy(const dma_descriptor& d, dma_record& r, bool to_host);
  dma_error offload(const dma_descriptor& d, dma_record& r);
  dma_error prefetch(const dma_descriptor& d, dma_record& r);
  /// Offload's last step in both timing styles: writes the metadata table to d.meta after
  /// `after` (ps) and finishes the record. pcie_response on a failed write.
  dma_error write_table(const dma_descriptor& d, const std::vector<std::uint8_t>& table, ps_t after,
                        dma_record& r);
  /// Prefetch's first step in both timing styles: reads the table of d (one 8-byte entry per
  /// window) from d.meta at `at` (ps). pcie_response on a failed read.
  /// `done`: time (ps) the table has arrived.
  dma_error read_table(const dma_descriptor& d, ps_t at, std::vector<std::uint8_t>& table, ps_t& done,
                       dma_record& r);
  /// One blocking access at absolute time `at` (ps, >= now); returns the completion time in
  /// `done` or false on an error response (the address is kept for ERROR_ADDR).
  bool access(socket_t& s, tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
              std::size_t len, ps_t at, ps_t& done);
  socket_t& ring_socket() { return regs_.ring_in_host() ? pcie : gpu_mem; }
  bool codec_supported(unsigned id) const { return id < 32 && ((codec_caps_ >> id) & 1u); }
  ps_t local_now();
  void advance_to(ps_t t);
  void update_irq();
  void drive_irq();
  void on_coalesce_timeout();

  // regs target
  /// Timed register access: the decode, the side effects and register_latency_ps.
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& d);
  /// AT register access: BEGIN_REQ is served as b_transport and completed on the return path
  /// (TLM_COMPLETED: END_REQ, BEGIN_RESP and END_RESP implied, the delay + register_latency_ps),
  /// so no response is ever in progress on this socket; a stray END_RESP or a backward-path
  /// phase is an SC_ERROR naming the access; an ignorable phase is ignored (TLM_ACCEPTED).
  tlm::tlm_sync_enum regs_nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                          sc_core::sc_time& d);
  /// Debug access, non-intrusive (no side effect, wait or event notification: SystemC's
  /// tlm_transport_dbg_if, IEEE 1666-2011 §11.3): reads of a defined offset (reads have no side
  /// effects); writes are not supported (0 bytes, TLM_COMMAND_ERROR_RESPONSE): a register
  /// write is a command to the engine. Only command, address, data pointer and length count
  /// (streaming width and byte enables are not debug attributes).
  unsigned int transport_dbg(tlm::tlm_generic_payload& p);
  /// Sets p's response status from `a`; returns the bytes moved (4 when ok, else 0).
  static unsigned int reg_response(tlm::tlm_generic_payload& p, reg_access a);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);
  // initiator backward paths (AT: END_REQ / BEGIN_RESP go into the PEQ)
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&);
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) {}

  cdma_engine_params p_;
  std::uint32_t codec_caps_ = 0;
  cdma_regs regs_;
  mem::refusal_log reg_refusals_;
  tlm_utils::tlm_quantumkeeper qk_;
  sc_core::sc_event doorbell_ev_, irq_ev_, coalesce_ev_;
  std::vector<dma_record> records_;
  std::uint64_t sequence_ = 0;
  std::uint64_t fail_addr_ = 0;

  ps_t comp_busy_ = 0, decomp_busy_ = 0;
  std::uint64_t xbar_bytes_ = 0;
  ps_t xbar_busy_ = 0;
  /// A window pipeline with the engine's link and placement (units = 0: a plain copy).
  /// The unit pipeline of `units` units at one unit's rate for codec `id` (units 0: no units).
  /// A pipeline of `units` units at the rate of codec `id`: a compression unit's
  /// (bytes_per_cycle) or, with `decompress`, a decompression unit's. units 0: plain copy.
  dma_pipeline make_pipeline(unsigned units, codec::codec_id id = codec::codec_id::raw, bool decompress = false) const;
  void account_link(const dma_pipeline& pipe) {
    xbar_bytes_ += pipe.link_bytes();
    xbar_busy_ += pipe.link_busy_ps();
  }
  tlm::tlm_generic_payload trans_;
  /// The engine's two window buffers, `in` (the window read: raw for offload / copy,
  /// compressed for prefetch) and `out` (codec output / decoded window), in one allocation
  /// with out - in = 2 KiB modulo 4 KiB. Two back-to-back heap blocks are 4 KiB + 16 B apart:
  /// stores to one then alias loads from the other at the same offset within a 4 KiB page
  /// ("4K aliasing"), which made a 4 KiB copy between them ~3x slower on Zen 3
  /// (bench/codec_bench.cpp @engine rows, docs/codecs.md). Pointers stay valid until the next
  /// reserve() that grows a buffer.
  class window_buffers {
  public:
    void reserve(std::size_t in_bytes, std::size_t out_bytes) {
      if (in_bytes <= in_cap_ && out_bytes <= out_cap_) return;
      in_cap_ = std::max(in_cap_, in_bytes);
      out_cap_ = std::max(out_cap_, out_bytes);
      const std::size_t gap = (in_cap_ + 4095) / 4096 * 4096 + 2048;
      mem_.assign(64 + gap + out_cap_, 0);
      const auto a = reinterpret_cast<std::uintptr_t>(mem_.data());
      in_ = mem_.data() + ((64 - a % 64) % 64);
      out_ = in_ + gap;
    }
    std::uint8_t* in() { return in_; }
    std::uint8_t* out() { return out_; }

  private:
    std::vector<std::uint8_t> mem_;
    std::size_t in_cap_ = 0, out_cap_ = 0;
    std::uint8_t* in_ = nullptr;
    std::uint8_t* out_ = nullptr;
  };
  window_buffers bufs_;
  std::map<unsigned, std::unique_ptr<codec::codec>> codecs_;
  const codec::codec& codec_for(codec::codec_id id, unsigned width);

  // ---- approximately-timed path (cdma_engine_at.cpp) ----
  /// State of one nb_transport transaction of the engine.
  struct at_txn {
    int sock = 0;              ///< 0 gpu_mem, 1 pcie
    bool completed_fw = false; ///< TLM_COMPLETED on the forward call: no END_RESP to send
    bool done = false;         ///< response received (time in `done_ps`)
    bool write = false;        ///< TLM_WRITE_COMMAND (else a read)
    ps_t done_ps = 0;
    std::size_t window = 0;    ///< window index k in at_stream, or no_window (at_access)
  };
  static constexpr std::size_t no_window = ~std::size_t{0};
  /// A finished at_stream transaction, handed from the PEQ callback to at_stream (at_done_).
  struct at_done_item {
    std::size_t k = 0;   ///< window index
    bool write = false;  ///< the window's write (else its read)
  };
  /// One window in flight through read -> unit -> write.
  struct at_window {
    std::size_t k = 0;
    std::vector<std::uint8_t> in, out;
    tlm::tlm_generic_payload* rd = nullptr;
    tlm::tlm_generic_payload* wr = nullptr;
    bool transformed = false, written = false;
    bool retired = false;      ///< written, or abandoned after an error (counted in `completed`)
    ps_t ready = 0;            ///< unit output available (write may issue)
    ps_t read_done = 0;        ///< read completion time (staged in window order, see at_stream)
    bool read_ok = false;      ///< read done and transformed, not yet staged
    std::size_t out_len = 0;   ///< bytes to write
  };
  /// What a streaming descriptor does per window (copy, offload, prefetch).
  struct at_stream_spec {
    socket_t* rs = nullptr;
    socket_t* ws = nullptr;
    dma_error read_err = dma_error::none, write_err = dma_error::none;
    std::size_t windows = 0;
    /// Stage after the read and the functional transform: (window, read done) -> time the
    /// write may issue (link and units: dma_pipeline::offload_stage / prefetch_stage / link).
    std::function<ps_t(at_window&, ps_t)> stage;
    std::function<void(std::size_t, std::uint64_t&, std::size_t&)> read_req;  ///< k -> addr, len
    /// Functional transform of window w (in -> out, out_len); returns false on a corrupt window.
    std::function<bool(at_window&)> transform;
    std::function<std::uint64_t(at_window&)> write_addr;  ///< called in window order
    std::function<void(at_window&)> written;              ///< after a successful write
  };
  static int sock_index(const socket_t& s, const cdma_engine& e) { return &s == &e.gpu_mem ? 0 : 1; }
  /// Sends BEGIN_REQ once the socket's request phase is free (waits); handles the return.
  /// `window`: the at_stream window index (its completion is then queued in at_done_), or
  /// no_window.
  tlm::tlm_generic_payload* at_begin(socket_t& s, tlm::tlm_command cmd, std::uint64_t addr,
                                     std::uint8_t* data, std::size_t len,
                                     std::size_t window = no_window);
  /// A whole AT transaction (waits for its response). Same contract as access().
  bool at_access(socket_t& s, tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                 std::size_t len, ps_t at, ps_t& done);
  /// Checks a finished transaction's response, counts it, releases it. false on error.
  bool at_finish(tlm::tlm_generic_payload* p, ps_t& done);
  dma_error at_stream(const at_stream_spec& s, dma_pipeline& pipe, dma_record& r);
  dma_error at_copy(const dma_descriptor& d, dma_record& r, bool to_host);
  dma_error at_offload(const dma_descriptor& d, dma_record& r);
  dma_error at_prefetch(const dma_descriptor& d, dma_record& r);
  void at_peq_cb(tlm::tlm_generic_payload& p, const tlm::tlm_phase& ph);

  payload_pool pool_;
  tlm_utils::peq_with_cb_and_phase<cdma_engine> at_peq_;
  /// Open transactions by payload (never iterated: the order of its elements is immaterial).
  std::unordered_map<tlm::tlm_generic_payload*, at_txn> at_txns_;
  /// Stream transactions finished since at_stream last looked, in callback order.
  std::vector<at_done_item> at_done_;
  tlm::tlm_generic_payload* req_owner_[2] = {nullptr, nullptr};  ///< request phase open, per socket
  sc_core::sc_event at_ev_;
  unsigned peak_in_flight_ = 0;
};

}  // namespace cdma
