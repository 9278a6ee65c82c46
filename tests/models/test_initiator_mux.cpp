// initiator_mux keeps the base protocol's request exclusion rule on its shared downstream
// socket: two AT initiators, each with several transactions in flight, share a GPU memory
// controller that accepts one transaction at a time (max_outstanding = 1, so END_REQ is
// delayed). Protocol checkers sit on every connection; without the mux's queue the checker
// between mux and controller reports a second BEGIN_REQ before END_REQ.
#include <gtest/gtest.h>

#include "tests/support/at_initiator.h"
#include "tests/support/sc_fixture.h"
#include "tlm/core/initiator_mux.h"
#include "tlm/core/protocol_checker.h"
#include "tlm/memory/gpu_memory_controller.h"

using namespace cdma;

namespace {
class MuxTest : public cdma::test::sc_fixture {};

void run_two_initiators(bool complete_on_resp) {
  test::at_initiator a("a"), b("b");
  a.count = b.count = 24;
  a.outstanding = b.outstanding = 4;
  a.bytes = b.bytes = 256;
  b.base = 1 << 20;  // disjoint data
  a.complete_on_resp = b.complete_on_resp = complete_on_resp;
  protocol_checker ca("chk_a"), cb("chk_b"), cm("chk_mux");
  initiator_mux mux("mux");
  gpu_memory_params gp;
  gp.max_outstanding = 1;
  gpu_memory_controller mem("mem", gp);
  a.init.bind(ca.tgt);
  b.init.bind(cb.tgt);
  ca.init.bind(mux.tgt);
  cb.init.bind(mux.tgt);
  mux.init.bind(cm.tgt);
  cm.init.bind(mem.tgt);
  sc_core::sc_start();
  for (const protocol_checker* c : {&ca, &cb, &cm})
    EXPECT_EQ(c->violations(), 0u) << c->name() << ": " << (c->violations() ? c->messages()[0] : "");
  for (const test::at_initiator* i : {&a, &b}) {
    EXPECT_EQ(i->responses, 48u) << i->name();  // 24 writes + 24 reads, all answered
    EXPECT_EQ(i->errors, 0u) << i->name();
    EXPECT_EQ(i->mismatches, 0u) << i->name();  // the reads return what was written
  }
  EXPECT_EQ(cm.begun(), 96u);  // every transaction reached the controller once
  EXPECT_EQ(mem.dram_stats().violations, 0u);  // DRAM timing rules
}
}  // namespace

TEST_F(MuxTest, SharedSocketKeepsTheRequestExclusionRule) { run_two_initiators(false); }

TEST_F(MuxTest, InitiatorsCompletingOnTheBackwardPathAreServedToo) { run_two_initiators(true); }
