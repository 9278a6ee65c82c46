// Software prefetch of a byte range (cache hints only: no effect on data or results).
#pragma once
#include <cstddef>
#include <cstdint>

namespace cdma {

/// Requests the cache lines of [p, p + n) into the cache (prefetcht0; `write`: prefetchw,
/// for lines about to be written). For a stream of short sequential copies (a DMA engine's
/// 4 KiB windows): the hardware prefetchers stop at every 4 KiB page and see only the few
/// lines of one copy, so each line of the next copy waits for DRAM without this. The caller
/// keeps [p, p + n) inside one allocation.
inline void prefetch_range(const std::uint8_t* p, std::size_t n, bool write) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uint8_t* line = p - (a & 63);  // first line's start (same allocation's line)
  for (std::size_t o = 0; o < n + (a & 63); o += 64) {
    asm volatile("");  // keeps GCC from deleting a loop whose only effect is a prefetch
    if (write)
      __builtin_prefetch(line + o, 1, 3);
    else
      __builtin_prefetch(line + o, 0, 3);
  }
}

}  // namespace cdma
