// PCIe link arithmetic (tlm/pcie/link_math.h), values worked out by hand from the spec.
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "tlm/core/bandwidth_server.h"
#include "tlm/core/units.h"
#include "tlm/pcie/link_math.h"

using namespace cdma;
using namespace cdma::pcie;

TEST(PcieMath, RawRatesPerGenerationAndWidth) {
  // Gen1: 2.5 GT/s x 8/10 / 8 = 0.25 GB/s per lane; Gen2: 5 GT/s -> 0.5 GB/s per lane.
  EXPECT_DOUBLE_EQ(raw_rate_Bps(1, 1), 0.25e9);
  EXPECT_DOUBLE_EQ(raw_rate_Bps(1, 16), 4.0e9);
  EXPECT_DOUBLE_EQ(raw_rate_Bps(2, 8), 4.0e9);
  // Gen3: 8 GT/s x 128/130 / 8 = 0.984615... GB/s per lane; x16 = 15.7538e9 (ARCH §9: 15.75).
  EXPECT_DOUBLE_EQ(raw_rate_Bps(3, 1), 1e9 * 128.0 / 130.0);
  EXPECT_DOUBLE_EQ(raw_rate_Bps(3, 16), 16e9 * 128.0 / 130.0);
  EXPECT_NEAR(raw_rate_Bps(3, 16), 15.75e9, 0.01e9);
  // Gen4 x16 = 31.5 GB/s; Gen5 x16 = 63.0 GB/s (ARCHITECTURE §9).
  EXPECT_NEAR(raw_rate_Bps(4, 16), 31.5e9, 0.02e9);
  EXPECT_NEAR(raw_rate_Bps(5, 16), 63.0e9, 0.04e9);
  // Gen6: 64 GT/s PAM4, no line code: 8 GB/s per lane, 128 GB/s at x16.
  EXPECT_DOUBLE_EQ(raw_rate_Bps(6, 1), 8e9);
  EXPECT_DOUBLE_EQ(raw_rate_Bps(6, 16), 128e9);
}

TEST(PcieMath, TlpRateSubtractsSkpAndFlitOverhead) {
  link_params p;  // Gen3 x16: one SKP block per 370 data blocks -> x 370/371
  EXPECT_DOUBLE_EQ(tlp_rate_Bps(p), 16e9 * 128.0 / 130.0 * 370.0 / 371.0);
  p.gen = 1;  // 8b/10b: 4 SKP symbols per 1180 -> x 1180/1184
  EXPECT_NEAR(tlp_rate_Bps(p), 4e9 * 1180.0 / 1184.0, 1.0);
  p.gen = 6;  // flit: 236 of 256 bytes carry TLPs
  EXPECT_NEAR(tlp_rate_Bps(p), 128e9 * 236.0 / 256.0 * 370.0 / 371.0, 1.0);
}

TEST(PcieMath, MwrPayloadRateIsTheTlpRateTimesPayloadOverWireBytes) {
  link_params p;  // Gen3 x16, MPS 256 B, 4DW header: 24 B per TLP (STP 4 + header 16 + LCRC 4)
  p.header_4dw = true;
  p.ecrc = false;
  p.mps = 256;
  EXPECT_DOUBLE_EQ(mwr_payload_rate_Bps(p), 16e9 * 128.0 / 130.0 * 370.0 / 371.0 * 256.0 / 280.0);  // 14.3647e9
  p.gen = 4;  // 28.7294e9: above the presets' 25.6 GB/s host memory from Gen4 x16 on
  EXPECT_NEAR(mwr_payload_rate_Bps(p), 28.7294e9, 0.0001e9);
  p.header_4dw = false;  // 3DW header: 20 B per TLP
  p.mps = 128;
  EXPECT_DOUBLE_EQ(mwr_payload_rate_Bps(p), 32e9 * 128.0 / 130.0 * 370.0 / 371.0 * 128.0 / 148.0);
}

