// memory_target / host_memory / gpu_memory_controller and the sparse backing_store.
// Every expected time is worked out by hand in the comment next to it.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tests/support/payload.h"
#include "tests/support/sc_fixture.h"
#include "tlm/core/sc_time_util.h"
#include "tlm/memory/backing_store.h"
#include "tlm/memory/gpu_memory_controller.h"
#include "tlm/memory/host_memory.h"
#include "tlm/memory/memory_target.h"


using namespace cdma;
using namespace sc_core;
using namespace tlm;

namespace {

// A tiny test initiator: runs `body` in an SC_THREAD and records AT responses.
struct driver : sc_module {
  tlm_utils::simple_initiator_socket<driver> init;
  std::function<void(driver&)> body;

  struct response {
    tlm_generic_payload* trans;
    ps_t time;
    tlm_response_status status;
  };
  std::vector<response> responses;  // BEGIN_RESP arrivals
  std::vector<ps_t> end_resp_times;
  bool complete_on_begin_resp = true;  // else TLM_ACCEPTED and END_RESP after end_resp_after
  sc_time end_resp_after = sc_time(1, SC_US);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> invalidations;

  SC_HAS_PROCESS(driver);
  driver(sc_module_name n, std::function<void(driver&)> b) : sc_module(n), init("init"), body(std::move(b)) {
    init.register_nb_transport_bw(this, &driver::nb_transport_bw);
    init.register_invalidate_direct_mem_ptr(this, &driver::invalidate);
    SC_THREAD(run);
  }
  void run() { body(*this); }

  tlm_sync_enum nb_transport_bw(tlm_generic_payload& t, tlm_phase& phase, sc_time& delay) {
    EXPECT_EQ(phase, BEGIN_RESP);
    responses.push_back({&t, now_ps(delay), t.get_response_status()});
    if (complete_on_begin_resp) return TLM_COMPLETED;
    tlm_generic_payload* tp = &t;
    sc_spawn([this, tp] {
      wait(end_resp_after);
      end_resp_times.push_back(now_ps());
      tlm_phase ph = END_RESP;
      sc_time d = SC_ZERO_TIME;
      EXPECT_EQ(init->nb_transport_fw(*tp, ph, d), TLM_COMPLETED);
    });
    return TLM_ACCEPTED;
  }
  void invalidate(sc_dt::uint64 s, sc_dt::uint64 e) { invalidations.emplace_back(s, e); }
};

void setup(tlm_generic_payload& gp, tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
           unsigned len) {
  cdma::test::setup_payload(gp, cmd, addr, data, len);
}

// 1 MiB memory, 10 GB/s, 50 ns latency, 64 KiB pages: 4096 B take 4096 / 10e9 s = 409.6 ns.
memory_params small_params() { return memory_params{1 << 20, 10e9, 50 * ps_per_ns, 65536}; }

class MemoryTest : public cdma::test::sc_fixture {};

}  // namespace

TEST_F(MemoryTest, BTransportDelayIsServiceTimePlusLatency) {
  memory_target mem("mem", small_params());
  std::vector<std::uint8_t> buf(4096, 0xAB);
  ps_t d1 = 0, d2 = 0;
  driver drv("drv", [&](driver& d) {
    tlm_generic_payload gp;
    setup(gp, TLM_WRITE_COMMAND, 0x1000, buf.data(), 4096);
    sc_time delay = SC_ZERO_TIME;
    d.init->b_transport(gp, delay);
    EXPECT_TRUE(gp.is_response_ok());
    EXPECT_TRUE(gp.is_dmi_allowed());
    d1 = to_ps(delay);
    wait(delay);
    // Again, once the bus is idle: same delay.
    delay = SC_ZERO_TIME;
    setup(gp, TLM_READ_COMMAND, 0x1000, buf.data(), 4096);
    d.init->b_transport(gp, delay);
    d2 = to_ps(delay);
  });
  drv.init.bind(mem.tgt);
  sc_start();
  // 4096 B / 10e9 B/s = 409,600 ps, + 50 ns latency = 459,600 ps.
  EXPECT_EQ(d1, 459600u);
  EXPECT_EQ(d2, 459600u);
  EXPECT_EQ(mem.bytes_written(), 4096u);
  EXPECT_EQ(mem.bytes_read(), 4096u);
  EXPECT_EQ(mem.busy_ps(), 2 * 409600u);
}

