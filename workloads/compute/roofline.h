// GPU compute model: per-layer forward / backward kernel time from a roofline. Pure C++.
#pragma once

#include <stdexcept>
#include <string>

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
/// Titan Xp preset (the cDMA HPCA paper's GPU): 12e12 FLOP/s fp32 (spec sheet, "about 12
/// TFLOP/s"), 547.6e9 B/s GDDR5X (384-bit x 11.4 Gb/s), 12 GiB; same efficiency factors.
gpu_params titan_xp();

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
/// Each term is rounded up to a whole picosecond. Throws gpu_params_error on invalid params.
layer_time roofline_time(const layer& l, const gpu_params& g);

}  // namespace cdma::workloads
