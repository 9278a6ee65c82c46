// cdma_engine in approximately-timed mode (cdma_engine_params::approximately_timed): the same
// driver-visible behaviour as LT (ring, write-back, counters, bit-exact data), with a
// protocol_checker on every connection (engine.gpu_mem, engine.pcie, driver -> engine.regs),
// several windows in flight, a bounded payload pool, a quantum that is no multiple of the unit
// clock, and the simulation ending only after the last (late) write of a prefetch.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
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
constexpr std::uint64_t LEN = 256 * 1024;  // 64 windows of 4 KiB
constexpr std::uint64_t A = 0x100000, B = 0x400000, H = 0x100000, M = 0x800000;

using cpu = cdma::test::ring_cpu;

// GPU: 64 MiB, 300 GB/s, 200 ns; host: 64 MiB, 12 GB/s, 500 ns (a PCIe-like path), both AT
// capable memory_targets; a protocol_checker on every connection.
struct bench {
  memory_target gpu, host;
  cdma_engine engine;
  cpu drv;
  protocol_checker chk_gpu, chk_pcie, chk_regs;
  sc_signal<bool> irq;

  bench(std::function<void(cpu&)> body, const cdma_engine_params& ep,
        const memory_params& gpu_p = memory_params{64 * MiB, 300e9, 200 * ps_per_ns, 65536},
        const memory_params& host_p = memory_params{64 * MiB, 12e9, 500 * ps_per_ns, 65536})
      : gpu("gpu", gpu_p),
        host("host", host_p),
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
  std::size_t violations() const {
    return chk_gpu.violations() + chk_pcie.violations() + chk_regs.violations();
  }
};

std::vector<std::uint8_t> pattern(std::uint64_t len) {
  // Every 4th fp32 element zero: 100 B per 32-element ZVC block (see test_cdma_engine.cpp).
  std::vector<std::uint8_t> v(len);
  for (std::uint64_t i = 0; i < len / 4; ++i)
    store_le32(v.data() + 4 * i, i % 4 == 0 ? 0u : static_cast<std::uint32_t>(i * 2654435761u) | 1u);
  return v;
}

dma_descriptor make(dma_direction dir, std::uint64_t src, std::uint64_t dst, std::uint64_t len,
                    std::uint64_t meta) {
  dma_descriptor d;
  d.direction = dir;
  d.src = src;
  d.dst = dst;
  d.len = len;
  d.meta = meta;
  d.codec = codec::codec_id::zvc;
  d.element_width = 4;
  return d;
}

class CdmaAt : public cdma::test::sc_fixture {
protected:
  void SetUp() override {
    // Collect violations (counted by the checkers) instead of throwing out of sc_start.
    sc_report_handler::set_actions(protocol_checker::msg_type, SC_ERROR, SC_DISPLAY);
  }
};

struct round_trip_result {
  ps_t offload_ps = 0, prefetch_ps = 0;
  bool data_ok = false;
  std::size_t violations = 0, pool_created = 0;
  unsigned peak_in_flight = 0;
  std::uint64_t compressed = 0;
  std::uint64_t offload_windows = 0, prefetch_out = 0;  // windows compressed; bytes written back
  std::size_t pool_in_use = 0;                          // payloads not returned at the end
};

/// Offload then prefetch of LEN bytes; window_bytes 0: the engine's default (4 KiB).
round_trip_result round_trip(bool at, unsigned max_outstanding = 8, std::size_t window_bytes = 0) {
  cdma::test::reset_systemc_context();
  sc_report_handler::set_actions(protocol_checker::msg_type, SC_ERROR, SC_DISPLAY);
  cdma_engine_params ep;
  ep.approximately_timed = at;
  ep.max_outstanding = max_outstanding;
  if (window_bytes != 0) ep.window_bytes = window_bytes;
  const auto src = pattern(LEN);
  round_trip_result r;
  bench b(
      [&](cpu& c) {
        c.init();
        c.post(make(dma_direction::offload, A, H, LEN, M));
        c.wait_done(1);
        c.post(make(dma_direction::prefetch, H, B, LEN, M));
        c.wait_done(2);
        EXPECT_EQ(c.rd(reg::ERROR_COUNT), 0u);
      },
      ep);
  b.gpu.store().write(A, src.data(), LEN);
  sc_start();
  EXPECT_TRUE(b.drv.finished);
  std::vector<std::uint8_t> back(LEN);
  b.gpu.store().read(B, back.data(), LEN);
  r.data_ok = back == src;
  const auto& recs = b.engine.records();
  EXPECT_EQ(recs.size(), 2u);
  if (recs.size() == 2) {
    r.offload_ps = recs[0].finished - recs[0].started;
    r.prefetch_ps = recs[1].finished - recs[1].started;
    r.compressed = recs[0].out_data_bytes;
    r.offload_windows = recs[0].windows;
    r.prefetch_out = recs[1].out_data_bytes;
  }
  r.violations = b.violations();
  r.pool_created = b.engine.pool().created();
  r.pool_in_use = b.engine.pool().in_use();
  r.peak_in_flight = b.engine.peak_in_flight();
  return r;
}

}  // namespace