TEST(PcieMath, CpldPayloadRateIsTheTlpRateTimesCompletionOverWireBytes) {
  link_params p;  // Gen3 x16; a CplD has a 3DW header: STP 4 + header 12 + LCRC 4 = 20 B
  p.ecrc = false;
  p.mps = 256;
  p.cpl_bytes = 0;  // completions of MPS
  EXPECT_DOUBLE_EQ(cpld_payload_rate_Bps(p), 16e9 * 128.0 / 130.0 * 370.0 / 371.0 * 256.0 / 276.0);  // 14.573e9
  p.cpl_bytes = 64;  // RCB-sized completions
  EXPECT_DOUBLE_EQ(cpld_payload_rate_Bps(p), 16e9 * 128.0 / 130.0 * 370.0 / 371.0 * 64.0 / 84.0);
}

TEST(PcieMath, UnknownGenerationAndBadParamsThrow) {
  EXPECT_THROW(raw_rate_Bps(0, 16), std::invalid_argument);
  EXPECT_THROW(raw_rate_Bps(7, 16), std::invalid_argument);
  EXPECT_THROW(raw_rate_Bps(3, 0), std::invalid_argument);
  EXPECT_NO_THROW(link_params{}.validate());
  link_params p;
  p.mps = 200;  // not a power of two
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p = link_params{};
  p.cpl_bytes = 96;  // not a multiple of RCB 64
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p = link_params{};
  p.pd_credits = 32;  // less than updatefc_every (4) x 256/16: could deadlock
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p = link_params{};
  p.tags = 0;
  EXPECT_THROW(p.validate(), std::invalid_argument);
  // 10-bit tags: 1024 values, of which a requester uses the 768 with Tag[9:8] != 00b (PCIe
  // 4.0 §2.2.6.2; docs audit s15: 1024 was accepted).
  p.tags = 768;
  EXPECT_NO_THROW(p.validate());
  p.tags = 769;
  EXPECT_THROW(p.validate(), std::invalid_argument);
}

TEST(PcieMath, TlpAndDllpOverhead) {
  link_params p;
  // 4 framing+sequence (STP token) + 16 (4DW header) + 4 LCRC = 24 B.
  EXPECT_EQ(tlp_overhead_bytes(p), 24u);
  p.ecrc = true;  // + 4 ECRC
  EXPECT_EQ(tlp_overhead_bytes(p), 28u);
  p.header_4dw = false;  // 4 + 12 + 4 + 4 = 24
  EXPECT_EQ(tlp_overhead_bytes(p), 24u);
  p.ecrc = false;
  EXPECT_EQ(tlp_overhead_bytes(p), 20u);
  link_params q;  // completions: 3DW header always -> 20 B, 24 with ECRC
  EXPECT_EQ(cpl_overhead_bytes(q), 20u);
  q.ecrc = true;
  EXPECT_EQ(cpl_overhead_bytes(q), 24u);
  EXPECT_EQ(dllp_wire_bytes(link_params{}), 8u);  // 6 B DLLP + 2 B framing
  link_params g6;
  g6.gen = 6;  // Flit Mode: no per-TLP framing/LCRC; DLLPs ride in the flit's DLP bytes
  EXPECT_EQ(tlp_overhead_bytes(g6), 16u);
  EXPECT_EQ(cpl_overhead_bytes(g6), 12u);
  EXPECT_EQ(dllp_wire_bytes(g6), 0u);
}

TEST(PcieMath, WriteEndingAtA4KiBBoundaryIsNotSplit) {
  link_params p;  // MPS 256
  // [4096-256, 4096): exactly one MPS, ends on the boundary -> one TLP of 256 + 24 B.
  const tlp_split a = mwr_split(4096 - 256, 256, p);
  EXPECT_EQ(a.tlps, 1u);
  EXPECT_EQ(a.wire_bytes, 280u);
  // [4096-128, 4096+128): crosses the boundary -> 128 + 128, two TLPs.
  const tlp_split b = mwr_split(4096 - 128, 256, p);
  EXPECT_EQ(b.tlps, 2u);
  EXPECT_EQ(b.wire_bytes, 256u + 48u);
  p.mps = 4096;  // aligned 4 KiB: one TLP; shifted by 1 byte: two
  EXPECT_EQ(mwr_split(8192, 4096, p).tlps, 1u);
  EXPECT_EQ(mwr_split(8193, 4096, p).tlps, 2u);
}

