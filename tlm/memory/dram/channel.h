// One DRAM channel's controller: bank machines (open row per bank, per-bank request queues),
// the scheduler (FCFS or FR-FCFS), the command multiplexer (one command at a time, at the
// earliest time the timing checker allows), refresh, and the completion (response) queue.
// Pure C++ and event-driven: there is no clock loop; advance(T) issues, in time order, every
// command whose issue time is before T, given the requests received so far.
//
// Causality: submit() first advances to the request's arrival time, so a command decided at
// time t only ever sees requests that arrived by t (an SC module may therefore call advance()
// lazily, as long as it does so before it needs a completion; see min_completion_delay()).
//
// The scheduling unit is a `request`: a run of bursts in one row of one bank (a TLM
// transaction is cut into such runs by the address decoder). Each burst is one RD/WR command;
// bursts of different requests interleave freely (bank-group interleaving).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

#include "tlm/core/units.h"
#include "tlm/memory/dram/dram_spec.h"
#include "tlm/memory/dram/timing_checker.h"

namespace cdma::dram {

/// std::allocator on 64-byte (cache-line) boundaries: a channel's 16-bank pick arrays are
/// then exactly two lines each (not three when they straddle), and no 32-byte bank record
/// straddles two lines.
template <class T>
struct line_allocator {
  using value_type = T;
  line_allocator() = default;
  template <class U>
  line_allocator(const line_allocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const line_allocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const line_allocator<U>&) const { return false; }
};

enum class page_policy : std::uint8_t { open, closed };
enum class scheduler : std::uint8_t { fcfs, frfcfs };
const char* policy_name(page_policy p);
const char* scheduler_name(scheduler s);

struct request {
  std::uint64_t tag = 0;    ///< owner's id, returned with the completion
  ps_t arrival = 0;         ///< time the request reaches the channel (ps)
  bool write = false;
  unsigned bank_group = 0, bank = 0;
  std::uint64_t row = 0;
  unsigned bursts = 1;      ///< column accesses (>= 1)
};

struct completion {
  std::uint64_t tag;
  ps_t done;        ///< end of the last data burst (ps)
  unsigned bursts;  ///< bursts served
  bool write;
};

/// (Aligned to a cache line: its hot state, at its start, then takes the fewest lines.)
class alignas(64) channel {
public:
  /// `first_refresh_ps`: time of the first REF (then one every tREFI); 0: at tREFI; kNever:
  /// no refresh at all (tests of the timing checker's tREFI rule).
  channel(const dram_spec& spec, page_policy pp = page_policy::open,
          scheduler sch = scheduler::frfcfs, ps_t first_refresh_ps = 0);

  /// Advances to r.arrival (issuing earlier commands) and queues `r`.
  void submit(const request& r);
  /// Issues, in time order, every command whose issue time is < `until`.
  void advance(ps_t until);
  /// Time of the next command (or kNever when nothing is queued: refresh alone does not count).
  ps_t next_command_time();
  static constexpr ps_t kNever = std::numeric_limits<ps_t>::max();
  /// Smallest delay from a column command to its completion (min(CL, WL) + burst), ps:
  /// a completion decided at or after time t is never due before t + this.
  ps_t min_completion_delay() const { return min_done_; }
  /// A lower bound (ps) on the completion time of every request queued so far: no completion
  /// that advance() can produce from now on (until the next submit()) is due before it
  /// (kNever when nothing is queued). Per bank, its candidate's earliest command time plus
  /// the time to reach a column command (PRE: tRP + tRCD, ACT: tRCD), plus min(CL, WL) +
  /// burst, and not before the next command + min(CL, WL) + burst (commands issue in time
  /// order); timing bounds only rise as commands issue, so the bound stays valid. An SC module
  /// may therefore defer advance() until this time (a later bound than next_command_time() +
  /// min_completion_delay(): fewer wake-ups). (Computed from the candidates when first asked
  /// for after a pick: one pass over the banks, not one per command.)
  ps_t completion_bound();
  /// Completed requests since the last take (ordered by issue of their last burst).
  std::vector<completion>& completions() { return done_; }
  /// A hint for the module that takes the completions: when a request completes, the
  /// record at `base + (tag << shift)` (the module's state of that tag, which it reads when
  /// it takes the completion) is prefetched into the cache; nullptr (the default): none.
  /// Prefetching only: no effect on any result. The module calls it again whenever that
  /// storage moves.
  void set_completion_prefetch(const void* base, unsigned shift) {
    done_pf_base_ = static_cast<const char*>(base);
    done_pf_shift_ = shift;
  }

