// The DRAM core of gpu_memory_controller, without SystemC: address decoder, one `channel`
// (bank machines + scheduler + timing checker + refresh) per channel for the AT path, and the
// LT estimate, which uses the same decoder and the timing functions of timing.h. Pure C++.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tlm/core/bandwidth_server.h"
#include "tlm/memory/dram/address_mapping.h"
#include "tlm/memory/dram/channel.h"
#include "tlm/memory/dram/dram_spec.h"
#include "tlm/memory/dram/timing.h"

namespace cdma::dram {

class dram_system {
public:
  /// `mapping`: address_mapping text; empty means address_mapping::default_text(spec).
  dram_system(const dram_spec& spec, const std::string& mapping = "",
              page_policy pp = page_policy::open, scheduler sch = scheduler::frfcfs);
  /// Not copyable: the LT plan cache holds pointers into this object's plan memo.
  dram_system(const dram_system&) = delete;
  dram_system& operator=(const dram_system&) = delete;

  /// Cuts [addr, addr+len) into channel requests (runs of bursts in one row of one bank) and
  /// calls f(channel index, request) for each; `tag`, `arrival`, `write` are copied into them.
  /// A request smaller than a burst still moves (and costs) one whole burst.
  template <class F>
  void split(std::uint64_t addr, std::uint64_t len, bool write, std::uint64_t tag, ps_t arrival,
             F&& f) const {
    if (len == 0) len = 1;
    const std::uint64_t bb = map_.burst_bytes();
    std::uint64_t b = map_.burst_index(addr);
    const std::uint64_t end = map_.burst_index(addr + len - 1) + 1;  // ceil((addr + len) / bb)
    if (map_.one_low_column_block(b, end - 1)) {
      // Fast path (e.g. a 64-B request of the default mapping): every burst has the first
      // one's channel, bank and row, so the loop below would give this one request.
      const location l = map_.locate(b);
      f(l.channel, request{tag, arrival, write, l.bank_group, l.bank, l.row,
                           static_cast<unsigned>(end - b)});
      return;
    }
    unsigned ch = 0;
    request r;
    bool have = false;
    address_mapping::cursor cur(map_, b * bb);  // incremental decode: no division per burst
    for (; b < end; ++b, cur.next()) {
      const location& l = cur.loc();
      if (have && l.channel == ch && l.bank_group == r.bank_group && l.bank == r.bank &&
          l.row == r.row) {
        ++r.bursts;
        continue;
      }
      if (have) f(ch, r);
      ch = l.channel;
      r = request{tag, arrival, write, l.bank_group, l.bank, l.row, 1};
      have = true;
    }
    if (have) f(ch, r);
  }

  /// The fast path of split() alone: when [addr, addr+len) is one request (its bursts lie in
  /// one block of the least significant column slice, e.g. a 64-B request of the default
  /// mapping, or it is a single burst), sets `ch` and `r` to what split() would pass to its
  /// callback and returns true; otherwise returns false and sets nothing.
  bool split_one(std::uint64_t addr, std::uint64_t len, bool write, std::uint64_t tag,
                 ps_t arrival, unsigned& ch, request& r) const {
    if (len == 0) len = 1;
    const std::uint64_t b = map_.burst_index(addr);
    const std::uint64_t end = map_.burst_index(addr + len - 1) + 1;  // ceil((addr + len) / bb)
    if (!map_.one_low_column_block(b, end - 1)) return false;
    const location l = map_.locate(b);
    ch = l.channel;
    r = request{tag, arrival, write, l.bank_group, l.bank, l.row, static_cast<unsigned>(end - b)};
    return true;
  }

