// Timing functions shared by the LT estimate and the AT command scheduler (one rule, one
// place): the steady-state intervals a DRAM channel can sustain, derived from the preset's
// timing parameters only. Pure C++.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "tlm/memory/dram/dram_spec.h"

namespace cdma::dram {

/// Interval between column commands of one stream, ps: a burst occupies the data bus for
/// burst_ps(); consecutive commands to different bank groups need tCCD_S, to the same group
/// tCCD_L. Returns the interval for one bank group or for groups interleaved.
inline ps_t column_interval_ps(const dram_spec& s, bool same_group) {
  return std::max(s.burst_ps(), s.ps(same_group ? s.t.tCCD_L : s.t.tCCD_S));
}

/// Interval between ACTs a channel can sustain when they rotate over all banks, ps:
/// max(tRRD_S, tFAW / 4, tRC / banks).
inline ps_t act_interval_ps(const dram_spec& s) {
  const ps_t faw = (s.ps(s.t.tFAW) + 3) / 4;
  const ps_t rc = (s.ps(s.t.tRC) + s.banks() - 1) / s.banks();
  return std::max({s.ps(s.t.tRRD_S), faw, rc});
}

/// Fraction of time left for commands by all-bank refresh: (tREFI - tRFC) / tREFI.
inline double refresh_availability(const dram_spec& s) {
  if (s.t.tREFI == 0) return 1.0;
  return static_cast<double>(s.t.tREFI - s.t.tRFC) / static_cast<double>(s.t.tREFI);
}

/// The constants service_ps() combines, computed once per spec (callers that estimate many
/// accesses keep one; the result is the same as service_ps(spec, ...)).
struct service_terms {
  ps_t col_any = 0;     ///< column_interval_ps(s, false)
  ps_t col_group = 0;   ///< column_interval_ps(s, true)
  ps_t act = 0;         ///< act_interval_ps(s)
  double avail = 1.0;   ///< refresh_availability(s)
  explicit service_terms(const dram_spec& s)
      : col_any(column_interval_ps(s, false)), col_group(column_interval_ps(s, true)),
        act(act_interval_ps(s)), avail(refresh_availability(s)) {}
  service_terms() = default;
};

/// service_ps() from precomputed terms.
inline ps_t service_ps(const service_terms& k, std::uint64_t bursts,
                       std::uint64_t max_bursts_one_group, std::uint64_t acts) {
  const ps_t col = std::max(bursts * k.col_any, max_bursts_one_group * k.col_group);
  const ps_t act = acts * k.act;
  return static_cast<ps_t>(std::ceil(static_cast<double>(std::max(col, act)) / k.avail));
}

/// Time one bank group of a channel is busy with `bursts` column accesses of one access, ps:
/// bursts x max(burst, tCCD_L) / refresh availability, rounded up. The LT estimate books it
/// on a per-(channel, bank group) server, apart from the channel's data bus and ACT time
/// (service_ps() with max_bursts_one_group = 0), so that the column commands of consecutive
/// accesses to different bank groups overlap (tCCD_S apart) as the AT scheduler interleaves
/// them, while those of one group stay tCCD_L apart across accesses (JESD79-4 / JESD235
/// tCCD_L: column to column, same bank group).
inline ps_t group_service_ps(const service_terms& k, std::uint64_t bursts_in_group) {
  return static_cast<ps_t>(
      std::ceil(static_cast<double>(bursts_in_group * k.col_group) / k.avail));
}

/// Time a channel's row-command side is busy with `acts` ACTs, ps: acts x act_interval /
/// refresh availability, rounded up (the LT estimate books it on a per-channel ACT server
/// apart from the data bus, so that the ACTs of some accesses overlap the row hits of
/// others, as the AT scheduler overlaps them).
inline ps_t act_service_ps(const service_terms& k, std::uint64_t acts) {
  return static_cast<ps_t>(std::ceil(static_cast<double>(acts * k.act) / k.avail));
}

/// Time a channel is busy serving `bursts` column accesses, of which at most
/// `max_bursts_one_group` go to one bank group, needing `acts` row activations: the larger
/// of the data time and the activation time, stretched by refresh. ps, rounded up.
inline ps_t service_ps(const dram_spec& s, std::uint64_t bursts,
                       std::uint64_t max_bursts_one_group, std::uint64_t acts) {
  return service_ps(service_terms(s), bursts, max_bursts_one_group, acts);
}

/// Latency from a request reaching an idle channel to the end of its first burst, ps:
/// (tRP if a row must be closed) + (tRCD if a row must be opened) + tCL/tWL + burst.
inline ps_t access_latency_ps(const dram_spec& s, bool write, bool precharge, bool activate) {
  return (precharge ? s.ps(s.t.tRP) : 0) + (activate ? s.ps(s.t.tRCD) : 0) +
         s.ps(write ? s.t.tWL : s.t.tCL) + s.burst_ps();
}

}  // namespace cdma::dram
