// Break-it round s22 (workload inputs and outputs): network files with huge or wrapping shapes
// and hyper-parameters, deep Keras graphs, Keras single-integer window parameters that are 0 or
// negative. Cases marked FINDING Fn failed at the commit this round started from (a silent wrong
// result, SIGSEGV or SIGFPE) and pass with the fix in workloads/network/network.cpp; cases
// marked PASS held already and pin the behaviour the fix must keep.
// Expected numbers are by hand: 2^48 = 281474976710656 (the limit on any tensor, weight array
// or hyper-parameter), 2^60 B the limit on the offloaded tensors together.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/files.h"
#include "workloads/activations/activation_source.h"
#include "workloads/io/input_file.h"
#include "workloads/network/network.h"

namespace wl = cdma::workloads;
using nlohmann::json;

namespace {

std::string scratch() {
  static const std::string dir = cdma::test::scratch_dir("s22");
  return dir;
}

std::string write(const std::string& name, const std::string& text) {
  return cdma::test::write_text(scratch(), name, text);
}

/// The message of the network_error that loading `path` at `batch` throws ("" and a failure
/// when it loads: then the shapes it accepted are printed).
std::string load_error(const std::string& path, int batch = 1) {
  try {
    const wl::network net = wl::make_network(path, batch);
    std::string shapes;
    for (const auto& l : net.layers) shapes += " " + l.name + ":" + l.output.str();
    ADD_FAILURE() << path << " was accepted:" << shapes;
  } catch (const wl::network_error& e) {
    return e.what();
  }
  return "";
}

void expect_has(const std::string& msg, std::initializer_list<std::string> parts) {
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
}

/// A layer file with input [3, 32, 32], the entry `entry` and an fc after it.
std::string layer_file(const std::string& name, const std::string& entry, const std::string& input = "[3, 32, 32]") {
  return write(name, "{\"name\": \"s22\", \"input\": " + input + ", \"layers\": [" + entry +
                         ", {\"name\": \"fc\", \"type\": \"fc\", \"units\": 10}]}");
}

/// A Keras graph: InputLayer 32x32x3 (or `input_shape`), `node` (named "c", reading "in"),
/// Flatten, Dense(10).
std::string keras(const std::string& name, const json& node, const json& input_shape = json::array({nullptr, 32, 32, 3})) {
  json layers = json::array();
  layers.push_back({{"name", "in"}, {"type", "InputLayer"}, {"config", {{"batch_input_shape", input_shape}}}});
  json c = node;
  c["name"] = "c";
  c["inputs"] = json::array({"in"});
  layers.push_back(c);
  layers.push_back({{"name", "f"}, {"type", "Flatten"}, {"inputs", {"c"}}, {"config", json::object()}});
  layers.push_back({{"name", "d"}, {"type", "Dense"}, {"inputs", {"f"}}, {"config", {{"units", 10}}}});
  return write(name, json{{"layers", layers}}.dump());
}

}  // namespace

// ---- F1: layer files whose shapes wrapped 64 bits ---------------------------------------------

// FINDING F1a: "filters": 2^62 made a 1x2^62x32x32 output = 2^72 elements, counted 0 bytes
// (uint64 wrap): the run went on, fc's X_i "0.00 MB", oracle 0.000 ms.
TEST(S22LayerFile, FiltersOf2To62AreRefusedNotCountedAsZeroBytes) {
  const std::string p = layer_file("filters.json", R"({"name": "c1", "type": "conv", "filters": 4611686018427387904, "kernel": 1})");
  expect_has(load_error(p), {"filters.json", "layers[0] \"c1\" (conv)", "\"filters\" = 4611686018427387904",
                             "expected at most 2^48"});
}

