// vDNN runtime on zoo networks (whole platform, LT): oracle = sum of compute times; when the
// link is (relatively) infinitely fast vDNN equals the oracle; policy conv offloads only
// convolution inputs; the vDNN prefetch rule brings every offloaded tensor back, verified;
// each prefetch is issued during the backward pass of the layer the rule names, and the
// Chrome trace draws it there.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "platform/outputs.h"
#include "platform/platform.h"
#include "platform/report.h"
#include "support/sc_fixture.h"
#include "support/trial_network.h"

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

/// Offloading layer name -> name of the layer during whose backward pass its input X_i was
/// fetched (the layer itself for an on-demand fetch); every offloaded layer, both steps equal.
std::map<std::string, std::string> fetched_during(const cdma::platform::run_report& rep) {
  std::map<std::string, std::string> m;
  const auto& layers = rep.net.layers;
  for (const auto* s : {&rep.vdnn, &rep.cdma}) {
    std::map<std::string, std::string> one;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const auto& r = s->result.layers[i];
      if (!r.offloaded) {
        EXPECT_EQ(r.prefetch_during, wl::layer_result::no_layer) << layers[i].name;
        continue;
      }
      one[layers[i].name] = r.prefetch_during < layers.size() ? layers[r.prefetch_during].name : "(never)";
    }
    if (s == &rep.vdnn) m = one;
    else EXPECT_EQ(one, m) << "the cDMA step fetched in other layers than the vDNN step";
  }
  return m;
}

// vDNN's prefetch rule (§III-C; docs/workloads.md): during layer i's backward pass, prefetch
// the nearest earlier layer whose input was offloaded and is not back yet, looking back no
// further than the closest convolution layer. Expectations worked out by hand.
TEST_F(VdnnOnZoo, PrefetchDuringTheLayerTheRuleNamesVgg16Conv) {
  // VGG-16 (0 conv1_1 1 conv1_2 2 pool1 3 conv2_1 4 conv2_2 5 pool2 6 conv3_1 7 conv3_2
  // 8 conv3_3 9 pool3 10 conv4_1 11 conv4_2 12 conv4_3 13 pool4 14 conv5_1 15 conv5_2
  // 16 conv5_3 17 pool5 18 fc6 19 fc7 20 fc8), policy conv: the 13 conv inputs. fc8 looks
  // back past fc7, fc6, pool5 to conv5_3; fc7, fc6 and pool5 then reach conv5_3 (back, a
  // conv: stop) and prefetch nothing; conv5_3 prefetches conv5_2, ..., conv5_1 looks past
  // pool4 to conv4_3, pool4 prefetches nothing, and so on down to conv1_2 -> conv1_1.
  const auto rep = cdma::platform::run(small("vgg16", "conv"));
  const std::map<std::string, std::string> want = {
      {"conv1_1", "conv1_2"}, {"conv1_2", "conv2_1"}, {"conv2_1", "conv2_2"}, {"conv2_2", "conv3_1"},
      {"conv3_1", "conv3_2"}, {"conv3_2", "conv3_3"}, {"conv3_3", "conv4_1"}, {"conv4_1", "conv4_2"},
      {"conv4_2", "conv4_3"}, {"conv4_3", "conv5_1"}, {"conv5_1", "conv5_2"}, {"conv5_2", "conv5_3"},
      {"conv5_3", "fc8"}};
  EXPECT_EQ(fetched_during(rep), want);
  EXPECT_TRUE(rep.ok());
  // The trace draws conv5_3's input prefetch at fc8's backward pass (it drew it at pool5's)
  // and conv4_3's at conv5_1's (not pool4's).
  const auto t = cdma::platform::chrome_trace(rep);
  double fc8_bwd = -1, conv5_3_pre = -2, conv4_3_pre = -3, conv5_1_bwd = -4;
  std::string during;
  for (const auto& e : t["traceEvents"]) {
    if (e.value("pid", 0) != 2 || e.value("ph", "") != "X") continue;  // pid 2: the vDNN step
    const std::string n = e.value("name", "");
    if (n == "fc8 bwd") fc8_bwd = e["ts"].get<double>();
    if (n == "conv5_1 bwd") conv5_1_bwd = e["ts"].get<double>();
    if (n == "conv5_3 prefetch") conv5_3_pre = e["ts"].get<double>(), during = e["args"]["during"].get<std::string>();
    if (n == "conv4_3 prefetch") conv4_3_pre = e["ts"].get<double>();
  }
  EXPECT_EQ(conv5_3_pre, fc8_bwd);
  EXPECT_EQ(during, "fc8 bwd");
  EXPECT_EQ(conv4_3_pre, conv5_1_bwd);
}

