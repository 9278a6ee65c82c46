// GPU compute model: roofline.
#include "workloads/compute/roofline.h"

#include <algorithm>
#include <cmath>

namespace cdma::workloads {

gpu_params titan_x_maxwell() { return gpu_params{}; }

gpu_params titan_xp() {
  gpu_params g;
  g.name = "Titan Xp";
  g.peak_flops = 12e12;
  g.dram_Bps = 547.6e9;
  g.memory_bytes = 12ull << 30;
  return g;
}

void validate(const gpu_params& g) {
  auto bad = [](const char* key, const std::string& expected, double v) {
    throw gpu_params_error(std::string("gpu_params.") + key + " must be " + expected + ", got " +
                           std::to_string(v));
  };
  if (!(g.peak_flops > 0) || !std::isfinite(g.peak_flops)) bad("peak_flops", "> 0 (FLOP/s)", g.peak_flops);
  if (!(g.dram_Bps > 0) || !std::isfinite(g.dram_Bps)) bad("dram_Bps", "> 0 (bytes/s)", g.dram_Bps);
  if (!(g.flop_efficiency > 0 && g.flop_efficiency <= 1)) bad("flop_efficiency", "in (0, 1]", g.flop_efficiency);
  if (!(g.bw_efficiency > 0 && g.bw_efficiency <= 1)) bad("bw_efficiency", "in (0, 1]", g.bw_efficiency);
  if (!(g.backward_flops_factor >= 0) || !std::isfinite(g.backward_flops_factor))
    bad("backward_flops_factor", ">= 0", g.backward_flops_factor);
  if (!(g.backward_bytes_factor >= 0) || !std::isfinite(g.backward_bytes_factor))
    bad("backward_bytes_factor", ">= 0", g.backward_bytes_factor);
}

namespace {

/// `flops` at `flops_per_s`, rounded up to a whole picosecond (the FLOP analogue of transfer_ps).
ps_t compute_ps(double flops, double flops_per_s) {
  if (flops <= 0.0) return 0;
  return static_cast<ps_t>(std::ceil(flops * 1e12 / flops_per_s));
}

ps_t kernel_ps(double flops, std::uint64_t bytes, const gpu_params& g) {
  return std::max(compute_ps(flops, g.peak_flops * g.flop_efficiency),
                  transfer_ps(bytes, g.dram_Bps * g.bw_efficiency));
}

}  // namespace

layer_time roofline_time(const layer& l, const gpu_params& g) {
  validate(g);
  layer_time t;
  t.forward = kernel_ps(l.forward_flops, l.forward_bytes, g);
  const auto back_bytes =
      static_cast<std::uint64_t>(std::llround(static_cast<double>(l.forward_bytes) * g.backward_bytes_factor));
  t.backward = kernel_ps(l.forward_flops * g.backward_flops_factor, back_bytes, g);
  return t;
}

}  // namespace cdma::workloads