TEST(PcieMath, MpsSplitOfAWrite) {
  // 1000 B at 0: 256, 256, 256, 232 -> 4 TLPs, 1000 + 4 x 24 = 1096 B on the wire.
  const tlp_split s = mwr_split(0, 1000, link_params{});
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
  EXPECT_EQ(mrd_split(4096 + 64, 4096, p).tlps, 2u);  // crosses 4 KiB
  // Default MRRS 512: 1 MiB -> 2048 requests x 24 B = 49152 B.
  const tlp_split b = mrd_split(0, 1 << 20, link_params{});
  EXPECT_EQ(b.tlps, 2048u);
  EXPECT_EQ(b.wire_bytes, 49152u);
}

TEST(PcieMath, CompletionSplit) {
  link_params p;  // RCB 64, MPS 256, MRRS 512, completions of MPS
  // Aligned 512 B request: 2 completions of 256 B, 2 x (256 + 20) = 552 B.
  const tlp_split a = cpld_split(0, 512, p);
  EXPECT_EQ(a.tlps, 2u);
  EXPECT_EQ(a.wire_bytes, 552u);
  // 300 B at 0x10: to the RCB boundary 0x40 (48 B), then 252 B: 300 + 40 = 340 B.
  const tlp_split b = cpld_split(0x10, 300, p);
  EXPECT_EQ(b.tlps, 2u);
  EXPECT_EQ(b.wire_bytes, 340u);
  // 64 B completions (measured host): 1 MiB -> 16384 x (64 + 20) = 1,376,256 B.
  p.cpl_bytes = 64;
  const tlp_split c = cpld_split(0, 1 << 20, p);
  EXPECT_EQ(c.tlps, 16384u);
  EXPECT_EQ(c.wire_bytes, 1376256u);
  // The pieces of one request, in address order: 0x30 -> 0x40 (16 B), then 64 B pieces.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces;
  for_each_cpld(0x30, 16 + 128, p, [&](std::uint64_t a2, std::uint64_t n) { pieces.push_back({a2, n}); });
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].first, 0x30u);
  EXPECT_EQ(pieces[0].second, 16u);
  EXPECT_EQ(pieces[1].first, 0x40u);
  EXPECT_EQ(pieces[1].second, 64u);
  EXPECT_EQ(pieces[2].first, 0x80u);
  EXPECT_EQ(pieces[2].second, 64u);
}

TEST(PcieMath, CpldCountIsTheNumberOfCompletionPieces) {
  // cpld_count (closed form, used by LT per request) against walking for_each_cpld piece by
  // piece, for every start offset within two RCBs and request lengths up to MRRS, with both
  // RCBs and completion sizes of RCB, 2 x RCB and MPS. By hand: 300 B at 0x10, RCB 64, MPS
  // 256: 48 B to 0x40, then 252 B in one piece: 2.
  EXPECT_EQ(cpld_count(0x10, 300, 64, 256), 2u);
  EXPECT_EQ(cpld_count(0, 512, 64, 256), 2u);
  EXPECT_EQ(cpld_count(0x30, 16 + 128, 64, 64), 3u);
  for (std::uint32_t rcb : {64u, 128u})
    for (std::uint32_t cpl : {0u, rcb, 2 * rcb}) {
      link_params p;
      p.rcb = rcb;
      p.cpl_bytes = cpl;
      const std::uint64_t piece_max = completion_payload(p);
      for (std::uint64_t a = 4096 - 2 * rcb; a < 4096 + 2 * rcb; a += 8)
        for (std::uint64_t n = 1; n <= p.mrrs && n <= 8192 - a; n += 7) {
          if (a / 4096 != (a + n - 1) / 4096) continue;  // a request never crosses 4 KiB
          std::uint64_t walked = 0;
          for_each_cpld(a, n, p, [&](std::uint64_t, std::uint64_t) { ++walked; });
          ASSERT_EQ(cpld_count(a, n, rcb, piece_max), walked)
              << "rcb " << rcb << " cpl " << cpl << " at " << a << " len " << n;
        }
    }
}

TEST(PcieMath, ZeroLengthHasNoTlp) {
  link_params p;
  for (const tlp_split& s : {mwr_split(123, 0, p), mrd_split(123, 0, p), cpld_split(123, 0, p)}) {
    EXPECT_EQ(s.tlps, 0u);
    EXPECT_EQ(s.wire_bytes, 0u);
  }
}

