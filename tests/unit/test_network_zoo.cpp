// Network zoo: shipped layer files and Keras graphs, checked against values computed
// independently with tests/unit/zoo_shapes.py (a Python reading of the layer-file format) and
// the issue's reference numbers (ReLU output elements at batch 1).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "workloads/network/network.h"

namespace wl = cdma::workloads;

namespace {

struct zoo_case {
  const char* name;
  int relu_tensors;
  std::uint64_t relu_elements;  // batch 1
  std::size_t layers;           // vDNN layers (conv, pool, fc, add)
};

// /usr/bin/python3 tests/unit/zoo_shapes.py (relu_tensors, relu_elements, layers); issue 8:
// AlexNet 7 ReLU outputs 0.49 M, VGG-16 13.6 M, GoogLeNet 3.23 M, SqueezeNet 4.35 M,
// ResNet-50 9.61 M.
const zoo_case zoo[] = {
    {"alexnet", 7, 493184, 11},     {"overfeat", 7, 824320, 11},  {"nin", 12, 1704096, 16},
    {"vgg16", 15, 13555712, 21},    {"squeezenet", 26, 4346248, 30}, {"googlenet", 57, 3226160, 72},
    {"resnet50", 49, 9608704, 72},  {"fmnist_cnn", 6, 138496, 10},
};

TEST(NetworkZoo, ReluOutputsAtBatch1MatchIndependentCount) {
  for (const auto& z : zoo) {
    const wl::network net = wl::make_network(z.name, 1);
    int relus = 0;
    for (const auto& l : net.layers) relus += l.relu;
    EXPECT_EQ(relus, z.relu_tensors) << z.name;
    EXPECT_EQ(wl::relu_output_elements(net), z.relu_elements) << z.name;
    EXPECT_EQ(net.layers.size(), z.layers) << z.name;
  }
}

TEST(NetworkZoo, IssueReferenceNumbers) {
  // Rounded to the issue's precision (millions of elements).
  auto m = [](const char* n) { return wl::relu_output_elements(wl::make_network(n, 1)) / 1e6; };
  EXPECT_NEAR(m("alexnet"), 0.49, 0.005);
  EXPECT_NEAR(m("vgg16"), 13.6, 0.05);
  EXPECT_NEAR(m("inception_v3"), 8.97, 0.005);
  EXPECT_NEAR(m("mobilenet_v2"), 6.11, 0.005);
  EXPECT_NEAR(m("resnet50"), 9.61, 0.005);
  EXPECT_NEAR(m("googlenet"), 3.23, 0.005);
  EXPECT_NEAR(m("squeezenet"), 4.35, 0.005);
}

TEST(NetworkZoo, KerasGraphsExact) {
  // Shared data README: InceptionV3 94 ReLU tensors, 8,967,488 values; MobileNetV2 35 ReLU6
  // tensors, 6,105,792 values (the conv blocks' outputs, what the .npz files hold). Both
  // graphs end in Dense(256, relu) -> Dense(128, relu) -> Dense(5, softmax): two more ReLU
  // outputs, 256 + 128 elements.
  const wl::network inc = wl::make_network("inception_v3", 1);
  int relus = 0;
  for (const auto& l : inc.layers) relus += l.relu;
  EXPECT_EQ(relus, 94 + 2);
  EXPECT_EQ(wl::relu_output_elements(inc), 8967488u + 256 + 128);
  const wl::network mob = wl::make_network("mobilenet_v2", 1);
  relus = 0;
  for (const auto& l : mob.layers) relus += l.relu;
  EXPECT_EQ(relus, 35 + 2);
  EXPECT_EQ(wl::relu_output_elements(mob), 6105792u + 256 + 128);
}

// The vDNN view of the two Keras graphs, against /usr/bin/python3 tests/unit/vdnn_tensors.py
// FILE.keras-graph.json (an independent walk of the graph JSON):
//   inception_v3: layers=111 conv=94 pool=14 fc=3 eltwise=0 offload_all_elements=11949163
//                 fwd_flops=11447982405 conv_tensors=100 conv_offload_elements=9464811
//   mobilenet_v2: layers=66 conv=52 pool=1 fc=3 eltwise=10 offload_all_elements=7046688
//                 fwd_flops=599990213 conv_tensors=52 conv_offload_elements=6765920
// offload_all_elements = the image + every layer output but the last (offload_bytes_total()
// / 4); conv_offload_elements = the tensors policy conv moves (conv_input_keys() but the last
// layer's input, which stays resident).
TEST(NetworkZoo, KerasGraphsVdnnView) {
  struct keras_case {
    const char* name;
    std::size_t layers, conv, pool, fc, eltwise;
    std::uint64_t offload_elements;
    double flops;
    std::size_t conv_tensors;
    std::uint64_t conv_offload_elements;
  };
  const keras_case cases[] = {{"inception_v3", 111, 94, 14, 3, 0, 11949163, 11447982405.0, 100, 9464811},
                              {"mobilenet_v2", 66, 52, 1, 3, 10, 7046688, 599990213.0, 52, 6765920}};
  for (const auto& k : cases) {
    const wl::network net = wl::make_network(k.name, 1);
    std::size_t n[4] = {0, 0, 0, 0};
    double flops = 0;
    for (const auto& l : net.layers) {
      ++n[static_cast<int>(l.kind)];
      flops += l.forward_flops;
    }
    EXPECT_EQ(net.layers.size(), k.layers) << k.name;
    EXPECT_EQ(n[static_cast<int>(wl::layer_kind::conv)], k.conv) << k.name;
    EXPECT_EQ(n[static_cast<int>(wl::layer_kind::pool)], k.pool) << k.name;
    EXPECT_EQ(n[static_cast<int>(wl::layer_kind::fc)], k.fc) << k.name;
    EXPECT_EQ(n[static_cast<int>(wl::layer_kind::eltwise)], k.eltwise) << k.name;
    EXPECT_EQ(net.offload_bytes_total(), 4 * k.offload_elements) << k.name;
    EXPECT_DOUBLE_EQ(flops, k.flops) << k.name;
    const std::set<std::string> conv_keys = wl::conv_input_keys(net);
    EXPECT_EQ(conv_keys.size(), k.conv_tensors) << k.name;
    std::uint64_t conv_elements = 0;
    for (std::size_t i = 0; i + 1 < net.layers.size(); ++i)
      if (conv_keys.count(net.layers[i].offload_key)) conv_elements += net.layers[i].offload.elements();
    EXPECT_EQ(conv_elements, k.conv_offload_elements) << k.name;
  }
}

TEST(NetworkZoo, Vgg16ShapesAndBatch256Size) {
  const wl::network net = wl::make_network("vgg16", 256);
  // conv1_1: 256 x 64 x 224 x 224; pool5: 256 x 512 x 7 x 7; fc6 in = 25088.
  EXPECT_EQ(net.layers[0].output, (wl::tensor_shape{256, 64, 224, 224}));
  EXPECT_EQ(net.layers[0].kind, wl::layer_kind::conv);
  EXPECT_EQ(net.layers[17].name, "pool5");
  EXPECT_EQ(net.layers[17].kind, wl::layer_kind::pool);
  EXPECT_EQ(net.layers[17].output, (wl::tensor_shape{256, 512, 7, 7}));
  EXPECT_EQ(net.layers[18].kind, wl::layer_kind::fc);
  // fc6 FLOPs: 256 x (2 x 25088 x 4096 + 4096).
  EXPECT_DOUBLE_EQ(net.layers[18].forward_flops, 256.0 * (2.0 * 25088 * 4096 + 4096));
  // zoo_shapes.py: offload_elements_all = 15,237,608 per image (input + every layer output);
  // policy all offloads every tensor except the last layer's input (fc8 in = 4096).
  // offload_bytes_total() = input + outputs of layers 0..n-2 = 15,237,608 - 1000 (fc8 out):
  // 15.6 GB at batch 256.
  EXPECT_EQ(net.offload_bytes_total(), 256ull * 4 * (15237608ull - 1000));
}

TEST(NetworkZoo, GoogLeNetConcatAndCeilPooling) {
  const wl::network net = wl::make_network("googlenet", 1);
  // pool1/3x3_s2 ceil: ceil((112 - 3) / 2) + 1 = 56; inception_3b/1x1 reads the 256-channel
  // concat of 3a (64 + 128 + 32 + 32).
  for (const auto& l : net.layers) {
    if (l.name == "pool1/3x3_s2") {
      EXPECT_EQ(l.output, (wl::tensor_shape{1, 64, 56, 56}));
    }
    if (l.name == "inception_3b/1x1") {
      EXPECT_EQ(l.input, (wl::tensor_shape{1, 256, 28, 28}));
    }
    if (l.name == "inception_5b/pool_proj") {
      EXPECT_EQ(l.output, (wl::tensor_shape{1, 128, 7, 7}));
    }
  }
}

TEST(NetworkZoo, ResNetAddIsAnEltwiseLayer) {
  const wl::network net = wl::make_network("resnet50", 1);
  int adds = 0;
  for (const auto& l : net.layers)
    if (l.kind == wl::layer_kind::eltwise) {
      ++adds;
      EXPECT_TRUE(l.relu) << l.name;
    }
  EXPECT_EQ(adds, 16);  // 3 + 4 + 6 + 3 bottlenecks
  EXPECT_EQ(wl::to_string(wl::layer_kind::eltwise), "eltwise");
}

std::string write_tmp(const std::string& text) {
  char name[] = "/tmp/cdma_layerfile_XXXXXX.json";
  const int fd = mkstemps(name, 5);
  EXPECT_GE(fd, 0);
  std::ofstream(name) << text;
  ::close(fd);
  return name;
}

void expect_error(const std::string& text, std::initializer_list<const char*> parts) {
  const std::string path = write_tmp(text);
  try {
    wl::make_network(path, 1);
    ADD_FAILURE() << "expected network_error for " << text;
  } catch (const wl::network_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    for (const char* p : parts) EXPECT_NE(m.find(p), std::string::npos) << m << " lacks " << p;
  }
  std::remove(path.c_str());
}

TEST(LayerFile, UserNetworkWithBranches) {
  const std::string path = write_tmp(R"({"name": "tiny", "input": [3, 8, 8], "layers": [
    {"name": "c1", "type": "conv", "filters": 4, "kernel": 3, "pad": 1, "relu": true},
    {"name": "a", "type": "conv", "filters": 2, "kernel": 1, "inputs": ["c1"]},
    {"name": "b", "type": "conv", "filters": 6, "kernel": 3, "pad": "same", "inputs": ["c1"]},
    {"name": "cat", "type": "concat", "inputs": ["a", "b"]},
    {"name": "p", "type": "pool", "op": "avg", "kernel": 2},
    {"name": "r", "type": "relu"},
    {"name": "f", "type": "fc", "units": 10}]})");
  const wl::network net = wl::make_network(path, 2);
  std::remove(path.c_str());
  ASSERT_EQ(net.layers.size(), 5u);  // c1 a b p f
  EXPECT_EQ(net.name, "tiny");
  EXPECT_EQ(net.layers[3].input, (wl::tensor_shape{2, 8, 8, 8}));  // concat 2 + 6 channels
  EXPECT_EQ(net.layers[3].output, (wl::tensor_shape{2, 8, 4, 4}));
  EXPECT_TRUE(net.layers[3].relu);   // the relu entry marks the layer that produced its input
  EXPECT_FALSE(net.layers[2].relu);
  EXPECT_EQ(net.layers[4].input, (wl::tensor_shape{2, 8, 4, 4}));
  // c1 FLOPs: 2 x 9 x 3 x 4 x 64 x 2 + bias 4 x 64 x 2 = 28,160.
  EXPECT_DOUBLE_EQ(net.layers[0].forward_flops, 2.0 * 9 * 3 * 4 * 64 * 2 + 4 * 64 * 2);
  EXPECT_EQ(net.layers[1].offload_key, "c1");
  EXPECT_EQ(net.layers[0].offload, (wl::tensor_shape{2, 3, 8, 8}));
}