TEST_F(MemoryTest, BackToBackRequestsQueueOnTheBus) {
  memory_target mem("mem", small_params());
  std::vector<std::uint8_t> a(4096), b(2048);
  ps_t d1 = 0, d2 = 0, d3 = 0;
  driver drv("drv", [&](driver& d) {
    tlm_generic_payload gp;
    sc_time delay = SC_ZERO_TIME;
    setup(gp, TLM_READ_COMMAND, 0, a.data(), 4096);
    d.init->b_transport(gp, delay);
    d1 = to_ps(delay);
    delay = SC_ZERO_TIME;  // issued at the same time, before the first has finished
    setup(gp, TLM_READ_COMMAND, 8192, b.data(), 2048);
    d.init->b_transport(gp, delay);
    d2 = to_ps(delay);
    // A third one issued (annotated) 2 us later finds the bus idle again.
    delay = sc_time(2, SC_US);
    d.init->b_transport(gp, delay);
    d3 = to_ps(delay);
  });
  drv.init.bind(mem.tgt);
  sc_start();
  EXPECT_EQ(d1, 459600u);  // 409,600 + 50,000
  // Second waits for the first (409,600) then takes 2048 / 10e9 = 204,800: 614,400 + 50,000.
  EXPECT_EQ(d2, 664400u);
  // Third starts at its ready time 2,000,000: 2,000,000 + 204,800 + 50,000.
  EXPECT_EQ(d3, 2254800u);
}

// Temporal decoupling: a b_transport arriving at 1 us is called first, one arriving at 0 second
// (two LT initiators, or an engine's write booked ahead of its next read). The second starts
// at its own arrival on the idle bus: 4096 B / 10e9 = 409.6 ns + 50 ns = 459.6 ns, not behind
// the first (it was 1459.6 + 409.6 ns with the FIFO bus: new-user report, session 16). A third,
// arriving at 800 ns, does not fit before the first (800 + 409.6 > 1000 ns): it follows it,
// 1409.6 + 409.6 + 50 = 1869.2 ns.
TEST_F(MemoryTest, LtCallsOutOfTimeOrderEachStartAtTheirOwnArrivalWhenTheBusIsFree) {
  memory_target mem("mem", small_params());
  std::vector<std::uint8_t> a(4096);
  ps_t d1 = 0, d2 = 0, d3 = 0;
  driver drv("drv", [&](driver& d) {
    tlm_generic_payload gp;
    sc_time delay = sc_time(1, SC_US);
    setup(gp, TLM_READ_COMMAND, 0, a.data(), 4096);
    d.init->b_transport(gp, delay);
    d1 = to_ps(delay);
    delay = SC_ZERO_TIME;
    d.init->b_transport(gp, delay);
    d2 = to_ps(delay);
    delay = sc_time(800, SC_NS);
    d.init->b_transport(gp, delay);
    d3 = to_ps(delay);
  });
  drv.init.bind(mem.tgt);
  sc_start();
  EXPECT_EQ(d1, 1459600u);
  EXPECT_EQ(d2, 459600u);
  EXPECT_EQ(d3, 1869200u);
  EXPECT_EQ(mem.busy_ps(), 3 * 409600u);
}

