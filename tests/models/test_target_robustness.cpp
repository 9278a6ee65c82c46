// Bad input at the library's targets (breakit-int-s13): the pcie_link checks a transaction whole
// before it splits it into TLPs (wrap past 2^64, outside host memory: nothing written); a null
// data pointer is an error response, not a crash, on every target and path; memory_params and
// cdma_engine_params refuse NaN / zero / tiny values naming the field; gpu_memory_controller
// reports an initiator that breaks the request exclusion rule without losing the held request;
// the range query (mem::query_range) of the memory targets. Expected values by hand below.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tests/support/report_log.h"
#include "tests/support/payload.h"
#include "tests/support/sc_fixture.h"
#include "tlm/cdma/cdma_engine.h"
#include "tlm/cdma/descriptor.h"
#include "tlm/core/sc_time_util.h"
#include "tlm/memory/access_check.h"
#include "tlm/memory/gpu_memory_controller.h"
#include "tlm/memory/host_memory.h"
#include "tlm/memory/memory_target.h"
#include "tlm/pcie/pcie_link.h"

using namespace cdma;
using namespace sc_core;
using namespace tlm;

namespace {

constexpr std::uint64_t top = std::numeric_limits<std::uint64_t>::max();  // 2^64 - 1

// A test initiator: runs `body` in an SC_THREAD; records BEGIN_RESP (answered TLM_COMPLETED)
// and counts END_REQ on the backward path.
struct driver : sc_module {
  tlm_utils::simple_initiator_socket<driver> init;
  std::function<void(driver&)> body;
  std::vector<tlm_generic_payload*> responses;
  std::vector<tlm_generic_payload*> end_reqs;
  sc_event resp_ev;
  SC_HAS_PROCESS(driver);
  driver(sc_module_name n, std::function<void(driver&)> b) : sc_module(n), init("init"), body(std::move(b)) {
    init.register_nb_transport_bw(this, &driver::bw);
    SC_THREAD(run);
  }
  void run() { body(*this); }
  tlm_sync_enum bw(tlm_generic_payload& t, tlm_phase& ph, sc_time&) {
    if (ph == END_REQ) {
      end_reqs.push_back(&t);
      return TLM_ACCEPTED;
    }
    EXPECT_EQ(ph, BEGIN_RESP);
    responses.push_back(&t);
    resp_ev.notify(SC_ZERO_TIME);
    return TLM_COMPLETED;
  }
  /// b_transport; returns the annotated delay (ps) added.
  tlm_response_status lt(tlm_command cmd, std::uint64_t addr, std::uint8_t* data, unsigned len,
                         ps_t* added = nullptr) {
    tlm_generic_payload gp;
    set(gp, cmd, addr, data, len);
    sc_time d = SC_ZERO_TIME;
    init->b_transport(gp, d);
    if (added) *added = to_ps(d);
    wait(d);
    return gp.get_response_status();
  }
  /// A whole AT transaction (BEGIN_REQ, then waits for BEGIN_RESP unless completed at once).
  tlm_response_status at(tlm_command cmd, std::uint64_t addr, std::uint8_t* data, unsigned len) {
    tlm_generic_payload gp;
    set(gp, cmd, addr, data, len);
    tlm_phase ph = BEGIN_REQ;
    sc_time d = SC_ZERO_TIME;
    const std::size_t before = responses.size();
    const tlm_sync_enum s = init->nb_transport_fw(gp, ph, d);
    if (s != TLM_COMPLETED && !(s == TLM_UPDATED && ph == BEGIN_RESP))
      while (responses.size() == before) wait(resp_ev);
    return gp.get_response_status();
  }
  unsigned dbg(tlm_command cmd, std::uint64_t addr, std::uint8_t* data, unsigned len) {
    tlm_generic_payload gp;
    set(gp, cmd, addr, data, len);
    return init->transport_dbg(gp);
  }
  static void set(tlm_generic_payload& gp, tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                  unsigned len) {
    cdma::test::setup_payload(gp, cmd, addr, data, len);
  }
};

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// 1 MiB host memory (0x100000 bytes), 10 GB/s, 50 ns.
host_memory_params small_host() {
  host_memory_params hp;
  hp.size_bytes = 1 << 20;
  hp.bandwidth_Bps = 10e9;
  hp.latency_ps = 50000;
  return hp;
}

struct link_bench {
  driver drv;
  pcie_link link;
  host_memory host;
  link_bench(std::function<void(driver&)> body, bool set_size)
      : drv("drv", std::move(body)), link("link"), host("host", small_host()) {
    drv.init.bind(link.tgt);
    link.init.bind(host.tgt);
    if (set_size) link.set_host_size(small_host().size_bytes);
  }
};

// The four targets the null-pointer and arrival tests drive at once, each from a driver
// running `body` (d1 -> mem, d2 -> gpu, d3 -> gpubus, d4 -> link): a memory_target (1 MiB,
// 10 GB/s), the GPU controller with its DRAM model (Titan X GDDR5) and with its bus model, and
// a pcie_link in front of small_host() (set_host_size). Warnings come from mem, gpu, gpubus,
// link and host.
struct four_targets {
  static memory_params mem_params() {
    memory_params mp;
    mp.size_bytes = 1 << 20;
    mp.bandwidth_Bps = 10e9;
    return mp;
  }
  static gpu_memory_params bus_params() {
    gpu_memory_params gb;
    gb.model = gpu_memory_model::bus;
    return gb;
  }
  memory_target mem{"mem", mem_params()};
  gpu_memory_controller gpu{"gpu", gpu_memory_params{}};
  gpu_memory_controller gpubus{"gpubus", bus_params()};
  pcie_link link{"link"};
  host_memory host{"host", small_host()};
  driver d1, d2, d3, d4;
  explicit four_targets(const std::function<void(driver&)>& body)
      : d1("d1", body), d2("d2", body), d3("d3", body), d4("d4", body) {
    link.set_host_size(small_host().size_bytes);
    link.init.bind(host.tgt);
    d1.init.bind(mem.tgt);
    d2.init.bind(gpu.tgt);
    d3.init.bind(gpubus.tgt);
    d4.init.bind(link.tgt);
  }
};

class TargetRobustness : public cdma::test::sc_fixture {};

}  // namespace