TEST(PcieMath, CreditsAcksAndTags) {
  link_params p;  // Gen3 x16, latency 400 ns, fc_release 0, updatefc_every 4
  EXPECT_EQ(data_credits(256), 16u);
  EXPECT_EQ(data_credits(257), 17u);
  // DLLPs counted over the stream, one per `every` TLPs: 9 TLPs with every 4 -> 2 (8 counted),
  // then 3 more (12) -> 1, then 1-TLP transactions: one DLLP per 4 of them, not one each.
  std::uint64_t count = 0;
  EXPECT_EQ(dllps_due(count, 9, 4), 2u);
  EXPECT_EQ(count, 9u);
  EXPECT_EQ(dllps_due(count, 3, 4), 1u);
  std::uint64_t per_mrd = 0;
  for (int i = 0; i < 12; ++i) per_mrd += dllps_due(count, 1, 4);
  EXPECT_EQ(per_mrd, 3u);  // 12 single-TLP transactions: 3 Acks (AT's ++received % 4 == 0)
  std::uint64_t c1 = 0;
  EXPECT_EQ(dllps_due(c1, 5, 1), 5u);  // updatefc_every 1: one per TLP
  // Credit loop of a 280 B MWr: ser(280) + 400 ns + 0 + ser(8) + 400 ns.
  const double rate = 16e9 * 128.0 / 130.0 * 370.0 / 371.0;
  EXPECT_EQ(credit_loop_ps(p, 280), transfer_ps(280, rate) + 400000 + transfer_ps(8, rate) + 400000);
  // 256 data credits, 16 per TLP, 3 TLPs held for the UpdateFC batch: window 13 TLPs; 39 TLPs
  // need (39 - 13) / 13 = 2 more loops.
  EXPECT_EQ(credit_paced_ps(p, 39, 1, 16, 0, 256, 280), 2 * credit_loop_ps(p, 280));
  EXPECT_EQ(credit_paced_ps(p, 13, 1, 16, 0, 256, 280), 0u);
  EXPECT_EQ(credit_paced_ps(p, 1000, 1, 16, 0, 0, 280), 0u);  // infinite
  // 100 requests, 10 tags, 1 us each: (100 - 10) x 1 us / 10 = 9 us.
  EXPECT_EQ(tag_paced_ps(100, 10, 1000000), 9000000u);
  EXPECT_EQ(tag_paced_ps(10, 10, 1000000), 0u);
}

TEST(PcieMath, Presets) {
  const link_params a = preset("gen4x8");
  EXPECT_EQ(a.gen, 4);
  EXPECT_EQ(a.lanes, 8);
  EXPECT_EQ(a.mps, 256u);
  const link_params m = preset("measured-host");
  EXPECT_EQ(m.gen, 3);
  EXPECT_EQ(m.lanes, 16);
  EXPECT_EQ(m.mps, 256u);
  EXPECT_EQ(m.rcb, 64u);
  EXPECT_EQ(completion_payload(m), 64u);
  EXPECT_EQ(m.tags, 256u);
  const link_params m5 = preset("measured-host-gen5x16");
  EXPECT_EQ(m5.gen, 5);
  EXPECT_EQ(m5.pd_credits, 4 * m.pd_credits);  // scaled with the line rate
  for (int g = 1; g <= 6; ++g)
    for (int w : {1, 4, 8, 16})
      EXPECT_NO_THROW(preset("gen" + std::to_string(g) + "x" + std::to_string(w)));
  EXPECT_THROW(preset("gen7x16"), std::invalid_argument);
  EXPECT_THROW(preset("gen3x3"), std::invalid_argument);
  EXPECT_THROW(preset("fast"), std::invalid_argument);
}

TEST(PcieMath, OneMiBWriteAtGen3x16) {
  link_params p;  // Gen3 x16, MPS 256, 4DW headers
  const tlp_split s = mwr_split(0, 1 << 20, p);
  // 1 MiB / 256 B = 4096 TLPs; 4096 x (256 + 24) = 1,146,880 B on the wire.
  EXPECT_EQ(s.tlps, 4096u);
  EXPECT_EQ(s.wire_bytes, 1146880u);
  // 1,146,880 B / (16e9 x 128/130 x 370/371 B/s) = 72.8 us x 371/370 = 72,996,757 ps (ceil).
  EXPECT_EQ(ser_ps(p, s.wire_bytes), 72996757u);
}

// ---- runs of equal TLPs and credit_stream::send (the LT path's per-run forms) ---------------

