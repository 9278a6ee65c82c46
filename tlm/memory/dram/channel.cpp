#include "tlm/memory/dram/channel.h"

#include <algorithm>

namespace cdma::dram {

const char* policy_name(page_policy p) { return p == page_policy::open ? "open" : "closed"; }
const char* scheduler_name(scheduler s) { return s == scheduler::fcfs ? "fcfs" : "frfcfs"; }

channel::channel(const dram_spec& spec, page_policy pp, scheduler sch, ps_t first_refresh_ps)
    : spec_(spec), policy_(pp), sched_(sch), chk_(spec_), banks_(spec.banks()),
      cand_(spec.banks()),
      refi_(spec.ps(spec.t.tREFI)),
      ref_due_(refi_ == 0 ? kNever : (first_refresh_ps ? first_refresh_ps : refi_)),
      min_done_(spec.ps(std::min(spec.t.tCL, spec.t.tWL)) + spec.burst_ps()) {}

void channel::submit(const request& r) {
  advance(r.arrival);
  const unsigned flat = r.bank_group * spec_.banks_per_group + r.bank;
  bank_state& b = banks_[flat];
  if (b.q.empty()) active_.push_back(flat);
  b.q.push_back({r, seq_++, std::max(1u, r.bursts), false});
  b.q.back().r.bursts = b.q.back().left;
  if (b.open && b.hit == npos && r.row == b.open_row) b.hit = b.q.size() - 1;
  cand_[flat].dirty = true;
  ++queued_;
  cached_ = false;
}

void channel::refresh_candidate(unsigned flat) {
  candidate& c = cand_[flat];
  const bank_state& b = banks_[flat];
  c.qi = (sched_ == scheduler::fcfs || b.hit == npos) ? 0 : b.hit;
  const queued_req& q = b.q[c.qi];
  if (!b.open) c.cmd = command::ACT;
  else if (b.open_row == q.r.row) c.cmd = q.r.write ? command::WR : command::RD;
  else c.cmd = command::PRE;
  c.seq = q.seq;
  c.local = chk_.bank_local(c.cmd, bg_of(flat), ba_of(flat), q.r.arrival);
  c.dirty = false;
}

channel::choice channel::pick() {
  choice best;
  const timing_checker::channel_bounds cb = chk_.channel_wide();
  // The candidate of bank `flat` issues at max(channel-wide bound of its command, its cached
  // bank-local bound); the earliest wins (ties: column commands, then age).
  auto consider = [&](unsigned flat) {
    candidate& c = cand_[flat];
    if (c.dirty) refresh_candidate(flat);
    const ps_t et = std::max(cb.b[static_cast<std::size_t>(c.cmd)], c.local);
    if (et > best.time) return;
    const bool col = c.cmd == command::RD || c.cmd == command::WR;
    const bool best_col = best.cmd == command::RD || best.cmd == command::WR;
    if (et < best.time || (col && !best_col) || (col == best_col && c.seq < best.seq)) {
      best.time = et;
      best.cmd = c.cmd;
      best.bank = flat;
      best.qi = c.qi;
      best.seq = c.seq;
    }
  };
  if (queued_ > 0) {
    if (sched_ == scheduler::fcfs) {
      // Strict arrival order: only the oldest request of the channel may issue commands.
      unsigned oldest = active_.front();
      for (unsigned f : active_)
        if (banks_[f].q.front().seq < banks_[oldest].q.front().seq) oldest = f;
      consider(oldest);
    } else {
      // FR-FCFS: per bank the oldest row hit, else the oldest request; across banks the
      // command that can issue first (ties: column commands, then age).
      for (unsigned f : active_) consider(f);
    }
  }
  if (policy_ == page_policy::closed) {
    // Closed page: a bank with an open row and no queued request for that row precharges.
    for (unsigned f = 0; f < banks_.size(); ++f) {
      const bank_state& b = banks_[f];
      if (!b.open) continue;
      if (b.hit != npos) continue;
      const auto e = chk_.earliest(command::PRE, bg_of(f), ba_of(f), 0);
      if (e.time < best.time) {
        best.time = e.time;
        best.cmd = command::PRE;
        best.bank = f;
        best.why = e.binding;
        best.seq = ~0ull;
        best.qi = ~std::size_t{0};
      }
    }
  }
  if (best.time != kNever && best.qi != ~std::size_t{0}) {
    // The full checker names the binding rule (and must agree with the fast form).
    const auto e = chk_.earliest(best.cmd, bg_of(best.bank), ba_of(best.bank),
                                 banks_[best.bank].q[best.qi].r.arrival);
    best.why = e.binding;
    best.time = e.time;
  }
  // Refresh (all-bank) has priority once due: precharge the open banks, then REF.
  if (ref_due_ != kNever && ref_due_ <= best.time) {
    choice r;
    if (chk_.open_banks() > 0) {
      for (unsigned f = 0; f < banks_.size(); ++f) {
        if (!banks_[f].open) continue;
        const auto e = chk_.earliest(command::PRE, bg_of(f), ba_of(f), ref_due_);
        if (e.time < r.time) {
          r.time = e.time;
          r.cmd = command::PRE;
          r.bank = f;
          r.why = e.binding;
        }
      }
    } else {
      const auto e = chk_.earliest(command::REF, 0, 0, ref_due_);
      r.time = e.time;
      r.cmd = command::REF;
      r.why = e.binding;
    }
    r.qi = ~std::size_t{0};
    r.seq = ~0ull;
    return r;
  }
  return best;
}

void channel::issue(const choice& c) {
  const unsigned bg = bg_of(c.bank), ba = ba_of(c.bank);
  chk_.record(c.cmd, bg, ba, c.time, c.why);
  clock_ = std::max(clock_, c.time);
  bank_state& b = banks_[c.bank];
  // Bank-local bounds change for this bank (all rules) and, after ACT (tRRD_L) or a column
  // command (tCCD_L), for the banks of its group.
  if (c.cmd == command::REF) {
  } else if (c.cmd == command::PRE) {
    cand_[c.bank].dirty = true;
  } else {
    dirty_group(bg);
  }
  switch (c.cmd) {
    case command::ACT:
      b.open = true;
      b.open_row = b.q[c.qi].r.row;
      b.q[c.qi].activated = true;
      ++misses_;
      rescan(b);
      break;
    case command::PRE:
      b.open = false;
      b.hit = npos;
      break;
    case command::REF:
      ref_due_ += refi_;
      break;
    case command::RD:
    case command::WR: {
      queued_req& q = b.q[c.qi];
      if (q.left == q.r.bursts && !q.activated) ++hits_;
      if (--q.left == 0) {
        const ps_t lat = spec_.ps(c.cmd == command::RD ? spec_.t.tCL : spec_.t.tWL);
        done_.push_back({q.r.tag, c.time + lat + spec_.burst_ps(), q.r.bursts, q.r.write});
        b.q.erase(b.q.begin() + static_cast<std::ptrdiff_t>(c.qi));
        --queued_;
        rescan(b);
        if (b.q.empty()) active_.erase(std::find(active_.begin(), active_.end(), c.bank));
      }
      break;
    }
  }
  cached_ = false;
}

void channel::rescan(bank_state& b) {
  b.hit = npos;
  if (!b.open) return;
  for (std::size_t i = 0; i < b.q.size(); ++i)
    if (b.q[i].r.row == b.open_row) {
      b.hit = i;
      return;
    }
}

void channel::advance(ps_t until) {
  for (;;) {
    if (!cached_) {
      cache_ = pick();
      cached_ = true;
    }
    if (cache_.time == kNever || cache_.time >= until) return;
    issue(cache_);
  }
}

ps_t channel::next_command_time() {
  if (queued_ == 0) return kNever;
  if (!cached_) {
    cache_ = pick();
    cached_ = true;
  }
  return cache_.time;
}

}  // namespace cdma::dram
