// Conversions between the pure-C++ picosecond time (tlm/core/units.h) and sc_time.
//
// Once the simulation runs, the kernel's time resolution is fixed: the conversions then use
// integer ticks (one multiplication or division) instead of sc_time's double arithmetic,
// which profiles showed at ~3 % of an LT run. Before that (and for a resolution coarser than
// 1 ps) they take the exact double path.
//
// They avoid the SystemC library's out-of-line calls where its inline API gives the same
// value (LT runs convert ~4 times per TLM transaction): the current time is read through the
// inline sc_simcontext::time_stamp() (what sc_time_stamp() returns), and a tick count below
// 2^52 becomes an sc_time by the inline sc_time::operator*=(double) on a one-picosecond
// sc_time (exact there: both factors and the product + 0.5 are exact doubles, and the
// result is truncated), larger ones by sc_time::from_value.
#pragma once
#include <cmath>
#include <cstdint>
#include <new>
#include <systemc>
#include "tlm/core/units.h"

namespace cdma {

namespace detail {
/// Per-thread cache of the running simulation context's time resolution. Trivial (constant-
/// initialised thread_local: no initialisation guard on the fast path).
struct time_glue {
  const sc_core::sc_simcontext* ctx;
  /// Ticks of the kernel's time resolution per ps (1 at SystemC's default 1 ps, 1000 at
  /// 1 fs), or 0 if not usable (not running yet, or a resolution coarser than / not dividing
  /// 1 ps).
  std::uint64_t k;
  std::uint64_t exact_max_ps;  ///< largest t (ps) with t x k < 2^52
  /// An sc_time of 1 ps (k ticks) constructed here when k != 0 (sc_time is trivially
  /// destructible; one_ps() reads it).
  alignas(sc_core::sc_time) unsigned char one_ps_bytes[sizeof(sc_core::sc_time)];
  const sc_core::sc_time& one_ps() const {
    return *std::launder(reinterpret_cast<const sc_core::sc_time*>(one_ps_bytes));
  }
};

inline time_glue& glue_state() {
  thread_local time_glue g{};
  return g;
}

/// Fills the cache for context `c` (the resolution cannot change while it runs); returns an
/// empty one (k == 0) while the simulation is not running.
__attribute__((noinline)) inline const time_glue& glue_refresh(const sc_core::sc_simcontext* c) {
  thread_local const time_glue none{};
  if (!sc_core::sc_is_running()) return none;
  time_glue& g = glue_state();
  const double ticks = 1e-12 / sc_core::sc_get_time_resolution().to_seconds();
  const double r = std::round(ticks);
  g.k = (ticks >= 1.0 && std::abs(ticks - r) < 1e-6 * r) ? static_cast<std::uint64_t>(r) : 0;
  if (g.k != 0) {
    g.exact_max_ps = ((std::uint64_t{1} << 52) - 1) / g.k;
    ::new (static_cast<void*>(g.one_ps_bytes)) sc_core::sc_time(sc_core::sc_time::from_value(g.k));
  }
  g.ctx = c;
  return g;
}

/// The cache for the current simulation context. Reads sc_curr_simcontext directly (what
/// the inline sc_get_curr_simcontext() returns once a context exists; compilers tend not to
/// inline that one, it may construct the default context).
__attribute__((always_inline)) inline const time_glue& glue() {
  const sc_core::sc_simcontext* c = sc_core::sc_curr_simcontext;
  const time_glue& g = glue_state();
  if (c != nullptr && c == g.ctx) return g;
  return glue_refresh(c != nullptr ? c : sc_core::sc_get_curr_simcontext());
}

/// Ticks of the kernel's time resolution per ps, or 0 (see time_glue::k).
inline std::uint64_t ticks_per_ps() { return glue().k; }

/// The current simulation context (sc_get_curr_simcontext() without its out-of-line copy).
inline const sc_core::sc_simcontext* curr_simcontext() {
  const sc_core::sc_simcontext* c = sc_core::sc_curr_simcontext;
  return c != nullptr ? c : sc_core::sc_get_curr_simcontext();
}
}  // namespace detail

inline sc_core::sc_time to_sc(ps_t t) {
  const detail::time_glue& g = detail::glue();
  if (g.k != 0) {
    if (t <= g.exact_max_ps) {
      sc_core::sc_time r = g.one_ps();
      r *= static_cast<double>(t);  // = from_value(t * k), exactly (see the top)
      return r;
    }
    return sc_core::sc_time::from_value(t * g.k);
  }
  return sc_core::sc_time(static_cast<double>(t), sc_core::SC_PS);
}

/// sc_time to picoseconds (rounded to the nearest ps).
inline ps_t to_ps(const sc_core::sc_time& t) {
  if (const std::uint64_t k = detail::ticks_per_ps()) return k == 1 ? t.value() : (t.value() + k / 2) / k;
  return static_cast<ps_t>(t.to_seconds() * 1e12 + 0.5);
}

/// sc_time_stamp() (the same object), through the inline sc_simcontext::time_stamp().
inline const sc_core::sc_time& sc_now() { return detail::curr_simcontext()->time_stamp(); }

/// Absolute simulated time now + `offset`, in ps.
inline ps_t now_ps(const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME) {
  const detail::time_glue& g = detail::glue();
  if (g.k == 1) return g.ctx->time_stamp().value() + offset.value();  // = sc_time_stamp()
  return to_ps(sc_core::sc_time_stamp() + offset);
}

}  // namespace cdma
