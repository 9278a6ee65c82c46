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
