// cdma_engine driven the way a driver drives it: descriptors written into a ring in memory,
// the tail doorbell, the interrupt pin, the error registers. GPU and host memory are plain
// memory_targets (no PCIe link: the link has its own tests). Expected sizes are worked out by
// hand from the ZVC format (docs/ARCHITECTURE.md section 5) in the comments.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tests/support/report_log.h"
#include "tests/support/sc_fixture.h"
#include "tlm/cdma/cdma_engine.h"
#include "tlm/core/sc_time_util.h"
#include "tlm/memory/memory_target.h"

using namespace cdma;
using namespace sc_core;

namespace {

constexpr std::uint64_t MiB = 1 << 20;
constexpr std::uint64_t RING = 0xF0000;  // ring in GPU memory (64-byte aligned)

// A CPU-like driver: register accesses through b_transport, descriptors stored into the ring's
// memory (its own store: backing store write, i.e. untimed), waits on the irq pin.
struct cpu : sc_module {
  tlm_utils::simple_initiator_socket<cpu> regs;
  sc_in<bool> irq;
  std::function<void(cpu&)> body;
  memory_target* ring_mem = nullptr;
  std::uint64_t ring_base = RING;
  std::uint32_t ring_size = 8, tail = 0;
  bool finished = false;

  SC_HAS_PROCESS(cpu);
  cpu(sc_module_name n, std::function<void(cpu&)> b) : sc_module(n), regs("regs"), irq("irq"), body(std::move(b)) {
    SC_THREAD(run);
  }
  void run() {
    body(*this);
    finished = true;
  }

  tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t off, std::uint8_t* data,
                                  unsigned len, const std::uint8_t* be = nullptr) {
    tlm::tlm_generic_payload t;
    sc_time d = SC_ZERO_TIME;
    t.set_command(cmd);
    t.set_address(off);
    t.set_data_ptr(data);
    t.set_data_length(len);
    t.set_streaming_width(len);
    t.set_byte_enable_ptr(const_cast<std::uint8_t*>(be));
    t.set_byte_enable_length(be ? len : 0);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    regs->b_transport(t, d);
    wait(d);
    return t.get_response_status();
  }
  void wr(std::uint32_t off, std::uint32_t v) {
    std::uint8_t b[4];
    store_le32(b, v);
    EXPECT_EQ(access(tlm::TLM_WRITE_COMMAND, off, b, 4), tlm::TLM_OK_RESPONSE) << off;
  }
  std::uint32_t rd(std::uint32_t off) {
    std::uint8_t b[4] = {};
    EXPECT_EQ(access(tlm::TLM_READ_COMMAND, off, b, 4), tlm::TLM_OK_RESPONSE) << off;
    return load_le32(b);
  }
  void init(std::uint32_t ring_ctrl = 0) {
    wr(reg::RING_BASE_LO, static_cast<std::uint32_t>(ring_base));
    wr(reg::RING_BASE_HI, static_cast<std::uint32_t>(ring_base >> 32));
    wr(reg::RING_CTRL, ring_ctrl);
    wr(reg::RING_SIZE, ring_size);
    wr(reg::IRQ_ENABLE, reg::IRQ_DONE | reg::IRQ_ERROR);
    wr(reg::CTRL, reg::CTRL_ENABLE);
  }
  /// Writes the descriptor at TAIL and rings the doorbell; returns its ring index.
  std::uint32_t post(const dma_descriptor& d, bool doorbell = true) {
    std::uint8_t b[desc::SIZE];
    encode_descriptor(d, b);
    const std::uint32_t index = tail;
    ring_mem->store().write(ring_base + std::uint64_t(index) * desc::SIZE, b, desc::SIZE);
    tail = (tail + 1) % ring_size;
    if (doorbell) wr(reg::RING_TAIL, tail);
    return index;
  }
  /// Waits (on the interrupt) until DONE_COUNT reaches n; clears IRQ_STATUS each time.
  void wait_done(std::uint32_t n) {
    while (rd(reg::DONE_COUNT) < n) {
      if (!irq.read()) wait(sc_time(10, SC_MS), irq.posedge_event());
      ASSERT_TRUE(irq.read()) << "no interrupt within 10 ms";
      wr(reg::IRQ_STATUS, rd(reg::IRQ_STATUS));
    }
  }
  /// The descriptor's write-back words (STATUS, WINDOWS, OUT_BYTES).
  void writeback(std::uint32_t index, std::uint32_t& status, std::uint64_t& out) {
    std::uint8_t b[16];
    ring_mem->store().read(ring_base + std::uint64_t(index) * desc::SIZE + desc::STATUS, b, 16);
    status = load_le32(b);
    out = load_le64(b + 8);
  }
};

