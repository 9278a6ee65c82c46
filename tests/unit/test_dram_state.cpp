// DRAM core state layout (pure C++): the timing checker's 32-bit per-command counters carry
// into their high words exactly, its 32-bit timings reject a value that does not fit, and a
// bank's request queue (a list through the channel's request pool) keeps arrival order when
// FR-FCFS serves row hits from its middle and its end. Preset GDDR5 Titan X (tCK 571 ps).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "tlm/memory/dram/channel.h"
#include "tlm/memory/dram/dram_spec.h"
#include "tlm/memory/dram/timing_checker.h"

using namespace cdma;
using namespace cdma::dram;

namespace {

dram_spec g5() { return preset("gddr5_titanx"); }

request one(std::uint64_t tag, std::uint64_t row, ps_t arrival = 0) {
  request r;
  r.tag = tag;
  r.arrival = arrival;
  r.bank_group = 0;
  r.bank = 0;
  r.row = row;
  r.bursts = 1;
  return r;
}

// Runs command by command until the queue is empty (at most 1000 commands: a request lost
// from its bank's queue would never complete) and takes the completed tags.
std::vector<std::uint64_t> run_tags(channel& c) {
  for (int i = 0; i < 1000 && c.queued() > 0; ++i) c.advance(c.next_command_time() + 1);
  std::vector<std::uint64_t> tags;
  for (const auto& d : c.completions()) tags.push_back(d.tag);
  c.completions().clear();
  return tags;
}

}  // namespace

// commands(REF) and binding(arrival) across 2^32: 2^32 - 1 idle REFs at once, one more REF
// recorded alone (the 32-bit low word wraps to 0, the carry goes to the high word), then
// 2^32 + 5 more at once: 2^33 + 5 in all, exactly.
TEST(TimingChecker, CountersCarryPast32Bits) {
  const auto s = g5();
  const ps_t refi = s.ps(s.t.tREFI);
  timing_checker k(s);
  const std::uint64_t n1 = (1ull << 32) - 1;
  ASSERT_TRUE(k.record_idle_refreshes(refi, refi, n1));
  EXPECT_EQ(k.commands(command::REF), n1);
  EXPECT_EQ(k.binding(rule::arrival), n1);
  const ps_t t = refi + n1 * refi;  // one tREFI after the last REF: no rule binds
  EXPECT_EQ(k.record_issue(command::REF, 0, 0, t, t), 0u);
  EXPECT_EQ(k.commands(command::REF), 1ull << 32);
  EXPECT_EQ(k.binding(rule::arrival), 1ull << 32);
  const std::uint64_t n2 = (1ull << 32) + 5;
  ASSERT_TRUE(k.record_idle_refreshes(t + refi, refi, n2));
  EXPECT_EQ(k.commands(command::REF), (1ull << 33) + 5);
  EXPECT_EQ(k.binding(rule::arrival), (1ull << 33) + 5);
  EXPECT_EQ(k.commands(command::ACT), 0u);
  EXPECT_EQ(k.total_violations(), 0u);
}

// Timings are kept as 32-bit picoseconds: tRFC = 3,000,000 tCK x 571 ps = 1.713e9 ps fits
// (below 2^31 - 1 = 2.147e9), 4,000,000 tCK = 2.284e9 ps does not and is refused.
TEST(TimingChecker, RejectsTimingsBeyond32BitPicoseconds) {
  auto s = g5();
  s.t.tRFC = 3000000;
  EXPECT_NO_THROW(timing_checker{s});
  s.t.tRFC = 4000000;
  EXPECT_THROW(timing_checker{s}, std::invalid_argument);
}

// One bank, FR-FCFS, open page; requests (tag: row) 0: 1, 1: 2, 2: 1, 3: 2, 4: 1 at time 0.
// ACT row 1 for request 0 (the oldest), then its row hits 2 (from the middle of the queue)
// and 4 (its end): completions 0, 2, 4. Request 5: row 2 arrives then (after the end of the
// queue was removed): it queues behind 1 and 3; PRE, ACT row 2 for request 1, then its hits
// 3 and 5: completions 1, 3, 5. Then, with row 2 open and the queue empty, 6: row 2 (a hit)
// and 7: row 3 (PRE, ACT): completions 6, 7. ACTs: for 0, 1 and 7; first bursts to a row
// already open: 2, 4, 3, 5, 6. (No refresh within the test: the first is due at 1 s.)
TEST(Channel, BankQueueKeepsArrivalOrderAroundRowHits) {
  const auto s = g5();
  channel c(s, page_policy::open, scheduler::frfcfs, 1000000000000);  // first REF at 1 s
  c.set_check_pick(true);
  const std::uint64_t rows[5] = {1, 2, 1, 2, 1};
  for (std::uint64_t t = 0; t < 5; ++t) c.submit(one(t, rows[t]));
  // Command by command until three requests are complete (a bounded loop: a request lost
  // from the queue would never complete).
  for (int i = 0; i < 100 && c.completions().size() < 3; ++i)
    c.advance(c.next_command_time() + 1);
  ASSERT_EQ(c.completions().size(), 3u);
  EXPECT_EQ(c.queued(), 2u);
  const ps_t now = c.checker().data_bus_free();
  c.submit(one(5, 2, now));
  EXPECT_EQ(run_tags(c), (std::vector<std::uint64_t>{0, 2, 4, 1, 3, 5}));
  const ps_t later = c.checker().data_bus_free() + 1000000;
  c.submit(one(6, 2, later));
  c.submit(one(7, 3, later));
  EXPECT_EQ(run_tags(c), (std::vector<std::uint64_t>{6, 7}));
  EXPECT_EQ(c.row_misses(), 3u);
  EXPECT_EQ(c.row_hits(), 5u);
  EXPECT_EQ(c.checker().commands(command::ACT), 3u);
  EXPECT_EQ(c.checker().commands(command::PRE), 2u);
  EXPECT_EQ(c.checker().total_violations(), 0u);
  EXPECT_EQ(c.pick_mismatches(), 0u);
  EXPECT_EQ(c.local_mismatches(), 0u);
  EXPECT_EQ(c.bound_mismatches(), 0u);
}
