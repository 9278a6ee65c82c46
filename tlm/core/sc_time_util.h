// Conversions between the pure-C++ picosecond time (tlm/core/units.h) and sc_time.
//
// Once the simulation runs, the kernel's time resolution is fixed: the conversions then use
// integer ticks (sc_time::from_value / value(); one multiplication or division) instead of
// sc_time's double arithmetic, which profiles showed at ~3 % of an LT run. Before that (and
// for a resolution coarser than 1 ps) they take the exact double path.
#pragma once
#include <cmath>
#include <cstdint>
#include <systemc>
#include "tlm/core/units.h"

namespace cdma {

namespace detail {
/// Ticks of the kernel's time resolution per ps (1 at SystemC's default 1 ps, 1000 at 1 fs),
/// or 0 if not usable (not running yet, or a resolution coarser than / not dividing 1 ps).
/// Cached per simulation context (the resolution cannot change while it runs).
inline std::uint64_t ticks_per_ps() {
  thread_local const sc_core::sc_simcontext* ctx = nullptr;
  thread_local std::uint64_t k = 0;
  const sc_core::sc_simcontext* c = sc_core::sc_get_curr_simcontext();
  if (c == ctx) return k;
  if (!sc_core::sc_is_running()) return 0;
  const double ticks = 1e-12 / sc_core::sc_get_time_resolution().to_seconds();
  const double r = std::round(ticks);
  k = (ticks >= 1.0 && std::abs(ticks - r) < 1e-6 * r) ? static_cast<std::uint64_t>(r) : 0;
  ctx = c;
  return k;
}
}  // namespace detail

inline sc_core::sc_time to_sc(ps_t t) {
  if (const std::uint64_t k = detail::ticks_per_ps()) return sc_core::sc_time::from_value(t * k);
  return sc_core::sc_time(static_cast<double>(t), sc_core::SC_PS);
}

/// sc_time to picoseconds (rounded to the nearest ps).
inline ps_t to_ps(const sc_core::sc_time& t) {
  if (const std::uint64_t k = detail::ticks_per_ps()) return k == 1 ? t.value() : (t.value() + k / 2) / k;
  return static_cast<ps_t>(t.to_seconds() * 1e12 + 0.5);
}

/// Absolute simulated time now + `offset`, in ps.
inline ps_t now_ps(const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME) {
  return to_ps(sc_core::sc_time_stamp() + offset);
}

}  // namespace cdma
