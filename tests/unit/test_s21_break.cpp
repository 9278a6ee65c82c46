// Break-it round (breaker 2, s21) against the code changed in s21: pcie_link's host worker
// threads (host memory that waits inside b_transport), the register block's own
// nb_transport_fw / read-only transport_dbg, zero-length GPU memory accesses, csv::joined.
// Cases marked PASS held on 598f09e; cases marked FINDING Fn failed there (breaker2 s21 F1-F5)
// and pass since the lead's fixes in the same session (pcie_link: a read waits only for the
// writes dispatched before it, at most kMaxHostWorkers workers, one woken per job, MRd and CplD
// do not pass a queued MWr; .npz names shown shortened; zero-length DRAM accesses counted).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tests/support/payload.h"
#include "tests/support/ring_cpu.h"
#include "tlm/cdma/cdma_engine.h"
#include "tlm/core/protocol_checker.h"
#include "tlm/memory/gpu_memory_controller.h"
#include "tlm/memory/memory_target.h"
#include "tests/support/report_log.h"
#include "tests/support/sc_fixture.h"
#include "tlm/core/initiator_mux.h"
#include "tlm/core/payload_pool.h"
#include "tlm/core/sc_time_util.h"
#include "tlm/memory/host_memory.h"
#include "tlm/pcie/link_math.h"
#include "tlm/pcie/pcie_link.h"
#include "workloads/activations/activation_source.h"
#include "workloads/io/csv.h"
#include "workloads/network/network.h"

using namespace cdma;
using namespace sc_core;
using namespace tlm;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1 << 20;
constexpr std::uint64_t HOST = 64 * MiB;  // host memory size of the scripted host