TEST_F(VdnnOnZoo, PrefetchDuringTheLayerTheRuleNamesVgg16All) {
  // Policy all: every input but fc8's; X_k comes back during layer k + 1.
  const auto rep = cdma::platform::run(small("vgg16", "all"));
  std::map<std::string, std::string> want;
  for (std::size_t k = 0; k + 1 < rep.net.layers.size(); ++k) want[rep.net.layers[k].name] = rep.net.layers[k + 1].name;
  EXPECT_EQ(want.size(), 20u);
  EXPECT_EQ(fetched_during(rep), want);
  EXPECT_TRUE(rep.ok());
}

/// 0 c1 (conv) 1 p1 (pool) 2 c2 (conv) 3 p2 (pool) 4 f1 (fc) 5 f2 (fc), input 3x16x16.
std::string lookback_net() {
  const std::string path = ::testing::TempDir() + "lookback_net.json";
  std::ofstream f(path);
  f << R"({"name": "lookback", "input": [3, 16, 16], "layers": [
    {"name": "c1", "type": "conv", "filters": 8, "kernel": 3, "pad": 1, "relu": true},
    {"name": "p1", "type": "pool", "kernel": 2},
    {"name": "c2", "type": "conv", "filters": 8, "kernel": 3, "pad": 1, "relu": true},
    {"name": "p2", "type": "pool", "kernel": 2},
    {"name": "f1", "type": "fc", "units": 32, "relu": true},
    {"name": "f2", "type": "fc", "units": 10}]})";
  return path;
}

TEST_F(VdnnOnZoo, PrefetchLookBackStopsAtAConvolution) {
  // Policy conv offloads X_0 and X_2. f2 looks back past f1 and p2 to c2 and prefetches X_2;
  // f1 and p2 reach c2 (back, a convolution: stop) and prefetch nothing, although X_0 is still
  // out (without the stop f1 would prefetch it); c2 prefetches X_0 past p1.
  const auto rep = cdma::platform::run(small(lookback_net(), "conv"));
  ASSERT_EQ(rep.net.layers.size(), 6u);
  EXPECT_EQ(fetched_during(rep), (std::map<std::string, std::string>{{"c1", "c2"}, {"c2", "f2"}}));
  EXPECT_TRUE(rep.ok());
}

TEST_F(VdnnOnZoo, PrefetchLookBackPolicyAll) {
  // Policy all: X_0..X_4 offloaded; X_k comes back during layer k + 1.
  const auto rep = cdma::platform::run(small(lookback_net(), "all"));
  ASSERT_EQ(rep.net.layers.size(), 6u);
  EXPECT_EQ(fetched_during(rep), (std::map<std::string, std::string>{
                                     {"c1", "p1"}, {"p1", "c2"}, {"c2", "p2"}, {"p2", "f1"}, {"f1", "f2"}}));
  EXPECT_TRUE(rep.ok());
}

// Policy conv on branched networks: the offloaded tensors are exactly those a convolution reads
// (a concatenation's parts read by the concatenation's consumers). Expected key sets from
// /usr/bin/python3 tests/unit/vdnn_tensors.py FILE --keys (an independent walk of the layer
// file / Keras graph; "" = the input image), in execution order.
std::set<std::string> offloaded_keys(const cdma::platform::run_report& rep, const wl::step_result& r) {
  std::set<std::string> keys;
  for (std::size_t i = 0; i < rep.net.layers.size(); ++i)
    if (r.layers[i].offloaded) keys.insert(rep.net.layers[i].offload_key);
  return keys;
}

