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
  for (unsigned c = 0; c < spec_.channels; ++c) lt_[c].ref_next = refresh_offset(c);
  lt_open_.assign(static_cast<std::size_t>(spec_.channels) * spec_.banks(), closed_row);
  bank_stamp_.assign(lt_open_.size(), 0);
  bank_last_.assign(lt_open_.size(), closed_row);
  lt_bank_col_.assign(lt_open_.size(), 0);
  lt_prev_.assign(lt_open_.size(), closed_row);
  lt_prev_col_.assign(lt_open_.size(), 0);
  bank_first_.assign(lt_open_.size(), closed_row);
  acc_.resize(spec_.channels);
  for (auto& a : acc_) a.per_group.assign(spec_.bank_groups, 0);
  lt_grp_.assign(static_cast<std::size_t>(spec_.channels) * spec_.bank_groups, gap_server{});
  grp_svc_.assign(spec_.bank_groups, 0);
  svc_ = service_terms(spec_);
  for (std::size_t n = 0; n < kSvcTab; ++n) {
    act_tab_[n] = act_service_ps(svc_, n);
    grp_tab_[n] = group_service_ps(svc_, n);
    bus_tab_[n] = service_ps(svc_, n, 0, 0);
  }
  tCL_ps_ = spec_.ps(spec_.t.tCL);
  tWL_ps_ = spec_.ps(spec_.t.tWL);
  burst_ps_ = spec_.burst_ps();
  tRP_ps_ = spec_.ps(spec_.t.tRP);
  tRCD_ps_ = spec_.ps(spec_.t.tRCD);
  tRFC_ps_ = spec_.ps(spec_.t.tRFC);
  refi_ps_ = spec_.ps(spec_.t.tREFI);
  tFAW_ps_ = spec_.ps(spec_.t.tFAW);
  tRRD_S_ps_ = spec_.ps(spec_.t.tRRD_S);
  tRC_per_bank_ps_ = spec_.ps(spec_.t.tRC) / spec_.banks();
  for (std::size_t n = 1; n < kActChain; ++n) act_chain_[n] = act_chain_far(n);
  for (int w = 0; w < 2; ++w) {
    idle_tail_[w] = (w != 0 ? tWL_ps_ : tCL_ps_) + burst_ps_;
    stream_tail_[w] = idle_tail_[w] - svc_.col_any;
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
  s.ref_next = lt_[c].ref_next;
  return s;
}

ps_t dram_system::refresh_offset(unsigned c) const {
  // The AT channels' first REF (constructor above: refreshes staggered over one tREFI).
  const ps_t refi = spec_.ps(spec_.t.tREFI);
  return refi ? refi * (c + 1) / spec_.channels : ~ps_t{0};
}

ps_t dram_system::act_chain_far(std::uint64_t n) const {
  if (n == 0) return 0;
  const std::uint64_t k = n - 1;
  return std::max({k * tRRD_S_ps_, (k / 4) * tFAW_ps_ + (k % 4) * tRRD_S_ps_,
                   k * tRC_per_bank_ps_});
}

ps_t dram_system::lt_refresh(unsigned c, ps_t t, ps_t& due_out) {
  // The last REF due by t (the AT channel issues one at every due time; tREFI >> tRFC, so
  // only the last can still hold the channel at t), and every bank closed by it.
  lt_chan& l = lt_[c];
  const ps_t due = l.ref_next + (t - l.ref_next) / refi_ps_ * refi_ps_;
  const ps_t end = due + (l.any_open ? tRP_ps_ : 0) + tRFC_ps_;
  due_out = due;
  l.ref_next = due + refi_ps_;
  l.any_open = false;
  const unsigned nb = spec_.banks();
  std::fill_n(lt_open_.begin() + static_cast<std::ptrdiff_t>(c) * nb, nb, closed_row);
  std::fill_n(lt_prev_.begin() + static_cast<std::ptrdiff_t>(c) * nb, nb, closed_row);
  return end;
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
  const std::uint64_t before = lt_bursts_;
  const ps_t end = lt_fast_path() ? lt_fast(addr, len, write, ready) : lt_generic(addr, len, write, ready);
  if (write) lt_write_bursts_ += lt_bursts_ - before;
  return end;
}

