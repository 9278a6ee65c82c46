// The base-protocol checker (tlm/core/protocol_checker.h) and the payload pool, with the
// known fault classes of issue 6: a target that answers BEGIN_REQ with BEGIN_RESP, an
// initiator that completes on the backward path, and a second BEGIN_REQ before END_REQ.
#include <gtest/gtest.h>
#include <tlm_utils/simple_target_socket.h>
#include "support/at_initiator.h"
#include "support/sc_fixture.h"
#include "tlm/core/protocol_checker.h"
#include "tlm/memory/host_memory.h"

using namespace cdma;

namespace {

class checker_test : public cdma::test::sc_fixture {
protected:
  checker_test() {
    // Violations are counted by the checker; do not let SC_ERROR throw out of sc_start.
    sc_core::sc_report_handler::set_actions(protocol_checker::msg_type, sc_core::SC_ERROR,
                                            sc_core::SC_LOG);
  }
};

/// A target that answers every BEGIN_REQ at once with TLM_UPDATED and phase BEGIN_RESP
/// (the request and response phases in one call), after copying the data.
class instant_target : public sc_core::sc_module {
public:
  tlm_utils::simple_target_socket<instant_target> tgt;
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(1 << 16, 0);
  explicit instant_target(sc_core::sc_module_name n) : sc_module(n), tgt("tgt") {
    tgt.register_nb_transport_fw(this, &instant_target::fw);
  }
  tlm::tlm_sync_enum fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_core::sc_time& d) {
    if (ph == tlm::END_RESP) return tlm::TLM_COMPLETED;
    std::uint8_t* m = mem.data() + p.get_address();
    if (p.is_write()) std::memcpy(m, p.get_data_ptr(), p.get_data_length());
    else std::memcpy(p.get_data_ptr(), m, p.get_data_length());
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    ph = tlm::BEGIN_RESP;
    d += sc_core::sc_time(10, sc_core::SC_NS);
    return tlm::TLM_UPDATED;
  }
};

}  // namespace

TEST_F(checker_test, clean_at_traffic_to_a_memory_has_no_violations_and_the_pool_stays_bounded) {
  test::at_initiator ini("ini");
  protocol_checker chk("chk");
  host_memory mem("mem", host_memory_params{});
  ini.init.bind(chk.tgt);
  chk.init.bind(mem.tgt);
  ini.count = 2000;  // 4000 transactions
  ini.outstanding = 8;
  sc_core::sc_start();
  EXPECT_EQ(chk.violations(), 0u) << (chk.violations() ? chk.messages().front() : "");
  EXPECT_EQ(ini.responses, 4000u);
  EXPECT_EQ(ini.errors, 0u);
  EXPECT_EQ(ini.mismatches, 0u);
  EXPECT_EQ(chk.open(), 0u);
  // At most `outstanding` (+1 being set up) payloads ever existed for 4000 transactions.
  EXPECT_LE(ini.pool.created(), 9u);
  EXPECT_EQ(ini.pool.in_use(), 0u);
}

TEST_F(checker_test, target_answering_begin_req_with_begin_resp_completes_correctly) {
  test::at_initiator ini("ini");
  protocol_checker chk("chk");
  instant_target tgt("tgt");
  ini.init.bind(chk.tgt);
  chk.init.bind(tgt.tgt);
  ini.count = 50;
  sc_core::sc_start();
  EXPECT_EQ(chk.violations(), 0u) << (chk.violations() ? chk.messages().front() : "");
  EXPECT_EQ(ini.responses, 100u);
  EXPECT_EQ(ini.mismatches, 0u);
}

TEST_F(checker_test, initiator_completing_on_the_backward_path_frees_the_response_slot) {
  test::at_initiator ini("ini");
  protocol_checker chk("chk");
  host_memory mem("mem", host_memory_params{});
  ini.init.bind(chk.tgt);
  chk.init.bind(mem.tgt);
  ini.complete_on_resp = true;
  ini.count = 200;
  ini.outstanding = 8;
  sc_core::sc_start();
  EXPECT_EQ(chk.violations(), 0u) << (chk.violations() ? chk.messages().front() : "");
  EXPECT_EQ(ini.responses, 400u);  // every response delivered: the slot was freed each time
  EXPECT_EQ(ini.mismatches, 0u);
}

