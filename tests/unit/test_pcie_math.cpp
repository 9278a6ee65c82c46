// PCIe link arithmetic (tlm/pcie/link_math.h), values worked out by hand from the spec.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tlm/core/units.h"
#include "tlm/pcie/link_math.h"

using namespace cdma;
using namespace cdma::pcie;

TEST(PcieMath, RawRatesPerGenerationAndWidth) {
  // Gen1: 2.5 GT/s x 8/10 / 8 = 0.25 GB/s per lane; Gen2: 5 GT/s -> 0.5 GB/s per lane.
  EXPECT_DOUBLE_EQ(raw_rate_Bps(1, 1), 0.25e9);
  EXPECT_DOUBLE_EQ(raw_rate_Bps(1, 16), 4.0e9);
  EXPECT_DOUBLE_EQ(raw_rate_Bps(2, 1), 0.5e9);
  EXPECT_DOUBLE_EQ(raw_rate_Bps(2, 8), 4.0e9);
  // Gen3: 8 GT/s x 128/130 / 8 = 1e9 x 128/130 B/s per lane = 0.984615... GB/s.
  EXPECT_DOUBLE_EQ(raw_rate_Bps(3, 1), 1e9 * 128.0 / 130.0);
  EXPECT_DOUBLE_EQ(raw_rate_Bps(3, 4), 4e9 * 128.0 / 130.0);
  // Gen3 x16 = 16e9 x 128/130 = 15.7538e9 B/s (ARCHITECTURE §9 rounds it to 15.75 GB/s).
  EXPECT_DOUBLE_EQ(raw_rate_Bps(3, 16), 16e9 * 128.0 / 130.0);
  EXPECT_NEAR(raw_rate_Bps(3, 16), 15.75e9, 0.01e9);
  // Gen4 x16 = 2 x Gen3 = 31.5 GB/s; Gen5 x16 = 4 x Gen3 = 63.0 GB/s (ARCHITECTURE §9).
  EXPECT_DOUBLE_EQ(raw_rate_Bps(4, 16), 32e9 * 128.0 / 130.0);
  EXPECT_NEAR(raw_rate_Bps(4, 16), 31.5e9, 0.02e9);
  EXPECT_DOUBLE_EQ(raw_rate_Bps(5, 16), 64e9 * 128.0 / 130.0);
  EXPECT_NEAR(raw_rate_Bps(5, 16), 63.0e9, 0.04e9);
  EXPECT_DOUBLE_EQ(raw_rate_Bps(5, 1), 4e9 * 128.0 / 130.0);
}

TEST(PcieMath, UnknownGenerationThrows) {
  EXPECT_THROW(raw_rate_Bps(0, 16), std::invalid_argument);
  EXPECT_THROW(raw_rate_Bps(6, 16), std::invalid_argument);
  EXPECT_THROW(raw_rate_Bps(3, 0), std::invalid_argument);
  link_params p;
  p.mps = 200;  // not a power of two
  EXPECT_THROW(p.validate(), std::invalid_argument);
  EXPECT_NO_THROW(link_params{}.validate());
}

TEST(PcieMath, TlpOverhead) {
  link_params p;
  // 2 framing + 2 sequence + 16 (4DW header) + 4 LCRC = 24 B.
  EXPECT_EQ(tlp_overhead_bytes(p), 24u);
  p.ecrc = true;  // + 4 ECRC
  EXPECT_EQ(tlp_overhead_bytes(p), 28u);
  p.header_4dw = false;  // 2 + 2 + 12 + 4 + 4 = 24
  EXPECT_EQ(tlp_overhead_bytes(p), 24u);
  p.ecrc = false;  // 2 + 2 + 12 + 4 = 20
  EXPECT_EQ(tlp_overhead_bytes(p), 20u);
  // Completions always have a 3DW header: 20 B, 24 B with ECRC.
  link_params q;
  EXPECT_EQ(cpl_overhead_bytes(q), 20u);
  q.ecrc = true;
  EXPECT_EQ(cpl_overhead_bytes(q), 24u);
}