TEST_F(MemoryTest, DmiPointerReadsWhatBTransportWrote) {
  memory_target mem("mem", small_params());
  const std::uint64_t addr = 0x12345;
  std::vector<std::uint8_t> pattern(100);
  for (unsigned i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::uint8_t>(i * 7 + 1);
  driver drv("drv", [&](driver& d) {
    tlm_generic_payload gp;
    sc_time delay = SC_ZERO_TIME;
    setup(gp, TLM_WRITE_COMMAND, addr, pattern.data(), 100);
    d.init->b_transport(gp, delay);
    ASSERT_TRUE(gp.is_response_ok());

    tlm_dmi dmi;
    setup(gp, TLM_READ_COMMAND, addr, nullptr, 0);
    ASSERT_TRUE(d.init->get_direct_mem_ptr(gp, dmi));
    // 64 KiB page containing 0x12345: [0x10000, 0x1FFFF].
    EXPECT_EQ(dmi.get_start_address(), 0x10000u);
    EXPECT_EQ(dmi.get_end_address(), 0x1FFFFu);
    EXPECT_TRUE(dmi.is_read_write_allowed());
    // 50 ns + 65536 B / 10e9 B/s (6,553,600 ps) = 6,603,600 ps.
    EXPECT_EQ(to_ps(dmi.get_read_latency()), 6603600u);
    EXPECT_EQ(to_ps(dmi.get_write_latency()), 6603600u);
    const std::uint8_t* p = dmi.get_dmi_ptr() + (addr - dmi.get_start_address());
    for (unsigned i = 0; i < pattern.size(); ++i) EXPECT_EQ(p[i], pattern[i]) << i;

    // A DMI write is seen by b_transport.
    dmi.get_dmi_ptr()[0x20] = 0x5A;
    std::uint8_t v = 0;
    setup(gp, TLM_READ_COMMAND, 0x10020, &v, 1);
    d.init->b_transport(gp, delay);
    EXPECT_EQ(v, 0x5A);

    // discard() through the target invalidates DMI pointers into the range first.
    mem.discard(0x10000, 0x10000);
    ASSERT_EQ(d.invalidations.size(), 1u);
    EXPECT_EQ(d.invalidations[0].first, 0x10000u);
    EXPECT_EQ(d.invalidations[0].second, 0x1FFFFu);
  });
  drv.init.bind(mem.tgt);
  sc_start();
  EXPECT_EQ(mem.store().resident_bytes(), 0u);
}

TEST_F(MemoryTest, OutOfRangeIsAnErrorNotACrash) {
  memory_target mem("mem", small_params());  // size 1 MiB = 0x100000
  const std::uint64_t size = 1 << 20;
  std::vector<std::uint8_t> buf(8, 0x11);
  const auto warnings_before = sc_report_handler::get_count(SC_WARNING);
  driver drv("drv", [&](driver& d) {
    tlm_generic_payload gp;
    // b_transport: last 4 bytes fit, 8 do not.
    sc_time delay(5, SC_NS);
    setup(gp, TLM_WRITE_COMMAND, size - 4, buf.data(), 8);
    d.init->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(delay, sc_time(5, SC_NS));  // errors add no time
    // Address overflow near 2^64 must not wrap into range.
    setup(gp, TLM_READ_COMMAND, ~0ull - 2, buf.data(), 8);
    d.init->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), TLM_ADDRESS_ERROR_RESPONSE);

    // transport_dbg: 0 bytes at or beyond the end.
    setup(gp, TLM_READ_COMMAND, size, buf.data(), 8);
    EXPECT_EQ(d.init->transport_dbg(gp), 0u);
    // ...and clipped to the memory when it starts inside.
    setup(gp, TLM_READ_COMMAND, size - 4, buf.data(), 8);
    EXPECT_EQ(d.init->transport_dbg(gp), 4u);

    // DMI request outside: refused.
    tlm_dmi dmi;
    setup(gp, TLM_READ_COMMAND, size + 100, nullptr, 0);
    EXPECT_FALSE(d.init->get_direct_mem_ptr(gp, dmi));

    // nb_transport_fw: accepted, the error comes back on BEGIN_RESP.
    tlm_generic_payload at;
    setup(at, TLM_READ_COMMAND, size, buf.data(), 8);
    tlm_phase ph = BEGIN_REQ;
    sc_time d0 = SC_ZERO_TIME;
    EXPECT_EQ(d.init->nb_transport_fw(at, ph, d0), TLM_UPDATED);
    EXPECT_EQ(ph, END_REQ);
    wait(1, SC_US);
    ASSERT_EQ(d.responses.size(), 1u);
    EXPECT_EQ(d.responses[0].status, TLM_ADDRESS_ERROR_RESPONSE);
  });
  drv.init.bind(mem.tgt);
  sc_start();
  // One warning per failed b_transport / nb_transport access (3).
  EXPECT_EQ(sc_report_handler::get_count(SC_WARNING) - warnings_before, 3);
  EXPECT_EQ(mem.bytes_written(), 0u);
  EXPECT_EQ(mem.bytes_read(), 0u);
  EXPECT_EQ(mem.busy_ps(), 0u);
}