namespace {
using piece_list = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
// Expands for_each_*_run's runs into single TLPs (addr, bytes).
template <class Runs>
piece_list expand(Runs runs) {
  piece_list out;
  runs([&](std::uint64_t a, std::uint64_t n, std::uint64_t k) {
    EXPECT_GE(k, 1u);
    for (std::uint64_t j = 0; j < k; ++j) out.emplace_back(a + j * n, n);
  });
  return out;
}
}  // namespace

TEST(PcieMath, RunsAreTheSplittersTlps) {
  link_params p;  // MPS 256, MRRS 512
  // By hand: 1000 B at 100 (one 4 KiB page): MWr 256, 256, 256 from 100, then 232 at 868.
  std::vector<std::array<std::uint64_t, 3>> runs;
  for_each_mwr_run(100, 1000, p, [&](std::uint64_t a, std::uint64_t n, std::uint64_t k) {
    runs.push_back({a, n, k});
  });
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], (std::array<std::uint64_t, 3>{100, 256, 3}));
  EXPECT_EQ(runs[1], (std::array<std::uint64_t, 3>{868, 232, 1}));
  // 400 B at 4000: 96 B to the 4 KiB boundary, then 256 and 48: three runs of one.
  runs.clear();
  for_each_mwr_run(4000, 400, p, [&](std::uint64_t a, std::uint64_t n, std::uint64_t k) {
    runs.push_back({a, n, k});
  });
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0], (std::array<std::uint64_t, 3>{4000, 96, 1}));
  EXPECT_EQ(runs[1], (std::array<std::uint64_t, 3>{4096, 256, 1}));
  EXPECT_EQ(runs[2], (std::array<std::uint64_t, 3>{4352, 48, 1}));
  // Random addresses, lengths and sizes: the same TLPs in the same order as the splitters.
  std::mt19937_64 rng(8);
  for (int i = 0; i < 20000; ++i) {
    link_params q;
    q.mps = 128u << (rng() % 6);
    q.mrrs = 128u << (rng() % 6);
    const std::uint64_t addr = (rng() % 4) * 4096 + rng() % 4096 + (rng() % 2) * (1ull << 40);
    const std::uint64_t len = rng() % 3 == 0 ? rng() % 64 : rng() % 20000;
    piece_list w, r;
    for_each_mwr(addr, len, q, [&](std::uint64_t a, std::uint64_t n) { w.emplace_back(a, n); });
    for_each_mrd(addr, len, q, [&](std::uint64_t a, std::uint64_t n) { r.emplace_back(a, n); });
    ASSERT_EQ(expand([&](auto f) { for_each_mwr_run(addr, len, q, f); }), w)
        << "mwr at " << addr << " len " << len << " mps " << q.mps;
    ASSERT_EQ(expand([&](auto f) { for_each_mrd_run(addr, len, q, f); }), r)
        << "mrd at " << addr << " len " << len << " mrrs " << q.mrrs;
  }
}

// The completions of one read request in runs (LT's request-by-request path): by hand, then
// the same TLPs in the same order as for_each_cpld for random requests and parameters.
TEST(PcieMath, CpldRunsAreTheSplittersTlps) {
  link_params p;  // RCB 64, completions of MPS 256 (cpl_bytes 0)
  // 500 B at 4100: 60 B to the RCB boundary at 4160, then 256, then 184.
  std::vector<std::array<std::uint64_t, 3>> runs;
  for_each_cpld_run(4100, 500, p, [&](std::uint64_t a, std::uint64_t n, std::uint64_t k) {
    runs.push_back({a, n, k});
  });
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0], (std::array<std::uint64_t, 3>{4100, 60, 1}));
  EXPECT_EQ(runs[1], (std::array<std::uint64_t, 3>{4160, 256, 1}));
  EXPECT_EQ(runs[2], (std::array<std::uint64_t, 3>{4416, 184, 1}));
  std::mt19937_64 rng(10);
  for (int i = 0; i < 20000; ++i) {
    link_params q;
    q.mps = 128u << (rng() % 6);
    q.mrrs = 128u << (rng() % 6);
    q.rcb = rng() % 2 ? 64 : 128;
    q.cpl_bytes = rng() % 3 == 0 ? q.rcb : 0;
    const std::uint64_t addr = rng() % 8192;
    const std::uint64_t len = std::min<std::uint64_t>(rng() % (q.mrrs + 1), 4096 - addr % 4096);
    piece_list c;
    for_each_cpld(addr, len, q, [&](std::uint64_t a, std::uint64_t n) { c.emplace_back(a, n); });
    ASSERT_EQ(expand([&](auto f) { for_each_cpld_run(addr, len, q, f); }), c)
        << "cpld at " << addr << " len " << len << " rcb " << q.rcb << " cpl_bytes " << q.cpl_bytes;
  }
}

