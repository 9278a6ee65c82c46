// vdnn_runtime: the driver side of vDNN (Rhu et al., MICRO 2016) as an SC_THREAD that
// programs the cDMA engine only through its registers (socket `regs`) and waits for its
// interrupt (`irq`), exactly as a CPU model would.
//
// Per training step, forward: a layer's input tensors are offloaded while the layer, their
// first consumer in execution order, computes (tensor_use_layers()); the streams synchronise
// at the end of every layer (vDNN §III), so a layer lasts max(compute, its offloads).
// Backward (layers in reverse): a tensor must be back before the backward pass of its last
// consumer; while layer i computes its backward pass, the runtime prefetches the input
// tensors not back yet of the nearest earlier layer that has any, looking back no further
// than the closest convolution (vDNN §III-C). On a chain X_i (the output of layer i - 1) is
// offloaded during layer i and needed by layer i, so X_{i-1} is prefetched during layer i.
// The last layer's input stays resident. Every prefetched byte is checked against the bytes
// that were offloaded.
//
// The GPU compute itself is modelled by time only (from the roofline). The tensors it produces
// are not written into GPU memory: each activation slot is mapped as a content region of the
// GPU memory (workloads/vdnn/tensor_check.h) that produces X_i on demand when the engine reads
// it and, as a prefetch destination, checks every byte written against the checksums recorded
// when X_i was offloaded. So a tensor of several GB never exists whole in the simulator's
// memory and full paper batch sizes run (issue 8); the check stays bit-exact.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include "tlm/cdma/descriptor.h"
#include "tlm/core/payload_pool.h"
#include "tlm/core/units.h"
#include "workloads/activations/activation_source.h"
#include "workloads/compute/roofline.h"
#include "workloads/network/network.h"
#include "workloads/vdnn/tensor_check.h"

