// vDNN runtime on zoo networks (whole platform, LT): oracle = sum of compute times; when the
// link is (relatively) infinitely fast vDNN equals the oracle; policy conv offloads only
// convolution inputs; the vDNN prefetch rule brings every offloaded tensor back, verified.
#include <gtest/gtest.h>

#include "platform/platform.h"
#include "support/sc_fixture.h"

namespace wl = cdma::workloads;

namespace {

class VdnnOnZoo : public cdma::test::sc_fixture {};

cdma::platform::platform_config small(const std::string& net, const std::string& policy) {
  cdma::platform::platform_config c;
  c.network = net;
  c.batch = 1;
  c.policy = policy;
  c.synthetic_density = 0.4;
  return c;
}

TEST_F(VdnnOnZoo, OracleIsSumOfComputeTimes) {
  const auto rep = cdma::platform::run(small("alexnet", "all"));
  cdma::ps_t sum = 0;
  for (const auto& t : rep.times) sum += t.forward + t.backward;
  EXPECT_EQ(rep.oracle.result.step, sum);
  EXPECT_TRUE(rep.ok());
}

TEST_F(VdnnOnZoo, InfinitelyFastLinkEqualsOracle) {
  // Compute 10^4 x slower than the Titan X (7e8 FLOP/s): every transfer hides under its
  // layer's kernel, which is what an infinitely fast link gives (even the pools: 9 FLOPs per
  // output at 4.9e8 FLOP/s = 18 ns per output vs ~1.3 ns per 16 input bytes on PCIe).
  auto c = small("alexnet", "all");
  c.gpu.peak_flops = 7e8;
  const auto rep = cdma::platform::run(c);
  EXPECT_EQ(rep.vdnn.result.step, rep.oracle.result.step);
  EXPECT_EQ(rep.cdma.result.step, rep.oracle.result.step);
  EXPECT_TRUE(rep.ok());
}

TEST_F(VdnnOnZoo, PolicyConvOffloadsOnlyConvInputs) {
  const auto rep = cdma::platform::run(small("vgg16", "conv"));
  const auto& layers = rep.net.layers;
  std::size_t offloaded = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& r = rep.vdnn.result.layers[i];
    const bool expect = layers[i].kind == wl::layer_kind::conv && i + 1 < layers.size();
    EXPECT_EQ(r.offloaded, expect) << layers[i].name;
    if (r.offloaded) {
      ++offloaded;
      EXPECT_GT(r.prefetch, 0) << layers[i].name << " was never brought back";
    }
  }
  EXPECT_EQ(offloaded, 13u);  // the 13 convolutions of VGG-16
  EXPECT_EQ(rep.vdnn.result.verified_bytes, [&] {
    std::uint64_t b = 0;
    for (std::size_t i = 0; i + 1 < layers.size(); ++i)
      if (layers[i].kind == wl::layer_kind::conv) b += layers[i].offload.bytes();
    return b;
  }());
  EXPECT_TRUE(rep.ok());
}

}  // namespace
