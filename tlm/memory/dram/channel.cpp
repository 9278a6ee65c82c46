#include "tlm/memory/dram/channel.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CDMA_DRAM_PICK_AVX2 1
#endif

namespace cdma::dram {

#ifdef CDMA_DRAM_PICK_AVX2
namespace {
// Per 64-bit lane of (sign-flipped) keys, the 32-bit lane pair (2c, 2c + 1) of the command c
// (2c: the key's low three bits): the index vector with which _mm256_permutevar8x32_epi32
// selects 64-bit entry c of a 4-entry table (it reads the low three bits of each index).
__attribute__((target("avx2"), always_inline)) inline __m256i lane_pair(__m256i key) {
  return _mm256_or_si256(_mm256_shuffle_epi32(key, 0xA0), _mm256_set1_epi64x(1ll << 32));
}
}  // namespace
#endif

const char* policy_name(page_policy p) { return p == page_policy::open ? "open" : "closed"; }
const char* scheduler_name(scheduler s) { return s == scheduler::fcfs ? "fcfs" : "frfcfs"; }

channel::channel(const dram_spec& spec, page_policy pp, scheduler sch, ps_t first_refresh_ps)
    : nbanks_(spec.banks()), soa_n_((spec.banks() + 3u) / 4u * 4u),
      bpg_(spec.banks_per_group), policy_(pp), sched_(sch),
      bpg_recip_(((1ull << 24) + spec.banks_per_group - 1) / spec.banks_per_group),
      ref_due_(spec.t.tREFI == 0 ? kNever
                                 : (first_refresh_ps ? first_refresh_ps : spec.ps(spec.t.tREFI))),
      to_col_{spec.ps(spec.t.tRCD), spec.ps(spec.t.tRP + spec.t.tRCD), 0, 0},
      tRRD_L_ps_(spec.ps(spec.t.tRRD_L)), tCCD_L_ps_(spec.ps(spec.t.tCCD_L)),
      rd_done_(spec.ps(spec.t.tCL) + spec.burst_ps()),
      wr_done_(spec.ps(spec.t.tWL) + spec.burst_ps()),
      min_done_(spec.ps(std::min(spec.t.tCL, spec.t.tWL)) + spec.burst_ps()), chk_(spec),
      refi_(spec.ps(spec.t.tREFI)), spec_(spec) {
  if (spec.banks() > 256)  // the scheduler's sort key carries the bank in 8 bits
    throw std::invalid_argument("dram channel: at most 256 banks per channel, the spec has " +
                                std::to_string(spec.banks()));
  soa_.assign(2 * std::size_t{soa_n_}, kIdle);  // local: kIdle
  std::fill(soa_key(), soa_key() + soa_n_, kIdleKey ^ kKeyFlip);
  soa_qi_.assign(soa_n_, kNone);
#ifdef CDMA_DRAM_PICK_AVX2
  __builtin_cpu_init();  // needed when this runs before main (a static channel)
  avx2_ = __builtin_cpu_supports("avx2");
#endif
  fast_pick_ = avx2_ && sched_ == scheduler::frfcfs;
  for (unsigned f = 0; f < spec.banks(); ++f)  // exact for every f < 256; checked here
    if (bg_of(f) != f / bpg_ || ba_of(f) != f % bpg_)
      throw std::logic_error("dram channel: bank-group reciprocal inexact");
}

void channel::submit(const request& r) {
  const unsigned flat = r.bank_group * bpg_ + r.bank;
  // The lines the request goes to (its bank's line, the slot it will take), loaded while
  // advance() issues the earlier commands.
  __builtin_prefetch(&bank(flat), 1);
  if (free_ != kNone) __builtin_prefetch(&pool_[free_], 1);
  advance(r.arrival);
  bank_state& b = bank(flat);
  const std::uint32_t s = enqueue(b, r);
  if (b.open && b.hit == kNone && r.row == b.open_row) b.hit = s;
  ++queued_;
  pick_after_submit(flat);
}

__attribute__((always_inline)) inline std::uint32_t channel::enqueue(bank_state& b,
                                                                      const request& r) {
  std::uint32_t s = free_;
  if (s != kNone) {
    free_ = pool_[s].next;
  } else {
    s = static_cast<std::uint32_t>(pool_.size());
    pool_.emplace_back();
  }
  slot& q = pool_[s];
  q.tag = r.tag;
  q.arrival = r.arrival;
  q.seq = seq_++;
  q.row = r.row;
  q.bursts = q.left = std::max(1u, r.bursts);
  q.next = kNone;
  q.write = r.write;
  q.activated = false;
  if (b.head == kNone) b.head = s;
  else pool_[b.tail].next = s;
  b.tail = s;
  return s;
}

__attribute__((always_inline)) inline void channel::dequeue(bank_state& b, std::uint32_t s) {
  const std::uint32_t nx = pool_[s].next;
  if (b.head == s) {
    b.head = nx;
    if (nx == kNone) b.tail = kNone;
  } else {
    std::uint32_t p = b.head;
    while (pool_[p].next != s) p = pool_[p].next;
    pool_[p].next = nx;
    if (b.tail == s) b.tail = p;
  }
  pool_[s].next = free_;
  free_ = s;
}

__attribute__((always_inline)) inline void channel::refresh_candidate(unsigned flat) {
  refresh_candidate_after<command::REF>({bg_of(flat), flat});
}

template <command After>
__attribute__((always_inline)) inline void channel::refresh_candidate_after(
    timing_checker::bank_at at) {
  const unsigned flat = at.flat;
  const bank_state& b = bank(flat);
  const std::uint32_t qi = qi_of(b);
  soa_qi_[flat] = qi;
  if (qi == kNone) {
    soa_local()[flat] = kIdle;
    soa_key()[flat] = kIdleKey ^ kKeyFlip;
    return;
  }
  const slot& q = pool_[qi];
  // The key: (not a column command) << 63 | age << kKeyAge | bank << kKeyBank | 2 x command,
  // stored with its top bit flipped (signed order = the keys' unsigned order).
  const std::uint64_t common = (q.seq << kKeyAge) | (std::uint64_t{flat} << kKeyBank);
  auto set = [&](std::uint64_t cmd_bits, ps_t local) {
    soa_key()[flat] = (common | cmd_bits) ^ kKeyFlip;
    soa_local()[flat] = local;
  };
  constexpr std::uint64_t row_cmd = 1ull << 63;
  constexpr auto bits = [](command c) { return 2 * static_cast<std::uint64_t>(c); };
  // Right after a PRE the bank is closed: an ACT. Right after an ACT the candidate is the
  // request the row was opened for (the oldest to that row: a column command); that is
  // checked here, not assumed. Otherwise (or if not) the command from the bank state.
  if (After == command::PRE || !b.open) {
    set(row_cmd | bits(command::ACT), chk_.bank_local_as<command::ACT>(at, q.arrival));
  } else if (b.open_row == q.row) {
    // RD or WR (the same bank-local rules); bits(WR) = bits(RD) + 2.
    set(bits(command::RD) + 2 * std::uint64_t{q.write},
        chk_.bank_local_as<command::RD>(at, q.arrival));
  } else {
    set(row_cmd | bits(command::PRE), chk_.bank_local_as<command::PRE>(at, q.arrival));
  }
}

template <command C>
__attribute__((always_inline)) inline void channel::update_group(unsigned bg, ps_t t) {
  // bank_local() is a max of terms; the group term (gr.act + tRRD_L for ACT, gr.col + tCCD_L
  // for RD/WR) is the only one a command to another bank of the group changes, and it rises
  // to t + that timing (commands issue in time order), so max() with it is the new value.
  // Branch-free over the group: per candidate command the bound it receives (0: none, for
  // PRE and for the other command class). No bank needs to be skipped: an idle bank keeps
  // kIdle (every bound is far below it), a dirty bank is recomputed before its next use
  // (pick_requests()), and the issued bank is recomputed by issue() right after.
  static_assert(C == command::ACT || C == command::RD || C == command::WR,
                "only ACT and column commands change a group rule");
  constexpr bool col = C != command::ACT;
  const ps_t bound = t + (col ? tCCD_L_ps_ : tRRD_L_ps_);
  const ps_t act_bound = col ? 0 : bound, col_bound = col ? bound : 0;
  const unsigned bpg = bpg_;
  const unsigned g0 = bg * bpg;  // the group's first bank
#ifdef CDMA_DRAM_PICK_AVX2
  if (avx2_ && bpg == 4) {  // g0 is a multiple of 4: one vector, inside the padded arrays
    raise_group4_avx2(g0, act_bound, col_bound);
    return;
  }
#endif
  const ps_t tab[4] = {act_bound, 0, col_bound, col_bound};
  std::uint64_t* lp = soa_local() + g0;
  const std::uint64_t* kp = soa_key() + g0;
  for (unsigned i = 0; i < bpg; ++i) lp[i] = std::max(lp[i], tab[key_cmd(kp[i])]);
}

#ifdef CDMA_DRAM_PICK_AVX2
__attribute__((target("avx2"))) void channel::raise_group4_avx2(unsigned g0, ps_t act_bound,
                                                                ps_t col_bound) {
  // Per bank the bound of its candidate command (the lane selector, from the key's command
  // bits, picks entry `command` of {act_bound, 0, col_bound, col_bound}); all values are
  // below 2^63, so the signed maximum is the unsigned one. The table is built in a register:
  // a vector load of four scalars just stored would wait for the stores (no store-to-load
  // forwarding across them).
  auto* lp = reinterpret_cast<__m256i*>(soa_local() + g0);
  const __m256i tab = _mm256_set_epi64x(static_cast<long long>(col_bound),
                                        static_cast<long long>(col_bound), 0,
                                        static_cast<long long>(act_bound));
  const __m256i b = _mm256_permutevar8x32_epi32(
      tab, lane_pair(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(soa_key() + g0))));
  const __m256i l = _mm256_loadu_si256(lp);
  _mm256_storeu_si256(lp, _mm256_blendv_epi8(l, b, _mm256_cmpgt_epi64(b, l)));
}
#endif