// LT's read path counts the completions of a run of equal requests from its first one: the
// requests of a run start MRRS apart, a multiple of the RCB, so each has the same count.
TEST(PcieMath, RequestsOfARunHaveTheSameCompletionCount) {
  std::mt19937_64 rng(9);
  for (int i = 0; i < 5000; ++i) {
    link_params p;
    p.mps = 128u << (rng() % 6);
    p.mrrs = 128u << (rng() % 6);
    p.rcb = rng() % 2 ? 64 : 128;
    const std::uint32_t units = p.mps / p.rcb;
    p.cpl_bytes = rng() % 3 == 0 ? 0 : p.rcb * static_cast<std::uint32_t>(1 + rng() % units);
    ASSERT_NO_THROW(p.validate());
    const std::uint64_t pm = completion_payload(p);
    const std::uint64_t addr = rng() % 16384, len = rng() % 12000;
    for_each_mrd_run(addr, len, p, [&](std::uint64_t a, std::uint64_t n, std::uint64_t k) {
      for (std::uint64_t j = 0; j < k; ++j) {
        std::uint64_t walked = 0;
        for_each_cpld(a + j * n, n, p, [&](std::uint64_t, std::uint64_t) { ++walked; });
        ASSERT_EQ(walked, cpld_count(a, n, p.rcb, pm)) << "request " << j << " of the run at " << a;
      }
    });
  }
}

namespace {
// Reference model of the credit rule, written from credit_stream's documentation with a
// std::deque: credits are taken when a TLP starts; every `every` TLPs the batch's credits are
// returned one credit loop (credit_loop_ps with 0 wire bytes) after its last TLP's end; a TLP
// needing more than is available takes back the oldest batches, not before they arrive.
struct ref_credits {
  struct batch {
    ps_t at;
    std::uint64_t hdr, data;
  };
  std::deque<batch> q;
  std::uint64_t hdr = 0, data = 0;
  bool hdr_inf, data_inf;
  std::uint64_t every;
  ps_t loop;
  std::uint64_t pend = 0, pend_hdr = 0, pend_data = 0;
  ref_credits(const link_params& p, std::uint32_t h, std::uint32_t d)
      : hdr(h), data(d), hdr_inf(h == 0), data_inf(d == 0), every(p.updatefc_every),
        loop(credit_loop_ps(p, 0)) {}
  // One TLP ready at `at` on server `srv`; returns its end.
  ps_t tlp(bandwidth_server& srv, ps_t at, std::uint64_t wire, std::uint64_t h,
           std::uint64_t d) {
    ps_t t = std::max(at, srv.busy_until());
    while (((!hdr_inf && hdr < h) || (!data_inf && data < d)) && !q.empty()) {
      t = std::max(t, q.front().at);
      hdr += q.front().hdr;
      data += q.front().data;
      q.pop_front();
    }
    const ps_t end = srv.reserve(t, wire);
    if (hdr_inf && data_inf) return end;
    if (!hdr_inf) {
      hdr -= std::min(h, hdr);
      pend_hdr += h;
    }
    if (!data_inf) {
      data -= std::min(d, data);
      pend_data += d;
    }
    if (++pend == every) {
      q.push_back({end + loop, pend_hdr, pend_data});
      pend = pend_hdr = pend_data = 0;
    }
    return end;
  }
};
}  // namespace