TEST_F(MemoryTest, UnsupportedRequestsGetTheirErrorStatus) {
  memory_target mem("mem", small_params());
  std::uint8_t buf[8] = {};
  std::uint8_t be[8] = {0xFF, 0, 0xFF, 0, 0xFF, 0, 0xFF, 0};
  driver drv("drv", [&](driver& d) {
    tlm_generic_payload gp;
    sc_time delay = SC_ZERO_TIME;
    setup(gp, TLM_IGNORE_COMMAND, 0, buf, 8);
    d.init->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), TLM_COMMAND_ERROR_RESPONSE);
    setup(gp, TLM_WRITE_COMMAND, 0, buf, 8);
    gp.set_byte_enable_ptr(be);
    gp.set_byte_enable_length(8);
    d.init->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), TLM_BYTE_ENABLE_ERROR_RESPONSE);
    setup(gp, TLM_WRITE_COMMAND, 0, buf, 8);
    gp.set_streaming_width(4);
    d.init->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(delay, SC_ZERO_TIME);
  });
  drv.init.bind(mem.tgt);
  sc_start();
  EXPECT_EQ(mem.bytes_written(), 0u);
}

TEST_F(MemoryTest, AtResponsesTimedAndExclusive) {
  memory_target mem("mem", small_params());
  std::vector<std::uint8_t> a(4096), b(4096);
  std::vector<std::uint8_t> init_data(8192, 0x3C);
  mem.store().write(0, init_data.data(), init_data.size());
  tlm_generic_payload g1, g2;
  driver drv("drv", [&](driver& d) {
    setup(g1, TLM_READ_COMMAND, 0, a.data(), 4096);
    setup(g2, TLM_READ_COMMAND, 4096, b.data(), 4096);
    for (tlm_generic_payload* g : {&g1, &g2}) {
      tlm_phase ph = BEGIN_REQ;
      sc_time delay = SC_ZERO_TIME;
      EXPECT_EQ(d.init->nb_transport_fw(*g, ph, delay), TLM_UPDATED);
      EXPECT_EQ(ph, END_REQ);
    }
  });
  drv.complete_on_begin_resp = false;  // hold each response for 1 us before END_RESP
  drv.init.bind(mem.tgt);
  sc_start();
  ASSERT_EQ(drv.responses.size(), 2u);
  ASSERT_EQ(drv.end_resp_times.size(), 2u);
  // First: 4096 B / 10e9 = 409,600 ps + 50,000 latency = 459,600 ps.
  EXPECT_EQ(drv.responses[0].trans, &g1);
  EXPECT_EQ(drv.responses[0].time, 459600u);
  EXPECT_EQ(drv.end_resp_times[0], 1459600u);  // + 1 us hold
  // Second is ready at 2 x 409,600 + 50,000 = 869,200 ps, but the exclusion rule holds its
  // BEGIN_RESP until the first END_RESP at 1,459,600 ps.
  EXPECT_EQ(drv.responses[1].trans, &g2);
  EXPECT_EQ(drv.responses[1].time, 1459600u);
  EXPECT_EQ(drv.responses[1].status, TLM_OK_RESPONSE);
  EXPECT_EQ(a[4095], 0x3C);
  EXPECT_EQ(b[0], 0x3C);
}

