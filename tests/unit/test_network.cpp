// Network zoo (workloads/network) and roofline compute model (workloads/compute).
// Expected values are written out with how they were obtained: by hand, or with
// tests/unit/inception_flops.py (Debian's /usr/bin/python3, an independent shape inference over
// the same graph JSON).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "workloads/compute/roofline.h"
#include "workloads/network/network.h"

namespace wl = cdma::workloads;
using cdma::ps_t;

namespace {

const std::string kGraph = CDMA_WORKLOADS_DATA_DIR "/inception_v3/inception_v3.keras-graph.json";
const std::string kManifest = CDMA_WORKLOADS_DATA_DIR "/inception_v3/manifest.json";

const wl::layer& find_layer(const wl::network& net, const std::string& name) {
  for (const auto& l : net.layers)
    if (l.name == name) return l;
  throw std::runtime_error("no layer " + name);
}

// Per-process scratch directory for the hand-written graph files, removed at exit.
struct scratch_dir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("cdma_test_network_" + std::to_string(::getpid()));
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
scratch_dir g_scratch;

// Writes `text` to a fresh file in the temp dir and returns its path.
std::string write_temp(const std::string& stem, const std::string& text) {
  const auto& dir = g_scratch.path;
  std::filesystem::create_directories(dir);
  auto p = dir / (stem + ".json");
  std::ofstream(p) << text;
  return p.string();
}

// Expects `fn` to throw network_error whose message contains every string of `parts`.
template <class Fn>
void expect_network_error(Fn fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected network_error";
  } catch (const wl::network_error& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
  }
}

}  // namespace

TEST(TensorShape, ElementsBytesAndString) {
  wl::tensor_shape s{32, 64, 147, 147};
  EXPECT_EQ(s.elements(), 32ull * 64 * 147 * 147);  // 44,255,232
  EXPECT_EQ(s.elements(), 44255232ull);
  EXPECT_EQ(s.bytes(), 4ull * 44255232);
  EXPECT_EQ(s.str(), "32x64x147x147");
  EXPECT_EQ(wl::tensor_shape{}.elements(), 0u);
  EXPECT_EQ(wl::to_string(wl::layer_kind::conv), "conv");
  EXPECT_EQ(wl::to_string(wl::layer_kind::pool), "pool");
  EXPECT_EQ(wl::to_string(wl::layer_kind::fc), "fc");
}

// The conv layers of the vDNN view, in execution order.
std::vector<const wl::layer*> convs(const wl::network& net) {
  std::vector<const wl::layer*> v;
  for (const auto& l : net.layers)
    if (l.kind == wl::layer_kind::conv) v.push_back(&l);
  return v;
}

TEST(InceptionV3, Has111LayersInExecutionOrder) {
  const wl::network net = wl::inception_v3(1);
  EXPECT_EQ(net.name, "inception_v3");
  EXPECT_EQ(net.batch, 1);
  // /usr/bin/python3 tests/unit/vdnn_tensors.py .../inception_v3.keras-graph.json --order:
  // layers=111 conv=94 pool=14 fc=3; the non-conv layers sit after these conv layers.
  ASSERT_EQ(net.layers.size(), 111u);
  // Conv blocks: execution order = activation_1 ... activation_94 (data README); conv2d_k
  // feeds batch_normalization_k feeds activation_k in this graph. (The layers array of the
  // JSON lists conv2d_9 before conv2d_6, so the file order is not the execution order.)
  const auto c = convs(net);
  ASSERT_EQ(c.size(), 94u);
  for (std::size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c[i]->output_key, "activation_" + std::to_string(i + 1));
    EXPECT_EQ(c[i]->name, "conv2d_" + std::to_string(i + 1));
  }
  const std::pair<const char*, const char*> after[] = {
      {"max_pooling2d_1", "conv2d_3"},      {"max_pooling2d_2", "conv2d_5"},      {"average_pooling2d_1", "conv2d_11"},
      {"average_pooling2d_2", "conv2d_18"}, {"average_pooling2d_3", "conv2d_25"}, {"max_pooling2d_3", "conv2d_30"},
      {"average_pooling2d_4", "conv2d_39"}, {"average_pooling2d_5", "conv2d_49"}, {"average_pooling2d_6", "conv2d_59"},
      {"average_pooling2d_7", "conv2d_69"}, {"max_pooling2d_4", "conv2d_76"},     {"average_pooling2d_8", "conv2d_84"},
      {"average_pooling2d_9", "conv2d_93"}, {"average_pooling2d_10", "conv2d_94"}, {"dense_1", "average_pooling2d_10"},
      {"dense_2", "dense_1"},               {"dense_3", "dense_2"}};
  for (const auto& [name, prev] : after) {
    std::size_t i = 0;
    while (i < net.layers.size() && net.layers[i].name != name) ++i;
    ASSERT_LT(i, net.layers.size()) << name;
    ASSERT_GT(i, 0u);
    EXPECT_EQ(net.layers[i - 1].name, prev) << name;
    EXPECT_EQ(net.layers[i].output_key, name);
    EXPECT_EQ(net.layers[i].kind, std::string(name).rfind("dense", 0) == 0 ? wl::layer_kind::fc : wl::layer_kind::pool);
  }
}

