// Timing checker of one DRAM channel: the command rules of the JEDEC standards the presets
// use (GDDR5 JESD212C, GDDR5X JESD232A, HBM2 JESD235A, HBM3 JESD238 share this rule set; the
// values differ per preset, and HBM's separate row/column command buses are a spec flag).
// Pure C++.
//
// earliest(cmd, ...) gives the earliest legal issue time of a command and the rule that binds
// it (the controller issues commands there: enforcement); record(cmd, ..., t) re-checks every
// rule for the issued command one by one and counts violations per rule (must stay zero), then
// updates the history. binding(rule) counts how often each rule set a command's time.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "tlm/core/units.h"
#include "tlm/memory/dram/dram_spec.h"

namespace cdma::dram {

enum class command : std::uint8_t { ACT, PRE, RD, WR, REF };
const char* command_name(command c);

enum class rule : std::uint8_t {
  arrival,   ///< not before the request reached the channel (not a DRAM rule)
  cmd_bus,   ///< one command per tCK on the (row or column) command bus
  tRCD, tRP, tRAS, tRC, tCCD_S, tCCD_L, tRRD_S, tRRD_L, tFAW, tWTR, tRTW, tRTP, tWR,
  burst,     ///< data bus: a burst (BL beats, CL/WL after its command) may not overlap the last
  tRFC,      ///< REF -> any command
  state,     ///< bank state: ACT to an open bank, RD/WR to a closed bank, REF with open banks
  /// Refresh deadline (an upper bound, never a binding rule): more than 8 all-bank REFs
  /// postponed, i.e. an interval longer than 9 x tREFI between two REFs, or from time 0 to
  /// the first REF, or from the last REF to the time the statistics are read
  /// (check_refresh()). The JEDEC DRAM standards let a controller postpone at most 8 REFs
  /// ("at no point in time more than a total of 8 Refresh commands are allowed to be
  /// postponed ... the resulting maximum interval between the surrounding Refresh commands
  /// is limited to 9 x tREFI": the Refresh Command section of JESD79-3 DDR3, reproduced in
  /// the vendors' datasheets; HBM controllers apply the same allowance to REFab, e.g. AMD
  /// PG313 "Refresh", all-bank refresh with deficit mode: "refreshes can be skipped up to
  /// eight times"). One violation per overlong interval. Off when the spec's tREFI is 0.
  tREFI,
  count_
};
constexpr std::size_t rule_count = static_cast<std::size_t>(rule::count_);
const char* rule_name(rule r);

/// The state a command scheduler keeps per bank (its bank machine: open row, request queue),
/// stored by the timing checker beside the bank's timing history, in the same cache line, so
/// that a command to a bank whose state is not in the cache costs one line, not two
/// (timing_checker::sched()). The checker itself never reads it.
struct bank_sched {
  static constexpr std::uint32_t none = ~std::uint32_t{0};
  std::uint64_t open_row = 0;
  std::uint32_t head = none;  ///< oldest queued request (the scheduler's slot), none: empty
  std::uint32_t tail = none;  ///< youngest queued request
  std::uint32_t hit = none;   ///< oldest queued request to the open row
  bool open = false;          ///< a row is open (as the scheduler sees it)
};

class timing_checker {
public:
  explicit timing_checker(const dram_spec& spec);

  /// A bank as a scheduler addresses it: its bank group and its flat index (bank group x
  /// banks per group + bank), both of which the checker's per-bank and per-group state is
  /// indexed by (a scheduler that keeps the flat index passes both, and the checker need not
  /// recompute either). at() makes one from (bank group, bank).
  struct bank_at {
    unsigned group;
    unsigned flat;
  };
  bank_at at(unsigned bank_group, unsigned bank) const {
    return {bank_group, static_cast<unsigned>(idx(bank_group, bank))};
  }

