// dram_system::split(): the cut of an access into channel requests (runs of bursts in one row
// of one bank), including its fast path for an access inside one block of the least
// significant column slice (e.g. a 64-B request of the default mapping: one cursor decode,
// no per-burst step), checked against an independent reference: every burst decoded on its
// own with address_mapping::decode() and consecutive bursts of the same channel, bank and
// row merged. Pure C++.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tlm/memory/dram/address_mapping.h"
#include "tlm/memory/dram/dram_spec.h"
#include "tlm/memory/dram/dram_system.h"

using namespace cdma;
using namespace cdma::dram;

namespace {

using part = std::tuple<unsigned, unsigned, unsigned, std::uint64_t, unsigned,  // ch bg ba row n
                        std::uint64_t, ps_t, bool>;                             // tag arrival wr

std::vector<part> reference_split(const address_mapping& m, std::uint64_t addr,
                                  std::uint64_t len, bool wr, std::uint64_t tag, ps_t arrival) {
  if (len == 0) len = 1;
  const std::uint64_t bb = m.burst_bytes();
  std::vector<part> out;
  for (std::uint64_t b = addr / bb; b < (addr + len + bb - 1) / bb; ++b) {
    const location l = m.decode(b * bb);
    if (!out.empty()) {
      auto& [ch, bg, ba, row, n, t, a, w] = out.back();
      if (ch == l.channel && bg == l.bank_group && ba == l.bank && row == l.row) {
        ++n;
        continue;
      }
    }
    out.emplace_back(l.channel, l.bank_group, l.bank, l.row, 1u, tag, arrival, wr);
  }
  return out;
}

}  // namespace

// Every preset with its default mapping and mappings whose lowest slice is a wider column
// slice (column:4), a full column field, or not a column (bank group, channel: no fast path);
// random accesses of 0 to 4096 bytes, aligned and unaligned, also at the end of the memory
// (wrap-around). The fast path must be taken for most 64-B accesses of the default mapping.
TEST(DramSplit, EqualsBurstByBurstDecode) {
  std::uint64_t fast_cases = 0, checked = 0, one_cases = 0;
  for (const auto& name : preset_names()) {
    const dram_spec s = preset(name);
    std::vector<std::string> maps = {"", "row bank channel bankgroup column",
                                     "row column bank channel bankgroup",
                                     "row bank column bankgroup channel"};
    if (s.columns() >= 4) maps.push_back("row bank column channel bankgroup column:4");
    for (const auto& text : maps) {
      const dram_system d(s, text);
      const address_mapping& m = d.mapping();
      const std::uint64_t size = m.size_bursts() * m.burst_bytes();
      std::mt19937_64 rng(3);
      const std::uint64_t lens[] = {0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 96, 128, 200, 512, 4096};
      for (int i = 0; i < 4000; ++i) {
        const std::uint64_t len = lens[rng() % (sizeof lens / sizeof lens[0])];
        std::uint64_t addr = rng() % size;
        if (i % 3 == 0) addr &= ~std::uint64_t{63};                 // 64-B aligned
        if (i % 50 == 0) addr = size - 1 - rng() % 96;                // across the end
        if (i % 97 == 0) addr = rng() >> (i % 7);  // beyond the memory (wraps; the cursor's
                                                    // division past its reciprocal's range)
        const bool wr = rng() % 2;
        const std::uint64_t tag = rng();
        const ps_t arrival = rng() % 1000000;
        std::vector<part> got;
        d.split(addr, len, wr, tag, arrival, [&](unsigned c, const request& r) {
          got.emplace_back(c, r.bank_group, r.bank, r.row, r.bursts, r.tag, r.arrival, r.write);
        });
        EXPECT_EQ(got, reference_split(m, addr, len, wr, tag, arrival))
            << name << " '" << text << "' addr " << addr << " len " << len;
        // split_one(): the same single request where split() gives one on its fast path
        // (one block of the lowest column slice, or one burst), else false.
        unsigned one_ch = ~0u;
        request one_r;
        const bool one = d.split_one(addr, len, wr, tag, arrival, one_ch, one_r);
        const std::uint64_t b0 = addr / m.burst_bytes();
        const std::uint64_t b1 = (addr + (len ? len : 1) - 1) / m.burst_bytes();
        EXPECT_EQ(one, m.one_low_column_block(b0, b1)) << name << " '" << text << "' " << addr;
        if (one) {
          ASSERT_EQ(got.size(), 1u);
          EXPECT_EQ(got[0], part(one_ch, one_r.bank_group, one_r.bank, one_r.row, one_r.bursts,
                                 one_r.tag, one_r.arrival, one_r.write));
          ++one_cases;
        }
        const std::uint64_t bb = m.burst_bytes(), l1 = len ? len : 1;
        if (text.empty() && l1 > bb && m.one_low_column_block(addr / bb, (addr + l1 - 1) / bb))
          ++fast_cases;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 50000u);
  EXPECT_GT(fast_cases, 1000u);  // multi-burst accesses that took the fast path
  EXPECT_GT(one_cases, 10000u);  // split_one() cases (incl. single bursts)
}
