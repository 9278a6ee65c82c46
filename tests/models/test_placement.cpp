// Compression-unit placement (ARCHITECTURE §6; docs/cdma_engine.md "Placement"): with
// `dma` the GPU-crossbar link between GPU memory and the engine carries uncompressed windows,
// with `memory_controller` only the compressed ones. Worked case, in LT and in AT (AT with a
// protocol_checker on every connection):
//
//   1 MiB of all-zero fp32, 4 KiB windows -> 256 windows; ZVC: 32 blocks x 4-byte mask = 128 B
//   per window -> 32768 B compressed (ratio 32). Link 1 GB/s; everything else much faster
//   (GPU memory 300 GB/s, host 12 GB/s, units 4 x 32 B/cycle x 1 GHz = 128 GB/s), so the link
//   is the bottleneck:
//     dma:                link moves 1048576 B -> offload >= 1048576 / 1e9 s = 1048.576 us
//     memory_controller:  link moves   32768 B -> offload >=   32768 / 1e9 s =   32.768 us
//   the other stages overlap the link (GPU read 3.5 us, units 8.2 us, host write 2.7 us), so
//   each transfer ends within a few us of its link bound (latencies 200 ns / 500 ns, the
//   descriptor fetch and the 2 KiB metadata table). Prefetch: the same with the link after
//   (dma) or before (memory_controller) the decompression units.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tests/support/ring_cpu.h"
#include "tests/support/sc_fixture.h"
#include "tlm/cdma/cdma_engine.h"
#include "tlm/core/protocol_checker.h"
#include "tlm/core/sc_time_util.h"
#include "tlm/memory/memory_target.h"

using namespace cdma;
using namespace sc_core;

namespace {

constexpr std::uint64_t MiB = 1 << 20;
constexpr std::uint64_t RING = cdma::test::ring_cpu::RING;
constexpr std::uint64_t LEN = MiB;
constexpr std::uint64_t COMPRESSED = 256 * 128;  // 32768 B
constexpr std::uint64_t A = 0x100000, B = 0x400000, H = 0x100000, M = 0x800000;

using cpu = cdma::test::ring_cpu;

memory_params mem(std::uint64_t size, double Bps, ps_t latency) {
  memory_params m;
  m.size_bytes = size;
  m.bandwidth_Bps = Bps;
  m.latency_ps = latency;
  return m;
}

struct bench {
  memory_target gpu, host;
  cdma_engine engine;
  cpu drv;
  protocol_checker chk_gpu, chk_pcie, chk_regs;
  sc_signal<bool> irq;
  bench(std::function<void(cpu&)> body, const cdma_engine_params& ep)
      : gpu("gpu", mem(64 * MiB, 300e9, 200 * ps_per_ns)),
        host("host", mem(64 * MiB, 12e9, 500 * ps_per_ns)),
        engine("cdma", ep), drv("cpu", std::move(body)), chk_gpu("chk_gpu"), chk_pcie("chk_pcie"),
        chk_regs("chk_regs"), irq("irq") {
    engine.gpu_mem.bind(chk_gpu.tgt);
    chk_gpu.init.bind(gpu.tgt);
    engine.pcie.bind(chk_pcie.tgt);
    chk_pcie.init.bind(host.tgt);
    drv.regs.bind(chk_regs.tgt);
    chk_regs.init.bind(engine.regs);
    engine.irq.bind(irq);
    drv.irq.bind(irq);
    drv.ring_mem = &gpu;
  }
};

struct result {
  double offload_us = 0, prefetch_us = 0;
  std::uint64_t compressed = 0, xbar_bytes = 0;
  bool data_ok = false;
  std::size_t violations = 0;
};

result run(bool at, unit_placement where, double xbar_Bps) {
  cdma::test::reset_systemc_context();
  sc_report_handler::set_actions(protocol_checker::msg_type, SC_ERROR, SC_DISPLAY);
  cdma_engine_params ep;
  ep.approximately_timed = at;
  ep.placement = where;
  ep.xbar_Bps = xbar_Bps;
  auto desc = [](dma_direction dir, std::uint64_t src, std::uint64_t dst) {
    dma_descriptor d;
    d.direction = dir;
    d.src = src;
    d.dst = dst;
    d.len = LEN;
    d.meta = M;
    d.codec = codec::codec_id::zvc;
    d.element_width = 4;
    return d;
  };
  bench b(
      [&](cpu& c) {
        c.wr(reg::RING_BASE_LO, static_cast<std::uint32_t>(RING));
        c.wr(reg::RING_BASE_HI, 0);
        c.wr(reg::RING_CTRL, 0);
        c.wr(reg::RING_SIZE, 8);
        c.wr(reg::IRQ_ENABLE, reg::IRQ_DONE | reg::IRQ_ERROR);
        c.wr(reg::CTRL, reg::CTRL_ENABLE);
        c.post(desc(dma_direction::offload, A, H));
        c.wait_done(1);
        c.post(desc(dma_direction::prefetch, H, B));
        c.wait_done(2);
        EXPECT_EQ(c.rd(reg::ERROR_COUNT), 0u);
      },
      ep);
  const std::vector<std::uint8_t> zeros(LEN, 0);
  b.gpu.store().write(A, zeros.data(), LEN);
  std::vector<std::uint8_t> poison(LEN, 0xA5);
  b.gpu.store().write(B, poison.data(), LEN);
  sc_start();
  result r;
  EXPECT_TRUE(b.drv.finished);
  std::vector<std::uint8_t> back(LEN);
  b.gpu.store().read(B, back.data(), LEN);
  r.data_ok = back == zeros;
  const auto& recs = b.engine.records();
  EXPECT_EQ(recs.size(), 2u);
  if (recs.size() == 2) {
    r.offload_us = static_cast<double>(recs[0].finished - recs[0].started) / 1e6;
    r.prefetch_us = static_cast<double>(recs[1].finished - recs[1].started) / 1e6;
    r.compressed = recs[0].out_data_bytes;
  }
  r.xbar_bytes = b.engine.xbar_bytes();
  r.violations = b.chk_gpu.violations() + b.chk_pcie.violations() + b.chk_regs.violations();
  return r;
}

class Placement : public cdma::test::sc_fixture, public ::testing::WithParamInterface<bool> {};

}  // namespace