// Host memory in the blocking style with a per-access policy: wait_ps(gp) > 0 waits that long
// (plus the annotated delay) before the access; delta_wait: wait(SC_ZERO_TIME) instead when the
// policy gives 0; error(gp) true: TLM_ADDRESS_ERROR_RESPONSE after the wait, nothing moved.
// Data are copied after the wait (the access happens at its end).
struct script_host : sc_module {
  tlm_utils::simple_target_socket<script_host> tgt;
  std::vector<std::uint8_t> mem;
  std::function<ps_t(const tlm_generic_payload&)> wait_ps = [](const tlm_generic_payload&) { return ps_t{0}; };
  std::function<bool(const tlm_generic_payload&)> error = [](const tlm_generic_payload&) { return false; };
  bool delta_wait = false;
  std::uint64_t accesses = 0, reads = 0, writes = 0;
  unsigned in_flight = 0, max_in_flight = 0;
  script_host(sc_module_name n, std::uint64_t size = HOST) : sc_module(n), tgt("tgt"), mem(size, 0) {
    tgt.register_b_transport(this, &script_host::b_transport);
  }
  void b_transport(tlm_generic_payload& gp, sc_time& delay) {
    ++in_flight;
    max_in_flight = std::max(max_in_flight, in_flight);
    const ps_t w = wait_ps(gp);
    if (w > 0) {
      wait(delay + to_sc(w));
      delay = SC_ZERO_TIME;
    } else if (delta_wait) {
      wait(SC_ZERO_TIME);
    }
    --in_flight;
    ++accesses;
    (gp.is_read() ? reads : writes)++;
    if (error(gp) || gp.get_address() + gp.get_data_length() > mem.size()) {
      gp.set_response_status(TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    const auto off = static_cast<long>(gp.get_address());
    if (gp.is_write())
      std::copy_n(gp.get_data_ptr(), gp.get_data_length(), mem.begin() + off);
    else
      std::copy_n(mem.begin() + off, gp.get_data_length(), gp.get_data_ptr());
    gp.set_response_status(TLM_OK_RESPONSE);
  }
};

// One scripted AT transfer.
struct op {
  ps_t issue = 0;  // BEGIN_REQ not before this time, ps
  bool read = false;
  std::uint64_t addr = 0, len = 0;
  std::uint8_t pattern = 0;  // a write's data: (i * 13 + pattern) & 0xff
  // results
  ps_t begin = 0, end = 0;  // BEGIN_REQ sent, BEGIN_RESP received, ps
  tlm_response_status status = TLM_INCOMPLETE_RESPONSE;
  std::vector<std::uint8_t> data;
  tlm_generic_payload gp;
};

std::uint8_t pat(std::uint64_t i, std::uint8_t p) { return static_cast<std::uint8_t>(i * 13 + p); }

// AT initiator: sends its ops in order, each at its issue time or when the previous request
// phase has ended, with any number outstanding; or LT (b_transport one after another).
struct scripted : sc_module {
  tlm_utils::simple_initiator_socket<scripted> init;
  std::vector<op>* ops = nullptr;
  bool at = true;
  unsigned done = 0;
  sc_event end_req_ev;
  bool req_open = false;
  SC_HAS_PROCESS(scripted);
  explicit scripted(sc_module_name n) : sc_module(n), init("init") {
    init.register_nb_transport_bw(this, &scripted::nb_transport_bw);
    SC_THREAD(run);
  }
  op* find(tlm_generic_payload& gp) {
    for (op& o : *ops)
      if (&o.gp == &gp) return &o;
    ADD_FAILURE() << "unknown payload";
    return nullptr;
  }
  void finish(tlm_generic_payload& gp) {
    op* o = find(gp);
    o->end = now_ps();
    o->status = gp.get_response_status();
    ++done;
  }
  tlm_sync_enum nb_transport_bw(tlm_generic_payload& gp, tlm_phase& ph, sc_time&) {
    if (ph == END_REQ) {
      req_open = false;
      end_req_ev.notify();
      return TLM_ACCEPTED;
    }
    EXPECT_EQ(ph, BEGIN_RESP);
    if (req_open && &gp == cur_) {  // BEGIN_RESP ends the request phase too
      req_open = false;
      end_req_ev.notify();
    }
    finish(gp);
    return TLM_COMPLETED;
  }
  tlm_generic_payload* cur_ = nullptr;
  void run() {
    for (op& o : *ops) {
      if (o.issue > now_ps()) wait(to_sc(o.issue - now_ps()));
      while (req_open) wait(end_req_ev);
      o.data.assign(o.len, 0);
      if (!o.read)
        for (std::uint64_t i = 0; i < o.len; ++i) o.data[i] = pat(i, o.pattern);
      cdma::test::setup_payload(o.gp, o.read ? TLM_READ_COMMAND : TLM_WRITE_COMMAND, o.addr,
                                o.data.data(), o.len);
      o.begin = now_ps();
      if (!at) {
        sc_time d = SC_ZERO_TIME;
        init->b_transport(o.gp, d);
        wait(d);
        o.end = now_ps();
        o.status = o.gp.get_response_status();
        ++done;
        continue;
      }
      tlm_phase ph = BEGIN_REQ;
      sc_time d = SC_ZERO_TIME;
      cur_ = &o.gp;
      req_open = true;
      const tlm_sync_enum r = init->nb_transport_fw(o.gp, ph, d);
      if (r == TLM_COMPLETED) {
        req_open = false;
        finish(o.gp);
      } else if (r == TLM_UPDATED && ph == END_REQ) {
        req_open = false;
      }
    }
  }
};

// The link's warnings about host memory waiting in b_transport.
std::size_t waited_warnings(const cdma::test::report_log& log) {
  std::size_t n = 0;
  for (const auto& w : log.warnings())
    n += w.msg.find("host memory called wait() inside b_transport") != std::string::npos;
  return n;
}

bool write_data_ok(const std::vector<std::uint8_t>& mem, std::uint64_t addr, std::uint64_t len, std::uint8_t p) {
  for (std::uint64_t i = 0; i < len; ++i)
    if (mem[addr + i] != pat(i, p)) return false;
  return true;
}
bool read_data_ok(const op& o, std::uint8_t p) {
  for (std::uint64_t i = 0; i < o.len; ++i)
    if (o.data[i] != pat(i, p)) return false;
  return true;
}

// One link, one scripted initiator, one scripted host (or the project's host_memory).
struct bench {
  scripted ini{"ini"};
  pcie_link link;
  script_host host{"host"};
  explicit bench(const pcie::link_params& lp = pcie::link_params{}) : link("link", lp) {
    ini.init.bind(link.tgt);
    link.init.bind(host.tgt);
  }
};

// Number of worker processes the link spawned (children of its processes).
std::size_t worker_count(const sc_object& link) {
  std::size_t n = 0;
  std::function<void(const sc_object&)> walk = [&](const sc_object& o) {
    for (const sc_object* c : o.get_child_objects()) {
      if (std::string(c->basename()).find("host_worker") != std::string::npos) ++n;
      walk(*c);
    }
  };
  walk(link);
  return n;
}

class S21Break : public cdma::test::sc_fixture {};

}  // namespace

// ---- 1. pcie_link: host memory that waits inside b_transport ------------------------------

// PASS: A host that waits 0 for most accesses and 2 us for every 7th: the AT write and the read
// back (issued after the write's response) carry the data; one warning; the write takes well
// under the serialised time (256 MWr x 2 us / 7 ~ 73 us).
TEST_F(S21Break, VariableWaitHostAtWriteThenReadBack) {
  cdma::test::report_log log;
  bench b;
  std::uint64_t k = 0;
  b.host.wait_ps = [&](const tlm_generic_payload&) { return (k++ % 7 == 3) ? ps_t{2000000} : ps_t{0}; };
  std::vector<op> ops(2);
  ops[0].addr = 0x1000; ops[0].len = 64 * KiB; ops[0].pattern = 5;
  ops[1].read = true; ops[1].addr = 0x1000; ops[1].len = 64 * KiB; ops[1].issue = 200000000;  // 200 us
  b.ini.ops = &ops;
  sc_start();
  ASSERT_EQ(b.ini.done, 2u);
  EXPECT_EQ(ops[0].status, TLM_OK_RESPONSE);
  EXPECT_EQ(ops[1].status, TLM_OK_RESPONSE);
  EXPECT_TRUE(write_data_ok(b.host.mem, 0x1000, 64 * KiB, 5));
  EXPECT_TRUE(read_data_ok(ops[1], 5));
  EXPECT_EQ(waited_warnings(log), 1u);
  EXPECT_LT(ops[0].end - ops[0].begin, 20000000u) << "write took " << ops[0].end - ops[0].begin << " ps";
  EXPECT_LT(ops[1].end - ops[1].begin, 20000000u) << "read took " << ops[1].end - ops[1].begin << " ps";
}

// PASS: Host answers an address error after waiting, for [0x20000, 0x21000): the AT write that
// covers it fails with TLM_ADDRESS_ERROR_RESPONSE, the bytes outside are written, a read of it
// fails, reads elsewhere succeed, nothing hangs.
TEST_F(S21Break, WaitingHostAddressErrorAt) {
  cdma::test::report_log log;
  bench b;
  b.host.wait_ps = [](const tlm_generic_payload&) { return ps_t{500000}; };
  b.host.error = [](const tlm_generic_payload& gp) {
    return gp.get_address() < 0x21000 && gp.get_address() + gp.get_data_length() > 0x20000;
  };
  std::vector<op> ops(4);
  ops[0].addr = 0x10000; ops[0].len = 128 * KiB; ops[0].pattern = 1;  // [0x10000, 0x30000)
  ops[1].read = true; ops[1].addr = 0x10000; ops[1].len = 64 * KiB; ops[1].issue = 100000000;
  ops[2].read = true; ops[2].addr = 0x1f000; ops[2].len = 8 * KiB; ops[2].issue = 100000000;
  ops[3].read = true; ops[3].addr = 0x28000; ops[3].len = 4 * KiB; ops[3].issue = 100000000;
  b.ini.ops = &ops;
  sc_start();
  ASSERT_EQ(b.ini.done, 4u);
  EXPECT_EQ(ops[0].status, TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(ops[1].status, TLM_OK_RESPONSE);
  EXPECT_TRUE(read_data_ok(ops[1], 1));
  EXPECT_EQ(ops[2].status, TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(ops[3].status, TLM_OK_RESPONSE);
  std::vector<std::uint8_t> want(4 * KiB);
  for (std::uint64_t i = 0; i < want.size(); ++i) want[i] = pat(0x18000 + i, 1);
  EXPECT_TRUE(ops[3].data == want);
  EXPECT_EQ(waited_warnings(log), 1u);
}

// PASS: Host waits on reads only / on writes only: data right, one warning either way.
TEST_F(S21Break, WaitingOnlyOnReadsOrOnlyOnWrites) {
  for (bool on_reads : {true, false}) {
    cdma::test::reset_systemc_context();
    cdma::test::report_log log;
    bench b;
    b.host.wait_ps = [on_reads](const tlm_generic_payload& gp) {
      return gp.is_read() == on_reads ? ps_t{300000} : ps_t{0};
    };
    std::vector<op> ops(4);
    ops[0].addr = 0; ops[0].len = 256 * KiB; ops[0].pattern = 9;
    ops[1].read = true; ops[1].addr = 0; ops[1].len = 256 * KiB; ops[1].issue = 100000000;
    ops[2].addr = 0; ops[2].len = 256 * KiB; ops[2].pattern = 77; ops[2].issue = 200000000;
    ops[3].read = true; ops[3].addr = 0; ops[3].len = 256 * KiB; ops[3].issue = 300000000;
    b.ini.ops = &ops;
    sc_start();
    const char* m = on_reads ? "waits on reads" : "waits on writes";
    ASSERT_EQ(b.ini.done, 4u) << m;
    for (const op& o : ops) EXPECT_EQ(o.status, TLM_OK_RESPONSE) << m;
    EXPECT_TRUE(read_data_ok(ops[1], 9)) << m;
    EXPECT_TRUE(read_data_ok(ops[3], 77)) << m;
    EXPECT_EQ(waited_warnings(log), 1u) << m;
    for (const op& o : ops)
      EXPECT_LT(o.end - o.begin, 50000000u) << m << ": " << (o.read ? "read" : "write") << " took "
                                           << o.end - o.begin << " ps";
  }
}

// PASS (stale 0; reads 0-6 return the NEXT write's data, allowed: F6). PCIe ordering (the new worker path): a read issued after a write's BEGIN_REQ (both
// outstanding at once, same address) must see the write's data (MRd does not pass MWr).
TEST_F(S21Break, ReadRightAfterWriteSeesItsDataWithWaitingHost) {
  cdma::test::report_log log;
  bench b;
  std::uint64_t k = 0;
  b.host.wait_ps = [&](const tlm_generic_payload&) { return ps_t{(k++ % 3) * 400000}; };
  std::vector<op> ops(16);  // (an op holds a payload: built in place)
  for (int i = 0; i < 8; ++i) {
    op& w = ops[2 * i];
    w.addr = 0x40000; w.len = 16 * KiB; w.pattern = static_cast<std::uint8_t>(i + 1);
    op& r = ops[2 * i + 1];
    r.read = true; r.addr = 0x40000; r.len = 16 * KiB;
  }
  b.ini.ops = &ops;
  sc_start();
  ASSERT_EQ(b.ini.done, ops.size());
  // Read i must not see data older than write i (stale: the initial 0 or write j < i); it may
  // see a later write (posted writes may pass non-posted requests: PCIe ordering rule A2a).
  for (std::size_t i = 0; i < ops.size(); i += 2) {
    const op& r = ops[i + 1];
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    std::size_t stale = 0, own = 0, newer = 0;
    for (std::uint64_t b = 0; b < r.len; ++b) {
      int who = -1;
      for (int j = 0; j < 8; ++j)
        if (r.data[b] == pat(b, static_cast<std::uint8_t>(j + 1))) who = j;
      if (who == static_cast<int>(i / 2)) ++own;
      else if (who > static_cast<int>(i / 2)) ++newer;
      else ++stale;
    }
    EXPECT_EQ(stale, 0u) << "read " << i / 2 << ": " << stale << " stale bytes";
    std::printf("read %zu: own %zu, newer %zu, stale %zu bytes\n", i / 2, own, newer, stale);
  }
}

// FINDING F2 (pre-existing, pick()). The same with finite posted credits (4 PH / 64 PD: the least validate() accepts): MWr wait for UpdateFC while the MRd behind them
// has non-posted credits. PCIe Base Spec ordering table: a non-posted request must not pass a
// posted write; the read issued after the write must see its data. Both hosts.
TEST_F(S21Break, ReadDoesNotPassWriteHeldByPostedCredits) {
  for (bool waiting : {false, true}) {
    cdma::test::reset_systemc_context();
    cdma::test::report_log log;
    pcie::link_params lp;
    lp.ph_credits = lp.updatefc_every;       // 4 MWr of 256 B in flight at most
    lp.pd_credits = 16 * lp.updatefc_every;
    bench b(lp);
    if (waiting) b.host.wait_ps = [](const tlm_generic_payload&) { return ps_t{100000}; };
    std::vector<op> ops(2);
    ops[0].addr = 0x80000; ops[0].len = 16 * KiB; ops[0].pattern = 42;
    ops[1].read = true; ops[1].addr = 0x80000; ops[1].len = 16 * KiB;
    b.ini.ops = &ops;
    sc_start();
    ASSERT_EQ(b.ini.done, 2u);
    EXPECT_EQ(ops[1].status, TLM_OK_RESPONSE);
    std::size_t stale = 0;
    for (std::uint64_t i = 0; i < ops[1].len; ++i) stale += ops[1].data[i] != pat(i, 42);
    EXPECT_EQ(stale, 0u) << (waiting ? "waiting host" : "annotating host") << ": " << stale
                         << " of 16384 bytes read before the write landed";
  }
}

// FINDING F1. Timing: a 64 KiB write, then a 4 KiB read of another address, then an 8 MiB write (all
// outstanding at once). The read's MRd travels after the first write's MWr and before the
// second write's, so it has to wait for the first write only. The worker path makes an MRd
// wait until no MWr at all is in flight (host_writes_in_flight_ == 0): the second write's
// MWr, arriving every ~17 ns and each 250 ns in host memory, keep that count above 0 until the
// whole 8 MiB is written. Compare the read's latency with a host that does not wait.
TEST_F(S21Break, ReadIsNotHeldByWritesIssuedAfterIt) {
  ps_t lat[2] = {0, 0}, wr[2] = {0, 0};
  for (int waiting = 0; waiting < 2; ++waiting) {
    cdma::test::reset_systemc_context();
    cdma::test::report_log log;
    bench b;
    if (waiting) b.host.wait_ps = [](const tlm_generic_payload&) { return ps_t{250000}; };
    std::vector<op> ops(3);
    ops[0].addr = 0; ops[0].len = 64 * KiB; ops[0].pattern = 3;
    ops[1].read = true; ops[1].addr = 32 * MiB; ops[1].len = 4 * KiB;
    ops[2].addr = MiB; ops[2].len = 8 * MiB; ops[2].pattern = 4;
    b.ini.ops = &ops;
    sc_start();
    ASSERT_EQ(b.ini.done, 3u);
    lat[waiting] = ops[1].end - ops[1].begin;
    wr[waiting] = ops[2].end - ops[2].begin;
    EXPECT_TRUE(write_data_ok(b.host.mem, MiB, 8 * MiB, 4));
    std::printf("%s host: 4 KiB read took %llu ps; 8 MiB write took %llu ps\n",
                waiting ? "250-ns waiting" : "non-waiting", (unsigned long long)lat[waiting],
                (unsigned long long)wr[waiting]);
  }
  // 250 ns per access more (plus the first write's last accesses): a few us at most.
  EXPECT_LT(lat[1], lat[0] + 5000000) << "read latency " << lat[1] << " ps vs " << lat[0] << " ps";
}

// PASS. A host that calls wait(SC_ZERO_TIME) (a delta, no time): not warned (no time advanced), data
// right, times equal to the same host without the delta wait.
TEST_F(S21Break, DeltaWaitHostIsTransparent) {
  ps_t t[2][2];
  for (int delta = 0; delta < 2; ++delta) {
    cdma::test::reset_systemc_context();
    cdma::test::report_log log;
    bench b;
    b.host.delta_wait = delta != 0;
    std::vector<op> ops(3);
    ops[0].addr = 0; ops[0].len = 1 * MiB; ops[0].pattern = 11;
    ops[1].read = true; ops[1].addr = 0; ops[1].len = 1 * MiB;  // right behind the write
    ops[2].read = true; ops[2].addr = 0; ops[2].len = 1 * MiB; ops[2].issue = 1000000000;
    b.ini.ops = &ops;
    sc_start();
    ASSERT_EQ(b.ini.done, 3u);
    EXPECT_TRUE(read_data_ok(ops[1], 11)) << "delta " << delta;
    EXPECT_TRUE(read_data_ok(ops[2], 11)) << "delta " << delta;
    EXPECT_EQ(waited_warnings(log), 0u);
    t[delta][0] = ops[0].end - ops[0].begin;
    t[delta][1] = ops[2].end - ops[2].begin;
  }
  EXPECT_EQ(t[0][0], t[1][0]);
  EXPECT_EQ(t[0][1], t[1][1]);
}

// PASS. Many concurrent transfers through a mux (4 initiators x 8 outstanding 64 KiB writes, then
// read-backs) with a host waiting 0..1.5 us: data right, no hang, one warning.
TEST_F(S21Break, ManyConcurrentInitiatorsThroughMuxWithWaitingHost) {
  cdma::test::report_log log;
  initiator_mux mux("mux");
  pcie_link link("link");
  script_host host("host");
  link.init.bind(host.tgt);
  mux.init.bind(link.tgt);
  std::uint64_t k = 0;
  host.wait_ps = [&](const tlm_generic_payload&) { return ps_t{(k++ * 7919 % 4) * 500000}; };
  std::vector<std::unique_ptr<scripted>> ini;
  std::vector<std::vector<op>> ops(4);
  for (int i = 0; i < 4; ++i) {
    ini.push_back(std::make_unique<scripted>(sc_gen_unique_name("ini")));
    ini.back()->init.bind(mux.tgt);
    ops[i] = std::vector<op>(16);
    for (int j = 0; j < 8; ++j) {
      op& w = ops[i][j];
      w.addr = (static_cast<std::uint64_t>(i) * 8 + j) * 64 * KiB;
      w.len = 64 * KiB;
      w.pattern = static_cast<std::uint8_t>(i * 8 + j);
      op& r = ops[i][8 + j];
      r.read = true;
      r.addr = w.addr;
      r.len = w.len;
    }
    ini.back()->ops = &ops[i];
  }
  sc_start();
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(ini[i]->done, 16u) << "initiator " << i;
    for (int j = 0; j < 8; ++j) {
      EXPECT_EQ(ops[i][8 + j].status, TLM_OK_RESPONSE);
      EXPECT_TRUE(read_data_ok(ops[i][8 + j], static_cast<std::uint8_t>(i * 8 + j))) << i << "," << j;
    }
  }
  EXPECT_EQ(waited_warnings(log), 1u);
  std::printf("workers spawned: %zu, host max in flight %u, end %s\n", worker_count(link),
              host.max_in_flight, sc_time_stamp().to_string().c_str());
}

// FINDING F3 (with IdleWorkersAreAllWokenPerJobMeasurement). Worker threads are never bounded: a host that waits long makes one SystemC thread per
// access in flight. 4 MiB write (16384 MWr) with a host that waits 200 us per access
// (S21_LONGWAIT_MIB=6 or 8: the thread count stops at 22444 and the run takes 20-90 s wall).
TEST_F(S21Break, LongWaitHostSpawnsOneThreadPerAccessInFlight) {
  cdma::test::report_log log;
  bench b;
  b.host.wait_ps = [](const tlm_generic_payload&) { return ps_t{200000000}; };
  const char* env = std::getenv("S21_LONGWAIT_MIB");  // (for measuring; default 4)
  const std::uint64_t len = (env ? std::strtoull(env, nullptr, 10) : 4) * MiB;
  std::vector<op> ops(1);
  ops[0].addr = 0; ops[0].len = len; ops[0].pattern = 4;
  b.ini.ops = &ops;
  sc_start();
  ASSERT_EQ(b.ini.done, 1u);
  EXPECT_TRUE(write_data_ok(b.host.mem, 0, len, 4));
  const std::size_t workers = worker_count(b.link);
  std::printf("%llu MiB write, host wait 200 us: %zu worker threads, host max in flight %u, took %llu ps\n",
              (unsigned long long)(len / MiB), workers, b.host.max_in_flight, (unsigned long long)(ops[0].end - ops[0].begin));
  EXPECT_LE(workers, 1024u) << "one SystemC thread (own stack) per host access in flight";
}

// A 1 MiB write then its read-back through a host that waits 5 us per access, simulated for
// 10 us only: both transfers still in flight, workers blocked in the host's wait.
static void stop_mid_transfer(bench& b, std::vector<op>& ops) {  // ops: 2 fresh entries
  b.host.wait_ps = [](const tlm_generic_payload&) { return ps_t{5000000}; };
  ops[0].addr = 0; ops[0].len = 1 * MiB; ops[0].pattern = 8;
  ops[1].read = true; ops[1].addr = 0; ops[1].len = 1 * MiB;
  b.ini.ops = &ops;
  sc_start(sc_time(10, SC_US));
  EXPECT_EQ(b.ini.done, 0u);
}

// PASS. End of simulation with host jobs still queued / running: sc_start(time) returns while the
// host still waits; no crash, and a later sc_start completes the transfers.
TEST_F(S21Break, StopWithHostJobsInFlightThenResume) {
  cdma::test::report_log log;
  bench b;
  std::vector<op> ops(2);
  stop_mid_transfer(b, ops);
  EXPECT_GT(worker_count(b.link), 0u);
  sc_start();
  ASSERT_EQ(b.ini.done, 2u);
  EXPECT_TRUE(read_data_ok(ops[1], 8));
}

// PASS. Same, but the simulation is never resumed: the test ends (modules destroyed) with workers
// blocked in the host's wait and txns outstanding. Must not crash.
TEST_F(S21Break, DestroyWithHostJobsInFlight) {
  cdma::test::report_log log;
  {
    bench b;
    std::vector<op> ops(2);
    stop_mid_transfer(b, ops);
  }
  SUCCEED();
}

// PASS. LT: two LT initiators through a mux, host waiting variable times: data right.
TEST_F(S21Break, LtTwoInitiatorsWaitingHost) {
  cdma::test::report_log log;
  scripted a("a"), c("c");
  a.at = c.at = false;
  initiator_mux mux("mux");
  pcie_link link("link");
  script_host host("host");
  a.init.bind(mux.tgt);
  c.init.bind(mux.tgt);
  mux.init.bind(link.tgt);
  link.init.bind(host.tgt);
  std::uint64_t k = 0;
  host.wait_ps = [&](const tlm_generic_payload&) { return ps_t{(k++ % 2) * 300000}; };
  std::vector<op> oa(2), oc(2);
  oa[0].addr = 0; oa[0].len = 256 * KiB; oa[0].pattern = 1;
  oa[1].read = true; oa[1].addr = 0; oa[1].len = 256 * KiB;
  oc[0].addr = MiB; oc[0].len = 256 * KiB; oc[0].pattern = 2;
  oc[1].read = true; oc[1].addr = MiB; oc[1].len = 256 * KiB;
  a.ops = &oa;
  c.ops = &oc;
  sc_start();
  ASSERT_EQ(a.done, 2u);
  ASSERT_EQ(c.done, 2u);
  EXPECT_TRUE(read_data_ok(oa[1], 1));
  EXPECT_TRUE(read_data_ok(oc[1], 2));
  EXPECT_EQ(waited_warnings(log), 1u);
}

// ---- 4. csv::joined ---------------------------------------------------------------------------

// PASS.
TEST_F(S21Break, JoinedCapsCountAndEdgeCases) {
  EXPECT_EQ(workloads::csv::joined({}), "");
  EXPECT_EQ(workloads::csv::joined({"a"}), "a");
  EXPECT_EQ(workloads::csv::joined({"a", "b"}, 1), "a, ... and 1 more");
  EXPECT_EQ(workloads::csv::joined({"a", "b"}, 0), "... and 2 more");
  std::vector<std::string> v(21, "x");
  EXPECT_EQ(workloads::csv::joined(v).size(), 20 * 3 - 2 + std::string(", ... and 1 more").size());
}


// ---- 2. cDMA register block over AT, engine in AT through pcie_link ---------------------------

namespace {

// b_transport in, 4-phase AT out (a CPU's bus in AT): BEGIN_REQ, then whatever the target does.
struct b2nb : sc_module {
  tlm_utils::simple_target_socket<b2nb> tgt;
  tlm_utils::simple_initiator_socket<b2nb> init;
  sc_event resp_ev;
  tlm_generic_payload* waiting = nullptr;
  unsigned completed_on_fw = 0, other = 0;
  SC_HAS_PROCESS(b2nb);
  explicit b2nb(sc_module_name n) : sc_module(n), tgt("tgt"), init("init") {
    tgt.register_b_transport(this, &b2nb::bt);
    init.register_nb_transport_bw(this, &b2nb::bw);
  }
  payload_pool pool;
  void bt(tlm_generic_payload& in, sc_time& d) {
    tlm_generic_payload& gp = *pool.allocate();
    gp.acquire();
    cdma::test::setup_payload(gp, in.get_command(), in.get_address(), in.get_data_ptr(), in.get_data_length());
    tlm_phase ph = BEGIN_REQ;
    const tlm_sync_enum r = init->nb_transport_fw(gp, ph, d);
    if (r == TLM_COMPLETED) {
      ++completed_on_fw;  // delay = the response time
    } else {
      ++other;
      waiting = &gp;
      wait(resp_ev);
      d = SC_ZERO_TIME;
    }
    in.set_response_status(gp.get_response_status());
    gp.release();
  }
  tlm_sync_enum bw(tlm_generic_payload& gp, tlm_phase& ph, sc_time&) {
    if (ph == BEGIN_RESP && &gp == waiting) {
      resp_ev.notify();
      return TLM_COMPLETED;
    }
    return TLM_ACCEPTED;
  }
};

// A second register initiator: AT reads of DONE_COUNT back to back (each BEGIN_REQ right after
// the previous one completed on the forward path, no time between), `n` of them every `gap`.
struct poller : sc_module {
  tlm_utils::simple_initiator_socket<poller> init;
  unsigned n = 1000, completed = 0, errors = 0, max_seen = 0, non_monotonic = 0;
  sc_time gap{100, SC_NS};
  payload_pool pool;
  SC_HAS_PROCESS(poller);
  explicit poller(sc_module_name nm) : sc_module(nm), init("init") {
    init.register_nb_transport_bw(this, &poller::bw);
    SC_THREAD(run);
  }
  tlm_sync_enum bw(tlm_generic_payload&, tlm_phase&, sc_time&) {
    ADD_FAILURE() << "register block used the backward path";
    return TLM_COMPLETED;
  }
  void run() {
    for (unsigned i = 0; i < n; ++i) {
      for (int k = 0; k < 3; ++k) {  // three back-to-back BEGIN_REQs, zero time apart
        std::uint8_t b[4] = {};
        tlm_generic_payload& gp = *pool.allocate();
        gp.acquire();
        cdma::test::setup_payload(gp, TLM_READ_COMMAND, reg::DONE_COUNT, b, 4);
        tlm_phase ph = BEGIN_REQ;
        sc_time d = SC_ZERO_TIME;
        const tlm_sync_enum r = init->nb_transport_fw(gp, ph, d);
        if (r != TLM_COMPLETED) {
          ADD_FAILURE() << "BEGIN_REQ to the register block returned " << r;
          return;
        }
        ++completed;
        if (!gp.is_response_ok()) ++errors;
        gp.release();
        const std::uint32_t v = load_le32(b);
        if (v < max_seen) ++non_monotonic;
        max_seen = std::max(max_seen, v);
      }
      wait(gap);
    }
  }
};

// (ZVC, fp32: the descriptor's defaults.)
dma_descriptor make_desc(dma_direction dir, std::uint64_t src, std::uint64_t dst, std::uint64_t len,
                         std::uint64_t meta) {
  return dma_descriptor{dir, src, dst, len, meta};
}

std::vector<std::uint8_t> zvc_pattern(std::uint64_t len) {
  std::vector<std::uint8_t> v(len);
  for (std::uint64_t i = 0; i < len / 4; ++i)
    store_le32(v.data() + 4 * i, i % 4 == 0 ? 0u : static_cast<std::uint32_t>(i * 2654435761u) | 1u);
  return v;
}

struct engine_result {
  bool finished = false, data_ok = false;
  std::uint32_t errors = 0;
  std::size_t violations = 0, warnings = 0;
  ps_t offload = 0, prefetch = 0;
  unsigned poll_completed = 0, poll_errors = 0, poll_nonmono = 0, regs_completed_on_fw = 0, regs_other = 0;
};

// Engine in AT (max_outstanding `mo`): registers through b2nb + mux (+ a poller) + a protocol
// checker; engine.pcie -> pcie_link -> script_host (waiting per `host_wait`, or none).
engine_result engine_round_trip(unsigned mo, std::function<ps_t(const tlm_generic_payload&)> host_wait,
                                std::uint64_t len = 1 * MiB) {
  cdma::test::reset_systemc_context();
  sc_report_handler::set_actions(protocol_checker::msg_type, SC_ERROR, SC_DISPLAY);
  cdma::test::report_log log;
  constexpr std::uint64_t A = 0x100000, B = 0x1000000, H = 0x100000, M = 0x2000000;
  cdma_engine_params ep;
  ep.approximately_timed = true;
  ep.max_outstanding = mo;
  memory_target gpu("gpu", memory_params{64 * MiB, 300e9, 200 * ps_per_ns, 65536});
  pcie_link link("link");
  script_host host("host");
  host.wait_ps = std::move(host_wait);
  cdma_engine engine("cdma", ep);
  engine_result res;
  const auto src = zvc_pattern(len);
  cdma::test::ring_cpu drv("cpu", [&](cdma::test::ring_cpu& c) {
    c.init();
    c.post(make_desc(dma_direction::offload, A, H, len, M));
    c.wait_done(1);
    c.post(make_desc(dma_direction::prefetch, H, B, len, M));
    c.wait_done(2);
    res.errors = c.rd(reg::ERROR_COUNT);
  });
  b2nb adapt("adapt");
  poller pol("pol");
  initiator_mux mux("mux");
  protocol_checker chk_regs("chk_regs"), chk_pcie("chk_pcie");
  sc_signal<bool> irq("irq");
  drv.regs.bind(adapt.tgt);
  adapt.init.bind(mux.tgt);
  pol.init.bind(mux.tgt);
  mux.init.bind(chk_regs.tgt);
  chk_regs.init.bind(engine.regs);
  engine.gpu_mem.bind(gpu.tgt);
  engine.pcie.bind(chk_pcie.tgt);
  chk_pcie.init.bind(link.tgt);
  link.init.bind(host.tgt);
  engine.irq.bind(irq);
  drv.irq.bind(irq);
  drv.ring_mem = &gpu;
  gpu.store().write(A, src.data(), len);
  sc_start();
  res.finished = drv.finished;
  std::vector<std::uint8_t> back(len);
  gpu.store().read(B, back.data(), len);
  res.data_ok = back == src;
  const auto& recs = engine.records();
  if (recs.size() == 2) {
    res.offload = recs[0].finished - recs[0].started;
    res.prefetch = recs[1].finished - recs[1].started;
  }
  res.violations = chk_regs.violations() + chk_pcie.violations();
  res.warnings = waited_warnings(log);
  res.poll_completed = pol.completed;
  res.poll_errors = pol.errors;
  res.poll_nonmono = pol.non_monotonic;
  res.regs_completed_on_fw = adapt.completed_on_fw;
  res.regs_other = adapt.other;
  return res;
}

}  // namespace

// PASS: The engine in AT, driven through AT register accesses (with a second initiator polling
// DONE_COUNT back to back through a mux), offloads and prefetches 1 MiB over the PCIe link to
// a host that annotates (reference) and to hosts that wait (250 ns, and 0 / 3 us variable)
// with max_outstanding 256: bit exact, no error, no protocol violation, one warning, and the
// waiting host's times within a few us of the reference (the link overlaps the waits).
TEST_F(S21Break, EngineAtThroughLinkWithWaitingHostAndAtRegisters) {
  const engine_result ref = engine_round_trip(256, [](const tlm_generic_payload&) { return ps_t{0}; });
  EXPECT_TRUE(ref.finished);
  EXPECT_TRUE(ref.data_ok);
  EXPECT_EQ(ref.errors, 0u);
  EXPECT_EQ(ref.violations, 0u);
  EXPECT_EQ(ref.warnings, 0u);
  EXPECT_EQ(ref.poll_errors, 0u);
  EXPECT_EQ(ref.poll_nonmono, 0u);
  EXPECT_GT(ref.regs_completed_on_fw, 0u);
  EXPECT_EQ(ref.regs_other, 0u) << "every register BEGIN_REQ completes on the forward path";
  std::uint64_t k = 0;
  for (int variant = 0; variant < 2; ++variant) {
    std::function<ps_t(const tlm_generic_payload&)> w;
    if (variant == 0)
      w = [](const tlm_generic_payload&) { return ps_t{250000}; };
    else
      w = [&k](const tlm_generic_payload&) { return (k++ % 5 == 0) ? ps_t{3000000} : ps_t{0}; };
    const engine_result r = engine_round_trip(256, w);
    const char* m = variant ? "variable 0 / 3 us" : "250 ns";
    EXPECT_TRUE(r.finished) << m;
    EXPECT_TRUE(r.data_ok) << m;
    EXPECT_EQ(r.errors, 0u) << m;
    EXPECT_EQ(r.violations, 0u) << m;
    EXPECT_EQ(r.warnings, 1u) << m;
    EXPECT_EQ(r.poll_errors, 0u) << m;
    EXPECT_EQ(r.poll_nonmono, 0u) << m;
    std::printf("%s: offload %llu ps (ref %llu), prefetch %llu ps (ref %llu)\n", m,
                (unsigned long long)r.offload, (unsigned long long)ref.offload,
                (unsigned long long)r.prefetch, (unsigned long long)ref.prefetch);
    EXPECT_LT(r.offload, ref.offload + 10000000) << m;
    EXPECT_LT(r.prefetch, ref.prefetch + 10000000) << m;
  }
}

// ---- 3. GPU memory controller: zero-length accesses with flow control -------------------------

namespace {
struct gpu_bench {
  scripted ini{"ini"};
  gpu_memory_controller gpu;
  explicit gpu_bench(const gpu_memory_params& gp) : gpu("gpu", gp) { ini.init.bind(gpu.tgt); }
};
}  // namespace

// PASS: max_outstanding 2, DRAM model: two 64 KiB reads fill the window, then zero-length reads
// and writes and normal accesses interleave (the zero-length ones wait for END_REQ like any
// other), and a zero-length access outside memory is an address error. Everything completes;
// zero-length ones OK no earlier than their acceptance + controller latency; the normal data right.
TEST_F(S21Break, GpuZeroLengthWithFlowControl) {
  for (bool at : {true, false}) {
    cdma::test::reset_systemc_context();
    cdma::test::report_log log;
    gpu_memory_params gp;
    gp.max_outstanding = 2;
    gpu_bench b(gp);
    b.ini.at = at;
    std::vector<op> ops(8);
    ops[0].read = true; ops[0].addr = 0; ops[0].len = 64 * KiB;
    ops[1].read = true; ops[1].addr = 1 * MiB; ops[1].len = 64 * KiB;
    ops[2].read = true; ops[2].addr = 0x1000; ops[2].len = 0;
    ops[3].addr = 2 * MiB; ops[3].len = 4 * KiB; ops[3].pattern = 6;
    ops[4].addr = 0x2000; ops[4].len = 0;
    ops[5].read = true; ops[5].addr = 2 * MiB; ops[5].len = 4 * KiB; ops[5].issue = 10000000;
    ops[6].read = true; ops[6].addr = gp.size_bytes + 4096; ops[6].len = 0;  // outside memory
    ops[7].read = true; ops[7].addr = gp.size_bytes; ops[7].len = 0;  // at the end
    b.ini.ops = &ops;
    sc_start();
    const char* m = at ? "AT" : "LT";
    ASSERT_EQ(b.ini.done, ops.size()) << m << ": hang";
    for (int i : {0, 1, 2, 3, 4, 5}) EXPECT_EQ(ops[i].status, TLM_OK_RESPONSE) << m << " op " << i;
    EXPECT_EQ(ops[6].status, TLM_ADDRESS_ERROR_RESPONSE) << m;
    EXPECT_TRUE(read_data_ok(ops[5], 6)) << m;
    for (int i : {2, 4}) EXPECT_GE(ops[i].end - ops[i].begin, 10000u) << m << " op " << i;
    const dram_totals t = b.gpu.dram_stats();
    std::printf("%s: RD %llu WR %llu; traffic reads %llu writes %llu; op7 status %d\n", m,
                (unsigned long long)t.reads, (unsigned long long)t.writes,
                (unsigned long long)b.gpu.traffic_total().reads,
                (unsigned long long)b.gpu.traffic_total().writes, (int)ops[7].status);
  }
}

// FINDING F5. The two timing models count a zero-length access the same way in the traffic statistics
// (reads / writes): the bus model accounts it (account()), the DRAM model returns before.
TEST_F(S21Break, GpuZeroLengthCountedAlikeByBothModels) {
  std::uint64_t n[2][2];
  for (int bus = 0; bus < 2; ++bus)
    for (int at = 0; at < 2; ++at) {
      cdma::test::reset_systemc_context();
      gpu_memory_params gp;
      if (bus) gp.model = gpu_memory_model::bus;
      gpu_bench b(gp);
      b.ini.at = at != 0;
      std::vector<op> ops(2);
      ops[0].read = true; ops[0].addr = 0x1000; ops[0].len = 0;
      ops[1].addr = 0x2000; ops[1].len = 0;
      b.ini.ops = &ops;
      sc_start();
      ASSERT_EQ(b.ini.done, 2u);
      n[bus][at] = b.gpu.traffic_total().reads + b.gpu.traffic_total().writes;
    }
  EXPECT_EQ(n[0][0], n[1][0]) << "LT: dram model counts " << n[0][0] << ", bus model " << n[1][0];
  EXPECT_EQ(n[0][1], n[1][1]) << "AT: dram model counts " << n[0][1] << ", bus model " << n[1][1];
}

// ---- 4b. .npz tensors matching no layer: long and odd names -------------------------------------

namespace {
// Writes an .npz with NumPy: one float32 tensor of shape (1, 2) per name (Python literal list).
std::string write_npz(const std::string& file, const std::string& names_py) {
  const std::string path = std::string(::testing::TempDir()) + file;
  const std::string cmd = std::string(CDMA_PYTHON) + " -c \"import numpy as np; names = " + names_py +
                          "; np.savez('" + path + "', **{n: np.zeros((1, 2), np.float32) for n in names})\"";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return path;
}
std::string validate_error(const std::string& npz) {
  try {
    workloads::npz_activation_source s(npz);
    s.validate(workloads::make_network("fmnist_cnn", 1));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

// FINDING F4. The density-profile warning passes each name through csv::shown (60 characters, control
// characters escaped); the .npz 'match no layer' error does not: a 5000-character tensor name
// comes whole (one or many of them), a newline in a name breaks the message line.
TEST_F(S21Break, NpzUnknownTensorNamesAreShownShortened) {
  const std::string one = validate_error(write_npz("s21_long1.npz", "['x' * 5000]"));
  EXPECT_NE(one.find("matches no layer"), std::string::npos) << one.substr(0, 300);
  EXPECT_LT(one.size(), 1000u) << "message of " << one.size() << " characters for one 5000-character name";
  const std::string many = validate_error(write_npz("s21_long30.npz", "[chr(97 + i % 26) * 5000 + str(i) for i in range(30)]"));
  EXPECT_NE(many.find("... and 10 more"), std::string::npos) << many.substr(0, 300);
  EXPECT_LT(many.size(), 3000u) << "message of " << many.size() << " characters for 30 names of 5000";
  const std::string nl = validate_error(write_npz("s21_nl.npz", "['bad\\\\nname', 'other']"));
  EXPECT_EQ(nl.find('\n'), std::string::npos) << nl;
}

// PASS (times equal; warned anyway: F7). A host that only synchronises (wait(delay), delay = 0: a legal LT target that consumes the
// annotation, adding no time of its own) against the same host annotating (delay returned
// unchanged): same data; same LT and AT times? Warned?
TEST_F(S21Break, SyncOnlyHostAgainstAnnotatingHost) {
  struct sync_host : script_host {
    bool sync = false;
    using script_host::script_host;
  };
  ps_t t[2][2][2];  // [sync][at][op]
  std::size_t warned[2][2];
  for (int sync = 0; sync < 2; ++sync)
    for (int at = 0; at < 2; ++at) {
      cdma::test::reset_systemc_context();
      cdma::test::report_log log;
      pcie::link_params lp;
      lp.rc_latency_ps = 50000;  // 50 ns: the link hands host memory a non-zero delay
      bench b(lp);
      b.ini.at = at != 0;
      if (sync)
        b.host.wait_ps = [](const tlm_generic_payload&) { return ps_t{0}; };
      // A sync-only host: wait(delay) (wait_ps 1 ps stands for "the delay, nothing more").
      if (sync) b.host.wait_ps = [](const tlm_generic_payload&) { return ps_t{1}; };
      std::vector<op> ops(2);
      ops[0].addr = 0; ops[0].len = 256 * KiB; ops[0].pattern = 2;
      ops[1].read = true; ops[1].addr = 0; ops[1].len = 256 * KiB; ops[1].issue = 100000000;
      b.ini.ops = &ops;
      sc_start();
      ASSERT_EQ(b.ini.done, 2u);
      EXPECT_TRUE(read_data_ok(ops[1], 2));
      t[sync][at][0] = ops[0].end - ops[0].begin;
      t[sync][at][1] = ops[1].end - ops[1].begin;
      warned[sync][at] = waited_warnings(log);
      std::printf("%s %s: write %llu ps, read %llu ps, warnings %zu\n", sync ? "sync-only" : "annotating",
                  at ? "AT" : "LT", (unsigned long long)t[sync][at][0], (unsigned long long)t[sync][at][1],
                  warned[sync][at]);
    }
  for (int at = 0; at < 2; ++at)
    for (int k = 0; k < 2; ++k)
      EXPECT_NEAR(static_cast<double>(t[1][at][k]), static_cast<double>(t[0][at][k]), 1000.0 * 256)
          << (at ? "AT " : "LT ") << (k ? "read" : "write");
}

// Measurement (no timed assertion): only the first host access waits (200 us); the ~11 000 MWr
// that arrive meanwhile are dispatched at once (one worker each), finish at once and leave that
// many idle workers, all waiting on host_job_ev_; every later dispatch notifies that event and
// wakes all of them. Prints the wall time of a 3 MiB write (S21_HERD_MIB to change; 8 MiB:
// 20.5 s against 0.06 s, breaker2-s21 F3), and of the same write with no wait at all.
TEST_F(S21Break, IdleWorkersAreAllWokenPerJobMeasurement) {
  const char* env = std::getenv("S21_HERD_MIB");
  const std::uint64_t len = (env ? std::strtoull(env, nullptr, 10) : 3) * MiB;
  for (int first_waits = 0; first_waits < 2; ++first_waits) {
    cdma::test::reset_systemc_context();
    cdma::test::report_log log;
    bench b;
    bool first = first_waits != 0;
    b.host.wait_ps = [&first](const tlm_generic_payload&) {
      const ps_t w = first ? ps_t{200000000} : ps_t{0};
      first = false;
      return w;
    };
    std::vector<op> ops(1);
    ops[0].addr = 0; ops[0].len = len; ops[0].pattern = 4;
    b.ini.ops = &ops;
    const auto t0 = std::chrono::steady_clock::now();
    sc_start();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(b.ini.done, 1u);
    EXPECT_TRUE(write_data_ok(b.host.mem, 0, len, 4));
    std::printf("%llu MiB write, %s: %.2f s wall, %zu workers, simulated %llu ps\n",
                (unsigned long long)(len / MiB), first_waits ? "first access waits 200 us" : "no wait", s,
                worker_count(b.link), (unsigned long long)(ops[0].end - ops[0].begin));
  }
}