// FINDING F1b: "stride": 2^63-1 with "pad": "same" overflowed (h + s - 1) / s to 0: a 1x16x0x0
// output was accepted (0 bytes, a run "verified").
TEST(S22LayerFile, HugeSameStrideIsRefusedNotAZeroSizedOutput) {
  const std::string p = layer_file(
      "stride.json", R"({"name": "c1", "type": "conv", "filters": 16, "kernel": 3, "stride": 9223372036854775807, "pad": "same"})");
  expect_has(load_error(p), {"stride.json", "layers[0] \"c1\" (conv)", "\"stride\" must be n or [h, w] of integers 1 .. 2^48"});
}

// FINDING F1c: "pad": 2^62 wrapped the output length to -9223372036854775778 (shown in the
// report as 1x16x-9223372036854775778x-9223372036854775778, 0 bytes).
TEST(S22LayerFile, HugePadIsRefusedNotANegativeOutputLength) {
  const std::string p = layer_file("pad.json", R"({"name": "c1", "type": "conv", "filters": 16, "kernel": 3, "pad": 4611686018427387904})");
  expect_has(load_error(p), {"pad.json", "\"pad\" must be n or [h, w] of integers 0 .. 2^48"});
}

// FINDING F1d: input [2^32, 2^32, 1] = 2^64 elements per image was counted 0 bytes; a 1x1 pool
// of it ran with oracle 0.000 ms.
TEST(S22LayerFile, InputOf2To64ElementsIsRefused) {
  const std::string p =
      layer_file("input.json", R"({"name": "p", "type": "pool", "kernel": 1})", "[4294967296, 4294967296, 1]");
  expect_has(load_error(p), {"input.json", "\"input\" at batch 1, N x C x H x W 1x4294967296x4294967296x1",
                             "more than 2^48 elements"});
}

// FINDING F1e: kernel 2^40 with pad 2^39 fits a 32x32 input (output 33x33) but its
// kh kw cin = 3 * 2^80 weights wrapped int64: 0.001 ms, a few bytes of weights.
TEST(S22LayerFile, WeightsBeyond2To48ElementsAreRefused) {
  const std::string p = layer_file(
      "kernel.json", R"({"name": "c1", "type": "conv", "filters": 4, "kernel": 1099511627776, "pad": 549755813888})");
  expect_has(load_error(p), {"kernel.json", "layers[0] \"c1\" (conv)", "weights kh x kw x (cin / groups) x cout",
                             "1099511627776x1099511627776x3x4", "more than 2^48 elements"});
}

// The limit itself: a 1 x 2^24 x 2^24 image (2^48 elements, 1 PiB) loads with its exact size at
// batch 1 (the platform then refuses it for GPU memory, a separate check), and is refused at
// batch 2 (2^49 elements).
TEST(S22LayerFile, TheLimitIs2To48ElementsPerTensorWithTheBatch) {
  const std::string p = layer_file("limit.json", R"({"name": "p", "type": "pool", "global": true})", "[1, 16777216, 16777216]");
  const wl::network net = wl::make_network(p, 1);
  EXPECT_EQ(net.layers.at(0).offload.elements(), std::uint64_t{1} << 48);
  EXPECT_EQ(net.layers.at(0).offload.bytes(), std::uint64_t{1} << 50);
  expect_has(load_error(p, 2), {"limit.json", "\"input\" at batch 2", "2x1x16777216x16777216", "more than 2^48 elements"});
}

// The offloaded tensors together: 1025 outputs of 2^50 B are more than 2^60 B (the largest
// gpu_mem.size / host_mem.size); the platform's 64-bit sums of them must not wrap.
TEST(S22LayerFile, OffloadedTensorsBeyond2To60BytesTogetherAreRefused) {
  std::string layers;
  for (int i = 0; i < 1026; ++i)
    layers += std::string(i ? ", " : "") + "{\"name\": \"c" + std::to_string(i) + "\", \"type\": \"conv\", \"filters\": 1, \"kernel\": 1}";
  const std::string p = write("total.json", "{\"input\": [1, 16777216, 16777216], \"layers\": [" + layers + "]}");
  expect_has(load_error(p), {"total.json", "the 1026 offloaded tensors add up to more than 2^60 bytes"});
}

