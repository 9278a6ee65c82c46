// Fixes of small findings of session 23 (/work/notes/fix-s23.md): breaker s23 #5 (a sweep axis
// over the rate of a codec no run uses is warned of; sweep.png's 0 of a codec rate is tested in
// tests/scripts/test_plot_sweep.py), #7 (--layer-times messages: tests/unit/test_compute_model.cpp),
// own-fix s23's "found, not fixed" (a density-profile name of an in-place entry gets the fused
// hint; -0.0 counted only in offloaded tensors) and new-user trial s23 F6 (real tensors with
// different image counts are a warning). Expected texts and counts are by hand from the files
// the tests write.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/files.h"
#include "workloads/activations/activation_source.h"
#include "workloads/network/network.h"

namespace wl = cdma::workloads;
using cdma::test::cli;
using cdma::test::slurp;
using nlohmann::json;

namespace {

std::string scratch() {
  static const std::string dir = cdma::test::scratch_dir("s23_fix");
  return dir;
}

std::string write(const std::string& name, const std::string& text) {
  return cdma::test::write_text(scratch(), name, text);
}

std::string folder(const std::string& name) {
  const std::string d = scratch() + "/" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

void write_npy(const std::string& path, const std::vector<int>& shape, const std::vector<float>& v) {
  cdma::test::write_npy_f32(path, shape, v);
}

/// input 1x10x10 -> c1 (conv 1x1, ReLU) -> c2 (conv 1x1) -> fc: c1 is offloaded; c2 is the
/// last layer's input (resident, never offloaded).
std::string net100() {
  return write("net100.json", R"({"name": "n100", "input": [1, 10, 10], "layers": [
    {"name": "c1", "type": "conv", "filters": 1, "kernel": 1, "relu": true},
    {"name": "c2", "type": "conv", "filters": 1, "kernel": 1},
    {"name": "fc", "type": "fc", "units": 2}]})");
}

/// `images` images of 100 elements, 1.0 each, except `neg` -0.0 elements at the start of each.
std::vector<float> images_of(int images, int neg = 0) {
  std::vector<float> v;
  for (int n = 0; n < images; ++n)
    for (int e = 0; e < 100; ++e) v.push_back(e < neg ? -0.0f : 1.0f);
  return v;
}

}  // namespace

// Breaker s23 #5: `--codec zvc --grid cdma.codec_decompression_bytes_per_cycle.zlib=1,4,16` ran
// identical rows with no word. Said before running (stderr) and kept in sweep.plan.json.
TEST(S23Fix, SweepAxisOverTheRateOfACodecNoRunUsesIsWarned) {
  const std::string dir = scratch() + "/sw_unused";
  std::filesystem::remove_all(dir);
  std::string out, err;
  ASSERT_EQ(cli("sweep --out " + dir + " --emit-slurm " + dir + ".sh --network synthetic --batch 1 --codec zvc "
                "--grid cdma.codec_decompression_bytes_per_cycle.zlib=1,4,16",
                &out, &err),
            0)
      << err;
  const std::string w =
      "--grid cdma.codec_decompression_bytes_per_cycle.zlib: cdma.codec_decompression_bytes_per_cycle.zlib is the "
      "rate of codec zlib, which no run of the sweep uses (codec zvc): the axis changes nothing and its rows are the "
      "same; sweep the rate of the codec in use, or add codec zlib (--codec zlib or --grid codec=...)";
  EXPECT_NE(err.find("cdma-vp: warning: " + w + "\n"), std::string::npos) << err;
  const json plan = json::parse(slurp(dir + "/sweep.plan.json"));
  ASSERT_TRUE(plan.contains("warnings")) << plan.dump();
  EXPECT_EQ(plan["warnings"], json::array({w}));

  // The compression rate, with a codec axis of none and zvc (none is codec raw: its key is
  // cdma.codec_bytes_per_cycle.raw), under another spelling of the key.
  const std::string dir2 = scratch() + "/sw_unused2";
  std::filesystem::remove_all(dir2);
  ASSERT_EQ(cli("sweep --out " + dir2 + " --emit-slurm " + dir2 + ".sh --network synthetic --batch 1 "
                "--grid codec=none,zvc --grid platform.cdma.codec_bytes_per_cycle.zlib=8,16",
                &out, &err),
            0)
      << err;
  EXPECT_NE(err.find("cdma-vp: warning: --grid platform.cdma.codec_bytes_per_cycle.zlib: cdma.codec_bytes_per_cycle"
                     ".zlib is the rate of codec zlib, which no run of the sweep uses (codec none, zvc): "),
            std::string::npos)
      << err;

  // The codec in use: no warning, no warnings field (and the raw rate with codec none).
  for (const std::string& args : {std::string("--codec zlib --grid cdma.codec_decompression_bytes_per_cycle.zlib=1,4"),
                                  std::string("--grid codec=none,zvc --grid cdma.codec_bytes_per_cycle.raw=8,16")}) {
    const std::string d = scratch() + "/sw_used";
    std::filesystem::remove_all(d);
    ASSERT_EQ(cli("sweep --out " + d + " --emit-slurm " + d + ".sh --network synthetic --batch 1 " + args, &out, &err),
              0)
        << err;
    EXPECT_EQ(err.find("warning"), std::string::npos) << args << ": " << err;
    EXPECT_FALSE(json::parse(slurp(d + "/sweep.plan.json")).contains("warnings")) << args;
  }
}