struct bench {
  memory_target gpu, host;
  cdma_engine engine;
  cpu drv;
  sc_signal<bool> irq;

  bench(std::function<void(cpu&)> body, const cdma_engine_params& ep = {})
      // GPU: 64 MiB, 300 GB/s, 200 ns; host: 64 MiB, 12 GB/s, 500 ns (a PCIe-like path).
      : gpu("gpu", memory_params{64 * MiB, 300e9, 200 * ps_per_ns, 65536}),
        host("host", memory_params{64 * MiB, 12e9, 500 * ps_per_ns, 65536}),
        engine("cdma", ep), drv("cpu", std::move(body)), irq("irq") {
    engine.gpu_mem.bind(gpu.tgt);
    engine.pcie.bind(host.tgt);
    drv.regs.bind(engine.regs);
    engine.irq.bind(irq);
    drv.irq.bind(irq);
    drv.ring_mem = &gpu;
  }
  void run() {
    sc_start(sc_time(1, SC_SEC));
    ASSERT_TRUE(drv.finished) << "driver did not finish";
  }
};

// 16 KiB of fp32 where element i is 0 when i % 4 == 0, else a nonzero value derived from i
// and `salt`. Per 32-element ZVC block: 8 zeros, 24 nonzeros -> 4 + 24 * 4 = 100 bytes; per
// 4 KiB window (32 blocks): 3200 bytes, i.e. compressed (3200 < 4096).
constexpr std::uint64_t LEN = 16384;
constexpr std::uint64_t WINDOW_Z = 3200;
std::vector<std::uint8_t> pattern(std::uint32_t salt, std::uint64_t len = LEN) {
  std::vector<std::uint8_t> v(len);
  for (std::uint64_t i = 0; i < len / 4; ++i)
    store_le32(v.data() + 4 * i, i % 4 == 0 ? 0u : static_cast<std::uint32_t>(i * 2654435761u + salt) | 1u);
  return v;
}

std::vector<std::uint8_t> read_mem(memory_target& m, std::uint64_t addr, std::uint64_t len) {
  std::vector<std::uint8_t> v(len);
  m.store().read(addr, v.data(), len);
  return v;
}

dma_descriptor make(dma_direction dir, std::uint64_t src, std::uint64_t dst, std::uint64_t len,
                    std::uint64_t meta = 0, codec::codec_id c = codec::codec_id::zvc) {
  dma_descriptor d;
  d.direction = dir;
  d.src = src;
  d.dst = dst;
  d.len = len;
  d.meta = meta;
  d.codec = c;
  d.element_width = 4;
  return d;
}

class CdmaEngine : public cdma::test::sc_fixture {};

// GPU addresses of the source tensors and the prefetch destinations; host data and metadata.
constexpr std::uint64_t A = 0x100000, A2 = 0x200000, B = 0x300000, B2 = 0x400000, B3 = 0x500000;
constexpr std::uint64_t H = 0x100000, H2 = 0x200000, M = 0x800000, M2 = 0x801000;

}  // namespace

TEST_F(CdmaEngine, OffloadAndPrefetchThroughTheRingRoundTrip) {
  bench b([&](cpu& c) {
    EXPECT_EQ(c.rd(reg::ID), reg::ID_VALUE);
    EXPECT_EQ(c.rd(reg::CODEC_CAPS) & 0x3u, 0x3u);  // raw (0) and zvc (1) at least
    c.init();
    const auto i0 = c.post(make(dma_direction::offload, A, H, LEN, M));
    c.wait_done(1);
    const auto i1 = c.post(make(dma_direction::prefetch, H, B, LEN, M));
    c.wait_done(2);
    EXPECT_EQ(c.rd(reg::RING_HEAD), 2u);
    EXPECT_EQ(c.rd(reg::STATUS), reg::STATUS_RING_EMPTY);
    EXPECT_EQ(c.rd(reg::ERROR_COUNT), 0u);
    std::uint32_t st;
    std::uint64_t out;
    c.writeback(i0, st, out);
    EXPECT_EQ(st, desc::STATUS_DONE);
    EXPECT_EQ(out, 4 * WINDOW_Z);  // 4 windows x 3200 B
    c.writeback(i1, st, out);
    EXPECT_EQ(st, desc::STATUS_DONE);
    EXPECT_EQ(out, LEN);
    EXPECT_EQ(c.rd(reg::LAST_OUT_LO), LEN);
    EXPECT_EQ(c.rd(reg::WINDOWS_COMPRESSED), 4u);
    EXPECT_EQ(c.rd(reg::WINDOWS_RAW), 0u);
    // Reads: 64 (fetch) + 16384 (data) | 64 (fetch) + 32 (metadata, 4 x 8 B) + 12800 (data)
    EXPECT_EQ(c.rd(reg::BYTES_READ_LO), 64u + 16384 + 64 + 32 + 12800);
    // Writes: 12800 + 32 (metadata) + 16 (write-back) | 16384 + 16 (write-back)
    EXPECT_EQ(c.rd(reg::BYTES_WRITTEN_LO), 12800u + 32 + 16 + 16384 + 16);
  });
  const auto a = pattern(1);
  b.gpu.store().write(A, a.data(), a.size());
  b.run();
  EXPECT_EQ(read_mem(b.gpu, B, LEN), a);
  // The descriptor fetches are timed transactions on gpu_mem (the ring is in GPU memory):
  // the GPU memory saw 16384 data + 2 x 64 descriptor bytes read, 16384 + 2 x 16 written.
  EXPECT_EQ(b.gpu.bytes_read(), 16384u + 2 * 64);
  EXPECT_EQ(b.gpu.bytes_written(), 16384u + 2 * 16);
  ASSERT_EQ(b.engine.records().size(), 2u);
  // The fetch took time: the offload's first data read cannot start before the 64-byte
  // descriptor read has come back (>= 200 ns GPU latency).
  EXPECT_GE(b.engine.records()[0].finished - b.engine.records()[0].started, 200 * ps_per_ns);
}

