// gpu_memory_controller: GPU DRAM (ARCHITECTURE §3). For now a named memory_target whose one
// data bus runs at the effective bandwidth peak_bandwidth_Bps x efficiency; channels, banks
// and command timing are later refinements (the params already carry the channel count).
#pragma once
#include <cstddef>
#include <cstdint>

#include "tlm/memory/memory_target.h"

namespace cdma {

/// Parameters of gpu_memory_controller, with defaults for the Titan X (Maxwell), 12 GB GDDR5
/// (ARCHITECTURE §9; NVIDIA spec sheet; the vDNN paper's system).
struct gpu_memory_params {
  /// Addressable bytes. Default 12 GiB (Titan X Maxwell: 12 GB GDDR5). Sparse.
  std::uint64_t size_bytes = 12ull << 30;
  /// Peak DRAM bandwidth, B/s. Default 336e9 = 384-bit bus / 8 x 7 Gb/s per pin (GDDR5).
  double peak_bandwidth_Bps = 336e9;
  /// Memory channels (Titan X: 12 x 32-bit GDDR5 channels = 384 bit). Not yet used for
  /// timing: the LT model aggregates the channels into one bus.
  unsigned channels = 12;
  /// Achieved / peak bandwidth for streaming accesses (refresh, bank conflicts, read/write
  /// turnarounds). Model parameter, default 0.9; must be in (0, 1].
  double efficiency = 0.9;
  /// Fixed access latency, ps. Default 200 ns: a typical GDDR5 load latency seen by a GPU
  /// memory request (estimate; a model parameter).
  ps_t latency_ps = 200 * ps_per_ns;
  /// Backing-store page and DMI granule, bytes.
  std::size_t page_bytes = 65536;

  /// Effective bandwidth used by the timing model, B/s = peak x efficiency.
  double effective_bandwidth_Bps() const { return peak_bandwidth_Bps * efficiency; }
  /// Throws std::invalid_argument naming the field if a value is out of range.
  void validate() const;
  memory_params to_memory_params() const {
    validate();
    return memory_params{size_bytes, effective_bandwidth_Bps(), latency_ps, page_bytes};
  }
};

/// GPU DRAM target: socket `tgt`, store(), stats (bytes_read/bytes_written/busy_ps).
class gpu_memory_controller : public memory_target {
public:
  explicit gpu_memory_controller(sc_core::sc_module_name name,
                                 const gpu_memory_params& params = gpu_memory_params{})
      : memory_target(name, params.to_memory_params()), gpu_params_(params) {}

  const gpu_memory_params& gpu_params() const { return gpu_params_; }
  const char* kind() const override { return "cdma::gpu_memory_controller"; }

private:
  gpu_memory_params gpu_params_;
};

}  // namespace cdma
