// The ready virtual platform: GPU memory controller, host memory, PCIe link, cDMA engine and
// the vDNN runtime, wired as in ARCHITECTURE.md §3, and one function that runs a training
// step for each of the three baselines (oracle, vDNN, cDMA) in one simulation.
//
//   vdnn_runtime.regs ──────────────────────────► cdma_engine.regs
//   vdnn_runtime.gpu_mem ─┐                        cdma_engine.irq ──► vdnn_runtime.irq
//   cdma_engine.gpu_mem ──┤
//   kernels.gpu_mem ──────┴► gpu_bus ─► gpu_memory_controller.tgt   (kernels: gpu.kernel_traffic)
//   cdma_engine.pcie ─────► pcie_link.tgt ; pcie_link.init ─► host_memory.tgt
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include "tlm/cdma/cdma_engine.h"
#include "tlm/memory/gpu_memory_controller.h"
#include "tlm/memory/host_memory.h"
#include "platform/contention.h"
#include "tlm/pcie/link_math.h"
#include "workloads/compute/kernel_traffic.h"
#include "workloads/compute/roofline.h"
#include "workloads/network/network.h"
#include "workloads/vdnn/vdnn_runtime.h"

namespace cdma::platform {

/// Everything a run needs. Defaults: the paper's system (Titan X Maxwell, PCIe Gen3 x16),
/// InceptionV3 at batch 32 on the shipped real activations, vDNN policy `all`, ZVC.
struct platform_config {
  std::string network = "inception_v3";
  int batch = 32;
  std::string codec = "zvc";              ///< codec of the cDMA step: "zvc" or "none" (raw)
  /// Activation source: one or several .npz / .npy / directory paths (their images concatenated
  /// along N in this order, then repeated to fill the batch: workloads::npz_activation_source),
  /// {"synthetic"} (always synthetic data), or empty: the shipped sample for inception_v3
  /// (default_activations()), synthetic otherwise; a synthetic-data option (density, zero_run,
  /// density_profile, training_progress, seed) away from its default also selects synthetic
  /// data. run() records the resolved value (resolve_activations()). Key `activations`: a
  /// string (one path, "synthetic" or "") or an array of strings.
  std::vector<std::string> activations;
  double synthetic_density = 0.5;         ///< nonzero fraction when activations are synthetic
  std::string policy = "all";             ///< vDNN policy of the vDNN and cDMA steps
  // Workload options (issue 8; docs/workloads.md).
  std::string name_map;                   ///< JSON {"name in file": "layer key"} for `activations`
  /// Offloaded tensors that the activations file neither holds nor can compute (pool outputs
  /// are computed from their input): "error", "dense" (dense synthetic data; the report says
  /// how many tensors and bytes) or "auto" (default: resolve_missing_activations()).
  /// workloads::real_activation_options::missing.
  std::string missing_activations = "auto";
  double mean_zero_run = 0;               ///< synthetic clustering: mean zero-run length (elements), 0 = independent
  std::string density_profile;            ///< CSV density over training (iteration,epoch,layer,zero_fraction,...)
  double training_progress = -1;          ///< 0..1: point of density_profile to use; < 0: profile unused
  std::uint64_t seed = 1;                 ///< synthetic activation seed
  /// Activation chunks (64 KiB) produced ahead on a worker thread (workloads::chunk_producer);
  /// 0 = produced in the simulation thread. Results are identical; only wall time changes.
  /// Default 256 (16 MiB per tensor; vdnn_runtime_params::produce_ahead_chunks says why).
  std::uint64_t produce_ahead = 256;
  /// Threads producing those chunks when the source allows it (synthetic data; a real
  /// activations file uses one). Results are identical; only wall time changes.
  std::uint64_t produce_threads = 2;
  std::string layer_times;                ///< CSV layer,forward_ms,backward_ms overriding the roofline
  double quantum_ns = 1000;               ///< global LT quantum (ns), default 1 us (ARCHITECTURE §4)
  /// "lt": the engine uses b_transport with the quantum (default); "at": 4-phase
  /// nb_transport through the engine, GPU memory, PCIe and host memory (issue 6).
  std::string mode = "lt";
  /// Training steps simulated, comma-separated, a subset of "oracle,vdnn,cdma" in that order
  /// (default all three). A step left out has an empty step_report (no layers).
  std::string steps = "oracle,vdnn,cdma";
  /// Host memory in a temporary file (host_memory_params::spill): "on", "off" or "auto" (on
  /// when the uncompressed bytes the vDNN runtime offloads exceed 2 GiB).
  std::string host_spill = "auto";
  /// Put a protocol_checker (tlm/core/protocol_checker.h) on every initiator -> target
  /// connection; a run with violations throws naming the first ones.
  bool check_protocol = false;
  bool verify = true;
  workloads::gpu_params gpu;
  /// Issue the compute kernels' own DRAM traffic (workloads/compute/kernel_traffic.h) to the
  /// GPU memory controller while the cDMA engine works (issue 5, contention). Default off:
  /// the reference step times in docs are without it, and it multiplies the DRAM work the
  /// simulator does (docs/memory.md "Kernel traffic"). Key `gpu.kernel_traffic`.
  bool kernel_traffic = false;
  /// The generator's parameters (request size, AT outstanding); base / span / mode are set
  /// by run(). Keys `gpu.kernel_request`, `gpu.kernel_outstanding`.
  workloads::kernel_traffic_params kernel;
  gpu_memory_params gpu_mem;
  host_memory_params host_mem;
  /// PCIe link; default: the "measured host" preset (Gen3 x16 calibrated against published
  /// bandwidthTest runs, docs/pcie.md).
  pcie::link_params pcie = pcie::preset("measured-host");
  std::string pcie_preset = "measured-host";  ///< name of the preset pcie started from (informative)
  cdma_engine_params engine;
};

/// The shipped InceptionV3 sample activations (workloads/data/inception_v3): chelsea.npz and
/// coffee.npz, one photo each (the embedded default's 2 distinct images).
std::vector<std::string> default_activations();
/// The first of them, chelsea.npz (one real activations file, e.g. for `cdma-vp analyze`).
std::string default_activations_path();

/// The activation sources `cfg` selects: the file paths, or {"synthetic"} (see
/// platform_config::activations). Throws std::invalid_argument naming the files and the keys
/// when a file is combined with synthetic-data options away from their defaults. Does not
/// touch the file system.
std::vector<std::string> resolve_activations(const platform_config& cfg);

/// True for activations {"synthetic"}.
bool synthetic_activations(const std::vector<std::string>& activations);
/// The sources as one text, for messages and CSV cells: the paths joined by " + " ("" for none).
std::string activations_text(const std::vector<std::string>& activations);

/// The missing_activations policy `cfg` runs with ("error" or "dense"): an explicit "error" or
/// "dense" as given; "auto" (the default) is "dense" for the embedded default (activations not
/// given and resolved to the shipped InceptionV3 sample), since that sample holds the 94 conv
/// outputs and not the Dense ReLU output dense_1 that dense_2 offloads (not derivable; the
/// pool outputs are computed), and "error" otherwise. Call it before resolve_activations() replaces an empty
/// activations. Does not touch the file system.
std::string resolve_missing_activations(const platform_config& cfg);

/// Traffic of one direction of the link during one step.
struct pcie_traffic { std::uint64_t payload_bytes = 0, wire_bytes = 0; };

/// GPU DRAM activity during one step (all initiators; the compute kernels' own traffic only
/// with platform_config::kernel_traffic).
struct dram_activity {
  std::uint64_t bytes = 0;        ///< bytes read + written
  double utilisation = 0;         ///< data-bus busy time / (step time x channels)
  std::uint64_t columns = 0;      ///< RD + WR commands
  std::uint64_t activates = 0;    ///< ACT commands
  /// DRAM timing-rule violations counted by the channels' timing checkers during the step
  /// (gpu_memory_controller::dram_stats(); must be 0; always 0 with the bus model).
  std::uint64_t timing_violations = 0;
  /// Compute kernels' traffic (platform_config::kernel_traffic) that fell behind its
  /// schedule: bytes of requests issued after their kernel had ended, the largest delay of a
  /// request behind its planned issue time (ps), and how long after the step's end the last
  /// kernel response arrived (ps; the next step starts after it). Late bytes and lag are 0 in
  /// LT (open loop); the drain is not when the kernels oversubscribe the DRAM.
  std::uint64_t kernel_late_bytes = 0;
  std::uint64_t kernel_late_slot_bytes = 0;  ///< of those, held back by gpu.kernel_outstanding
  ps_t kernel_max_lag = 0, kernel_drain = 0;
  /// Column accesses that needed no ACT: 1 - ACT / (RD + WR); 0 with the bus model.
  double row_hit_rate() const {
    return columns ? 1.0 - static_cast<double>(activates) / static_cast<double>(columns) : 0.0;
  }
};

struct step_report {
  bool simulated = false;               ///< false: left out by platform_config::steps (all zeros)
  /// Requested but not completed: the run stopped at an I/O error (run_report::io_error).
  bool failed = false;
  workloads::step_result result;
  pcie_traffic d2h, h2d;
  dram_activity dram;
  std::vector<layer_dram> dram_layers;  ///< per layer of the network (platform/contention.h)
  /// The compute kernels' DRAM traffic counted in this step (all layers, both passes), bytes.
  std::uint64_t kernel_bytes() const {
    std::uint64_t b = 0;
    for (const auto& l : dram_layers) b += l.kernel_bytes();
    return b;
  }
};

struct run_report {
  platform_config config;
  workloads::network net;
  std::string activations;                 ///< description of the activation source
  std::vector<workloads::layer_time> times;
  /// Layers whose kernel times came from the --layer-times table (config.layer_times); the
  /// others use the roofline. 0 without a table.
  std::size_t measured_layers = 0;
  /// Warnings about the inputs that did not stop the run (e.g. density-profile layer names that
  /// are no layer of the network), each naming the file: the commands print them on standard
  /// error ("cdma-vp: warning: ...") and the JSON lists them (`warnings`).
  std::vector<std::string> warnings;
  step_report oracle, vdnn, cdma;
  double pcie_rate_Bps = 0;                ///< raw rate of one link direction
  std::uint64_t peak_rss_bytes = 0;        ///< peak resident memory of this process at the end
  double wall_s = 0;                       ///< wall-clock seconds of the simulation
  std::size_t protocol_checks = 0;         ///< transactions seen by protocol checkers (check_protocol)
  /// GPU DRAM timing-rule violations over the whole run (every DRAM command re-checked by the
  /// channels' timing checkers, refresh deadline included; docs/dram.md): must be 0.
  /// Meaningful only with the DRAM model (dram_model).
  std::uint64_t dram_violations = 0;
  bool dram_model = false;                 ///< the GPU memory used the DRAM model (not bus)
  /// The DRAM timing preset the DRAM model used (dram_model), e.g. "gddr5_titanx"; empty with
  /// the bus model.
  std::string dram_preset;
  /// Why the bus model was used although `gpu_mem.model` is dram (dram_preset auto matched no
  /// preset: e.g. "dram_preset auto matches no DRAM preset for 336 GB/s with 2 channels");
  /// empty otherwise.
  std::string bus_reason;
  /// How the run used the host machine (wall time only; no simulated result depends on it):
  /// how the simulation thread found the activation chunks (64 KiB) it took (ready, being
  /// produced by a worker, not started), the queued chunks it produced itself while it waited
  /// (stolen), and the host memory's spill file (host_mem.spill).
  struct host_usage {
    std::size_t produce_threads = 0;
    workloads::chunk_producer::counts chunks;
    bool spilled = false;                  ///< host memory kept its pages in a file
    bool direct_io = false;                ///< ... opened with O_DIRECT (host_mem.spill_direct_io)
    std::uint64_t peak_spilled_bytes = 0;  ///< most bytes on the file at once
    std::uint64_t io_requests = 0, io_pages = 0;  ///< helper thread's file requests and pages
  } host;
  /// Set when the VCD (run_hooks::vcd_path) could not be written: the message names the path
  /// and the reason; the results are complete (nothing of the VCD is left behind).
  std::string vcd_error;
  /// Set when the transaction trace (run_hooks::txn_trace_path) could not be written (the
  /// message names the path); txn_trace_lines: lines written.
  std::string txn_trace_error;
  std::uint64_t txn_trace_lines = 0;
  /// Set when an I/O error (the host-memory spill file, e.g. a full disk) stopped the
  /// simulation: its message. The steps completed before it are reported as usual, the
  /// others have step_report::failed; the command prints and writes what there is, exit 3.
  std::string io_error;
  /// Compression ratio of the cDMA step: offloaded bytes / (data + metadata bytes moved).
  double compression_ratio() const;
  std::uint64_t verified_bytes() const;    ///< vDNN + cDMA prefetched bytes compared
  std::uint64_t mismatched_bytes() const;
  bool ok() const;                         ///< every byte matched and no engine error
  /// Step simulated ("oracle", "vdnn" or "cdma"; see platform_config::steps).
  bool has_step(const std::string& label) const;
};

/// Builds the platform in the current SystemC context, runs oracle, vDNN and cDMA steps and
/// returns the results. Throws (network_error, activation_error, npy_error,
/// std::invalid_argument) with a message naming the bad input before simulating anything.
/// Called as each layer starts: step label, forward pass?, layer index, layer count.
using progress_fn = std::function<void(const std::string&, bool, std::size_t, std::size_t)>;

/// Optional observers of a run (not part of the platform's configuration).
struct run_hooks {
  progress_fn progress;
  std::string vcd_path;  ///< if set: VCD of irq, compute_busy, transfer_busy, link_busy_d2h/h2d
  /// If set: one line per transaction event on the traced connections, written to this file
  /// while the run goes (tlm/core/txn_tracer.h gives the line format).
  std::string txn_trace_path;
  /// The connections txn_trace_path traces (names of txn_trace_connections()); empty: all.
  std::vector<std::string> txn_trace_only;
};
/// The platform's initiator -> target connections, by name (also the protocol checkers'
/// names without their "chk_" prefix): engine_gpu_mem, runtime_gpu_mem, kernels_gpu_mem
/// (with gpu.kernel_traffic), gpu_bus_gpu_mem, engine_pcie, pcie_host_mem, runtime_regs.
const std::vector<std::string>& txn_trace_connections();
run_report run(const platform_config& cfg, const run_hooks& hooks = {});

}  // namespace cdma::platform
