// New-user trial s23 (own network, own activations; /work/notes/trial-own-s23.md): the fixes of
// F2 (negative zeros in real activations are warned about), F3 (why a padded average pool's
// output cannot be computed), F4 (names of in-place entries fused into a layer; header column
// names that differ only in case), F5 (the density profile's "borrowed" count leaves out the
// tensors that are never offloaded) and F10 (the profile iteration used, and its clamping).
// Expected values are by hand from the files the tests write.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/files.h"
#include "support/trial_network.h"
#include "workloads/activations/activation_source.h"
#include "workloads/compute/roofline.h"
#include "workloads/network/network.h"

namespace wl = cdma::workloads;
using cdma::test::cli;
using cdma::test::slurp;
using nlohmann::json;

namespace {

std::string scratch() {
  static const std::string dir = cdma::test::scratch_dir("s23_own");
  return dir;
}

std::string write(const std::string& name, const std::string& text) {
  return cdma::test::write_text(scratch(), name, text);
}

void write_npy(const std::string& path, const std::vector<int>& shape, const std::vector<float>& v) {
  cdma::test::write_npy_f32(path, shape, v);
}

/// A fresh folder under scratch().
std::string folder(const std::string& name) {
  const std::string d = scratch() + "/" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

/// input 1x10x10 -> c1 (conv 1x1, 1 filter, ReLU; 100 elements per image) -> c2 (conv 1x1,
/// 1 filter) -> fc: offloads c1; c2 is the last layer's input (resident).
std::string net100() {
  return write("net100.json", R"({"name": "n100", "input": [1, 10, 10], "layers": [
    {"name": "c1", "type": "conv", "filters": 1, "kernel": 1, "relu": true},
    {"name": "c2", "type": "conv", "filters": 1, "kernel": 1},
    {"name": "fc", "type": "fc", "units": 2}]})");
}

/// `images` x 100 elements: 1.0 everywhere, +0.0 at the first 30 of each image, and -0.0 at the
/// first `neg[n]` of the next elements of image n.
std::vector<float> with_negative_zeros(const std::vector<int>& neg) {
  std::vector<float> v;
  for (int n : neg)
    for (int e = 0; e < 100; ++e) v.push_back(e < 30 ? 0.0f : e < 30 + n ? -0.0f : 1.0f);
  return v;
}

using cdma::test::error_of;

}  // namespace

// F2: -0.0 is not a zero to ZVC (bit-exact), so a tensor of a ReLU computed as x * (x > 0)
// compressed as if dense, silently. A held tensor with >= 1 % of -0.0 elements among the
// images the batch uses is a warning naming the file, the tensor, its share and the fix.
TEST(S23Own, NegativeZerosInRealActivationsAreAWarning) {
  const wl::network b1 = wl::make_network(net100(), 1), b2 = wl::make_network(net100(), 2);
  const std::string dir = folder("negzero");
  // c1: image 0 has 1 of 100 elements -0.0 (1.0 %: warned), image 1 none; c2: +0.0 only.
  write_npy(dir + "/c1.npy", {2, 1, 10, 10}, with_negative_zeros({1, 0}));
  write_npy(dir + "/c2.npy", {2, 1, 10, 10}, with_negative_zeros({0, 0}));
  {
    wl::npz_activation_source s(dir, wl::real_activation_options{});
    s.validate(b1);
    const auto w = s.warnings();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0], dir + ": 1.0 % of the elements of tensor 'c1' are negative zeros (-0.0), which ZVC does not "
                          "compress: only +0.0 (bit pattern 0) is a zero to it, so they count as nonzeros (zero%, "
                          "ratio). A ReLU computed as x * (x > 0) leaves -0.0 where x < 0; if they stand for zeros, "
                          "save np.maximum(x, 0) or x + 0.0 instead");
    // Batch 2 uses both images: 1 of 200 = 0.5 %, below the threshold.
    s.validate(b2);
    EXPECT_TRUE(s.warnings().empty());
  }
  // Two tensors (c2 with 50 of 100 -0.0 in image 0 and 70 in image 1: 60 %), and names as in
  // the file when a name map renamed them. (A network in which c2 is offloaded too: in net100
  // it is the last layer's input, never offloaded, which is not counted since fix s23.)
  const wl::network b2_c3 = wl::make_network(write("net100_c3.json", R"({"name": "n100c3", "input": [1, 10, 10],
    "layers": [{"name": "c1", "type": "conv", "filters": 1, "kernel": 1, "relu": true},
    {"name": "c2", "type": "conv", "filters": 1, "kernel": 1},
    {"name": "c3", "type": "conv", "filters": 1, "kernel": 1},
    {"name": "fc", "type": "fc", "units": 2}]})"), 2);
  write_npy(dir + "/c2.npy", {2, 1, 10, 10}, with_negative_zeros({50, 70}));
  write_npy(dir + "/c1.npy", {2, 1, 10, 10}, with_negative_zeros({3, 1}));  // 4 of 200: 2.0 %
  std::filesystem::rename(dir + "/c1.npy", dir + "/stem.relu.npy");
  wl::real_activation_options o;
  o.name_map["stem.relu"] = "c1";
  wl::npz_activation_source s(dir, o);
  s.validate(b2_c3);
  const auto w = s.warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind(dir + ": 2 tensors hold 1 % or more of their elements as negative zeros ('stem.relu' (layer "
                             "key 'c1') 2.0 %, 'c2' 60.0 %); such elements are negative zeros (-0.0), which ZVC",
                       0),
            0u)
      << w[0];
  // Synthetic data: none.
  wl::synthetic_activation_source syn(0.5);
  EXPECT_TRUE(syn.warnings().empty());
}