// PASS: a concat of mismatched spatial sizes, a duplicate name and an input named later are
// refused naming the entry (kept by the fix).
TEST(S22LayerFile, ConcatMismatchDuplicateNameAndForwardReferenceStayErrors) {
  expect_has(load_error(write("cat.json", R"({"input": [3, 8, 8], "layers": [
      {"name": "a", "type": "conv", "filters": 4, "kernel": 1},
      {"name": "b", "type": "pool", "kernel": 2, "inputs": ["input"]},
      {"name": "cat", "type": "concat", "inputs": ["a", "b"]}, {"name": "fc", "type": "fc", "units": 2}]})")),
             {"layers[2] \"cat\" (concat)", "input \"b\" is 3x4x4, expected spatial size 8x8 like \"a\""});
  expect_has(load_error(write("dup.json", R"({"input": [3, 8, 8], "layers": [
      {"name": "a", "type": "conv", "filters": 4, "kernel": 1}, {"name": "a", "type": "fc", "units": 2}]})")),
             {"layers[1] \"a\" (fc): duplicate name"});
  expect_has(load_error(write("fwd.json", R"({"input": [3, 8, 8], "layers": [
      {"name": "a", "type": "conv", "filters": 4, "kernel": 1, "inputs": ["b"]}, {"name": "b", "type": "fc", "units": 2}]})")),
             {"layers[0] \"a\" (conv): unknown input \"b\""});
}

// ---- F2: a deep Keras graph overflowed the stack -----------------------------------------------

// FINDING F2: 200000 ReLU layers in a chain, listed output first, crashed the loader with
// SIGSEGV (shape inference recursed once per layer). It loads now: one conv, whose output key
// is the first ReLU after it (fused).
TEST(S22Keras, DeepChainListedOutputFirstLoadsWithoutStackOverflow) {
  const int n = 200000;
  std::string text = "{\"layers\": [";
  for (int i = n; i >= 1; --i)
    text += "{\"name\": \"r" + std::to_string(i) + "\", \"type\": \"ReLU\", \"inputs\": [\"" +
            (i > 1 ? "r" + std::to_string(i - 1) : std::string("c")) + "\"], \"config\": {}}, ";
  text += R"({"name": "c", "type": "Conv2D", "inputs": ["in"], "config": {"filters": 4, "kernel_size": [1, 1]}},
             {"name": "in", "type": "InputLayer", "config": {"batch_input_shape": [null, 8, 8, 3]}}]})";
  const std::string p = write("deep.json", text);
  const wl::network net = wl::load_keras_graph(p, 2);
  ASSERT_EQ(net.layers.size(), 1u);
  EXPECT_EQ(net.layers[0].output.str(), "2x4x8x8");
  EXPECT_EQ(net.layers[0].output_key, "r1");
}

// PASS (kept by the rewrite): a cycle is still named.
TEST(S22Keras, CycleIsStillNamed) {
  const std::string p = write("cycle.json", R"({"layers": [
      {"name": "in", "type": "InputLayer", "config": {"batch_input_shape": [null, 8, 8, 3]}},
      {"name": "a", "type": "Conv2D", "inputs": ["b"], "config": {"filters": 4, "kernel_size": 1}},
      {"name": "b", "type": "Conv2D", "inputs": ["a"], "config": {"filters": 4, "kernel_size": 1}}]})");
  expect_has(load_error(p), {"cycle.json", "layer \"a\" (Conv2D): cycle in the layer graph"});
}

// ---- F3: Keras single-integer window parameters -------------------------------------------------

