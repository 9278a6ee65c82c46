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

/// calendar_server's rule with bounded state and divisible service, for LT models that book
/// many small reservations on many servers (the GPU DRAM's per-channel data bus, ACT and
/// bank-group servers, which the device shares at burst granularity): a reservation's service
/// is split over the earliest free time at or after `ready`, gap by gap in time order (the
/// free gaps left before the latest reservation's end), and what the gaps cannot take is
/// served after that end (or from `ready`, leaving a gap behind). Its end is the earliest
/// time by which `service` of free time has passed since `ready`. A zero-length reservation
/// occupies nothing and ends at `ready` when `ready` lies in a gap, else at the end of the
/// busy stretch it arrives in (bandwidth_server's rule). Calls in non-decreasing `ready`
/// order give bandwidth_server's result, to the picosecond (every gap then lies before
/// `ready`); such a call costs a compare and, when it leaves a gap, three stores more than
/// bandwidth_server's; a call out of order a binary search and a shift of the gaps it uses.
///
/// State: at most kGaps gaps, in time order (a ring). Gaps shorter than the shortest non-zero
/// service reserved so far (a burst on a DRAM bus) are not kept. A horizon t (reserve()'s
/// third argument, forget_before()) is the caller's promise that no later reservation is
/// ready before t: gaps ending by t are dropped (by a call out of order, or for room). With
/// kGaps gaps ending after it, a new latest gap is not kept and a gap split in two drops the
/// latest (the earliest are kept: the calls behind the others' bookings are ready early). A
/// dropped gap's free time is lost (served as busy), as with bandwidth_server. Pure C++.
class gap_server {
public:
  /// Gaps kept at most (model choice, 1 KiB per server: the cDMA engine books a descriptor's
  /// 32 window writes up to ~12 us ahead of the kernels' requests, ~33 gaps per server). A
  /// power of two (a ring).
  static constexpr unsigned kGaps = 64;

  /// Occupies the server for `service` ps of free time at or after `ready`, split over the
  /// earliest free gaps; returns the end of its last part (ps). `horizon`: the caller's promise
  /// that no later reservation is ready before it (gaps ending by then are dropped), as
  /// forget_before().
  ps_t reserve(ps_t ready, ps_t service, ps_t horizon = 0) {
    if (service != 0 && service < min_service_) min_service_ = service;
    if (ready >= end_) {  // in time order: bandwidth_server's rule, a gap left behind kept
      if (ready - end_ >= min_service_ && ready > end_) {
        if (c_ < kGaps) {
          const unsigned p = (h_ + c_) & kMask;
          gs_[p] = end_;
          ge_[p] = ready;
          ++c_;
        } else {
          append_full(end_, ready, horizon);
        }
      }
      end_ = ready + service;
      return end_;
    }
    return reserve_in_gaps(ready, service, horizon);
  }
  /// The caller's promise: no later reservation is ready before `t` (gaps ending by then are
  /// dropped).
  void forget_before(ps_t t) { horizon_ = std::max(horizon_, t); }
  /// End of the latest reservation (ps).
  ps_t busy_until() const { return end_; }
  /// Gaps kept (for tests; gaps ending by the horizon may still be counted).
  unsigned gaps() const { return c_; }

private:
  static constexpr unsigned kMask = kGaps - 1;
  static_assert((kGaps & kMask) == 0, "kGaps: a power of two");
  ps_t& gs(unsigned i) { return gs_[(h_ + i) & kMask]; }  ///< i-th gap in time order
  ps_t& ge(unsigned i) { return ge_[(h_ + i) & kMask]; }