// The new layers by hand (Keras rules; docs/workloads.md FLOPs and bytes).
TEST(InceptionV3, PoolAndDenseLayersByHand) {
  const wl::network net = wl::inception_v3(1);
  // max_pooling2d_1: 3x3 s2 valid on activation_3 (64x147x147): floor((147 - 3) / 2) + 1 = 73;
  // 9 FLOPs per output: 9 * 64 * 73 * 73 = 3,069,504; bytes 4 * (64*147*147 + 64*73*73).
  const auto& m1 = find_layer(net, "max_pooling2d_1");
  EXPECT_EQ(m1.input_key, "activation_3");
  EXPECT_EQ(m1.output, (wl::tensor_shape{1, 64, 73, 73}));
  EXPECT_TRUE(m1.pool.max);
  EXPECT_TRUE(m1.pool.derivable);
  EXPECT_DOUBLE_EQ(m1.forward_flops, 3069504.0);
  EXPECT_EQ(m1.forward_bytes, 4ull * (64 * 147 * 147 + 64 * 73 * 73));
  EXPECT_EQ(m1.weight_bytes, 0u);
  // average_pooling2d_1: 3x3 s1 'same' on max_pooling2d_2 (192x35x35): TensorFlow pads
  // (35 - 1) + 3 - 35 = 2 in total, 1 on top / left; the average excludes padding.
  const auto& a1 = find_layer(net, "average_pooling2d_1");
  EXPECT_EQ(a1.input_key, "max_pooling2d_2");
  EXPECT_EQ(a1.output, (wl::tensor_shape{1, 192, 35, 35}));
  EXPECT_FALSE(a1.pool.max);
  EXPECT_EQ(a1.pool.ph, 1);
  EXPECT_EQ(a1.pool.pw, 1);
  EXPECT_TRUE(a1.pool.exclude_padding);
  EXPECT_TRUE(a1.pool.derivable);
  // average_pooling2d_2 reads mixed0 = concat(activation_6, _8, _11, _12): 64 + 64 + 96 + 32.
  const auto& a2 = find_layer(net, "average_pooling2d_2");
  EXPECT_EQ(a2.input_key, "");
  EXPECT_EQ(a2.input_keys, (std::vector<std::string>{"activation_6", "activation_8", "activation_11", "activation_12"}));
  EXPECT_EQ(a2.input, (wl::tensor_shape{1, 256, 35, 35}));
  // average_pooling2d_10: 8x8 s8 valid on mixed10 (2048x8x8) -> 2048x1x1, 64 FLOPs per output.
  const auto& a10 = find_layer(net, "average_pooling2d_10");
  EXPECT_EQ(a10.output, (wl::tensor_shape{1, 2048, 1, 1}));
  EXPECT_DOUBLE_EQ(a10.forward_flops, 64.0 * 2048);
  // dense_1: Flatten (2048) -> 256 units, ReLU, bias: 2 * 2048 * 256 + 256 = 1,048,832 FLOPs,
  // 2048 * 256 + 256 = 524,544 parameters.
  const auto& d1 = find_layer(net, "dense_1");
  EXPECT_EQ(d1.kind, wl::layer_kind::fc);
  EXPECT_TRUE(d1.relu);
  EXPECT_EQ(d1.input_key, "average_pooling2d_10");
  EXPECT_EQ(d1.output, (wl::tensor_shape{1, 256, 1, 1}));
  EXPECT_DOUBLE_EQ(d1.forward_flops, 1048832.0);
  EXPECT_EQ(d1.weight_bytes, 4ull * 524544);
  EXPECT_EQ(d1.forward_bytes, 4ull * (2048 + 256 + 524544));
  // dense_2 reads dense_1 through dropout_2; dense_3 (softmax) is not a ReLU output.
  EXPECT_EQ(find_layer(net, "dense_2").input_key, "dense_1");
  EXPECT_TRUE(find_layer(net, "dense_2").relu);
  EXPECT_FALSE(find_layer(net, "dense_3").relu);
}