  /// LT estimate: time (ps) the last burst of the access ends when it is ready at `ready`.
  /// Per channel: bursts, bursts per bank group and row activations (tracked per bank, by
  /// policy; a closed-page row stays open for an access ready before its bank's last column
  /// command) booked on the channel's data-bus, ACT and bank-group servers (lt_charge(), each a
  /// bandwidth_server-like booking after its own previous LT work, stretched by refresh); the
  /// part's service ends at the latest server it used; channels serve their parts in
  /// parallel. A channel whose earlier LT work has ended by `ready` (idle) ends its
  /// part at the access's critical path on an idle channel (lt_idle_span(): the row commands,
  /// the ACT chain, the column commands, then CL/WL + one burst), a busy one at the end of its
  /// service + CL/WL (stream), but no earlier than it would end on an idle channel (session
  /// 17: the stream term has no ACT-to-column latency and no REF wait); the access ends at
  /// the latest channel. Refresh (all-bank REF at the AT channel's due times, first
  /// refresh_offset(c), then every tREFI): a channel whose part reaches a REF's due time has
  /// every bank closed by it (the part's banks need an ACT), and the part cannot end before
  /// that REF has ended (due + tRP if a bank was open + tRFC) + its span. An idle channel's
  /// part starts after the REF; a busy channel books its service from `ready` and keeps the
  /// average refresh stretch of service_ps().
  ///
  /// Fast path (row_on_top() mappings, i.e. the default): the decomposition of an access
  /// depends only on (first burst index mod row_period(), number of bursts), up to a common
  /// row offset; it is computed once by split() (the generic path), reduced to per-channel
  /// bursts / busiest bank group and per-bank (rows entered, first and last row) and
  /// memoised, so an access costs one hash look-up and one step per touched bank instead of
  /// one cursor step per burst (a channel part that reaches a REF, about once per channel
  /// per tREFI, takes lt_fast_refresh()). Results are identical to the generic path (tested).
  ps_t lt_access(std::uint64_t addr, std::uint64_t len, bool write, ps_t ready);

  /// The LT caller's promise that no later lt_access() is ready before `t` (a SystemC target
  /// passes the present time): the LT servers' free gaps that end by then may be dropped
  /// (gap_server::forget_before()). Changes no result, only which gaps are kept.
  void lt_forget_before(ps_t t) { lt_horizon_ = std::max(lt_horizon_, t); }

  /// Enables / disables the memoised LT fast path (default on; the generic path is the
  /// reference it is tested against). Has no effect when !mapping().row_on_top().
  void set_lt_fast_path(bool on) { lt_fast_ = on; }
  /// True when lt_access() uses the fast path.
  bool lt_fast_path() const { return lt_fast_ && map_.row_on_top(); }

  const dram_spec& spec() const { return spec_; }
  const address_mapping& mapping() const { return map_; }
  std::vector<channel>& channels() { return ch_; }
  const std::vector<channel>& channels() const { return ch_; }
  page_policy policy() const { return policy_; }

