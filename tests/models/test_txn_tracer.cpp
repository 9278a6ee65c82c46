// The transaction tracer (tlm/core/txn_tracer.h): the exact lines for LT, AT (both TLM_UPDATED
// shortcuts and the 4-phase path), DMI and debug transport, worked out from the targets'
// fixed delays below; and that a traced connection behaves exactly as an untraced one.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "support/at_initiator.h"
#include "support/sc_fixture.h"
#include "tlm/core/payload_pool.h"
#include "tlm/core/protocol_checker.h"
#include "tlm/core/txn_tracer.h"
#include "tlm/memory/host_memory.h"

using namespace cdma;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

/// A target with fixed timing: b_transport adds 7 ns; nb_transport answers BEGIN_REQ with
/// TLM_UPDATED + BEGIN_RESP after 10 ns (the request and response in one call) and END_RESP
/// with TLM_COMPLETED (with four_phase: END_REQ at once, BEGIN_RESP on the backward path 10 ns
/// later); grants DMI on [0, 0xffff]; transport_dbg copies min(len, 16) bytes.
/// Addresses >= 0x10000 get TLM_ADDRESS_ERROR_RESPONSE.
class fixed_target : public sc_core::sc_module {
public:
  tlm_utils::simple_target_socket<fixed_target> tgt;
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(1 << 16, 0);
  SC_HAS_PROCESS(fixed_target);
  explicit fixed_target(sc_core::sc_module_name n) : sc_module(n), tgt("tgt") {
    SC_METHOD(respond);
    sensitive << resp_ev_;
    dont_initialize();
    tgt.register_b_transport(this, &fixed_target::b_transport);
    tgt.register_nb_transport_fw(this, &fixed_target::fw);
    tgt.register_get_direct_mem_ptr(this, &fixed_target::dmi);
    tgt.register_transport_dbg(this, &fixed_target::dbg);
  }
  void access(tlm::tlm_generic_payload& p) {
    if (p.get_address() + p.get_data_length() > mem.size()) {
      p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    std::uint8_t* m = mem.data() + p.get_address();
    if (p.is_write()) std::memcpy(m, p.get_data_ptr(), p.get_data_length());
    else std::memcpy(p.get_data_ptr(), m, p.get_data_length());
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_time& d) {
    access(p);
    d += sc_time(7, SC_NS);
  }
  tlm::tlm_sync_enum fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_time& d) {
    if (ph == tlm::END_RESP) return tlm::TLM_COMPLETED;
    access(p);
    if (four_phase) {  // END_REQ now, BEGIN_RESP on the backward path 10 ns later
      pending_ = &p;
      resp_ev_.notify(d + sc_time(10, SC_NS));
      ph = tlm::END_REQ;
      return tlm::TLM_UPDATED;
    }
    ph = tlm::BEGIN_RESP;
    d += sc_time(10, SC_NS);
    return tlm::TLM_UPDATED;
  }
  bool four_phase = false;
  tlm::tlm_generic_payload* pending_ = nullptr;
  sc_core::sc_event resp_ev_;
  void respond() {
    tlm::tlm_phase ph = tlm::BEGIN_RESP;
    sc_time d = sc_core::SC_ZERO_TIME;
    tgt->nb_transport_bw(*pending_, ph, d);  // the initiator completes it (TLM_COMPLETED)
  }
  bool dmi(tlm::tlm_generic_payload& p, tlm::tlm_dmi& d) {
    if (p.get_address() >= mem.size()) return false;
    d.set_dmi_ptr(mem.data());
    d.set_start_address(0);
    d.set_end_address(mem.size() - 1);
    d.allow_read_write();
    return true;
  }
  unsigned int dbg(tlm::tlm_generic_payload& p) {
    const unsigned n = std::min(p.get_data_length(), 16u);
    std::memcpy(p.get_data_ptr(), mem.data() + p.get_address(), n);
    return n;
  }
};