ps_t dram_system::lt_charge(unsigned c, std::uint64_t bursts, std::uint64_t acts,
                            const ps_t* group_svc, ps_t from) {
  lt_chan& l = lt_[c];
  const ps_t e = lt_book(c, l, group_svc, bus_svc(bursts), act_svc(acts), from);
  l.bursts += bursts;
  l.acts += acts;
  lt_busy_ += bursts * burst_ps_;
  lt_acts_ += acts;
  lt_bursts_ += bursts;
  return e;
}

// The reference: walks the access burst by burst (split()), run by run. First the sums per
// channel and the ACTs of the present row state (each bank's first run against its open
// row, later runs against the row the access left in it) without changing it; then per
// channel the refresh test and the charge; then the rows the access leaves open.
ps_t dram_system::lt_generic(std::uint64_t addr, std::uint64_t len, bool write, ps_t ready) {
  const unsigned nb = spec_.banks();
  const bool closed = policy_ == page_policy::closed;
  if (++stamp_ == 0) {  // wrapped: no bank may look touched by this access
    std::fill(bank_stamp_.begin(), bank_stamp_.end(), 0);
    stamp_ = 1;
  }
  split(addr, len, write, 0, ready, [&](unsigned c, const request& r) {
    lt_acc& a = acc_[c];
    if (!a.used) {
      a.used = true;
      touched_.push_back(c);
    }
    const std::uint32_t fb = c * nb + r.bank_group * spec_.banks_per_group + r.bank;
    bool miss;
    if (bank_stamp_[fb] != stamp_) {  // the bank's first run in this access
      bank_stamp_[fb] = stamp_;
      touched_banks_.push_back(fb);
      const std::uint64_t open = lt_open_[fb];
      bank_first_[fb] = r.row;
      miss = !lt_first_hit(fb, r.row, ready, closed);
      ++a.banks;
      a.first_miss += miss;
      a.pre = a.pre || (miss && !closed && open != closed_row);
      ++a.acts_closed;
    } else {
      miss = bank_last_[fb] != r.row;  // (closed page too: the row stays open within the access)
      a.acts_closed += miss;
    }
    bank_last_[fb] = r.row;
    a.acts += miss;
    a.bursts += r.bursts;
    a.per_group[r.bank_group] += r.bursts;
  });
  ps_t end = 0;
  for (unsigned c : touched_) {
    lt_acc& a = acc_[c];
    lt_chan& l = lt_[c];
    const std::uint64_t maxg = *std::max_element(a.per_group.begin(), a.per_group.end());
    const bool idle = l.busy_until <= ready;
    ps_t x = lt_idle_span(a.bursts, maxg, a.acts, a.first_miss < a.banks, a.pre);
    ps_t start = ready;  // the part's start on an idle channel (after a REF it waits for)
    if (ready + x >= l.ref_next) {
      // A REF is due by the end of the part: every bank is closed (the part's banks all
      // need an ACT) and the part ends no earlier than the REF's end + its span (an idle
      // channel starts it there; a busy one books its service from `ready`, the refresh
      // being in its service time's average stretch).
      ps_t due;
      const ps_t ref_end = lt_refresh(c, ready + x, due);
      a.acts = a.acts_closed;
      x = lt_idle_span(a.bursts, maxg, a.acts, false, false);
      // Ready after the due time: the part waits for the REF's end; ready before it (the
      // part reaches it): the REF interrupts the part, which is then later by its length.
      start = due <= ready ? std::max(ready, ref_end) : ready + (ref_end - due);
    }
    l.any_open = true;
    for (unsigned g = 0; g < spec_.bank_groups; ++g)
      grp_svc_[g] = group_svc(a.per_group[g]);
    const ps_t busy = lt_charge(c, a.bursts, a.acts, grp_svc_.data(), idle ? start : ready);
    // A busy channel's part ends no earlier than it would on an idle channel (the stream
    // term has no ACT-to-column latency and no REF wait).
    const ps_t lat = start + x + idle_tail_[write];
    a.end = idle ? lat : std::max(busy + stream_tail_[write], lat);
    end = std::max(end, a.end);
    a.bursts = a.acts = a.acts_closed = a.banks = a.first_miss = 0;
    a.pre = false;
    std::fill(a.per_group.begin(), a.per_group.end(), 0);
    a.used = false;
  }
  touched_.clear();
  for (std::uint32_t fb : touched_banks_) {
    lt_leave(fb, bank_first_[fb], bank_last_[fb], acc_[fb / nb].end - idle_tail_[write]);
  }
  touched_banks_.clear();
  return end;
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
    cp.grp = static_cast<std::uint32_t>(p.grp_svc.size());
    for (unsigned g = 0; g < spec_.bank_groups; ++g)
      p.grp_svc.push_back(g0[g] != 0 ? group_service_ps(svc_, g0[g]) : 0);
    cp.col_svc = service_ps(svc_, cp.bursts, 0, 0);
    cp.x_hit = lt_idle_span(cp.bursts, cp.maxg, 0, true, false);
    // The ACTs of the part after a REF closed every bank: one per bank entered plus its row
    // changes (either policy); its idle span then.
    cp.acts_closed = 0;
    for (std::uint32_t i = cp.bank_begin; i < cp.bank_end; ++i) cp.acts_closed += 1 + p.banks[i].changes;
    cp.x_closed = lt_idle_span(cp.bursts, cp.maxg, cp.acts_closed, false, false);
    cp.act_closed = act_service_ps(svc_, cp.acts_closed);
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
// runs) ACTs under the open policy, 1 + changes under the closed policy (the bank is closed
// between accesses; within one access its runs in one row share the ACT, as the AT scheduler
// keeps a row open while queued requests hit it), and ends with rk open.
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
  lt_chan* const chan = lt_.data();
  const bool closed = policy_ == page_policy::closed;
  std::uint64_t* const open_row = lt_open_.data();
  ps_t end = 0;
  std::uint64_t acts_total = 0;
  const ps_t idle_tail = idle_tail_[write], stream_tail = stream_tail_[write];
  // A uniform plan (every bank stays in the access's first row, row0 < rows; the common
  // 4 KiB window) under the open policy: the same arithmetic as the general walk with
  // offsets 0 and no row changes, one compare and one store per bank over a contiguous index
  // array (test DramLtFast: every access against the generic path, state included).
  const bool uniform = p.uniform && !closed;
  const std::uint32_t* idx = p.bank_index.data();
  if (uniform) {
    // Streams stay in a row for many accesses, so usually every bank of the plan has row0
    // open already: then no bank needs an ACT (acts = 0 per channel, service time col_svc,
    // idle span x_hit) and no open row changes. One pass of loads checks that; otherwise
    // the walk below.
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
        const bool idle = l.busy_until <= ready;
        if (__builtin_expect(ready + cp.x_hit >= l.ref_next, 0)) {
          const ps_t part_end = lt_fast_refresh(p, cp, ready, cp.x_hit, idle, write);
          end = std::max(end, part_end);
          for (std::uint32_t i = cp.bank_begin; i < cp.bank_end; ++i)
            lt_leave(idx[i], row0, row0, part_end - idle_tail);
          continue;
        }
        const ps_t busy = lt_book(cp.ch, l, p.grp_svc.data() + cp.grp, cp.col_svc, 0, ready);
        l.bursts += cp.bursts;
        const ps_t part_end = std::max(ready + cp.x_hit + idle_tail, idle ? 0 : busy + stream_tail);
        end = std::max(end, part_end);
        // (lt_leave() with r1 = rk = the open row: only the column time changes)
        for (std::uint32_t i = cp.bank_begin; i < cp.bank_end; ++i)
          lt_bank_col_[idx[i]] = std::max(lt_bank_col_[idx[i]], part_end - idle_tail);
      }
      lt_busy_ += p.bursts * burst_ps_;
      lt_bursts_ += p.bursts;
      return end;
    }
  }
  for (const lt_chan_part& cp : p.chans) {
    std::uint64_t acts = 0, first_miss = 0;
    bool pre = false;
    // (as lt_generic(): lt_first_hit() per bank; the rows are left by lt_leave() below,
    // once the part's end is known)
    if (closed) {
      for (std::uint32_t i = cp.bank_begin; i < cp.bank_end; ++i) {
        const lt_bank_part& b = p.banks[i];
        const bool miss = !lt_first_hit(b.bank, row_of(b.first_off), ready, true);
        first_miss += miss;
        acts += miss + b.changes;
      }
    } else {
      for (std::uint32_t i = cp.bank_begin; i < cp.bank_end; ++i) {
        const lt_bank_part& b = p.banks[i];
        const std::uint64_t open = open_row[b.bank];
        const bool miss = !lt_first_hit(b.bank, row_of(b.first_off), ready, false);
        first_miss += miss;
        pre |= miss && open != closed_row;
        acts += miss + b.changes;
      }
    }
    lt_chan& l = chan[cp.ch];  // lt_charge(), without the totals
    const bool idle = l.busy_until <= ready;
    const ps_t x =
        acts == 0 ? cp.x_hit
                  : lt_idle_span(cp.bursts, cp.maxg, acts, first_miss < cp.bank_end - cp.bank_begin, pre);
    ps_t part_end;
    if (__builtin_expect(ready + x >= l.ref_next, 0)) {
      part_end = lt_fast_refresh(p, cp, ready, x, idle, write);
    } else {
      // The data bus, ACT and bank-group servers (lt_charge()); the data and group services
      // are precomputed per plan.
      const ps_t busy = lt_book(cp.ch, l, p.grp_svc.data() + cp.grp, cp.col_svc,
                                act_svc(acts), ready);
      l.bursts += cp.bursts;
      l.acts += acts;
      l.any_open = true;
      part_end = std::max(ready + x + idle_tail, idle ? 0 : busy + stream_tail);
      acts_total += acts;
    }
    end = std::max(end, part_end);
    // The part's banks are queued until its last column command (lt_generic()).
    for (std::uint32_t i = cp.bank_begin; i < cp.bank_end; ++i) {
      const lt_bank_part& b = p.banks[i];
      lt_leave(b.bank, row_of(b.first_off), row_of(b.last_off), part_end - idle_tail);
    }
  }
  lt_busy_ += p.bursts * burst_ps_;
  lt_acts_ += acts_total;
  lt_bursts_ += p.bursts;
  return end;
}

