// A priority queue of timed entries ordered by (time, seq), for a controller's responses:
// the same order as a std::priority_queue of (time, seq) pairs (min first), but cheaper for
// the usual pattern of a memory controller, where every entry is pushed at or after the time
// of the last one popped and at most a short window ahead of it (a DRAM response is due at
// most CL/WL + burst + controller latency after the present time). Pure C++.
//
// Structure: a timing wheel of `slots` buckets of `slot_ps` picoseconds each (both powers of
// two) covering a window [base, base + slots * slot_ps) of absolute times, with a two-level
// bitmap of the non-empty buckets; each bucket is a singly linked list kept in (time, seq)
// order (usually 0 or 1 entries). An entry outside the window (before the base, or too far
// ahead) goes to an overflow binary heap; the minimum is the smaller of the wheel's first
// entry and the overflow's top, so the order is exactly (time, seq) for any input (entries
// with equal (time, seq) in unspecified order). push: O(1) (+ the bucket's length); pop:
// a bitmap scan (at most a few words) instead of a heap's O(log n) sift over scattered
// memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "tlm/core/units.h"

namespace cdma::dram {

template <class T>
class response_queue {
public:
  struct entry {
    ps_t time;
    std::uint64_t seq;
    T value;
    bool operator>(const entry& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  /// `window_ps`: the span ahead of the last popped time kept in the wheel (rounded up to a
  /// power of two); `slot_ps`: the width of a bucket (rounded up to a power of two).
  explicit response_queue(ps_t window_ps = ps_t{1} << 16, ps_t slot_ps = 32) {
    shift_ = 0;
    while ((ps_t{1} << shift_) < slot_ps) ++shift_;
    std::size_t slots = 64;
    while ((static_cast<ps_t>(slots) << shift_) < window_ps) slots *= 2;
    mask_ = slots - 1;
    heads_.assign(slots, kNil);
    bits_.assign(slots / 64, 0);
    summary_.assign((bits_.size() + 63) / 64, 0);
  }

  bool empty() const { return wheel_size_ == 0 && overflow_.empty(); }
  std::size_t size() const { return wheel_size_ + overflow_.size(); }
  std::size_t wheel_slots() const { return heads_.size(); }
  ps_t slot_ps() const { return ps_t{1} << shift_; }

  void push(ps_t time, std::uint64_t seq, const T& v) {
    const ps_t s = time >> shift_;
    if (wheel_size_ == 0) base_ = s;  // an empty wheel restarts at the entry
    if (s < base_ || s - base_ > mask_) {
      overflow_.push(entry{time, seq, v});
      return;
    }
    std::uint32_t n;
    if (free_ != kNil) {
      n = free_;
      free_ = nodes_[n].next;
      nodes_[n].e = entry{time, seq, v};
    } else {
      n = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back(node{entry{time, seq, v}, kNil});
    }
    const std::size_t slot = static_cast<std::size_t>(s) & mask_;
    std::uint32_t* link = &heads_[slot];
    if (*link == kNil) {
      bits_[slot >> 6] |= 1ull << (slot & 63);
      summary_[slot >> 12] |= 1ull << ((slot >> 6) & 63);
    } else {
      while (*link != kNil && !(nodes_[*link].e > nodes_[n].e)) link = &nodes_[*link].next;
    }
    nodes_[n].next = *link;
    *link = n;
    ++wheel_size_;
    if (min_slot_ != kNoSlot && s < min_s_) {
      min_slot_ = slot;
      min_s_ = s;
    }
  }

  /// The minimum entry (not empty()).
  const entry& top() {
    const entry* w = wheel_top();
    if (overflow_.empty()) return *w;
    if (w == nullptr || *w > overflow_.top()) return overflow_.top();
    return *w;
  }

  /// Removes the minimum entry (not empty()). (Always inline: called once per response.)
  __attribute__((always_inline)) void pop() {
    const entry* w = wheel_top();
    if (w == nullptr || (!overflow_.empty() && *w > overflow_.top())) {
      const ps_t s = overflow_.top().time >> shift_;
      overflow_.pop();
      // Every wheel entry is at or after the popped one: the window may start there.
      if (s > base_) base_ = s;
      return;
    }
    const std::size_t slot = min_slot_;
    const std::uint32_t n = heads_[slot];
    heads_[slot] = nodes_[n].next;
    nodes_[n].next = free_;
    free_ = n;
    --wheel_size_;
    base_ = min_s_;  // no wheel entry before the popped one
    if (heads_[slot] == kNil) {
      bits_[slot >> 6] &= ~(1ull << (slot & 63));
      if (bits_[slot >> 6] == 0) summary_[slot >> 12] &= ~(1ull << ((slot >> 6) & 63));
      min_slot_ = kNoSlot;
    }
  }

private:
  static constexpr std::uint32_t kNil = ~0u;
  static constexpr std::size_t kNoSlot = ~std::size_t{0};
  struct node {
    entry e;
    std::uint32_t next;
  };

  /// The wheel's minimum entry (nullptr when the wheel is empty); caches its bucket.
  const entry* wheel_top() {
    if (wheel_size_ == 0) return nullptr;
    if (min_slot_ == kNoSlot) {
      const std::size_t b = static_cast<std::size_t>(base_) & mask_;
      std::size_t slot = first_set(b);
      if (slot == heads_.size()) slot = first_set(0);
      min_slot_ = slot;
      min_s_ = base_ + ((slot - b) & mask_);
    }
    return &nodes_[heads_[min_slot_]].e;
  }
  /// First non-empty bucket at or after `p` (heads_.size() if none).
  std::size_t first_set(std::size_t p) const {
    std::size_t w = p >> 6;
    if (w >= bits_.size()) return heads_.size();
    const std::uint64_t m = bits_[w] & (~0ull << (p & 63));
    if (m) return (w << 6) | static_cast<std::size_t>(__builtin_ctzll(m));
    ++w;
    std::size_t s = w >> 6;
    if (s >= summary_.size()) return heads_.size();
    std::uint64_t ms = (w & 63) ? summary_[s] & (~0ull << (w & 63)) : summary_[s];
    for (;;) {
      if (ms) {
        const std::size_t word = (s << 6) | static_cast<std::size_t>(__builtin_ctzll(ms));
        return (word << 6) | static_cast<std::size_t>(__builtin_ctzll(bits_[word]));
      }
      if (++s >= summary_.size()) return heads_.size();
      ms = summary_[s];
    }
  }

  unsigned shift_ = 0;
  std::size_t mask_ = 0;       ///< buckets - 1
  ps_t base_ = 0;              ///< window start, in buckets (time >> shift_)
  std::vector<std::uint32_t> heads_;   ///< per bucket: first node (kNil: empty)
  std::vector<std::uint64_t> bits_;    ///< non-empty buckets
  std::vector<std::uint64_t> summary_; ///< non-zero words of bits_
  std::vector<node> nodes_;
  std::uint32_t free_ = kNil;
  std::size_t wheel_size_ = 0;
  std::size_t min_slot_ = kNoSlot;  ///< cached bucket of the wheel's minimum (kNoSlot: unknown)
  ps_t min_s_ = 0;                  ///< its bucket time (time >> shift_)
  std::priority_queue<entry, std::vector<entry>, std::greater<entry>> overflow_;
};

}  // namespace cdma::dram