// ---- pcie_link: the whole transaction is checked before it is split -------------------------

// A1/A2 of breakit-int-s13, LT and AT: each refused transaction gets TLM_ADDRESS_ERROR_RESPONSE,
// writes nothing, sends no TLP, takes no time and gives one warning from the link naming the
// caller's address and length.
TEST_F(TargetRobustness, PcieLinkRefusesAWrapOrOutOfRangeTransactionWhole) {
  for (const bool at : {false, true}) {
    cdma::test::reset_systemc_context();
    cdma::test::report_log log;
    const std::uint64_t size = 1 << 20;
    std::vector<std::uint8_t> data(8192, 0xAB);
    link_bench b(
        [&](driver& d) {
          auto go = [&](std::uint64_t addr, unsigned len) {
            ps_t added = 0;
            const auto st = at ? d.at(TLM_WRITE_COMMAND, addr, data.data(), len)
                               : d.lt(TLM_WRITE_COMMAND, addr, data.data(), len, &added);
            EXPECT_EQ(added, 0u) << "a refused transaction takes no time";
            return st;
          };
          // 16 B at 2^64 - 8: bytes 8..15 would wrap to host address 0.
          EXPECT_EQ(go(top - 7, 16), TLM_ADDRESS_ERROR_RESPONSE);
          // 64 B at 2^64 - 32 (t_at pcie wrap): would overwrite host bytes 0..31.
          EXPECT_EQ(go(top - 31, 64), TLM_ADDRESS_ERROR_RESPONSE);
          // 16 B at size - 8: the lower 8 bytes are inside.
          EXPECT_EQ(go(size - 8, 16), TLM_ADDRESS_ERROR_RESPONSE);
          // 8192 B at size - 4096: one 4 KiB page inside, one outside.
          EXPECT_EQ(go(size - 4096, 8192), TLM_ADDRESS_ERROR_RESPONSE);
        },
        true);
    sc_start();
    // Nothing written: host bytes 0..31 and the last 4 KiB are still zero.
    std::vector<std::uint8_t> got(4096, 0xEE);
    b.host.store().read(0, got.data(), 32);
    EXPECT_EQ(std::vector<std::uint8_t>(got.begin(), got.begin() + 32), std::vector<std::uint8_t>(32, 0)) << at;
    b.host.store().read(size - 4096, got.data(), 4096);
    EXPECT_EQ(got, std::vector<std::uint8_t>(4096, 0)) << at;
    EXPECT_EQ(b.host.bytes_written(), 0u);
    EXPECT_EQ(b.link.stats(pcie::direction::d2h).tlps, 0u);
    // One warning per transaction, from the link, with the caller's address and length.
    const auto w = log.warnings();
    ASSERT_EQ(w.size(), 4u) << at;
    for (const auto& e : w) EXPECT_EQ(e.type, "link") << e.msg;
    EXPECT_TRUE(has(w[0].msg, "write of 16 bytes at 0xfffffffffffffff8 wraps past 2^64")) << w[0].msg;
    EXPECT_TRUE(has(w[1].msg, "write of 64 bytes at 0xffffffffffffffe0 wraps past 2^64")) << w[1].msg;
    EXPECT_TRUE(has(w[2].msg, "write of 16 bytes at 0xffff8 is outside host memory (size 0x100000")) << w[2].msg;
    EXPECT_TRUE(has(w[3].msg, "write of 8192 bytes at 0xff000 is outside host memory")) << w[3].msg;
  }
}