void channel::refresh_dirty() {
  // (Candidates are independent of each other: the order does not matter.)
  for (unsigned w = 0; w < 4; ++w) {
    for (std::uint64_t m = dirty_[w]; m != 0; m &= m - 1)
      refresh_candidate(w * 64 + static_cast<unsigned>(__builtin_ctzll(m)));
    dirty_[w] = 0;
  }
  dirty_any_ = false;
}

__attribute__((always_inline)) inline void channel::pick_fast() {
#ifdef CDMA_DRAM_PICK_AVX2
  // (fast_pick_ implies avx2_.) As pick_requests(): the minimum (time << 64 | key) of the
  // candidates, the bound left to completion_bound().
  // The self-checks of pick_requests() run here too, so the tests check this path.
  const unsigned __int128 best = pick_soa_avx2();
  bound_valid_ = false;
  if (check_pick_) {
    check_pick_state();
    check_pick_choice(best, false, 0);
  }
  const ps_t bt = static_cast<ps_t>(best >> 64);
  if (bt >= kIdle) {  // cannot happen with queued requests
    req_ = choice{};
    bound_ = kNever;
    bound_valid_ = true;
    return;
  }
  const std::uint64_t key = static_cast<std::uint64_t>(best);
  choose(static_cast<unsigned>(key >> kKeyBank) & 0xffu, key, bt);
#else
  pick_requests();
#endif
}