TEST(InceptionV3, OutputShapesMatchManifest) {
  std::ifstream in(kManifest);
  ASSERT_TRUE(in) << kManifest;
  const auto manifest = nlohmann::json::parse(in);
  const auto& entries = manifest.at("files").at(0).at("layers");
  const wl::network net = wl::inception_v3(1);
  const auto c = convs(net);
  ASSERT_EQ(entries.size(), c.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const auto& l = *c[i];
    EXPECT_EQ(e.at("index").get<std::size_t>(), i);
    EXPECT_EQ(e.at("key").get<std::string>(), l.output_key);
    const auto shape = e.at("shape").get<std::vector<std::int64_t>>();
    ASSERT_EQ(shape.size(), 4u);
    EXPECT_EQ((wl::tensor_shape{shape[0], shape[1], shape[2], shape[3]}), l.output)
        << l.output_key << " manifest vs model " << l.output.str();
    EXPECT_EQ(e.at("elements").get<std::uint64_t>(), l.output.elements()) << l.output_key;
  }
}

TEST(InceptionV3, TotalReluOutputElements) {
  const wl::network net = wl::inception_v3(1);
  std::uint64_t total = 0;
  for (const auto* l : convs(net)) total += l->output.elements();
  // Data README: "all 94 post-ReLU tensors, 8,967,488 values" (the conv blocks' outputs).
  EXPECT_EQ(total, 8967488ull);
  // All ReLU outputs also count the Dense ReLUs dense_1 (256) and dense_2 (128).
  EXPECT_EQ(wl::relu_output_elements(net), 8967488ull + 256 + 128);
}

TEST(InceptionV3, ConvFlopsByHand) {
  const wl::network net = wl::inception_v3(1);
  // conv2d_1: 3x3, 3 -> 32, stride 2 valid on 299x299: floor((299 - 3) / 2) + 1 = 149.
  const auto& c1 = find_layer(net, "conv2d_1");
  EXPECT_EQ(c1.input, (wl::tensor_shape{1, 3, 299, 299}));
  EXPECT_EQ(c1.output, (wl::tensor_shape{1, 32, 149, 149}));
  EXPECT_DOUBLE_EQ(c1.forward_flops, 2.0 * 3 * 3 * 3 * 32 * 149 * 149);  // 38,363,328
  EXPECT_EQ(c1.weight_bytes, 4ull * 3 * 3 * 3 * 32);                     // 3,456 (no bias)
  // forward bytes = 4 * (3*299*299 + 32*149*149) + 3456 = 1,072,812 + 2,841,728 + 3,456
  EXPECT_EQ(c1.forward_bytes, 3917996ull);

  // conv2d_4: 1x1, its input is max_pooling2d_1 (3x3 s2 valid on 147x147 -> 73x73, 64 ch).
  const auto& c4 = find_layer(net, "conv2d_4");
  EXPECT_EQ(c4.input, (wl::tensor_shape{1, 64, 73, 73}));
  EXPECT_EQ(c4.output, (wl::tensor_shape{1, 80, 73, 73}));
  EXPECT_DOUBLE_EQ(c4.forward_flops, 2.0 * 64 * 80 * 73 * 73);  // 54,568,960

  // conv2d_5: 3x3, 80 -> 192, stride 1 valid on 73x73 -> 71x71.
  const auto& c5 = find_layer(net, "conv2d_5");
  EXPECT_EQ(c5.output, (wl::tensor_shape{1, 192, 71, 71}));
  EXPECT_DOUBLE_EQ(c5.forward_flops, 2.0 * 3 * 3 * 80 * 192 * 71 * 71);  // 1,393,735,680

  // conv2d_12: 1x1 192 -> 32 after average_pooling2d_1 (3x3 s1 same on the 35x35x192
  // max_pooling2d_2 output): the pool branch of mixed0.
  const auto& c12 = find_layer(net, "conv2d_12");
  EXPECT_EQ(c12.input, (wl::tensor_shape{1, 192, 35, 35}));
  EXPECT_DOUBLE_EQ(c12.forward_flops, 2.0 * 192 * 32 * 35 * 35);  // 15,052,800

  // conv2d_13 reads mixed0 = concat(64, 64, 96, 32) = 256 channels at 35x35.
  EXPECT_EQ(find_layer(net, "conv2d_13").input, (wl::tensor_shape{1, 256, 35, 35}));
}

