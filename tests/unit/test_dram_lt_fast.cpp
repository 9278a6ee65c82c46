// dram_system::lt_access: the memoised fast path (per-bank decomposition keyed by the burst
// index modulo the row period) must give exactly what the generic path (split() burst by
// burst) gives: the same returned time for every access and, after every access, the same
// per-channel LT state (end of LT work, bursts, ACTs, open row of every bank) and totals.
// Checked for every preset, both page policies, on sequential, random and odd-sized accesses
// (including empty ones, accesses across the end of memory and accesses larger than the
// memoised limit), for a custom mapping with the row on top (fast path) and for mappings where
// the row is not the top slice or is split (the fallback: the generic path).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tlm/memory/dram/dram_spec.h"
#include "tlm/memory/dram/dram_system.h"

using namespace cdma;
using namespace cdma::dram;

namespace {

struct lt_req { std::uint64_t addr, len; bool write; ps_t ready; };

void expect_same_state(const dram_system& a, const dram_system& b, const std::string& what) {
  ASSERT_EQ(a.lt_busy_ps(), b.lt_busy_ps()) << what;
  ASSERT_EQ(a.lt_acts(), b.lt_acts()) << what;
  ASSERT_EQ(a.lt_bursts(), b.lt_bursts()) << what;
  for (unsigned c = 0; c < a.spec().channels; ++c) {
    const auto x = a.lt_state(c), y = b.lt_state(c);
    ASSERT_EQ(x.busy_until, y.busy_until) << what << " channel " << c;
    ASSERT_EQ(x.bursts, y.bursts) << what << " channel " << c;
    ASSERT_EQ(x.acts, y.acts) << what << " channel " << c;
    ASSERT_EQ(x.open_row, y.open_row) << what << " channel " << c;
    ASSERT_EQ(x.ref_next, y.ref_next) << what << " channel " << c;
  }
}

/// Runs `acc` through a fast and a generic dram_system and compares after every access.
void compare(const dram_spec& s, const std::string& mapping, page_policy pp,
             const std::vector<lt_req>& acc, bool expect_fast, const std::string& label) {
  dram_system fast(s, mapping, pp), ref(s, mapping, pp);
  ref.set_lt_fast_path(false);
  ASSERT_EQ(fast.lt_fast_path(), expect_fast) << label << " mapping '" << fast.mapping().text() << "'";
  ASSERT_FALSE(ref.lt_fast_path());
  for (std::size_t i = 0; i < acc.size(); ++i) {
    const lt_req& a = acc[i];
    const ps_t tf = fast.lt_access(a.addr, a.len, a.write, a.ready);
    const ps_t tr = ref.lt_access(a.addr, a.len, a.write, a.ready);
    const std::string what = label + " access " + std::to_string(i) + " addr " +
                             std::to_string(a.addr) + " len " + std::to_string(a.len);
    ASSERT_EQ(tf, tr) << what;
    // The full state every access for short lists, every 16th for long ones (and at the end).
    if (acc.size() < 2000 || i % 16 == 0 || i + 1 == acc.size()) {
      expect_same_state(fast, ref, what);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

std::uint64_t memory_bytes(const dram_system& d) {
  return d.mapping().size_bursts() * d.mapping().burst_bytes();
}

std::vector<lt_req> sequential(std::uint64_t start, std::uint64_t window, unsigned count,
                               bool write) {
  std::vector<lt_req> v;
  for (unsigned i = 0; i < count; ++i) v.push_back({start + i * window, window, write, 0});
  return v;
}

std::vector<lt_req> random_mix(std::uint64_t mem, unsigned count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Lengths: empty, sub-burst, one/two bursts, odd sizes, 4 KiB windows, 64 KiB, 1 MiB; and
  // rarely 4 MiB (more bursts than the fast path memoises: the generic path inside it).
  const std::uint64_t lens[] = {0, 1, 8, 32, 64, 100, 512, 4096, 4100, 65536, 1u << 20};
  std::vector<lt_req> v;
  ps_t t = 0;
  for (unsigned i = 0; i < count; ++i) {
    lt_req a;
    const unsigned kind = rng() % 4;
    if (kind == 0) a.addr = rng() % mem;                          // anywhere, unaligned
    else if (kind == 1) a.addr = (rng() % (1u << 22)) & ~63ull;   // a small hot region
    else if (kind == 2) a.addr = mem - 1 - rng() % 8192;          // across the end of memory
    else a.addr = (rng() % (mem / 4096)) * 4096;                  // aligned 4 KiB
    a.len = rng() % 200 == 0 ? (4u << 20) : lens[rng() % (sizeof lens / sizeof lens[0])];
    a.write = rng() % 3 == 0;
    t += rng() % 50000;  // sometimes idle, sometimes back to back
    a.ready = t;
    v.push_back(a);
  }
  return v;
}

}  // namespace

TEST(DramLtFastPath, AgreesWithTheGenericPathForEveryPreset) {
  for (const std::string& name : preset_names()) {
    const dram_spec s = preset(name);
    for (page_policy pp : {page_policy::open, page_policy::closed}) {
      const std::string label = name + "/" + policy_name(pp);
      dram_system probe(s);
      const std::uint64_t mem = memory_bytes(probe);
      // Sequential 4 KiB windows (the VGG-16 LT case), 512-B requests, 64-B reads, reads
      // then writes over the same range (open rows carried between accesses).
      std::vector<lt_req> seq = sequential(0, 4096, 3000, false);
      for (const auto& a : sequential(4096 * 1000, 512, 3000, true)) seq.push_back(a);
      for (const auto& a : sequential(12345 * 64, 64, 3000, false)) seq.push_back(a);
      for (const auto& a : sequential(mem - 256 * 1024, 4096, 128, false)) seq.push_back(a);
      compare(s, "", pp, seq, true, label + " sequential");
      if (HasFatalFailure()) return;
      compare(s, "", pp, random_mix(mem, 3000, 7 + static_cast<unsigned>(pp)), true,
              label + " random");
      if (HasFatalFailure()) return;
    }
  }
}

TEST(DramLtFastPath, CustomMappings) {
  const dram_spec s = preset("gddr5_titanx");
  dram_system probe(s);
  const std::uint64_t mem = memory_bytes(probe);
  // Row on top, other fields reordered: fast path.
  const std::string row_top = "row column:64 bank bankgroup channel column";
  compare(s, row_top, page_policy::open, sequential(0, 4096, 2000, false), true, "row-top seq");
  compare(s, row_top, page_policy::open, random_mix(mem, 3000, 11), true, "row-top random");
  // Row below the bank field, and a split row field: fallback to the generic path (both
  // systems then take the generic path; fast and reference must still agree).
  for (const std::string& m : {std::string("bank row column channel bankgroup column:2"),
                              std::string("row:8192 bank row column channel bankgroup column:2")}) {
    compare(s, m, page_policy::open, sequential(0, 4096, 500, false), false, m + " seq");
    compare(s, m, page_policy::open, random_mix(mem, 1000, 13), false, m + " random");
  }
}

TEST(DramLtFastPath, HandWorkedSingleAccess) {
  // GDDR5 Titan X, default mapping, one 8-B read at time 0 into an idle memory: one burst in
  // channel 0, ACT (tRCD 21 tCK) + CL 20 tCK + one burst: 41 x 571 + 1143 = 24 554 ps (the
  // same value the test of the generic path in test_dram.cpp works out).
  dram_system d(preset("gddr5_titanx"));
  ASSERT_TRUE(d.lt_fast_path());
  EXPECT_EQ(d.lt_access(0, 8, false, 0), 24554u);
  EXPECT_EQ(d.lt_acts(), 1u);
  EXPECT_EQ(d.lt_bursts(), 1u);
  EXPECT_EQ(d.lt_state(0).open_row[0], 0u);
}

namespace {
/// The AT reference for one access: the dram_system's own channels (bank machines, FR-FCFS,
/// timing checker, refresh), the access submitted at `t` and the channels advanced until
/// every part has completed; returns the end of its last burst (ps).
ps_t at_access(dram_system& d, std::uint64_t addr, std::uint64_t len, bool write, ps_t t) {
  std::vector<unsigned> chs;
  unsigned parts = 0, got = 0;
  d.split(addr, len, write, 1, t, [&](unsigned c, const request& r) {
    d.channels()[c].submit(r);
    ++parts;
    chs.push_back(c);
  });
  ps_t done = 0;
  for (ps_t h = t + 1000; got < parts; h += 1000)
    for (unsigned c : chs) {
      auto& ch = d.channels()[c];
      ch.advance(h);
      for (const completion& x : ch.completions()) {
        ++got;
        done = std::max(done, x.done);
      }
      ch.completions().clear();
    }
  return done;
}
}  // namespace

TEST(DramLtLatency, HandWorkedIdleAccessesAndRefreshOnHbm2) {
  // hbm2_v100: tCK 1138 ps, burst (BL4) 2 tCK = 2276 ps, tRCD = tCL = 13 tCK = 14 794 ps,
  // tCCD_L 4 tCK = 4552 ps, tRRD_S 4 tCK, tRP 13 tCK, tRFC 308 tCK = 350 504 ps, tREFI
  // 3427 tCK = 3 899 926 ps; channel 0's first REF is due at 3 899 926 / 64 = 60 936 ps.
  const dram_spec s = preset("hbm2_v100");
  dram_system lt(s), at(s);
  // One 64-B read at 0 (channel 0, bank group 0: 2 bursts), every bank closed: ACT at 0,
  // RD at tRCD 14 794, RD at + tCCD_L = 19 346, data ends + CL + burst = 36 416 ps. (The LT
  // estimate before session 16 said tRCD + CL + one burst = 31 864: the second burst's
  // tCCD_L was missing.)
  EXPECT_EQ(lt.lt_access(0, 64, false, 0), 36416u);
  EXPECT_EQ(at_access(at, 0, 64, false, 0), 36416u);
  // The same read again at 100 000 ps: channel 0's REF was due at 60 936 with bank 0 open,
  // so PRE at 60 936 (tRAS from the ACT at 0 has passed), REF at + tRP = 75 730, busy until
  // + tRFC = 426 234; the row is closed again: ACT at 426 234, data end + 36 416 = 462 650.
  // (Before session 16 LT kept the row open and ignored the REF: its stream term 100 000 +
  // 8 tCK / refresh availability 0.910 + CL = 124 797 ps, 338 ns early.)
  EXPECT_EQ(lt.lt_access(0, 64, false, 100000), 462650u);
  EXPECT_EQ(at_access(at, 0, 64, false, 100000), 462650u);
  EXPECT_EQ(lt.lt_state(0).ref_next, 60936u + 3899926u);
  // One 4 KiB read at 0 into an idle memory: 16 channels x 8 bursts, per channel 2 bursts in
  // each of the 4 bank groups (4 banks to open). LT: ACTs tRRD_S apart, the last at 3 x
  // 4 tCK = 12 tCK, its two RDs at 12 + 13 = 25 and 29 tCK, data end 29 + 13 + 2 = 44 tCK =
  // 50 072 ps. AT issues the column commands one per tCK on the column bus and puts two of
  // them 2 tCK later (46 tCK = 52 348 ps): LT is 2 tCK (2.3 ns) early.
  dram_system lt4(s), at4(s);
  EXPECT_EQ(lt4.lt_access(0, 4096, false, 0), 50072u);
  EXPECT_EQ(at_access(at4, 0, 4096, false, 0), 52348u);
}

// A latency-bound initiator (one access at a time, random idle gaps of 0-400 ns between a
// response and the next request): the LT estimate of every access against the AT channels
// on the same ready times, every preset, 64 B / 512 B / 4 KiB reads and writes. Measured
// (session 16): mean LT / AT latency 0.938 .. 1.000 (hbm2_p100 512-B reads the lowest);
// before session 16, 0.15 .. 0.5 (LT ignored refresh, the second burst's tCCD_L and the
// ACT chain of a window).
TEST(DramLtLatency, LatencyBoundAccessesMatchAtOnAverage) {
  for (const std::string& name : preset_names()) {
    const dram_spec s = preset(name);
    for (std::uint64_t len : {64u, 512u, 4096u})
      for (bool write : {false, true}) {
        dram_system lt(s), at(s);
        std::mt19937_64 rng(5);
        ps_t t = 0;
        double sum_at = 0, sum_lt = 0;
        for (unsigned i = 0; i < 1500; ++i) {
          const std::uint64_t addr = i * len;
          const ps_t a = at_access(at, addr, len, write, t);
          const ps_t l = lt.lt_access(addr, len, write, t);
          sum_at += static_cast<double>(a - t);
          sum_lt += static_cast<double>(l - t);
          t = a + 10000 + rng() % 400001;
        }
        const std::string what = name + " " + std::to_string(len) + (write ? " write" : " read");
        EXPECT_NEAR(sum_lt / sum_at, 1.0, 0.08) << what;
      }
  }
}

namespace {
/// The AT reference for several accesses: each submitted at its time (in order), the
/// channels then advanced until all have completed; returns the end of each one's last burst.
std::vector<ps_t> at_accesses(dram_system& d, const std::vector<lt_req>& acc) {
  std::vector<ps_t> done(acc.size(), 0);
  for (std::size_t i = 0; i < acc.size(); ++i)
    d.split(acc[i].addr, acc[i].len, acc[i].write, i, acc[i].ready,
            [&](unsigned c, const request& r) { d.channels()[c].submit(r); });
  for (auto& ch : d.channels()) {
    ch.advance(acc.back().ready + 10'000'000);
    for (const completion& x : ch.completions()) done[x.tag] = std::max(done[x.tag], x.done);
    ch.completions().clear();
  }
  return done;
}
}  // namespace

// Session 17: a part on a busy channel (earlier LT work not yet ended) ends no earlier than
// on an idle channel: the stream term (end of service + CL/WL + burst - max(burst, tCCD_S))
// has neither the ACT-to-column latency nor the wait for a REF that is under way. hbm2_v100
// (tCK 1138 ps, burst 2276, tRCD = CL = tRP = 14 794, tCCD_L 4552, tRFC 350 504; refresh
// availability 3119/3427; channel 0's first REF due at 60 936 ps).
TEST(DramLtLatency, BusyChannelPartEndsNoEarlierThanOnAnIdleChannel) {
  const dram_spec s = preset("hbm2_v100");
  {
    // Two 64-B reads at 0 into channel 0, bank groups 0 and 1 (addresses 0 and 64), every
    // bank closed. The first (idle channel): 36 416 ps (HandWorkedIdleAccesses...). It books
    // the data bus 2 x 2276 / (3119/3427) = 5002 ps (rounded up), the ACT server 1 x 4 tCK
    // = 4552 -> 5002 and bank group 0's server 2 x tCCD_L = 9104 -> 10 004 ps, so the second
    // finds the channel busy (its bus until 5002). Its stream term: bus and ACT servers to
    // 10 004, group 1's to 10 004, + CL 14 794 = 24 798 ps (session 18; before, the whole
    // channel booked max(bus, group, ACT) per access: 2 x 10 004 + CL = 34 802 ps, and before
    // session 17 that was the result: 1.6 ns before the first read's data, without its ACT).
    // Its idle-channel span: ACT, tRCD, one tCCD_L = 19 346,
    // + CL + burst = 36 416 ps, now the result. AT: ACT of bank group 1 at tRRD_S = 4 tCK,
    // its RDs at 19 (13 + 4, then the column bus: the first read's second RD holds 17, tCCD_S
    // 2 tCK) and 23 tCK, data end 23 + 13 + 2 = 38 tCK = 43 244 ps.
    dram_system lt(s), at(s);
    EXPECT_EQ(lt.lt_access(0, 64, false, 0), 36416u);
    EXPECT_EQ(lt.lt_access(64, 64, false, 0), 36416u);
    const std::vector<ps_t> a = at_accesses(at, {{0, 64, false, 0}, {64, 64, false, 0}});
    EXPECT_EQ(a[0], 36416u);
    EXPECT_EQ(a[1], 43244u);
  }
  {
    // Sixteen 64-B reads at 0 into one row of channel 0, bank 0 (addresses k x 16 KiB: the
    // default mapping's column field above the channels), then one more at 100 000 ps. LT
    // books 16 x 10 004 = 160 064 ps (each read 2 x tCCD_L, stretched), so the last read finds
    // the channel busy, its row open (span tCCD_L = 4552 ps): 100 000 + 4552 reaches channel
    // 0's REF, due at 60 936, before it. The REF closed the row (PRE at 60 936, REF at +
    // tRP, done at 60 936 + 14 794 + 350 504 = 426 234), so the read starts there and needs
    // its ACT: 426 234 + 19 346 + CL + burst = 462 650 ps. The stream term alone said
    // 160 064 + 10 004 + 14 794 = 184 862 ps (LT before session 17), 278 ns earlier.
    dram_system lt(s), at(s);
    std::vector<lt_req> acc;
    for (std::uint64_t k = 0; k < 16; ++k) acc.push_back({k * 16384, 64, false, 0});
    acc.push_back({0, 64, false, 100000});
    ps_t last = 0;
    for (const lt_req& r : acc) last = lt.lt_access(r.addr, r.len, r.write, r.ready);
    EXPECT_EQ(last, 462650u);
    EXPECT_EQ(lt.lt_state(0).ref_next, 60936u + 3899926u);
    // AT stops the backlog for the REF (its reads 5..15 wait for it too, which LT's busy
    // channel still averages as the refresh stretch), so its last read ends later still.
    const std::vector<ps_t> a = at_accesses(at, acc);
    EXPECT_GT(a.back(), last);
  }
}

// Session 18 (breaker s17 F3): the LT estimate books a channel's data bus, its ACTs and each
// bank group's column commands on separate servers, so consecutive small accesses to other
// bank groups overlap (tCCD_S apart, as the AT scheduler interleaves them) and the ACTs of
// a few accesses overlap the row hits of the others. Before, every access booked the whole
// channel for max(bursts x max(burst, tCCD_S), bursts in its busiest group x tCCD_L, ACTs x
// ACT interval): a stream of 64-B accesses (2 bursts in one group) cost 2 x tCCD_L each and
// LT fell 15-33 % behind AT with the kernels' DRAM traffic in 64-B requests. The streams
// below are sequential 64-B reads all ready at 0 on the last channel (its first REF is far
// after them), 16 columns x 4 bank groups of one row per group's bank 0: the first access
// of each group opens its row (4 ACTs), the other 60 are row hits.
TEST(DramLtLatency, SmallAccessesToOtherBankGroupsOverlapAsInAt) {
  // The stream (column stride `col`, the last channel at `chan`), its LT end and ACTs, and
  // the AT reference: the 128 RDs alternate bank groups tCCD_S apart once the four rows are
  // open; LT within 5 % of it (the LT busy channel averages refresh as a stretch).
  auto stream = [](const dram_spec& s, std::uint64_t col, std::uint64_t chan, ps_t want) {
    std::vector<lt_req> acc;
    for (std::uint64_t k = 0; k < 16; ++k)
      for (std::uint64_t g = 0; g < 4; ++g) acc.push_back({k * col + chan + g * 64, 64, false, 0});
    dram_system lt(s), at(s);
    ps_t last = 0;
    for (const lt_req& r : acc) last = lt.lt_access(r.addr, r.len, r.write, r.ready);
    EXPECT_EQ(last, want) << s.name;
    EXPECT_EQ(lt.lt_acts(), 4u) << s.name;
    const std::vector<ps_t> a = at_accesses(at, acc);
    const ps_t at_last = *std::max_element(a.begin(), a.end());
    EXPECT_NEAR(static_cast<double>(last) / static_cast<double>(at_last), 1.0, 0.05)
        << s.name << ": LT " << last << " ps, AT " << at_last << " ps";
    return lt.lt_state(static_cast<unsigned>(chan / 256)).busy_until;
  };
  // gddr5_titanx: tCK 571 ps, burst = tCCD_S = 1143, tCCD_L 1713, ACT interval tRRD_S =
  // 5710, CL 11 420, refresh availability (3413 - 193) / 3413 = 3220/3413. Default mapping:
  // 64-B chunks over the 4 bank groups (64 B apart), then the 12 channels (256 B apart),
  // then the columns (3 KiB apart). Per access (rounded up after / availability): data bus
  // 2 x 1143 -> 2424 ps, bank group 2 x 1713 -> 3632, ACT 5710 -> 6053. Bus 64 x 2424 =
  // 155 136 ps; ACT server 4 x 6053 = 24 212; each group 16 x 3632 = 58 112: the bus binds,
  // the last read ends at 155 136 + CL + burst - tCCD_S = 155 136 + 11 420 = 166 556 ps.
  // (Before: 4 x 6053 + 60 x 3632 + 11 420 = 253 552 ps, 1.5 x AT.)
  EXPECT_EQ(stream(preset("gddr5_titanx"), 3072, 11 * 256, 166556), 155136u);
  // hbm2_v100: tCK 1138 ps, burst = tCCD_S = 2276, tCCD_L 4552, ACT interval tRRD_S =
  // 4552, CL 14 794, availability 3119/3427. Default mapping: bank groups 64 B apart, 64
  // channels (256 B apart), columns 16 KiB apart. Per access: bus 2 x 2276 -> 5002 ps,
  // group 2 x 4552 -> 10 004, ACT 4552 -> 5002. Bus 64 x 5002 = 320 128 ps; groups 16 x
  // 10 004 = 160 064; ACT 4 x 5002: the bus binds: 320 128 + 14 794 = 334 922 ps.
  // (Before: 64 x 10 004 + 14 794 = 655 050 ps, 2 x AT.)
  EXPECT_EQ(stream(preset("hbm2_v100"), 16384, 63 * 256, 334922), 320128u);
  {
    // One bank group only (every access to group 0 of the last gddr5_titanx channel): its
    // column commands stay tCCD_L apart across accesses, so the group server binds:
    // 64 x 3632 + 11 420 = 243 868 ps (bus 64 x 2424 = 155 136).
    const dram_spec s = preset("gddr5_titanx");
    dram_system lt(s);
    ps_t last = 0;
    for (std::uint64_t k = 0; k < 64; ++k) last = lt.lt_access(k * 3072 + 11 * 256, 64, false, 0);
    EXPECT_EQ(last, 243868u);
  }
}

// Session 18 (closed page, breaker s17 F3 with gpu_mem.page_policy=closed): the AT closed page
// precharges a bank only when no queued request hits its open row, so a row is opened once
// for requests that queue behind each other; LT opened it for every access (64-B kernel
// requests alexnet b4 closed + fcfs: LT 32.5 % slower than AT). Now an access finds the row
// of its bank's last access still open when it is ready before that access's last column
// command (its part's end - CL - burst). gddr5_titanx, 16 sequential 64-B reads of one row of
// bank group 0 of the last channel (3 KiB apart), closed page.
TEST(DramLtLatency, ClosedPageKeepsARowOpenForQueuedAccesses) {
  const dram_spec s = preset("gddr5_titanx");
  std::vector<lt_req> together, apart;
  for (std::uint64_t k = 0; k < 16; ++k) {
    together.push_back({k * 3072 + 11 * 256, 64, false, 0});
    apart.push_back({k * 3072 + 11 * 256, 64, false, k * 100000});
  }
  {
    // All ready at 0: the first opens the row (idle span tRCD 11 991 + tCCD_L 1713 = 13 704,
    // its last RD at 13 704 > 0), so the other 15 are row hits: 1 ACT. The group server binds:
    // 16 x ceil(3426 x 3413 / 3220) = 16 x 3632 = 58 112 ps, + CL 11 420 = 69 532 ps (before:
    // 16 ACTs, 16 x 6053 = 96 848 + 11 420 = 108 268 ps). AT opens the row once too.
    dram_system lt(s, "", page_policy::closed), at(s, "", page_policy::closed);
    ps_t last = 0;
    for (const lt_req& r : together) last = lt.lt_access(r.addr, r.len, r.write, r.ready);
    EXPECT_EQ(lt.lt_acts(), 1u);
    EXPECT_EQ(last, 69532u);
    at_accesses(at, together);
    EXPECT_EQ(at.channels()[11].row_misses(), 1u);
  }
  {
    // 100 ns apart: each read has ended (26 267 ps after its ready time on an idle channel:
    // tRCD + tCCD_L + CL + burst) before the next is ready, so the bank was precharged: 16
    // ACTs, in LT as in AT, and the last ends 26 267 ps after its ready time.
    dram_system lt(s, "", page_policy::closed), at(s, "", page_policy::closed);
    ps_t last = 0;
    for (const lt_req& r : apart) last = lt.lt_access(r.addr, r.len, r.write, r.ready);
    EXPECT_EQ(lt.lt_acts(), 16u);
    EXPECT_EQ(last, 15u * 100000 + 26267u);
    at_accesses(at, apart);
    EXPECT_EQ(at.channels()[11].row_misses(), 16u);
  }
}

// Session 19 (alexnet b4, 64-B kernel requests: the backward kernels' reads and writes stream
// through two rows of the same banks): the AT FR-FCFS scheduler serves the queued requests
// that hit the open row first, so two streams alternating over two rows of one bank pay one
// ACT per row while their requests queue; LT, in call order, opened a row for every access
// (the LT DRAM fell behind the kernels: AT-LT -2.9 % vDNN, and a step's result depended on
// the step before it). Now an access to the row the bank had open before is a row hit while
// that row's last access is still queued (lt_first_hit()). gddr5_titanx, the last channel:
// stream A reads row 0 in 64-B chunks over the 4 bank groups (k x 3 KiB + 11 x 256 + g x 64,
// bank 0 of group g), stream B the same chunks of row 1 (+ 384 KiB, the default mapping's
// row stride: 12 channels x 16 banks x 2 KiB); A and B alternate, 32 reads each.
TEST(DramLtLatency, TwoStreamsOverTwoRowsOfABankOpenEachRowOnceWhileQueued) {
  const dram_spec s = preset("gddr5_titanx");
  for (const page_policy pp : {page_policy::open, page_policy::closed}) {
    const char* pol = pp == page_policy::open ? "open" : "closed";
    std::vector<lt_req> together, apart;
    for (std::uint64_t k = 0; k < 8; ++k)
      for (std::uint64_t g = 0; g < 4; ++g)
        for (std::uint64_t row = 0; row < 2; ++row) {
          const std::uint64_t a = row * 393216 + k * 3072 + 11 * 256 + g * 64;
          together.push_back({a, 64, false, 0});
          apart.push_back({a, 64, false, together.size() * 100000});
        }
    {
      // All 64 queued at 0: AT opens row 0 of each group's bank 0 for its oldest request,
      // serves the other 7 row hits of that row before the older requests to row 1, then
      // precharges and opens row 1: 2 ACTs per bank, 8 (by hand). LT: rows 0 and 1 are opened
      // by their first accesses; every later access finds its row open, or open before with
      // an access still queued: 8 ACTs (64 before). LT's end: the data bus binds, 64 x
      // ceil(2 bursts x 1143 ps x 3413 / 3220) = 64 x 2424 = 155 136 ps, + CL 11 420 =
      // 166 556 ps (before: 398 812, 2.08x AT's). AT ends later (191 970 / 193 108 ps open /
      // closed): its four banks switch rows at about the same time, so the switch (tRP +
      // tRCD) shows; LT overlaps a row switch with the channel's other work, as happens when
      // the banks switch at different times (the alexnet streams: AT-LT now +0.02 %).
      dram_system lt(s, "", pp), at(s, "", pp);
      ps_t last = 0;
      for (const lt_req& r : together) last = std::max(last, lt.lt_access(r.addr, r.len, r.write, r.ready));
      EXPECT_EQ(lt.lt_acts(), 8u) << pol;
      EXPECT_EQ(last, 166556u) << pol;
      const std::vector<ps_t> a = at_accesses(at, together);
      EXPECT_EQ(at.channels()[11].row_misses(), 8u) << pol;
      const ps_t at_last = *std::max_element(a.begin(), a.end());
      EXPECT_GT(at_last, last) << pol;
      EXPECT_LT(at_last - last, 2 * (s.ps(s.t.tRP) + s.ps(s.t.tRCD))) << pol;  // one switch
    }
    {
      // 100 ns apart: each read has ended before the next is ready (nothing queued), so each
      // one opens its row: 64 ACTs in LT as in AT.
      dram_system lt(s, "", pp), at(s, "", pp);
      for (const lt_req& r : apart) lt.lt_access(r.addr, r.len, r.write, r.ready);
      EXPECT_EQ(lt.lt_acts(), 64u) << pol;
      at_accesses(at, apart);
      EXPECT_EQ(at.channels()[11].row_misses(), 64u) << pol;
    }
  }
}