void channel::check_pick_state() {
  // The incrementally raised channel-wide bounds are the present ones.
  const timing_checker::channel_bounds r = chk_.channel_wide();
  for (int i = 0; i < 4; ++i)
    if (r.b[i] != cb_.b[i]) {
      ++cb_mismatches_;
      break;
    }
  // Every kept bank-local time is the recomputed one.
  for (unsigned f = 0; f < static_cast<unsigned>(nbanks_); ++f) {
    const std::uint32_t qi = qi_of(bank(f));
    const ps_t want =
        qi == kNone ? kIdle
                    : chk_.bank_local(static_cast<command>(key_cmd(soa_key()[f])), bg_of(f),
                                      ba_of(f), pool_[qi].arrival);
    if (soa_local()[f] != want || soa_qi_[f] != qi) ++local_mismatches_;
  }
}

void channel::check_pick_choice(unsigned __int128 best, bool have_bound, ps_t bnd) {
  // The choice and the completion bound (computed now when the pick left it) against the
  // reference scan.
  ps_t rb = kNever;
  const unsigned __int128 ref = pick_reference(rb);
  ++picks_checked_;
  if (ref != best || rb != (have_bound ? bnd : bound_pass())) ++pick_mismatches_;
}

void channel::pick_requests() {
  // (Out of line: no bank is dirty at most picks, issue() recomputes the issued bank.)
  if (dirty_any_) refresh_dirty();
  if (!cb_valid_) {  // recomputed only after idle refreshes; else kept by issue()
    cb_ = chk_.channel_wide();
    cb_valid_ = true;
  }
  if (check_pick_) check_pick_state();
  bound_ = kNever;
  bound_valid_ = true;
  if (queued_ == 0) {
    req_ = choice{};
    return;
  }
  const unsigned nb = static_cast<unsigned>(nbanks_);
  // The candidate of bank f issues at et = max(channel-wide bound of its command, its
  // bank-local bound) and its first column command is not before et + to_col_[command].
  auto et_of = [&](unsigned f) {
    return std::max(cb_.b[key_cmd(soa_key()[f])], soa_local()[f]);
  };
  ps_t bnd = kNever;
  unsigned win = 0;
  ps_t bt = kNever;
  std::uint64_t key = ~0ull;  ///< the winner's key
  if (sched_ == scheduler::fcfs) {
    // Strict arrival order: only the oldest request of the channel may issue commands.
    std::uint64_t oseq = ~0ull;
    for (unsigned f = 0; f < nb; ++f) {
      const bank_state& b = bank(f);
      if (b.head == kNone) continue;
      if (pool_[b.head].seq < oseq) {
        oseq = pool_[b.head].seq;
        win = f;
      }
      bnd = std::min(bnd, et_of(f) + to_col_[key_cmd(soa_key()[f])]);
    }
    bt = et_of(win);
    key = soa_key()[win] ^ kKeyFlip;
  } else {
    // FR-FCFS: per bank the oldest row hit, else the oldest request; across banks the
    // command that can issue first (ties: column commands, then age): the minimum of
    // (time << 64 | key), unique since ages are; a bank's candidate c issues at
    // max(cb[c], local). One branch-free pass over the banks' arrays (AVX2: 4 banks per
    // instruction; the completion bound is left to completion_bound(), bound_valid_),
    // else the scalar reference scan (which gives the bound too); both give the same minimum.
    using u128 = unsigned __int128;
    u128 best;
#ifdef CDMA_DRAM_PICK_AVX2
    if (avx2_) {
      best = pick_soa_avx2();
      bound_valid_ = false;
    } else
#endif
      best = pick_reference(bnd);
    if (check_pick_) check_pick_choice(best, bound_valid_, bnd);
    bt = static_cast<ps_t>(best >> 64);
    if (bt >= kIdle) {  // cannot happen with queued requests
      req_ = choice{};
      bound_ = kNever;
      bound_valid_ = true;
      return;
    }
    key = static_cast<std::uint64_t>(best);
    win = static_cast<unsigned>(key >> kKeyBank) & 0xffu;
  }
  choose(win, key, bt);
  bound_ = bnd;  // (not valid after the AVX2 pick: bound_valid_ is then false)
}