namespace cdma::workloads {

/// none: no transfers (the oracle); all: every tensor X_i but the last layer's input; conv:
/// the X_i that a convolution reads (conv_input_keys(): for a branched network the tensors
/// with a conv consumer, a concatenation's parts read by the concatenation's consumers).
enum class vdnn_policy { none, all, conv };
std::string to_string(vdnn_policy p);
/// "none" | "all" | "conv"; throws std::invalid_argument naming the value otherwise.
vdnn_policy policy_from_string(const std::string& s);

/// One training step to simulate. Steps run one after another in the same simulation.
struct vdnn_step_config {
  std::string label;                  ///< e.g. "oracle", "vdnn", "cdma"
  vdnn_policy policy = vdnn_policy::all;
  bool compress = false;              ///< false: plain copies; true: offload/prefetch with codec
  codec::codec_id codec = codec::codec_id::zvc;
  unsigned element_width = 4;         ///< bytes per element (fp32)
};

struct vdnn_runtime_params {
  std::vector<vdnn_step_config> steps;
  std::size_t window_bytes = 4096;    ///< must equal the engine's (sizes the metadata tables)
  std::uint64_t gpu_base = 0;         ///< GPU memory address of the activation buffers
  std::uint64_t host_base = 0;        ///< host (bus) address of the pinned offload region
  bool verify = true;                 ///< count mismatches of prefetched bytes in the results
  /// Register accesses (MMIO) as 4-phase nb_transport with pooled payloads (AT platforms)
  /// instead of b_transport. Same register latency either way (the engine's regs target).
  bool approximately_timed = false;
  /// Activation chunks (64 KiB) produced ahead of the engine's reads per tensor, on a worker
  /// thread (chunk_producer); 0 = produce on demand in the simulation thread. Only wall time
  /// changes: bytes, checksums and simulated times are the same. Default 256 (16 MiB ahead
  /// per tensor; 8 until session 11): with 8 the workers caught up and idled, and the
  /// simulation thread found a third of the chunks not started (VGG-16 b256: 46-50 K of
  /// 238 K) and produced them itself; with 256, ~0.5 K. VGG-16 b256 LT cDMA step, quiet,
  /// 2-core VM: 28.9-29.3 s wall with 8, 23.3-26.9 with 64, 23.6-24.4 with 128, 22.2-22.7
  /// with 256, 22.7 with 512, 25.2 with 1024; peak RSS 137 / 145 / 161 / 194 / 247 MB.
  std::size_t produce_ahead_chunks = 256;
  /// Worker threads producing those chunks (>= 1) when the activation source allows
  /// concurrent calls (synthetic data; real files use one). Default 2: production is the
  /// largest cost of a synthetic run and the simulation thread leaves most of a second core
  /// idle in the forward pass. Only wall time changes.
  unsigned produce_threads = 2;
};

/// Results of one layer in one step. Times in ps; 0 where the layer did no transfer. The
/// compute fields (forward, backward, *_stall, *_start) are layer i's; the transfer fields are
/// those of X_i (layer::offload_key: the output of layer i - 1), which moves during the
/// forward pass of its first consumer (offload_during; i on a chain) and comes back during the
/// backward pass of prefetch_during.
struct layer_result {
  bool offloaded = false;             ///< X_i was offloaded (policy; not the last layer's input)
  std::uint64_t bytes = 0;            ///< uncompressed bytes of the offloaded tensor X_i
  std::uint64_t zeros = 0;            ///< zero elements (bit pattern all 0x00) in X_i; counted
                                      ///< as the engine reads X_i, so 0 if not offloaded
  std::uint64_t moved_data_bytes = 0; ///< data bytes written to host (compressed or not)
  std::uint64_t meta_bytes = 0;       ///< metadata table bytes
  ps_t forward = 0, backward = 0;     ///< compute time
  /// Transfer times of X_i, its own: offload from offload_start to the completion of X_i's
  /// descriptor, prefetch from prefetch_start to the completion of its fetch. Several tensors
  /// moved in one layer (a branched network) are submitted in index order on one ring and the
  /// engine executes them one after the other, so each one's time starts where the one before
  /// it ended (not at the layer's start: until session 19 each included the wait behind those
  /// submitted before it, new-user trial s19 F1); their times add up to the layer's transfer
  /// time, and the stalls (per layer) are unchanged.
  ps_t offload = 0, prefetch = 0;
  ps_t forward_stall = 0, backward_stall = 0;
  ps_t forward_start = 0, backward_start = 0;  ///< absolute simulated times the layer began (ps)
  static constexpr std::size_t no_layer = static_cast<std::size_t>(-1);
  /// Layer during whose forward pass X_i was offloaded: its first consumer
  /// (tensor_uses::first; i on a chain). no_layer if X_i was not offloaded.
  std::size_t offload_during = no_layer;
  /// Absolute simulated time (ps) the engine began X_i's offload: for the first tensor layer
  /// offload_during offloads, the start of its forward pass (before the driver writes the
  /// descriptors; on a chain always so); for each later one, the completion of the tensor
  /// before it (vdnn_runtime::transfer::began).
  ps_t offload_start = 0;
  /// Layer during whose backward pass X_i was brought back (for an offloaded X_i): the layer
  /// whose kernel its prefetch overlapped (vDNN rule: the nearest earlier layer with an input
  /// offloaded and not back, no further back than the closest convolution; on a chain usually
  /// i + 1, not always: VGG-16 under `conv` prefetches conv5_3's input during fc8), or its last
  /// consumer L (tensor_uses::last) if it was fetched on demand before L's backward kernel.
  /// no_layer if X_i was not brought back.
  std::size_t prefetch_during = no_layer;
  /// Absolute simulated time (ps) the engine began X_i's fetch: when the runtime issued it
  /// (the start of prefetch_during's backward kernel, or of its backward pass for an on-demand
  /// fetch) for the first tensor of the layer's fetch, else the completion of the tensor
  /// fetched before it.
  ps_t prefetch_start = 0;
  /// X_i was fetched on demand (before prefetch_during's backward kernel, which needed it),
  /// not prefetched during it.
  bool on_demand = false;
};

struct step_result {
  vdnn_step_config config;
  ps_t start = 0;                     ///< simulated time the step began, ps
  ps_t step = 0, forward = 0, backward = 0;
  std::vector<layer_result> layers;   ///< same order as network.layers
  std::uint64_t verified_bytes = 0, mismatched_bytes = 0;
  std::vector<std::string> errors;    ///< engine errors seen (with the layer named)
};

class vdnn_runtime : public sc_core::sc_module {
public:
  tlm_utils::simple_initiator_socket<vdnn_runtime> regs;     ///< to cdma_engine.regs
  tlm_utils::simple_initiator_socket<vdnn_runtime> gpu_mem;  ///< functional access to GPU memory
  sc_core::sc_in<bool> irq;
  /// High while a layer's kernel runs / while a DMA descriptor is outstanding (for VCD traces).
  sc_core::sc_signal<bool> compute_busy{"compute_busy"}, transfer_busy{"transfer_busy"};

