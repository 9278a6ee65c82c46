// The one rule for a shared, bandwidth-limited resource (a DRAM data bus, one direction of a
// PCIe link, a compression unit): requests are served in the order they are reserved,
// each occupies the resource for bytes / rate, and a request cannot start before it is
// ready nor before the previous one has left. Used by LT targets (annotated delay =
// finish - now) and by AT models (event at finish), so both modes share it.
// Pure C++ (no SystemC).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>
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

/// A bandwidth_server for callers that may reserve out of time order (LT initiators with
/// temporal decoupling: a b_transport arriving at now + its local time can be called after
/// one that arrives later). Each reservation takes the earliest interval of its service time
/// at or after `ready` that no earlier reservation occupies (the gaps before reservations
/// booked ahead are filled), instead of queueing behind the latest one. For calls in
/// non-decreasing `ready` order (AT; LT with one initiator) every gap lies before `ready`,
/// so the result is bandwidth_server's, to the picosecond. Pure C++ (no SystemC).
///
/// Memory: one entry per busy interval (adjacent ones merge). forget_before(t) drops the
/// intervals that end by t (the caller's promise: no later reservation has ready < t; a
/// SystemC target passes sc_time_stamp()); beyond kMaxIntervals the oldest half is folded
/// into a floor (a request ready before it is served from the floor on, as the FIFO would).
class calendar_server {
public:
  /// Busy intervals kept at most (model choice, not a hardware figure: 64 KiB of state; a
  /// target that calls forget_before() with the present time keeps a handful).
  static constexpr std::size_t kMaxIntervals = 4096;

  explicit calendar_server(double bytes_per_s = 0.0) : rate_(bytes_per_s) {}

  /// Occupies the resource for transfer_ps(bytes, rate()) in the earliest free interval at or
  /// after `ready`. Returns the time (ps) the last byte has been served.
  ps_t reserve(ps_t ready, std::uint64_t bytes) { return reserve(ready, bytes, transfer_ps(bytes, rate_)); }
  /// reserve() with the service time given (= transfer_ps(bytes, rate())).
  ps_t reserve(ps_t ready, std::uint64_t bytes, ps_t service) {
    busy_ps_ += service;
    bytes_ += bytes;
    ++requests_;
    ready = std::max(ready, floor_);
    // Common case: at or after the last interval.
    if (busy_.empty() || ready >= busy_.back().end) return service ? append(ready, service) : ready;
    // First interval that ends after `ready` (intervals are sorted and disjoint).
    std::size_t i = static_cast<std::size_t>(
        std::upper_bound(busy_.begin() + head_, busy_.end(), ready,
                         [](ps_t t, const interval& v) { return t < v.end; }) -
        busy_.begin());
    ps_t start = ready;
    for (; i < busy_.size(); ++i) {
      // Fits in the gap before interval i (a zero-length request only strictly inside a gap,
      // so that it waits behind a busy stretch it arrives in, as with bandwidth_server).
      if (service ? start + service <= busy_[i].start : start < busy_[i].start) break;
      start = std::max(start, busy_[i].end);
    }
    if (service == 0) return start;
    if (i == busy_.size()) return append(start, service);
    insert(i, start, start + service);
    return start + service;
  }

  /// Drops the intervals that end at or before `t`: no later reservation is ready before t.
  void forget_before(ps_t t) {
    while (head_ < busy_.size() && busy_[head_].end <= t) ++head_;
    compact();
  }