ps_t channel::bound_pass() const {
#ifdef CDMA_DRAM_PICK_AVX2
  if (avx2_) return bound_soa_avx2();
#endif
  ps_t b;
  pick_reference(b);
  return b;
}

#ifdef CDMA_DRAM_PICK_AVX2
namespace {
// Lane select on 64-bit lanes by the sign bit of each lane of `m` (a comparison result).
__attribute__((target("avx2"), always_inline)) inline __m256i sel64(__m256i a, __m256i b,
                                                                   __m256i m) {
  return _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(a), _mm256_castsi256_pd(b),
                                              _mm256_castsi256_pd(m)));
}
// One step of the lane reduction of pick_soa_avx2(): per lane the lexicographic minimum of
// (emin, kmin) and (e2, k2) (signed; keys sign-flipped).
__attribute__((target("avx2"), always_inline)) inline void pick_fold(__m256i& emin,
                                                                     __m256i& kmin, __m256i e2,
                                                                     __m256i k2) {
  const __m256i take = _mm256_or_si256(
      _mm256_cmpgt_epi64(emin, e2),
      _mm256_and_si256(_mm256_cmpeq_epi64(emin, e2), _mm256_cmpgt_epi64(kmin, k2)));
  emin = sel64(emin, e2, take);
  kmin = sel64(kmin, k2, take);
}
// Per lane the (signed) minimum of a and b.
__attribute__((target("avx2"), always_inline)) inline __m256i min64(__m256i a, __m256i b) {
  return sel64(a, b, _mm256_cmpgt_epi64(a, b));
}
// Banks i*4 .. i*4 + 3: per lane the candidate's command as a lane selector (lane_pair()),
// its issue time e = max(cb_.b[command], local) and its key k (sign-flipped).
__attribute__((target("avx2"), always_inline)) inline void pick_eval(
    const __m256i* lp, const __m256i* kp, std::size_t i, __m256i cbv, __m256i& s, __m256i& e,
    __m256i& k) {
  const __m256i l = _mm256_loadu_si256(lp + i);
  k = _mm256_loadu_si256(kp + i);                          // already sign-flipped
  s = lane_pair(k);                                        // the candidate's command
  const __m256i c = _mm256_permutevar8x32_epi32(cbv, s);  // cb_.b[command]
  e = sel64(c, l, _mm256_cmpgt_epi64(l, c));               // max
}
// Banks i*4 .. i*4 + 3: per lane the completion bound e + to_col_[command], sign-flipped
// (compared in unsigned order: up to kIdle + to_col_).
__attribute__((target("avx2"), always_inline)) inline __m256i bound_eval(
    const __m256i* lp, const __m256i* kp, std::size_t i, __m256i cbv, __m256i tcv,
    __m256i sign) {
  __m256i s, e, k;
  pick_eval(lp, kp, i, cbv, s, e, k);
  const __m256i t = _mm256_permutevar8x32_epi32(tcv, s);  // to_col_[command]
  return _mm256_xor_si256(_mm256_add_epi64(e, t), sign);
}
}  // namespace

