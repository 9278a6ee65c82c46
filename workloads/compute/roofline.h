// GPU compute model: per-layer forward / backward kernel time from a roofline. Pure C++.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "tlm/core/units.h"
#include "workloads/network/network.h"

namespace cdma::workloads {

/// GPU preset. Defaults: Titan X (Maxwell), the vDNN paper's GPU.
struct gpu_params {
  std::string name = "Titan X (Maxwell)";
  /// Peak fp32 throughput, FLOP/s. 7e12: vDNN paper (Rhu et al., MICRO 2016) and the NVIDIA
  /// spec sheet (3072 CUDA cores x ~1.1 GHz boost x 2).
  double peak_flops = 7e12;
  /// Peak DRAM bandwidth, bytes/s. 336e9: GDDR5, 384-bit bus x 7 Gb/s per pin / 8 (spec sheet).
  double dram_Bps = 336e9;
  /// DRAM capacity, bytes (12 GiB). Not used by the roofline itself; for the vDNN runtime.
  std::uint64_t memory_bytes = 12ull << 30;
  /// Model parameter (not a measured constant): fraction of peak FLOP/s a cuDNN convolution
  /// reaches. 0.7 is a typical value for large fp32 convolutions on Maxwell.
  double flop_efficiency = 0.7;
  /// Model parameter: fraction of peak DRAM bandwidth a streaming kernel sustains (~0.8 of
  /// peak is what STREAM-like copies reach on GDDR5).
  double bw_efficiency = 0.8;
  /// Model parameter: backward FLOPs / forward FLOPs. Backward = data gradient + weight
  /// gradient, each about the forward FLOPs, so 2.
  double backward_flops_factor = 2.0;
  /// Model parameter: backward DRAM bytes / forward DRAM bytes (both gradients re-read the
  /// inputs and write gradients of the same sizes), so 2.
  double backward_bytes_factor = 2.0;
};

/// Titan X (Maxwell) preset (= default gpu_params).
gpu_params titan_x_maxwell();
/// Titan Xp preset (the cDMA HPCA paper's GPU): 12.1e12 FLOP/s fp32 (NVIDIA's spec sheet,
/// 12.1 TFLOP/s: 3840 CUDA cores x 2 FLOP x 1582 MHz boost = 12.15e12; the platform preset
/// `titanxp-gen3` uses the same), 547.6e9 B/s GDDR5X (384-bit x 11.4 Gb/s), 12 GiB; same
/// efficiency factors.
gpu_params titan_xp();

/// Tesla V100 (SXM2 16 GB) preset: 15.7e12 FLOP/s fp32 and 900e9 B/s HBM2 (NVIDIA V100
/// datasheet), 16 GiB.
gpu_params v100();
/// A100 (40 GB SXM) preset: 19.5e12 FLOP/s fp32 (non-tensor-core) and 1555e9 B/s HBM2
/// (NVIDIA A100 datasheet), 40 GiB.
gpu_params a100();
/// H100 SXM5 preset: 67e12 FLOP/s fp32 (non-tensor-core) and 3350e9 B/s HBM3 (NVIDIA H100
/// datasheet), 80 GiB.
gpu_params h100();
/// Preset by name: "titanx" (aliases "titan-x", "titanx-maxwell"), "titanxp" ("titan-xp"),
/// "v100", "a100", "h100" (case-insensitive). gpu_params_error listing the names otherwise.
gpu_params gpu_preset(const std::string& name);
/// Canonical preset names.
std::vector<std::string> gpu_preset_names();

/// An invalid gpu_params field; the message names the field (e.g. "gpu_params.flop_efficiency")
/// and the expected range.
class gpu_params_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws gpu_params_error unless peak_flops > 0, dram_Bps > 0, efficiencies in (0, 1] and
/// backward factors >= 0.
void validate(const gpu_params& g);

/// Kernel time of one layer, picoseconds.
struct layer_time {
  ps_t forward = 0;
  ps_t backward = 0;
};

/// Roofline:
///   forward  = max(ceil_ps(forward_flops / (peak_flops * flop_efficiency)),
///                  transfer_ps(forward_bytes, dram_Bps * bw_efficiency))
///   backward = the same with forward_flops * backward_flops_factor and
///              round(forward_bytes * backward_bytes_factor).
/// Each term is rounded up to a whole picosecond and saturates at the largest ps_t (absurd
/// rates give a huge time, never an overflow). Throws gpu_params_error on invalid params.
layer_time roofline_time(const layer& l, const gpu_params& g);

/// Roofline times of every layer of `net`.
std::vector<layer_time> roofline_times(const network& net, const gpu_params& g);

/// Upper bound on one layer's forward or backward kernel time, milliseconds (10 s). No real
/// GPU layer comes near it (the largest of the shipped networks, VGG-16's conv1_2 at batch
/// 256 on a Titan X: 0.95 TFLOP forward, about 0.2 s forward and 0.4 s backward); beyond it
/// the simulator would walk hours of simulated time (DRAM refresh, quantum synchronisation)
/// and the run would look hung. A --layer-times entry above it is refused, and so is a
/// roofline time above it (platform::run).
constexpr double max_layer_time_ms = 1e4;
/// Upper bound on the kernel time of one training step (forward + backward of every layer),
/// milliseconds (60 s): about 12 x the largest step of the paper's workloads (VGG-16 at batch
/// 256 on a Titan X: 4.95 s oracle step). The simulator spends about 0.5 s of wall time per
/// simulated second (DRAM refresh) in each of the three steps: this keeps a run to minutes.
constexpr double max_step_time_ms = 6e4;

/// A bad per-layer time table; the message names the file and line and the expected form.
class layer_time_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads a per-layer time table measured by the user (CSV, a header with the columns `layer`,
/// `forward_ms` and `backward_ms` in any order, other columns ignored (a profiler's export);
/// or, without those, `forward_s` and `backward_s` in seconds, as `cdma-vp run --csv` writes
/// them, converted to ms (the error messages then name those columns and seconds),
/// then one row per layer: layer name as in the network (layer.name), forward and backward
/// kernel time of the whole batch in milliseconds, in [0, max_layer_time_ms]; blank lines and lines starting with
/// '#' are skipped) and returns `base` with the listed layers' times replaced (ms rounded to
/// the nearest ps). Layers not listed keep their `base` (roofline) time. Throws
/// layer_time_error naming the file and line for: unreadable file, a header without one of the
/// three columns (or with an unnamed or repeated column), a row with more or fewer fields than the header (and the column of the first extra one), an empty layer name
/// (and its column), a number that does not parse, is negative or above max_layer_time_ms, a
/// layer name the network does not have (for an in-place entry of its layer file, naming the
/// layer it is fused into: layer::fused), a layer listed twice; and naming the file for a table
/// with the header and no rows. `listed` (if given) is set to one flag per layer of `net`: true
/// for the layers the table lists (the report's "kernel times" line counts them).
std::vector<layer_time> apply_time_table(const std::string& path, const network& net,
                                         std::vector<layer_time> base, std::vector<bool>* listed = nullptr);

}  // namespace cdma::workloads
