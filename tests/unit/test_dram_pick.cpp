// The FR-FCFS pick (one pass over the banks' candidate arrays, AVX2 when the processor has
// it) and the incrementally kept bounds, checked against the scalar reference scan over all
// banks and the recomputed bounds (channel::set_check_pick). Pure C++.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tlm/memory/dram/channel.h"
#include "tlm/memory/dram/dram_spec.h"

using namespace cdma;
using namespace cdma::dram;

// Every pick of the FR-FCFS scheduler equals the reference scan over all banks
// (same command, bank, time, and the same completion bound), for every preset and page
// policy, under random mixed traffic: reads and writes of 1 to 8 bursts, few rows per bank
// (row hits and conflicts), bursts of arrivals and idle gaps, advances at random times.
// Also two bank organisations that are not 16 banks (6 = 3 x 2: padded lanes in the
// vectorised pick; 72 = 8 x 9: more than 64 banks), on the GDDR5 timings.
TEST(Channel, ListPickEqualsReferenceScan) {
  std::vector<std::pair<std::string, dram_spec>> specs;
  for (const auto& name : preset_names()) specs.emplace_back(name, preset(name));
  for (auto [bg, bpg] : {std::pair<unsigned, unsigned>{3, 2}, {8, 9}}) {
    dram_spec o = preset("gddr5_titanx");
    o.bank_groups = bg;
    o.banks_per_group = bpg;
    specs.emplace_back("gddr5_titanx " + std::to_string(bg) + "x" + std::to_string(bpg), o);
  }
  for (const auto& [name, s] : specs) {
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
      EXPECT_EQ(c.local_mismatches(), 0u) << name << " " << policy_name(pp);
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
        EXPECT_EQ(c.local_mismatches(), 0u) << name << " " << scheduler_name(sch) << " "
                                            << policy_name(pp);
        EXPECT_GT(c.refreshes(), 10u) << name;
        EXPECT_EQ(c.checker().total_violations(), 0u) << name;
        EXPECT_EQ(c.completions().size(), tag) << name;
      }
  }
}