TEST(PcieMath, WriteEndingAtA4KiBBoundaryIsNotSplit) {
  link_params p;  // MPS 256
  // [4096-256, 4096): exactly one MPS, ends on the boundary -> one TLP of 256 + 24 B.
  const tlp_split a = mwr_split(4096 - 256, 256, p);
  EXPECT_EQ(a.tlps, 1u);
  EXPECT_EQ(a.payload_bytes, 256u);
  EXPECT_EQ(a.wire_bytes, 280u);
  // [4096-128, 4096+128): crosses the boundary -> 128 + 128, two TLPs, 2 x 24 B overhead.
  const tlp_split b = mwr_split(4096 - 128, 256, p);
  EXPECT_EQ(b.tlps, 2u);
  EXPECT_EQ(b.payload_bytes, 256u);
  EXPECT_EQ(b.wire_bytes, 256u + 48u);
  // With MPS 4096: an aligned 4 KiB write is one TLP; shifted by 1 byte it becomes two.
  p.mps = 4096;
  EXPECT_EQ(mwr_split(8192, 4096, p).tlps, 1u);
  EXPECT_EQ(mwr_split(8193, 4096, p).tlps, 2u);
}

TEST(PcieMath, MpsSplitOfAWrite) {
  link_params p;  // MPS 256, 4DW
  // 1000 B at 0: 256, 256, 256, 232 -> 4 TLPs, 1000 + 4 x 24 = 1096 B on the wire.
  const tlp_split s = mwr_split(0, 1000, p);
  EXPECT_EQ(s.tlps, 4u);
  EXPECT_EQ(s.payload_bytes, 1000u);
  EXPECT_EQ(s.wire_bytes, 1096u);
}

TEST(PcieMath, ReadRequests) {
  link_params p;
  p.mrrs = 4096;
  // Aligned 4096 B with MRRS 4096: one header-only request, 24 B on the wire.
  const tlp_split a = mrd_split(4096, 4096, p);
  EXPECT_EQ(a.tlps, 1u);
  EXPECT_EQ(a.payload_bytes, 0u);
  EXPECT_EQ(a.wire_bytes, 24u);
  // Same length starting 64 B into a page: it crosses 4 KiB -> 2 requests.
  EXPECT_EQ(mrd_split(4096 + 64, 4096, p).tlps, 2u);
  // Default MRRS 512: 1 MiB -> 2048 requests x 24 B = 49152 B.
  const tlp_split b = mrd_split(0, 1 << 20, link_params{});
  EXPECT_EQ(b.tlps, 2048u);
  EXPECT_EQ(b.wire_bytes, 49152u);
}

TEST(PcieMath, CompletionSplit) {
  link_params p;  // RCB 64, MPS 256, MRRS 512
  // Aligned 512 B request: 2 completions of 256 B, 2 x (256 + 20) = 552 B.
  const tlp_split a = cpld_split(0, 512, p);
  EXPECT_EQ(a.tlps, 2u);
  EXPECT_EQ(a.payload_bytes, 512u);
  EXPECT_EQ(a.wire_bytes, 552u);
  // 300 B at 0x10: first completion to the RCB boundary 0x40 (48 B), then 252 B (< MPS):
  // 2 TLPs, 300 + 40 = 340 B.
  const tlp_split b = cpld_split(0x10, 300, p);
  EXPECT_EQ(b.tlps, 2u);
  EXPECT_EQ(b.payload_bytes, 300u);
  EXPECT_EQ(b.wire_bytes, 340u);
  // 1 MiB aligned: 4096 CplD x (256 + 20) = 1,130,496 B.
  const tlp_split c = cpld_split(0, 1 << 20, p);
  EXPECT_EQ(c.tlps, 4096u);
  EXPECT_EQ(c.wire_bytes, 1130496u);
}

TEST(PcieMath, ZeroLengthHasNoTlp) {
  link_params p;
  for (const tlp_split& s : {mwr_split(123, 0, p), mrd_split(123, 0, p), cpld_split(123, 0, p)}) {
    EXPECT_EQ(s.tlps, 0u);
    EXPECT_EQ(s.payload_bytes, 0u);
    EXPECT_EQ(s.wire_bytes, 0u);
  }
}

TEST(PcieMath, OneMiBWriteAtGen3x16) {
  link_params p;  // Gen3 x16, MPS 256, 4DW headers
  const tlp_split s = mwr_split(0, 1 << 20, p);
  // 1 MiB / 256 B = 4096 TLPs; 4096 x (256 + 24) = 1,146,880 B on the wire.
  EXPECT_EQ(s.tlps, 4096u);
  EXPECT_EQ(s.payload_bytes, 1048576u);
  EXPECT_EQ(s.wire_bytes, 1146880u);
  // 1,146,880 B / (16e9 x 128/130 B/s) = 1,146,880 x 130 / 2.048e12 s = 72.8 us exactly.
  EXPECT_EQ(transfer_ps(s.wire_bytes, raw_rate_Bps(3, 16)), 72800000u);
}