TEST_F(CdmaAt, OffloadPrefetchRoundTripIsBitExactWithoutViolations) {
  const round_trip_result at = round_trip(true);
  EXPECT_TRUE(at.data_ok);
  EXPECT_EQ(at.violations, 0u);
  EXPECT_EQ(at.compressed, 64u * 3200);  // 64 windows x 3200 B (32 blocks x 100 B)
  // Several windows in flight (pipelined), never more than max_outstanding = 8.
  EXPECT_GT(at.peak_in_flight, 1u);
  EXPECT_LE(at.peak_in_flight, 8u);
  // Payloads are reused: 8 windows x (read + write) + a ring / metadata access at most.
  EXPECT_LE(at.pool_created, 2u * 8 + 2);
  EXPECT_EQ(at.pool_created > 0, true);
}

TEST_F(CdmaAt, AtAndLtTransferTimesAgree) {
  const round_trip_result lt = round_trip(false);
  const round_trip_result at = round_trip(true);
  EXPECT_TRUE(lt.data_ok);
  EXPECT_TRUE(at.data_ok);
  EXPECT_EQ(lt.compressed, at.compressed);
  RecordProperty("lt_offload_ps", std::to_string(lt.offload_ps));
  RecordProperty("at_offload_ps", std::to_string(at.offload_ps));
  std::printf("offload LT %llu ps AT %llu ps; prefetch LT %llu ps AT %llu ps\n",
              (unsigned long long)lt.offload_ps, (unsigned long long)at.offload_ps,
              (unsigned long long)lt.prefetch_ps, (unsigned long long)at.prefetch_ps);
  // Same targets, same unit rule (dma_pipeline): within 3 %.
  EXPECT_NEAR(static_cast<double>(at.offload_ps), static_cast<double>(lt.offload_ps), 0.03 * lt.offload_ps);
  EXPECT_NEAR(static_cast<double>(at.prefetch_ps), static_cast<double>(lt.prefetch_ps), 0.03 * lt.prefetch_ps);
}

TEST_F(CdmaAt, PoolStaysBoundedOverManyDescriptors) {
  cdma_engine_params ep;
  ep.approximately_timed = true;
  ep.max_outstanding = 4;
  const auto src = pattern(LEN);
  std::size_t after_first = 0;
  bench* bp = nullptr;
  bench b(
      [&](cpu& c) {
        c.init();
        for (std::uint32_t i = 0; i < 12; ++i) {
          c.post(make(dma_direction::offload, A, H, LEN, M));
          c.wait_done(i + 1);
          if (i == 0) after_first = bp->engine.pool().created();
        }
      },
      ep);
  bp = &b;
  b.gpu.store().write(A, src.data(), LEN);
  sc_start();
  EXPECT_TRUE(b.drv.finished);
  EXPECT_EQ(b.violations(), 0u);
  EXPECT_EQ(b.engine.pool().in_use(), 0u);
  EXPECT_EQ(b.engine.pool().created(), after_first);  // no growth after the first descriptor
}

// A 1.3 ns quantum is no multiple of the 1 ns unit clock (1 GHz); LT and AT still advance time
// and finish.
TEST_F(CdmaAt, QuantumNotAMultipleOfTheClockStillAdvances) {
  for (bool at : {false, true}) {
    cdma::test::reset_systemc_context();
    sc_report_handler::set_actions(protocol_checker::msg_type, SC_ERROR, SC_DISPLAY);
    tlm::tlm_global_quantum::instance().set(sc_time(1.3, SC_NS));
    cdma_engine_params ep;
    ep.approximately_timed = at;
    const auto src = pattern(LEN);
    bench b(
        [&](cpu& c) {
          c.init();
          c.post(make(dma_direction::offload, A, H, LEN, M));
          c.wait_done(1);
        },
        ep);
    b.gpu.store().write(A, src.data(), LEN);
    sc_start();
    EXPECT_TRUE(b.drv.finished) << (at ? "AT" : "LT");
    ASSERT_EQ(b.engine.records().size(), 1u);
    // 64 x 3200 B compressed over the 12 GB/s host path alone take 204800 / 12e9 = 17.07 us.
    EXPECT_GT(b.engine.records()[0].finished, 17 * ps_per_us) << (at ? "AT" : "LT");
    EXPECT_LT(sc_time_stamp(), sc_time(1, SC_MS));
    EXPECT_EQ(b.violations(), 0u);
    tlm::tlm_global_quantum::instance().set(SC_ZERO_TIME);
  }
}