TEST_F(CdmaEngine, PlainCopiesBothWaysWithTheRingInHostMemory) {
  bench b([](cpu& c) {
    c.ring_base = 0x3F00000;
    c.init(reg::RING_CTRL_HOST);
    c.post(make(dma_direction::copy_d2h, A, H, 10000));  // 10000: not a multiple of the window
    c.post(make(dma_direction::copy_h2d, H, B, 10000));
    c.wait_done(2);
    EXPECT_EQ(c.rd(reg::ERROR_COUNT), 0u);
  });
  b.drv.ring_mem = &b.host;
  const auto a = pattern(2, 10000);
  b.gpu.store().write(A, a.data(), a.size());
  b.run();
  EXPECT_EQ(read_mem(b.host, H, 10000), a);
  EXPECT_EQ(read_mem(b.gpu, B, 10000), a);
  // Host memory: 2 x 64 descriptor bytes + 10000 copy-back bytes read.
  EXPECT_EQ(b.host.bytes_read(), 2 * 64 + 10000u);
}

TEST_F(CdmaEngine, DescriptorOutsideEveryMemoryFailsAndTheRingGoesOn) {
  constexpr std::uint64_t outside = 0x7000000000ull;  // far beyond both 64 MiB memories
  bench b([&](cpu& c) {
    c.init();
    c.post(make(dma_direction::offload, A, H, LEN, M), false);
    const auto bad = c.post(make(dma_direction::offload, outside, 0x600000, LEN, 0x900000), false);
    c.post(make(dma_direction::offload, A2, H2, LEN, M2));  // one doorbell for all three
    c.wait_done(3);
    EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::gpu_mem_response));
    EXPECT_EQ(c.rd(reg::ERROR_DESC), bad);
    EXPECT_EQ(c.rd(reg::ERROR_ADDR_LO), static_cast<std::uint32_t>(outside));
    EXPECT_EQ(c.rd(reg::ERROR_ADDR_HI), static_cast<std::uint32_t>(outside >> 32));
    EXPECT_EQ(c.rd(reg::ERROR_COUNT), 1u);
    std::uint32_t st;
    std::uint64_t out;
    c.writeback(bad, st, out);
    EXPECT_EQ(st, desc::STATUS_DONE | desc::STATUS_ERROR | (1u << 8));
    // Bring both good tensors back.
    c.post(make(dma_direction::prefetch, H, B, LEN, M), false);
    c.post(make(dma_direction::prefetch, H2, B2, LEN, M2));
    c.wait_done(5);
    EXPECT_EQ(c.rd(reg::ERROR_COUNT), 1u);
  });
  const auto a = pattern(3), a2 = pattern(4);
  b.gpu.store().write(A, a.data(), a.size());
  b.gpu.store().write(A2, a2.data(), a2.size());
  b.run();
  EXPECT_EQ(read_mem(b.gpu, B, LEN), a);
  EXPECT_EQ(read_mem(b.gpu, B2, LEN), a2);
  EXPECT_EQ(read_mem(b.host, 0x600000, 64), std::vector<std::uint8_t>(64, 0));  // nothing written
  ASSERT_EQ(b.engine.records().size(), 5u);
  EXPECT_EQ(b.engine.records()[1].error, dma_error::gpu_mem_response);
}