  struct bound { ps_t time; rule binding; };
  /// Earliest legal time >= `not_before` for `cmd` on (bank_group, bank); REF ignores them.
  bound earliest(command cmd, unsigned bank_group, unsigned bank, ps_t not_before) const;
  /// Fast form of earliest() for schedulers (no binding rule): the channel-wide bounds of
  /// ACT, PRE, RD, WR (index = command) computed once, then combined per bank.
  struct channel_bounds { ps_t b[4]; };
  channel_bounds channel_wide() const;
  /// Updates `cb` (channel_wide() before the last record()/record_issue() of `cmd`, issued at
  /// `t`) to the present channel_wide(), from the terms `cmd` changed only: every term of
  /// channel_wide() is a time of the history plus a timing, and in a sequence without
  /// violations each rises or stays as commands are recorded (commands in time order; the
  /// oldest of the last four ACTs; the data bus frees later after every burst), so cb =
  /// max(cb, changed terms) equals the recomputation (tested against channel_wide() in the
  /// scheduler's self-check). Every term a command changes is `t` plus a timing (the command
  /// bus: t + tCK, as no recorded command is later than t; tCCD_S: t + tCCD_S; the data bus:
  /// t + CL/WL + burst - CL/WL; tRTW, tWTR, tRRD_S, tRFC likewise), except the tFAW term
  /// (the oldest of the last four ACTs), so per command and bound one precomputed offset
  /// (raise_off_) and no history load; the bounds of the command's own class (ACT, PRE; RD,
  /// WR) become that term without a max, as the command was legal (all their old terms <= t).
  /// (Inline: called once per issued command.)
  void raise_channel_wide(channel_bounds& cb, command cmd, ps_t t) const;
  template <command C> void raise_channel_wide_as(channel_bounds& cb, ps_t t) const;
  ps_t earliest_fast(const channel_bounds& cb, command cmd, unsigned bank_group, unsigned bank,
                     ps_t not_before) const {
    return std::max(cb.b[static_cast<std::size_t>(cmd)],
                    bank_local(cmd, bank_group, bank, not_before));
  }
  /// The bank and bank-group part of earliest_fast() (changes only when a command is issued
  /// to that bank or, for tRRD_L / tCCD_L, to its bank group), max'ed with `not_before`.
  /// (Inline: called for every candidate the scheduler recomputes.)
  ps_t bank_local(command cmd, unsigned bank_group, unsigned bank, ps_t not_before) const {
    return bank_local(cmd, at(bank_group, bank), not_before);
  }
  ps_t bank_local(command cmd, bank_at a, ps_t not_before) const {
    switch (cmd) {
      case command::ACT: return bank_local_as<command::ACT>(a, not_before);
      case command::PRE: return bank_local_as<command::PRE>(a, not_before);
      default: return bank_local_as<command::RD>(a, not_before);  // RD, WR (same rules)
    }
  }
  /// bank_local() for a command known at compile time (ACT, PRE, RD, WR).
  template <command C> ps_t bank_local_as(bank_at a, ps_t not_before) const {
    static_assert(C != command::REF, "REF has no bank-local rules");
    const bank_hist& bk = bank_[a.flat];
    const group_hist& gr = group_[a.group];
    st t;
    if constexpr (C == command::ACT)
      t = std::max({bk.pre + tRP_, bk.act + tRC_, gr.act + tRRD_L_});
    else if constexpr (C == command::PRE)
      t = std::max({bk.act + tRAS_, bk.rd + tRTP_, bk.wr + tWL_ + burst_ + tWR_});
    else
      t = std::max(bk.act + tRCD_, gr.col + tCCD_L_);
    // (not_before < 2^63: the signed maximum is the unsigned one, and a negative t, a history
    // of `never`, is below it.)
    return static_cast<ps_t>(std::max(t, static_cast<st>(not_before)));
  }
  /// Records `cmd` issued at `t`, counting every violated rule; `binding` is the rule that set
  /// t (counted in binding()). Returns the number of rules violated (0 when legal).
  unsigned record(command cmd, unsigned bank_group, unsigned bank, ps_t t,
                  rule binding = rule::arrival);
  /// record() for a command a scheduler issued at its earliest time >= `not_before`: one pass
  /// over the rules both counts the violated ones and finds the binding rule (the rule
  /// earliest(cmd, bank_group, bank, not_before) would name), so the scheduler need not ask
  /// earliest() for it.
  unsigned record_issue(command cmd, unsigned bank_group, unsigned bank, ps_t t,
                        ps_t not_before);
  /// record_issue() for a command known at compile time (a scheduler that dispatches once on
  /// the command and then runs straight-line code for it: no second branch on the command).
  template <command C> unsigned record_issue_as(bank_at a, ps_t t, ps_t not_before);

