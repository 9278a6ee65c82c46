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
/// then exactly two lines each (not three when they straddle).
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

class channel {
public:
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
  /// min_completion_delay(): fewer wake-ups).
  ps_t completion_bound();
  /// Completed requests since the last take (ordered by issue of their last burst).
  std::vector<completion>& completions() { return done_; }

  std::size_t queued() const { return queued_; }
  const timing_checker& checker() const { return chk_; }
  std::uint64_t row_hits() const { return hits_; }      ///< column commands to an already open row
  std::uint64_t row_misses() const { return misses_; }  ///< ACTs issued for requests
  std::uint64_t refreshes() const { return chk_.commands(command::REF); }
  const dram_spec& spec() const { return spec_; }
  page_policy policy() const { return policy_; }
  scheduler sched() const { return sched_; }

  /// Self-check of the FR-FCFS pick (tests): when on, every pick is also computed by the
  /// reference scan over all banks (scalar, over cand_) and a differing choice or
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
  /// checker's bank_local() recomputed for the bank's candidate (must stay 0).
  std::uint64_t local_mismatches() const { return local_mismatches_; }

private:
  /// (One cache line each: 64 bytes, aligned.)
  struct alignas(64) queued_req { request r; std::uint64_t seq; unsigned left; bool activated; };
  /// A bank's request queue in arrival order: a buffer with a live range [first_, last_),
  /// so that removing the oldest request (the common case: a bank's requests are mostly
  /// served in order) moves nothing, where a vector's erase(begin()) moved every younger
  /// request (a memmove per completed request). Removing another request shifts the shorter
  /// side by one. The buffer is reused from its start when the queue empties; when it is
  /// full, the live part moves to its start if the dead prefix is at least as long, else
  /// the buffer doubles (amortised O(1); it stays within ~4x the longest queue). Indices
  /// (operator[]) count from the oldest request.
  class bank_queue {
  public:
    bank_queue() = default;
    bank_queue(const bank_queue& o) : buf_(o.buf_) {
      first_ = buf_.data() + (o.first_ - o.buf_.data());
      last_ = buf_.data() + (o.last_ - o.buf_.data());
    }
    bank_queue& operator=(const bank_queue& o) {
      if (this != &o) {
        buf_ = o.buf_;
        first_ = buf_.data() + (o.first_ - o.buf_.data());
        last_ = buf_.data() + (o.last_ - o.buf_.data());
      }
      return *this;
    }
    bank_queue(bank_queue&&) noexcept = default;  // the buffer moves: pointers stay valid
    bank_queue& operator=(bank_queue&&) noexcept = default;
    std::size_t size() const { return static_cast<std::size_t>(last_ - first_); }
    bool empty() const { return first_ == last_; }
    queued_req& operator[](std::size_t i) { return first_[i]; }
    const queued_req& operator[](std::size_t i) const { return first_[i]; }
    const queued_req& front() const { return *first_; }
    queued_req& back() { return last_[-1]; }
    void push_back(const queued_req& r) {
      if (last_ == buf_.data() + buf_.size()) make_room();
      *last_++ = r;
    }
    /// Removes the request at index i (the younger ones move down one index).
    void erase_at(std::size_t i) {
      const std::size_t n = size();
      if (i == 0) {
        if (++first_ == last_) first_ = last_ = buf_.data();  // empty: restart at the front
      } else if (i + 1 == n) {
        --last_;
      } else if (i < n - 1 - i) {  // fewer older requests: shift them up by one
        std::copy_backward(first_, first_ + i, first_ + i + 1);
        ++first_;
      } else {
        std::copy(first_ + i + 1, last_, first_ + i);
        --last_;
      }
    }