// FINDING F3a: "strides": 0 (the single-integer form; [0, 0] was refused) divided by zero:
// SIGFPE. Same for MaxPooling2D "pool_size": 0 and "strides": 0.
TEST(S22Keras, ZeroStrideOrPoolSizeAsOneIntegerIsRefusedNotSigfpe) {
  expect_has(load_error(keras("k_stride0.json", {{"type", "Conv2D"}, {"config", {{"filters", 4}, {"kernel_size", 3}, {"strides", 0}}}})),
             {"k_stride0.json", "layer \"c\" (Conv2D)", "config.strides must be a positive integer or [h, w]"});
  expect_has(load_error(keras("k_pool0.json", {{"type", "MaxPooling2D"}, {"config", {{"pool_size", 0}}}})),
             {"layer \"c\" (MaxPooling2D)", "config.pool_size must be a positive integer"});
  expect_has(load_error(keras("k_pstride0.json", {{"type", "MaxPooling2D"}, {"config", {{"pool_size", 2}, {"strides", 0}}}})),
             {"layer \"c\" (MaxPooling2D)", "config.strides must be a positive integer"});
}

// FINDING F3b: "kernel_size": -3 or "dilation_rate": -2 gave a 36x36 output of a 32x32 input
// (silently; the run went on).
TEST(S22Keras, NegativeKernelOrDilationAsOneIntegerIsRefused) {
  expect_has(load_error(keras("k_kneg.json", {{"type", "Conv2D"}, {"config", {{"filters", 4}, {"kernel_size", -3}}}})),
             {"config.kernel_size must be a positive integer"});
  expect_has(load_error(keras("k_dneg.json", {{"type", "Conv2D"},
                                              {"config", {{"filters", 4}, {"kernel_size", 3}, {"dilation_rate", -2}}}})),
             {"config.dilation_rate must be a positive integer"});
}

// FINDING F3c: sizes that wrapped in a Keras graph: a 2^32 x 2^32 input (counted 0 bytes), a
// depth_multiplier of 6148914691236517206 (3 channels x that = 2 after the wrap) and a
// ZeroPadding2D of 2^63-1 (32 + 2 (2^63-1) wrapped to 30: a 28x28 conv output) all ran.
TEST(S22Keras, WrappingSizesAreRefused) {
  expect_has(load_error(keras("k_in.json", {{"type", "MaxPooling2D"}, {"config", {{"pool_size", 1}}}},
                              json::array({nullptr, 4294967296LL, 4294967296LL, 1}))),
             {"k_in.json", "layer \"in\" (InputLayer)", "more than 2^48 elements"});
  expect_has(load_error(keras("k_dm.json", {{"type", "DepthwiseConv2D"},
                                            {"config", {{"kernel_size", 1}, {"depth_multiplier", 6148914691236517206LL}}}})),
             {"layer \"c\" (DepthwiseConv2D)", "config.depth_multiplier = 6148914691236517206 is more than 2^48"});
  json layers = json::array();
  layers.push_back({{"name", "in"}, {"type", "InputLayer"}, {"config", {{"batch_input_shape", {nullptr, 32, 32, 3}}}}});
  layers.push_back({{"name", "z"}, {"type", "ZeroPadding2D"}, {"inputs", {"in"}}, {"config", {{"padding", 9223372036854775807LL}}}});
  layers.push_back({{"name", "c"}, {"type", "Conv2D"}, {"inputs", {"z"}}, {"config", {{"filters", 4}, {"kernel_size", 3}}}});
  expect_has(load_error(write("k_zp.json", json{{"layers", layers}}.dump())),
             {"layer \"z\" (ZeroPadding2D)", "config.padding = 9223372036854775807 is more than 2^48"});
}

// ---- F4: an activations member with an empty name -------------------------------------------