  /// reserve() with `ready` before the latest end: the gaps from `ready` on, in time order.
  [[gnu::noinline]] ps_t reserve_in_gaps(ps_t ready, ps_t service, ps_t horizon) {
    prune(horizon);
    // The first gap that ends after `ready` (gaps are sorted and disjoint).
    unsigned lo = 0, hi = c_;
    while (lo < hi) {
      const unsigned mid = (lo + hi) / 2;
      if (ge(mid) > ready) hi = mid;
      else lo = mid + 1;
    }
    unsigned i = lo;
    if (i == c_) return end_ += service;
    const ps_t st0 = std::max(ready, gs(i));
    if (service == 0) return st0;
    // Gap `first` keeps its part before `ready`, [gs, st0), when long enough.
    const unsigned first = i;
    const bool left = st0 > gs(first) && st0 - gs(first) >= min_service_;
    ps_t rest = service, e = st0;
    for (; i < c_ && rest != 0; ++i) {
      const ps_t st = std::max(ready, gs(i));
      const ps_t take = std::min(rest, ge(i) - st);
      rest -= take;
      e = st + take;
    }
    if (rest != 0) {  // every gap after `ready` is used up: the rest after the latest end
      if (left) ge(first) = st0;
      erase(first + left, c_);
      return end_ += rest;
    }
    // Gaps [first, i) used; the last of them keeps [e, ge) when long enough.
    const unsigned last = i - 1;
    const ps_t right_end = ge(last);
    const bool right = right_end > e && right_end - e >= min_service_;
    if (first == last && left && right) {  // one gap split in two
      ge(first) = st0;
      insert(first + 1, e, right_end);
      return e;
    }
    if (left) ge(first) = st0;
    if (right) gs(last) = e;
    erase(first + left, right ? last : last + 1);
    return e;
  }
  /// Drops the gaps ending by the horizon (the earliest ones).
  void prune(ps_t horizon) {
    horizon_ = std::max(horizon_, horizon);
    while (c_ != 0 && ge_[h_] <= horizon_) {
      h_ = (h_ + 1) & kMask;
      --c_;
    }
  }
  /// A new latest gap [a, b) with kGaps kept: kept if gaps ending by the horizon make room
  /// (else the earliest are kept).
  [[gnu::noinline]] void append_full(ps_t a, ps_t b, ps_t horizon) {
    prune(horizon);
    if (c_ == kGaps) return;
    gs(c_) = a;
    ge(c_) = b;
    ++c_;
  }
  /// A gap [a, b) at position `at` in time order (0 < at <= c_): shifts the shorter side.
  /// With kGaps gaps kept the latest is dropped: the new one if it is the latest.
  void insert(unsigned at, ps_t a, ps_t b) {
    if (c_ == kGaps) {
      if (at == c_) return;
      --c_;
    }
    if (c_ - at <= at) {
      for (unsigned k = c_; k > at; --k) {
        gs(k) = gs(k - 1);
        ge(k) = ge(k - 1);
      }
    } else {
      h_ = (h_ - 1) & kMask;
      for (unsigned k = 0; k < at; ++k) {
        gs(k) = gs(k + 1);
        ge(k) = ge(k + 1);
      }
    }
    ++c_;
    gs(at) = a;
    ge(at) = b;
  }
  /// Removes the gaps [a, b) in time order (a <= b <= c_), shifting the shorter side.
  void erase(unsigned a, unsigned b) {
    if (b <= a) return;
    const unsigned d = b - a;
    if (a < c_ - b) {
      for (unsigned k = a; k-- > 0;) {
        gs(k + d) = gs(k);
        ge(k + d) = ge(k);
      }
      h_ = (h_ + d) & kMask;
    } else {
      for (unsigned k = b; k < c_; ++k) {
        gs(k - d) = gs(k);
        ge(k - d) = ge(k);
      }
    }
    c_ -= d;
  }

  ps_t end_ = 0;
  ps_t min_service_ = ~ps_t{0};  ///< the shortest non-zero service reserved so far: shorter gaps are not kept
  ps_t horizon_ = 0;             ///< no reservation is ready before it (forget_before(), reserve())
  unsigned h_ = 0, c_ = 0;       ///< the earliest gap's slot, gaps kept (a ring)
  ps_t gs_[kGaps] = {}, ge_[kGaps] = {};  ///< gaps [gs, ge), disjoint, before end_; in time order from h_
};

}  // namespace cdma