// pick_reference()'s minimum (time << 64 | key) on the arrays of soa_, 4 banks per step
// (the 16 banks of every preset in four unrolled steps). All values compared are below 2^63
// (times and kIdle = 2^63 - 1) except the keys (kIdleKey for an idle bank; kept sign-flipped
// in soa_key()): those are compared as unsigned through the sign-bit flip.
__attribute__((target("avx2"))) unsigned __int128 channel::pick_soa_avx2() const {
  const std::size_t n = soa_n_;
  const __m256i cbv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cb_.b));
  // Per lane the minimum (time, key).
  __m256i emin, kmin, s;
  const auto* lp = reinterpret_cast<const __m256i*>(soa_local());
  const auto* kp = reinterpret_cast<const __m256i*>(soa_key());
  if (n == 16) {
    // Folded as a tree ((0, 1), (2, 3)), not a chain 0, 1, 2, 3: the minimum is the same (the
    // lexicographic minimum is associative and commutative; equal (time, key) pairs are equal
    // values), and the pick, which the next command waits for, is a fold shorter in latency.
    __m256i e1, k1, e2, k2, e3, k3;
    pick_eval(lp, kp, 0, cbv, s, emin, kmin);
    pick_eval(lp, kp, 1, cbv, s, e1, k1);
    pick_eval(lp, kp, 2, cbv, s, e2, k2);
    pick_eval(lp, kp, 3, cbv, s, e3, k3);
    pick_fold(emin, kmin, e1, k1);
    pick_fold(e2, k2, e3, k3);
    pick_fold(emin, kmin, e2, k2);
  } else {
    pick_eval(lp, kp, 0, cbv, s, emin, kmin);  // (n >= 4: padded to a multiple of 4)
    for (std::size_t i = 1; i < n / 4; ++i) {
      __m256i e, k;
      pick_eval(lp, kp, i, cbv, s, e, k);
      pick_fold(emin, kmin, e, k);
    }
  }
  // Reduction over the 4 lanes in registers: the lexicographic minimum (time, key) of lane
  // pairs (2, 3) vs (0, 1), then of the lanes 1 vs 0.
  pick_fold(emin, kmin, _mm256_permute4x64_epi64(emin, 0x4E), _mm256_permute4x64_epi64(kmin, 0x4E));
  pick_fold(emin, kmin, _mm256_shuffle_epi32(emin, 0x4E), _mm256_shuffle_epi32(kmin, 0x4E));
  const std::int64_t e = _mm_cvtsi128_si64(_mm256_castsi256_si128(emin));
  const std::int64_t k = _mm_cvtsi128_si64(_mm256_castsi256_si128(kmin));
  const std::uint64_t key = static_cast<std::uint64_t>(k) ^ kKeyFlip;
  return (static_cast<unsigned __int128>(static_cast<std::uint64_t>(e)) << 64) | key;
}