/// Runs `body` in a thread of its own (at time 0) with an initiator socket bound to `tgt`.
class thread_initiator : public sc_core::sc_module {
public:
  tlm_utils::simple_initiator_socket<thread_initiator> init;
  std::function<void(thread_initiator&)> body;
  tlm::tlm_phase bw_phase;  ///< the phase of the last backward call
  sc_time bw_delay;
  bool complete_on_bw = true;  ///< answer BEGIN_RESP on the backward path with TLM_COMPLETED
  SC_HAS_PROCESS(thread_initiator);
  explicit thread_initiator(sc_core::sc_module_name n) : sc_module(n), init("init") {
    init.register_nb_transport_bw(this, &thread_initiator::bw);
    SC_THREAD(run);
  }
  void run() { body(*this); }
  tlm::tlm_sync_enum bw(tlm::tlm_generic_payload&, tlm::tlm_phase& ph, sc_time& d) {
    bw_phase = ph;
    bw_delay = d;
    return complete_on_bw ? tlm::TLM_COMPLETED : tlm::TLM_ACCEPTED;
  }
};

void setup(tlm::tlm_generic_payload& p, tlm::tlm_command c, std::uint64_t a, unsigned len,
           std::uint8_t* buf) {
  p.set_command(c);
  p.set_address(a);
  p.set_data_ptr(buf);
  p.set_data_length(len);
  p.set_streaming_width(len);
  p.set_byte_enable_ptr(nullptr);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

class TxnTracer : public test::sc_fixture {};

}  // namespace

TEST_F(TxnTracer, LtLinesCarryTheLocalTimeBeforeAndAfterTheTarget) {
  std::ostringstream out;
  thread_initiator ini("ini");
  txn_tracer tr("tr", &out, "ini_mem");
  fixed_target mem("mem");
  ini.init.bind(tr.tgt);
  tr.init.bind(mem.tgt);
  ini.body = [](thread_initiator& self) {
    std::uint8_t buf[64] = {};
    tlm::tlm_generic_payload p;
    sc_core::wait(sc_time(100, SC_NS));
    setup(p, tlm::TLM_WRITE_COMMAND, 0x1000, 64, buf);
    sc_time d(5, SC_NS);  // the initiator is 5 ns ahead of the kernel (quantum)
    self.init->b_transport(p, d);
    EXPECT_EQ(d, sc_time(12, SC_NS));  // forwarded unchanged: 5 + the target's 7 ns
    setup(p, tlm::TLM_READ_COMMAND, 0x20000, 4, buf);  // outside the target: address error
    d = sc_core::SC_ZERO_TIME;
    self.init->b_transport(p, d);
    EXPECT_EQ(p.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  };
  sc_core::sc_start();
  // 100 ns + 5 ns annotated = 105 ns at the call; + 7 ns = 112 ns at the return.
  const std::vector<std::string> want = {
      "105.000 ini_mem >> b_transport WR 0x1000 64 B",
      "112.000 ini_mem << return WR 0x1000 64 B TLM_OK_RESPONSE",
      "100.000 ini_mem >> b_transport RD 0x20000 4 B",
      "107.000 ini_mem << return RD 0x20000 4 B TLM_ADDRESS_ERROR_RESPONSE",
  };
  EXPECT_EQ(lines_of(out.str()), want);
  EXPECT_EQ(tr.lines(), 4u);
}

TEST_F(TxnTracer, AtShortcutsAndTheBackwardPathAreTracedWithTheirPhases) {
  // initiator -> base-protocol checker -> tracer -> target. First transaction: the target
  // answers BEGIN_REQ with TLM_UPDATED + BEGIN_RESP 10 ns later, the initiator ends it with
  // END_RESP (TLM_COMPLETED). Second: the 4-phase path, END_REQ returned (TLM_UPDATED), then
  // BEGIN_RESP on the backward path 10 ns later, completed there by the initiator.
  sc_core::sc_report_handler::set_actions(protocol_checker::msg_type, sc_core::SC_ERROR,
                                          sc_core::SC_LOG);
  std::ostringstream out;
  thread_initiator ini("ini");
  protocol_checker chk("chk");
  txn_tracer tr("tr", &out);  // label: the module's name
  fixed_target mem("mem");
  ini.init.bind(chk.tgt);
  chk.init.bind(tr.tgt);
  tr.init.bind(mem.tgt);
  payload_pool pool;
  ini.body = [&mem, &pool](thread_initiator& self) {
    std::uint8_t buf[32] = {};
    tlm::tlm_generic_payload* p = pool.allocate();
    p->acquire();
    sc_core::wait(sc_time(1, sc_core::SC_US));
    setup(*p, tlm::TLM_READ_COMMAND, 0x40, 32, buf);
    tlm::tlm_phase ph = tlm::BEGIN_REQ;
    sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.init->nb_transport_fw(*p, ph, d), tlm::TLM_UPDATED);
    EXPECT_EQ(ph, tlm::BEGIN_RESP);
    EXPECT_EQ(d, sc_time(10, SC_NS));
    sc_core::wait(d);
    ph = tlm::END_RESP;
    d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.init->nb_transport_fw(*p, ph, d), tlm::TLM_COMPLETED);
    mem.four_phase = true;
    setup(*p, tlm::TLM_WRITE_COMMAND, 0x80, 32, buf);
    ph = tlm::BEGIN_REQ;
    d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.init->nb_transport_fw(*p, ph, d), tlm::TLM_UPDATED);
    EXPECT_EQ(ph, tlm::END_REQ);
    sc_core::wait(sc_time(20, SC_NS));  // the response came meanwhile, on the backward path
    EXPECT_EQ(self.bw_phase, tlm::BEGIN_RESP);
    p->release();
  };
  sc_core::sc_start();
  EXPECT_EQ(chk.violations(), 0u) << (chk.violations() ? chk.messages().front() : "");
  const std::vector<std::string> want = {
      "1000.000 tr >> BEGIN_REQ RD 0x40 32 B",
      "1010.000 tr << BEGIN_RESP RD 0x40 32 B TLM_OK_RESPONSE",
      "1010.000 tr >> END_RESP RD 0x40 32 B",
      "1010.000 tr << TLM_COMPLETED RD 0x40 32 B TLM_OK_RESPONSE",
      "1010.000 tr >> BEGIN_REQ WR 0x80 32 B",
      "1010.000 tr << END_REQ WR 0x80 32 B",
      "1020.000 tr << BEGIN_RESP WR 0x80 32 B TLM_OK_RESPONSE",
      "1020.000 tr >> TLM_COMPLETED WR 0x80 32 B TLM_OK_RESPONSE",
  };
  EXPECT_EQ(lines_of(out.str()), want);
}