TEST_F(VdnnOnZoo, PolicyConvOnGoogLeNetOffloadsExactlyTheConvInputs) {
  const std::set<std::string> want = {
      "", "pool1/3x3_s2", "conv2/3x3_reduce", "pool2/3x3_s2", "inception_3a/1x1",
      "inception_3a/3x3_reduce", "inception_3a/3x3", "inception_3a/5x5_reduce", "inception_3a/5x5",
      "inception_3a/pool", "inception_3a/pool_proj", "inception_3b/3x3_reduce", "inception_3b/5x5_reduce",
      "inception_3b/pool", "pool3/3x3_s2", "inception_4a/1x1", "inception_4a/3x3_reduce",
      "inception_4a/3x3", "inception_4a/5x5_reduce", "inception_4a/5x5", "inception_4a/pool",
      "inception_4a/pool_proj", "inception_4b/1x1", "inception_4b/3x3_reduce", "inception_4b/3x3",
      "inception_4b/5x5_reduce", "inception_4b/5x5", "inception_4b/pool", "inception_4b/pool_proj",
      "inception_4c/1x1", "inception_4c/3x3_reduce", "inception_4c/3x3", "inception_4c/5x5_reduce",
      "inception_4c/5x5", "inception_4c/pool", "inception_4c/pool_proj", "inception_4d/1x1",
      "inception_4d/3x3_reduce", "inception_4d/3x3", "inception_4d/5x5_reduce", "inception_4d/5x5",
      "inception_4d/pool", "inception_4d/pool_proj", "inception_4e/3x3_reduce", "inception_4e/5x5_reduce",
      "inception_4e/pool", "pool4/3x3_s2", "inception_5a/1x1", "inception_5a/3x3_reduce",
      "inception_5a/3x3", "inception_5a/5x5_reduce", "inception_5a/5x5", "inception_5a/pool",
      "inception_5a/pool_proj", "inception_5b/3x3_reduce", "inception_5b/5x5_reduce", "inception_5b/pool"};
  ASSERT_EQ(want.size(), 57u);
  const auto rep = cdma::platform::run(small("googlenet", "conv"));
  EXPECT_EQ(offloaded_keys(rep, rep.vdnn.result), want);
  EXPECT_EQ(offloaded_keys(rep, rep.cdma.result), want);
  // The audit's cases: the 5x5 outputs feed the next module's convs through its concat; the
  // 1x1 / 3x3 outputs of 3b, 4e and 5b feed only a pool (and 5b's the final pool).
  for (const char* m : {"3a", "4a", "4b", "4c", "4d", "5a"})
    EXPECT_EQ(want.count(std::string("inception_") + m + "/5x5"), 1u) << m;
  for (const char* m : {"3b", "4e", "5b"}) {
    EXPECT_EQ(want.count(std::string("inception_") + m + "/1x1"), 0u) << m;
    EXPECT_EQ(want.count(std::string("inception_") + m + "/3x3"), 0u) << m;
  }
  // Every offloaded tensor came back and was verified.
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < rep.net.layers.size(); ++i)
    if (rep.vdnn.result.layers[i].offloaded) {
      EXPECT_GT(rep.vdnn.result.layers[i].prefetch, 0) << rep.net.layers[i].name;
      bytes += rep.net.layers[i].offload.bytes();
    }
  EXPECT_EQ(rep.vdnn.result.verified_bytes, bytes);
  EXPECT_TRUE(rep.ok());
}

TEST_F(VdnnOnZoo, PolicyConvOnInceptionV3OffloadsExactlyTheConvInputs) {
  const std::set<std::string> want = {
      "", "activation_1", "activation_2", "max_pooling2d_1", "activation_4", "max_pooling2d_2",
      "activation_6", "activation_7", "activation_8", "activation_9", "activation_10", "activation_11",
      "average_pooling2d_1", "activation_12", "activation_13", "activation_14", "activation_15",
      "activation_16", "activation_17", "activation_18", "average_pooling2d_2", "activation_19",
      "activation_20", "activation_21", "activation_22", "activation_23", "activation_24",
      "activation_25", "average_pooling2d_3", "activation_26", "activation_27", "activation_28",
      "activation_29", "activation_30", "max_pooling2d_3", "activation_31", "activation_32",
      "activation_33", "activation_34", "activation_35", "activation_36", "activation_37",
      "activation_38", "activation_39", "average_pooling2d_4", "activation_40", "activation_41",
      "activation_42", "activation_43", "activation_44", "activation_45", "activation_46",
      "activation_47", "activation_48", "activation_49", "average_pooling2d_5", "activation_50",
      "activation_51", "activation_52", "activation_53", "activation_54", "activation_55",
      "activation_56", "activation_57", "activation_58", "activation_59", "average_pooling2d_6",
      "activation_60", "activation_61", "activation_62", "activation_63", "activation_64",
      "activation_65", "activation_66", "activation_67", "activation_68", "activation_69",
      "average_pooling2d_7", "activation_70", "activation_71", "activation_72", "activation_73",
      "activation_74", "activation_75", "activation_76", "max_pooling2d_4", "activation_77",
      "activation_78", "activation_79", "activation_80", "activation_81", "activation_82",
      "activation_83", "activation_84", "average_pooling2d_8", "activation_85", "activation_87",
      "activation_90", "activation_91", "average_pooling2d_9"};
  ASSERT_EQ(want.size(), 100u);
  auto c = small("inception_v3", "conv");
  c.steps = "vdnn";
  const auto rep = cdma::platform::run(c);
  EXPECT_EQ(offloaded_keys(rep, rep.vdnn.result), want);
  // activation_3 feeds only max_pooling2d_1; mixed10's parts only the final average pool.
  EXPECT_EQ(want.count("activation_3"), 0u);
  EXPECT_EQ(want.count("activation_94"), 0u);
  EXPECT_TRUE(rep.ok());
}