TEST_F(CdmaEngine, CorruptWindowOnPrefetchFailsAndTheRingGoesOn) {
  bench* bp = nullptr;
  bench b(nullptr);
  bp = &b;
  const auto a = pattern(5), a2 = pattern(6);
  b.gpu.store().write(A, a.data(), a.size());
  b.gpu.store().write(A2, a2.data(), a2.size());
  // Offload both, corrupt one compressed stream, then prefetch good / bad / good.
  b.drv.body = [&](cpu& c) {
    c.init();
    c.post(make(dma_direction::offload, A, H, LEN, M), false);
    c.post(make(dma_direction::offload, A2, H2, LEN, M2));
    c.wait_done(2);
    // Window 1 of H starts at H + 3200. Its first ZVC mask claims 24 nonzeros; make it claim
    // 32: the block then needs 8 more bytes than the window holds -> corrupt window.
    const std::uint8_t ones[4] = {0xFF, 0xFF, 0xFF, 0xFF};
    bp->host.store().write(H + WINDOW_Z, ones, 4);
    c.post(make(dma_direction::prefetch, H2, B2, LEN, M2), false);
    const auto bad = c.post(make(dma_direction::prefetch, H, B, LEN, M), false);
    c.post(make(dma_direction::prefetch, H2, B3, LEN, M2));
    c.wait_done(5);
    EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::corrupt_window));
    EXPECT_EQ(c.rd(reg::ERROR_DESC), bad);
    EXPECT_EQ(c.rd(reg::ERROR_ADDR_LO), H + WINDOW_Z);  // the corrupt window's host address
    EXPECT_EQ(c.rd(reg::ERROR_COUNT), 1u);
  };
  b.run();
  EXPECT_EQ(read_mem(b.gpu, B2, LEN), a2);
  EXPECT_EQ(read_mem(b.gpu, B3, LEN), a2);
  // The bad descriptor wrote its good window 0 and stopped at window 1.
  const auto got = read_mem(b.gpu, B, LEN);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 4096, got.begin()));
  EXPECT_EQ(b.engine.records()[3].error, dma_error::corrupt_window);
  EXPECT_EQ(b.engine.records()[3].out_data_bytes, 4096u);
}

TEST_F(CdmaEngine, UnknownCodecFailsAndTheRingGoesOn) {
  bench b([&](cpu& c) {
    c.init();
    const std::uint32_t caps = c.rd(reg::CODEC_CAPS);
    ASSERT_EQ(caps & (1u << 14), 0u) << "codec id 14 must be unimplemented for this test";
    c.post(make(dma_direction::offload, A, H, LEN, M), false);
    const auto bad = c.post(make(dma_direction::offload, A2, 0x600000, LEN, 0x900000,
                                 static_cast<codec::codec_id>(14)), false);
    c.post(make(dma_direction::offload, A2, H2, LEN, M2));
    c.wait_done(3);
    EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::unknown_codec));
    EXPECT_EQ(c.rd(reg::ERROR_DESC), bad);
    EXPECT_EQ(c.rd(reg::ERROR_ADDR_LO), RING + bad * desc::SIZE);  // the descriptor itself
    c.post(make(dma_direction::prefetch, H, B, LEN, M), false);
    c.post(make(dma_direction::prefetch, H2, B2, LEN, M2));
    c.wait_done(5);
    EXPECT_EQ(c.rd(reg::ERROR_COUNT), 1u);
  });
  const auto a = pattern(7), a2 = pattern(8);
  b.gpu.store().write(A, a.data(), a.size());
  b.gpu.store().write(A2, a2.data(), a2.size());
  b.run();
  EXPECT_EQ(read_mem(b.gpu, B, LEN), a);
  EXPECT_EQ(read_mem(b.gpu, B2, LEN), a2);
  EXPECT_EQ(read_mem(b.host, 0x600000, 64), std::vector<std::uint8_t>(64, 0));
}

TEST_F(CdmaEngine, InterruptCoalescingByCountThenTimeout) {
  cdma_engine_params ep;
  ep.irq_coalesce_count = 3;
  ep.irq_coalesce_timeout_ns = 20000;  // 20 us: longer than the 4 copies (~5 us)
  std::vector<ps_t> edges;
  std::vector<std::uint32_t> done_at_edge;
  bench b([&](cpu& c) {
    c.init();
    EXPECT_EQ(c.rd(reg::IRQ_COALESCE_COUNT), 3u);
    for (int i = 0; i < 4; ++i) c.post(make(dma_direction::copy_d2h, A, H + i * 4096, 4096), false);
    c.wr(reg::RING_TAIL, c.tail);
    for (int k = 0; k < 2; ++k) {
      wait(c.irq.posedge_event());
      edges.push_back(now_ps());
      done_at_edge.push_back(c.rd(reg::DONE_COUNT));
      c.wr(reg::IRQ_STATUS, reg::IRQ_DONE);
    }
  }, ep);
  b.run();
  ASSERT_EQ(edges.size(), 2u);
  const auto& rec = b.engine.records();
  ASSERT_EQ(rec.size(), 4u);
  // First edge: when the 3rd descriptor finished (count reached), not before.
  EXPECT_EQ(edges[0], rec[2].finished);
  EXPECT_GE(done_at_edge[0], 3u);
  // Second edge: the 4th completion alone never reaches the count; the timer raises DONE
  // 20 us after it.
  EXPECT_EQ(edges[1], rec[3].finished + 20000 * ps_per_ns);
  EXPECT_EQ(done_at_edge[1], 4u);
}

