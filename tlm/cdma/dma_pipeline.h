// Timing core of the cDMA engine's window pipeline (read -> (de)compression unit -> write),
// shared by the LT path (the engine computes each window's stage times from it and the
// targets' annotated delays) and, later, the AT path. Pure C++ (no SystemC).
//
// At most `max_outstanding` windows are in flight between read issue and write completion
// (bounded buffering between the stages): a window may issue its read once fewer than
// `max_outstanding` windows issued before it are still unwritten, i.e. at the
// (k - max_outstanding + 1)-th earliest write completion of windows 0..k-1 (the AT path's
// rule: a slot frees when any window is written). Writes can complete out of window order
// (a window whose GPU DRAM write waits for a refresh while later ones, on other channels,
// complete); before session 17 LT waited for the window max_outstanding places earlier,
// which stalled LT behind such a window where AT went on (docs/dram.md, Session 17).
// (De)compression units work in parallel; each window goes to the unit that is free first,
// occupies it for bytes / unit rate, and leaves after an extra pipeline latency that does not
// block the unit.
//
// Crossbar link and unit placement (ARCHITECTURE §6, docs/cdma_engine.md "Placement"): every
// window also crosses the link between the GPU crossbar and the engine (a bandwidth_server,
// link_Bps; 0 = unlimited). With placement `dma` the units sit at the engine, so the link
// carries uncompressed data: offload = read -> link(n) -> unit -> PCIe, prefetch = PCIe ->
// unit -> link(n) -> write. With `memory_controller` the units sit beside the DRAM channels,
// so only compressed bytes cross: offload = read -> unit -> link(c) -> PCIe, prefetch = PCIe
// -> link(c) -> unit -> write. offload_stage() / prefetch_stage() are the one rule the LT and
// AT paths both call.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>
#include "tlm/core/bandwidth_server.h"
#include "tlm/core/units.h"

namespace cdma {

/// Where the (de)compression units sit (ARCHITECTURE §6).
enum class unit_placement : std::uint8_t {
  dma,                ///< one pool at the engine: the crossbar link carries uncompressed data
  memory_controller,  ///< beside the DRAM channels: only compressed data crosses the link
};

class dma_pipeline {
public:
  /// units: number of (de)compression units (>= 1); unit_Bps: throughput of one unit in
  /// bytes/s of uncompressed data; latency: pipeline latency per window (ps);
  /// max_outstanding: windows in flight between read issue and write completion (>= 1).
  /// link_Bps: bandwidth of the crossbar link between GPU memory and the engine, B/s
  /// (<= 0: unlimited, no delay); placement: where the units sit.
  dma_pipeline(unsigned units, double unit_Bps, ps_t latency, unsigned max_outstanding,
               double link_Bps = 0.0, unit_placement placement = unit_placement::dma)
      : unit_free_(std::max(1u, units), 0), unit_Bps_(unit_Bps), latency_(latency),
        slots_(std::max(1u, max_outstanding)), link_(link_Bps), placement_(placement) {}

  /// Starts a new transfer at time t (ps): no window issues before t.
  void start(ps_t t) {
    issue_ = t;
    last_done_ = t;
    in_flight_.clear();
  }

  /// Earliest time the next window may issue its read.
  ps_t next_issue() const { return issue_; }

  /// Passes `bytes` (uncompressed) through the earliest-free unit once ready; returns the
  /// time the unit's output is available.
  ps_t unit(ps_t ready, std::uint64_t bytes) {
    auto it = std::min_element(unit_free_.begin(), unit_free_.end());
    const ps_t start = std::max(ready, *it);
    *it = start + transfer_ps(bytes, unit_Bps_);
    unit_busy_ += *it - start;
    return *it + latency_;
  }

  /// Moves `bytes` over the crossbar link once ready; returns the time the last byte crossed.
  ps_t link(ps_t ready, std::uint64_t bytes) {
    return link_.rate() > 0 ? link_.reserve(ready, bytes) : (link_bytes_ += bytes, ready);
  }

  /// Offload window read from GPU memory at `read_done`: `n` uncompressed bytes, `c` bytes
  /// after compression. Returns the time the compressed window may be written towards PCIe.
  ps_t offload_stage(ps_t read_done, std::uint64_t n, std::uint64_t c) {
    if (placement_ == unit_placement::dma) return unit(link(read_done, n), n);
    return link(unit(read_done, n), c);
  }

  /// Prefetch window read from PCIe at `read_done`: `c` compressed bytes giving `n`
  /// uncompressed ones. Returns the time the window may be written into GPU memory.
  ps_t prefetch_stage(ps_t read_done, std::uint64_t n, std::uint64_t c) {
    if (placement_ == unit_placement::dma) return link(unit(read_done, n), n);
    return unit(link(read_done, c), n);
  }

  /// Records that the current window's write finished at `done`. With max_outstanding
  /// windows in flight, the one written first frees its slot: the next window issues no
  /// earlier than that write.
  void complete(ps_t done) {
    in_flight_.push_back(done);
    std::push_heap(in_flight_.begin(), in_flight_.end(), std::greater<ps_t>());
    if (in_flight_.size() >= slots_) {
      std::pop_heap(in_flight_.begin(), in_flight_.end(), std::greater<ps_t>());
      issue_ = std::max(issue_, in_flight_.back());
      in_flight_.pop_back();
    }
    last_done_ = std::max(last_done_, done);
  }

  /// Completion time of the latest-finishing window so far.
  ps_t last_done() const { return last_done_; }
  /// Sum of unit busy time (ps), over all units.
  ps_t unit_busy_ps() const { return unit_busy_; }
  unsigned units() const { return static_cast<unsigned>(unit_free_.size()); }
  /// Bytes moved over the crossbar link and its busy time (ps).
  std::uint64_t link_bytes() const { return link_bytes_ + link_.bytes(); }
  ps_t link_busy_ps() const { return link_.busy_ps(); }
  unit_placement placement() const { return placement_; }

private:
  std::vector<ps_t> unit_free_;
  double unit_Bps_;
  ps_t latency_;
  /// Write completion times of the windows still holding a slot (at most max_outstanding - 1
  /// between calls), a min-heap; grown with the windows written since start() (never
  /// allocated whole: breaker s15 F6), so a transfer costs memory in its windows in flight.
  std::vector<ps_t> in_flight_;
  std::size_t slots_;
  ps_t issue_ = 0;
  ps_t last_done_ = 0;
  ps_t unit_busy_ = 0;
  bandwidth_server link_;
  std::uint64_t link_bytes_ = 0;  ///< bytes over an unlimited link (not counted by link_)
  unit_placement placement_;
};

}  // namespace cdma