namespace {
/// An initiator that breaks the request exclusion rule: two BEGIN_REQs back to back on a
/// target that holds END_REQ back.
class eager_initiator : public sc_core::sc_module {
public:
  tlm_utils::simple_initiator_socket<eager_initiator> init;
  payload_pool pool;
  std::uint8_t buf[2][8] = {};
  explicit eager_initiator(sc_core::sc_module_name n) : sc_module(n), init("init") {
    init.register_nb_transport_bw(this, &eager_initiator::bw);
    SC_HAS_PROCESS(eager_initiator);
    SC_THREAD(run);
  }
  void run() {
    for (int i = 0; i < 2; ++i) {
      tlm::tlm_generic_payload* p = pool.allocate();
      p->acquire();
      p->set_command(tlm::TLM_WRITE_COMMAND);
      p->set_address(8 * i);
      p->set_data_ptr(buf[i]);
      p->set_data_length(8);
      p->set_streaming_width(8);
      p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      tlm::tlm_phase ph = tlm::BEGIN_REQ;
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      init->nb_transport_fw(*p, ph, d);
    }
  }
  tlm::tlm_sync_enum bw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) { return tlm::TLM_ACCEPTED; }
};
class slow_target : public sc_core::sc_module {
public:
  tlm_utils::simple_target_socket<slow_target> tgt;
  explicit slow_target(sc_core::sc_module_name n) : sc_module(n), tgt("tgt") {
    tgt.register_nb_transport_fw(this, &slow_target::fw);
  }
  tlm::tlm_sync_enum fw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) { return tlm::TLM_ACCEPTED; }
};
}  // namespace

TEST_F(checker_test, second_begin_req_before_end_req_is_reported_naming_the_checker) {
  eager_initiator ini("ini");
  protocol_checker chk("chk");
  slow_target tgt("tgt");
  ini.init.bind(chk.tgt);
  chk.init.bind(tgt.tgt);
  sc_core::sc_start();
  ASSERT_EQ(chk.violations(), 1u);
  EXPECT_NE(chk.messages()[0].find("request exclusion rule"), std::string::npos) << chk.messages()[0];
  EXPECT_NE(chk.messages()[0].find("chk"), std::string::npos) << chk.messages()[0];
}

TEST_F(checker_test, b_transport_status_and_payload_fields_are_checked) {
  protocol_checker chk("chk");
  host_memory mem("mem", host_memory_params{});
  struct driver : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<driver> init;
    explicit driver(sc_core::sc_module_name n) : sc_module(n), init("init") {
      SC_HAS_PROCESS(driver);
      SC_THREAD(run);
    }
    void run() {
      std::uint8_t b[4] = {};
      tlm::tlm_generic_payload p;
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      p.set_command(tlm::TLM_READ_COMMAND);
      p.set_data_ptr(b);
      p.set_data_length(4);
      p.set_streaming_width(4);
      p.set_response_status(tlm::TLM_OK_RESPONSE);  // wrong: must start INCOMPLETE
      init->b_transport(p, d);
      p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      p.set_streaming_width(0);  // wrong
      init->b_transport(p, d);
    }
  } drv("drv");
  drv.init.bind(chk.tgt);
  chk.init.bind(mem.tgt);
  sc_core::sc_start();
  ASSERT_GE(chk.violations(), 2u);
  EXPECT_NE(chk.messages()[0].find("TLM_INCOMPLETE_RESPONSE"), std::string::npos) << chk.messages()[0];
  bool width = false;
  for (const auto& m : chk.messages()) width |= m.find("streaming width is 0") != std::string::npos;
  EXPECT_TRUE(width);
}

// ---- session 25 (trial tlmuser-s25): open transactions at the end, BEGIN_RESP answers ------------

#include "support/report_log.h"
#include "tlm/memory/memory_target.h"

