// address_mapping::cursor (incremental decode used by the LT estimate and the AT request
// split) and locate() (the one-burst decode of a 64-B AT request, without divisions) must
// give exactly what decode() gives, burst after burst, for every preset's default
// mapping (power-of-two and the 12-channel mixed radix) and a custom one, across the wrap at
// the end of memory.
#include <gtest/gtest.h>

#include "tlm/memory/dram/address_mapping.h"
#include "tlm/memory/dram/dram_spec.h"

using namespace cdma::dram;

namespace {
void expect_same(const address_mapping& m, std::uint64_t addr, unsigned bursts) {
  address_mapping::cursor c(m, addr);
  for (unsigned k = 0; k < bursts; ++k, c.next()) {
    const location d = m.decode(addr + std::uint64_t(k) * m.burst_bytes());
    const location& l = c.loc();
    ASSERT_EQ(l.channel, d.channel) << m.text() << " addr " << addr << " burst " << k;
    ASSERT_EQ(l.bank_group, d.bank_group) << k;
    ASSERT_EQ(l.bank, d.bank) << k;
    ASSERT_EQ(l.row, d.row) << k;
    ASSERT_EQ(l.column, d.column) << k;
    const location o = m.locate(m.burst_index(addr + std::uint64_t(k) * m.burst_bytes()));
    ASSERT_EQ(o.channel, d.channel) << m.text() << " addr " << addr << " burst " << k;
    ASSERT_EQ(o.bank_group, d.bank_group) << k;
    ASSERT_EQ(o.bank, d.bank) << k;
    ASSERT_EQ(o.row, d.row) << k;
    ASSERT_EQ(o.column, d.column) << k;
  }
}
}  // namespace

TEST(AddressCursor, MatchesDecodeForEveryPresetAndAcrossTheWrap) {
  for (const std::string& name : preset_names()) {
    const dram_spec s = preset(name);
    const address_mapping m(s, address_mapping::default_text(s));
    expect_same(m, 0, 5000);
    expect_same(m, 12345 * 64 + 32, 5000);  // unaligned start inside a burst
    // The last bursts of memory and the wrap to address 0.
    std::uint64_t size = m.burst_bytes();
    for (const auto& sl : m.slices()) size *= sl.count;
    expect_same(m, size - 100 * m.burst_bytes(), 300);
  }
  const dram_spec g5 = preset("gddr5_titanx");
  expect_same(address_mapping(g5, "row column:64 bank bankgroup channel column"), 777 * 32, 20000);
}