// FINDING F4: a folder file (or .npz member) named ".npy" was left out silently, as if the name
// map had mapped it to null (docs/workloads.md: every member not left out by the name map must
// be a layer output). It is refused naming the source; {"": null} still leaves it out.
TEST(S22Activations, TensorWithAnEmptyNameIsRefusedUnlessMappedToNull) {
  const std::string dir = scratch() + "/empty_name";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/c1.npy") << "x";  // not read: the names are checked first
  std::ofstream(dir + "/.npy") << "x";
  try {
    wl::npz_activation_source src(dir, wl::real_activation_options{});
    ADD_FAILURE() << "a tensor named '' was accepted";
  } catch (const wl::activation_error& e) {
    expect_has(e.what(), {dir + ": holds a tensor with an empty name ('.npy')", "{\"\": null}"});
  }
  wl::real_activation_options opt;
  opt.name_map[""] = "";  // {"": null}
  EXPECT_NO_THROW(wl::npz_activation_source(dir, opt));
}

// ---- F5: strict_json rewritten as a SAX handler (linear time); same document, same errors ---

// F5 (measured, not timed here: no timed unit tests): a layer file of 100000 layers took 10 s
// to read (nlohmann's callback parser rescans the enclosing array at each object's end). The
// SAX version must build the same document and name duplicates at the same path.
TEST(S22StrictJson, SameDocumentAndDuplicatePathsAsBefore) {
  const std::string text =
      R"({"a": [1, 2.5, "x", null, true, {"b": [[], {}], "c": -3}], "d": {"e": {"f": 18446744073709551615}}})";
  std::istringstream in(text);
  EXPECT_EQ(wl::io::strict_json(in), json::parse(text));
  auto dup_message = [](const std::string& t) {
    std::istringstream s(t);
    try {
      wl::io::strict_json(s);
    } catch (const wl::io::duplicate_key& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(dup_message(R"({"batch": 2, "batch": 4})"),
            "key \"batch\" appears twice in the top-level object; expected each key once in an object");
  EXPECT_EQ(dup_message(R"({"layers": [{"a": 1}, {"x": {"k": 1, "k": 2}}]})"),
            "key \"k\" appears twice in layers[1].x; expected each key once in an object");
  EXPECT_EQ(dup_message(R"({"l": [[1, 2], [3, {"k": 1, "k": 1}]]})"), "key \"k\" appears twice in l[1][1]; expected each key once in an object");
  std::istringstream bad(R"({"a": 1} x)");
  EXPECT_THROW(wl::io::strict_json(bad), json::parse_error);
}

// ---- the same through the command line: exit 2 naming the file, nothing simulated ------------

TEST(S22Cli, WrappingLayerFileIsExit2NotAZeroByteRun) {
  const std::string p = layer_file("cli.json", R"({"name": "c1", "type": "conv", "filters": 4611686018427387904, "kernel": 1})");
  std::string out, err;
  EXPECT_EQ(cdma::test::cli("run --network " + p + " --steps oracle", &out, &err, "", 60), 2) << out << err;
  expect_has(err, {"cli.json", "\"filters\" = 4611686018427387904"});
  EXPECT_EQ(out.find("oracle (no transfers)"), std::string::npos) << out;
}

// FINDING F6: an output whose file name is valid (250 bytes) but whose temporary name
// FILE.tmp.XXXXXX (261 bytes) passes NAME_MAX was found only after the run: exit 3, "cannot
// create ...tmp.XXXXXX: File name too long (results computed but not saved)". The temporary
// name is shortened now: the file is written, no temporary file stays.
TEST(S22Cli, OutputWithA250ByteNameIsWritten) {
  const std::string dir = scratch() + "/longname";
  std::filesystem::create_directories(dir);
  const std::string net = layer_file("long_net.json", R"({"name": "c1", "type": "conv", "filters": 4, "kernel": 1})");
  const std::string name = std::string(246, 'a') + ".csv";  // 250 bytes
  std::string out, err;
  EXPECT_EQ(cdma::test::cli("run -q --network " + net + " --steps oracle --csv " + dir + "/" + name, &out, &err, "", 120), 0)
      << err;
  EXPECT_EQ(cdma::test::entries(dir), std::vector<std::string>{name});
  EXPECT_NE(cdma::test::slurp(dir + "/" + name).find("c1"), std::string::npos);
}