// pick_reference()'s completion bound on the arrays of soa_ (min over the banks of
// max(cb_.b[command], local) + to_col_[command], in unsigned order through the sign flip).
__attribute__((target("avx2"))) ps_t channel::bound_soa_avx2() const {
  const std::size_t n = soa_n_;
  const __m256i cbv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cb_.b));
  const __m256i tcv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(to_col_));
  const __m256i sign = _mm256_set1_epi64x(INT64_MIN);
  const auto* lp = reinterpret_cast<const __m256i*>(soa_local());
  const auto* kp = reinterpret_cast<const __m256i*>(soa_key());
  __m256i bmin = bound_eval(lp, kp, 0, cbv, tcv, sign);
  if (n == 16) {  // (a tree, as in pick_soa_avx2())
    const __m256i b1 = bound_eval(lp, kp, 1, cbv, tcv, sign);
    const __m256i b2 = bound_eval(lp, kp, 2, cbv, tcv, sign);
    const __m256i b3 = bound_eval(lp, kp, 3, cbv, tcv, sign);
    bmin = min64(min64(bmin, b1), min64(b2, b3));
  } else {
    for (std::size_t i = 1; i < n / 4; ++i)
      bmin = min64(bmin, bound_eval(lp, kp, i, cbv, tcv, sign));
  }
  bmin = min64(bmin, _mm256_permute4x64_epi64(bmin, 0x4E));
  bmin = min64(bmin, _mm256_shuffle_epi32(bmin, 0x4E));
  return static_cast<ps_t>(_mm_cvtsi128_si64(_mm256_castsi256_si128(bmin))) ^ (1ull << 63);
}
#endif

unsigned __int128 channel::pick_reference(ps_t& bnd) const {
  using u128 = unsigned __int128;
  u128 best = ~u128{0};
  bnd = kNever;
  for (unsigned f = 0; f < static_cast<unsigned>(nbanks_); ++f) {
    const std::uint64_t key = soa_key()[f] ^ kKeyFlip;
    const unsigned cmd = key_cmd(key);
    const ps_t et = std::max(cb_.b[cmd], soa_local()[f]);  // kIdle: no requests
    const u128 k = (static_cast<u128>(et) << 64) | key;
    best = k < best ? k : best;
    bnd = std::min(bnd, et + to_col_[cmd]);
  }
  return best;
}

