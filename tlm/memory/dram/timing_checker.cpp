#include "tlm/memory/dram/timing_checker.h"

#include <algorithm>

namespace cdma::dram {

const char* command_name(command c) {
  switch (c) {
    case command::ACT: return "ACT";
    case command::PRE: return "PRE";
    case command::RD: return "RD";
    case command::WR: return "WR";
    case command::REF: return "REF";
  }
  return "?";
}

const char* rule_name(rule r) {
  static const char* names[rule_count] = {"arrival", "cmd_bus", "tRCD", "tRP", "tRAS", "tRC",
                                          "tCCD_S", "tCCD_L", "tRRD_S", "tRRD_L", "tFAW",
                                          "tWTR", "tRTW", "tRTP", "tWR", "burst", "tRFC", "state"};
  const auto i = static_cast<std::size_t>(r);
  return i < rule_count ? names[i] : "?";
}

timing_checker::timing_checker(const dram_spec& spec)
    : spec_(spec),
      tRCD_(static_cast<st>(spec.ps(spec.t.tRCD))), tRP_(static_cast<st>(spec.ps(spec.t.tRP))),
      tRAS_(static_cast<st>(spec.ps(spec.t.tRAS))), tRC_(static_cast<st>(spec.ps(spec.t.tRC))),
      tCCD_S_(static_cast<st>(spec.ps(spec.t.tCCD_S))),
      tCCD_L_(static_cast<st>(spec.ps(spec.t.tCCD_L))),
      tRRD_S_(static_cast<st>(spec.ps(spec.t.tRRD_S))),
      tRRD_L_(static_cast<st>(spec.ps(spec.t.tRRD_L))),
      tFAW_(static_cast<st>(spec.ps(spec.t.tFAW))), tWTR_(static_cast<st>(spec.ps(spec.t.tWTR))),
      tRTW_(static_cast<st>(spec.ps(spec.t.tRTW))), tCL_(static_cast<st>(spec.ps(spec.t.tCL))),
      tWL_(static_cast<st>(spec.ps(spec.t.tWL))), tRTP_(static_cast<st>(spec.ps(spec.t.tRTP))),
      tWR_(static_cast<st>(spec.ps(spec.t.tWR))), tRFC_(static_cast<st>(spec.ps(spec.t.tRFC))),
      tCK_(static_cast<st>(spec.tCK_ps)), burst_(static_cast<st>(spec.burst_ps())),
      bank_(spec.banks()), group_(spec.bank_groups) {}

template <class F>
void timing_checker::for_each_bound(command cmd, unsigned bg, unsigned b, F&& f) const {
  const bank_hist& bk = bank_[idx(bg, b)];
  const group_hist& gr = group_[bg];
  const bool row_cmd = cmd == command::ACT || cmd == command::PRE || cmd == command::REF;
  const st last_cmd = spec_.dual_command_bus
                          ? (row_cmd ? last_row_cmd_ : last_col_cmd_)
                          : std::max(last_row_cmd_, last_col_cmd_);
  f(rule::cmd_bus, last_cmd + tCK_);
  f(rule::tRFC, last_ref_ + tRFC_);
  switch (cmd) {
    case command::ACT:
      f(rule::tRP, bk.pre + tRP_);
      f(rule::tRC, bk.act + tRC_);
      f(rule::tRRD_L, gr.act + tRRD_L_);
      f(rule::tRRD_S, last_act_ + tRRD_S_);
      f(rule::tFAW, faw_[faw_pos_] + tFAW_);  // the oldest of the last four ACTs
      break;
    case command::PRE:
      f(rule::tRAS, bk.act + tRAS_);
      f(rule::tRTP, bk.rd + tRTP_);
      f(rule::tWR, bk.wr + tWL_ + burst_ + tWR_);
      break;
    case command::RD:
    case command::WR: {
      f(rule::tRCD, bk.act + tRCD_);
      f(rule::tCCD_L, gr.col + tCCD_L_);
      f(rule::tCCD_S, last_col_ + tCCD_S_);
      if (cmd == command::RD) {
        f(rule::tWTR, last_wr_ + tWL_ + burst_ + tWTR_);
        f(rule::burst, data_free_ - tCL_);
      } else {
        f(rule::tRTW, last_rd_ + tRTW_);
        f(rule::burst, data_free_ - tWL_);
      }
      break;
    }
    case command::REF:
      f(rule::tRP, last_pre_any_ + tRP_);
      f(rule::tRC, last_act_ + tRC_);
      break;
  }
}

timing_checker::bound timing_checker::earliest(command cmd, unsigned bg, unsigned b,
                                               ps_t not_before) const {
  st best = static_cast<st>(not_before);
  rule why = rule::arrival;
  for_each_bound(cmd, bg, b, [&](rule r, st t) {
    if (t > best) {
      best = t;
      why = r;
    }
  });
  return {static_cast<ps_t>(best), why};
}

timing_checker::channel_bounds timing_checker::channel_wide() const {
  channel_bounds cb;
  const st any = std::max(last_row_cmd_, last_col_cmd_);
  const st row_bus = (spec_.dual_command_bus ? last_row_cmd_ : any) + tCK_;
  const st col_bus = (spec_.dual_command_bus ? last_col_cmd_ : any) + tCK_;
  const st ref = last_ref_ + tRFC_;
  const st act = std::max({row_bus, ref, last_act_ + tRRD_S_, faw_[faw_pos_] + tFAW_});
  const st pre = std::max(row_bus, ref);
  const st col = std::max({col_bus, ref, last_col_ + tCCD_S_});
  const st rd = std::max({col, last_wr_ + tWL_ + burst_ + tWTR_, data_free_ - tCL_});
  const st wr = std::max({col, last_rd_ + tRTW_, data_free_ - tWL_});
  const st v[4] = {act, pre, rd, wr};
  for (int i = 0; i < 4; ++i) cb.b[i] = v[i] < 0 ? 0 : static_cast<ps_t>(v[i]);
  return cb;
}

unsigned timing_checker::record(command cmd, unsigned bg, unsigned b, ps_t tp, rule binding) {
  const st t = static_cast<st>(tp);
  unsigned bad = 0;
  for_each_bound(cmd, bg, b, [&](rule r, st lb) {
    if (t < lb) {
      ++violations_[static_cast<std::size_t>(r)];
      ++bad;
    }
  });
  ++binding_[static_cast<std::size_t>(binding)];
  return bad + apply(cmd, bg, b, t, tp);
}

unsigned timing_checker::record_issue(command cmd, unsigned bg, unsigned b, ps_t tp,
                                      ps_t not_before) {
  const st t = static_cast<st>(tp);
  st best = static_cast<st>(not_before);
  rule why = rule::arrival;
  // One pass: the binding rule (as earliest(): the first rule reaching the maximum) and the
  // maximum of every rule's bound and not_before. t at or after that maximum violates no
  // rule; only otherwise are the rules checked one by one and the violated ones counted.
  for_each_bound(cmd, bg, b, [&](rule r, st lb) {
    if (lb > best) {
      best = lb;
      why = r;
    }
  });
  unsigned bad = 0;
  if (t < best) {
    for_each_bound(cmd, bg, b, [&](rule r, st lb) {
      if (t < lb) {
        ++violations_[static_cast<std::size_t>(r)];
        ++bad;
      }
    });
  }
  ++binding_[static_cast<std::size_t>(why)];
  return bad + apply(cmd, bg, b, t, tp);
}

__attribute__((always_inline)) inline unsigned timing_checker::apply(command cmd, unsigned bg,
                                                                   unsigned b, st t, ps_t tp) {
  unsigned bad = 0;
  bank_hist& bk = bank_[idx(bg, b)];
  group_hist& gr = group_[bg];
  auto state_error = [&] {
    ++violations_[static_cast<std::size_t>(rule::state)];
    ++bad;
  };
  ++commands_[static_cast<std::size_t>(cmd)];
  switch (cmd) {
    case command::ACT:
      if (bk.open) state_error();
      bk.act = t;
      if (!bk.open) ++open_banks_;
      bk.open = true;
      gr.act = t;
      last_act_ = t;
      faw_[faw_pos_] = t;
      faw_pos_ = (faw_pos_ + 1) % 4;
      last_row_cmd_ = t;
      break;
    case command::PRE:
      if (!bk.open) state_error();
      else --open_banks_;
      bk.open = false;
      bk.pre = t;
      last_pre_any_ = std::max(last_pre_any_, t);
      last_row_cmd_ = t;
      break;
    case command::RD:
    case command::WR: {
      if (!bk.open) state_error();
      const st data_start = t + (cmd == command::RD ? tCL_ : tWL_);
      data_free_ = data_start + burst_;
      data_busy_ += static_cast<ps_t>(burst_);
      (cmd == command::RD ? bk.rd : bk.wr) = t;
      (cmd == command::RD ? last_rd_ : last_wr_) = t;
      gr.col = t;
      last_col_ = t;
      last_col_cmd_ = t;
      break;
    }
    case command::REF:
      if (open_banks_ != 0) state_error();
      last_ref_ = t;
      last_row_cmd_ = t;
      if (ref_times_.size() < keep_refresh_times) ref_times_.push_back(tp);
      break;
  }
  return bad;
}

bool timing_checker::record_idle_refreshes(ps_t first, ps_t period, std::uint64_t n) {
  if (n == 0) return true;
  if (open_banks_ != 0 || static_cast<st>(period) <= tRFC_ || static_cast<st>(period) <= tCK_ ||
      earliest(command::REF, 0, 0, first).time != first)
    return false;
  // Each REF k at first + k * period: no rule binds (the first checked above; then the
  // previous REF's tRFC / command-bus bounds end before the next), no violation.
  commands_[static_cast<std::size_t>(command::REF)] += n;
  binding_[static_cast<std::size_t>(rule::arrival)] += n;
  const ps_t last = first + (n - 1) * period;
  last_ref_ = static_cast<st>(last);
  last_row_cmd_ = static_cast<st>(last);
  for (std::uint64_t k = 0; k < n && ref_times_.size() < keep_refresh_times; ++k)
    ref_times_.push_back(first + k * period);
  return true;
}

std::uint64_t timing_checker::total_violations() const {
  std::uint64_t n = 0;
  for (auto v : violations_) n += v;
  return n;
}

}  // namespace cdma::dram