// The last window's write lands long after the memories went idle: a 100 us unit latency
// (100000 cycles at 1 GHz) delays every write; the engine must wake on its own timer, finish
// the descriptor, and the simulation (sc_start() without a limit) must end only after that.
TEST_F(CdmaAt, SimulationEndsAfterTheLastLateWrite) {
  cdma_engine_params ep;
  ep.approximately_timed = true;
  ep.pipeline_latency_cycles = 100000;
  const auto src = pattern(LEN);
  bench b(
      [&](cpu& c) {
        c.init();
        c.post(make(dma_direction::offload, A, H, LEN, M));
        c.wait_done(1);
        c.post(make(dma_direction::prefetch, H, B, LEN, M));
        c.wait_done(2);
      },
      ep);
  b.gpu.store().write(A, src.data(), LEN);
  sc_start();
  EXPECT_TRUE(b.drv.finished);
  ASSERT_EQ(b.engine.records().size(), 2u);
  const dma_record& pre = b.engine.records()[1];
  // The prefetch lasts at least the unit latency past its last read.
  EXPECT_GE(pre.finished - pre.started, 100 * ps_per_us);
  EXPECT_GE(sc_time_stamp(), to_sc(pre.finished));
  std::vector<std::uint8_t> back(LEN);
  b.gpu.store().read(B, back.data(), LEN);
  EXPECT_TRUE(back == src);
  EXPECT_EQ(b.violations(), 0u);
}

// ---- Many windows in flight (breaker s15 F6: the AT stream's work per event no longer grows
// with the windows in flight; these tests pin the results of such streams) ----

namespace {

constexpr std::size_t W64 = 64;                 // smallest window (min_window_bytes)
constexpr std::size_t N64 = LEN / W64;          // 4096 windows of 64 B
constexpr std::uint64_t Z64 = 52;               // ZVC of one pattern() window: 4 B mask + 12 x 4 B

// GPU 64 GB/s, 200 ns and host 8 GB/s, 500 ns: 64 B take exactly 1000 ps on the GPU bus and
// 8000 ps on the host bus; the 16-byte status write-back 250 ps (transfer_ps, no rounding).
constexpr ps_t LG = 200 * ps_per_ns, LH = 500 * ps_per_ns;
constexpr ps_t TG64 = 1000, TH64 = 8000, TG_WB = 250;

// A GPU -> host copy of N64 windows of 64 B with `max_out` windows in flight at most: the
// descriptor's time (fetch to write-back), the peak in flight and the checks.
struct copy_result {
  ps_t ps = 0;
  unsigned peak = 0;
  std::size_t violations = 0, pool_created = 0, pool_in_use = 0;
  bool data_ok = false;
};

copy_result copy_64b_windows(unsigned max_out) {
  cdma::test::reset_systemc_context();
  sc_report_handler::set_actions(protocol_checker::msg_type, SC_ERROR, SC_DISPLAY);
  cdma_engine_params ep;
  ep.approximately_timed = true;
  ep.window_bytes = W64;
  ep.max_outstanding = max_out;
  const auto src = pattern(LEN);
  dma_descriptor d = make(dma_direction::copy_d2h, A, H, LEN, 0);
  bench b(
      [&](cpu& c) {
        c.init();
        c.post(d);
        c.wait_done(1);
        EXPECT_EQ(c.rd(reg::ERROR_COUNT), 0u);
      },
      ep, memory_params{64 * MiB, 64e9, LG, 65536}, memory_params{64 * MiB, 8e9, LH, 65536});
  b.gpu.store().write(A, src.data(), LEN);
  sc_start();
  EXPECT_TRUE(b.drv.finished);
  copy_result r;
  if (b.engine.records().size() == 1) r.ps = b.engine.records()[0].finished - b.engine.records()[0].started;
  std::vector<std::uint8_t> out(LEN);
  b.host.store().read(H, out.data(), LEN);
  r.data_ok = out == src;
  r.peak = b.engine.peak_in_flight();
  r.violations = b.violations();
  r.pool_created = b.engine.pool().created();
  r.pool_in_use = b.engine.pool().in_use();
  return r;
}

}  // namespace