TEST(InceptionV3, TotalsMatchIndependentScript) {
  const wl::network net = wl::inception_v3(1);
  double flops = 0;
  std::uint64_t wbytes = 0, fbytes = 0;
  for (const auto* l : convs(net)) {
    flops += l->forward_flops;
    wbytes += l->weight_bytes;
    fbytes += l->forward_bytes;
  }
  // /usr/bin/python3 tests/unit/inception_flops.py:
  //   total_forward_conv_flops_batch1 11422336192   (~5.71 G multiply-adds, the usual
  //                                                  "5.7 GMACs" quoted for InceptionV3)
  //   total_conv_weight_bytes 87004544               (21,751,136 conv parameters)
  //   total_conv_forward_bytes_batch1 179445164
  EXPECT_DOUBLE_EQ(flops, 11422336192.0);
  EXPECT_EQ(wbytes, 87004544ull);
  EXPECT_EQ(fbytes, 179445164ull);
  // Every vDNN layer (convs, 14 pools, 3 Dense), /usr/bin/python3 tests/unit/vdnn_tensors.py
  // workloads/data/inception_v3/inception_v3.keras-graph.json:
  //   fwd_flops=11447982405 fwd_bytes=212777428 weight_bytes=89236884
  double all_flops = 0;
  std::uint64_t all_w = 0, all_f = 0;
  for (const auto& l : net.layers) {
    all_flops += l.forward_flops;
    all_w += l.weight_bytes;
    all_f += l.forward_bytes;
  }
  EXPECT_DOUBLE_EQ(all_flops, 11447982405.0);
  EXPECT_EQ(all_w, 89236884ull);
  EXPECT_EQ(all_f, 212777428ull);
}

TEST(InceptionV3, BatchScalesShapesAndFlopsLinearly) {
  const wl::network n1 = wl::inception_v3(1);
  const wl::network n32 = wl::inception_v3(32);
  EXPECT_EQ(n32.batch, 32);
  ASSERT_EQ(n1.layers.size(), n32.layers.size());
  for (std::size_t i = 0; i < n1.layers.size(); ++i) {
    const auto& a = n1.layers[i];
    const auto& b = n32.layers[i];
    EXPECT_EQ(b.output.n, 32);
    EXPECT_EQ(b.input.n, 32);
    EXPECT_EQ(b.offload.n, 32);
    EXPECT_EQ(b.output.c, a.output.c);
    EXPECT_EQ(b.output.h, a.output.h);
    EXPECT_EQ(b.output.w, a.output.w);
    EXPECT_EQ(b.output.elements(), 32 * a.output.elements());
    EXPECT_DOUBLE_EQ(b.forward_flops, 32 * a.forward_flops);
    EXPECT_EQ(b.weight_bytes, a.weight_bytes);  // weights do not scale with batch
    EXPECT_EQ(b.forward_bytes - b.weight_bytes, 32 * (a.forward_bytes - a.weight_bytes));
  }
  // conv2d_2 at batch 32: 32 x 32 x 147 x 147 (3x3 s1 valid on 149).
  EXPECT_EQ(n32.layers[1].output.str(), "32x32x147x147");
  EXPECT_EQ(n32.offload_bytes_total(), 32 * n1.offload_bytes_total());
}

TEST(InceptionV3, OffloadChainRule) {
  const wl::network net = wl::inception_v3(2);
  ASSERT_FALSE(net.layers.empty());
  EXPECT_EQ(net.layers[0].offload_key, "");
  EXPECT_EQ(net.layers[0].offload, (wl::tensor_shape{2, 3, 299, 299}));
  for (std::size_t i = 1; i < net.layers.size(); ++i) {
    EXPECT_EQ(net.layers[i].offload_key, net.layers[i - 1].output_key);
    EXPECT_EQ(net.layers[i].offload, net.layers[i - 1].output);
  }
  // conv2d_4 (index 4) offloads its true input max_pooling2d_1 (64 x 73 x 73), not the
  // activation_3 (64 x 147 x 147) the pool reads.
  EXPECT_EQ(net.layers[4].name, "conv2d_4");
  EXPECT_EQ(net.layers[4].offload_key, "max_pooling2d_1");
  EXPECT_EQ(net.layers[4].offload, (wl::tensor_shape{2, 64, 73, 73}));
  EXPECT_EQ(net.layers[4].offload, net.layers[4].input);
  // X_8, the tensor indexed by conv2d_7 (index 8, first conv of mixed0's 5x5 branch), is
  // activation_6, the output of the layer before it (64 x 35 x 35), although conv2d_7 reads
  // max_pooling2d_2 (192 x 35 x 35); activation_6 moves during its first consumer's forward
  // pass (tensor_use_layers()), not conv2d_7's.
  EXPECT_EQ(net.layers[8].name, "conv2d_7");
  EXPECT_EQ(net.layers[8].offload_key, "activation_6");
  EXPECT_EQ(net.layers[8].offload, (wl::tensor_shape{2, 64, 35, 35}));
  EXPECT_EQ(net.layers[8].input, (wl::tensor_shape{2, 192, 35, 35}));
  EXPECT_EQ(net.layers[8].input_keys, std::vector<std::string>{"max_pooling2d_2"});
  // Total at batch 1 (vdnn_tensors.py: offload_all_elements=11949163: the image 3*299*299 =
  // 268,203 plus every layer output but dense_3's), times 4 bytes = 47,796,652.
  EXPECT_EQ(wl::inception_v3(1).offload_bytes_total(), 47796652ull);
}