  /// `gpu_regions` is the GPU memory behind the `gpu_mem` socket: the activation slots are
  /// mapped there as content regions. Throws std::invalid_argument if times and layers differ.
  vdnn_runtime(sc_core::sc_module_name name, const network& net,
               std::vector<layer_time> times, activation_source& source,
               mem::region_host& gpu_regions, const vdnn_runtime_params& p);

  /// Host buffers of the pinned offload region from `host_base`: one data buffer per layer
  /// (its offloaded tensor, fp32, aligned to 4 KiB), then one window table per layer
  /// (codec::window_entry_bytes per `window_bytes` window, aligned to 64 B); none is reused
  /// within a step (every offloaded tensor is held until backward). Fills `data` / `meta`
  /// (if given) with their addresses and returns the end address (bytes): host memory must
  /// reach it.
  /// Activation slots in GPU memory (each as large as the largest X_i, from gpu_base): the
  /// tensors moved in one layer (offloaded in one forward pass, fetched on demand or prefetched
  /// in one backward pass) each need their own while in flight; X_i takes slot i mod 3 unless
  /// another tensor of its layer has it. max(3, the most tensors one layer moves under policy
  /// `all`): 3 on a chain. The descriptor ring follows the slots.
  static std::size_t gpu_slots(const network& net);

  static std::uint64_t host_layout(const network& net, std::size_t window_bytes, std::uint64_t host_base,
                                   std::vector<std::uint64_t>* data = nullptr,
                                   std::vector<std::uint64_t>* meta = nullptr);

  ~vdnn_runtime() override;

  const std::vector<step_result>& results() const { return results_; }
  bool finished() const { return finished_; }
  /// How the activation chunks (64 KiB) of every step were obtained (chunk_producer::stats():
  /// produced ahead by a worker, waited for, produced by the simulation thread on demand or
  /// while it waited), and the worker threads started. Wall time only: no result depends on it.
  chunk_producer::counts producer_stats() const { return producer_->stats(); }
  std::size_t producer_threads() const { return producer_->threads(); }
  /// Called in the runtime's thread when a step's last kernel has finished, before
  /// on_step_done; it may wait() until other initiators' traffic of the step has completed
  /// (the platform waits for the compute kernels' DRAM traffic), so each step's statistics
  /// hold only its own traffic and the next step starts on idle memory. The step's times
  /// (step_result) are not changed by the wait.
  std::function<void()> drain;
  /// Called after each step (and drain) with its result (e.g. to snapshot link statistics).
  std::function<void(const step_result&)> on_step_done;
  /// Called when a layer starts: step label, true in the forward pass, layer index, count.
  std::function<void(const std::string&, bool, std::size_t, std::size_t)> on_layer;
  /// Called when a layer's kernel starts (true in the forward pass, layer index): at the
  /// layer's start, or in the backward pass after an on-demand fetch of the layer's input.
  std::function<void(bool, std::size_t)> on_kernel;
  /// Called when the host buffer of an offloaded tensor is dead: after its prefetch (or
  /// on-demand fetch) completed, with the host address and length (bytes, 4 KiB aligned) of
  /// its data buffer. vDNN frees the pinned buffer then; a platform may discard the range
  /// (e.g. memory_target::discard) so a spilling host store never writes dead pages back.
  /// Simulated results do not depend on it (the range is not accessed again in the step).
  std::function<void(std::uint64_t, std::uint64_t)> on_host_release;

private:
  void run();
  void step(const vdnn_step_config& cfg, step_result& r);
  bool offloaded(std::size_t i, vdnn_policy p) const;
  /// Layer whose input tensors (those not back yet) are prefetched during layer i's backward
  /// pass (vDNN rule), or layers.size() for none.
  std::size_t prefetch_target(std::size_t i, const step_result& r, const std::vector<bool>& prefetched) const;
  /// The offloaded X_j of needed_at_[k] not fetched yet, in index order.
  std::vector<std::size_t> not_back(std::size_t k, const step_result& r, const std::vector<bool>& prefetched) const;
  /// Gives each tensor of one layer's transfers its own slot (slot_of_): j mod 3 if free, else
  /// the lowest free one.
  void assign_slots(const std::vector<std::size_t>& tensors);
  std::uint64_t submit(dma_direction dir, std::uint64_t src, std::uint64_t dst,
                       std::uint64_t len, std::uint64_t meta, const vdnn_step_config& cfg);
  /// One descriptor overlap() waits for: its sequence number, for error messages what it
  /// moves, and when the engine could start it (`submitted`, ps: its doorbell; the layer's
  /// start for the first of a layer, so a chain's times keep the driver's descriptor writes).
  /// overlap() fills in when its completion was observed (ps), its write-back OUT_BYTES (data
  /// bytes written to the destination) and `began`: max(submitted, the completion of the
  /// transfer before it). The engine executes descriptors one at a time in ring order and
  /// fetches the next as soon as one is written back, so [began, done_at] is the descriptor's
  /// own execution, as the driver observes both ends (the ~10 ns register read that sees a
  /// completion shifts both alike).
  struct transfer {
    std::uint64_t seq = 0;
    std::string what;
    ps_t done_at = 0;
    std::uint64_t out_bytes = 0;
    ps_t submitted = 0, began = 0;
  };
  /// Waits until compute of `compute` ps from t0 has elapsed and every descriptor of
  /// `transfers` (submitted in this order) has completed.
  void overlap(ps_t t0, ps_t compute, std::vector<transfer>& transfers, step_result& r);
  void write_reg(std::uint32_t off, std::uint32_t v);
  std::uint32_t read_reg(std::uint32_t off);
  /// One register access, blocking (LT) or 4-phase (AT); reports a failed access as an error.
  void reg_access(tlm::tlm_command cmd, std::uint32_t off, std::uint32_t& v);
  std::uint64_t slot(std::size_t i) const;
  /// X_i as produced by the kernel: a new tensor_record for this step (its chunks may be
  /// produced ahead from now on).
  void produce(std::size_t i);
  /// Maps X_i into its slot (slot_of_) as the offload source, reading X_i's record.
  void expect_offload(std::size_t i);
  /// Maps X_i's slot as the prefetch destination, checked against X_i's record.
  void expect_prefetch(std::size_t i);
  void map_slot(std::size_t i, std::shared_ptr<mem::content_region> region);
  void release_slots();
  void verify(std::size_t i, step_result& r);
  /// X_i's host data buffer is dead (its prefetch completed): calls on_host_release.
  void release_host(std::size_t i);
  void dbg(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::size_t len);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&);