// F2 through the command line: the warning is on standard error and in the JSON's warnings.
TEST(S23Own, NegativeZeroWarningReachesTheReportAndJson) {
  const std::string dir = folder("negzero_cli");
  write_npy(dir + "/c1.npy", {1, 1, 10, 10}, with_negative_zeros({40}));  // 40 %
  write_npy(dir + "/c2.npy", {1, 1, 10, 10}, with_negative_zeros({0}));
  const std::string js = scratch() + "/negzero.json";
  std::string out, err;
  ASSERT_EQ(cli("run --network " + net100() + " --batch 1 --steps oracle -q --activations " + dir + " --json " + js,
                &out, &err),
            0)
      << err;
  const std::string w = dir + ": 40.0 % of the elements of tensor 'c1' are negative zeros (-0.0)";
  EXPECT_NE(err.find("cdma-vp: warning: " + w), std::string::npos) << err;
  const json j = json::parse(slurp(js));
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"];
  EXPECT_EQ(j["warnings"][0].get<std::string>().rfind(w, 0), 0u) << j["warnings"];
}

// F3: the error for a padded average pool's output said only that a pool output is computed
// when its input is held, though the file held it.
TEST(S23Own, PaddedAveragePoolOutputErrorGivesTheReason) {
  const std::string net = write("avgpad.json", R"({"name": "avgpad", "input": [1, 10, 10], "layers": [
    {"name": "c1", "type": "conv", "filters": 1, "kernel": 1, "relu": true},
    {"name": "p", "type": "pool", "op": "avg", "kernel": 3, "stride": 1, "pad": 1},
    {"name": "c2", "type": "conv", "filters": 1, "kernel": 1},
    {"name": "fc", "type": "fc", "units": 2}]})");
  const wl::network n = wl::make_network(net, 1);
  ASSERT_FALSE(n.layers[1].pool.derivable);
  const std::string dir = folder("avgpad");
  write_npy(dir + "/c1.npy", {1, 1, 10, 10}, with_negative_zeros({0}));
  write_npy(dir + "/c2.npy", {1, 1, 10, 10}, with_negative_zeros({0}));
  wl::npz_activation_source s(dir, wl::real_activation_options{});
  const std::string e = error_of([&] { s.validate(n); });
  EXPECT_NE(e.find(dir + ": layer 'c2' offloads tensor 'p', which the file does not hold (1 of 2 offloaded tensors "
                         "are not in the file and cannot be computed from it: p; 'p' is the output of average pool "
                         "layer 'p', which is not computed from its input: it pads (pad 1x1), and frameworks differ on "
                         "whether padded elements count in an average (PyTorch count_include_pad); save that layer's "
                         "output in the file under the name 'p'; a pool layer's output is computed from its input "
                         "when the file holds that, except as said. Set missing_activations to dense"),
            std::string::npos)
      << e;
}