/// A branched net: c0's output is read by three branches (a; b1 -> b2; the pool p), whose
/// outputs a, b2, p are concatenated and read by c3; then a pool q and an fc f. vDNN layers
/// (the concat is free): 0 c0 1 a 2 b1 3 b2 4 p 5 c3 6 q 7 f; X_i = the output of layer i - 1:
/// X_0 "" (image), X_1 c0, X_2 a, X_3 b1, X_4 b2, X_5 p, X_6 c3, X_7 q (f's input, resident).
std::string branched_net() {
  const std::string path = ::testing::TempDir() + "branched_net.json";
  std::ofstream f(path);
  f << R"({"name": "branched", "input": [3, 16, 16], "layers": [
    {"name": "c0", "type": "conv", "filters": 8, "kernel": 3, "pad": 1, "relu": true},
    {"name": "a", "type": "conv", "filters": 4, "kernel": 1, "relu": true, "inputs": ["c0"]},
    {"name": "b1", "type": "conv", "filters": 4, "kernel": 3, "pad": 1, "relu": true, "inputs": ["c0"]},
    {"name": "b2", "type": "conv", "filters": 4, "kernel": 3, "pad": 1, "relu": true},
    {"name": "p", "type": "pool", "kernel": 3, "stride": 1, "pad": 1, "inputs": ["c0"]},
    {"name": "cat", "type": "concat", "inputs": ["a", "b2", "p"]},
    {"name": "c3", "type": "conv", "filters": 8, "kernel": 1, "relu": true},
    {"name": "q", "type": "pool", "kernel": 2},
    {"name": "f", "type": "fc", "units": 10}]})";
  return path;
}

/// Tensor key -> {layer during whose forward pass it was offloaded, layer during whose
/// backward pass it came back (+ " on demand" if fetched so)}; both steps equal.
std::map<std::string, std::pair<std::string, std::string>> tensor_timing(const cdma::platform::run_report& rep) {
  std::map<std::string, std::pair<std::string, std::string>> m;
  const auto& layers = rep.net.layers;
  for (const auto* s : {&rep.vdnn, &rep.cdma}) {
    std::map<std::string, std::pair<std::string, std::string>> one;
    std::map<std::size_t, cdma::ps_t> offload_end;  // layer f -> end of the last tensor it offloaded so far
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const auto& r = s->result.layers[i];
      if (!r.offloaded) {
        EXPECT_EQ(r.offload_during, wl::layer_result::no_layer) << layers[i].name;
        EXPECT_EQ(r.prefetch_during, wl::layer_result::no_layer) << layers[i].name;
        continue;
      }
      auto name = [&](std::size_t k) { return k < layers.size() ? layers[k].name : std::string("(never)"); };
      // The tensors one layer offloads go one after the other in index order: the first from
      // the layer's start, each later one from the end of the one before it.
      const auto prev = offload_end.find(r.offload_during);
      EXPECT_EQ(r.offload_start, prev == offload_end.end() ? s->result.layers[r.offload_during].forward_start
                                                           : prev->second)
          << layers[i].offload_key;
      offload_end[r.offload_during] = r.offload_start + r.offload;
      one[layers[i].offload_key] = {name(r.offload_during), name(r.prefetch_during) + (r.on_demand ? " on demand" : "")};
    }
    if (s == &rep.vdnn) m = one;
    else EXPECT_EQ(one, m) << "the cDMA step moved tensors in other layers than the vDNN step";
  }
  return m;
}

TEST_F(VdnnOnZoo, BranchedTensorFirstAndLastConsumers) {
  // Worked by hand from the layer file: c0's output (X_1) is read by a (1), b1 (2) and p (4);
  // the concat's parts a, b2, p (X_2, X_4, X_5) by c3 (5); every other tensor by one layer.
  const auto net = wl::load_layer_file(branched_net(), 1);
  ASSERT_EQ(net.layers.size(), 8u);
  const auto u = wl::tensor_use_layers(net);
  const std::vector<std::pair<std::size_t, std::size_t>> want = {{0, 0}, {1, 4}, {5, 5}, {3, 3},
                                                                  {5, 5}, {5, 5}, {6, 6}, {7, 7}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(u[i].first, want[i].first) << "X_" << i;
    EXPECT_EQ(u[i].last, want[i].second) << "X_" << i;
  }
  // c3 offloads three tensors in one forward pass and needs the same three back in its
  // backward pass: three GPU slots, as on a chain.
  EXPECT_EQ(wl::vdnn_runtime::gpu_slots(net), 3u);
}