  network net_;
  std::vector<layer_time> times_;
  activation_source& source_;
  mem::region_host& gpu_regions_;
  vdnn_runtime_params p_;
  std::set<std::string> conv_inputs_;  ///< conv_input_keys(net_): what policy conv offloads
  std::shared_ptr<chunk_producer> producer_;             ///< shared by the step's records
  std::vector<std::shared_ptr<tensor_record>> records_;  ///< per layer, current step
  std::vector<tensor_uses> uses_;                     ///< tensor_use_layers(net_)
  std::vector<std::vector<std::size_t>> offloads_at_;  ///< per layer f: the X_i with uses_[i].first == f
  std::vector<std::vector<std::size_t>> needed_at_;    ///< per layer k: the X_i with uses_[i].last == k
  std::vector<std::size_t> slot_of_;                   ///< per X_i: its slot in the current transfer
  std::vector<bool> slot_mapped_;                      ///< per slot (gpu_slots(net_))
  std::vector<std::uint64_t> host_data_, host_meta_;
  std::uint64_t slot_bytes_ = 0;
  std::uint64_t submitted_ = 0;
  /// Completions submit() saw while it waited for ring room (a layer moving more tensors than
  /// the ring holds): sequence number -> when (ps), taken by overlap(); seen_through_: every
  /// sequence number up to it has been seen completed.
  std::map<std::uint64_t, ps_t> seen_done_;
  std::uint64_t seen_through_ = 0;
  // Descriptor ring (in GPU memory, after the activation slots; set up in run()).
  std::uint64_t ring_base_ = 0;
  std::uint32_t ring_size_ = 0, ring_tail_ = 0;
  std::vector<step_result> results_;
  bool finished_ = false;
  // AT register accesses: the payload in flight and the event of its response.
  payload_pool pool_;
  tlm::tlm_generic_payload* mmio_ = nullptr;
  bool mmio_done_ = false;
  sc_core::sc_event mmio_ev_;
};

}  // namespace cdma::workloads