// The boundary cases that are fine: a write ending exactly at the end of host memory goes
// through; without set_host_size the wrap is still refused.
TEST_F(TargetRobustness, PcieLinkAcceptsAWriteEndingAtTheHostEndAndAlwaysRefusesAWrap) {
  const std::uint64_t size = 1 << 20;
  std::vector<std::uint8_t> data(16, 0x5A);
  cdma::test::report_log log;
  link_bench b(
      [&](driver& d) {
        EXPECT_EQ(d.lt(TLM_WRITE_COMMAND, size - 16, data.data(), 16), TLM_OK_RESPONSE);
        EXPECT_EQ(d.lt(TLM_WRITE_COMMAND, top - 7, data.data(), 16), TLM_ADDRESS_ERROR_RESPONSE);
      },
      false);  // host size unknown to the link
  sc_start();
  std::vector<std::uint8_t> got(16);
  b.host.store().read(size - 16, got.data(), 16);
  EXPECT_EQ(got, data);
  b.host.store().read(0, got.data(), 8);
  EXPECT_EQ(std::vector<std::uint8_t>(got.begin(), got.begin() + 8), std::vector<std::uint8_t>(8, 0));
  ASSERT_EQ(log.warnings().size(), 1u);
  EXPECT_EQ(log.warnings()[0].type, "link");
}

// ---- null data pointer: an error response on every target and path --------------------------

TEST_F(TargetRobustness, NullDataPointerIsAGenericErrorOnEveryTarget) {
  cdma::test::report_log log;
  auto body = [](driver& d) {
    for (tlm_command c : {TLM_READ_COMMAND, TLM_WRITE_COMMAND}) {
      EXPECT_EQ(d.lt(c, 0x1000, nullptr, 64), TLM_GENERIC_ERROR_RESPONSE) << d.name();
      EXPECT_EQ(d.at(c, 0x1000, nullptr, 64), TLM_GENERIC_ERROR_RESPONSE) << d.name();
      EXPECT_EQ(d.dbg(c, 0x1000, nullptr, 64), 0u) << d.name();
    }
  };
  four_targets t(body);
  sc_start();
  // 6 accesses per target (read and write: LT, AT, debug), each one warning from the target
  // naming the address; nothing reached host memory through the link.
  for (const char* m : {"mem", "gpu", "gpubus", "link"}) {
    const auto w = log.warnings(m);
    ASSERT_EQ(w.size(), 6u) << m;
    for (const auto& e : w) EXPECT_TRUE(has(e.msg, "64 bytes at 0x1000 has a null data pointer")) << e.msg;
  }
  EXPECT_TRUE(log.warnings("host").empty());
  EXPECT_EQ(t.mem.bytes_written() + t.mem.bytes_read(), 0u);
}