// First and last consumers on the zoo's branched networks, from the independent walk
// /usr/bin/python3 tests/unit/vdnn_tensors.py FILE --uses (KEY:FIRST:LAST per tensor with a
// consumer): InceptionV3 has 45 tensors whose first and last consumers differ, GoogLeNet 27.
TEST(TensorUses, BranchedZooFromTheIndependentWalk) {
  struct use { const char* key; const char* first; const char* last; };
  auto check = [](const wl::network& net, std::size_t differing, const std::vector<use>& want) {
    const auto u = wl::tensor_use_layers(net);
    std::size_t n = 0;
    for (std::size_t i = 0; i < net.layers.size(); ++i) n += u[i].first != u[i].last;
    EXPECT_EQ(n, differing) << net.name;
    for (const use& w : want) {
      bool found = false;
      for (std::size_t i = 0; i < net.layers.size(); ++i)
        if (net.layers[i].offload_key == w.key) {
          found = true;
          EXPECT_EQ(net.layers[u[i].first].name, w.first) << w.key;
          EXPECT_EQ(net.layers[u[i].last].name, w.last) << w.key;
        }
      EXPECT_TRUE(found) << w.key;
    }
  };
  check(wl::inception_v3(1), 45,
        {{"", "conv2d_1", "conv2d_1"},
         {"max_pooling2d_2", "conv2d_6", "average_pooling2d_1"},
         {"activation_6", "conv2d_13", "average_pooling2d_2"},
         {"average_pooling2d_1", "conv2d_12", "conv2d_12"},
         {"activation_77", "conv2d_86", "average_pooling2d_9"},
         {"activation_85", "conv2d_86", "average_pooling2d_9"}});
  check(wl::make_network("googlenet", 1), 27,
        {{"pool2/3x3_s2", "inception_3a/1x1", "inception_3a/pool"},
         {"inception_3a/1x1", "inception_3b/1x1", "inception_3b/pool"},
         {"inception_3a/5x5", "inception_3b/1x1", "inception_3b/pool"},
         {"inception_3a/3x3_reduce", "inception_3a/3x3", "inception_3a/3x3"}});
}

TEST_F(VdnnOnZoo, BranchedOffloadAtFirstConsumerBackBeforeLastConsumerPolicyAll) {
  // Policy all: X_0..X_6. Forward: each tensor leaves during its first consumer: "" in c0, c0
  // in a (b1 and p read it later), b1 in b2, a + b2 + p together in c3, c3 in q; b1 and p
  // offload nothing. Backward (needed by: "" c0, c0 p, b1 b2, a/b2/p c3, c3 q): f looks back to
  // q and prefetches c3; q prefetches c3's inputs a, b2, p; c3 looks back to p, the last
  // consumer of c0, and prefetches c0; p reaches b2 and prefetches b1; b2 and b1 find nothing
  // before a convolution (b1, a) stops them; a prefetches "" (c0). Nothing on demand.
  const auto rep = cdma::platform::run(small(branched_net(), "all"));
  ASSERT_EQ(rep.net.layers.size(), 8u);
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(tensor_timing(rep), (std::map<std::string, P>{{"", {"c0", "a"}},
                                                          {"c0", {"a", "c3"}},
                                                          {"a", {"c3", "q"}},
                                                          {"b1", {"b2", "p"}},
                                                          {"b2", {"c3", "q"}},
                                                          {"p", {"c3", "q"}},
                                                          {"c3", {"q", "f"}}}));
  // The JSON names the same layers; the resident last layer f (X_7 = q's output) has null
  // transfer layers and a null zero fraction (its zeros are not counted).
  const auto j = cdma::platform::to_json(rep);
  ASSERT_EQ(j["layers"].size(), 8u);
  std::map<std::string, P> from_json;
  for (const auto& l : j["layers"]) {
    if (!l["offloaded"].get<bool>()) {
      EXPECT_EQ(l["name"], "f");
      EXPECT_TRUE(l["offload_during"].is_null());
      EXPECT_TRUE(l["prefetch_during"].is_null());
      EXPECT_TRUE(l["zero_fraction"].is_null());
      continue;
    }
    EXPECT_TRUE(l["zero_fraction"].is_number()) << l["name"];
    from_json[l["offload_key"].get<std::string>()] = {l["offload_during"].get<std::string>(),
                                                      l["prefetch_during"].get<std::string>()};
  }
  EXPECT_EQ(from_json, tensor_timing(rep));
  // Each tensor once: the bytes verified are those of X_0..X_6.
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i + 1 < rep.net.layers.size(); ++i) bytes += rep.net.layers[i].offload.bytes();
  EXPECT_EQ(rep.vdnn.result.verified_bytes, bytes);
  EXPECT_EQ(rep.cdma.result.verified_bytes, bytes);
  EXPECT_TRUE(rep.ok());
  // The trace draws c0's output (X_1, read by a: "a offload") during a's forward pass and
  // a's output (X_2, not read by b1: named after its producer) during c3's forward pass; its
  // prefetch during q's backward pass.
  const auto t = cdma::platform::chrome_trace(rep);
  std::map<std::string, double> ts;
  std::string during;
  for (const auto& e : t["traceEvents"]) {
    if (e.value("pid", 0) != 2 || e.value("ph", "") != "X") continue;  // pid 2: the vDNN step
    const std::string n = e.value("name", "");
    ts[n] = e["ts"].get<double>();
    if (n == "a output prefetch") during = e["args"]["during"].get<std::string>();
  }
  ASSERT_EQ(ts.count("a offload"), 1u);
  ASSERT_EQ(ts.count("a output offload"), 1u);
  ASSERT_EQ(ts.count("a output prefetch"), 1u);
  EXPECT_EQ(ts["a offload"], ts["a fwd"]);
  EXPECT_EQ(ts["a output offload"], ts["c3 fwd"]);
  EXPECT_EQ(ts["a output prefetch"], ts["q bwd"]);
  EXPECT_EQ(during, "q bwd");
}

