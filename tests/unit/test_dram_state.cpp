// DRAM core state layout (pure C++): the timing checker's 32-bit per-command counters carry
// into their high words exactly, its 32-bit timings reject a value that does not fit, and a
// bank's request queue (a list through the channel's request pool) keeps arrival order when
// FR-FCFS serves row hits from its middle and its end. Preset GDDR5 Titan X (tCK 571 ps).
// The checker's per-command path (record_issue) counts every rule's violations and binding
// as a reference of the rules does, on every preset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
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

namespace {

// An independent reference of the checker's rules, written from the rule list in
// timing_checker.h (JEDEC rule set; one bus or separate row / column buses): per command the
// rules in their binding order, each as (rule, lower bound); history "never" = no bound.
// Kept as plain per-command lists over a straightforward history, not as the checker's
// incremental structure.
struct reference_checker {
  static constexpr std::int64_t none = INT64_MIN / 2;
  const dram_spec s;
  struct bank { std::int64_t act = none, pre = none, rd = none, wr = none; bool open = false; };
  std::vector<bank> banks;
  std::vector<std::int64_t> group_act, group_col;
  std::vector<std::int64_t> acts;  // issue times of all ACTs, in issue order
  std::int64_t last_act = none, last_col = none, last_rd = none, last_wr = none;
  std::int64_t last_pre_any = none, last_ref = none, last_row_cmd = none, last_col_cmd = none;
  std::int64_t data_free = none;
  std::uint64_t violations[rule_count] = {}, binding[rule_count] = {}, commands[5] = {};

  explicit reference_checker(const dram_spec& spec)
      : s(spec), banks(spec.banks()), group_act(spec.bank_groups, none),
        group_col(spec.bank_groups, none) {}
  std::int64_t p(unsigned cycles) const { return static_cast<std::int64_t>(s.ps(cycles)); }
  static std::int64_t plus(std::int64_t h, std::int64_t d) { return h == none ? none : h + d; }

  std::vector<std::pair<rule, std::int64_t>> rules(command c, unsigned bg, unsigned b) const {
    const bank& k = banks[bg * s.banks_per_group + b];
    const auto& t = s.t;
    const std::int64_t burst = static_cast<std::int64_t>(s.burst_ps()), ck = p(1);
    const bool col = c == command::RD || c == command::WR;
    const std::int64_t bus = s.dual_command_bus ? (col ? last_col_cmd : last_row_cmd)
                                                : std::max(last_row_cmd, last_col_cmd);
    std::vector<std::pair<rule, std::int64_t>> v = {{rule::cmd_bus, plus(bus, ck)},
                                                    {rule::tRFC, plus(last_ref, p(t.tRFC))}};
    switch (c) {
      case command::ACT:
        v.push_back({rule::tRP, plus(k.pre, p(t.tRP))});
        v.push_back({rule::tRC, plus(k.act, p(t.tRC))});
        v.push_back({rule::tRRD_L, plus(group_act[bg], p(t.tRRD_L))});
        v.push_back({rule::tRRD_S, plus(last_act, p(t.tRRD_S))});
        v.push_back({rule::tFAW, acts.size() >= 4 ? acts[acts.size() - 4] + p(t.tFAW) : none});
        break;
      case command::PRE:
        v.push_back({rule::tRAS, plus(k.act, p(t.tRAS))});
        v.push_back({rule::tRTP, plus(k.rd, p(t.tRTP))});
        v.push_back({rule::tWR, plus(k.wr, p(t.tWL) + burst + p(t.tWR))});
        break;
      case command::RD:
      case command::WR:
        v.push_back({rule::tRCD, plus(k.act, p(t.tRCD))});
        v.push_back({rule::tCCD_L, plus(group_col[bg], p(t.tCCD_L))});
        v.push_back({rule::tCCD_S, plus(last_col, p(t.tCCD_S))});
        if (c == command::RD) {
          v.push_back({rule::tWTR, plus(last_wr, p(t.tWL) + burst + p(t.tWTR))});
          v.push_back({rule::burst, plus(data_free, -p(t.tCL))});
        } else {
          v.push_back({rule::tRTW, plus(last_rd, p(t.tRTW))});
          v.push_back({rule::burst, plus(data_free, -p(t.tWL))});
        }
        break;
      case command::REF:
        v.push_back({rule::tRP, plus(last_pre_any, p(t.tRP))});
        v.push_back({rule::tRC, plus(last_act, p(t.tRC))});
        break;
    }
    return v;
  }
  // Earliest time >= not_before (the maximum) and the first rule reaching it.
  std::pair<std::int64_t, rule> earliest(command c, unsigned bg, unsigned b,
                                         std::int64_t not_before) const {
    std::int64_t m = not_before;
    for (const auto& [r, lb] : rules(c, bg, b)) m = std::max(m, lb);
    if (m == not_before) return {m, rule::arrival};
    for (const auto& [r, lb] : rules(c, bg, b))
      if (lb == m) return {m, r};
    return {m, rule::arrival};  // (unreachable)
  }
  unsigned record_issue(command c, unsigned bg, unsigned b, std::int64_t t,
                        std::int64_t not_before) {
    unsigned bad = 0;
    for (const auto& [r, lb] : rules(c, bg, b))
      if (t < lb) ++violations[static_cast<int>(r)], ++bad;
    ++binding[static_cast<int>(earliest(c, bg, b, not_before).second)];
    ++commands[static_cast<int>(c)];
    bank& k = banks[bg * s.banks_per_group + b];
    auto state = [&](bool wrong) {
      if (wrong) ++violations[static_cast<int>(rule::state)], ++bad;
    };
    switch (c) {
      case command::ACT:
        state(k.open);
        k.open = true;
        k.act = group_act[bg] = last_act = last_row_cmd = t;
        acts.push_back(t);
        break;
      case command::PRE:
        state(!k.open);
        k.open = false;
        k.pre = last_row_cmd = t;
        last_pre_any = std::max(last_pre_any, t);
        break;
      case command::RD:
      case command::WR:
        state(!k.open);
        (c == command::RD ? k.rd : k.wr) = t;
        (c == command::RD ? last_rd : last_wr) = t;
        group_col[bg] = last_col = last_col_cmd = t;
        data_free = t + (c == command::RD ? p(s.t.tCL) : p(s.t.tWL)) +
                    static_cast<std::int64_t>(s.burst_ps());
        break;
      case command::REF: {
        bool any_open = false;
        for (const auto& x : banks) any_open = any_open || x.open;
        state(any_open);
        last_ref = last_row_cmd = t;
        break;
      }
    }
    return bad;
  }
};

}  // namespace