  private:
    void make_room() {
      const std::size_t n = size();
      const auto dead = static_cast<std::size_t>(first_ - buf_.data());
      if (dead > 0 && dead >= n) {
        std::copy(first_, last_, buf_.data());
      } else {
        std::vector<queued_req> nb(std::max<std::size_t>(8, 2 * buf_.size()));
        std::copy(first_, last_, nb.data());
        buf_.swap(nb);
      }
      first_ = buf_.data();
      last_ = first_ + n;
    }
    std::vector<queued_req> buf_;  ///< storage (its size is the capacity in use)
    queued_req* first_ = nullptr;
    queued_req* last_ = nullptr;
  };
  struct alignas(64) bank_state {  // one cache line
    bank_queue q;  ///< arrival order
    std::uint64_t open_row = 0;
    bool open = false;
    std::size_t hit = npos;  ///< index of the oldest queued request to the open row
  };
  /// Scheduler cache per bank: the FR-FCFS candidate of the bank (its next command, queue
  /// index, sort key) and its bank-local earliest time (bank and bank-group rules and the
  /// arrival; the channel-wide rules are combined in pick(); kept only in soa_local_, not in
  /// `cand`); local = kIdle and key = ~0 for a bank without queued requests. A candidate is recomputed only when a command was
  /// issued to its bank or its queue changed (`dirty`); a command to another bank of its
  /// group raises its bank-local time by the one group rule that changed (tRRD_L after ACT,
  /// tCCD_L after RD/WR) without a recomputation.
  /// Bank-local time of a bank without requests: far in the future, yet far from overflow
  /// when a timing is added to it (simulated times stay far below 2^62 ps = 53 days).
  static constexpr ps_t kIdle = kNever / 2;
  struct alignas(32) cand {  // two per cache line
    /// (not a column command) << 63 | age << 8 | bank: the order of candidates issuing at
    /// equal times (column commands first, then the oldest); ages are unique.
    std::uint64_t key = ~0ull;
    ps_t arrival = 0;           ///< arrival of the candidate request (its not-before bound)
    std::uint32_t qi = 0;       ///< index in the bank queue
    std::uint8_t cmd = 0;       ///< command (ACT, PRE, RD, WR)
  };
  void refresh_candidate(unsigned flat);
  /// refresh_candidate() of every bank in dirty_list_ (which it empties).
  __attribute__((noinline)) void refresh_dirty();
  /// The reference FR-FCFS pick: one pass over every bank's candidate; returns the minimum
  /// (time << 64 | key) and sets `bnd` to the completion bound before min_done_.
  unsigned __int128 pick_reference(ps_t& bnd) const;
  /// pick_reference() on the arrays soa_* with AVX2 (only called when the processor has it).
  unsigned __int128 pick_soa_avx2(ps_t& bnd) const;
  /// update_group() with AVX2 for 4 banks per group (the group's banks are one vector):
  /// soa_local_[g0 + i] = max(soa_local_[g0 + i], bound of the command of bank g0 + i)
  /// (ACT: act_bound, RD/WR: col_bound, PRE: 0).
  void raise_group4_avx2(unsigned g0, ps_t act_bound, ps_t col_bound);
  void mark_dirty(unsigned flat) {
    if (!dirty_[flat]) {
      dirty_[flat] = 1;
      dirty_list_.push_back(flat);
    }
  }
  /// A command `cmd` issued at `t` to bank `flat`: raises the bank-local times of the banks
  /// of its group by the group rule it changed (branch-free over the whole group; the caller
  /// recomputes `flat`'s candidate afterwards).
  void update_group(command cmd, unsigned flat, ps_t t);
  static constexpr std::size_t npos = ~std::size_t{0};
  void rescan(bank_state& b);
  struct choice {
    ps_t time = kNever;
    command cmd = command::ACT;
    unsigned bank = 0;        ///< flat bank index
    std::size_t qi = npos;    ///< index in the bank queue (npos: not a request's command)
    std::uint64_t key = ~0ull;
    ps_t not_before = 0;      ///< the lower bound the time was computed from (arrival, REF due)
  };
  /// The scheduler's choice among the queued requests (req_) and the completion bound, one
  /// pass over the banks; then the refresh / closed-page overrides (finish_pick()).
  void pick() {
    pick_requests();
    finish_pick();
  }
  /// Makes candidate c of `bank` the next command, issuable at t.
  void choose(unsigned bank, const cand& c, ps_t t) {
    req_.time = t;
    req_.cmd = static_cast<command>(c.cmd);
    req_.bank = bank;
    req_.qi = c.qi;
    req_.key = c.key;
    req_.not_before = c.arrival;
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
  // Bank group and bank of a flat bank index: a multiplication by the reciprocal, exact for
  // every flat index < 256 (checked in the constructor); no division, and no table line to
  // load for a channel whose state is not in the cache.
  unsigned bg_of(unsigned flat) const {
    return static_cast<unsigned>((static_cast<std::uint64_t>(flat) * bpg_recip_) >> 24);
  }
  unsigned ba_of(unsigned flat) const { return flat - bg_of(flat) * bpg_; }

  // Layout: the channel's own per-command state first, then the checker (whose per-command
  // state is at its start), so that the lines a command touches are contiguous; the spec
  // and the self-check counters last.
  page_policy policy_;
  scheduler sched_;
  unsigned bpg_;                       ///< spec_.banks_per_group
  std::uint64_t bpg_recip_;            ///< ceil(2^24 / bpg_): bg_of() without a division
  std::vector<bank_state> banks_;
  std::vector<cand> cand_;             ///< per flat bank (see above)
  /// The candidates again as arrays (structure of arrays) for the FR-FCFS pick, one entry
  /// per flat bank, padded to a multiple of 4 banks (padding: an idle bank): bank-local time
  /// (kIdle when idle), key (~0 when idle; stored sign-flipped, see kKeyFlip) and the
  /// candidate command c as the lane pair (2c, 2c + 1) that selects cb_.b[c] and to_col_[c]
  /// from a 4 x 64-bit vector. Key and selector are kept by refresh_candidate() with cand_
  /// (the self-check's reference scan reads them from cand_); the bank-local time exists
  /// only here (refresh_candidate(), update_group(), and issue() after a burst that leaves
  /// the candidate unchanged). The pick is then one branch-free pass over all banks (pick_reference()'s minimum of (max(cb[c], local), key) and its
  /// completion bound), 4 banks per AVX2 instruction when the processor has AVX2
  /// (pick_soa_avx2(); else pick_reference()). No per-command ordered lists to keep.
  /// soa_key_ holds each key with its top bit flipped (key ^ kKeyFlip), so the vector pick
  /// compares keys as signed 64-bit values in their unsigned order without a flip per step.
  std::vector<std::uint64_t, line_allocator<std::uint64_t>> soa_local_, soa_key_, soa_sel_;
  static constexpr std::uint64_t kKeyFlip = 1ull << 63;
  bool avx2_ = false;
  void soa_set(unsigned flat, const cand& c, ps_t local) {
    soa_local_[flat] = local;
    soa_key_[flat] = c.key ^ kKeyFlip;  // signed order = the keys' unsigned order
    const std::uint64_t t = c.cmd & 3u;
    soa_sel_[flat] = (2 * t) | ((2 * t + 1) << 32);
  }
  std::vector<std::uint8_t> dirty_;
  std::vector<unsigned> dirty_list_;
  ps_t tRRD_L_ps_, tCCD_L_ps_;
  ps_t to_col_[4];                     ///< per candidate command: time to a column command
  ps_t refi_, ref_due_;
  ps_t min_done_;
  ps_t rd_done_, wr_done_;        ///< RD / WR command to the end of its burst: CL/WL + burst
  ps_t clock_ = 0;                ///< time of the last command
  std::uint64_t seq_ = 0;
  std::size_t queued_ = 0;
  std::uint64_t hits_ = 0, misses_ = 0;
  bool cached_ = false;           ///< req_, ovr_ / use_ovr_, cb_, bound_ are valid
  choice req_;                    ///< best request command (no refresh / closed-page override)
  bool use_ovr_ = false;          ///< the next command is ovr_ (else req_)
  const choice& next() const { return use_ovr_ ? ovr_ : req_; }
  timing_checker::channel_bounds cb_{};  ///< channel-wide bounds at the last pick
  /// cb_ is the checker's present channel_wide(): recomputed once, then raised by issue()
  /// (timing_checker::raise_channel_wide) for each command; recomputed after idle refreshes.
  bool cb_valid_ = false;
  ps_t bound_ = kNever;           ///< completion_bound() before min_done_
  std::vector<completion> done_;
  timing_checker chk_;
  choice ovr_;                    ///< the next command when a refresh / closed-page override applies
  bool check_pick_ = false;
  std::uint64_t pick_mismatches_ = 0, picks_checked_ = 0, cb_mismatches_ = 0;
  std::uint64_t local_mismatches_ = 0;
  const dram_spec spec_;
};

}  // namespace cdma::dram