/// The new-user trial s19's network: two 32-channel branches of pool1 (conv2a 1x1, conv2b 3x3)
/// concatenated into conv3, a residual add; 11 vDNN layers (the concat has none): 0 conv1,
/// 1 pool1, 2 conv2a, 3 conv2b, 4 conv3, 5 conv4, 6 res, 7 pool2, 8 conv5, 9 gap, 10 fc. At
/// batch 8 X_3 (conv2a's output) and X_4 (conv2b's) are 8x32x32x32 x 4 B = 1,048,576 B each,
/// both offloaded during conv3's forward pass; X_5 (conv3's output) and X_6 (conv4's),
/// 2,097,152 B each, both prefetched during pool2's backward pass, and X_7 (res's output, the
/// same size) alone during conv5's.
std::string two_branch_net() {
  const std::string path = ::testing::TempDir() + "two_branch_net.json";
  cdma::test::write_trial_network(path);
  return path;
}

TEST_F(VdnnOnZoo, TensorsMovedInOneLayerEachGetTheirOwnTransferTime) {
  // New-user trial s19 F1: the second of two equal tensors offloaded in one layer took twice
  // the first's time (164 vs 82 us), because its time ran from the layer's start.
  auto c = small(two_branch_net(), "all");
  c.batch = 8;
  const auto rep = cdma::platform::run(c);
  ASSERT_EQ(rep.net.layers.size(), 11u);
  const auto& L = rep.vdnn.result.layers;
  ASSERT_EQ(rep.net.layers[3].offload_key, "conv2a");
  ASSERT_EQ(rep.net.layers[4].offload_key, "conv2b");
  ASSERT_EQ(rep.net.layers[3].offload.bytes(), 1048576u);
  ASSERT_EQ(rep.net.layers[4].offload.bytes(), 1048576u);
  EXPECT_EQ(L[3].offload_during, 4u);
  EXPECT_EQ(L[4].offload_during, 4u);
  // Plain copies at the measured-host link rate, by hand: 12 posted writes of 256 B per 238 ns
  // credit loop (docs/pcie.md) = 12.907 GB/s: 1,048,576 B in 81.24 us; each one within 2 %.
  const double link_s = 1048576.0 / (12 * 256 / 238e-9);
  for (std::size_t i : {3u, 4u}) {
    EXPECT_NEAR(cdma::ps_to_s(L[i].offload), link_s, 0.02 * link_s) << rep.net.layers[i].offload_key;
    EXPECT_NEAR(cdma::ps_to_s(rep.cdma.result.layers[i].offload), cdma::ps_to_s(rep.cdma.result.layers[3].offload),
                0.01 * cdma::ps_to_s(rep.cdma.result.layers[3].offload));
  }
  // One after the other: conv2b's begins where conv2a's ends, conv2a's at conv3's start; their
  // sum is the layer's transfer time (up to the last completion).
  EXPECT_EQ(L[3].offload_start, L[4].forward_start);
  EXPECT_EQ(L[4].offload_start, L[3].offload_start + L[3].offload);
  EXPECT_GE(L[4].forward_start + L[4].forward + L[4].forward_stall, L[4].offload_start + L[4].offload);
  // Prefetch: X_5 and X_6 (2 MiB each) both during pool2's backward pass, X_7 (2 MiB) alone
  // during conv5's: the second of the pair takes the time of the lone one (within 0.5 %), not
  // twice it.
  for (std::size_t i : {5u, 6u, 7u}) ASSERT_EQ(rep.net.layers[i].offload.bytes(), 2097152u) << i;
  EXPECT_EQ(L[5].prefetch_during, 7u);
  EXPECT_EQ(L[6].prefetch_during, 7u);
  EXPECT_EQ(L[7].prefetch_during, 8u);
  const double alone = cdma::ps_to_s(L[7].prefetch);
  EXPECT_NEAR(cdma::ps_to_s(L[5].prefetch), alone, 0.005 * alone);
  EXPECT_NEAR(cdma::ps_to_s(L[6].prefetch), alone, 0.005 * alone);
  EXPECT_EQ(L[6].prefetch_start, L[5].prefetch_start + L[5].prefetch);
  // The JSON reports the same times.
  const auto j = cdma::platform::to_json(rep);
  EXPECT_DOUBLE_EQ(j["layers"][4]["vdnn"]["offload_s"].get<double>(), cdma::ps_to_s(L[4].offload));
  // In the trace the spans of one track follow each other: none starts before the one before
  // it on its track (offload tid 2, prefetch tid 3) has ended.
  const auto t = cdma::platform::chrome_trace(rep);
  for (int pid : {2, 3})
    for (int tid : {2, 3}) {
      std::vector<std::pair<double, double>> spans;
      for (const auto& e : t["traceEvents"])
        if (e.value("pid", 0) == pid && e.value("tid", 0) == tid && e.value("ph", "") == "X")
          spans.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
      std::sort(spans.begin(), spans.end());
      ASSERT_EQ(spans.size(), 10u);
      for (std::size_t k = 1; k < spans.size(); ++k)
        EXPECT_GE(spans[k].first, spans[k - 1].second - 1e-6) << "pid " << pid << " tid " << tid << " span " << k;
    }
  // The step times do not depend on how the per-tensor times are counted: the vDNN step is the
  // oracle plus every layer's stall.
  cdma::ps_t stalls = 0;
  for (const auto& l : L) stalls += l.forward_stall + l.backward_stall;
  EXPECT_EQ(rep.vdnn.result.step, rep.oracle.result.step + stalls);
  EXPECT_TRUE(rep.ok());
}

