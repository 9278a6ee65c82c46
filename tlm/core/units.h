// Time and rate units shared by every model. Pure C++ (no SystemC).
//
// Time inside the pure algorithms is an integer count of picoseconds (ps_t), the default
// SystemC time resolution, so LT estimates and AT event times computed from the same rule
// are bit-identical. Rates are bytes per second (GB/s = 1e9 B/s, never GiB/s).
#pragma once
#include <cstdint>
#include <cmath>

namespace cdma {

/// Picoseconds since the start of simulation (or a duration in ps).
using ps_t = std::uint64_t;

constexpr ps_t ps_per_ns = 1000;
constexpr ps_t ps_per_us = 1000 * ps_per_ns;
constexpr ps_t ps_per_s = 1000000 * ps_per_us;

/// 1 GB/s in bytes per second.
constexpr double GBps = 1e9;

/// Time to move `bytes` at `bytes_per_s`, rounded up to a whole picosecond.
/// A rate <= 0 means "infinitely fast" and gives 0.
inline ps_t transfer_ps(std::uint64_t bytes, double bytes_per_s) {
  if (bytes_per_s <= 0.0 || bytes == 0) return 0;
  return static_cast<ps_t>(std::ceil(static_cast<double>(bytes) * 1e12 / bytes_per_s));
}

/// `cycles` of a clock at `hz`, in picoseconds (rounded up).
inline ps_t cycles_ps(std::uint64_t cycles, double hz) {
  if (hz <= 0.0 || cycles == 0) return 0;
  return static_cast<ps_t>(std::ceil(static_cast<double>(cycles) * 1e12 / hz));
}

inline double ps_to_s(ps_t t) { return static_cast<double>(t) * 1e-12; }

}  // namespace cdma