  /// Records `n` all-bank refreshes of an idle channel at first, first + period, ...,
  /// first + (n - 1) * period with no other command in between: the same counts, history and
  /// REF times as n calls of record_issue(REF, 0, 0, t, t), in O(1) (plus the kept REF times).
  /// Only when that is exact: no bank open, the first REF not held up by any rule
  /// (earliest(REF, first) == first) and tRFC, tCK shorter than `period`, so no REF holds up
  /// the next; otherwise records nothing and returns false.
  bool record_idle_refreshes(ps_t first, ps_t period, std::uint64_t n);

  /// The tREFI rule at time `now` (e.g. when the statistics are read): counts one
  /// violation if more than 9 x tREFI have passed since the last REF (or since time 0 when
  /// there was none) and that interval was not counted yet (a later REF closing it is then
  /// not counted again). Returns the violations counted (0 or 1). Off when tREFI is 0.
  unsigned check_refresh(ps_t now);
  /// Longest legal interval between two REFs (9 x tREFI, ps; 0: no refresh rule).
  ps_t refresh_deadline_ps() const { return static_cast<ps_t>(ref_limit_); }

  bool bank_open(unsigned bank_group, unsigned bank) const { return bank_[idx(bank_group, bank)].open; }
  /// The scheduler's state of bank `flat` (= bank_group x banks_per_group + bank).
  bank_sched& sched(unsigned flat) { return bank_[flat].sched; }
  const bank_sched& sched(unsigned flat) const { return bank_[flat].sched; }
  unsigned open_banks() const { return open_banks_; }

  std::uint64_t violations(rule r) const { return violations_[static_cast<std::size_t>(r)]; }
  std::uint64_t total_violations() const;
  std::uint64_t binding(rule r) const { return count(kBinding + static_cast<std::size_t>(r)); }
  std::uint64_t commands(command c) const { return count(static_cast<std::size_t>(c)); }
  /// Issue times of the REF commands (kept for the first `keep_refresh_times` REFs).
  const std::vector<ps_t>& refresh_times() const { return ref_times_; }
  static constexpr std::size_t keep_refresh_times = 4096;
  /// End of the data-bus occupancy of the last burst (ps).
  ps_t data_bus_free() const { return to_ps(data_free_); }
  /// Sum of data-bus busy time (ps): bursts x burst_ps.
  ps_t data_busy_ps() const { return data_busy_; }

private:
  using st = std::int64_t;  // signed ps; `never` for "no such command yet"
  static constexpr st never = INT64_MIN / 4;
  /// (One cache line per bank: a command reads and writes its bank's entry, and the
  /// scheduler's state of the bank is in the same line.)
  struct alignas(64) bank_hist {
    st act = never, pre = never, rd = never, wr = never;
    bank_sched sched;
    bool open = false;
  };
  struct group_hist { st act = never, col = never; };
  std::size_t idx(unsigned bg, unsigned b) const { return bg * bpg_ + b; }
  /// Per-command counters (commands per command, then binding rules): 32-bit in the state
  /// every command touches (count_lo_), the carries out of them in count_hi_ (cold).
  static constexpr std::size_t kBinding = 5;  ///< index of binding(rule 0) in the counters
  static constexpr std::size_t kCounters = kBinding + rule_count;
  void bump(std::size_t i) {
    if (++count_lo_[i] == 0) ++count_hi_[i];
  }
  void add(std::size_t i, std::uint64_t n) {
    const std::uint64_t v = count(i) + n;
    count_lo_[i] = static_cast<std::uint32_t>(v);
    count_hi_[i] = static_cast<std::uint32_t>(v >> 32);
  }
  std::uint64_t count(std::size_t i) const {
    return (static_cast<std::uint64_t>(count_hi_[i]) << 32) | count_lo_[i];
  }
  static ps_t to_ps(st t) { return t < 0 ? 0 : static_cast<ps_t>(t); }