// Breaker s18 F7 (fixed in session 20): a transaction whose time (now + annotated delay) lies beyond
// mem::max_arrival_ps = 2^62 ps is refused by every target, LT and AT, before anything is
// booked: TLM_GENERIC_ERROR_RESPONSE, the LT delay unchanged, BEGIN_REQ completed at once, one
// warning naming the address, the delay and the bound. Before, a delay of 2^64 - 1 ps wrapped
// and was answered OK after a few ns (gpu 24 ns, memory_target 7.4 ns: a response before its
// request) and 2^63 ps queued the link's later transactions ~106 days behind it. A delay
// below the bound is served as before.
TEST_F(TargetRobustness, EveryTargetRefusesATransactionArrivingAfter2To62Ps) {
  cdma::test::report_log log;
  static_assert(mem::max_arrival_ps == 4611686018427387904ull);
  const std::vector<ps_t> late = {top, top - 1000, ps_t{1} << 63, mem::max_arrival_ps + 1};
  auto body = [&late](driver& d) {
    std::uint8_t b[64] = {};
    for (const ps_t t : late) {
      tlm_generic_payload g;
      driver::set(g, TLM_READ_COMMAND, 0x1000, b, 64);
      sc_time dl = sc_time::from_value(t);
      d.init->b_transport(g, dl);
      EXPECT_EQ(g.get_response_status(), TLM_GENERIC_ERROR_RESPONSE) << d.name() << " " << t;
      EXPECT_EQ(dl.value(), t) << d.name();
      tlm_generic_payload a;
      driver::set(a, TLM_WRITE_COMMAND, 0x1000, b, 64);
      tlm_phase ph = BEGIN_REQ;
      sc_time da = sc_time::from_value(t);
      EXPECT_EQ(d.init->nb_transport_fw(a, ph, da), TLM_COMPLETED) << d.name() << " " << t;
      EXPECT_EQ(a.get_response_status(), TLM_GENERIC_ERROR_RESPONSE) << d.name() << " " << t;
    }
    // 1 s (1e12 ps) before the bound: served, answered after its arrival.
    tlm_generic_payload g;
    driver::set(g, TLM_READ_COMMAND, 0x1000, b, 64);
    const ps_t ok = mem::max_arrival_ps - 1'000'000'000'000;
    sc_time dl = sc_time::from_value(ok);
    d.init->b_transport(g, dl);
    EXPECT_EQ(g.get_response_status(), TLM_OK_RESPONSE) << d.name();
    EXPECT_GT(dl.value(), ok) << d.name();
    EXPECT_LT(dl.value(), ok + 10'000'000) << d.name();  // within 10 us
  };
  four_targets t(body);
  sc_start();
  // Per target 8 refusals (4 delays, LT and AT), each one warning naming the transaction;
  // nothing was written, and nothing but the one read below the bound reached host memory.
  for (const char* m : {"mem", "gpu", "gpubus", "link"}) {
    const auto w = log.warnings(m);
    ASSERT_EQ(w.size(), 8u) << m;
    EXPECT_EQ(w[0].msg, "read of 64 bytes at 0x1000 with annotated delay 18446744073709551615 ps at time 0 ps "
                        "arrives after 4611686018427387904 ps (2^62 ps, about 53 days of simulated time, the "
                        "latest time a target accepts); expected time + annotated delay below that")
        << m;
    EXPECT_TRUE(has(w[1].msg, "write of 64 bytes at 0x1000 with annotated delay 18446744073709551615 ps")) << m;
  }
  EXPECT_TRUE(log.warnings("host").empty());
  EXPECT_EQ(t.mem.bytes_written(), 0u);
  EXPECT_EQ(t.mem.bytes_read(), 64u);
  EXPECT_EQ(t.host.bytes_written(), 0u);
  EXPECT_EQ(t.host.bytes_read(), 64u);
}

// ---- gpu_memory_controller: request exclusion rule -------------------------------------------

// max_outstanding = 1: the first request is accepted (END_REQ), the second is held (END_REQ
// withheld), a third BEGIN_REQ breaks the exclusion rule: SC_REPORT_ERROR naming the rule, the
// third refused with TLM_COMPLETED / generic error, and the held second still answered.
TEST_F(TargetRobustness, GpuControllerReportsARequestExclusionViolationAndKeepsTheHeldRequest) {
  cdma::test::report_log log;
  sc_report_handler::set_actions("gpu", SC_ERROR, SC_DISPLAY);  // report, do not throw
  gpu_memory_params p;
  p.max_outstanding = 1;
  gpu_memory_controller gpu("gpu", p);
  std::vector<std::uint8_t> buf(3 * 64, 0x11);
  tlm_generic_payload g[3];
  tlm_sync_enum third = TLM_ACCEPTED;
  driver d("d", [&](driver& dr) {
    for (int i = 0; i < 3; ++i) {
      driver::set(g[i], TLM_WRITE_COMMAND, 0x1000 * (i + 1), buf.data() + 64 * i, 64);
      tlm_phase ph = BEGIN_REQ;
      sc_time t = SC_ZERO_TIME;
      const tlm_sync_enum s = dr.init->nb_transport_fw(g[i], ph, t);
      if (i == 0) {
        EXPECT_TRUE(s == TLM_UPDATED && ph == END_REQ);
      } else if (i == 1) {
        EXPECT_EQ(s, TLM_ACCEPTED);
      } else {
        third = s;
      }
    }
    wait(10, SC_US);
  });
  d.init.bind(gpu.tgt);
  sc_start();
  EXPECT_EQ(third, TLM_COMPLETED);
  EXPECT_EQ(g[2].get_response_status(), TLM_GENERIC_ERROR_RESPONSE);
  const auto e = log.errors("gpu");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(has(e[0].msg, "request exclusion rule")) << e[0].msg;
  EXPECT_TRUE(has(e[0].msg, "0x3000")) << e[0].msg;  // the offending request
  EXPECT_TRUE(has(e[0].msg, "0x2000")) << e[0].msg;  // the held one
  // Responses: the first and the held second (END_REQ then BEGIN_RESP), both OK.
  ASSERT_EQ(d.responses.size(), 2u);
  EXPECT_EQ(d.responses[0], &g[0]);
  EXPECT_EQ(d.responses[1], &g[1]);
  EXPECT_EQ(g[1].get_response_status(), TLM_OK_RESPONSE);
  ASSERT_EQ(d.end_reqs.size(), 1u);
  EXPECT_EQ(d.end_reqs[0], &g[1]);
  std::vector<std::uint8_t> got(64);
  gpu.store().read(0x2000, got.data(), 64);
  EXPECT_EQ(got, std::vector<std::uint8_t>(64, 0x11));
  gpu.store().read(0x3000, got.data(), 64);
  EXPECT_EQ(got, std::vector<std::uint8_t>(64, 0));  // the refused third wrote nothing
}