namespace {
/// An AT initiator with a configurable answer to BEGIN_RESP: a 16-byte write at 0x100 at time
/// 0, then an 8-byte read at 0x200 10 ns later (after the write's END_REQ), each on its own
/// pool payload. `answer`: accepted = TLM_ACCEPTED and never END_RESP (the forgotten END_RESP),
/// end_req = TLM_UPDATED with END_REQ (illegal), completed = TLM_COMPLETED (clean).
/// `stop_at` > 0: sc_stop() then.
class answering_initiator : public sc_core::sc_module {
public:
  enum class answer { accepted, end_req, completed };
  tlm_utils::simple_initiator_socket<answering_initiator> init;
  answer how = answer::accepted;
  sc_core::sc_time stop_at = sc_core::SC_ZERO_TIME;
  unsigned responses = 0;
  payload_pool pool;
  std::uint8_t wbuf[16] = {}, rbuf[8] = {};
  explicit answering_initiator(sc_core::sc_module_name n) : sc_module(n), init("init") {
    init.register_nb_transport_bw(this, &answering_initiator::bw);
    SC_HAS_PROCESS(answering_initiator);
    SC_THREAD(run);
  }
  void run() {
    send(tlm::TLM_WRITE_COMMAND, 0x100, wbuf, 16);
    wait(10, sc_core::SC_NS);
    send(tlm::TLM_READ_COMMAND, 0x200, rbuf, 8);
    if (stop_at > sc_core::SC_ZERO_TIME) {
      wait(stop_at - sc_core::sc_time_stamp());
      sc_core::sc_stop();
    }
  }
  void send(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* buf, unsigned len) {
    tlm::tlm_generic_payload* p = pool.allocate();
    p->acquire();
    p->set_command(cmd);
    p->set_address(addr);
    p->set_data_ptr(buf);
    p->set_data_length(len);
    p->set_streaming_width(len);
    p->set_byte_enable_ptr(nullptr);
    p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    tlm::tlm_phase ph = tlm::BEGIN_REQ;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    init->nb_transport_fw(*p, ph, d);  // memory_target: TLM_UPDATED, END_REQ (accepted at once)
  }
  tlm::tlm_sync_enum bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_core::sc_time&) {
    if (ph != tlm::BEGIN_RESP) return tlm::TLM_ACCEPTED;
    ++responses;
    switch (how) {
      case answer::accepted: return tlm::TLM_ACCEPTED;  // ... and END_RESP is never sent
      case answer::end_req: ph = tlm::END_REQ; return tlm::TLM_UPDATED;
      case answer::completed: p.release(); return tlm::TLM_COMPLETED;
    }
    return tlm::TLM_ACCEPTED;
  }
};

/// memory_target of 1 MiB, infinitely fast bus, 50 ns latency: a request at t is answered
/// (BEGIN_RESP) at t + 50 ns.
memory_params mem_50ns() {
  memory_params mp;
  mp.size_bytes = 1 << 20;
  mp.bandwidth_Bps = 0.0;
  mp.latency_ps = 50'000;
  return mp;
}

std::vector<std::string> checker_warnings(const cdma::test::report_log& log) {
  std::vector<std::string> out;
  for (const auto& e : log.warnings(protocol_checker::msg_type)) out.push_back(e.msg);
  return out;
}
}  // namespace

// The forgotten END_RESP (trial tlmuser-s25 F1 b): the initiator accepts BEGIN_RESP of the
// write and never sends END_RESP, so the target holds the read's response back (response
// exclusion rule) and the simulation ends by running out of events. The checker says so once,
// when it is destroyed (no sc_stop(): no end_of_simulation()): 2 open, the oldest the write of
// 16 bytes at 0x100 in BEGIN_RESP since 50 ns (0 + 50 ns latency), awaiting END_RESP from the
// initiator; at 60 ns (the read's response, due 10 + 50 ns, queued behind it).
TEST_F(checker_test, open_transactions_at_the_end_are_warned_once_naming_the_oldest) {
  cdma::test::report_log log;
  {
    answering_initiator ini("ini");
    protocol_checker chk("chk");
    memory_target mem("mem", mem_50ns());
    ini.init.bind(chk.tgt);
    chk.init.bind(mem.tgt);
    sc_core::sc_start();
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(60, sc_core::SC_NS));
    EXPECT_EQ(ini.responses, 1u);
    EXPECT_EQ(chk.violations(), 0u) << (chk.violations() ? chk.messages().front() : "");
    EXPECT_EQ(chk.open(), 2u);
    EXPECT_TRUE(checker_warnings(log).empty()) << "warned before the end";
    const std::string r = chk.open_report();
    EXPECT_NE(r.find("2 transaction(s) still open at 60 ns"), std::string::npos) << r;
    EXPECT_NE(r.find("the write of 16 bytes at 0x100, is in phase BEGIN_RESP since 50 ns"), std::string::npos) << r;
    EXPECT_NE(r.find("awaiting END_RESP from the initiator"), std::string::npos) << r;
    EXPECT_NE(r.find("chk"), std::string::npos) << r;
  }
  const auto w = checker_warnings(log);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("2 transaction(s) still open at 60 ns"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("BEGIN_RESP since 50 ns, awaiting END_RESP from the initiator"), std::string::npos) << w[0];
}