TEST(LayerFile, ErrorsNameFileEntryAndForm) {
  expect_error(R"({"input": [3, 8, 8], "layers": [{"name": "x", "type": "conv", "kernel": 3}]})",
               {"layers[0]", "\"x\"", "filters"});
  expect_error(R"({"input": [3, 8, 8], "layers": [{"name": "x", "type": "warp"}]})", {"\"x\"", "unknown type"});
  expect_error(R"({"input": [3, 8, 8], "layers": [{"name": "x", "type": "pool", "kernel": 2, "inputs": ["y"]}]})",
               {"unknown input \"y\""});
  expect_error(R"({"input": [3, 8, 8], "layers": [{"name": "x", "type": "conv", "filters": 2, "kernel": 9}]})",
               {"\"x\"", "does not fit"});
  expect_error(R"({"input": [3, 8, 8], "layers": [{"name": "x", "type": "conv", "filters": 2, "kernel": 1, "padd": 1}]})",
               {"unknown key \"padd\""});
  expect_error(R"({"input": [3, 8], "layers": []})", {"[C, H, W]"});
}

}  // namespace

namespace {

TEST(NetworkZoo, FmnistMatchesManifestTopology) {
  // ../shared/data/activations/fmnist_cnn/manifest.json "topology": every module's output
  // shape at N = 16 (conv/linear entries carry a name; pools are matched in order).
  std::ifstream f(std::string(CDMA_SHARED_DATA_DIR) + "/activations/fmnist_cnn/manifest.json");
  ASSERT_TRUE(f.good());
  const auto m = nlohmann::json::parse(f);
  const wl::network net = wl::make_network("fmnist_cnn", 16);
  std::size_t li = 0;
  for (const auto& e : m.at("topology")) {
    const std::string type = e.at("type").get<std::string>();
    if (type != "Conv2d" && type != "MaxPool2d" && type != "Linear") continue;
    ASSERT_LT(li, net.layers.size());
    const auto s = e.at("output_shape");
    const wl::tensor_shape want{s[0].get<std::int64_t>(), s[1].get<std::int64_t>(),
                                s.size() > 2 ? s[2].get<std::int64_t>() : 1, s.size() > 3 ? s[3].get<std::int64_t>() : 1};
    EXPECT_EQ(net.layers[li].output, want) << net.layers[li].name << " vs manifest " << type;
    ++li;
  }
  EXPECT_EQ(li, net.layers.size());
}

}  // namespace
