// Conversions between the pure-C++ picosecond time (tlm/core/units.h) and sc_time.
#pragma once
#include <systemc>
#include "tlm/core/units.h"

namespace cdma {

inline sc_core::sc_time to_sc(ps_t t) {
  return sc_core::sc_time(static_cast<double>(t), sc_core::SC_PS);
}

/// sc_time to picoseconds (rounded to the nearest ps).
inline ps_t to_ps(const sc_core::sc_time& t) {
  return static_cast<ps_t>(t.to_seconds() * 1e12 + 0.5);
}

/// Absolute simulated time now + `offset`, in ps.
inline ps_t now_ps(const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME) {
  return to_ps(sc_core::sc_time_stamp() + offset);
}

}  // namespace cdma