TEST_F(TxnTracer, DmiDebugAndInvalidateAreTraced) {
  std::ostringstream out;
  thread_initiator ini("ini");
  txn_tracer tr("tr", &out, "c");
  fixed_target mem("mem");
  ini.init.bind(tr.tgt);
  tr.init.bind(mem.tgt);
  ini.body = [&mem](thread_initiator& self) {
    std::uint8_t buf[64] = {};
    tlm::tlm_generic_payload p;
    tlm::tlm_dmi dmi;
    setup(p, tlm::TLM_READ_COMMAND, 0x100, 64, buf);
    EXPECT_TRUE(self.init->get_direct_mem_ptr(p, dmi));
    EXPECT_EQ(dmi.get_end_address(), 0xffffu);
    setup(p, tlm::TLM_READ_COMMAND, 0x10000, 4, buf);
    EXPECT_FALSE(self.init->get_direct_mem_ptr(p, dmi));
    setup(p, tlm::TLM_READ_COMMAND, 0x200, 64, buf);
    EXPECT_EQ(self.init->transport_dbg(p), 16u);
    sc_core::wait(sc_time(3, SC_NS));
    mem.tgt->invalidate_direct_mem_ptr(0x100, 0x1ff);
  };
  sc_core::sc_start();
  const std::vector<std::string> want = {
      "0.000 c >> dmi RD 0x100 64 B",
      "0.000 c << dmi_granted RD 0x100 64 B [0x0, 0xffff]",
      "0.000 c >> dmi RD 0x10000 4 B",
      "0.000 c << dmi_refused RD 0x10000 4 B",
      "0.000 c >> dbg RD 0x200 64 B",
      "0.000 c << dbg_return RD 0x200 64 B 16 B transferred",
      "3.000 c << dmi_invalidate [0x100, 0x1ff]",
  };
  EXPECT_EQ(lines_of(out.str()), want);
}

