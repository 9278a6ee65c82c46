#include "platform/contention.h"

#include "tlm/core/sc_time_util.h"

namespace cdma::platform {

dram_probe::sample dram_probe::take() const {
  sample s;
  s.t = now_ps();
  s.busy = mc_.busy_ps();
  const dram_traffic c = mc_.traffic(cdma_id_);
  s.cdma_rd = c.bytes_read;
  s.cdma_wr = c.bytes_written;
  const dram_traffic k = mc_.traffic(kernel_id_);
  s.kernel = k.bytes_read + k.bytes_written;
  return s;
}

void dram_probe::close(const sample& now) {
  if (!open_) return;
  open_ = false;
  if (idx_ >= layers_.size()) return;
  layer_dram& l = layers_[idx_];
  const ps_t span = now.t - start_.t;
  const double u = mc_.utilisation(now.busy - start_.busy, start_.t, now.t);
  const std::uint64_t kb = cdma_id_ == kernel_id_ ? 0 : now.kernel - start_.kernel;
  if (fwd_) {
    l.fwd_span = span;
    l.fwd_utilisation = u;
    l.fwd_cdma_read = now.cdma_rd - start_.cdma_rd;
    l.fwd_kernel_bytes = kb;
  } else {
    l.bwd_span = span;
    l.bwd_utilisation = u;
    l.bwd_cdma_write = now.cdma_wr - start_.cdma_wr;
    l.bwd_kernel_bytes = kb;
  }
}

void dram_probe::on_layer(bool forward, std::size_t i, std::size_t n) {
  const sample s = take();
  close(s);
  if (layers_.size() != n) layers_.assign(n, layer_dram{});
  open_ = true;
  fwd_ = forward;
  idx_ = i;
  start_ = s;
}

std::vector<layer_dram> dram_probe::finish_step() {
  close(take());
  std::vector<layer_dram> out;
  out.swap(layers_);
  return out;
}

}  // namespace cdma::platform
