// vdnn_runtime with activation tensors as GPU-memory content regions: a byte corrupted on
// its way to host memory is found by the prefetch check, exactly once; host memory spilled to
// a file keeps every byte. GPU and host memory are memory_targets, no PCIe link (it has its
// own tests); a pass-through between the engine and host memory can flip one byte.
#include <gtest/gtest.h>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tests/support/sc_fixture.h"
#include "tlm/cdma/cdma_engine.h"
#include "tlm/core/initiator_mux.h"
#include "tlm/memory/host_memory.h"
#include "tlm/memory/memory_target.h"
#include "workloads/compute/roofline.h"
#include "workloads/vdnn/vdnn_runtime.h"

using namespace cdma;
using namespace cdma::workloads;

namespace {

/// Forwards b_transport; flips bit 0 of byte `byte` of the `nth` write (counting from 1).
struct corrupter : sc_core::sc_module {
  tlm_utils::simple_target_socket<corrupter> tgt;
  tlm_utils::simple_initiator_socket<corrupter> init;
  unsigned nth = 0, writes = 0;
  std::size_t byte = 0;
  explicit corrupter(sc_core::sc_module_name n) : sc_module(n), tgt("tgt"), init("init") {
    tgt.register_b_transport(this, &corrupter::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& d) {
    if (p.is_write() && ++writes == nth && byte < p.get_data_length()) {
      p.get_data_ptr()[byte] ^= 1;
      init->b_transport(p, d);
      p.get_data_ptr()[byte] ^= 1;  // the initiator's buffer is left as it was
      return;
    }
    init->b_transport(p, d);
  }
};

struct rig {
  network net = make_network("synthetic", 1);
  synthetic_activation_source src{0.4, 5};
  memory_target gpu{"gpu", memory_params{1ull << 30, 300e9, 100000, 65536}};
  host_memory host;
  cdma_engine engine{"engine"};
  corrupter bad{"bad"};
  initiator_mux bus{"bus"};
  vdnn_runtime rt;
  sc_core::sc_signal<bool> irq{"irq"};

  static vdnn_runtime_params params() {
    vdnn_runtime_params p;
    p.steps = {{"vdnn", vdnn_policy::all, false, codec::codec_id::raw, 4},
               {"cdma", vdnn_policy::all, true, codec::codec_id::zvc, 4}};
    p.gpu_base = 0;
    p.host_base = 1 << 20;
    return p;
  }
  explicit rig(const host_memory_params& hp)
      : host("host", hp), rt("rt", net, roofline_times(net, gpu_params{}), src, gpu, params()) {
    engine.gpu_mem.bind(bus.tgt);
    rt.gpu_mem.bind(bus.tgt);
    bus.init.bind(gpu.tgt);
    engine.pcie.bind(bad.tgt);
    bad.init.bind(host.tgt);
    rt.regs.bind(engine.regs);
    engine.irq.bind(irq);
    rt.irq.bind(irq);
  }
  std::uint64_t offloaded() const {
    std::uint64_t b = 0;
    for (std::size_t i = 0; i + 1 < net.layers.size(); ++i) b += net.layers[i].offload.bytes();
    return b;
  }
};

class VdnnRuntime : public cdma::test::sc_fixture {};

}  // namespace

TEST_F(VdnnRuntime, OneCorruptedByteOnTheWayToHostIsFoundExactlyOnce) {
  rig r{host_memory_params{}};
  // The first write through the engine's pcie socket is the vDNN step's first window of X_0
  // (plain copy: the descriptor ring is in GPU memory).
  r.bad.nth = 1;
  r.bad.byte = 100;
  sc_core::sc_start();
  ASSERT_TRUE(r.rt.finished());
  const auto& res = r.rt.results();
  ASSERT_EQ(res.size(), 2u);
  EXPECT_EQ(res[0].verified_bytes, r.offloaded());
  EXPECT_EQ(res[0].mismatched_bytes, 1u);
  ASSERT_EQ(res[0].errors.size(), 1u);
  EXPECT_NE(res[0].errors[0].find(r.net.layers[0].name), std::string::npos) << res[0].errors[0];
  // The cDMA step (no corruption) is bit-exact.
  EXPECT_EQ(res[1].verified_bytes, r.offloaded());
  EXPECT_EQ(res[1].mismatched_bytes, 0u);
  EXPECT_TRUE(res[1].errors.empty());
  // The activation slots never allocated GPU memory pages: only the descriptor ring did.
  EXPECT_LE(r.gpu.store().resident_bytes(), 65536u);
}

TEST_F(VdnnRuntime, HostMemorySpilledToAFileKeepsEveryByte) {
  host_memory_params hp;
  hp.spill = true;
  hp.spill_options.cache_bytes = 4 * 65536;  // four pages in RAM
  rig r{hp};
  sc_core::sc_start();
  ASSERT_TRUE(r.rt.finished());
  for (const auto& s : r.rt.results()) {
    EXPECT_EQ(s.verified_bytes, r.offloaded()) << s.config.label;
    EXPECT_EQ(s.mismatched_bytes, 0u) << s.config.label;
    EXPECT_TRUE(s.errors.empty()) << s.config.label;
  }
  EXPECT_LE(r.host.store().resident_bytes(), 4u * 65536u);
  EXPECT_GT(r.host.store().spilled_bytes(), r.offloaded() / 2);
}