TEST_F(TxnTracer, FourPhaseTrafficThroughAChainIsUnchangedAndEveryPhaseIsTraced) {
  // at_initiator -> protocol checker -> tracer -> host memory: the same responses and data as
  // without the tracer, no base-protocol violation, and per transaction the lines of the
  // 4-phase path: BEGIN_REQ (+ END_REQ returned or on the backward path), BEGIN_RESP on the
  // backward path and END_RESP / TLM_COMPLETED.
  sc_core::sc_report_handler::set_actions(protocol_checker::msg_type, sc_core::SC_ERROR,
                                          sc_core::SC_LOG);
  auto run = [](bool traced, std::ostringstream* out, std::uint64_t* lines, unsigned* resp,
                sc_time* last, std::size_t* viol) {
    test::reset_systemc_context();
    test::at_initiator ini("ini");
    protocol_checker chk("chk");
    host_memory mem("mem", host_memory_params{});
    std::unique_ptr<txn_tracer> tr;
    ini.init.bind(chk.tgt);
    if (traced) {
      tr = std::make_unique<txn_tracer>("tr", out, "mem");
      chk.init.bind(tr->tgt);
      tr->init.bind(mem.tgt);
    } else {
      chk.init.bind(mem.tgt);
    }
    ini.count = 20;  // 20 writes then 20 read-backs
    ini.outstanding = 4;
    sc_core::sc_start();
    *resp = ini.responses + 1000 * ini.mismatches + 100000 * ini.errors;
    *last = ini.last_response;
    *viol = chk.violations();
    if (tr) *lines = tr->lines();
  };
  std::ostringstream out;
  std::uint64_t lines = 0;
  unsigned r0 = 0, r1 = 0;
  sc_time t0, t1;
  std::size_t v0 = 0, v1 = 0;
  run(false, nullptr, nullptr, &r0, &t0, &v0);
  run(true, &out, &lines, &r1, &t1, &v1);
  EXPECT_EQ(r0, 40u);  // 40 responses, no mismatch, no error
  EXPECT_EQ(r1, r0);
  EXPECT_EQ(t1, t0);   // the same time of the last response
  EXPECT_EQ(v0, 0u);
  EXPECT_EQ(v1, 0u);
  // Every transaction: one BEGIN_REQ line and one BEGIN_RESP line.
  const auto ls = lines_of(out.str());
  EXPECT_EQ(ls.size(), lines);
  std::size_t begin_req = 0, begin_resp = 0;
  for (const auto& l : ls) {
    begin_req += l.find(" mem >> BEGIN_REQ ") != std::string::npos;
    begin_resp += l.find(" mem << BEGIN_RESP ") != std::string::npos;
  }
  EXPECT_EQ(begin_req, 40u);
  EXPECT_EQ(begin_resp, 40u);
}

TEST_F(TxnTracer, WithoutAStreamEachLineIsAnInfoReport) {
  sc_core::sc_report_handler::set_actions(txn_tracer::msg_type, sc_core::SC_INFO,
                                          sc_core::SC_LOG);  // counted, not displayed
  const int before = sc_core::sc_report_handler::get_count(txn_tracer::msg_type);
  thread_initiator ini("ini");
  txn_tracer tr("tr");
  fixed_target mem("mem");
  ini.init.bind(tr.tgt);
  tr.init.bind(mem.tgt);
  ini.body = [](thread_initiator& self) {
    std::uint8_t buf[8] = {};
    tlm::tlm_generic_payload p;
    setup(p, tlm::TLM_READ_COMMAND, 0, 8, buf);
    sc_time d;
    self.init->b_transport(p, d);
  };
  sc_core::sc_start();
  EXPECT_EQ(sc_core::sc_report_handler::get_count(txn_tracer::msg_type) - before, 2);
  EXPECT_EQ(tr.lines(), 2u);
}
