// The one rule for a shared, bandwidth-limited resource (a DRAM data bus, one direction of a
// PCIe link, a compression unit): requests are served in the order they are reserved,
// each occupies the resource for bytes / rate, and a request cannot start before it is
// ready nor before the previous one has left. Used by LT targets (annotated delay =
// finish - now) and by AT models (event at finish), so both modes share it.
// Pure C++ (no SystemC).
#pragma once
#include <algorithm>
#include <cstdint>
#include "tlm/core/units.h"

namespace cdma {

class bandwidth_server {
public:
  /// `bytes_per_s`: service rate in bytes per second; <= 0 means infinitely fast.
  explicit bandwidth_server(double bytes_per_s = 0.0) : rate_(bytes_per_s) {}

  /// Occupies the resource for `bytes`, starting at the later of `ready` and the end of the
  /// previous reservation. Returns the time (ps) the last byte has been served.
  ps_t reserve(ps_t ready, std::uint64_t bytes) { return reserve(ready, bytes, transfer_ps(bytes, rate_)); }
  /// reserve() for a caller that already holds the service time: `service` must be
  /// transfer_ps(bytes, rate()) (computed once for a run of equal requests); same effect.
  ps_t reserve(ps_t ready, std::uint64_t bytes, ps_t service) {
    const ps_t start = std::max(ready, busy_until_);
    busy_until_ = start + service;
    busy_ps_ += service;
    bytes_ += bytes;
    ++requests_;
    return busy_until_;
  }

  double rate() const { return rate_; }
  void set_rate(double bytes_per_s) { rate_ = bytes_per_s; }
  /// End of the latest reservation (ps).
  ps_t busy_until() const { return busy_until_; }
  /// Sum of service times (ps): busy_ps() / elapsed is the utilisation.
  ps_t busy_ps() const { return busy_ps_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t requests() const { return requests_; }

private:
  double rate_;
  ps_t busy_until_ = 0;
  ps_t busy_ps_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t requests_ = 0;
};

}  // namespace cdma
