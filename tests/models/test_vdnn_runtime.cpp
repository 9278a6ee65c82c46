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

namespace {
/// One simulation of the rig (both steps); `release`: host buffers discarded after their
/// prefetch (what the platform does for a spilling host memory).
std::vector<step_result> run_rig(const host_memory_params& hp, bool release) {
  cdma::test::reset_systemc_context();
  rig r{hp};
  if (release) r.rt.on_host_release = [&r](std::uint64_t a, std::uint64_t n) { r.host.discard(a, n); };
  sc_core::sc_start();
  EXPECT_TRUE(r.rt.finished());
  return r.rt.results();
}
}  // namespace

TEST_F(VdnnRuntime, SpillHelperThreadAndHostReleaseChangeNoResult) {
  // The same two steps with host memory in RAM, spilled with every pread/pwrite in the
  // simulation thread, and spilled with the helper I/O thread (write-behind, read-ahead) plus
  // the host buffers discarded after their prefetch: simulated times, bytes and verification
  // are identical (the helper changes only which thread does the I/O).
  host_memory_params ram;
  host_memory_params sync_spill;
  sync_spill.spill = true;
  sync_spill.spill_options.cache_bytes = 4 * 65536;
  sync_spill.spill_options.io_thread = false;
  host_memory_params async_spill = sync_spill;
  async_spill.spill_options.io_thread = true;
  async_spill.spill_options.read_ahead_pages = 3;  // small queues: more overtaking and take-backs
  async_spill.spill_options.write_behind_pages = 2;
  const auto a = run_rig(ram, false);
  const auto b = run_rig(sync_spill, false);
  const auto c = run_rig(async_spill, true);
  const auto d = run_rig(async_spill, false);
  for (const auto* x : {&b, &c, &d}) {
    ASSERT_EQ(x->size(), a.size());
    for (std::size_t s = 0; s < a.size(); ++s) {
      const step_result& p = a[s];
      const step_result& q = (*x)[s];
      EXPECT_EQ(q.step, p.step) << p.config.label;
      EXPECT_EQ(q.forward, p.forward) << p.config.label;
      EXPECT_EQ(q.backward, p.backward) << p.config.label;
      EXPECT_EQ(q.verified_bytes, p.verified_bytes) << p.config.label;
      EXPECT_EQ(q.mismatched_bytes, 0u) << p.config.label;
      EXPECT_TRUE(q.errors.empty()) << p.config.label;
      ASSERT_EQ(q.layers.size(), p.layers.size());
      for (std::size_t i = 0; i < p.layers.size(); ++i) {
        EXPECT_EQ(q.layers[i].offload, p.layers[i].offload) << p.config.label << " layer " << i;
        EXPECT_EQ(q.layers[i].prefetch, p.layers[i].prefetch) << p.config.label << " layer " << i;
        EXPECT_EQ(q.layers[i].moved_data_bytes, p.layers[i].moved_data_bytes) << p.config.label << " layer " << i;
        EXPECT_EQ(q.layers[i].zeros, p.layers[i].zeros) << p.config.label << " layer " << i;
      }
    }
  }
}