void channel::finish_pick_overrides() {
  choice best = req_;
  if (policy_ == page_policy::closed) {
    // Closed page: a bank with an open row and no queued request for that row precharges.
    for (unsigned f = 0; f < nbanks_; ++f) {
      const bank_state& b = bank(f);
      if (!b.open) continue;
      if (b.hit != kNone) continue;
      const auto e = chk_.earliest(command::PRE, bg_of(f), ba_of(f), 0);
      if (e.time < best.time) {
        best.time = e.time;
        best.cmd = command::PRE;
        best.bank = f;
        best.qi = kNone;
        best.key = ~0ull;
        best.not_before = 0;
      }
    }
  }
  // Refresh (all-bank) has priority once due: precharge the open banks, then REF.
  if (ref_due_ != kNever && ref_due_ <= best.time) {
    choice r;
    if (chk_.open_banks() > 0) {
      for (unsigned f = 0; f < nbanks_; ++f) {
        if (!bank(f).open) continue;
        const auto e = chk_.earliest(command::PRE, bg_of(f), ba_of(f), ref_due_);
        if (e.time < r.time) {
          r.time = e.time;
          r.cmd = command::PRE;
          r.bank = f;
        }
      }
    } else {
      r.time = chk_.earliest(command::REF, 0, 0, ref_due_).time;
      r.cmd = command::REF;
    }
    r.not_before = ref_due_;
    best = r;
  }
  ovr_ = best;
  use_ovr_ = true;
  cached_ = true;
}

void channel::pick_after_submit(unsigned flat) {
  if (!cached_ || sched_ != scheduler::frfcfs || policy_ != page_policy::open) {
    mark_dirty(flat);
    cached_ = false;
    return;
  }
  // cached_: pick() ran after the last change, so no other bank is dirty and cb_, req_ and
  // bound_ describe the other banks; only this bank's candidate can have changed.
  // (The key names the candidate request (its age) and command, so an unchanged key and
  // bank-local time is an unchanged candidate.)
  const std::uint64_t old_key = soa_key()[flat];
  const ps_t old_local = soa_local()[flat];
  const bool chosen = req_.time != kNever && req_.bank == flat;
  // The bound of the candidates as they were (the last pick's, left to be computed), then
  // lowered by this bank's new candidate below; not needed when the pick is redone.
  if (!chosen && !bound_valid_) {
    bound_ = bound_pass();
    bound_valid_ = true;
  }
  refresh_candidate(flat);
  const std::uint64_t key = soa_key()[flat] ^ kKeyFlip;
  const ps_t local = soa_local()[flat];
  if (chosen) {
    if ((key ^ kKeyFlip) == old_key && local == old_local) return;
    pick();  // the chosen bank's candidate changed: choose again among all banks
    return;
  }
  const unsigned cmd = key_cmd(key);
  const ps_t et = std::max(cb_.b[cmd], local);
  if (et < req_.time || (et == req_.time && key < req_.key)) choose(flat, key, et);
  bound_ = std::min(bound_, et + to_col_[cmd]);
  finish_pick();
}

__attribute__((always_inline)) inline void channel::issue(const choice& c) {
  // One branch on the command, then straight-line code for it (checker, bounds, bank state).
  dispatch_command(c.cmd, [&](auto k) { issue_as<decltype(k)::value>(c); });
}