  /// LT statistics: data-bus busy time summed over channels (ps), ACTs, bursts. lt_busy_ps()
  /// is every burst booked so far, including work booked ahead of the present time (a
  /// backlogged channel serves an access after its earlier work: busy_until > now).
  ps_t lt_busy_ps() const { return lt_busy_; }
  /// LT data-bus busy time that lies before `t` (ps, summed over channels), for utilisation
  /// over an interval (a delta of lt_busy_ps() over [a, b) also counts work booked in it
  /// that is served after b, so a backlogged interval could exceed 100 %). Per channel:
  /// its booked bursts x burst minus the part that can lie after t (at most busy_until - t:
  /// the channel's work ends by busy_until and its data density is <= 1), kept as a running
  /// maximum over the calls (t non-decreasing), so the value rises by at most
  /// (t - t_prev) per channel between two calls and reaches lt_busy_ps() once the channel
  /// is idle at t. Equals lt_busy_ps() when no channel has work booked after t.
  ps_t lt_busy_before(ps_t t);
  std::uint64_t lt_acts() const { return lt_acts_; }
  std::uint64_t lt_bursts() const { return lt_bursts_; }
  /// LT column commands: bursts of reads / of writes (each burst is one RD / WR, as in AT;
  /// lt_reads() + lt_writes() == lt_bursts()).
  std::uint64_t lt_reads() const { return lt_bursts_ - lt_write_bursts_; }
  std::uint64_t lt_writes() const { return lt_write_bursts_; }
  /// LT state of channel `c`: end of its LT work (ps), bursts and ACTs so far, and the open
  /// row of each bank (flat index; ~0 = closed).
  struct lt_channel_state {
    ps_t busy_until = 0;
    std::uint64_t bursts = 0, acts = 0;
    std::vector<std::uint64_t> open_row;
    ps_t ref_next = 0;  ///< due time of the first REF not yet applied to the LT state
  };
  /// Due time of channel c's first REF, ps (the AT channels' stagger: tREFI x (c + 1) /
  /// channels; then one every tREFI). kNever-like (~0) without refresh (tREFI = 0).
  ps_t refresh_offset(unsigned c) const;
  /// LT, one channel's part on an idle channel: time from its start to its last column
  /// command, ps. `bursts` (>= 1) of which `maxg` in the busiest bank group, `acts` ACTs, of
  /// which the first ones of `first_miss` of its `banks` banks (a bank with a row hit lets
  /// the column commands start at once), `pre`: a bank to activate has another row open
  /// (tRP first). max(first column + (bursts - 1) x max(burst, tCCD_S), first column +
  /// (maxg - 1) x max(burst, tCCD_L), [tRP] + tRCD + ACT chain + (maxg - 1) x max(burst,
  /// tCCD_L)), the ACT chain being the issue time of the last ACT: ACTs tRRD_S apart, at
  /// most 4 per tFAW (act_chain_ps()). With everything closed and one burst this is tRCD, so
  /// the part ends tRCD + CL + burst after its start (the AT time of an isolated access).
  ps_t lt_idle_span(std::uint64_t bursts, std::uint64_t maxg, std::uint64_t acts,
                    bool some_hit, bool pre) const {
    const ps_t p = pre ? tRP_ps_ : 0;
    const ps_t col0 = some_hit ? 0 : p + tRCD_ps_;
    ps_t x = col0 + std::max((bursts - 1) * svc_.col_any, (maxg - 1) * svc_.col_group);
    if (acts) x = std::max(x, p + tRCD_ps_ + act_chain_ps(acts) + (maxg - 1) * svc_.col_group);
    return x;
  }
  /// Issue time of the n-th ACT (n >= 1) of a chain on an idle channel, the first at 0:
  /// max((n - 1) x tRRD_S, floor((n - 1) / 4) x tFAW + ((n - 1) mod 4) x tRRD_S,
  /// (n - 1) x tRC / banks) (tRRD_S apart, four per tFAW window, tRC per bank over the banks).
  ps_t act_chain_ps(std::uint64_t n) const {
    return n < kActChain ? act_chain_[n] : act_chain_far(n);
  }
  lt_channel_state lt_state(unsigned c) const;

private:
  ps_t lt_generic(std::uint64_t addr, std::uint64_t len, bool write, ps_t ready);
  ps_t lt_fast(std::uint64_t addr, std::uint64_t len, bool write, ps_t ready);
  ps_t act_chain_far(std::uint64_t n) const;
  static constexpr std::size_t kActChain = 64;
  /// Applies the REF(s) due up to `t` to channel c's LT state: every bank closed; returns the
  /// end of the last of them (due + [tRP if a bank was open] + tRFC) and sets `due` to its
  /// due time.
  ps_t lt_refresh(unsigned c, ps_t t, ps_t& due);
  /// Books a part of `bursts` bursts and `acts` ACTs on channel `c` from `from`: the data
  /// bus server (bursts x max(burst, tCCD_S) / availability), the ACT server (act_service_ps())
  /// and the server of every bank group g the part uses (group_svc[g] = group_service_ps() of
  /// its bursts there, 0: none); each takes the earliest free interval at or after `from`
  /// (gap_server: a gap left before work booked ahead is filled). Returns the part's
  /// service end (the latest of those servers), raises busy_until to it and adds the totals.
  ps_t lt_charge(unsigned c, std::uint64_t bursts, std::uint64_t acts, const ps_t* group_svc,
                 ps_t from);

