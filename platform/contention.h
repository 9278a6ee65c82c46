// Per-layer GPU DRAM statistics of a platform run (issue 5, "contention"): DRAM data-bus
// utilisation and bytes per initiator (cDMA engine, compute kernels) in each layer's forward
// and backward interval. A layer's interval runs from its start (vdnn_runtime::on_layer) to
// the next layer's start (or the end of the step). Counters are sampled from
// gpu_memory_controller at those instants; in LT, transactions are counted when they are
// issued (up to one quantum ahead), so interval edges are accurate to about one quantum.
#pragma once
#include <cstdint>
#include <vector>
#include "tlm/core/units.h"
#include "tlm/memory/gpu_memory_controller.h"

namespace cdma::platform {

/// DRAM activity of one layer in one step (forward and backward intervals).
struct layer_dram {
  ps_t fwd_span = 0, bwd_span = 0;             ///< interval lengths, ps
  double fwd_utilisation = 0, bwd_utilisation = 0;  ///< data-bus busy / (span x channels)
  std::uint64_t fwd_cdma_read = 0, bwd_cdma_write = 0;  ///< engine bytes (initiator id 0)
  std::uint64_t fwd_kernel_bytes = 0, bwd_kernel_bytes = 0;  ///< kernel traffic bytes (rd + wr)
  /// The layer's kernel traffic over both passes, bytes.
  std::uint64_t kernel_bytes() const { return fwd_kernel_bytes + bwd_kernel_bytes; }
};

class dram_probe {
public:
  /// `cdma_id`: dram_initiator_ext id of the engine (0: untagged); `kernel_id`: of the kernels.
  dram_probe(gpu_memory_controller& mc, unsigned cdma_id, unsigned kernel_id)
      : mc_(mc), cdma_id_(cdma_id), kernel_id_(kernel_id) {}

  /// Layer `i` of an `n`-layer network starts now (forward or backward pass).
  void on_layer(bool forward, std::size_t i, std::size_t n);
  /// The step ends now: closes the open interval and returns the step's layers (then resets).
  std::vector<layer_dram> finish_step();

private:
  struct sample { ps_t t = 0, busy = 0; std::uint64_t cdma_rd = 0, cdma_wr = 0, kernel = 0; };
  sample take() const;
  void close(const sample& now);

  gpu_memory_controller& mc_;
  unsigned cdma_id_, kernel_id_;
  std::vector<layer_dram> layers_;
  bool open_ = false, fwd_ = true;
  std::size_t idx_ = 0;
  sample start_;
};

}  // namespace cdma::platform