  double rate() const { return rate_; }
  void set_rate(double bytes_per_s) { rate_ = bytes_per_s; }
  /// End of the latest reservation (ps).
  ps_t busy_until() const { return busy_.empty() ? floor_ : std::max(floor_, busy_.back().end); }
  /// Sum of service times (ps): busy_ps() / elapsed is the utilisation.
  ps_t busy_ps() const { return busy_ps_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t requests() const { return requests_; }
  /// Busy intervals kept (for tests).
  std::size_t intervals() const { return busy_.size() - head_; }

private:
  struct interval { ps_t start, end; };
  ps_t append(ps_t start, ps_t service) {
    if (head_ < busy_.size() && busy_.back().end == start) busy_.back().end += service;
    else busy_.push_back({start, start + service});
    if (busy_.size() - head_ > kMaxIntervals) fold();
    return busy_.back().end;
  }
  /// [start, end) before busy_[i] and after busy_[i - 1] (if any), merged with the ones it touches.
  void insert(std::size_t i, ps_t start, ps_t end) {
    const bool left = i > head_ && busy_[i - 1].end == start, right = busy_[i].start == end;
    if (left && right) {
      busy_[i - 1].end = busy_[i].end;
      busy_.erase(busy_.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (left) {
      busy_[i - 1].end = end;
    } else if (right) {
      busy_[i].start = start;
    } else {
      busy_.insert(busy_.begin() + static_cast<std::ptrdiff_t>(i), interval{start, end});
      if (busy_.size() - head_ > kMaxIntervals) fold();
    }
  }
  void fold() {
    head_ += (busy_.size() - head_) / 2;
    floor_ = std::max(floor_, busy_[head_ - 1].end);
    compact();
  }
  void compact() {
    if (head_ > 0 && head_ * 2 >= busy_.size()) {
      busy_.erase(busy_.begin(), busy_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  double rate_;
  std::vector<interval> busy_;  ///< sorted, disjoint, non-adjacent; [head_, size) live
  std::size_t head_ = 0;
  ps_t floor_ = 0;              ///< nothing starts before this (folded intervals)
  ps_t busy_ps_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t requests_ = 0;
};

/// calendar_server's rule with bounded state, for LT models that book many small
/// reservations on many servers (the GPU DRAM's per-channel data bus, ACT and bank-group
/// servers): a reservation takes the earliest interval of `service` at or after `ready` in a
/// free gap before the latest reservation's end, else starts at that end (or at `ready`,
/// leaving a gap behind). Only the kGaps most recently left gaps are kept (a reservation that
/// would have fitted in an older one queues behind the latest reservation instead, as
/// bandwidth_server would), so a reservation in time order costs two stores more than
/// bandwidth_server's. Calls in non-decreasing `ready` order give bandwidth_server's result,
/// to the picosecond. Pure C++.
class gap_server {
public:
  /// Gaps kept (model choice: an LT initiator books at most a few accesses ahead of the
  /// others, e.g. the cDMA engine's window writes after their PCIe reads). A power of two.
  static constexpr unsigned kGaps = 8;

  /// Occupies the server for `service` ps in the earliest free interval at or after `ready`;
  /// returns its end (ps).
  ps_t reserve(ps_t ready, ps_t service) {
    min_service_ = std::min(min_service_, service);
    if (ready >= end_) {
      if (ready - end_ >= min_service_ && ready > end_) keep(end_, ready);
      end_ = ready + service;
      return end_;
    }
    // A zero-length reservation fits a gap only strictly inside it (need 1 ps), so that it
    // waits behind a busy stretch it arrives in, as with bandwidth_server; it occupies nothing.
    const ps_t need = service != 0 ? service : 1;
    unsigned best = kGaps;
    ps_t best_start = end_;
    for (unsigned i = 0; i < kGaps; ++i) {
      const ps_t st = std::max(ready, gs_[i]);
      if (st + need <= ge_[i] && st < best_start) {
        best = i;
        best_start = st;
      }
    }
    if (best == kGaps) {
      end_ += service;
      return end_;
    }
    if (service == 0) return best_start;
    // [best_start, + service) taken from gap `best`: its left part stays in the slot, its
    // right part is kept as the newest gap.
    const ps_t e = best_start + service, right_end = ge_[best];
    ge_[best] = best_start;
    if (right_end - e >= min_service_ && e < right_end) keep(e, right_end);
    return e;
  }
  /// End of the latest reservation (ps).
  ps_t busy_until() const { return end_; }

private:
  void keep(ps_t a, ps_t b) {
    gs_[next_] = a;
    ge_[next_] = b;
    next_ = (next_ + 1) & (kGaps - 1);
  }

  ps_t end_ = 0;
  ps_t min_service_ = ~ps_t{0};           ///< the shortest service reserved so far: shorter gaps are not kept
  unsigned next_ = 0;                     ///< slot of the next gap kept (the oldest)
  ps_t gs_[kGaps] = {}, ge_[kGaps] = {};  ///< gaps [gs, ge), disjoint, before end_ (empty: gs >= ge)
};

}  // namespace cdma
