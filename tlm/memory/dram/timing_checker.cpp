#include "tlm/memory/dram/timing_checker.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

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
                                          "tWTR", "tRTW", "tRTP", "tWR", "burst", "tRFC", "state", "tREFI"};
  const auto i = static_cast<std::size_t>(r);
  return i < rule_count ? names[i] : "?";
}

namespace {
// A timing in ps as the checker keeps it (32-bit); throws if it does not fit.
std::int32_t timing_ps(ps_t v, const char* name) {
  if (v > static_cast<ps_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument(std::string("timing_checker: ") + name + " = " +
                                std::to_string(v) + " ps does not fit 32 bits");
  return static_cast<std::int32_t>(v);
}
}  // namespace

timing_checker::timing_checker(const dram_spec& spec)
    : bank_(spec.banks()), group_(spec.bank_groups), bpg_(spec.banks_per_group),
      dual_(spec.dual_command_bus),
      tRCD_(timing_ps(spec.ps(spec.t.tRCD), "tRCD")), tRP_(timing_ps(spec.ps(spec.t.tRP), "tRP")),
      tRAS_(timing_ps(spec.ps(spec.t.tRAS), "tRAS")), tRC_(timing_ps(spec.ps(spec.t.tRC), "tRC")),
      tCCD_S_(timing_ps(spec.ps(spec.t.tCCD_S), "tCCD_S")),
      tCCD_L_(timing_ps(spec.ps(spec.t.tCCD_L), "tCCD_L")),
      tRRD_S_(timing_ps(spec.ps(spec.t.tRRD_S), "tRRD_S")),
      tRRD_L_(timing_ps(spec.ps(spec.t.tRRD_L), "tRRD_L")),
      tFAW_(timing_ps(spec.ps(spec.t.tFAW), "tFAW")),
      tWTR_(timing_ps(spec.ps(spec.t.tWTR), "tWTR")),
      tRTW_(timing_ps(spec.ps(spec.t.tRTW), "tRTW")), tCL_(timing_ps(spec.ps(spec.t.tCL), "tCL")),
      tWL_(timing_ps(spec.ps(spec.t.tWL), "tWL")), tRTP_(timing_ps(spec.ps(spec.t.tRTP), "tRTP")),
      tWR_(timing_ps(spec.ps(spec.t.tWR), "tWR")), tRFC_(timing_ps(spec.ps(spec.t.tRFC), "tRFC")),
      tCK_(timing_ps(spec.tCK_ps, "tCK")), burst_(timing_ps(spec.burst_ps(), "burst")),
      ref_limit_(static_cast<st>(9 * spec.ps(spec.t.tREFI))) {
  // raise_channel_wide(): the terms of channel_wide() a command at t changes, as offsets from
  // t (each term is history + timing, and the command set that history to t, or for the data
  // bus to t + CL/WL + burst). The command bus: t + tCK for the commands on the same bus
  // (every command with one bus). Bounds: ACT, PRE, RD, WR.
  const tt ck = tCK_, no = kNoRaise;
  const tt rb = dual_ ? no : ck;  // a row command's bus term for RD, WR (and vice versa)
  const tt act[4] = {std::max(ck, tRRD_S_), ck, rb, rb};  // + tFAW apart
  const tt pre[4] = {ck, ck, rb, rb};
  const tt rd[4] = {rb, rb, std::max({ck, tCCD_S_, burst_}),  // data bus: t + CL + burst - CL
                    std::max({ck, tCCD_S_, tCL_ + burst_ - tWL_, tRTW_})};
  const tt wr[4] = {rb, rb, std::max({ck, tCCD_S_, tWL_ + burst_ - tCL_, tWL_ + burst_ + tWTR_}),
                    std::max({ck, tCCD_S_, burst_})};
  const tt rf = std::max(ck, tRFC_);  // tRFC for every command, the bus for the row ones
  const tt ref[4] = {rf, rf, dual_ ? tRFC_ : rf, dual_ ? tRFC_ : rf};
  const tt* rows[5] = {act, pre, rd, wr, ref};  // index: command
  for (int c = 0; c < 5; ++c)
    for (int i = 0; i < 4; ++i) raise_off_[c][i] = rows[c][i];
}

unsigned timing_checker::check_ref_interval(st t) {
  // From the last REF, or from time 0 before the first one.
  const st prev = last_ref_ == never ? 0 : last_ref_;
  const bool late = ref_limit_ != 0 && t - prev > ref_limit_ && !ref_late_counted_;
  ref_late_counted_ = false;  // a new interval starts at t
  if (!late) return 0;
  ++violations_[static_cast<std::size_t>(rule::tREFI)];
  return 1;
}

unsigned timing_checker::check_refresh(ps_t now) {
  const st prev = last_ref_ == never ? 0 : last_ref_;
  if (ref_limit_ == 0 || ref_late_counted_ || static_cast<st>(now) - prev <= ref_limit_) return 0;
  ref_late_counted_ = true;
  ++violations_[static_cast<std::size_t>(rule::tREFI)];
  return 1;
}

timing_checker::channel_bounds timing_checker::channel_wide() const {
  channel_bounds cb;
  const st any = std::max(last_row_cmd_, last_col_cmd_);
  const st row_bus = (dual_ ? last_row_cmd_ : any) + tCK_;
  const st col_bus = (dual_ ? last_col_cmd_ : any) + tCK_;
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
  bump(kBinding + static_cast<std::size_t>(binding));
  return bad + apply(cmd, bg, b, t, tp);
}

__attribute__((noinline)) unsigned timing_checker::count_violations(command cmd, bank_at a,
                                                                   st t) {
  unsigned bad = 0;
  dispatch_command(cmd, [&](auto c) {
    for_each_bound_as<decltype(c)::value>(a, [&](rule r, st lb) {
      if (t < lb) {
        ++violations_[static_cast<std::size_t>(r)];
        ++bad;
      }
    });
  });
  return bad;
}

bool timing_checker::record_idle_refreshes(ps_t first, ps_t period, std::uint64_t n) {
  if (n == 0) return true;
  if (open_banks_ != 0 || static_cast<st>(period) <= tRFC_ || static_cast<st>(period) <= tCK_ ||
      earliest(command::REF, 0, 0, first).time != first)
    return false;
  // Each REF k at first + k * period: no rule binds (the first checked above; then the
  // previous REF's tRFC / command-bus bounds end before the next), no violation but the
  // tREFI deadline: the first REF's interval from the last one, then n - 1 of `period`.
  check_ref_interval(static_cast<st>(first));
  if (ref_limit_ != 0 && static_cast<st>(period) > ref_limit_)
    violations_[static_cast<std::size_t>(rule::tREFI)] += n - 1;
  add(static_cast<std::size_t>(command::REF), n);
  add(kBinding + static_cast<std::size_t>(rule::arrival), n);
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