// F4: a name of an in-place entry (bn, relu) of the user's layer file was "not a layer".
TEST(S23Own, InPlaceEntryNamesPointToTheLayerTheyAreFusedInto) {
  const std::string net = write("inplace.json", R"({"name": "inplace", "input": [1, 10, 10], "layers": [
    {"name": "c1", "type": "conv", "filters": 2, "kernel": 1},
    {"name": "bn1", "type": "bn"},
    {"name": "relu1", "type": "relu"},
    {"name": "c2", "type": "conv", "filters": 2, "kernel": 1, "key": "c2_out"},
    {"name": "drop2", "type": "dropout"},
    {"name": "fc", "type": "fc", "units": 2}]})");
  const wl::network n = wl::make_network(net, 1);
  ASSERT_EQ(n.layers.size(), 3u);
  EXPECT_EQ(n.layers[0].fused, (std::vector<std::string>{"bn1", "relu1"}));
  EXPECT_EQ(n.layers[1].fused, (std::vector<std::string>{"drop2"}));
  EXPECT_TRUE(n.layers[2].fused.empty());
  ASSERT_NE(wl::fused_into(n, "relu1"), nullptr);
  EXPECT_EQ(wl::fused_into(n, "relu1")->name, "c1");
  EXPECT_EQ(wl::fused_into(n, "drop2")->name, "c2");
  EXPECT_EQ(wl::fused_into(n, "c1"), nullptr);  // a layer, not an in-place entry
  EXPECT_EQ(wl::fused_into(n, "nope"), nullptr);
  // --layer-times row.
  const std::string times = write("times_bn.csv", "layer,forward_ms,backward_ms\nc1,0.1,0.2\nbn1,0.01,0.01\n");
  const auto base = wl::roofline_times(n, wl::gpu_params{});
  std::string e = error_of([&] { wl::apply_time_table(times, n, base); });
  EXPECT_EQ(e, times + ":3: layer \"bn1\" is not a layer of network inplace: it is an in-place entry fused into layer "
                       "\"c1\"; give its time in that layer's row (add it to \"c1\"'s times)");
  // A name-map target (and a tensor named so in the file): the fused layer's key.
  const std::string dir = folder("inplace");
  write_npy(dir + "/stem.relu.npy", {1, 2, 10, 10}, std::vector<float>(200, 1.0f));
  write_npy(dir + "/drop2.npy", {1, 2, 10, 10}, std::vector<float>(200, 1.0f));
  wl::real_activation_options o;
  o.name_map["stem.relu"] = "relu1";
  wl::npz_activation_source s(dir, o);
  e = error_of([&] { s.validate(n); });
  EXPECT_NE(e.find("2 tensors match no layer of network inplace: 'drop2', 'stem.relu' (mapped to 'relu1') "),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("; 'drop2' is an in-place entry of the layer file fused into layer 'c2', whose output (after it) "
                   "has the key 'c2_out': use that key; 'relu1' is an in-place entry of the layer file fused into layer "
                   "'c1', whose output (after it) has the key 'c1': use that key)"),
            std::string::npos)
      << e;
  // A plain unknown name gets no such hint.
  const std::string other = write("times_x.csv", "layer,forward_ms,backward_ms\nconv9,0.1,0.2\n");
  e = error_of([&] { wl::apply_time_table(other, n, base); });
  EXPECT_EQ(e, other + ":2: layer \"conv9\" is not a layer of network inplace");
}

// F4: "Layer,Forward_ms" headers: names are case-sensitive, said in the message.
TEST(S23Own, HeaderColumnsDifferingOnlyInCaseGetAHint) {
  const wl::network n = wl::make_network(net100(), 1);
  const auto base = wl::roofline_times(n, wl::gpu_params{});
  const std::string t = write("times_case.csv", "Layer,kernel,Forward_ms,backward_ms\nc1,x,0.1,0.2\n");
  const std::string e = error_of([&] { wl::apply_time_table(t, n, base); });
  EXPECT_NE(e.find(t + ":1: the header lacks the columns layer, forward_ms (header: \"Layer,kernel,Forward_ms,"
                       "backward_ms\"); column names are case-sensitive: rename \"Layer\" to layer, \"Forward_ms\" to "
                       "forward_ms; expected a header"),
            std::string::npos)
      << e;
  // The density profile shares the check.
  const std::string p = write("prof_case.csv", "Iteration,layer,Zero_Fraction\n0,c1,0.5\n");
  const std::string f = error_of([&] { wl::training_profile_densities(p, 1.0, n); });
  EXPECT_NE(f.find("column names are case-sensitive: rename \"Iteration\" to iteration, \"Zero_Fraction\" to "
                   "zero_fraction;"),
            std::string::npos)
      << f;
  // Without such a column, no hint.
  const std::string g = write("times_none.csv", "name,fwd,bwd\nc1,0.1,0.2\n");
  EXPECT_EQ(error_of([&] { wl::apply_time_table(g, n, base); }).find("case-sensitive"), std::string::npos);
}