  /// Memoised decomposition of an access of `n` bursts starting at burst index m (mod the
  /// row period) with row 0: per touched channel its bursts and busiest group, and per
  /// touched bank the row offsets it enters.
  struct lt_bank_part {
    std::uint32_t bank;        ///< channel x banks + flat bank (index into lt_open_)
    std::uint32_t runs;        ///< runs (requests) to this bank
    std::uint32_t changes;     ///< row changes between its consecutive runs
    std::uint32_t first_off, last_off;  ///< row offsets of its first and last run
  };
  struct lt_chan_part {
    std::uint32_t ch;
    std::uint32_t bank_begin, bank_end;  ///< range in lt_plan::banks
    std::uint64_t bursts, maxg;
    std::uint32_t grp;  ///< first of its bank_groups entries in lt_plan::grp_svc
    ps_t col_svc;  ///< the data bus server's service: service_ps(bursts, 0, 0)
    ps_t x_hit;    ///< lt_idle_span() with every bank a row hit (no ACT)
    std::uint64_t acts_closed;  ///< ACTs with every bank closed (after a REF)
    ps_t x_closed;              ///< lt_idle_span() then
    ps_t act_closed;            ///< act_service_ps(acts_closed)
  };
  struct lt_plan {
    std::vector<lt_chan_part> chans;
    std::vector<lt_bank_part> banks;
    std::uint32_t first_bank = 0, first_off = 0;  ///< the first run's bank and row offset
    /// Every bank is entered at row offset 0 only (first_off = last_off = 0, no row change):
    /// the access lies in one row period, the common case of a 4 KiB window. lt_fast then
    /// walks only `bank_index` (each bank's ACT is open != row0; it ends with row0 open).
    bool uniform = false;
    std::vector<std::uint32_t> bank_index;  ///< banks[i].bank, contiguous (uniform plans)
    /// Per channel part, per bank group: group_service_ps() of the part's bursts in it.
    std::vector<ps_t> grp_svc;
    std::uint64_t bursts = 0;               ///< sum of chans[].bursts (= n)
  };
  const lt_plan& plan_for(std::uint64_t m, std::uint64_t n);
  ps_t lt_fast_refresh(const lt_plan& p, const lt_chan_part& cp, ps_t ready,
                       ps_t x, bool idle, bool write);

  /// plan_for() behind a small direct-mapped cache of plan pointers (unordered_map nodes
  /// stay put until plans_ is cleared, which also clears the cache).
  const lt_plan& cached_plan(std::uint64_t m, std::uint64_t n) {
    const std::uint64_t key = (m << 17) | n;
    plan_slot& s = plan_cache_[(key * 0x9E3779B97F4A7C15ull) >> (64 - kPlanCacheBits)];
    if (s.plan != nullptr && s.key == key) return *s.plan;
    const lt_plan& p = plan_for(m, n);
    s = plan_slot{key, &p};
    return p;
  }
  static constexpr unsigned kPlanCacheBits = 8;
  struct plan_slot {
    std::uint64_t key = 0;
    const lt_plan* plan = nullptr;
  };
  /// Largest access (bursts) the fast path memoises; larger ones take the generic path.
  static constexpr std::uint64_t kMaxPlanBursts = 1u << 16;
  /// Smallest access (bursts) the fast path memoises.
  static constexpr std::uint64_t kMinPlanBursts = 8;
  /// Memo size bound (bank parts summed over plans); the memo is cleared beyond it.
  static constexpr std::size_t kMaxPlanBanks = 1u << 20;