TEST(Synthetic, ChainShapesFlopsAndOffload) {
  const wl::network net = wl::synthetic_chain(2, 3, 8, 16, 3);
  ASSERT_EQ(net.layers.size(), 3u);
  // layer 1: 2x3x16x16 -> 2x8x16x16; layer 2: -> 2x16x16x16; layer 3: -> 2x32x16x16.
  EXPECT_EQ(net.layers[0].output.str(), "2x8x16x16");
  EXPECT_EQ(net.layers[1].output.str(), "2x16x16x16");
  EXPECT_EQ(net.layers[2].output.str(), "2x32x16x16");
  EXPECT_EQ(net.layers[0].output_key, "syn_1");
  EXPECT_EQ(net.layers[2].output_key, "syn_3");
  EXPECT_EQ(net.layers[0].offload_key, "");
  EXPECT_EQ(net.layers[0].offload, (wl::tensor_shape{2, 3, 16, 16}));
  EXPECT_EQ(net.layers[1].offload_key, "syn_1");
  EXPECT_EQ(net.layers[2].offload, net.layers[1].output);
  // layer 2 FLOPs: 2 * 9 * 8 (cin) * 16 (cout) * 512 (N*H*W = 2*16*16) = 1,179,648;
  // weights 9*8*16*4 = 4,608 B.
  EXPECT_DOUBLE_EQ(net.layers[1].forward_flops, 1179648.0);
  EXPECT_EQ(net.layers[1].weight_bytes, 4608u);
  // forward bytes = 4*(2*8*256) + 4*(2*16*256) + 4608 = 16,384 + 32,768 + 4,608.
  EXPECT_EQ(net.layers[1].forward_bytes, 53760u);
  // offload total = 4 * (2*3*256 + 2*8*256 + 2*16*256) = 4 * 13,824 = 55,296 bytes.
  EXPECT_EQ(net.offload_bytes_total(), 4ull * (1536 + 4096 + 8192));

  const wl::network d = wl::make_network("synthetic", 1);
  ASSERT_EQ(d.layers.size(), 4u);
  EXPECT_EQ(d.layers[3].output.str(), "1x128x32x32");  // 16 * 2^3 channels
  EXPECT_THROW(wl::synthetic_chain(0, 3), wl::network_error);
  EXPECT_THROW(wl::synthetic_chain(1, 0), wl::network_error);
}

TEST(MakeNetwork, NamesAndAliases) {
  EXPECT_EQ(wl::make_network("inception_v3", 1).layers.size(), 111u);
  EXPECT_EQ(wl::make_network("inceptionv3", 1).layers.size(), 111u);
  expect_network_error([] { wl::make_network("resnet-9000", 1); },
                       {"resnet-9000", "inception_v3", "inceptionv3", "synthetic"});
  expect_network_error([] { wl::make_network("inception_v3", 0); }, {"batch", ">= 1"});
}

TEST(KerasGraph, MissingFileNamesFile) {
  const std::string path = "/nonexistent/dir/no_such_graph.json";
  expect_network_error([&] { wl::load_keras_graph(path, 1); }, {path, "cannot open"});
}

TEST(KerasGraph, MalformedJsonNamesFile) {
  const std::string path = write_temp("malformed", "{\"layers\": [ {\"name\": \"x\", ");
  expect_network_error([&] { wl::load_keras_graph(path, 1); }, {path, "malformed JSON"});
  const std::string path2 = write_temp("not_a_graph", "[1, 2, 3]");
  expect_network_error([&] { wl::load_keras_graph(path2, 1); }, {path2, "\"layers\""});
}

TEST(KerasGraph, UnknownLayerReferenceNamesFileAndLayer) {
  const std::string path = write_temp("unknown_ref", R"({"layers": [
    {"name": "input_1", "type": "InputLayer", "config": {"batch_input_shape": [null, 8, 8, 3]}, "inputs": []},
    {"name": "conv2d_1", "type": "Conv2D", "config": {"filters": 4, "kernel_size": [3, 3]}, "inputs": ["input_9"]}
  ]})");
  expect_network_error([&] { wl::load_keras_graph(path, 1); }, {path, "conv2d_1", "input_9"});
}