// F5: a profile naming exactly the offloaded tensors read as "2 borrowed": the last layer's
// input (resident) and the network output need no density.
TEST(S23Own, ProfileOfEveryOffloadedTensorBorrowsNothing) {
  const std::string net = cdma::test::write_trial_network(scratch() + "/trial.json");
  const wl::network n = wl::load_layer_file(net, 8);
  ASSERT_EQ(n.layers.size(), 11u);
  // Every layer but gap (the last layer's input) and fc (the output).
  std::string csv = "iteration,epoch,layer,zero_fraction\n";
  for (const char* l : {"conv1", "pool1", "conv2a", "conv2b", "conv3", "conv4", "res", "pool2", "conv5"})
    csv += std::string("0,0,") + l + ",0.5\n";
  const std::string p = write("prof_offloaded.csv", csv);
  wl::density_profile_match m;
  wl::training_profile_densities(p, 1.0, n, &m);
  EXPECT_EQ(m.named, 9u);
  EXPECT_EQ(m.borrowed.size(), 2u);  // they still take a curve (never used)
  EXPECT_EQ(m.never_offloaded, (std::vector<std::string>{"gap", "fc"}));
  EXPECT_EQ(m.summary(), "density profile prof_offloaded.csv at progress 1 (iteration 0): 9 of 11 layers named, 2 not "
                         "named but never offloaded (gap, fc)");
}

// F10: a profile starting at iteration 100 gave iteration 100's densities at progress 0 with
// nothing said; the summary names the iteration used and the clamping.
TEST(S23Own, ProfileIterationUsedIsNamedAndClampingSaid) {
  const wl::network n = wl::make_network(net100(), 1);
  // c1 zero fraction 0.2 at iteration 100, 0.8 at 1000; c2 0.1 -> 0.1.
  const std::string p = write("prof_late.csv", "iteration,epoch,layer,zero_fraction\n100,1,c1,0.2\n100,1,c2,0.1\n"
                                               "1000,10,c1,0.8\n1000,10,c2,0.1\n");
  wl::density_profile_match m;
  auto d = wl::training_profile_densities(p, 0.0, n, &m);
  EXPECT_DOUBLE_EQ(d.at("c1"), 1 - 0.2);
  EXPECT_EQ(m.iteration, 0.0);
  EXPECT_EQ(m.iteration_used, 100.0);
  EXPECT_EQ(m.summary().rfind("density profile prof_late.csv at progress 0 (iteration 0, before the profile's first "
                              "iteration 100: clamped to it): 2 of 3 layers named, 1 not named but never offloaded (fc)",
                              0),
            0u)
      << m.summary();
  // Progress 0.5: iteration 500, c1 0.2 + (500 - 100) / 900 x 0.6 = 0.46667 zeros.
  d = wl::training_profile_densities(p, 0.5, n, &m);
  EXPECT_NEAR(d.at("c1"), 1 - (0.2 + 400.0 / 900.0 * 0.6), 1e-12);
  EXPECT_EQ(m.iteration_used, 500.0);
  EXPECT_EQ(m.summary().rfind("density profile prof_late.csv at progress 0.5 (iteration 500): ", 0), 0u) << m.summary();
  // Progress 0.1 = iteration 100 exactly: not clamped.
  wl::training_profile_densities(p, 0.1, n, &m);
  EXPECT_EQ(m.summary().rfind("density profile prof_late.csv at progress 0.1 (iteration 100): ", 0), 0u) << m.summary();
}

// F2: `cdma-vp analyze` showed "zero fraction 0.0000" for a tensor of -0.0 with nothing more;
// it now gives the share of negative zeros (30 +0.0, 40 -0.0 of 100 elements).
TEST(S23Own, AnalyzeGivesTheShareOfNegativeZeros) {
  const std::string f = scratch() + "/neg_analyze.npy";
  write_npy(f, {1, 1, 10, 10}, with_negative_zeros({40}));
  const std::string js = scratch() + "/neg_analyze.json";
  std::string out, err;
  ASSERT_EQ(cli("analyze --codecs zvc --json " + js + " " + f, &out, &err), 0) << err;
  EXPECT_NE(out.find("elements 100  zero fraction 0.3000  negative zeros (-0.0, not zeros to zvc) 0.4000\n"),
            std::string::npos)
      << out;
  const json j = json::parse(slurp(js));
  EXPECT_DOUBLE_EQ(j["tensors"][0]["zero_fraction"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(j["tensors"][0]["negative_zero_fraction"].get<double>(), 0.4);
  // None: no such figure in the text, 0 in the JSON.
  write_npy(f, {1, 1, 10, 10}, with_negative_zeros({0}));
  ASSERT_EQ(cli("analyze --codecs zvc --json " + js + " " + f, &out, &err), 0) << err;
  EXPECT_EQ(out.find("negative zeros"), std::string::npos) << out;
  EXPECT_EQ(json::parse(slurp(js))["tensors"][0]["negative_zero_fraction"].get<double>(), 0.0);
}