// ---- range query -----------------------------------------------------------------------------

TEST_F(TargetRobustness, MemoryTargetsAnswerTheRangeQuery) {
  memory_params mp;
  mp.size_bytes = 1 << 20;  // 0x100000
  memory_target mem("mem", mp);
  pcie_link link("link");
  host_memory host("host", small_host());
  link.init.bind(host.tgt);
  driver d1("d1", [&](driver& d) {
    std::uint64_t in = 7;
    EXPECT_TRUE(mem::query_range(d.init, 0x1000, 0x2000, in));
    EXPECT_EQ(in, 0x2000u);  // whole inside
    EXPECT_TRUE(mem::query_range(d.init, 0xFF000, 0x2000, in));
    EXPECT_EQ(in, 0x1000u);  // 0x100000 - 0xFF000
    EXPECT_TRUE(mem::query_range(d.init, 0x100000, 1, in));
    EXPECT_EQ(in, 0u);
    EXPECT_TRUE(mem::query_range(d.init, 0, std::uint64_t{1} << 50, in));
    EXPECT_EQ(in, 0x100000u);  // a 64-bit length
  });
  driver d2("d2", [&](driver& d) {  // through the link (debug transport forwarded)
    std::uint64_t in = 0;
    EXPECT_TRUE(mem::query_range(d.init, 0xFFF00, 0x200, in));
    EXPECT_EQ(in, 0x100u);
  });
  d1.init.bind(mem.tgt);
  d2.init.bind(link.tgt);
  sc_start();
}

// ---- parameters ------------------------------------------------------------------------------

TEST_F(TargetRobustness, MemoryParamsRefuseNaNInfiniteNegativeAndTinyBandwidth) {
  memory_params p;
  p.size_bytes = 1 << 20;
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -1.0, 1e-300, 999999.0}) {
    p.bandwidth_Bps = bad;
    try {
      p.validate();
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(has(e.what(), "memory_params.bandwidth_Bps")) << e.what();
      EXPECT_TRUE(has(e.what(), "expected 0 (infinitely fast) or a finite rate >= 1e+06 B/s")) << e.what();
    }
    EXPECT_THROW(memory_target("m", p), std::invalid_argument) << bad;
    cdma::test::reset_systemc_context();
  }
  for (double ok : {0.0, 1e6, 25.6e9}) {
    p.bandwidth_Bps = ok;
    EXPECT_NO_THROW(p.validate()) << ok;
  }
  // host_memory goes through the same check.
  host_memory_params hp;
  hp.bandwidth_Bps = std::nan("");
  EXPECT_THROW(host_memory("h", hp), std::invalid_argument);
}

// gpu_memory_params has the same floor, on peak x efficiency (the rate the bus model uses):
// 2e6 B/s x 0.5 = 1e6 B/s is accepted, 1.9e6 x 0.5 is not.
TEST_F(TargetRobustness, GpuMemoryParamsRefuseNaNInfiniteAndTinyBandwidth) {
  gpu_memory_params p;
  p.model = gpu_memory_model::bus;
  p.efficiency = 0.5;
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), 1e-300, 1.9e6}) {
    p.peak_bandwidth_Bps = bad;
    try {
      p.validate();
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(has(e.what(), "gpu_memory_params.peak_bandwidth_Bps")) << e.what();
      EXPECT_TRUE(has(e.what(), ">= 1e+06 B/s")) << e.what();
    }
  }
  p.peak_bandwidth_Bps = 2e6;
  EXPECT_NO_THROW(p.validate());
}