// Every window in flight at once (max_outstanding 4096 = the 4096 windows): all reads go out
// at the fetch time, read k returns at (k + 1) x 1000 ps + LG, and the host bus, 8 x slower,
// serialises the writes from the first read's return: the last write is done N x 8000 ps + LH
// later. Descriptor = fetch (64 B read: 1000 ps + LG) + first read (1000 ps + LG) + N x 8000 ps
// + LH + write-back (250 ps + LG). One window in flight (max_outstanding 1): each window is a
// read then a write, back to back: fetch + N x (1000 + LG + 8000 + LH) + write-back.
TEST_F(CdmaAt, ManyWindowsInFlightCopyMatchesTheMemoryModel) {
  const copy_result all = copy_64b_windows(4096);
  EXPECT_TRUE(all.data_ok);
  EXPECT_EQ(all.violations, 0u);
  EXPECT_EQ(all.peak, 4096u);
  EXPECT_EQ(all.pool_in_use, 0u);
  EXPECT_LE(all.pool_created, 2u * 4096 + 2);
  EXPECT_EQ(all.ps, (TG64 + LG) + (TG64 + LG) + N64 * TH64 + LH + (TG_WB + LG));  // 33.870250 us

  const copy_result one = copy_64b_windows(1);
  EXPECT_TRUE(one.data_ok);
  EXPECT_EQ(one.violations, 0u);
  EXPECT_EQ(one.peak, 1u);
  EXPECT_EQ(one.ps, (TG64 + LG) + N64 * (TG64 + LG + TH64 + LH) + (TG_WB + LG));  // 2904.465250 us
}

// Offload and prefetch of 4096 windows of 64 B, all in flight, through the ZVC units: the data
// come back bit-exact, every window compresses to 52 B, and nothing violates the protocol.
// With 4096 windows, max_outstanding 4096 and 8192 both never bind (next_read - completed <=
// next_read < 4096 at every read issue), so both runs must give the same times.
TEST_F(CdmaAt, ManyWindowsInFlightRoundTripIsBitExact) {
  const round_trip_result a = round_trip(true, 4096, W64), b = round_trip(true, 8192, W64);
  for (const round_trip_result* r : {&a, &b}) {
    EXPECT_TRUE(r->data_ok);
    EXPECT_EQ(r->violations, 0u);
    EXPECT_EQ(r->pool_in_use, 0u);
    EXPECT_EQ(r->compressed, N64 * Z64);
    EXPECT_EQ(r->offload_windows, N64);
    EXPECT_EQ(r->prefetch_out, LEN);
    EXPECT_EQ(r->peak_in_flight, 4096u);  // every window in flight
  }
  EXPECT_EQ(a.offload_ps, b.offload_ps);
  EXPECT_EQ(a.prefetch_ps, b.prefetch_ps);
}