// The fast path's channel part `cp` reaches a REF (ready + x, x its span in the present row
// state): as lt_generic() does, the REF closes every bank of the channel (the caller then
// leaves the part's banks at its rows: lt_leave()), the part needs its ACTs after a REF
// (acts_closed, span x_closed), and an idle channel starts it after the REF (a busy one ends
// no earlier than that). Charges the channel (and the ACT total) and returns the part's end.
ps_t dram_system::lt_fast_refresh(const lt_plan& p, const lt_chan_part& cp, ps_t ready, ps_t x,
                                  bool idle, bool write) {
  ps_t due;
  const ps_t ref_end = lt_refresh(cp.ch, ready + x, due);
  const ps_t start = due <= ready ? std::max(ready, ref_end) : ready + (ref_end - due);
  lt_chan& l = lt_[cp.ch];
  const ps_t busy =
      lt_book(cp.ch, l, p.grp_svc.data() + cp.grp, cp.col_svc, cp.act_closed, idle ? start : ready);
  l.bursts += cp.bursts;
  l.acts += cp.acts_closed;
  l.any_open = true;
  lt_acts_ += cp.acts_closed;
  const ps_t lat = start + cp.x_closed + idle_tail_[write];
  return idle ? lat : std::max(busy + stream_tail_[write], lat);
}

}  // namespace cdma::dram