// Breaker s18: memory_params.latency_ps = 2^64 - 1 wrapped (a write answered 1 ps early) and
// page_bytes had no upper bound (a 2^40-byte page ended the simulation with std::bad_alloc at
// the first DMI request). Bounds: latency 0 .. 1e12 ps (1 s), page 1 .. 2^30 bytes (1 GiB).
TEST_F(TargetRobustness, MemoryParamsRefuseALatencyAboveOneSecondAndAPageAboveOneGiB) {
  memory_params p;
  p.size_bytes = 1 << 20;
  p.bandwidth_Bps = 1e9;
  // validate() refuses p naming the field, the value and the expected range.
  auto refused = [&](const std::string& field, std::uint64_t bad, const std::string& expected) {
    try {
      p.validate();
      ADD_FAILURE() << field << " = " << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(has(e.what(), "memory_params." + field + " = " + std::to_string(bad))) << e.what();
      EXPECT_TRUE(has(e.what(), expected)) << e.what();
    }
  };
  for (ps_t bad : {ps_t{1'000'000'000'001}, top}) {
    p.latency_ps = bad;
    refused("latency_ps", bad, "expected 0 .. 1000000000000 ps (1 s)");
    EXPECT_THROW(memory_target("m", p), std::invalid_argument) << bad;
    cdma::test::reset_systemc_context();
  }
  p.latency_ps = 1'000'000'000'000;
  EXPECT_NO_THROW(p.validate());
  for (std::size_t bad : {std::size_t{0}, (std::size_t{1} << 30) + 1, std::size_t{1} << 40}) {
    p.page_bytes = bad;
    refused("page_bytes", bad, "expected 1 .. 1073741824 bytes");
    EXPECT_THROW(mem::backing_store(16, bad), std::invalid_argument) << bad;
  }
  host_memory_params hp;
  hp.page_bytes = std::size_t{1} << 40;
  EXPECT_THROW(host_memory("h", hp), std::invalid_argument);
  cdma::test::reset_systemc_context();
  hp.page_bytes = 65536;
  hp.latency_ps = top;
  EXPECT_THROW(host_memory("h", hp), std::invalid_argument);
  cdma::test::reset_systemc_context();
  // The largest latency is served exactly: a 16-byte write at 1 GB/s takes 16 ns on the bus,
  // then 1 s: 1e12 + 16000 ps.
  p.page_bytes = 65536;
  memory_target mem("mem", p);
  ps_t added = 0;
  driver d("d", [&](driver& dr) {
    std::uint8_t b[16] = {};
    EXPECT_EQ(dr.lt(TLM_WRITE_COMMAND, 0, b, 16, &added), TLM_OK_RESPONSE);
  });
  d.init.bind(mem.tgt);
  sc_start();
  EXPECT_EQ(added, ps_t{1'000'000'016'000});
}

// The same bounds on gpu_memory_params, naming each field.
TEST_F(TargetRobustness, GpuMemoryParamsRefuseALatencyAboveOneSecondAndAPageAboveOneGiB) {
  for (const char* field : {"latency_ps", "controller_latency_ps", "page_bytes"}) {
    gpu_memory_params p;
    const std::string f = field;
    if (f == "latency_ps") p.latency_ps = top;
    if (f == "controller_latency_ps") p.controller_latency_ps = 1'000'000'000'001;
    if (f == "page_bytes") p.page_bytes = std::size_t{1} << 40;
    try {
      p.validate();
      ADD_FAILURE() << field << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(has(e.what(), "gpu_memory_params." + f + " = ")) << e.what();
    }
  }
  gpu_memory_params ok;
  ok.latency_ps = ok.controller_latency_ps = 1'000'000'000'000;
  ok.page_bytes = std::size_t{1} << 30;
  EXPECT_NO_THROW(ok.validate());
}

