// The FR-FCFS pick's per-command age lists (key_order) and the pick built on them, checked
// against the reference scan over all banks (channel::set_check_pick). Pure C++.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "tlm/memory/dram/channel.h"
#include "tlm/memory/dram/dram_spec.h"
#include "tlm/memory/dram/key_order.h"

using namespace cdma;
using namespace cdma::dram;

namespace {
std::vector<std::uint64_t> contents(const key_order& k) { return {k.begin(), k.end()}; }
}  // namespace

TEST(KeyOrder, KeepsKeysAscendingThroughInsertAndErase) {
  key_order k(4);
  EXPECT_TRUE(k.empty());
  EXPECT_EQ(k.capacity(), 4u);
  k.insert(50);
  k.insert(10);  // before 50
  k.insert(30);  // between
  EXPECT_EQ(contents(k), (std::vector<std::uint64_t>{10, 30, 50}));
  k.insert(60);  // at the end: now full
  EXPECT_EQ(contents(k), (std::vector<std::uint64_t>{10, 30, 50, 60}));
  EXPECT_THROW(k.insert(20), std::logic_error);  // full
  EXPECT_TRUE(k.erase(30));                      // middle
  EXPECT_EQ(contents(k), (std::vector<std::uint64_t>{10, 50, 60}));
  EXPECT_FALSE(k.erase(30));  // not present: no change
  EXPECT_EQ(k.size(), 3u);
  EXPECT_THROW(k.insert(50), std::logic_error);  // duplicate: refused, order unchanged
  EXPECT_EQ(contents(k), (std::vector<std::uint64_t>{10, 50, 60}));
  EXPECT_TRUE(k.erase(10));  // first
  EXPECT_TRUE(k.erase(60));  // last
  EXPECT_EQ(contents(k), (std::vector<std::uint64_t>{50}));
  // Keys as the scheduler builds them: (not a column command) << 63 | age << 8 | bank; the
  // order is by the top bit, then age (bank 15 with age 1 before bank 0 with age 2).
  key_order s(3);
  s.insert((1ull << 63) | (2ull << 8) | 0);
  s.insert((1ull << 63) | (1ull << 8) | 15);
  s.insert((0ull << 63) | (7ull << 8) | 3);
  EXPECT_EQ(s[0] & 0xffu, 3u);
  EXPECT_EQ(s[1] & 0xffu, 15u);
  EXPECT_EQ(s[2] & 0xffu, 0u);
  s.clear();
  EXPECT_TRUE(s.empty());
}

// Every pick of the list-based FR-FCFS scheduler equals the reference scan over all banks
// (same command, bank, time, and the same completion bound), for every preset and page
// policy, under random mixed traffic: reads and writes of 1 to 8 bursts, few rows per bank
// (row hits and conflicts), bursts of arrivals and idle gaps, advances at random times.
TEST(Channel, ListPickEqualsReferenceScan) {
  for (const auto& name : preset_names()) {
    const dram_spec s = preset(name);
    for (page_policy pp : {page_policy::open, page_policy::closed}) {
      channel c(s, pp, scheduler::frfcfs, s.ps(s.t.tREFI) / 3);
      c.set_check_pick(true);
      std::mt19937_64 rng(7);
      ps_t t = 0;
      std::uint64_t tag = 0;
      for (int burst = 0; burst < 60; ++burst) {
        const int n = 1 + static_cast<int>(rng() % 120);
        for (int i = 0; i < n; ++i) {
          request r;
          r.tag = tag++;
          t += rng() % (4 * s.tCK_ps);
          r.arrival = t;
          r.write = rng() % 4 == 0;
          r.bank_group = static_cast<unsigned>(rng() % s.bank_groups);
          r.bank = static_cast<unsigned>(rng() % s.banks_per_group);
          r.row = rng() % 3;
          r.bursts = 1 + static_cast<unsigned>(rng() % 8);
          c.submit(r);
          if (rng() % 8 == 0) c.completion_bound();  // as the controller does
        }
        t += rng() % (200 * s.tCK_ps);
        c.advance(t);
      }
      while (c.queued() > 0) c.advance(c.next_command_time() + 1);
      EXPECT_GT(c.picks_checked(), 5000u) << name;
      EXPECT_EQ(c.pick_mismatches(), 0u) << name << " " << policy_name(pp);
      EXPECT_EQ(c.bound_mismatches(), 0u) << name << " " << policy_name(pp);
      EXPECT_EQ(c.checker().total_violations(), 0u) << name;
      EXPECT_EQ(c.completions().size(), tag) << name;
    }
  }
}

// The channel-wide bounds the scheduler keeps incrementally (timing_checker::
// raise_channel_wide after each command) equal the checker's channel_wide() recomputed from
// its history, at every pick: both schedulers and page policies, every preset, mixed reads
// and writes, and idle stretches longer than tREFI (the idle-refresh fast path, after which
// the bounds are recomputed).
TEST(Channel, IncrementalChannelBoundsEqualRecomputed) {
  for (const auto& name : preset_names()) {
    const dram_spec s = preset(name);
    for (scheduler sch : {scheduler::fcfs, scheduler::frfcfs})
      for (page_policy pp : {page_policy::open, page_policy::closed}) {
        channel c(s, pp, sch, s.ps(s.t.tREFI) / 2);
        c.set_check_pick(true);
        std::mt19937_64 rng(11);
        ps_t t = 0;
        std::uint64_t tag = 0;
        for (int burst = 0; burst < 40; ++burst) {
          const int n = 1 + static_cast<int>(rng() % 80);
          for (int i = 0; i < n; ++i) {
            request r;
            r.tag = tag++;
            t += rng() % (4 * s.tCK_ps);
            r.arrival = t;
            r.write = rng() % 3 == 0;
            r.bank_group = static_cast<unsigned>(rng() % s.bank_groups);
            r.bank = static_cast<unsigned>(rng() % s.banks_per_group);
            r.row = rng() % 4;
            r.bursts = 1 + static_cast<unsigned>(rng() % 4);
            c.submit(r);
          }
          // Every fourth gap is idle for 1 to 3 tREFI (refreshes of an idle channel).
          t += burst % 4 == 3 ? (1 + rng() % 3) * s.ps(s.t.tREFI) : rng() % (200 * s.tCK_ps);
          c.advance(t);
        }
        while (c.queued() > 0) c.advance(c.next_command_time() + 1);
        EXPECT_EQ(c.bound_mismatches(), 0u) << name << " " << scheduler_name(sch) << " "
                                            << policy_name(pp);
        EXPECT_GT(c.refreshes(), 10u) << name;
        EXPECT_EQ(c.checker().total_violations(), 0u) << name;
        EXPECT_EQ(c.completions().size(), tag) << name;
      }
  }
}
