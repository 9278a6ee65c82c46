// host_memory: host DRAM holding the pinned offload buffers (ARCHITECTURE §3), a named
// memory_target with host defaults. Timing: one data bus at bandwidth_Bps + fixed latency.
#pragma once
#include <cstddef>
#include <cstdint>

#include "tlm/memory/memory_target.h"

namespace cdma {

/// Parameters of host_memory, with defaults for a dual-channel DDR4-1600 host.
struct host_memory_params {
  /// Addressable bytes. Default 64 GiB; the store is sparse, so only touched pages cost RAM.
  std::uint64_t size_bytes = 64ull << 30;
  /// Data-bus bandwidth, B/s. Default 25.6e9 = 2 channels x 8 B x 1.6e9 transfers/s
  /// (DDR4-1600 peak, JEDEC JESD79-4 speed bin; 64-bit channel).
  double bandwidth_Bps = 25.6e9;
  /// Fixed access latency, ps. Default 80 ns: a typical idle DRAM load-to-use latency of a
  /// desktop/server CPU memory system (estimate; a model parameter).
  ps_t latency_ps = 80 * ps_per_ns;
  /// Backing-store page and DMI granule, bytes.
  std::size_t page_bytes = 65536;
  /// Keep the stored bytes in an unlinked temporary file instead of RAM (for offloads of many
  /// GB: the process keeps only spill_options.cache_bytes resident); no DMI then. Default off;
  /// the platform turns it on by itself for large workloads (platform key host_mem.spill).
  bool spill = false;
  mem::spill_options spill_options{};

  memory_params to_memory_params() const {
    memory_params m;
    m.size_bytes = size_bytes;
    m.bandwidth_Bps = bandwidth_Bps;
    m.latency_ps = latency_ps;
    m.page_bytes = page_bytes;
    m.spill = spill;
    m.spill_options = spill_options;
    return m;
  }
};

/// Host memory target: socket `tgt`, store(), stats (bytes_read/bytes_written/busy_ps).
class host_memory : public memory_target {
public:
  explicit host_memory(sc_core::sc_module_name name,
                       const host_memory_params& params = host_memory_params{})
      : memory_target(name, params.to_memory_params()), host_params_(params) {}

  const host_memory_params& host_params() const { return host_params_; }
  const char* kind() const override { return "cdma::host_memory"; }

private:
  host_memory_params host_params_;
};

}  // namespace cdma
