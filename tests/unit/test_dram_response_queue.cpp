// dram::response_queue (the controller's responses by (time, acceptance)): the order of pops
// checked against a std::priority_queue of (time, seq) on random input: the controller's
// pattern (pushes at or after the last popped time, within and beyond the wheel's window,
// equal times, interleaved pushes and pops), pushes before the last popped time, times far
// beyond the window (overflow heap), and an empty wheel restarting far ahead. Pure C++.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

#include "tlm/memory/dram/response_queue.h"

using namespace cdma;
using namespace cdma::dram;

namespace {

using ref_entry = std::tuple<ps_t, std::uint64_t, std::uint32_t>;  // time, seq, value
using ref_queue = std::priority_queue<ref_entry, std::vector<ref_entry>, std::greater<ref_entry>>;

// Pops one entry from both and compares (time, seq, value); returns the popped time.
ps_t pop_both(response_queue<std::uint32_t>& q, ref_queue& r) {
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.size(), r.size());
  const auto& e = q.top();
  const auto [t, s, v] = r.top();
  EXPECT_EQ(e.time, t);
  EXPECT_EQ(e.seq, s);
  EXPECT_EQ(e.value, v);
  q.pop();
  r.pop();
  return t;
}

struct scenario {
  ps_t window, slot;       // queue geometry
  ps_t ahead;              // pushes at now + [0, ahead)
  int back_permille;       // pushes before the last popped time (per mille)
  int far_permille;        // pushes far beyond the window (per mille)
  unsigned grid;           // push times on a grid of this many ps (1: any)
};

void run(const scenario& sc, std::uint64_t seed, std::size_t ops) {
  std::mt19937_64 rng(seed);
  response_queue<std::uint32_t> q(sc.window, sc.slot);
  ref_queue r;
  std::uint64_t seq = 0;
  ps_t now = 1000;  // the last popped time (the controller's present time)
  std::size_t popped = 0;
  for (std::size_t i = 0; i < ops; ++i) {
    const unsigned op = static_cast<unsigned>(rng() % 100);
    if (op < 55 || r.empty()) {
      ps_t t = now + (rng() % sc.ahead) / sc.grid * sc.grid;
      const int k = static_cast<int>(rng() % 1000);
      if (k < sc.back_permille && now > 0) t = now - 1 - rng() % std::min<ps_t>(now, 5000);
      else if (k < sc.back_permille + sc.far_permille) t = now + sc.window * (2 + rng() % 8);
      // Sequence numbers: mostly increasing (acceptance order), sometimes an older one.
      const std::uint64_t s = (rng() % 4 == 0 && seq > 10) ? seq - 1 - rng() % 10 : seq;
      ++seq;
      const auto v = static_cast<std::uint32_t>(rng());
      const std::uint64_t key = (s << 20) | i;  // unique (ops < 2^20): the order is total
      q.push(t, key, v);
      r.push({t, key, v});
    } else {
      // Pop every entry due at the next time (as the controller's service does), or one.
      const ps_t t = std::get<0>(r.top());
      if (op < 80) {
        while (!r.empty() && std::get<0>(r.top()) == t) pop_both(q, r);
      } else {
        pop_both(q, r);
      }
      now = std::max(now, t);
      ++popped;
    }
  }
  while (!r.empty()) pop_both(q, r);
  EXPECT_TRUE(q.empty());
  EXPECT_GT(popped, ops / 10);
}

}  // namespace

TEST(DramResponseQueue, OrderEqualsPriorityQueueControllerPattern) {
  // Pushes at or after the last popped time, inside the window (the common case), on the
  // 764-ps HBM3 clock grid and on any picosecond, with many equal times.
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    run({1 << 16, 32, 27000, 0, 0, 764}, seed, 40000);
    run({1 << 16, 32, 27000, 0, 0, 1}, seed, 40000);
    run({1 << 12, 1, 3000, 0, 0, 7}, seed, 40000);
  }
}

TEST(DramResponseQueue, OrderEqualsPriorityQueueOutsideTheWindow) {
  // Pushes beyond the window (overflow heap), before the last popped time, and a window
  // shorter than the push horizon.
  for (std::uint64_t seed = 11; seed <= 16; ++seed) {
    run({1 << 16, 32, 27000, 20, 20, 764}, seed, 40000);
    run({1 << 10, 16, 27000, 5, 5, 1}, seed, 40000);
    run({64, 1, 500, 100, 100, 1}, seed, 20000);
  }
}

TEST(DramResponseQueue, EmptyWheelRestartsAnywhere) {
  response_queue<std::uint32_t> q(1 << 12, 16);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.wheel_slots(), 256u);
  EXPECT_EQ(q.slot_ps(), 16u);
  // Far ahead of an empty queue, then earlier than that (before the window start), then
  // later: popped in (time, seq) order.
  q.push(1'000'000'000, 5, 1);
  q.push(999'999'000, 7, 2);
  q.push(1'000'000'000, 3, 3);
  q.push(1'000'000'100, 1, 4);
  q.push(1'000'004'000, 2, 5);
  q.push(1'000'000'100, 0, 6);
  const std::uint32_t want[] = {2, 3, 1, 6, 4, 5};
  for (std::uint32_t w : want) {
    ASSERT_FALSE(q.empty());
    EXPECT_EQ(q.top().value, w);
    q.pop();
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  // Empty again: a push far before the last popped time is still served.
  q.push(10, 0, 7);
  EXPECT_EQ(q.top().time, 10u);
  q.pop();
  EXPECT_TRUE(q.empty());
}
