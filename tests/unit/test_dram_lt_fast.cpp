// dram_system::lt_access: the memoised fast path (per-bank decomposition keyed by the burst
// index modulo the row period) must give exactly what the generic path (split() burst by
// burst) gives: the same returned time for every access and, after every access, the same
// per-channel LT state (end of LT work, bursts, ACTs, open row of every bank) and totals.
// Checked for every preset, both page policies, on sequential, random and odd-sized accesses
// (including empty ones, accesses across the end of memory and accesses larger than the
// memoised limit), for a custom mapping with the row on top (fast path) and for mappings where
// the row is not the top slice or is split (the fallback: the generic path).
#include <gtest/gtest.h>

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