TEST(KerasGraph, UnsupportedTypeAndBadConfigNameLayer) {
  const std::string path = write_temp("bad_type", R"({"layers": [
    {"name": "input_1", "type": "InputLayer", "config": {"batch_input_shape": [null, 8, 8, 3]}, "inputs": []},
    {"name": "lstm_1", "type": "LSTM", "config": {}, "inputs": ["input_1"]}
  ]})");
  expect_network_error([&] { wl::load_keras_graph(path, 1); }, {path, "lstm_1", "LSTM", "supported"});
  const std::string path2 = write_temp("bad_pad", R"({"layers": [
    {"name": "input_1", "type": "InputLayer", "config": {"batch_input_shape": [null, 8, 8, 3]}, "inputs": []},
    {"name": "conv2d_1", "type": "Conv2D", "config": {"filters": 4, "kernel_size": [3, 3], "padding": "full"}, "inputs": ["input_1"]}
  ]})");
  expect_network_error([&] { wl::load_keras_graph(path2, 1); }, {path2, "conv2d_1", "padding"});
  const std::string path3 = write_temp("bad_json_type", R"({"layers": [
    {"name": "input_1", "type": "InputLayer", "config": {"batch_input_shape": [null, 8, 8, 3]}, "inputs": []},
    {"name": "conv2d_7", "type": "Conv2D", "config": {"filters": 4, "kernel_size": [3, 3], "padding": 5}, "inputs": ["input_1"]}
  ]})");
  expect_network_error([&] { wl::load_keras_graph(path3, 1); }, {path3, "conv2d_7", "wrong type"});
  const std::string path4 = write_temp("window_too_big", R"({"layers": [
    {"name": "input_1", "type": "InputLayer", "config": {"batch_input_shape": [null, 2, 2, 3]}, "inputs": []},
    {"name": "conv2d_1", "type": "Conv2D", "config": {"filters": 4, "kernel_size": [3, 3]}, "inputs": ["input_1"]}
  ]})");
  expect_network_error([&] { wl::load_keras_graph(path4, 1); }, {path4, "conv2d_1", "does not fit"});
}

TEST(KerasGraph, SmallGraphByHand) {
  // input 10x10x3 -> conv 3x3 s2 same (ceil(10/2) = 5) -> BN -> relu -> maxpool 2x2 (strides
  // default to pool size, valid: floor((5-2)/2)+1 = 2) -> conv 1x1 with bias (8 filters).
  const std::string path = write_temp("small.keras-graph", R"({
    "output_layers": [["act_b", 0, 0]],
    "layers": [
    {"name": "in", "type": "InputLayer", "config": {"batch_input_shape": [null, 10, 10, 3]}, "inputs": []},
    {"name": "conv_a", "type": "Conv2D", "config": {"filters": 4, "kernel_size": [3, 3], "strides": [2, 2], "padding": "same", "use_bias": false}, "inputs": ["in"]},
    {"name": "bn_a", "type": "BatchNormalization", "config": {"axis": 3}, "inputs": ["conv_a"]},
    {"name": "act_a", "type": "Activation", "config": {"activation": "relu"}, "inputs": ["bn_a"]},
    {"name": "pool", "type": "MaxPooling2D", "config": {"pool_size": [2, 2], "padding": "valid"}, "inputs": ["act_a"]},
    {"name": "conv_b", "type": "Conv2D", "config": {"filters": 8, "kernel_size": [1, 1], "use_bias": true}, "inputs": ["pool"]},
    {"name": "act_b", "type": "Activation", "config": {"activation": "relu"}, "inputs": ["conv_b"]}
  ]})");
  const wl::network net = wl::load_keras_graph(path, 3);
  EXPECT_EQ(net.name, "small");
  ASSERT_EQ(net.layers.size(), 3u);  // conv_a, pool, conv_b
  EXPECT_EQ(net.layers[0].output_key, "act_a");
  EXPECT_EQ(net.layers[0].output.str(), "3x4x5x5");
  EXPECT_EQ(net.layers[1].output_key, "pool");
  EXPECT_EQ(net.layers[1].kind, wl::layer_kind::pool);
  EXPECT_EQ(net.layers[1].output.str(), "3x4x2x2");
  EXPECT_EQ(net.layers[1].input_key, "act_a");
  // pool FLOPs: 2*2 per output, 3*4*2*2 = 48 outputs -> 192; bytes 4 * (300 + 48) = 1,392.
  EXPECT_DOUBLE_EQ(net.layers[1].forward_flops, 192.0);
  EXPECT_EQ(net.layers[1].forward_bytes, 1392u);
  EXPECT_EQ(net.layers[2].output_key, "act_b");  // no BN: conv -> relu is fused too
  EXPECT_EQ(net.layers[2].input.str(), "3x4x2x2");
  EXPECT_EQ(net.layers[2].output.str(), "3x8x2x2");
  // conv_b FLOPs: 2 * 1*1*4 * (3*8*2*2 = 96 outputs) + 96 bias adds = 864; params 4*8 + 8 = 40.
  EXPECT_DOUBLE_EQ(net.layers[2].forward_flops, 864.0);
  EXPECT_EQ(net.layers[2].weight_bytes, 160u);
  EXPECT_EQ(net.layers[2].offload_key, "pool");
  EXPECT_EQ(net.layers[1].offload_key, "act_a");
}