// own-fix s23: a density-profile name that is an in-place entry of the layer file (relu1 fused
// into c1) got the generic "not a layer" warning, without the hint --layer-times and the name
// map give.
TEST(S23Fix, DensityProfileNameOfAnInPlaceEntryGetsTheFusedHint) {
  const wl::network n = wl::make_network(write("inplace.json", R"({"name": "inplace", "input": [1, 10, 10], "layers": [
    {"name": "c1", "type": "conv", "filters": 2, "kernel": 1},
    {"name": "bn1", "type": "bn"},
    {"name": "relu1", "type": "relu"},
    {"name": "c2", "type": "conv", "filters": 2, "kernel": 1, "key": "c2_out"},
    {"name": "drop2", "type": "dropout"},
    {"name": "fc", "type": "fc", "units": 2}]})"),
                                         1);
  const std::string p = write("prof_inplace.csv", "iteration,epoch,layer,zero_fraction\n0,0,relu1,0.5\n0,0,drop2,0.4\n"
                                                  "0,0,fc,0.1\n0,0,conv9,0.3\n");
  wl::density_profile_match m;
  wl::training_profile_densities(p, 1.0, n, &m);
  EXPECT_EQ(m.unknown, (std::vector<std::string>{"relu1", "drop2", "conv9"}));
  ASSERT_EQ(m.fused.size(), 2u);
  EXPECT_EQ(m.warning("inplace"),
            p + ": 3 layer names of the density profile are not layers of network inplace: 'relu1', 'drop2', 'conv9' "
                "(such a layer's curve is used only by its position in the file, for the layers the profile does not "
                "name; expected the network's layer output keys, e.g. its layer names; 'relu1' is an in-place entry "
                "of the layer file fused into layer 'c1', whose output (after it) has the key 'c1': use that key; "
                "'drop2' is an in-place entry of the layer file fused into layer 'c2', whose output (after it) has "
                "the key 'c2_out': use that key)");
  // A plain unknown name: the warning as before, no hint.
  const std::string q = write("prof_plain.csv", "iteration,epoch,layer,zero_fraction\n0,0,c1,0.5\n0,0,conv9,0.3\n");
  wl::training_profile_densities(q, 1.0, n, &m);
  EXPECT_TRUE(m.fused.empty());
  EXPECT_EQ(m.warning("inplace"),
            q + ": 1 layer name of the density profile is not a layer of network inplace: 'conv9' (such a layer's "
                "curve is used only by its position in the file, for the layers the profile does not name; expected "
                "the network's layer output keys, e.g. its layer names)");
}

// own-fix s23: the -0.0 count included held tensors the run never offloads (the resident last
// layer's input; tensors a policy does not offload), which could be warned of.
TEST(S23Fix, NegativeZerosOfTensorsNeverOffloadedAreNotWarned) {
  const wl::network n = wl::make_network(net100(), 1);
  const std::string dir = folder("negzero_resident");
  write_npy(dir + "/c1.npy", {1, 1, 10, 10}, images_of(1));      // no -0.0
  write_npy(dir + "/c2.npy", {1, 1, 10, 10}, images_of(1, 50));  // 50 % -0.0, but c2 stays on the GPU
  wl::npz_activation_source s(dir, wl::real_activation_options{});
  s.validate(n);
  EXPECT_TRUE(s.warnings().empty()) << s.warnings()[0];
  // c1 with 5 % -0.0 under a policy that does not offload it: not counted; under one that does, warned.
  write_npy(dir + "/c1.npy", {1, 1, 10, 10}, images_of(1, 5));
  wl::real_activation_options o;
  o.offload_keys = std::set<std::string>{};
  wl::npz_activation_source s2(dir, o);
  s2.validate(n);
  EXPECT_TRUE(s2.warnings().empty()) << s2.warnings()[0];
  o.offload_keys = std::set<std::string>{"c1"};
  wl::npz_activation_source s3(dir, o);
  s3.validate(n);
  ASSERT_EQ(s3.warnings().size(), 1u);
  EXPECT_EQ(s3.warnings()[0].rfind(dir + ": 5.0 % of the elements of tensor 'c1' are negative zeros (-0.0)", 0), 0u)
      << s3.warnings()[0];
}

