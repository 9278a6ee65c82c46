// Timing core of the cDMA engine's window pipeline (read -> (de)compression unit -> write),
// shared by the LT path (the engine computes each window's stage times from it and the
// targets' annotated delays) and, later, the AT path. Pure C++ (no SystemC).
//
// A window may issue its read when the window `max_outstanding` places earlier has been
// written (bounded buffering between the stages). (De)compression units work in parallel;
// each window goes to the unit that is free first, occupies it for bytes / unit rate, and
// leaves after an extra pipeline latency that does not block the unit.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>
#include "tlm/core/units.h"

namespace cdma {

class dma_pipeline {
public:
  /// units: number of (de)compression units (>= 1); unit_Bps: throughput of one unit in
  /// bytes/s of uncompressed data; latency: pipeline latency per window (ps);
  /// max_outstanding: windows in flight between read issue and write completion (>= 1).
  dma_pipeline(unsigned units, double unit_Bps, ps_t latency, unsigned max_outstanding)
      : unit_free_(std::max(1u, units), 0), unit_Bps_(unit_Bps), latency_(latency),
        done_(std::max(1u, max_outstanding), 0) {}

  /// Starts a new transfer at time t (ps): no window issues before t.
  void start(ps_t t) {
    issue_ = t;
    last_done_ = t;
    std::fill(done_.begin(), done_.end(), 0);
    slot_ = 0;
  }

  /// Earliest time the next window may issue its read.
  ps_t next_issue() {
    issue_ = std::max(issue_, done_[slot_]);
    return issue_;
  }

  /// Passes `bytes` (uncompressed) through the earliest-free unit once ready; returns the
  /// time the unit's output is available.
  ps_t unit(ps_t ready, std::uint64_t bytes) {
    auto it = std::min_element(unit_free_.begin(), unit_free_.end());
    const ps_t start = std::max(ready, *it);
    *it = start + transfer_ps(bytes, unit_Bps_);
    unit_busy_ += *it - start;
    return *it + latency_;
  }

  /// Records that the current window's write finished at `done`.
  void complete(ps_t done) {
    done_[slot_] = done;
    slot_ = (slot_ + 1) % done_.size();
    last_done_ = std::max(last_done_, done);
  }

  /// Completion time of the latest-finishing window so far.
  ps_t last_done() const { return last_done_; }
  /// Sum of unit busy time (ps), over all units.
  ps_t unit_busy_ps() const { return unit_busy_; }
  unsigned units() const { return static_cast<unsigned>(unit_free_.size()); }

private:
  std::vector<ps_t> unit_free_;
  double unit_Bps_;
  ps_t latency_;
  std::vector<ps_t> done_;
  std::size_t slot_ = 0;
  ps_t issue_ = 0;
  ps_t last_done_ = 0;
  ps_t unit_busy_ = 0;
};

}  // namespace cdma