template <command C>
__attribute__((always_inline)) inline void channel::issue_as(const choice& c) {
  // (Copies: `c` is a member of this channel, which the stores below could alias.)
  const ps_t t = c.time;
  const unsigned flat = c.bank;
  const std::uint32_t qi = c.qi;
  const timing_checker::bank_at at{bg_of(flat), flat};
  // ACT, RD and WR are always a request's command; PRE may be a refresh / closed-page one.
  const ps_t not_before =
      (C == command::PRE || C == command::REF) && qi == kNone ? c.not_before : pool_[qi].arrival;
  chk_.record_issue_as<C>(at, t, not_before);
  // The channel-wide bounds: raised by the terms this command changed (cb_ is valid here:
  // a pick chose the command).
  if (cb_valid_) chk_.raise_channel_wide_as<C>(cb_, t);
  bank_state& b = bank(flat);
  // Bank-local bounds change for this bank (all rules) and, after ACT (tRRD_L) or a column
  // command (tCCD_L), for the banks of its group.
  if constexpr (C == command::ACT || C == command::RD || C == command::WR)
    update_group<C>(at.group, t);
  if constexpr (C == command::REF) {
    ref_due_ += refi_;
    cached_ = false;
    return;
  } else if constexpr (C == command::ACT) {
    slot& q = pool_[qi];
    b.open = true;
    b.open_row = q.row;
    q.activated = true;
    ++misses_;
    // A closed bank has no row hit (hit == kNone), so its candidate is its oldest request
    // (the head, both schedulers): that request is then the oldest one to the open row.
    if (qi == b.head) b.hit = qi;
    else rescan(b);
  } else if constexpr (C == command::PRE) {
    b.open = false;
    b.hit = kNone;
  } else {  // RD, WR
    slot& q = pool_[qi];
    hits_ += (q.left == q.bursts) & !q.activated;  // (bitwise: no data-dependent branch)
    if (--q.left == 0) {
      if (done_pf_base_) __builtin_prefetch(done_pf_base_ + (q.tag << done_pf_shift_));
      done_.push_back({q.tag, t + (C == command::RD ? rd_done_ : wr_done_), q.bursts, q.write});
      dequeue(b, qi);
      --queued_;
      rescan(b);
    } else {
      // Bursts left: the bank's candidate is the same request and command (same queue, same
      // open row, same row hit), with the same key; only its bank-local time changed.
      soa_local()[flat] = chk_.bank_local(C, at, q.arrival);
      cached_ = false;
      return;
    }
  }
  // The issued bank's candidate (all its bank-local rules changed), computed now rather than
  // at the next pick: nothing changes the bank or the checker in between.
  refresh_candidate_after<C>(at);
  cached_ = false;
}

__attribute__((always_inline)) inline void channel::rescan(bank_state& b) {
  b.hit = kNone;
  if (!b.open) return;
  for (std::uint32_t s = b.head; s != kNone; s = pool_[s].next)
    if (pool_[s].row == b.open_row) {
      b.hit = s;
      return;
    }
}

void channel::advance(ps_t until) {
  for (;;) {
    if (!cached_) pick();
    const choice& nx = next();
    if (nx.time == kNever || nx.time >= until) return;
    // An idle channel (nothing queued; a REF chosen, so every bank is closed) refreshes every
    // tREFI: all its REFs before `until` at once, with the same times and counts as one by
    // one (a long idle stretch, e.g. LT statistics at the end of a long layer, would
    // otherwise cost one pick and one record per tREFI: ~3 M REFs per simulated second on 12
    // GDDR5 channels).
    if (nx.cmd == command::REF && queued_ == 0 && nx.time == ref_due_ && until < kIdle) {
      const std::uint64_t n = (until - 1 - ref_due_) / refi_ + 1;  // REFs due before until
      if (n > 1 && chk_.record_idle_refreshes(ref_due_, refi_, n)) {
        ref_due_ += n * refi_;
        cached_ = false;
        cb_valid_ = false;
        continue;
      }
    }
    issue(nx);
  }
}

ps_t channel::next_command_time() {
  if (queued_ == 0) return kNever;
  if (!cached_) pick();
  return next().time;
}

ps_t channel::completion_bound() {
  if (queued_ == 0) return kNever;
  if (!cached_) pick();
  if (!bound_valid_) {  // the pick left it: one pass over the candidates the pick saw
    bound_ = bound_pass();
    bound_valid_ = true;
  }
  // Commands issue in time order, so no column command comes before the next command
  // (which may be a refresh that holds up the requests' earlier bounds).
  const ps_t b = std::max(bound_, next().time);
  return b == kNever ? kNever : b + min_done_;
}

}  // namespace cdma::dram