  dram_spec spec_;
  address_mapping map_;
  page_policy policy_;
  std::vector<channel> ch_;
  // LT state.
  struct lt_chan {
    ps_t busy_until = 0;    ///< end of its LT work: the latest of the servers below
    gap_server bus;         ///< the data bus server
    gap_server act;         ///< the ACT server
    std::uint64_t bursts = 0, acts = 0;
    ps_t ref_next = 0;      ///< due time of the first REF not yet applied (refresh_offset())
    bool any_open = false;  ///< a bank was opened since the last REF applied
  };
  /// lt_generic(): per touched channel, the sums of the access.
  struct lt_acc {
    std::uint64_t bursts = 0, acts = 0, acts_closed = 0, banks = 0, first_miss = 0;
    ps_t end = 0;  ///< the part's end (its last burst's data end)
    bool pre = false;
    std::vector<std::uint64_t> per_group;
    bool used = false;
  };
  /// lt_charge()'s booking without the totals: bus_svc on channel c's data bus server, act_svc
  /// (0: none) on its ACT server and group_svc[g] (0: none) on each bank group's server, each
  /// split over its earliest free time at or after `from` (gap_server);
  /// returns the latest end (the part's service end) and raises l.busy_until to it.
  ps_t lt_book(unsigned c, lt_chan& l, const ps_t* group_svc, ps_t bus_svc, ps_t act_svc,
               ps_t from) {
    const ps_t h = lt_horizon_;
    ps_t e = l.bus.reserve(from, bus_svc, h);
    if (act_svc != 0) e = std::max(e, l.act.reserve(from, act_svc, h));
    gap_server* const g = lt_grp_.data() + static_cast<std::size_t>(c) * spec_.bank_groups;
    for (unsigned i = 0; i < spec_.bank_groups; ++i)
      if (group_svc[i] != 0) e = std::max(e, g[i].reserve(from, group_svc[i], h));
    l.busy_until = std::max(l.busy_until, e);
    return e;
  }
  /// act_service_ps(svc_, n), from a table for small n (one division per access otherwise).
  ps_t act_svc(std::uint64_t n) const {
    return n < kSvcTab ? act_tab_[n] : act_service_ps(svc_, n);
  }
  /// group_service_ps(svc_, n), from a table for small n.
  ps_t group_svc(std::uint64_t n) const {
    return n < kSvcTab ? grp_tab_[n] : group_service_ps(svc_, n);
  }
  /// service_ps(svc_, n, 0, 0) (the data bus), from a table for small n.
  ps_t bus_svc(std::uint64_t n) const {
    return n < kSvcTab ? bus_tab_[n] : service_ps(svc_, n, 0, 0);
  }
  static constexpr std::size_t kSvcTab = 64;
  ps_t act_tab_[kSvcTab] = {}, grp_tab_[kSvcTab] = {}, bus_tab_[kSvcTab] = {};
  std::vector<lt_chan> lt_;
  /// End of each (channel, bank group) server's work, channel x bank_groups + group: the
  /// tCCD_L spacing of one group's column commands, across accesses.
  std::vector<gap_server> lt_grp_;
  ps_t lt_horizon_ = 0;  ///< lt_forget_before(): no LT access is ready before it
  std::vector<ps_t> grp_svc_;  ///< lt_generic(): per bank group of a part, its service
  std::vector<ps_t> lt_seen_;  ///< lt_busy_before(): per channel, the running maximum
  std::vector<std::uint64_t> lt_open_;  ///< open row per (channel, flat bank); closed_row = ~0
  /// Per (channel, flat bank) the latest last column command of its accesses to its open row
  /// (ps; an access's part end - CL/WL - burst): until then the row has a request queued in AT
  /// terms (lt_first_hit()). It only rises while the row stays open: an access booked into an
  /// earlier free gap (gap_server) does not lower it.
  std::vector<ps_t> lt_bank_col_;
  /// Per (channel, flat bank) the row the bank had open before lt_open_ (closed_row: none)
  /// and the last column command of its last access (ps).
  std::vector<std::uint64_t> lt_prev_;
  std::vector<ps_t> lt_prev_col_;
  /// The LT row rule (FR-FCFS in call order): the first run of an access to flat bank `fb`,
  /// row `r`, ready at `ready`, needs no ACT when `r` is the bank's open row (closed page:
  /// and the bank's last access is still queued at `ready`, lt_bank_col_ > ready: AT
  /// precharges only when no queued request hits the open row) or when `r` is the row the
  /// bank had open before and that row's last access is still queued at `ready`: the AT
  /// FR-FCFS scheduler serves a request that hits a row with queued requests together with
  /// them (oldest row hit first), so two streams alternating over two rows of one bank
  /// (reads and writes of a kernel, the engine beside a kernel) pay one ACT per batch in AT,
  /// not one per access. An access to a row whose requests are all served needs its ACT.
  bool lt_first_hit(std::size_t fb, std::uint64_t r, ps_t ready, bool closed) const {
    if (lt_open_[fb] == r && (!closed || lt_bank_col_[fb] > ready)) return true;
    return lt_prev_[fb] == r && lt_prev_col_[fb] > ready;
  }
  /// After an access that entered flat bank `fb` at row `r1` and left it at row `rk`, its last
  /// column command at `col`: `rk` is open; the row before it is `r1` (when the access changed
  /// rows), else the bank's previously open row (when it differs from `rk`), else unchanged.
  void lt_leave(std::size_t fb, std::uint64_t r1, std::uint64_t rk, ps_t col) {
    const std::uint64_t old = lt_open_[fb];
    if (rk != r1) {
      lt_prev_[fb] = r1;
      lt_prev_col_[fb] = col;
    } else if (old != rk) {
      lt_prev_[fb] = old;
      lt_prev_col_[fb] = lt_bank_col_[fb];
    }
    lt_bank_col_[fb] = old == rk ? std::max(lt_bank_col_[fb], col) : col;
    lt_open_[fb] = rk;
  }
  /// lt_generic(): per (channel, flat bank) the row of its first run in the present access.
  std::vector<std::uint64_t> bank_first_;
  std::vector<lt_acc> acc_;
  std::vector<unsigned> touched_;
  // lt_generic(): per (channel, flat bank) the access that last touched it (stamp) and the
  // row it left; the banks the access touched.
  std::vector<std::uint32_t> bank_stamp_;
  std::vector<std::uint64_t> bank_last_;
  std::vector<std::uint32_t> touched_banks_;
  std::uint32_t stamp_ = 0;
  ps_t lt_busy_ = 0;
  std::uint64_t lt_acts_ = 0, lt_bursts_ = 0, lt_write_bursts_ = 0;
  bool lt_fast_ = true;
  std::unordered_map<std::uint64_t, lt_plan> plans_;
  struct plan_scratch {
    struct bank_acc { std::uint32_t runs = 0, changes = 0, first = 0, last = 0; bool used = false; };
    std::vector<bank_acc> banks;
    std::vector<std::vector<std::uint32_t>> ch_banks;  ///< touched banks, by channel
    std::vector<std::uint64_t> bursts, per_group;
    std::vector<unsigned> chans;
  } scratch_;
  std::size_t plan_banks_ = 0;
  std::vector<plan_slot> plan_cache_;  ///< 1 << kPlanCacheBits slots
  // Cached timing values of the LT estimate.
  service_terms svc_;
  ps_t tCL_ps_ = 0, tWL_ps_ = 0, burst_ps_ = 0, tRP_ps_ = 0, tRCD_ps_ = 0, tRFC_ps_ = 0;
  ps_t refi_ps_ = 0;
  ps_t tFAW_ps_ = 0, tRRD_S_ps_ = 0, tRC_per_bank_ps_ = 0;
  ps_t act_chain_[kActChain] = {};
  /// Ends of a channel's part after its last column command: idle_tail_[write] = CL/WL +
  /// burst; stream_tail_[write] = CL/WL + burst - col_any after the end of its service.
  ps_t idle_tail_[2] = {}, stream_tail_[2] = {};
  /// Burst index and row without a division when burst_bytes() / rows are powers of two
  /// (the presets): burst = addr >> bb_shift_ (bb_shift_ < 0: divide); row & rows_mask_
  /// (rows_mask_ == 0: modulo).
  int bb_shift_ = -1;
  std::uint64_t rows_mask_ = 0;
};

}  // namespace cdma::dram