  std::size_t queued() const { return queued_; }
  const timing_checker& checker() const { return chk_; }
  /// Advances to `now` and applies the checker's tREFI rule at `now` (a refresh overdue when
  /// the statistics are read counts as a violation: timing_checker::check_refresh()).
  void check_refresh(ps_t now) {
    advance(now);
    chk_.check_refresh(now);
  }
  std::uint64_t row_hits() const { return hits_; }      ///< column commands to an already open row
  std::uint64_t row_misses() const { return misses_; }  ///< ACTs issued for requests
  std::uint64_t refreshes() const { return chk_.commands(command::REF); }
  const dram_spec& spec() const { return spec_; }
  page_policy policy() const { return policy_; }
  scheduler sched() const { return sched_; }

  /// Self-check of the FR-FCFS pick (tests): when on, every pick is also computed by the
  /// reference scan over all banks (scalar) and a differing choice or
  /// completion bound is counted in pick_mismatches() (must stay 0). Off by default.
  void set_check_pick(bool on) { check_pick_ = on; }
  std::uint64_t pick_mismatches() const { return pick_mismatches_; }
  std::uint64_t picks_checked() const { return picks_checked_; }
  /// Self-check (with set_check_pick(true)): picks at which the channel-wide bounds kept
  /// incrementally (timing_checker::raise_channel_wide) differed from the checker's
  /// channel_wide() (must stay 0).
  std::uint64_t bound_mismatches() const { return cb_mismatches_; }
  /// Self-check (with set_check_pick(true)): bank-local times kept incrementally (a command
  /// raises its bank group's candidates in update_group()) that differed at a pick from the
  /// checker's bank_local() recomputed for the bank's candidate, or kept candidate slots
  /// (soa_qi_) that differed from the bank state's qi_of() (must stay 0).
  std::uint64_t local_mismatches() const { return local_mismatches_; }

private:
  static constexpr std::uint32_t kNone = bank_sched::none;  ///< no request slot
  /// A queued request (48 bytes; four in three cache lines). The requests of a channel live
  /// in one pool (pool_), reused last-freed-first, so the few lines a channel's in-flight
  /// requests occupy stay in the cache; a bank's queue is the list of its requests in
  /// arrival order, linked through `next` (the scheduler mostly serves the oldest, so the
  /// list is mostly removed from at its head; removing another walks from the head).
  struct slot {
    std::uint64_t tag = 0;
    ps_t arrival = 0;
    std::uint64_t seq = 0;     ///< arrival order in the channel (unique)
    std::uint64_t row = 0;
    std::uint32_t bursts = 1;  ///< column accesses of the request (>= 1)
    std::uint32_t left = 1;    ///< column accesses not yet issued
    std::uint32_t next = kNone;  ///< next younger request of the bank
    bool write = false;
    bool activated = false;    ///< an ACT was issued for this request
  };
  /// Bank machine: open row and the bank's queue (bank_sched, kept by the checker in the
  /// line of the bank's timing history).
  using bank_state = bank_sched;
  bank_state& bank(unsigned flat) { return chk_.sched(flat); }
  const bank_state& bank(unsigned flat) const { return chk_.sched(flat); }
  /// Scheduler cache per bank, kept as two arrays (structure of arrays) for the FR-FCFS pick,
  /// padded to a multiple of 4 banks (padding: an idle bank), both in one allocation (soa_):
  ///  - the bank-local earliest time of the bank's candidate command (bank and bank-group
  ///    rules and the arrival; the channel-wide rules are combined in the pick), kIdle for a
  ///    bank without queued requests;
  ///  - the candidate's sort key (kIdleKey when idle), stored with its top bit flipped
  ///    (kKeyFlip) so that the vector pick compares keys as signed 64-bit values in their
  ///    unsigned order: (not a column command) << 63 | age << 11 | bank << 3 | 2 x command:
  ///    the order of candidates issuing at equal times (column commands first, then the
  ///    oldest; ages are unique, so the bank and command bits below the age never decide the
  ///    order). The low three bits, 2c, are the 32-bit lane index of entry c of a 4 x 64-bit
  ///    table (the pick selects cb_.b[c] and to_col_[c] with them: lane_pair() in the .cpp);
  ///    an idle bank's command 3 selects a bound that its kIdle time exceeds.
  /// The FR-FCFS candidate of a bank is its oldest row hit, else its oldest request (FCFS:
  /// the oldest), with the command its bank state asks for; its command (in the key) is
  /// derived, not stored, and its queue slot (qi_of()) is kept in a third array (soa_qi_), so
  /// that the chosen command's request slot is known from the lines the pick just read and
  /// is loaded together with the bank's line, not after it. A candidate is recomputed only when a
  /// command was issued to its bank or its queue changed (dirty); a command to another bank
  /// of its group raises its bank-local time by the one group rule that changed (tRRD_L
  /// after ACT, tCCD_L after RD/WR) without a recomputation (update_group()). The pick is
  /// then one branch-free pass over the two arrays (pick_reference()'s minimum of
  /// (max(cb[c], local), key)), 4 banks per AVX2 instruction when the processor has AVX2
  /// (pick_soa_avx2()); the completion bound (min over the banks of max(cb[c], local) +
  /// to_col_[c]) is a second pass, made only when completion_bound() or a submit needs it
  /// (bound_pass(), about once per request instead of once per command). No per-command
  /// ordered lists to keep.
  /// Bank-local time of a bank without requests: far in the future, yet far from overflow
  /// when a timing is added to it (simulated times stay far below 2^62 ps = 53 days).
  static constexpr ps_t kIdle = kNever / 2;
  static constexpr std::uint64_t kKeyFlip = 1ull << 63;
  static constexpr unsigned kKeyBank = 3;  ///< key bit of the bank field
  static constexpr unsigned kKeyAge = 11;  ///< key bit of the age field
  /// Key of an idle bank: above every request's key, command 3 (low bits 110).
  static constexpr std::uint64_t kIdleKey = ~1ull;
  std::uint64_t* soa_local() { return soa_.data(); }
  const std::uint64_t* soa_local() const { return soa_.data(); }
  std::uint64_t* soa_key() { return soa_.data() + soa_n_; }
  const std::uint64_t* soa_key() const { return soa_.data() + soa_n_; }
  /// Command of a key (flipped or not).
  static unsigned key_cmd(std::uint64_t key) { return (key & 7u) >> 1; }
  /// The queue slot of bank b's candidate request (kNone when its queue is empty).
  std::uint32_t qi_of(const bank_state& b) const {
    return (sched_ == scheduler::fcfs || b.hit == kNone) ? b.head : b.hit;
  }
  void refresh_candidate(unsigned flat);
  /// refresh_candidate() of bank `at` right after command `After` was issued to it (what that
  /// command left in the bank state is then known at compile time; REF: nothing known).
  template <command After> void refresh_candidate_after(timing_checker::bank_at at);
  /// refresh_candidate() of every dirty bank.
  __attribute__((noinline)) void refresh_dirty();
  /// The reference FR-FCFS pick: one pass over every bank's candidate; returns the minimum
  /// (time << 64 | key) and sets `bnd` to the completion bound before min_done_.
  /// (`__extension__`, GCC/Clang: this installed header declares `unsigned __int128` without
  /// a -Wpedantic warning in users' builds; the type and the code are unchanged.)
  __extension__ unsigned __int128 pick_reference(ps_t& bnd) const;
  /// pick_reference()'s minimum with AVX2 (only called when the processor has it); the
  /// completion bound is not computed (bound_valid_ = false): the controller asks for it
  /// about once per request (completion_bound()), the pick runs once per command (~4 per
  /// random 64-B GDDR5 request), so it is computed when asked, by bound_pass().
  __extension__ unsigned __int128 pick_soa_avx2() const;
  /// pick_reference()'s completion bound with AVX2.
  ps_t bound_soa_avx2() const;
  /// pick_reference()'s completion bound (before min_done_, ps) of the present candidates:
  /// bound_soa_avx2() or the scalar scan.
  ps_t bound_pass() const;
  /// update_group() with AVX2 for 4 banks per group (the group's banks are one vector):
  /// local[g0 + i] = max(local[g0 + i], bound of the command of bank g0 + i)
  /// (ACT: act_bound, RD/WR: col_bound, PRE: 0).
  void raise_group4_avx2(unsigned g0, ps_t act_bound, ps_t col_bound);
  /// Marks bank `flat`'s candidate for recomputation at the next pick (banks are marked
  /// only while no pick is cached, so every mark is cleared by that pick's refresh_dirty()).
  void mark_dirty(unsigned flat) {
    dirty_[flat >> 6] |= 1ull << (flat & 63u);
    dirty_any_ = true;
  }
  /// A command C (ACT, RD, WR) issued at `t` to a bank of group `bg`: raises the bank-local
  /// times of the banks of the group by the group rule it changed (branch-free over the whole
  /// group; the caller recomputes the issued bank's candidate afterwards).
  template <command C> void update_group(unsigned bg, ps_t t);
  void rescan(bank_state& b);
  /// Appends a request to bank b's queue (a slot from the pool); returns its slot.
  std::uint32_t enqueue(bank_state& b, const request& r);
  /// Removes slot s from bank b's queue and returns it to the pool.
  void dequeue(bank_state& b, std::uint32_t s);
  struct choice {
    ps_t time = kNever;
    command cmd = command::ACT;
    unsigned bank = 0;          ///< flat bank index
    std::uint32_t qi = kNone;   ///< the request's slot (kNone: not a request's command)
    std::uint64_t key = ~0ull;
    /// The lower bound the time was computed from, for commands that are not a request's
    /// (REF due, 0); a request's command: the request's arrival (read by issue()).
    ps_t not_before = 0;
  };
  /// The scheduler's choice among the queued requests (req_), one pass over the banks (the
  /// completion bound too with the scalar scan; else later, bound_valid_); then the refresh
  /// / closed-page overrides (finish_pick()).
  void pick() {
    if (fast_pick_ && !dirty_any_ && cb_valid_ && queued_ != 0) pick_fast();
    else pick_requests();
    finish_pick();
  }
  /// pick_requests() in its common case (FR-FCFS, AVX2, no dirty bank, the channel-wide
  /// bounds kept, requests queued): the vector pass and choose() alone (inline in the
  /// command loop, defined in the .cpp); with set_check_pick(true) the same self-checks.
  void pick_fast();
  /// Self-checks (set_check_pick(true)): the kept channel-wide bounds and bank-local times
  /// against the checker's recomputation; a choice (and the bound: `bnd` if `have_bound`,
  /// else bound_pass()) against pick_reference(). Counted in the *_mismatches() counters.
  __attribute__((noinline, cold)) void check_pick_state();
  __extension__ __attribute__((noinline, cold)) void check_pick_choice(unsigned __int128 best,
                                                                       bool have_bound, ps_t bnd);
  /// Makes the candidate of `bank` (its key not flipped) the next command, issuable at t.
  void choose(unsigned bank, std::uint64_t key, ps_t t) {
    req_.time = t;
    req_.cmd = static_cast<command>(key_cmd(key));
    req_.bank = bank;
    req_.qi = soa_qi_[bank];
    req_.key = key;
  }
  void pick_requests();
  /// The refresh / closed-page overrides of req_ (inline: the common case, open page and no
  /// refresh due, only marks req_ as the next command).
  void finish_pick() {
    if (policy_ == page_policy::open && !(ref_due_ != kNever && ref_due_ <= req_.time)) {
      use_ovr_ = false;
      cached_ = true;
      return;
    }
    finish_pick_overrides();
  }
  void finish_pick_overrides();
  /// After submit() to bank `flat`: updates req_ from that bank's new candidate alone when
  /// possible (the other banks' candidates and the channel-wide bounds are unchanged).
  void pick_after_submit(unsigned flat);
  void issue(const choice& c);
  /// issue() of a command known at compile time (issue() branches once on the command).
  template <command C> void issue_as(const choice& c);
  // Bank group and bank of a flat bank index: a multiplication by the reciprocal, exact for
  // every flat index < 256 (checked in the constructor); no division, and no table line to
  // load for a channel whose state is not in the cache.
  unsigned bg_of(unsigned flat) const {
    return static_cast<unsigned>((static_cast<std::uint64_t>(flat) * bpg_recip_) >> 24);
  }
  unsigned ba_of(unsigned flat) const { return flat - bg_of(flat) * bpg_; }