// With sc_stop() the warning comes from end_of_simulation(), inside the simulation, and the
// destructor does not repeat it. Stopped at 30 ns, before the write's response (due at
// 50 ns): the write is in END_REQ since 0 s (accepted at once), awaiting BEGIN_RESP from the
// target; the read (END_REQ since 10 ns) too.
TEST_F(checker_test, open_transactions_at_sc_stop_are_warned_by_end_of_simulation) {
  cdma::test::report_log log;
  {
    answering_initiator ini("ini");
    ini.stop_at = sc_core::sc_time(30, sc_core::SC_NS);
    protocol_checker chk("chk");
    memory_target mem("mem", mem_50ns());
    ini.init.bind(chk.tgt);
    chk.init.bind(mem.tgt);
    sc_core::sc_start();
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(30, sc_core::SC_NS));
    const auto w = checker_warnings(log);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("2 transaction(s) still open at 30 ns"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("the write of 16 bytes at 0x100, is in phase END_REQ since 0 s, awaiting BEGIN_RESP from the target"),
              std::string::npos)
        << w[0];
  }
  EXPECT_EQ(checker_warnings(log).size(), 1u) << "repeated by the destructor";
}

// A clean run (both responses completed on the backward path) ends with nothing open and
// no warning, at sc_stop() or at destruction.
TEST_F(checker_test, a_clean_run_gives_no_end_of_simulation_warning) {
  cdma::test::report_log log;
  for (bool stop : {false, true}) {
    if (stop) cdma::test::reset_systemc_context();
    answering_initiator ini("ini");
    ini.how = answering_initiator::answer::completed;
    if (stop) ini.stop_at = sc_core::sc_time(1, sc_core::SC_US);
    protocol_checker chk("chk");
    memory_target mem("mem", mem_50ns());
    ini.init.bind(chk.tgt);
    chk.init.bind(mem.tgt);
    sc_core::sc_start();
    EXPECT_EQ(ini.responses, 2u);
    EXPECT_EQ(chk.open(), 0u);
    EXPECT_EQ(chk.completed(), 2u);
    EXPECT_TRUE(chk.open_report().empty());
  }
  EXPECT_TRUE(checker_warnings(log).empty()) << checker_warnings(log).front();
}

// The initiator answers BEGIN_RESP with TLM_UPDATED and END_REQ (trial tlmuser-s25 F1 a, F7):
// the checker names it as the initiator's answer with the legal ones (before: "nb_transport_bw
// return: END_REQ on the forward path"), and the target reports it too (its response stays in
// progress: the read is never answered).
TEST_F(checker_test, an_illegal_answer_to_begin_resp_is_named_with_the_legal_answers) {
  cdma::test::report_log log;
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_LOG);  // targets' errors: recorded
  answering_initiator ini("ini");
  ini.how = answering_initiator::answer::end_req;
  protocol_checker chk("chk");
  memory_target mem("mem", mem_50ns());
  ini.init.bind(chk.tgt);
  chk.init.bind(mem.tgt);
  sc_core::sc_start();
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_DISPLAY | sc_core::SC_THROW);
  EXPECT_EQ(ini.responses, 1u) << "the read's response must stay held back";
  ASSERT_EQ(chk.violations(), 1u);
  const std::string& m = chk.messages()[0];
  EXPECT_NE(m.find("nb_transport_bw return: the initiator answered BEGIN_RESP with TLM_UPDATED and phase END_REQ; "
                   "legal answers: TLM_ACCEPTED (then END_RESP on the forward path), TLM_UPDATED with END_RESP, "
                   "or TLM_COMPLETED (§15.2.4, Table 57)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("addr 0x100"), std::string::npos) << m;
  std::vector<std::string> target;
  for (const auto& e : log.errors())
    if (e.type == std::string(mem.name())) target.push_back(e.msg);
  ASSERT_EQ(target.size(), 1u);
  EXPECT_NE(target[0].find("the initiator answered BEGIN_RESP of the write of 16 bytes at 0x100 with TLM_UPDATED "
                           "and phase END_REQ; expected TLM_ACCEPTED (then END_RESP on the forward path), "
                           "TLM_UPDATED with END_RESP, or TLM_COMPLETED"),
            std::string::npos)
      << target[0];
}
