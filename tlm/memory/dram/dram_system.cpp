#include "tlm/memory/dram/dram_system.h"

#include <algorithm>

namespace cdma::dram {

namespace {
constexpr std::uint64_t closed_row = ~0ull;
}

dram_system::dram_system(const dram_spec& spec, const std::string& mapping, page_policy pp,
                         scheduler sch)
    : spec_(spec),
      map_(spec_, mapping.empty() ? address_mapping::default_text(spec_) : mapping),
      policy_(pp) {
  spec_.validate();
  ch_.reserve(spec_.channels);
  const ps_t refi = spec_.ps(spec_.t.tREFI);
  for (unsigned c = 0; c < spec_.channels; ++c)
    // Refreshes of the channels are staggered evenly over one tREFI.
    ch_.emplace_back(spec_, pp, sch, refi ? refi * (c + 1) / spec_.channels : 0);
  lt_.resize(spec_.channels);
  lt_open_.assign(static_cast<std::size_t>(spec_.channels) * spec_.banks(), closed_row);
  acc_.resize(spec_.channels);
  for (auto& a : acc_) a.per_group.assign(spec_.bank_groups, 0);
  svc_ = service_terms(spec_);
  tCL_ps_ = spec_.ps(spec_.t.tCL);
  tWL_ps_ = spec_.ps(spec_.t.tWL);
  burst_ps_ = spec_.burst_ps();
  for (int w = 0; w < 2; ++w) {
    for (int pre = 0; pre < 2; ++pre)
      for (int act = 0; act < 2; ++act)
        isolated_[w][pre][act] = access_latency_ps(spec_, w != 0, pre != 0, act != 0);
    stream_tail_[w] = (w != 0 ? tWL_ps_ : tCL_ps_) + burst_ps_ - svc_.col_any;
  }
  const std::uint64_t bb = map_.burst_bytes();
  if (bb != 0 && (bb & (bb - 1)) == 0) bb_shift_ = __builtin_ctzll(bb);
  const std::uint64_t rows = map_.slices().back().count;
  if (rows != 0 && (rows & (rows - 1)) == 0) rows_mask_ = rows - 1;
  plan_cache_.assign(std::size_t{1} << kPlanCacheBits, plan_slot{});
  // The fast path keys plans by (burst index mod row period) << 17 | bursts.
  if (map_.row_on_top() && map_.row_period() >= (1ull << 46)) lt_fast_ = false;
}

dram_system::lt_channel_state dram_system::lt_state(unsigned c) const {
  lt_channel_state s;
  s.busy_until = lt_[c].busy_until;
  s.bursts = lt_[c].bursts;
  s.acts = lt_[c].acts;
  const auto b = lt_open_.begin() + static_cast<std::ptrdiff_t>(c) * spec_.banks();
  s.open_row.assign(b, b + spec_.banks());
  return s;
}

ps_t dram_system::lt_busy_before(ps_t t) {
  lt_seen_.resize(lt_.size(), 0);
  ps_t sum = 0;
  for (std::size_t c = 0; c < lt_.size(); ++c) {
    const ps_t booked = lt_[c].bursts * burst_ps_;
    const ps_t ahead = lt_[c].busy_until > t ? lt_[c].busy_until - t : 0;
    const ps_t before = booked > ahead ? booked - ahead : 0;
    lt_seen_[c] = std::max(lt_seen_[c], before);
    sum += lt_seen_[c];
  }
  return sum;
}

ps_t dram_system::lt_access(std::uint64_t addr, std::uint64_t len, bool write, ps_t ready) {
  return lt_fast_path() ? lt_fast(addr, len, write, ready) : lt_generic(addr, len, write, ready);
}

ps_t dram_system::lt_charge(unsigned c, std::uint64_t bursts, std::uint64_t acts, ps_t svc,
                            ps_t ready) {
  lt_chan& l = lt_[c];
  l.busy_until = std::max(l.busy_until, ready) + svc;
  l.bursts += bursts;
  l.acts += acts;
  lt_busy_ += bursts * burst_ps_;
  lt_acts_ += acts;
  lt_bursts_ += bursts;
  return l.busy_until;
}

ps_t dram_system::lt_finish(bool write, ps_t ready, ps_t end, bool first_pre,
                            bool first_act) const {
  // An isolated access takes its access latency (row close/open, CL/WL, one burst); in a
  // stream the channels' service times dominate, and the last burst's data follows its
  // column command (whose slot ends the service time) by CL/WL.
  // (Tables of the constructor: access_latency_ps(spec_, write, first_pre, first_act) and
  // (write ? tWL : tCL) + burst - col_any.)
  const ps_t isolated = ready + isolated_[write][first_pre][first_act];
  const ps_t stream = end + stream_tail_[write];
  return std::max(isolated, stream);
}

// The reference: walks the access burst by burst (split()), run by run.
ps_t dram_system::lt_generic(std::uint64_t addr, std::uint64_t len, bool write, ps_t ready) {
  bool first = true, first_pre = false, first_act = false;
  const unsigned nb = spec_.banks();
  split(addr, len, write, 0, ready, [&](unsigned c, const request& r) {
    lt_acc& a = acc_[c];
    if (!a.used) {
      a.used = true;
      touched_.push_back(c);
    }
    std::uint64_t& open = lt_open_[c * nb + r.bank_group * spec_.banks_per_group + r.bank];
    const bool miss = policy_ == page_policy::closed || open != r.row;
    if (first) {
      first_pre = miss && policy_ == page_policy::open && open != closed_row;
      first_act = miss;
      first = false;
    }
    if (miss) ++a.acts;
    open = r.row;
    a.bursts += r.bursts;
    a.per_group[r.bank_group] += r.bursts;
  });
  ps_t end = ready;
  for (unsigned c : touched_) {
    lt_acc& a = acc_[c];
    const std::uint64_t maxg = *std::max_element(a.per_group.begin(), a.per_group.end());
    end = std::max(end, lt_charge(c, a.bursts, a.acts, service_ps(svc_, a.bursts, maxg, a.acts),
                                  ready));
    a.bursts = a.acts = 0;
    std::fill(a.per_group.begin(), a.per_group.end(), 0);
    a.used = false;
  }
  touched_.clear();
  return lt_finish(write, ready, end, first_pre, first_act);
}

const dram_system::lt_plan& dram_system::plan_for(std::uint64_t m, std::uint64_t n) {
  const std::uint64_t key = (m << 17) | n;
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  // Decompose [m, m + n) bursts with the generic split (row field 0 at burst m), then reduce.
  const std::uint64_t bb = map_.burst_bytes();
  const unsigned nb = spec_.banks();
  // Scratch kept between calls (sized once; reset below for what this plan touched).
  auto& banks = scratch_.banks;
  auto& ch_banks = scratch_.ch_banks;
  auto& bursts = scratch_.bursts;
  auto& per_group = scratch_.per_group;
  auto& chans = scratch_.chans;
  if (banks.empty()) {
    banks.resize(static_cast<std::size_t>(spec_.channels) * nb);
    ch_banks.resize(spec_.channels);
    bursts.assign(spec_.channels, 0);
    per_group.assign(static_cast<std::size_t>(spec_.channels) * spec_.bank_groups, 0);
  }
  lt_plan p;
  bool first = true;
  split(m * bb, n * bb, false, 0, 0, [&](unsigned c, const request& r) {
    const std::uint32_t gb = c * nb + r.bank_group * spec_.banks_per_group + r.bank;
    const auto off = static_cast<std::uint32_t>(r.row);  // < n / row_period + 2 (n <= 2^16)
    if (first) {
      p.first_bank = gb;
      p.first_off = off;
      first = false;
    }
    plan_scratch::bank_acc& b = banks[gb];
    if (!b.used) {
      b.used = true;
      b.first = off;
      if (ch_banks[c].empty() && bursts[c] == 0) chans.push_back(c);
      ch_banks[c].push_back(gb);
    } else if (b.last != off) {
      ++b.changes;
    }
    b.last = off;
    ++b.runs;
    bursts[c] += r.bursts;
    per_group[static_cast<std::size_t>(c) * spec_.bank_groups + r.bank_group] += r.bursts;
  });
  for (unsigned c : chans) {
    lt_chan_part cp;
    cp.ch = c;
    cp.bank_begin = static_cast<std::uint32_t>(p.banks.size());
    for (std::uint32_t gb : ch_banks[c]) {
      const plan_scratch::bank_acc& b = banks[gb];
      p.banks.push_back({gb, b.runs, b.changes, b.first, b.last});
      banks[gb] = plan_scratch::bank_acc{};
    }
    ch_banks[c].clear();
    cp.bank_end = static_cast<std::uint32_t>(p.banks.size());
    cp.bursts = bursts[c];
    const auto g0 = per_group.begin() + static_cast<std::ptrdiff_t>(c) * spec_.bank_groups;
    cp.maxg = *std::max_element(g0, g0 + spec_.bank_groups);
    cp.col = std::max(cp.bursts * svc_.col_any, cp.maxg * svc_.col_group);
    cp.col_svc = service_ps(svc_, cp.bursts, cp.maxg, 0);
    p.chans.push_back(cp);
    bursts[c] = 0;
    std::fill(g0, g0 + spec_.bank_groups, 0);
  }
  chans.clear();
  p.uniform = std::all_of(p.banks.begin(), p.banks.end(), [](const lt_bank_part& b) {
    return b.first_off == 0 && b.last_off == 0 && b.changes == 0;
  });
  if (p.uniform)
    for (const lt_bank_part& b : p.banks) p.bank_index.push_back(b.bank);
  for (const lt_chan_part& cp : p.chans) p.bursts += cp.bursts;
  if (plan_banks_ + p.banks.size() > kMaxPlanBanks) {
    plans_.clear();
    plan_banks_ = 0;
    std::fill(plan_cache_.begin(), plan_cache_.end(), plan_slot{});
  }
  plan_banks_ += p.banks.size();
  return plans_.emplace(key, std::move(p)).first->second;
}

// The fast path: the memoised plan of (first burst mod row period, bursts), shifted by the
// access's row (row0). Same arithmetic as lt_generic, per bank instead of per run: a bank
// entered at rows r1..rk (in run order) needs [open != r1] + (changes between consecutive
// runs) ACTs under the open policy, one per run under the closed policy, and ends with rk open.
// Each channel is charged as lt_charge() does; the totals (lt_busy_, lt_acts_, lt_bursts_)
// are added once per access (the same sums).
ps_t dram_system::lt_fast(std::uint64_t addr, std::uint64_t len, bool write, ps_t ready) {
  if (len == 0) len = 1;
  const std::uint64_t bb = map_.burst_bytes();
  std::uint64_t x0, n;
  if (bb_shift_ >= 0) {
    x0 = addr >> bb_shift_;
    n = ((addr + len + bb - 1) >> bb_shift_) - x0;
  } else {
    x0 = addr / bb;
    n = (addr + len + bb - 1) / bb - x0;
  }
  // Tiny accesses (a few bursts: a hash look-up costs as much as walking them) and huge
  // ones (not memoised) take the generic path.
  if (n < kMinPlanBursts || n > kMaxPlanBursts) return lt_generic(addr, len, write, ready);
  const std::uint64_t period = map_.row_period();
  const std::uint64_t rows = map_.slices().back().count;
  const std::uint64_t q = x0 / period, m = x0 % period;
  const std::uint64_t row0 = rows_mask_ != 0 ? (q & rows_mask_) : q % rows;
  const lt_plan& p = cached_plan(m, n);
  auto row_of = [&](std::uint32_t off) {
    // Plan offsets are rows of the access decomposed from row 0, i.e. already < rows.
    const std::uint64_t r = row0 + off;
    return r >= rows ? r - rows : r;
  };
  const bool closed = policy_ == page_policy::closed;
  std::uint64_t* const open_row = lt_open_.data();
  const std::uint64_t open0 = open_row[p.first_bank];
  const bool first_act = closed || open0 != row_of(p.first_off);
  const bool first_pre = first_act && !closed && open0 != closed_row;
  ps_t end = ready;
  std::uint64_t acts_total = 0;
  lt_chan* const chan = lt_.data();
  // A uniform plan (every bank stays in the access's first row, row0 < rows; the common
  // 4 KiB window) under the open policy: the same arithmetic as the general walk with
  // offsets 0 and no row changes, one compare and one store per bank over a contiguous index
  // array (test DramLtFast: every access against the generic path, state included).
  const bool uniform = p.uniform && !closed;
  const std::uint32_t* idx = p.bank_index.data();
  if (uniform) {
    // Streams stay in a row for many accesses, so usually every bank of the plan has row0
    // open already: then no bank needs an ACT (acts = 0 per channel, service time col_svc)
    // and no open row changes. One pass of loads checks that; otherwise the walk below.
    const std::size_t nb = p.bank_index.size();
    std::uint64_t d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    std::size_t i = 0;
    for (; i + 4 <= nb; i += 4) {
      d0 |= open_row[idx[i]] ^ row0;
      d1 |= open_row[idx[i + 1]] ^ row0;
      d2 |= open_row[idx[i + 2]] ^ row0;
      d3 |= open_row[idx[i + 3]] ^ row0;
    }
    for (; i < nb; ++i) d0 |= open_row[idx[i]] ^ row0;
    if ((d0 | d1 | d2 | d3) == 0) {
      for (const lt_chan_part& cp : p.chans) {
        lt_chan& l = chan[cp.ch];  // lt_charge() with acts = 0 (0 x act <= col)
        l.busy_until = std::max(l.busy_until, ready) + cp.col_svc;
        l.bursts += cp.bursts;
        end = std::max(end, l.busy_until);
      }
      lt_busy_ += p.bursts * burst_ps_;
      lt_bursts_ += p.bursts;
      return lt_finish(write, ready, end, first_pre, first_act);
    }
  }
  for (const lt_chan_part& cp : p.chans) {
    std::uint64_t acts = 0;
    if (uniform) {
      for (std::uint32_t i = cp.bank_begin; i < cp.bank_end; ++i) {
        std::uint64_t& open = open_row[idx[i]];
        acts += open != row0;
        open = row0;
      }
    } else {
      for (std::uint32_t i = cp.bank_begin; i < cp.bank_end; ++i) {
        const lt_bank_part& b = p.banks[i];
        std::uint64_t& open = open_row[b.bank];
        acts += closed ? b.runs : (open != row_of(b.first_off)) + b.changes;
        open = row_of(b.last_off);
      }
    }
    // service_ps(): max(data time, ACT time) / availability; the data-time quotient is
    // precomputed per plan.
    const ps_t svc = acts * svc_.act <= cp.col ? cp.col_svc
                                                : service_ps(svc_, cp.bursts, cp.maxg, acts);
    lt_chan& l = chan[cp.ch];  // lt_charge(), without the totals
    l.busy_until = std::max(l.busy_until, ready) + svc;
    l.bursts += cp.bursts;
    l.acts += acts;
    end = std::max(end, l.busy_until);
    acts_total += acts;
  }
  lt_busy_ += p.bursts * burst_ps_;
  lt_acts_ += acts_total;
  lt_bursts_ += p.bursts;
  return lt_finish(write, ready, end, first_pre, first_act);
}

}  // namespace cdma::dram