TEST_F(CdmaEngine, RegisterAccessErrorsAreTlmResponsesNotCrashes) {
  bench b([](cpu& c) {
    std::uint8_t buf[8] = {};
    const std::uint8_t be[4] = {0xFF, 0xFF, 0, 0};
    EXPECT_EQ(c.access(tlm::TLM_READ_COMMAND, reg::ID, buf, 8), tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(c.access(tlm::TLM_WRITE_COMMAND, reg::CTRL, buf, 2), tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(c.access(tlm::TLM_READ_COMMAND, reg::ID, buf, 1), tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(c.access(tlm::TLM_READ_COMMAND, 0x068, buf, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(c.access(tlm::TLM_WRITE_COMMAND, 0x0FC, buf, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(c.access(tlm::TLM_READ_COMMAND, 0x10000, buf, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(c.access(tlm::TLM_READ_COMMAND, 0x002, buf, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(c.access(tlm::TLM_READ_COMMAND, reg::ID, buf, 4, be), tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    EXPECT_EQ(c.access(tlm::TLM_IGNORE_COMMAND, reg::ID, buf, 4), tlm::TLM_COMMAND_ERROR_RESPONSE);
    EXPECT_EQ(c.rd(reg::ID), reg::ID_VALUE);  // still alive and well
    // Nothing runs while disabled; enabling starts the ring.
    c.wr(reg::RING_BASE_LO, RING);
    c.wr(reg::RING_SIZE, 8);
    c.post(make(dma_direction::copy_d2h, A, H, 256));
    wait(sc_time(10, SC_US));
    EXPECT_EQ(c.rd(reg::DONE_COUNT), 0u);
    EXPECT_EQ(c.rd(reg::STATUS) & reg::STATUS_RING_EMPTY, 0u);
    c.wr(reg::IRQ_ENABLE, reg::IRQ_DONE);
    c.wr(reg::CTRL, reg::CTRL_ENABLE);
    c.wait_done(1);
  });
  b.run();
  // Debug transport obeys the same rules (and never crashes).
  tlm::tlm_generic_payload t;
  std::uint8_t v[4] = {};
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_address(0x0F0);
  t.set_data_ptr(v);
  t.set_data_length(4);
  t.set_streaming_width(4);
  EXPECT_EQ(b.engine.regs.get_base_export()->transport_dbg(t), 0u);
  EXPECT_EQ(t.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

TEST_F(CdmaEngine, RingSizeWrittenWhileBusyIsRefusedAndNoStaleDescriptorRuns) {
  // Breaker s18: the ring holds 8 stale copies (a previous run's); one new copy is posted at
  // index 0 and, while it executes, the driver writes RING_SIZE again. Before the fix the
  // write reset HEAD and TAIL to 0, the completion moved HEAD to 1, and the engine executed
  // the 7 stale entries 1..7 (DONE_COUNT 8, 7 x 4 KiB more written to the host), silently.
  bench b([](cpu& c) {
    for (std::uint32_t k = 0; k < 8; ++k) c.post(make(dma_direction::copy_d2h, A, H2 + k * 4096, 4096), false);
    c.tail = 0;
    c.init();
    // 1 MiB plain copy to the host at 12 GB/s takes about 87 us: re-size 5 us into it.
    const auto i = c.post(make(dma_direction::copy_d2h, A, H, MiB));
    wait(sc_time(5, SC_US));
    EXPECT_EQ(c.rd(reg::STATUS) & reg::STATUS_BUSY, reg::STATUS_BUSY);
    c.wr(reg::RING_SIZE, 8);
    EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::bad_ring_config));
    EXPECT_EQ(c.rd(reg::ERROR_DESC), reg::NO_DESC);
    EXPECT_EQ(c.rd(reg::RING_TAIL), 1u);
    wait(sc_time(500, SC_US));  // long enough for the copy and for 7 more
    EXPECT_EQ(c.rd(reg::DONE_COUNT), 1u);
    EXPECT_EQ(c.rd(reg::ERROR_COUNT), 0u);
    EXPECT_EQ(c.rd(reg::RING_HEAD), 1u);
    std::uint32_t st;
    std::uint64_t out;
    c.writeback(i, st, out);
    EXPECT_EQ(st, desc::STATUS_DONE);
    EXPECT_EQ(out, MiB);
  });
  b.run();
  EXPECT_EQ(b.host.bytes_written(), MiB);  // the one copy posted, no stale one
  EXPECT_EQ(b.engine.records().size(), 1u);
}

TEST_F(CdmaEngine, SoftResetDropsTheRunningDescriptorAndTheRingRestartsClean) {
  bench b([](cpu& c) {
    c.init();
    // 1 MiB plain copy to the host at 12 GB/s takes about 87 us: reset 5 us into it.
    c.post(make(dma_direction::copy_d2h, A, H, MiB));
    wait(sc_time(5, SC_US));
    EXPECT_EQ(c.rd(reg::STATUS) & reg::STATUS_BUSY, reg::STATUS_BUSY);
    c.wr(reg::CTRL, reg::CTRL_SOFT_RESET);
    EXPECT_EQ(c.rd(reg::RING_SIZE), 0u);
    wait(sc_time(200, SC_US));  // the dropped descriptor finishes its traffic silently
    EXPECT_EQ(c.rd(reg::DONE_COUNT), 0u);
    EXPECT_EQ(c.rd(reg::IRQ_STATUS), 0u);
    // A fresh ring after the reset works from index 0.
    c.tail = 0;
    c.init();
    const auto i = c.post(make(dma_direction::copy_d2h, A, H2, 4096));
    EXPECT_EQ(i, 0u);
    c.wait_done(1);
    std::uint32_t st;
    std::uint64_t out;
    c.writeback(i, st, out);
    EXPECT_EQ(st, desc::STATUS_DONE);
    EXPECT_EQ(out, 4096u);
  });
  const auto a = pattern(9, MiB);
  b.gpu.store().write(A, a.data(), a.size());
  b.run();
  ASSERT_EQ(b.engine.records().size(), 1u);  // only the post-reset descriptor is reported
  EXPECT_EQ(read_mem(b.host, H2, 4096), std::vector<std::uint8_t>(a.begin(), a.begin() + 4096));
}

// ---- bad descriptors that must not crash or allocate by LEN (breakit-int-s13) ---------------

// A3: LEN = 2^50 needs a 2^41-byte (2 TiB) metadata table, more than one access carries
// (2^32 - 1 bytes): bad_descriptor (4), ERROR_ADDR = the descriptor's ring address, nothing
// allocated or moved; the ring goes on. LT and AT. (Before: std::bad_alloc ended the run.)
TEST_F(CdmaEngine, HugeLenIsABadDescriptorAndTheRingGoesOn) {
  for (const bool at : {false, true}) {
    cdma::test::reset_systemc_context();
    cdma::test::report_log log;
    cdma_engine_params ep;
    ep.approximately_timed = at;
    const std::uint64_t huge = std::uint64_t{1} << 50;
    bench b(
        [&](cpu& c) {
          c.init();
          const auto off = c.post(make(dma_direction::offload, A, H, huge, M), false);
          const auto pre = c.post(make(dma_direction::prefetch, H, B, huge, M), false);
          c.post(make(dma_direction::offload, A, H, LEN, M));
          c.wait_done(3);
          EXPECT_EQ(c.rd(reg::ERROR_COUNT), 2u);
          EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::bad_descriptor));
          EXPECT_EQ(c.rd(reg::ERROR_DESC), pre);
          EXPECT_EQ(c.rd(reg::ERROR_ADDR_LO), static_cast<std::uint32_t>(RING + pre * desc::SIZE));
          std::uint32_t st;
          std::uint64_t out;
          c.writeback(off, st, out);
          EXPECT_EQ(st, desc::STATUS_DONE | desc::STATUS_ERROR | (4u << 8));
          EXPECT_EQ(out, 0u);
          c.post(make(dma_direction::prefetch, H, B, LEN, M));
          c.wait_done(4);
          EXPECT_EQ(c.rd(reg::ERROR_COUNT), 2u);
        },
        ep);
    const auto a = pattern(5);
    b.gpu.store().write(A, a.data(), a.size());
    b.run();
    EXPECT_EQ(read_mem(b.gpu, B, LEN), a) << at;
    ASSERT_EQ(b.engine.records().size(), 4u);
    EXPECT_EQ(b.engine.records()[0].error, dma_error::bad_descriptor);
    EXPECT_EQ(b.engine.records()[0].windows, 0u);
    EXPECT_EQ(b.engine.records()[1].error, dma_error::bad_descriptor);
    const auto w = log.warnings("cdma");
    ASSERT_GE(w.size(), 2u);
    EXPECT_NE(w[0].msg.find("needs a metadata table of 2199023255552 bytes"), std::string::npos) << w[0].msg;
  }
}

// LEN = 2^36 at A = 1 MiB in a 64 MiB GPU memory: the table (2^36 / 4096 x 8 = 128 MiB) is
// allowed, but the range query finds [A, A + 2^36) not inside GPU memory: only
// 0x4000000 - 0x100000 = 0x3F00000 bytes are, so ERROR_ADDR = 0x4000000 (the first byte
// outside), gpu_mem_response, nothing moved and no table allocated. The same for a prefetch to
// B = 3 MiB (ERROR_ADDR 0x4000000; before, the 128 MiB table read failed with pcie_response),
// and an offload whose 32-byte table straddles the 64 MiB host end (META = 64 MiB - 16:
// pcie_response, ERROR_ADDR = 0x4000000, no window written). LT and AT.
TEST_F(CdmaEngine, RangesOutsideTheMemoriesFailBeforeAnythingMoves) {
  for (const bool at : {false, true}) {
    cdma::test::reset_systemc_context();
    cdma_engine_params ep;
    ep.approximately_timed = at;
    const std::uint64_t big = std::uint64_t{1} << 36;
    bench b(
        [&](cpu& c) {
          c.init();
          // META beyond [H, H + 2^36) (else it overlaps DST: a bad_descriptor); the GPU range
          // is checked first.
          c.post(make(dma_direction::offload, A, H, big, std::uint64_t{1} << 37));
          c.wait_done(1);
          EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::gpu_mem_response));
          EXPECT_EQ(c.rd(reg::ERROR_ADDR_LO), 0x4000000u);
          EXPECT_EQ(c.rd(reg::ERROR_ADDR_HI), 0u);
          c.post(make(dma_direction::prefetch, H, B, big, M));
          c.wait_done(2);
          EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::gpu_mem_response));
          EXPECT_EQ(c.rd(reg::ERROR_ADDR_LO), 0x4000000u);
          c.post(make(dma_direction::offload, A, H, LEN, 64 * MiB - 16));
          c.wait_done(3);
          EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::pcie_response));
          EXPECT_EQ(c.rd(reg::ERROR_ADDR_LO), 0x4000000u);
          EXPECT_EQ(c.rd(reg::ERROR_COUNT), 3u);
        },
        ep);
    const auto a = pattern(6);
    b.gpu.store().write(A, a.data(), a.size());
    b.run();
    // Nothing read from or written to the host (the ring is in GPU memory), no window done.
    EXPECT_EQ(b.host.bytes_read(), 0u) << at;
    EXPECT_EQ(b.host.bytes_written(), 0u) << at;
    ASSERT_EQ(b.engine.records().size(), 3u);
    for (const auto& r : b.engine.records()) EXPECT_EQ(r.windows, 0u);
  }
}

// B8: an offload whose META table lies inside its DST range [DST, DST + LEN) would overwrite
// its own packed data: bad_descriptor, nothing written.
TEST_F(CdmaEngine, OffloadWithMetaInsideDstIsABadDescriptor) {
  cdma::test::report_log log;
  bench b([](cpu& c) {
    c.init();
    c.post(make(dma_direction::offload, A, H, LEN, H + 0x2000));
    c.wait_done(1);
    EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::bad_descriptor));
  });
  const auto a = pattern(7);
  b.gpu.store().write(A, a.data(), a.size());
  b.run();
  EXPECT_EQ(b.host.bytes_written(), 0u);
  ASSERT_FALSE(log.warnings("cdma").empty());
  EXPECT_NE(log.warnings("cdma")[0].msg.find("overlaps the DST range"), std::string::npos);
}

// B7: a ring outside memory: the warning names the ring address, not descriptor fields that
// were never read.
TEST_F(CdmaEngine, RingFetchFailureNamesTheRingAddress) {
  cdma::test::report_log log;
  bench b([](cpu& c) {
    c.ring_base = 0x100000000ull;  // 4 GiB: beyond the 64 MiB GPU memory
    c.init();
    c.wr(reg::RING_TAIL, 1);  // nothing can be stored there; the fetch fails
    c.wait_done(1);
    EXPECT_EQ(c.rd(reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::ring_access));
  });
  b.run();
  const auto w = log.warnings("cdma");
  ASSERT_FALSE(w.empty());
  const std::string& last = w.back().msg;
  EXPECT_NE(last.find("descriptor 0: the ring fetch failed at ring address 0x100000000 (GPU memory via gpu_mem)"),
            std::string::npos) << last;
  EXPECT_EQ(last.find("copy_d2h"), std::string::npos) << last;
}

// A8 for the register block: a null data pointer is a generic error with a warning (timed and
// debug), not a segfault.
TEST_F(CdmaEngine, RegisterAccessWithANullDataPointerIsAnError) {
  cdma::test::report_log log;
  bench b([](cpu& c) {
    EXPECT_EQ(c.access(tlm::TLM_WRITE_COMMAND, reg::IRQ_ENABLE, nullptr, 4), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(c.access(tlm::TLM_READ_COMMAND, reg::ID, nullptr, 4), tlm::TLM_GENERIC_ERROR_RESPONSE);
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(reg::ID);
    t.set_data_ptr(nullptr);
    t.set_data_length(4);
    t.set_streaming_width(4);
    EXPECT_EQ(c.regs->transport_dbg(t), 0u);
    EXPECT_EQ(c.rd(reg::IRQ_ENABLE), 0u);  // the write did nothing
  });
  b.run();
  EXPECT_EQ(log.warnings("cdma").size(), 3u);
}

// New-user trial s20 F9: a codec's own unit rate (cdma_engine_params::codec_bytes_per_cycle).
// One compression / decompression unit at 0.25 B/cycle x 1 GHz = 0.25 GB/s is the bottleneck
// (the memories: 300 and 12 GB/s), so a 16 KiB ZVC offload and its prefetch each take at least
// 16384 B / 0.25 GB/s = 65.536 us. The same with the ZVC unit at 0.25 and the others at 0.5
// (the override) takes exactly the time of a unit rate of 0.25 for every codec, in LT and AT;
// an override for another codec (zlib) leaves the ZVC times those of 0.5 B/cycle. A
// decompression rate of the codec's own (codec_decompression_bytes_per_cycle, session 23)
// times the prefetch alone: ZVC units at 0.5 decompressing at 0.25 offload as at 0.5 and
// prefetch as at 0.25, and the other way round.
TEST_F(CdmaEngine, ACodecsOwnUnitRateTimesItsWindows) {
  auto times = [](double unit, double zvc, double zlib, bool at, double zvc_decompression = 0) {
    cdma::test::reset_systemc_context();
    cdma_engine_params ep;
    ep.compression_units = ep.decompression_units = 1;
    ep.unit_bytes_per_cycle = unit;
    ep.codec_bytes_per_cycle[static_cast<std::size_t>(codec::codec_id::zvc)] = zvc;
    ep.codec_bytes_per_cycle[static_cast<std::size_t>(codec::codec_id::zlib)] = zlib;
    ep.codec_decompression_bytes_per_cycle[static_cast<std::size_t>(codec::codec_id::zvc)] = zvc_decompression;
    ep.approximately_timed = at;
    bench b([&](cpu& c) {
      c.init();
      c.post(make(dma_direction::offload, A, H, LEN, M));
      c.wait_done(1);
      c.post(make(dma_direction::prefetch, H, B, LEN, M));
      c.wait_done(2);
    }, ep);
    const auto a = pattern(1);
    b.gpu.store().write(A, a.data(), a.size());
    b.run();
    EXPECT_EQ(read_mem(b.gpu, B, LEN), a);
    std::vector<ps_t> t;
    for (const auto& r : b.engine.records()) t.push_back(r.finished - r.started);
    return t;
  };
  for (bool at : {false, true}) {
    const auto slow = times(0.25, 0, 0, at), own = times(0.5, 0.25, 0, at);
    const auto fast = times(0.5, 0, 0, at), other = times(0.5, 0, 0.25, at);
    ASSERT_EQ(slow.size(), 2u);
    EXPECT_EQ(own, slow) << (at ? "AT" : "LT");
    EXPECT_EQ(other, fast) << (at ? "AT" : "LT");
    for (int k = 0; k < 2; ++k) {
      EXPECT_GE(slow[k], 65536000u) << k;
      EXPECT_GT(slow[k], fast[k] + 30000000u) << k;  // half the rate: > 30 us longer
    }
    const auto slow_decoder = times(0.5, 0, 0, at, 0.25), fast_decoder = times(0.5, 0.25, 0, at, 0.5);
    EXPECT_EQ(slow_decoder, (std::vector<ps_t>{fast[0], slow[1]})) << (at ? "AT" : "LT");
    EXPECT_EQ(fast_decoder, (std::vector<ps_t>{slow[0], fast[1]})) << (at ? "AT" : "LT");
    // Another codec's decompression rate leaves ZVC's alone.
    EXPECT_EQ(times(0.5, 0, 0, at, 0), fast);
  }
}