// ---- roofline ----------------------------------------------------------------------------------
// Default Titan X (Maxwell): sustained compute 7e12 * 0.7 = 4.9e12 FLOP/s, sustained DRAM
// 336e9 * 0.8 = 268.8e9 B/s.

TEST(Roofline, ComputeBoundByHand) {
  wl::layer l;
  l.forward_flops = 4.9e9;   // 4.9e9 / 4.9e12 = 1 ms = 1e9 ps
  l.forward_bytes = 1000000; // 1e6 / 268.8e9 = 3.72 us: below the compute time
  const auto t = wl::roofline_time(l, wl::gpu_params{});
  EXPECT_NEAR(static_cast<double>(t.forward), 1e9, 1.0);
  EXPECT_NEAR(static_cast<double>(t.backward), 2e9, 1.0);  // 2x FLOPs
}

TEST(Roofline, BandwidthBoundByHand) {
  wl::layer l;
  l.forward_flops = 1e6;        // 1e6 / 4.9e12 = 204 ns
  l.forward_bytes = 268800000;  // 268.8e6 / 268.8e9 = 1 ms = 1e9 ps
  const auto t = wl::roofline_time(l, wl::gpu_params{});
  EXPECT_EQ(t.forward, ps_t{1000000000});
  EXPECT_EQ(t.backward, ps_t{2000000000});  // 2x bytes
}

TEST(Roofline, ExactWithPowerOfTwoRates) {
  wl::gpu_params g;
  g.peak_flops = 8e12;
  g.flop_efficiency = 0.5;  // 4e12 FLOP/s
  g.dram_Bps = 400e9;
  g.bw_efficiency = 0.5;    // 200e9 B/s
  g.backward_flops_factor = 3.0;
  g.backward_bytes_factor = 1.5;
  wl::layer l;
  l.forward_flops = 4e6;   // 1 us
  l.forward_bytes = 400000; // 2 us  -> bandwidth-bound forward
  const auto t = wl::roofline_time(l, g);
  EXPECT_EQ(t.forward, ps_t{2000000});
  // backward: 12e6 FLOPs = 3 us vs 600,000 B = 3 us -> 3 us.
  EXPECT_EQ(t.backward, ps_t{3000000});
}

TEST(Roofline, InceptionLayersByHand) {
  const wl::network net = wl::inception_v3(1);
  const wl::gpu_params g;
  // conv2d_1 (bandwidth-bound): 3,917,996 B / 268.8e9 = 14,575,877.9 ps -> ceil 14,575,878;
  // compute 38,363,328 / 4.9e12 = 7,829,251 ps. Backward: 2x bytes -> 29,151,756 ps.
  // (Values: exact rational arithmetic with Python's fractions module, then ceil.)
  const auto t1 = wl::roofline_time(find_layer(net, "conv2d_1"), g);
  EXPECT_NEAR(static_cast<double>(t1.forward), 14575878.0, 1.0);
  EXPECT_NEAR(static_cast<double>(t1.backward), 29151756.0, 1.0);
  // conv2d_5 (compute-bound): 1,393,735,680 / 4.9e12 = 284,435,853.06 ps -> 284,435,854;
  // bytes 6,129,728 / 268.8e9 = 22,804,048 ps. Backward 2x FLOPs -> 568,871,707 ps.
  const auto t5 = wl::roofline_time(find_layer(net, "conv2d_5"), g);
  EXPECT_NEAR(static_cast<double>(t5.forward), 284435854.0, 1.0);
  EXPECT_NEAR(static_cast<double>(t5.backward), 568871707.0, 1.0);
}

TEST(Roofline, PresetsAndValidation) {
  const wl::gpu_params x = wl::titan_x_maxwell();
  EXPECT_EQ(x.name, "Titan X (Maxwell)");
  EXPECT_DOUBLE_EQ(x.peak_flops, 7e12);
  EXPECT_DOUBLE_EQ(x.dram_Bps, 336e9);  // 384 bit * 7 Gb/s / 8
  EXPECT_DOUBLE_EQ(384 * 7e9 / 8, 336e9);
  EXPECT_EQ(x.memory_bytes, 12ull * 1024 * 1024 * 1024);
  const wl::gpu_params xp = wl::titan_xp();
  EXPECT_DOUBLE_EQ(xp.dram_Bps, 547.6e9);
  // As the platform preset titanxp-gen3 has it (docs audit s15: 12e12 against 12.1 TFLOP/s).
  EXPECT_DOUBLE_EQ(xp.peak_flops, 12.1e12);
  EXPECT_NEAR(3840 * 2 * 1582e6, xp.peak_flops, 0.06e12);
  wl::gpu_params bad;
  bad.flop_efficiency = 1.5;
  wl::layer l;
  try {
    wl::roofline_time(l, bad);
    ADD_FAILURE() << "expected gpu_params_error";
  } catch (const wl::gpu_params_error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu_params.flop_efficiency"), std::string::npos) << e.what();
  }
  bad = wl::gpu_params{};
  bad.dram_Bps = 0;
  EXPECT_THROW(wl::roofline_time(l, bad), wl::gpu_params_error);
}

