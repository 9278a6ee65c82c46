#include "tlm/memory/dram/channel.h"

#include <algorithm>

namespace cdma::dram {

const char* policy_name(page_policy p) { return p == page_policy::open ? "open" : "closed"; }
const char* scheduler_name(scheduler s) { return s == scheduler::fcfs ? "fcfs" : "frfcfs"; }

channel::channel(const dram_spec& spec, page_policy pp, scheduler sch, ps_t first_refresh_ps)
    : spec_(spec), policy_(pp), sched_(sch), chk_(spec_), banks_(spec.banks()),
      c_local_(spec.banks(), kNever), c_seq_(spec.banks(), 0), c_qi_(spec.banks(), 0),
      c_cmd_(spec.banks(), 0), dirty_(spec.banks(), 0), et_(spec.banks(), kNever),
      tRRD_L_ps_(spec.ps(spec.t.tRRD_L)), tCCD_L_ps_(spec.ps(spec.t.tCCD_L)),
      refi_(spec.ps(spec.t.tREFI)),
      ref_due_(refi_ == 0 ? kNever : (first_refresh_ps ? first_refresh_ps : refi_)),
      min_done_(spec.ps(std::min(spec.t.tCL, spec.t.tWL)) + spec.burst_ps()) {}

void channel::submit(const request& r) {
  advance(r.arrival);
  const unsigned flat = r.bank_group * spec_.banks_per_group + r.bank;
  bank_state& b = banks_[flat];
  b.q.push_back({r, seq_++, std::max(1u, r.bursts), false});
  b.q.back().r.bursts = b.q.back().left;
  if (b.open && b.hit == npos && r.row == b.open_row) b.hit = b.q.size() - 1;
  mark_dirty(flat);
  ++queued_;
  cached_ = false;
}

void channel::refresh_candidate(unsigned flat) {
  const bank_state& b = banks_[flat];
  dirty_[flat] = 0;
  if (b.q.empty()) {
    c_local_[flat] = kNever;
    return;
  }
  const std::size_t qi = (sched_ == scheduler::fcfs || b.hit == npos) ? 0 : b.hit;
  const queued_req& q = b.q[qi];
  command cmd;
  if (!b.open) cmd = command::ACT;
  else if (b.open_row == q.r.row) cmd = q.r.write ? command::WR : command::RD;
  else cmd = command::PRE;
  c_qi_[flat] = qi;
  c_cmd_[flat] = static_cast<std::uint8_t>(cmd);
  c_seq_[flat] = q.seq;
  c_local_[flat] = chk_.bank_local(cmd, bg_of(flat), ba_of(flat), q.r.arrival);
}

void channel::update_group(command cmd, unsigned flat, ps_t t) {
  mark_dirty(flat);
  // bank_local() is a max of terms; the group term (gr.act + tRRD_L for ACT, gr.col + tCCD_L
  // for RD/WR) is the only one a command to another bank of the group changes, and it rises
  // to t + that timing (commands issue in time order), so max() with it is the new value.
  const bool col = cmd == command::RD || cmd == command::WR;
  if (!col && cmd != command::ACT) return;
  const ps_t bound = t + (col ? tCCD_L_ps_ : tRRD_L_ps_);
  const unsigned bpg = spec_.banks_per_group;
  const unsigned g0 = bg_of(flat) * bpg;
  for (unsigned f = g0; f < g0 + bpg; ++f) {
    if (f == flat || dirty_[f] || c_local_[f] == kNever) continue;
    const auto cc = static_cast<command>(c_cmd_[f]);
    const bool ccol = cc == command::RD || cc == command::WR;
    if (col ? ccol : cc == command::ACT) c_local_[f] = std::max(c_local_[f], bound);
  }
}

channel::choice channel::pick() {
  choice best;
  for (unsigned f : dirty_list_) refresh_candidate(f);
  dirty_list_.clear();
  const timing_checker::channel_bounds cb = chk_.channel_wide();
  // The candidate of bank f issues at max(channel-wide bound of its command, its bank-local
  // bound); the earliest wins (ties: column commands, then age): the minimum of the key
  // (time, not a column command, age), which is unique since ages are.
  const std::size_t nb = banks_.size();
  auto key_of = [&](unsigned f) {
    const auto cc = static_cast<command>(c_cmd_[f]);
    const bool col = cc == command::RD || cc == command::WR;
    return (col ? 0 : (1ull << 63)) | c_seq_[f];
  };
  auto take = [&](unsigned f, ps_t et) {
    best.time = et;
    best.cmd = static_cast<command>(c_cmd_[f]);
    best.bank = f;
    best.qi = c_qi_[f];
    best.seq = c_seq_[f];
  };
  if (queued_ > 0) {
    if (sched_ == scheduler::fcfs) {
      // Strict arrival order: only the oldest request of the channel may issue commands.
      unsigned oldest = 0;
      std::uint64_t oseq = ~0ull;
      for (unsigned f = 0; f < nb; ++f)
        if (!banks_[f].q.empty() && banks_[f].q.front().seq < oseq) {
          oseq = banks_[f].q.front().seq;
          oldest = f;
        }
      take(oldest, std::max(cb.b[c_cmd_[oldest]], c_local_[oldest]));
    } else {
      // FR-FCFS: per bank the oldest row hit, else the oldest request; across banks the
      // command that can issue first (ties: column commands, then age).
      ps_t tmin = kNever;
      for (std::size_t f = 0; f < nb; ++f) {
        const ps_t et = std::max(cb.b[c_cmd_[f] & 3u], c_local_[f]);  // kNever: no request
        et_[f] = et;
        tmin = std::min(tmin, et);
      }
      if (tmin == kNever) return best;  // cannot happen with queued requests
      std::uint64_t kmin = ~0ull;
      unsigned win = 0;
      for (unsigned f = 0; f < nb; ++f) {
        const std::uint64_t k = et_[f] == tmin ? key_of(f) : ~0ull;
        if (k < kmin) {
          kmin = k;
          win = f;
        }
      }
      take(win, tmin);
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
  if (c.cmd != command::REF) update_group(c.cmd, c.bank, c.time);
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