// New-user trial s23 F6: tensors holding different numbers of images (5 for one, 3 for the
// others) were cut to the smallest silently; usually a bad dump.
TEST(S23Fix, TensorsWithDifferentImageCountsAreAWarning) {
  const wl::network n = wl::make_network(net100(), 8);
  const std::string dir = folder("mixed_n");
  write_npy(dir + "/c1.npy", {5, 1, 10, 10}, images_of(5));
  write_npy(dir + "/c2.npy", {3, 1, 10, 10}, images_of(3));
  const std::string w = dir + ": its tensors hold different numbers of images (N, the first axis): 5 images in 'c1'; "
                              "3 images in 'c2'. Only the first 3 images of each tensor are used (the smallest "
                              "count); unequal counts usually mean a bad dump (tensors saved from different batches or "
                              "steps): save every tensor from the same images";
  {
    wl::npz_activation_source s(dir, wl::real_activation_options{});
    s.validate(n);
    EXPECT_EQ(s.images_in_file(), 3);
    EXPECT_EQ(s.warnings(), std::vector<std::string>{w});
  }
  // Renamed by a name map: the file's name, with the layer key.
  std::filesystem::rename(dir + "/c1.npy", dir + "/stem.npy");
  {
    wl::real_activation_options o;
    o.name_map["stem"] = "c1";
    wl::npz_activation_source s(dir, o);
    s.validate(n);
    ASSERT_EQ(s.warnings().size(), 1u);
    EXPECT_NE(s.warnings()[0].find(": 5 images in 'stem' (layer key 'c1'); 3 images in 'c2'."), std::string::npos)
        << s.warnings()[0];
  }
  std::filesystem::rename(dir + "/stem.npy", dir + "/c1.npy");
  // Several sources: each source with unequal counts is named (B: 2 and 1); equal ones are not.
  const std::string a = folder("mixed_a"), b = folder("mixed_b");
  write_npy(a + "/c1.npy", {1, 1, 10, 10}, images_of(1));
  write_npy(a + "/c2.npy", {1, 1, 10, 10}, images_of(1));
  write_npy(b + "/c1.npy", {1, 1, 10, 10}, images_of(1));
  write_npy(b + "/c2.npy", {2, 1, 10, 10}, images_of(2));
  {
    wl::npz_activation_source s(std::vector<std::string>{a, b}, wl::real_activation_options{});
    s.validate(n);
    EXPECT_EQ(s.images_in_file(), 2);  // 1 + 1
    EXPECT_EQ(s.warnings(),
              std::vector<std::string>{b + ": its tensors hold different numbers of images (N, the first axis): 2 "
                                           "images in 'c2'; 1 image in 'c1'. Only the first 1 image of each tensor is "
                                           "used (the smallest count); unequal counts usually mean a bad dump (tensors "
                                           "saved from different batches or steps): save every tensor from the same "
                                           "images"});
  }
  // Equal counts: none.
  write_npy(dir + "/c1.npy", {3, 1, 10, 10}, images_of(3));
  wl::npz_activation_source s(dir, wl::real_activation_options{});
  s.validate(n);
  EXPECT_TRUE(s.warnings().empty());
}

// F6 through the command line: on standard error and in the JSON's warnings, like the other
// input warnings.
TEST(S23Fix, ImageCountWarningReachesTheReportAndJson) {
  const std::string dir = folder("mixed_cli");
  write_npy(dir + "/c1.npy", {5, 1, 10, 10}, images_of(5));
  write_npy(dir + "/c2.npy", {3, 1, 10, 10}, images_of(3));
  const std::string js = scratch() + "/mixed.json";
  std::string out, err;
  ASSERT_EQ(cli("run --network " + net100() + " --batch 8 --steps oracle -q --activations " + dir + " --json " + js,
                &out, &err),
            0)
      << err;
  const std::string w = dir + ": its tensors hold different numbers of images (N, the first axis): 5 images in 'c1'; "
                              "3 images in 'c2'.";
  EXPECT_NE(err.find("cdma-vp: warning: " + w), std::string::npos) << err;
  const json j = json::parse(slurp(js));
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"];
  EXPECT_EQ(j["warnings"][0].get<std::string>().rfind(w, 0), 0u) << j["warnings"];
}