TEST_F(MemoryTest, AtResponseCompletedOnBeginRespFreesTheChannel) {
  memory_target mem("mem", small_params());
  std::vector<std::uint8_t> a(4096), b(4096);
  tlm_generic_payload g1, g2;
  driver drv("drv", [&](driver& d) {
    setup(g1, TLM_WRITE_COMMAND, 0, a.data(), 4096);
    setup(g2, TLM_WRITE_COMMAND, 4096, b.data(), 4096);
    for (tlm_generic_payload* g : {&g1, &g2}) {
      tlm_phase ph = BEGIN_REQ;
      sc_time delay = SC_ZERO_TIME;
      d.init->nb_transport_fw(*g, ph, delay);
    }
  });
  drv.init.bind(mem.tgt);  // returns TLM_COMPLETED on BEGIN_RESP
  sc_start();
  ASSERT_EQ(drv.responses.size(), 2u);
  EXPECT_EQ(drv.responses[0].time, 459600u);  // 409,600 + 50,000
  EXPECT_EQ(drv.responses[1].time, 869200u);  // 2 x 409,600 + 50,000, no hold
  EXPECT_EQ(mem.bytes_written(), 8192u);
}

TEST_F(MemoryTest, DefaultHostAndGpuMemoryTiming) {
  host_memory host("host");
  gpu_memory_params bus_model;  // the first-version bus timing (model = dram is tested in
  bus_model.model = gpu_memory_model::bus;  // tests/models/test_gpu_memory.cpp)
  gpu_memory_controller gpu("gpu", bus_model);
  EXPECT_EQ(host.store().size(), 64ull << 30);
  EXPECT_EQ(gpu.store().size(), 12ull << 30);
  EXPECT_DOUBLE_EQ(gpu.params().bandwidth_Bps, 302.4e9);  // 336e9 x 0.9
  std::vector<std::uint8_t> buf(1 << 20, 0x42), gbuf(1 << 20, 0x42);
  ps_t dh = 0, dg = 0;
  driver dh_drv("dh", [&](driver& d) {
    tlm_generic_payload gp;
    sc_time delay = SC_ZERO_TIME;
    // Near the top of 64 GiB: fine, and only one page becomes resident.
    setup(gp, TLM_WRITE_COMMAND, (64ull << 30) - (1 << 20), buf.data(), 1 << 20);
    d.init->b_transport(gp, delay);
    EXPECT_TRUE(gp.is_response_ok());
    dh = to_ps(delay);
  });
  driver dg_drv("dg", [&](driver& d) {
    tlm_generic_payload gp;
    sc_time delay = SC_ZERO_TIME;
    setup(gp, TLM_READ_COMMAND, 0, gbuf.data(), 1 << 20);
    d.init->b_transport(gp, delay);
    EXPECT_TRUE(gp.is_response_ok());
    dg = to_ps(delay);
  });
  dh_drv.init.bind(host.tgt);
  dg_drv.init.bind(gpu.tgt);
  sc_start();
  // Host: 1,048,576 B / 25.6e9 B/s = 40.96 us = 40,960,000 ps, + 80 ns = 41,040,000 ps.
  EXPECT_EQ(dh, 41040000u);
  // GPU: 1,048,576 / 302.4e9 = 3,467,513.2 ps -> 3,467,514 (rounded up), + 200 ns.
  EXPECT_EQ(dg, 3667514u);
  EXPECT_EQ(host.store().resident_bytes(), 16u * 65536u);  // 1 MiB = 16 pages of 64 KiB
  EXPECT_EQ(gpu.store().resident_bytes(), 0u);             // reads allocate nothing
  EXPECT_EQ(gbuf[0], 0u);                                  // untouched GPU memory reads 0
}