// A corrupt window in the middle of 4096 windows in flight: the prefetch stops with
// corrupt_window at that window's host address, waits for every read still in flight, writes
// every window before it (all BAD of them, as LT: docs/cdma_registers.md "windows before it
// were written, none after"; before session 18 AT stopped issuing writes at the error and
// wrote only some of them, breaker s18 F5) and none after, returns every payload, and the
// ring goes on.
TEST_F(CdmaAt, ManyWindowsInFlightCorruptWindowStopsCleanly) {
  cdma_engine_params ep;
  ep.approximately_timed = true;
  ep.window_bytes = W64;
  ep.max_outstanding = 4096;
  constexpr std::size_t BAD = 2000;
  const auto src = pattern(LEN);
  bench* bp = nullptr;
  bench b(
      [&](cpu& c) {
        c.init();
        c.post(make(dma_direction::offload, A, H, LEN, M));
        c.wait_done(1);
        // Window BAD's mask claims 32 nonzeros: it needs more bytes than its 52 -> corrupt.
        const std::uint8_t ones[4] = {0xFF, 0xFF, 0xFF, 0xFF};
        bp->host.store().write(H + BAD * Z64, ones, 4);
        c.post(make(dma_direction::prefetch, H, B, LEN, M));
        c.wait_done(2);
        EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::corrupt_window));
        EXPECT_EQ(c.rd(reg::ERROR_ADDR_LO), H + BAD * Z64);
        EXPECT_EQ(c.rd(reg::ERROR_COUNT), 1u);
        c.post(make(dma_direction::copy_d2h, A, 0x2000000, LEN, 0));
        c.wait_done(3);
        EXPECT_EQ(c.rd(reg::ERROR_COUNT), 1u);
      },
      ep);
  bp = &b;
  b.gpu.store().write(A, src.data(), LEN);
  sc_start();
  EXPECT_TRUE(b.drv.finished);
  EXPECT_EQ(b.violations(), 0u);
  EXPECT_EQ(b.engine.pool().in_use(), 0u);
  ASSERT_EQ(b.engine.records().size(), 3u);
  const dma_record& pre = b.engine.records()[1];
  EXPECT_EQ(pre.error, dma_error::corrupt_window);
  EXPECT_EQ(pre.windows, BAD);
  EXPECT_EQ(pre.out_data_bytes, pre.windows * W64);
  std::vector<std::uint8_t> got(LEN);
  b.gpu.store().read(B, got.data(), LEN);
  EXPECT_TRUE(std::equal(src.begin(), src.begin() + pre.out_data_bytes, got.begin()));
  // None after: the destination from the corrupt window on was never written (reads as 0).
  EXPECT_TRUE(std::all_of(got.begin() + BAD * W64, got.end(), [](std::uint8_t v) { return v == 0; }));
  EXPECT_EQ(b.engine.records()[2].error, dma_error::none);
  std::vector<std::uint8_t> copied(LEN);
  b.host.store().read(0x2000000, copied.data(), LEN);
  EXPECT_TRUE(copied == src);
}

// New-user report (session 16) F5: a plain copy whose second window lies beyond the end of host
// memory (copy_d2h has no range precheck: the write itself fails). AT ends the descriptor when
// window 0's write has reached host memory (it is in flight when window 1's write fails); LT
// ended it at once (93 ns against 860 ns in the report). Now LT ends it after the windows
// already written and the error response too. By hand (this bench): descriptor fetch from GPU
// memory 64 B / 300 GB/s + 200 ns = 200.2 ns; window 0 read 4096 B / 300 GB/s + 200 ns = 213.7
// ns, its write 4096 B / 12 GB/s + 500 ns = 841.3 ns: done ~1255 ns after the start, then the
// status write-back (~200 ns) -- LT and AT alike.
TEST_F(CdmaAt, AFailedWriteEndsTheDescriptorAfterTheWindowsAlreadyWrittenInLtAsInAt) {
  auto run = [](bool at) {
    cdma::test::reset_systemc_context();
    sc_report_handler::set_actions(protocol_checker::msg_type, SC_ERROR, SC_DISPLAY);
    sc_report_handler::set_actions(SC_WARNING, SC_DO_NOTHING);
    cdma_engine_params ep;
    ep.approximately_timed = at;
    ps_t took = 0;
    dma_error err = dma_error::none;
    std::uint32_t errors = 0;
    const auto src = pattern(8192);
    bench b(
        [&](cpu& c) {
          c.init();
          c.post(make(dma_direction::copy_d2h, A, 64 * MiB - 4096, 8192, 0));
          c.wait_done(1);
          errors = c.rd(reg::ERROR_COUNT);
        },
        ep);
    b.gpu.store().write(A, src.data(), 8192);
    sc_start();
    const auto& recs = b.engine.records();
    if (!recs.empty()) {
      took = recs[0].finished - recs[0].started;
      err = recs[0].error;
    }
    EXPECT_EQ(errors, 1u);
    EXPECT_EQ(b.violations(), 0u);
    sc_report_handler::set_actions(SC_WARNING, SC_LOG | SC_DISPLAY);  // the default
    return std::make_pair(took, err);
  };
  const auto [lt, lt_err] = run(false);
  const auto [at, at_err] = run(true);
  EXPECT_EQ(lt_err, dma_error::pcie_response);
  EXPECT_EQ(at_err, dma_error::pcie_response);
  // Window 0's write is done 200.2 + 213.7 + 841.3 = 1255.2 ns after the start, the
  // write-back follows: both modes between that and +300 ns, within 2 % of each other.
  EXPECT_GT(lt, 1'255'000u);
  EXPECT_LT(lt, 1'555'000u);
  EXPECT_NEAR(static_cast<double>(lt), static_cast<double>(at), 0.02 * static_cast<double>(at));
}