  // Layout: the state every command reads or writes first and together (a channel whose
  // state is not in the cache then costs few lines per command: 160 HBM3 pseudo-channels
  // under random traffic), then the checker (whose per-command state is at its start); the
  // overrides, the self-check counters and the spec last.
  std::vector<std::uint64_t, line_allocator<std::uint64_t>> soa_;  ///< local, key (above)
  /// Per bank the candidate's queue slot, qi_of() (kNone when idle); set with the key.
  std::vector<std::uint32_t, line_allocator<std::uint32_t>> soa_qi_;
  std::vector<slot, line_allocator<slot>> pool_;  ///< queued requests of every bank
  std::uint32_t free_ = kNone;    ///< free slots of pool_, linked through `next`
  std::uint32_t nbanks_;          ///< banks of the channel
  std::uint32_t soa_n_;           ///< banks padded to a multiple of 4
  std::uint32_t bpg_;             ///< spec_.banks_per_group
  page_policy policy_;
  scheduler sched_;
  bool avx2_ = false;
  bool cached_ = false;           ///< req_, ovr_ / use_ovr_, cb_, bound_ are valid
  bool use_ovr_ = false;          ///< the next command is ovr_ (else req_)
  /// cb_ is the checker's present channel_wide(): recomputed once, then raised by issue()
  /// (timing_checker::raise_channel_wide) for each command; recomputed after idle refreshes.
  bool cb_valid_ = false;
  bool check_pick_ = false;
  bool fast_pick_ = false;        ///< avx2_ and FR-FCFS: pick() may pick_fast()
  bool dirty_any_ = false;        ///< some bit of dirty_ is set
  std::uint64_t bpg_recip_;       ///< ceil(2^24 / bpg_): bg_of() without a division
  std::size_t queued_ = 0;
  std::uint64_t seq_ = 0;
  ps_t bound_ = kNever;           ///< completion_bound() before min_done_ (if bound_valid_)
  /// bound_ is set; else it is the bound_pass() of the candidates as the last pick saw them
  /// (nothing changed them since: cached_), computed when first needed.
  bool bound_valid_ = true;
  ps_t ref_due_;
  timing_checker::channel_bounds cb_{};  ///< channel-wide bounds at the last pick
  ps_t to_col_[4];                ///< per candidate command: time to a column command
  choice req_;                    ///< best request command (no refresh / closed-page override)
  ps_t tRRD_L_ps_, tCCD_L_ps_;
  ps_t rd_done_, wr_done_;        ///< RD / WR command to the end of its burst: CL/WL + burst
  std::uint64_t hits_ = 0, misses_ = 0;
  std::uint64_t dirty_[4] = {};   ///< banks whose candidate is to be recomputed (bit mask)
  std::vector<completion> done_;
  ps_t min_done_;
  const char* done_pf_base_ = nullptr;  ///< set_completion_prefetch()
  unsigned done_pf_shift_ = 0;
  const choice& next() const { return use_ovr_ ? ovr_ : req_; }
  timing_checker chk_;
  choice ovr_;                    ///< the next command when a refresh / closed-page override applies
  ps_t refi_;
  std::uint64_t pick_mismatches_ = 0, picks_checked_ = 0, cb_mismatches_ = 0;
  std::uint64_t local_mismatches_ = 0;
  const dram_spec spec_;
};

}  // namespace cdma::dram