// Breaker s18: the controller sized its response wheel from the latency alone (2 x horizon /
// 32 ps buckets): a 1 ms controller latency took 286 MB and 6 s for fmnist_cnn b1, 100 ms
// several GB, and 1 s (accepted) ended in std::bad_alloc at construction. Now the wheel has
// at most 2^16 buckets and its order is exact whatever the latency: the controller latency is
// added to each response, so the same read answers exactly 1 s - 10 ns later than with the
// default 10 ns, in LT and in AT.
TEST_F(TargetRobustness, GpuControllerWithAOneSecondControllerLatencyAnswersOneSecondLater) {
  ps_t lt_at[2][2] = {};  // [latency 10 ns, 1 s][LT, AT]: time of the read's response (ps)
  for (int k = 0; k < 2; ++k)
    for (int at = 0; at < 2; ++at) {  // a fresh controller, one 64-byte read at time 0
      cdma::test::reset_systemc_context();
      gpu_memory_params p;
      p.size_bytes = 1 << 20;
      if (k == 1) p.controller_latency_ps = 1'000'000'000'000;
      gpu_memory_controller gpu("gpu", p);
      driver d("d", [&](driver& dr) {
        std::uint8_t b[64] = {};
        ps_t added = 0;
        if (at) {
          EXPECT_EQ(dr.at(TLM_READ_COMMAND, 0x1000, b, 64), TLM_OK_RESPONSE);
          lt_at[k][1] = now_ps();
        } else {
          EXPECT_EQ(dr.lt(TLM_READ_COMMAND, 0x1000, b, 64, &added), TLM_OK_RESPONSE);
          lt_at[k][0] = added;
        }
      });
      d.init.bind(gpu.tgt);
      sc_start();
    }
  EXPECT_GT(lt_at[0][0], 0u);
  EXPECT_EQ(lt_at[1][0] - lt_at[0][0], ps_t{1'000'000'000'000 - 10'000});
  EXPECT_EQ(lt_at[1][1] - lt_at[0][1], ps_t{1'000'000'000'000 - 10'000});
}

TEST_F(TargetRobustness, EngineParamsAreValidatedNamingTheField) {
  EXPECT_NO_THROW(cdma_engine_params{}.validate());
  struct bad_case {
    const char* field;
    std::function<void(cdma_engine_params&)> set;
  };
  const std::vector<bad_case> cases = {
      {"unit_bytes_per_cycle", [](auto& p) { p.unit_bytes_per_cycle = std::nan(""); }},
      {"unit_bytes_per_cycle", [](auto& p) { p.unit_bytes_per_cycle = 0; }},
      {"unit_bytes_per_cycle", [](auto& p) { p.unit_bytes_per_cycle = -32; }},
      {"unit_bytes_per_cycle", [](auto& p) { p.unit_bytes_per_cycle = std::numeric_limits<double>::infinity(); }},
      {"clock_hz", [](auto& p) { p.clock_hz = 0; }},
      {"clock_hz", [](auto& p) { p.clock_hz = std::nan(""); }},
      {"unit_bytes_per_cycle x clock_hz", [](auto& p) { p.unit_bytes_per_cycle = 1e-6; p.clock_hz = 1e3; }},
      {"codec_bytes_per_cycle[zlib]", [](auto& p) { p.codec_bytes_per_cycle[3] = std::nan(""); }},
      {"codec_bytes_per_cycle[zvc]", [](auto& p) { p.codec_bytes_per_cycle[1] = -1; }},
      {"codec_bytes_per_cycle[zstd] x clock_hz", [](auto& p) { p.codec_bytes_per_cycle[5] = 1e-10; }},
      {"codec_decompression_bytes_per_cycle[zlib]", [](auto& p) { p.codec_decompression_bytes_per_cycle[3] = -4; }},
      {"codec_decompression_bytes_per_cycle[lz4] x clock_hz",
       [](auto& p) { p.codec_decompression_bytes_per_cycle[4] = 1e-10; }},
      {"compression_units", [](auto& p) { p.compression_units = 0; }},
      {"decompression_units", [](auto& p) { p.decompression_units = 0; }},
      {"queue_depth", [](auto& p) { p.queue_depth = 0; }},
      {"queue_depth", [](auto& p) { p.queue_depth = 1; }},
      {"window_bytes", [](auto& p) { p.window_bytes = 0; }},
      {"window_bytes", [](auto& p) { p.window_bytes = 3; }},
      {"window_bytes", [](auto& p) { p.window_bytes = 63; }},
      {"window_bytes", [](auto& p) { p.window_bytes = (1 << 20) + 1; }},
      {"xbar_Bps", [](auto& p) { p.xbar_Bps = std::nan(""); }},
      {"xbar_Bps", [](auto& p) { p.xbar_Bps = -1; }},
  };
  for (const bad_case& c : cases) {
    cdma_engine_params p;
    c.set(p);
    try {
      p.validate();
      ADD_FAILURE() << c.field << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(has(e.what(), std::string("cdma_engine_params.") + c.field + " = ")) << e.what();
      EXPECT_TRUE(has(e.what(), "expected")) << e.what();
    }
  }
  // The boundaries that are fine.
  cdma_engine_params ok;
  ok.window_bytes = 64;
  ok.queue_depth = 2;
  ok.unit_bytes_per_cycle = 1;
  ok.clock_hz = 1;  // 1 B/s
  EXPECT_NO_THROW(ok.validate());
  ok.window_bytes = 1 << 20;
  EXPECT_NO_THROW(ok.validate());
  // The constructor refuses them with the module's name.
  cdma_engine_params nan;
  nan.unit_bytes_per_cycle = std::nan("");
  try {
    cdma_engine e("cdma", nan);
    ADD_FAILURE() << "NaN accepted by the constructor";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(has(e.what(), "cdma: cdma_engine_params.unit_bytes_per_cycle = nan")) << e.what();
  }
}

// ---- descriptor rules (pure) -----------------------------------------------------------------

TEST_F(TargetRobustness, DescriptorRangesMayEndExactlyAt2To64) {
  raw_descriptor r;
  r.d.direction = dma_direction::copy_h2d;
  r.d.len = 32;
  r.d.src = 0x1000;
  r.d.dst = top - 31;  // 2^64 - 32: last byte 2^64 - 1
  EXPECT_EQ(validate_descriptor(r), dma_error::none);
  r.d.dst = top - 30;  // 2^64 - 31: the last byte would be at 2^64
  EXPECT_EQ(validate_descriptor(r), dma_error::bad_descriptor);
  r.d.dst = 0x1000;
  r.d.src = top;  // one byte would fit, 32 do not
  EXPECT_EQ(validate_descriptor(r), dma_error::bad_descriptor);
  r.d.len = 1;
  EXPECT_EQ(validate_descriptor(r), dma_error::none);
}

TEST_F(TargetRobustness, DescriptorProblemBoundsTheTableAndRefusesMetaOverlappingDst) {
  dma_descriptor d;
  d.direction = dma_direction::offload;
  d.src = 0x100000;
  d.dst = 0x100000;
  d.len = 16384;   // 4 windows of 4 KiB: a 32-byte table
  d.meta = 0x104000;  // right after [0x100000, 0x103FFF]: fine
  EXPECT_EQ(table_bytes(d.len, 4096), 32u);
  EXPECT_EQ(descriptor_problem(d, 4096), "");
  d.meta = 0x103FE0;  // table [0x103FE0, 0x103FFF]: inside DST
  EXPECT_TRUE(has(descriptor_problem(d, 4096), "overlaps the DST range [0x100000, 0x103fff]"));
  d.meta = 0xFFFE0;  // table [0xFFFE0, 0xFFFFF]: ends right before DST: fine
  EXPECT_EQ(descriptor_problem(d, 4096), "");
  d.meta = 0xFFFE1;  // its last byte is DST's first
  EXPECT_NE(descriptor_problem(d, 4096), "");
  // Prefetch: DST is a GPU address, no overlap rule.
  d.direction = dma_direction::prefetch;
  d.meta = 0x100000;
  EXPECT_EQ(descriptor_problem(d, 4096), "");
  // LEN 2^50 with 4 KiB windows: 2^38 entries, a 2^41-byte (2 TiB) table > 2^32 - 1.
  d.len = std::uint64_t{1} << 50;
  EXPECT_EQ(table_bytes(d.len, 4096), std::uint64_t{1} << 41);
  const std::string why = descriptor_problem(d, 4096);
  EXPECT_TRUE(has(why, "LEN 1125899906842624 needs a metadata table of 2199023255552 bytes")) << why;
  // The largest LEN: (2^32 - 1) / 8 = 536,870,911 entries x 4096 = 2,199,023,251,456 bytes.
  d.len = 536870911ull * 4096;
  EXPECT_EQ(table_bytes(d.len, 4096), 4294967288u);
  EXPECT_EQ(descriptor_problem(d, 4096), "");
  d.len += 1;  // one more window: 4294967296 bytes
  EXPECT_NE(descriptor_problem(d, 4096), "");
  // The table must not wrap: META = 2^64 - 16 with a 32-byte table.
  d.len = 16384;
  d.meta = top - 15;
  EXPECT_TRUE(has(descriptor_problem(d, 4096), "wraps past 2^64")) << descriptor_problem(d, 4096);
  // Copies: no table.
  d.direction = dma_direction::copy_d2h;
  d.len = std::uint64_t{1} << 50;
  EXPECT_EQ(descriptor_problem(d, 4096), "");
}