  /// Calls f(rule, lower bound) for each rule of `cmd`, in the binding order (the first rule
  /// reaching the maximum binds).
  template <class F> void for_each_bound(command cmd, unsigned bg, unsigned b, F&& f) const;
  template <command C, class F> void for_each_bound_as(bank_at a, F&& f) const;
  /// earliest() for a command known at compile time.
  template <command C> bound earliest_as(bank_at a, ps_t not_before) const;
  /// Updates the history (and the state-rule violations) for `cmd` issued at `t`; returns
  /// the number of state violations.
  unsigned apply(command cmd, unsigned bg, unsigned b, st t, ps_t tp);
  template <command C> unsigned apply_as(bank_at a, st t, ps_t tp);
  /// Checks every rule for `cmd` at `t` one by one and counts the violated ones (out of line:
  /// only reached when a command is issued before its earliest legal time).
  unsigned count_violations(command cmd, bank_at a, st t);

  // Layout: the state every command reads or writes comes first and together (the bank
  // organisation, 32-bit timings and raise offsets, channel history and the 32-bit
  // per-command counters: 420 bytes; a command reads one 16-byte row of the offsets), so
  // that a command to a channel whose state is not in the L1 cache (160 HBM3
  // pseudo-channels, random traffic) touches few lines; the rest (the counters' carries,
  // violation counters, the kept REF times) after it.
  std::vector<bank_hist> bank_;
  std::vector<group_hist> group_;
  unsigned bpg_;                ///< spec_.banks_per_group
  bool dual_;                   ///< dual_
  std::uint8_t faw_pos_ = 0;
  unsigned open_banks_ = 0;
  // Timings in ps (32-bit: every timing is far below 2^31 ps = 2 ms; checked when built).
  using tt = std::int32_t;
  tt tRCD_, tRP_, tRAS_, tRC_, tCCD_S_, tCCD_L_, tRRD_S_, tRRD_L_, tFAW_, tWTR_, tRTW_, tCL_,
      tWL_, tRTP_, tWR_, tRFC_, tCK_, burst_;
  /// raise_channel_wide(): per command (index) and bound of channel_bounds (ACT, PRE, RD, WR)
  /// the offset from the command's time of the largest term it changed, or kNoRaise (no term
  /// of that bound changed; the ACT bound's tFAW term is added apart). Set in the constructor.
  static constexpr tt kNoRaise = -1;
  tt raise_off_[5][4];
  std::array<st, 4> faw_{never, never, never, never};  // last four ACTs, ring
  st last_act_ = never, last_col_ = never, last_rd_ = never, last_wr_ = never;
  st last_pre_any_ = never, last_ref_ = never, last_row_cmd_ = never, last_col_cmd_ = never;
  st data_free_ = never;
  ps_t data_busy_ = 0;
  std::array<std::uint32_t, kCounters> count_lo_{};
  std::array<std::uint32_t, kCounters> count_hi_{};
  std::array<std::uint64_t, rule_count> violations_{};
  std::vector<ps_t> ref_times_;
  st ref_limit_ = 0;            ///< 9 x tREFI (ps); 0: no tREFI rule
  bool ref_late_counted_ = false;  ///< the interval since the last REF was counted late
  /// The tREFI rule for a REF at `t` (cold: one REF per tREFI); returns the violations.
  unsigned check_ref_interval(st t);
};

/// Calls f(std::integral_constant<command, C>{}) for the command C = `cmd`: the one branch on
/// a command known only at run time, after which the code for C is straight-line.
template <class F>
__attribute__((always_inline)) inline decltype(auto) dispatch_command(command cmd, F&& f) {
  using A = std::integral_constant<command, command::ACT>;
  using P = std::integral_constant<command, command::PRE>;
  using R = std::integral_constant<command, command::RD>;
  using W = std::integral_constant<command, command::WR>;
  using F5 = std::integral_constant<command, command::REF>;
  switch (cmd) {
    case command::ACT: return f(A{});
    case command::PRE: return f(P{});
    case command::RD: return f(R{});
    case command::WR: return f(W{});
    default: return f(F5{});  // command::REF
  }
}

template <command C>
__attribute__((always_inline)) inline void timing_checker::raise_channel_wide_as(
    channel_bounds& cb, ps_t t) const {
  constexpr std::size_t ci = static_cast<std::size_t>(C);
  auto up = [&](std::size_t i) {  // bound i = max(bound i, t + offset): all values positive
    const ps_t v = t + static_cast<ps_t>(raise_off_[ci][i]);
    cb.b[i] = v > cb.b[i] ? v : cb.b[i];
  };
  // The bounds of the commands of C's own class (ACT and PRE; RD and WR) need no max: C was
  // legal at t, so every term of its own bound was <= t, and so was every term of the other
  // bound of its class (the same command bus and tRFC; after RD, WR's tRTW from an earlier RD
  // <= t + tRTW and its data-bus term data_free - WL <= t + CL - WL, as RD's data-bus term
  // data_free - CL <= t; after WR, RD's likewise; after ACT, PRE's bound has no other term;
  // after PRE, ACT's has tRRD_S and tFAW: a max), all below t + the offset.
  auto set = [&](std::size_t i) { cb.b[i] = t + static_cast<ps_t>(raise_off_[ci][i]); };
  // Which bounds a command can change is known from the command, but for the command bus:
  // with one bus (!dual_) a row command also raises the column commands' bounds and a column
  // command the row commands' (a branch on a per-channel constant).
  if constexpr (C == command::REF) {
    up(0), up(1), up(2), up(3);
  } else if constexpr (C == command::ACT) {
    // tFAW: the oldest of the last four ACTs (may be never: negative).
    const st f = faw_[faw_pos_] + tFAW_;
    const ps_t v = t + static_cast<ps_t>(raise_off_[ci][0]);
    cb.b[0] = f > static_cast<st>(v) ? static_cast<ps_t>(f) : v;
    set(1);
    if (!dual_) up(2), up(3);
  } else if constexpr (C == command::PRE) {
    up(0), set(1);
    if (!dual_) up(2), up(3);
  } else {
    if (!dual_) up(0), up(1);
    set(2), set(3);
  }
}

inline void timing_checker::raise_channel_wide(channel_bounds& cb, command cmd, ps_t t) const {
  dispatch_command(cmd, [&](auto c) { raise_channel_wide_as<decltype(c)::value>(cb, t); });
}

// (Inline: record_issue() is called once per issued command by channel::advance().)
template <command C, class F>
__attribute__((always_inline)) inline void timing_checker::for_each_bound_as(bank_at a,
                                                                            F&& f) const {
  const bank_hist& bk = bank_[a.flat];
  const group_hist& gr = group_[a.group];
  // The command bus: the row bus for ACT, PRE, REF, the column bus for RD, WR (one bus for
  // both unless dual_). The rules in this order: cmd_bus, tRFC, then the command's own (the
  // first rule reaching the maximum binds).
  constexpr bool col = C == command::RD || C == command::WR;
  const st own = col ? last_col_cmd_ : last_row_cmd_;
  const st bus = (dual_ ? own : std::max(last_row_cmd_, last_col_cmd_)) + tCK_;
  f(rule::cmd_bus, bus);
  f(rule::tRFC, last_ref_ + tRFC_);
  if constexpr (C == command::ACT) {
    f(rule::tRP, bk.pre + tRP_);
    f(rule::tRC, bk.act + tRC_);
    f(rule::tRRD_L, gr.act + tRRD_L_);
    f(rule::tRRD_S, last_act_ + tRRD_S_);
    f(rule::tFAW, faw_[faw_pos_] + tFAW_);  // the oldest of the last four ACTs
  } else if constexpr (C == command::PRE) {
    f(rule::tRAS, bk.act + tRAS_);
    f(rule::tRTP, bk.rd + tRTP_);
    f(rule::tWR, bk.wr + tWL_ + burst_ + tWR_);
  } else if constexpr (col) {
    f(rule::tRCD, bk.act + tRCD_);
    f(rule::tCCD_L, gr.col + tCCD_L_);
    f(rule::tCCD_S, last_col_ + tCCD_S_);
    if constexpr (C == command::RD) {
      f(rule::tWTR, last_wr_ + tWL_ + burst_ + tWTR_);
      f(rule::burst, data_free_ - tCL_);
    } else {
      f(rule::tRTW, last_rd_ + tRTW_);
      f(rule::burst, data_free_ - tWL_);
    }
  } else {  // REF
    f(rule::tRP, last_pre_any_ + tRP_);
    f(rule::tRC, last_act_ + tRC_);
  }
}

template <class F>
inline void timing_checker::for_each_bound(command cmd, unsigned bg, unsigned b, F&& f) const {
  dispatch_command(cmd, [&](auto c) { for_each_bound_as<decltype(c)::value>(at(bg, b), f); });
}

template <command C>
__attribute__((always_inline)) inline unsigned timing_checker::apply_as(bank_at a, st t,
                                                                       ps_t tp) {
  unsigned bad = 0;
  bank_hist& bk = bank_[a.flat];
  group_hist& gr = group_[a.group];
  auto state_error = [&] {
    ++violations_[static_cast<std::size_t>(rule::state)];
    ++bad;
  };
  bump(static_cast<std::size_t>(C));
  if constexpr (C == command::ACT) {
    if (bk.open) state_error();
    bk.act = t;
    if (!bk.open) ++open_banks_;
    bk.open = true;
    gr.act = t;
    last_act_ = t;
    faw_[faw_pos_] = t;
    faw_pos_ = static_cast<std::uint8_t>((faw_pos_ + 1) % 4);
    last_row_cmd_ = t;
  } else if constexpr (C == command::PRE) {
    if (!bk.open) state_error();
    else --open_banks_;
    bk.open = false;
    bk.pre = t;
    last_pre_any_ = std::max(last_pre_any_, t);
    last_row_cmd_ = t;
  } else if constexpr (C == command::RD || C == command::WR) {
    constexpr bool rd = C == command::RD;
    if (!bk.open) state_error();
    data_free_ = t + (rd ? tCL_ : tWL_) + burst_;
    data_busy_ += static_cast<ps_t>(burst_);
    (rd ? bk.rd : bk.wr) = t;
    (rd ? last_rd_ : last_wr_) = t;
    gr.col = t;
    last_col_ = t;
    last_col_cmd_ = t;
  } else {  // REF
    if (open_banks_ != 0) state_error();
    bad += check_ref_interval(t);
    last_ref_ = t;
    last_row_cmd_ = t;
    if (ref_times_.size() < keep_refresh_times) ref_times_.push_back(tp);
  }
  return bad;
}

inline unsigned timing_checker::apply(command cmd, unsigned bg, unsigned b, st t, ps_t tp) {
  return dispatch_command(cmd,
                          [&](auto c) { return apply_as<decltype(c)::value>(at(bg, b), t, tp); });
}

template <command C>
__attribute__((always_inline)) inline timing_checker::bound timing_checker::earliest_as(
    bank_at a, ps_t not_before) const {
  st best = static_cast<st>(not_before);
  rule why = rule::arrival;
  for_each_bound_as<C>(a, [&](rule r, st t) {  // (selects: no data-dependent branch)
    const bool later = t > best;
    why = later ? r : why;
    best = later ? t : best;
  });
  return {static_cast<ps_t>(best), why};
}

inline timing_checker::bound timing_checker::earliest(command cmd, unsigned bg, unsigned b,
                                                      ps_t not_before) const {
  return dispatch_command(
      cmd, [&](auto c) { return earliest_as<decltype(c)::value>(at(bg, b), not_before); });
}

template <command C>
__attribute__((always_inline)) inline unsigned timing_checker::record_issue_as(
    bank_at a, ps_t tp, ps_t not_before) {
  const st t = static_cast<st>(tp);
  // One pass: the binding rule (the first rule reaching the maximum) and the maximum of
  // every rule's bound and not_before. t at or after that maximum violates no rule; only
  // otherwise are the rules checked one by one and the violated ones counted.
  const bound e = earliest_as<C>(a, not_before);
  const unsigned bad = t < static_cast<st>(e.time) ? count_violations(C, a, t) : 0;
  bump(kBinding + static_cast<std::size_t>(e.binding));
  return bad + apply_as<C>(a, t, tp);
}

inline unsigned timing_checker::record_issue(command cmd, unsigned bg, unsigned b, ps_t tp,
                                             ps_t not_before) {
  return dispatch_command(
      cmd, [&](auto c) { return record_issue_as<decltype(c)::value>(at(bg, b), tp, not_before); });
}

}  // namespace cdma::dram