// record_issue() (the scheduler's path: one pass for the binding rule, the violated rules
// counted one by one only when the command is early) against the reference above, on every
// preset (one and two command buses): random commands to random banks of two bank groups, at
// the reference's earliest time (legal, the binding rule counted), before it (violations) or
// after it; the returned count, every rule's violations and binding count and the per-command
// counts must equal the reference's after every command. Every rule the checker enforces
// except tREFI (CountsALateRefresh) must be violated at least once on every preset, so
// that each is exercised (and bind at least once on some preset). (Times stay far below
// 9 x tREFI: no tREFI violation.)
TEST(TimingChecker, RecordIssueCountsEqualAReferenceOfTheRules) {
  const rule enforced[] = {rule::cmd_bus, rule::tRCD, rule::tRP, rule::tRAS, rule::tRC,
                           rule::tCCD_S, rule::tCCD_L, rule::tRRD_S, rule::tRRD_L, rule::tFAW,
                           rule::tWTR, rule::tRTW, rule::tRTP, rule::tWR, rule::burst,
                           rule::tRFC, rule::state};
  // (A rule may never bind on a preset where another one always reaches its bound first,
  // e.g. HBM's burst after tCCD_S = burst: each must bind on some preset.)
  std::uint64_t bound_somewhere[rule_count] = {};
  for (const auto& name : preset_names()) {
    dram_spec s = preset(name);
    s.bank_groups = 2;  // few banks: tRRD_L, tCCD_L and tFAW bind and are violated often
    timing_checker k(s);
    reference_checker ref(s);
    std::mt19937_64 rng(3);
    std::int64_t now = 0;
    for (int i = 0; i < 40000; ++i) {
      const command c = static_cast<command>(rng() % 16 == 0 ? 4 : rng() % 4);
      const unsigned bg = static_cast<unsigned>(rng() % s.bank_groups);
      const unsigned b = static_cast<unsigned>(rng() % s.banks_per_group);
      const std::int64_t not_before = now + static_cast<std::int64_t>(rng() % (4 * s.tCK_ps));
      const std::int64_t e = ref.earliest(c, bg, b, not_before).first;
      std::int64_t t = e;
      const unsigned how = static_cast<unsigned>(rng() % 8);
      if (how == 0) t = e - 1 - static_cast<std::int64_t>(rng() % (30 * s.tCK_ps));  // early
      if (how == 1) t = e + static_cast<std::int64_t>(rng() % (30 * s.tCK_ps));      // late
      t = std::max<std::int64_t>(t, 0);
      const unsigned want = ref.record_issue(c, bg, b, t, not_before);
      ASSERT_EQ(k.record_issue(c, bg, b, static_cast<ps_t>(t), static_cast<ps_t>(not_before)),
                want)
          << name << " command " << i;
      for (std::size_t r = 0; r < rule_count; ++r) {
        ASSERT_EQ(k.violations(static_cast<rule>(r)), ref.violations[r])
            << name << " command " << i << " rule " << rule_name(static_cast<rule>(r));
        ASSERT_EQ(k.binding(static_cast<rule>(r)), ref.binding[r])
            << name << " command " << i << " rule " << rule_name(static_cast<rule>(r));
      }
      for (int cmd = 0; cmd < 5; ++cmd)
        ASSERT_EQ(k.commands(static_cast<command>(cmd)), ref.commands[cmd]) << name;
      now = std::max(now, t);
    }
    for (rule r : enforced) {
      EXPECT_GT(ref.violations[static_cast<int>(r)], 0u) << name << " " << rule_name(r);
      bound_somewhere[static_cast<int>(r)] += ref.binding[static_cast<int>(r)];
    }
    EXPECT_EQ(k.violations(rule::tREFI), 0u) << name;
  }
  for (rule r : enforced) {
    if (r == rule::state) continue;  // (not a lower bound: never binds)
    EXPECT_GT(bound_somewhere[static_cast<int>(r)], 0u) << rule_name(r);
  }
}