TEST_F(VdnnOnZoo, BranchedOffloadAtFirstConsumerBackBeforeLastConsumerPolicyConv) {
  // Policy conv: the conv inputs "", c0, a, b1, b2, p (c3's output feeds only the pool q).
  // Forward as under all, without c3 in q. Backward: f looks past q (its input c3 not
  // offloaded) to c3 and prefetches a, b2, p; q reaches c3 (back, a convolution: stop) and
  // prefetches nothing; the rest as under all.
  const auto rep = cdma::platform::run(small(branched_net(), "conv"));
  ASSERT_EQ(rep.net.layers.size(), 8u);
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(tensor_timing(rep), (std::map<std::string, P>{{"", {"c0", "a"}},
                                                          {"c0", {"a", "c3"}},
                                                          {"a", {"c3", "f"}},
                                                          {"b1", {"b2", "p"}},
                                                          {"b2", {"c3", "f"}},
                                                          {"p", {"c3", "f"}}}));
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i + 2 < rep.net.layers.size(); ++i) bytes += rep.net.layers[i].offload.bytes();
  EXPECT_EQ(rep.vdnn.result.verified_bytes, bytes);
  EXPECT_TRUE(rep.ok());
}

TEST_F(VdnnOnZoo, OneLayerMovesMoreTensorsThanTheDescriptorRingHolds) {
  // 20 1x1 convs read the image; their outputs, concatenated, are read by conv "m": m offloads
  // 20 tensors in its forward pass and needs them back in its backward pass, more than the
  // 16-entry ring holds (15 outstanding): 20 GPU slots; every tensor moves once, verified.
  const std::string path = ::testing::TempDir() + "wide_net.json";
  {
    std::ofstream f(path);
    f << R"({"name": "wide", "input": [3, 8, 8], "layers": [)";
    std::string parts;
    for (int k = 0; k < 20; ++k) {
      f << R"({"name": "b)" << k << R"(", "type": "conv", "filters": 2, "kernel": 1, "inputs": ["input"]},)";
      parts += std::string(k ? ", " : "") + "\"b" + std::to_string(k) + "\"";
    }
    f << R"({"name": "cat", "type": "concat", "inputs": [)" << parts << R"(]},
      {"name": "m", "type": "conv", "filters": 4, "kernel": 1},
      {"name": "f", "type": "fc", "units": 10}]})";
  }
  const auto rep = cdma::platform::run(small(path, "all"));
  ASSERT_EQ(rep.net.layers.size(), 22u);
  EXPECT_EQ(wl::vdnn_runtime::gpu_slots(rep.net), 20u);
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i + 1 < rep.net.layers.size(); ++i) {
    bytes += rep.net.layers[i].offload.bytes();
    if (i >= 1) {  // b0..b19's outputs: offloaded during m (20), prefetched during f (21)
      EXPECT_EQ(rep.vdnn.result.layers[i].offload_during, 20u) << i;
      EXPECT_EQ(rep.vdnn.result.layers[i].prefetch_during, 21u) << i;
    }
  }
  // The image: offloaded during b0 (its first consumer), needed by b19 (its last); m's backward
  // pass looks back to b19 and prefetches it.
  EXPECT_EQ(rep.vdnn.result.layers[0].offload_during, 0u);
  EXPECT_EQ(rep.vdnn.result.layers[0].prefetch_during, 20u);
  // The 20 equal tensors (2x8x8 x 4 B each) each get their own transfer time, one after the
  // other, although the driver waited for ring room after the 15th (completions it saw while
  // waiting count from then). Until session 19 the times grew with the position in the queue,
  // 3.0 to 12.1 us offload (vDNN); now 0.57 to 0.78 us: 512-B descriptors, where the driver's
  // register reads (10 ns each) that observe a completion are a visible share. Each within 40 %
  // of the median.
  for (const auto* s : {&rep.vdnn.result, &rep.cdma.result}) {
    const auto& L = s->layers;
    for (const bool off : {true, false}) {
      std::vector<double> t;
      for (std::size_t i = 1; i <= 20; ++i) t.push_back(cdma::ps_to_s(off ? L[i].offload : L[i].prefetch));
      std::vector<double> sorted = t;
      std::sort(sorted.begin(), sorted.end());
      const double median = (sorted[9] + sorted[10]) / 2;
      for (std::size_t k = 0; k < t.size(); ++k)
        EXPECT_NEAR(t[k], median, 0.4 * median) << s->config.label << (off ? " offload " : " prefetch ") << k + 1;
    }
    for (std::size_t i = 2; i <= 20; ++i) {
      EXPECT_EQ(L[i].offload_start, L[i - 1].offload_start + L[i - 1].offload) << i;
      EXPECT_EQ(L[i].prefetch_start, L[i - 1].prefetch_start + L[i - 1].prefetch) << i;
    }
  }
  EXPECT_EQ(rep.vdnn.result.verified_bytes, bytes);
  EXPECT_EQ(rep.cdma.result.verified_bytes, bytes);
  EXPECT_TRUE(rep.ok());
}