TEST_F(MemoryTest, GpuParamsValidated) {
  gpu_memory_params p;
  p.efficiency = 1.5;
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p.efficiency = 0.9;
  p.channels = 0;
  EXPECT_THROW(p.validate(), std::invalid_argument);
}

// ---- backing_store (pure C++) ---------------------------------------------------------------

TEST(BackingStore, GrowsOnlyWithTouchedPages) {
  mem::backing_store s(1ull << 30, 4096);  // 1 GiB, 4 KiB pages
  EXPECT_EQ(s.resident_bytes(), 0u);
  std::uint8_t out[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  s.read(123456, out, 8);  // untouched: zeros, nothing allocated
  for (auto v : out) EXPECT_EQ(v, 0u);
  EXPECT_EQ(s.resident_bytes(), 0u);

  const std::uint8_t one = 9;
  s.write(5, &one, 1);
  EXPECT_EQ(s.resident_bytes(), 4096u);  // page 0
  const std::uint8_t four[4] = {1, 2, 3, 4};
  s.write(10 * 4096 - 2, four, 4);  // straddles pages 9 and 10
  EXPECT_EQ(s.resident_bytes(), 3u * 4096u);
  s.read(10 * 4096 - 2, out, 4);
  EXPECT_EQ(out[0], 1u);
  EXPECT_EQ(out[3], 4u);
  s.write(5, &one, 1);  // same page again: no growth
  EXPECT_EQ(s.resident_bytes(), 3u * 4096u);
  EXPECT_EQ(s.page_pointer(4096 * 7 + 12), s.page_pointer(4096 * 7));
  EXPECT_EQ(s.resident_bytes(), 4u * 4096u);
}

TEST(BackingStore, DiscardFreesWholePagesAndZeroesPartialOnes) {
  mem::backing_store s(1 << 20, 4096);
  std::vector<std::uint8_t> data(3 * 4096, 0xEE);
  s.write(4096, data.data(), data.size());  // pages 1, 2, 3
  EXPECT_EQ(s.resident_bytes(), 3u * 4096u);
  // [4096 + 100, 4 x 4096 - 100): page 2 wholly inside (freed), pages 1 and 3 partially.
  s.discard(4096 + 100, 3 * 4096 - 200);
  EXPECT_EQ(s.resident_bytes(), 2u * 4096u);
  std::uint8_t b = 0;
  s.read(4096 + 99, &b, 1);
  EXPECT_EQ(b, 0xEE);  // before the range: kept
  s.read(4096 + 100, &b, 1);
  EXPECT_EQ(b, 0u);
  s.read(2 * 4096 + 5, &b, 1);
  EXPECT_EQ(b, 0u);
  s.read(4 * 4096 - 100, &b, 1);
  EXPECT_EQ(b, 0xEE);  // after the range: kept
  s.discard(0, 1 << 20);
  EXPECT_EQ(s.resident_bytes(), 0u);
}

TEST(BackingStore, OutOfRangeThrowsNamingTheAddress) {
  mem::backing_store s(0x1000, 256);
  std::uint8_t b[4] = {};
  try {
    s.read(0xFFE, b, 4);
    FAIL() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("0xffe"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.write(0x1000, b, 1), std::out_of_range);
  EXPECT_THROW(s.discard(0x800, 0x801), std::out_of_range);
  EXPECT_THROW(s.page_pointer(0x1000), std::out_of_range);
  EXPECT_NO_THROW(s.read(0xFFC, b, 4));
  EXPECT_THROW(mem::backing_store(16, 0), std::invalid_argument);
}