TEST_P(Placement, OnlyCompressedBytesCrossTheLinkWithUnitsAtTheMemoryController) {
  const bool at = GetParam();
  const result dma = run(at, unit_placement::dma, 1e9);
  const result mc = run(at, unit_placement::memory_controller, 1e9);
  for (const result* r : {&dma, &mc}) {
    EXPECT_TRUE(r->data_ok);
    EXPECT_EQ(r->compressed, COMPRESSED);
    EXPECT_EQ(r->violations, 0u);
  }
  // Link bytes: offload + prefetch, uncompressed (dma) or compressed (memory_controller).
  EXPECT_EQ(dma.xbar_bytes, 2 * LEN);
  EXPECT_EQ(mc.xbar_bytes, 2 * COMPRESSED);
  // Times: the link bound (worked out above) plus at most 5 us of latencies.
  for (double t : {dma.offload_us, dma.prefetch_us}) {
    EXPECT_GE(t, 1048.576);
    EXPECT_LE(t, 1048.576 + 5);
  }
  for (double t : {mc.offload_us, mc.prefetch_us}) {
    EXPECT_GE(t, 32.768);
    EXPECT_LE(t, 32.768 + 5);
  }
  // The difference is the 1048576 - 32768 bytes the link no longer carries: 1015.808 us.
  EXPECT_NEAR(dma.offload_us - mc.offload_us, 1015.808, 5.0);
  EXPECT_NEAR(dma.prefetch_us - mc.prefetch_us, 1015.808, 5.0);
}

TEST_P(Placement, AnUnlimitedLinkMakesThePlacementsEqual) {
  const bool at = GetParam();
  const result dma = run(at, unit_placement::dma, 0.0);
  const result mc = run(at, unit_placement::memory_controller, 0.0);
  EXPECT_TRUE(dma.data_ok);
  EXPECT_TRUE(mc.data_ok);
  EXPECT_EQ(dma.violations + mc.violations, 0u);
  // Unlimited link: no link time; the stage order changes nothing (unit(rd) either way).
  EXPECT_DOUBLE_EQ(dma.offload_us, mc.offload_us);
  EXPECT_DOUBLE_EQ(dma.prefetch_us, mc.prefetch_us);
  // Bytes are still counted: what would have crossed.
  EXPECT_EQ(dma.xbar_bytes, 2 * LEN);
  EXPECT_EQ(mc.xbar_bytes, 2 * COMPRESSED);
  // Without the link the 1 MiB offload is bound by the units: 1 MiB / 128 GB/s = 8.192 us.
  EXPECT_GE(dma.offload_us, 8.192);
  EXPECT_LE(dma.offload_us, 8.192 + 5);
}

INSTANTIATE_TEST_SUITE_P(LtAndAt, Placement, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "at" : "lt"; });