TEST_F(VdnnOnZoo, ChainTensorsMoveDuringTheirOwnLayer) {
  // On a chain X_i's only consumer is layer i: offloaded during layer i's forward pass.
  const auto rep = cdma::platform::run(small("alexnet", "all"));
  for (std::size_t i = 0; i + 1 < rep.net.layers.size(); ++i) {
    EXPECT_EQ(rep.vdnn.result.layers[i].offload_during, i) << rep.net.layers[i].name;
    EXPECT_EQ(rep.vdnn.result.layers[i].offload_start, rep.vdnn.result.layers[i].forward_start);
    EXPECT_FALSE(rep.vdnn.result.layers[i].on_demand);
  }
  EXPECT_EQ(wl::vdnn_runtime::gpu_slots(rep.net), 3u);
}

// Policy none: no transfers, so the vDNN and cDMA steps take the oracle's time.
TEST_F(VdnnOnZoo, PolicyNoneEqualsTheOracle) {
  const auto rep = cdma::platform::run(small("googlenet", "none"));
  EXPECT_EQ(rep.vdnn.result.step, rep.oracle.result.step);
  EXPECT_EQ(rep.cdma.result.step, rep.oracle.result.step);
  for (const auto* r : {&rep.vdnn.result, &rep.cdma.result}) {
    EXPECT_EQ(r->verified_bytes, 0u);
    for (const auto& l : r->layers) EXPECT_FALSE(l.offloaded);
  }
  EXPECT_TRUE(rep.ok());
}

}  // namespace