// credit_stream::send (one run of equal TLPs) against (a) the TLP-by-TLP loop of ready() /
// reserve() / take() that LT used per TLP and (b) the deque reference above, over random
// credit settings (finite / infinite header and data credits, UpdateFC batch sizes, release
// times), TLP sizes, ready times (behind and ahead of the link) and unrelated reservations
// on the same direction (DLLPs, the other credit type's TLPs) between runs.
TEST(PcieCreditStream, SendIsTheTlpByTlpLoop) {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 300; ++trial) {
    link_params p = preset(trial % 2 ? "measured-host" : "gen3x16");
    p.mps = 128u << (rng() % 4);
    p.updatefc_every = 1 + static_cast<std::uint32_t>(rng() % 5);
    p.fc_release_ps = rng() % 3 == 0 ? 0 : rng() % 100000;
    p.latency_ps = rng() % 500000;
    const std::uint32_t every = p.updatefc_every;
    const std::uint32_t hc = rng() % 3 == 0 ? 0 : every + static_cast<std::uint32_t>(rng() % 70);
    const std::uint32_t dc =
        rng() % 3 == 0 ? 0
                       : every * static_cast<std::uint32_t>(data_credits(p.mps)) +
                             static_cast<std::uint32_t>(rng() % 300);
    p.ph_credits = hc;
    p.pd_credits = dc;
    ASSERT_NO_THROW(p.validate());
    credit_stream a(p, hc, dc), b(p, hc, dc);
    ref_credits c(p, hc, dc);
    const double rate = tlp_rate_Bps(p);
    bandwidth_server sa(rate), sb(rate), sc(rate);
    ps_t now = 0;
    for (int op = 0; op < 200; ++op) {
      now += rng() % 4 == 0 ? rng() % 3000000 : rng() % 20000;
      if (rng() % 5 == 0) {  // something else on the direction
        const std::uint64_t bytes = 8 * (1 + rng() % 8);
        const ps_t at = rng() % 2 ? now : std::min(now, sa.busy_until());
        sa.reserve(at, bytes);
        sb.reserve(at, bytes);
        sc.reserve(at, bytes);
      }
      const std::uint64_t n = 1 + rng() % 20;
      const std::uint64_t payload = 1 + rng() % p.mps;
      const std::uint64_t wire = payload + tlp_overhead_bytes(p);
      const std::uint64_t h = 1, d = rng() % 4 == 0 ? 0 : data_credits(payload);
      const credit_stream::ends e = a.send(sa, now, n, wire, transfer_ps(wire, rate), h, d);
      ps_t first_b = 0, last_b = 0, first_c = 0, last_c = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        const ps_t t = b.ready(std::max(now, sb.busy_until()), h, d);
        last_b = sb.reserve(t, wire);
        b.take(last_b, h, d);
        last_c = c.tlp(sc, now, wire, h, d);
        if (i == 0) {
          first_b = last_b;
          first_c = last_c;
        }
      }
      ASSERT_EQ(e.first, first_b) << "trial " << trial << " op " << op;
      ASSERT_EQ(e.last, last_b) << "trial " << trial << " op " << op;
      ASSERT_EQ(e.first, first_c) << "trial " << trial << " op " << op;
      ASSERT_EQ(e.last, last_c) << "trial " << trial << " op " << op;
      ASSERT_EQ(sa.busy_until(), sb.busy_until());
      ASSERT_EQ(sa.busy_ps(), sb.busy_ps());
      ASSERT_EQ(sa.bytes(), sb.bytes());
      ASSERT_EQ(sa.requests(), sb.requests());
      ASSERT_EQ(sa.busy_ps(), sc.busy_ps());
      ASSERT_EQ(a.hdr_available(), b.hdr_available());
      ASSERT_EQ(a.data_available(), b.data_available());
      ASSERT_EQ(a.hdr_available(), hc == 0 ? 0 : c.hdr);
      ASSERT_EQ(a.data_available(), dc == 0 ? 0 : c.data);
    }
  }
}