// The loader is not InceptionV3-specific: MobileNetV2's graph (shared data, not shipped in
// workloads/data) exercises ZeroPadding2D, DepthwiseConv2D, ReLU(max_value=6) and Add.
TEST(KerasGraph, MobileNetV2ReluShapesMatchManifest) {
  const std::string graph = CDMA_SHARED_DATA_DIR "/topologies/mobilenet_v2.keras-graph.json";
  const std::string manifest_path = CDMA_SHARED_DATA_DIR "/activations/mobilenet_v2/manifest.json";
  if (!std::filesystem::exists(graph) || !std::filesystem::exists(manifest_path))
    GTEST_SKIP() << "shared data not present: " << graph;
  const wl::network net = wl::load_keras_graph(graph, 1);
  EXPECT_EQ(net.name, "mobilenet_v2");
  // 35 Conv2D + 17 DepthwiseConv2D + 10 Add + 1 AveragePooling2D + 3 Dense in the graph
  // (/usr/bin/python3 tests/unit/vdnn_tensors.py: layers=66 conv=52 pool=1 fc=3 eltwise=10).
  EXPECT_EQ(net.layers.size(), 66u);
  std::ifstream in(manifest_path);
  const auto entries = nlohmann::json::parse(in).at("files").at(0).at("layers");
  ASSERT_EQ(entries.size(), 35u);
  // The 35 ReLU6 tensors appear, in manifest (execution) order, among the blocks' output keys.
  std::size_t j = 0;
  std::uint64_t relu_elements = 0;
  for (const auto& l : net.layers) {
    if (j < entries.size() && l.output_key == entries[j].at("key").get<std::string>()) {
      const auto s = entries[j].at("shape").get<std::vector<std::int64_t>>();
      EXPECT_EQ((wl::tensor_shape{s[0], s[1], s[2], s[3]}), l.output) << l.output_key;
      relu_elements += l.output.elements();
      ++j;
    }
  }
  EXPECT_EQ(j, entries.size());
  EXPECT_EQ(relu_elements, 6105792ull);  // data README: 35 post-ReLU6 tensors, 6,105,792 values
  // Conv1: ZeroPadding2D ((0,1),(0,1)) 224 -> 225, then 3x3 s2 valid -> 112; 3 -> 32 channels.
  // expanded_conv_depthwise: 3x3 depthwise s1 same on 32x112x112: 2*9*32*112*112 = 7,225,344.
  const auto& dw = find_layer(net, "expanded_conv_depthwise");
  EXPECT_EQ(dw.output.str(), "1x32x112x112");
  EXPECT_DOUBLE_EQ(dw.forward_flops, 2.0 * 9 * 32 * 112 * 112);
  EXPECT_EQ(dw.weight_bytes, 4u * 9 * 32);
  // Conv1_pad is folded into Conv1: it reads (and offloads) the 224x224 image.
  EXPECT_EQ(find_layer(net, "Conv1").input.str(), "1x3x224x224");
  EXPECT_DOUBLE_EQ(find_layer(net, "Conv1").forward_flops, 2.0 * 27 * 32 * 112 * 112);
  // block_2_add: block_1_project_BN + block_2_project_BN (24x56x56 each): one FLOP per output,
  // both inputs read: bytes 4 * (2 + 1) * 24*56*56.
  const auto& add = find_layer(net, "block_2_add");
  EXPECT_EQ(add.kind, wl::layer_kind::eltwise);
  EXPECT_EQ(add.input_keys, (std::vector<std::string>{"block_1_project_BN", "block_2_project_BN"}));
  EXPECT_DOUBLE_EQ(add.forward_flops, 24.0 * 56 * 56);
  EXPECT_EQ(add.forward_bytes, 4ull * 3 * 24 * 56 * 56);
  // block_3_expand reads the sum.
  EXPECT_EQ(find_layer(net, "block_3_expand").input_key, "block_2_add");
  // A linear projection conv ends at its BatchNormalization.
  EXPECT_EQ(find_layer(net, "expanded_conv_project").output_key, "expanded_conv_project_BN");
}