// tag_scoreboard: the LT rule for read tags across transactions. A request takes the tag
// released earliest; a tag never used is free from time 0.
TEST(PcieTagScoreboard, RequestTakesTheEarliestReleasedTag) {
  tag_scoreboard tags(3);
  EXPECT_EQ(tags.free_at(0, 10), 3u);  // none used yet
  // Three requests at t = 0 take the three unused tags and release them at 900, 500, 700.
  EXPECT_EQ(tags.take(), 0u);
  tags.release(900);
  EXPECT_EQ(tags.take(), 0u);
  tags.release(500);
  EXPECT_EQ(tags.take(), 0u);
  tags.release(700);
  EXPECT_EQ(tags.used(), 3u);
  EXPECT_EQ(tags.free_at(499, 3), 0u);
  EXPECT_EQ(tags.free_at(500, 3), 1u);
  EXPECT_EQ(tags.free_at(800, 3), 2u);
  EXPECT_EQ(tags.free_at(800, 1), 1u);  // counts up to `want`
  EXPECT_EQ(tags.free_at(900, 3), 3u);
  // The fourth request waits for the tag released at 500, the fifth for 700; a request whose
  // tag comes back at 600 (earlier than 900) is next in line before the one released at 900.
  EXPECT_EQ(tags.take(), 500u);
  tags.release(600);
  EXPECT_EQ(tags.take(), 600u);
  tags.release(2000);
  EXPECT_EQ(tags.take(), 700u);
  tags.release(1000);
  EXPECT_EQ(tags.take(), 900u);
  tags.release(1500);
  EXPECT_EQ(tags.take(), 1000u);
  tags.release(1100);
  EXPECT_EQ(tags.take(), 1100u);
  tags.release(1200);
  EXPECT_EQ(tags.take(), 1200u);
  tags.release(3000);
  EXPECT_EQ(tags.take(), 1500u);
  tags.release(3100);
  EXPECT_EQ(tags.take(), 2000u);
  tags.release(3200);
  // take_if_free: all-or-nothing. Held now: 3000, 3100, 3200.
  EXPECT_FALSE(tags.take_if_free(3099, 2));  // only one is free by 3099
  EXPECT_EQ(tags.used(), 3u);
  EXPECT_TRUE(tags.take_if_free(3100, 2));  // the tags of 3000 and 3100
  tags.release(5000);
  tags.release(4000);
  EXPECT_EQ(tags.take(), 3200u);
  tags.release(4500);
  EXPECT_EQ(tags.take(), 4000u);
  tags.release(6000);
  EXPECT_FALSE(tags.take_if_free(1000000, 4));  // more than there are
  tag_scoreboard fresh(4);
  EXPECT_TRUE(fresh.take_if_free(0, 4));  // unused tags are free from 0
  EXPECT_FALSE(fresh.take_if_free(1000000, 1));
}

// release_run: n tags released evenly from first to last; taken in time order, interleaved
// with single releases.
TEST(PcieTagScoreboard, RunOfReleasesIsSpreadEvenly) {
  tag_scoreboard tags(8);
  EXPECT_TRUE(tags.take_if_free(0, 5));
  tags.release_run(1000, 1400, 5);  // 1000, 1100, 1200, 1300, 1400
  EXPECT_EQ(tags.used(), 5u);
  EXPECT_EQ(tags.free_at(1250, 8), 3u + 3u);  // 3 unused + 1000, 1100, 1200
  EXPECT_FALSE(tags.take_if_free(1250, 7));
  EXPECT_TRUE(tags.take_if_free(1100, 5));  // 3 unused + 1000, 1100
  tags.release(1150);
  tags.release_run(2000, 2000, 4);
  EXPECT_EQ(tags.take(), 1150u);  // sorted by first release: before the run's 1200
  EXPECT_EQ(tags.take(), 1200u);
  EXPECT_EQ(tags.take(), 1300u);
  EXPECT_EQ(tags.take(), 1400u);
  EXPECT_EQ(tags.take(), 2000u);
  EXPECT_EQ(tags.used(), 3u);
}

// `tags` tags, each request holding its tag `rtt`, all ready at 0: request k issues in round
// k / tags, at (k / tags) x rtt, whichever transaction it belongs to.
TEST(PcieTagScoreboard, StreamOfRequestsMatchesTheClosedForm) {
  for (std::uint32_t n_tags : {1u, 4u, 32u, 256u}) {
    tag_scoreboard tags(n_tags);
    const ps_t rtt = 10300000;  // 10.3 us
    ps_t last_issue = 0;
    const std::uint64_t requests = 3136;
    for (std::uint64_t k = 0; k < requests; ++k) {
      last_issue = tags.take();  // all requests ready at 0
      tags.release(last_issue + rtt);
    }
    EXPECT_EQ(last_issue, (requests - 1) / n_tags * rtt) << n_tags;  // whole rounds
    // The closed form counts fractional rounds: within one round trip.
    EXPECT_NEAR(static_cast<double>(last_issue),
                static_cast<double>(tag_paced_ps(requests, n_tags, rtt)), static_cast<double>(rtt));
  }
}
