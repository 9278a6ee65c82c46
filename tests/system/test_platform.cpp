// System tests: the whole platform (GPU memory, host memory, PCIe link, cDMA engine, vDNN
// runtime) running training steps end to end.
#include <gtest/gtest.h>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include "platform/outputs.h"
#include "platform/platform.h"
#include "platform/report.h"
#include "support/sc_fixture.h"

using cdma::platform::platform_config;

class platform_test : public cdma::test::sc_fixture {};

namespace {
/// The message of the E that run(cfg) must throw ("" and a test failure if it does not).
template <typename E = std::exception>
std::string run_error(const platform_config& cfg) {
  try {
    cdma::platform::run(cfg);
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}
}  // namespace

TEST_F(platform_test, small_synthetic_network_runs_end_to_end_bit_exact) {
  platform_config cfg;
  cfg.network = "synthetic";  // 4 conv layers, 16..128 channels, 32x32
  cfg.batch = 2;
  cfg.synthetic_density = 0.3;
  const auto rep = cdma::platform::run(cfg);

  ASSERT_EQ(rep.net.layers.size(), 4u);
  // Every offloaded tensor (all but the last layer's input) came back and was compared, in
  // both the vDNN and the cDMA step.
  std::uint64_t offloaded = 0;
  for (std::size_t i = 0; i + 1 < rep.net.layers.size(); ++i)
    offloaded += rep.net.layers[i].offload.elements() * 4;
  EXPECT_EQ(rep.vdnn.result.verified_bytes, offloaded);
  EXPECT_EQ(rep.cdma.result.verified_bytes, offloaded);
  EXPECT_EQ(rep.mismatched_bytes(), 0u);
  EXPECT_TRUE(rep.vdnn.result.errors.empty());
  EXPECT_TRUE(rep.cdma.result.errors.empty());
  EXPECT_TRUE(rep.ok());

  const auto to = rep.oracle.result.step, tv = rep.vdnn.result.step, tc = rep.cdma.result.step;
  EXPECT_LE(to, tc);
  EXPECT_LE(tc, tv);
  // The oracle step is exactly the sum of the compute times (no transfers, no stalls).
  cdma::ps_t sum = 0;
  for (const auto& t : rep.times) sum += t.forward + t.backward;
  EXPECT_EQ(to, sum);

  // vDNN moves every offloaded byte each way; layer 0's input (the dense image) cannot shrink.
  EXPECT_EQ(rep.vdnn.d2h.payload_bytes, offloaded);
  EXPECT_EQ(rep.vdnn.h2d.payload_bytes, offloaded);
  EXPECT_LT(rep.cdma.d2h.payload_bytes, rep.vdnn.d2h.payload_bytes);
  EXPECT_EQ(rep.cdma.d2h.payload_bytes, rep.cdma.h2d.payload_bytes);
  // At 30 % nonzero, ZVC moves 1 + 32 * 0.3 = 10.6 words per 32 (ratio 3.02x) for the
  // synthetic layers; the dense image (layer 0) and the metadata keep the total below that.
  EXPECT_GT(rep.compression_ratio(), 1.5);
  EXPECT_LT(rep.compression_ratio(), 32.0 / (1 + 32 * 0.3));
}

TEST_F(platform_test, json_has_the_documented_keys) {
  platform_config cfg;
  cfg.network = "synthetic";
  cfg.batch = 1;
  const auto rep = cdma::platform::run(cfg);
  const auto j = cdma::platform::to_json(rep);
  for (const char* k : {"oracle", "vdnn", "cdma"}) EXPECT_TRUE(j["step_time_s"].contains(k)) << k;
  EXPECT_TRUE(j.contains("compression_ratio"));
  EXPECT_EQ(j["verified_bytes"].get<std::uint64_t>(), rep.verified_bytes());
  ASSERT_EQ(j["layers"].size(), 4u);
  for (const char* k : {"name", "shape", "bytes", "zero_fraction", "compressed_bytes", "ratio",
                        "offload_s", "prefetch_s", "forward_s", "backward_s", "stall_s"})
    EXPECT_TRUE(j["layers"][0].contains(k)) << k;
  EXPECT_DOUBLE_EQ(j["step_time_s"]["oracle"].get<double>(), cdma::ps_to_s(rep.oracle.result.step));
}

TEST_F(platform_test, codec_none_moves_raw_windows_plus_metadata) {
  platform_config cfg;
  cfg.network = "synthetic";
  cfg.batch = 1;
  cfg.codec = "none";
  const auto rep = cdma::platform::run(cfg);
  EXPECT_TRUE(rep.ok());
  // Every window is stored raw: data bytes equal the offloaded bytes; metadata adds 8 B per
  // 4 KiB window, so the ratio is 4096 / 4104 for whole windows.
  EXPECT_EQ(rep.cdma.d2h.payload_bytes - rep.vdnn.d2h.payload_bytes,
            [&] {
              std::uint64_t meta = 0;
              for (const auto& l : rep.cdma.result.layers) meta += l.meta_bytes;
              return meta;
            }());
  EXPECT_LT(rep.compression_ratio(), 1.0);
  EXPECT_GT(rep.compression_ratio(), 4096.0 / 4104.0 - 1e-3);
}

TEST_F(platform_test, bad_inputs_name_the_problem) {
  platform_config cfg;
  cfg.network = "no_such_net";
  {
    const std::string m = run_error(cfg);
    EXPECT_NE(m.find("no_such_net"), std::string::npos) << m;
  }
  cfg.network = "synthetic";
  cfg.codec = "lzw";
  EXPECT_THROW(cdma::platform::run(cfg), std::exception);
  cfg.codec = "zvc";
  cfg.activations = "/nonexistent/acts.npz";
  {
    const std::string m = run_error(cfg);
    EXPECT_NE(m.find("/nonexistent/acts.npz"), std::string::npos) << m;
  }
}

TEST_F(platform_test, npz_that_does_not_match_the_network_is_refused) {
  platform_config cfg;
  cfg.network = "synthetic";  // keys syn_1..: the InceptionV3 sample has none of them
  cfg.activations = cdma::platform::default_activations_path();
  {
    const std::string m = run_error(cfg);
    EXPECT_NE(m.find("syn_1"), std::string::npos) << m;
    EXPECT_NE(m.find("chelsea.npz"), std::string::npos) << m;
  }
}

TEST_F(platform_test, synthetic_options_replace_the_default_sample_and_contradict_a_named_file) {
  // InceptionV3 uses the shipped real sample by default; --density asks for synthetic data.
  platform_config cfg;
  cfg.network = "inception_v3";
  cfg.batch = 1;
  cfg.steps = "oracle";
  cfg.synthetic_density = 0.3;
  const auto rep = cdma::platform::run(cfg);
  EXPECT_EQ(rep.activations, "synthetic: density 0.3 (independent zeros), seed 1") << rep.activations;
  // With an activations file named as well, the run is refused naming both.
  cfg.activations = cdma::platform::default_activations_path();
  cfg.seed = 7;
  {
    const std::string m = run_error<std::invalid_argument>(cfg);
    EXPECT_NE(m.find("chelsea.npz"), std::string::npos) << m;
    EXPECT_NE(m.find("density, seed"), std::string::npos) << m;
  }
}

TEST_F(platform_test, a_subset_of_steps_runs_only_those) {
  platform_config cfg;
  cfg.network = "synthetic";
  cfg.batch = 2;
  cfg.steps = "cdma";
  const auto rep = cdma::platform::run(cfg);
  EXPECT_FALSE(rep.has_step("oracle"));
  EXPECT_FALSE(rep.has_step("vdnn"));
  ASSERT_TRUE(rep.has_step("cdma"));
  std::uint64_t offloaded = 0;
  for (std::size_t i = 0; i + 1 < rep.net.layers.size(); ++i) offloaded += rep.net.layers[i].offload.bytes();
  EXPECT_EQ(rep.cdma.result.verified_bytes, offloaded);
  EXPECT_EQ(rep.vdnn.result.verified_bytes, 0u);
  EXPECT_TRUE(rep.ok());
  const auto j = cdma::platform::to_json(rep);
  EXPECT_EQ(j["steps"], nlohmann::json::array({"cdma"}));
  EXPECT_FALSE(j.contains("speedup_cdma_over_vdnn"));
  // The cDMA step alone takes the same simulated time as after the other two steps, up to the
  // state those leave behind (DRAM refresh phase and open rows; measured: 1.4 ns of 249 us).
  platform_config all = cfg;
  all.steps = "oracle,vdnn,cdma";
  cdma::test::reset_systemc_context();
  EXPECT_NEAR(static_cast<double>(cdma::platform::run(all).cdma.result.step),
              static_cast<double>(rep.cdma.result.step), 1e-4 * static_cast<double>(rep.cdma.result.step));

  for (const char* bad : {"", "cdma,vdnn", "oracle,oracle", "fast"}) {
    platform_config b = cfg;
    b.steps = bad;
    EXPECT_THROW(cdma::platform::run(b), std::invalid_argument) << bad;
  }
}

TEST_F(platform_test, gpu_memory_too_small_for_the_slots_is_refused_naming_the_key) {
  platform_config cfg;
  cfg.network = "synthetic";  // largest tensor at batch 32: 32x64x32x32 fp32 = 8 MiB
  cfg.gpu_mem.size_bytes = 1 << 20;
  {
    const std::string m = run_error<std::invalid_argument>(cfg);
    EXPECT_NE(m.find("gpu_mem.size"), std::string::npos) << m;
  }
}

TEST_F(platform_test, an_output_that_cannot_be_written_completely_is_an_error_naming_it) {
  std::ofstream f("/dev/full");
  ASSERT_TRUE(f.good());
  f << std::string(1 << 16, 'x');  // more than the stream buffer holds
  try {
    cdma::platform::close_checked(f, "/dev/full", "--csv");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--csv /dev/full: write failed"), std::string::npos) << e.what();
  }
}

// The shipped real data of the two other networks: the Fashion-MNIST files lack the pool
// outputs (computed from the conv outputs), the MobileNetV2 files lack the 17 linear
// bottleneck outputs (an error naming them, or dense data with missing_activations = dense).
// (One simulation per test: a SystemC context elaborates once.)
TEST_F(platform_test, shipped_fmnist_activations_run_with_computed_pool_outputs) {
  platform_config cfg;
  cfg.steps = "cdma";
  cfg.network = "fmnist_cnn";
  cfg.batch = 16;
  cfg.activations = std::string(CDMA_SHARED_DATA_DIR) + "/activations/fmnist_cnn/iter1404.npz";
  const auto rep = cdma::platform::run(cfg);
  EXPECT_TRUE(rep.ok());
  EXPECT_NE(rep.activations.find("16 distinct images"), std::string::npos) << rep.activations;
  EXPECT_NE(rep.activations.find("pooling tensors of the file: pool1, pool2, pool3"), std::string::npos)
      << rep.activations;
  EXPECT_GT(rep.compression_ratio(), 1.5);
}

namespace {
/// The cDMA step of MobileNetV2 at batch 1 on the shipped chelsea.npz (35 ReLU6 outputs).
platform_config mobilenet_on_shipped_data() {
  platform_config cfg;
  cfg.steps = "cdma";
  cfg.network = "mobilenet_v2";
  cfg.batch = 1;
  cfg.activations = std::string(CDMA_SHARED_DATA_DIR) + "/activations/mobilenet_v2/chelsea.npz";
  return cfg;
}
}  // namespace

TEST_F(platform_test, shipped_mobilenet_activations_lack_tensors_error_names_them) {
  platform_config cfg = mobilenet_on_shipped_data();
  {
    const std::string m = run_error(cfg);
    EXPECT_NE(m.find("'expanded_conv_project_BN'"), std::string::npos) << m;
    EXPECT_NE(m.find("17 of 51"), std::string::npos) << m;
    EXPECT_NE(m.find("--missing-activations dense"), std::string::npos) << m;
  }
  cfg.missing_activations = "synthetic";
  const std::string m = run_error(cfg);
  EXPECT_NE(m.find("missing_activations"), std::string::npos) << m;
}

TEST_F(platform_test, shipped_mobilenet_activations_run_with_dense_missing_tensors) {
  platform_config cfg = mobilenet_on_shipped_data();
  cfg.missing_activations = "dense";
  const auto rep = cdma::platform::run(cfg);
  EXPECT_TRUE(rep.ok());
  EXPECT_NE(rep.activations.find("17 tensors not in the file produced as dense synthetic data"), std::string::npos)
      << rep.activations;
}

// Without a cDMA step nothing is compressed: the summary says so (it printed "compression
// ratio (metadata included): 1.000x"), the JSON has null for the ratio and the per-layer
// compressed size and ratio (the keys stay), stats has no compression_ratio, and the per-layer
// CSV leaves those cells empty while its size and kernel times come from the step that ran
// (they were 0).
TEST_F(platform_test, without_a_cdma_step_no_compression_ratio_is_reported) {
  platform_config cfg;
  cfg.network = "synthetic";
  cfg.batch = 1;
  cfg.synthetic_density = 0.3;
  for (const char* steps : {"oracle", "oracle,vdnn"}) {
    cfg.steps = steps;
    cdma::test::reset_systemc_context();
    const auto rep = cdma::platform::run(cfg);
    std::ostringstream text;
    cdma::platform::print_summary(text, rep);
    EXPECT_NE(text.str().find("\ncompression ratio: none, no cDMA step ran (steps = " + std::string(steps) + ")\n"),
              std::string::npos) << text.str();
    EXPECT_EQ(text.str().find("1.000x"), std::string::npos) << text.str();
    const auto j = cdma::platform::to_json(rep);
    ASSERT_TRUE(j.contains("compression_ratio"));
    EXPECT_TRUE(j["compression_ratio"].is_null());
    EXPECT_TRUE(j["step_time_s"]["cdma"].is_null());
    EXPECT_FALSE(j["stats"].contains("compression_ratio"));
    ASSERT_EQ(j["layers"].size(), 4u);
    EXPECT_TRUE(j["layers"][0]["compressed_bytes"].is_null());
    EXPECT_TRUE(j["layers"][0]["ratio"].is_null());
    // syn_1 (layer 0's input, the image): 1 x 3 x 32 x 32 floats = 12288 bytes.
    EXPECT_EQ(j["layers"][0]["bytes"], 12288);
    // Zeros are counted by a step that moves data: unknown (null) with the oracle alone (was
    // 0); syn_2 (a post-ReLU tensor at density 0.3) has about 70 % zeros after vDNN.
    const bool oracle_only = std::string(steps) == "oracle";
    EXPECT_EQ(j["layers"][1]["zero_fraction"].is_null(), oracle_only);
    if (!oracle_only) {
      EXPECT_NEAR(j["layers"][1]["zero_fraction"].get<double>(), 0.7, 0.02);
    }
    const std::string csv = ::testing::TempDir() + "cdma_no_cdma_" + std::to_string(::getpid()) + ".csv";
    cdma::platform::write_csv(csv, rep);
    std::ifstream f(csv);
    std::string header, row;
    std::getline(f, header);
    std::getline(f, row);
    std::remove(csv.c_str());
    // layer,offload_key,n,c,h,w,bytes,zero_fraction,compressed_bytes,ratio,forward_s,...
    std::vector<std::string> cells;
    std::stringstream ss(row);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    ASSERT_GT(cells.size(), 10u) << row;
    EXPECT_EQ(cells[6], "12288") << row;
    EXPECT_EQ(cells[7] == "", oracle_only) << row;
    EXPECT_EQ(cells[8], "") << row;
    EXPECT_EQ(cells[9], "") << row;
    const double fwd = cdma::ps_to_s(rep.times[0].forward);  // written with 12 digits
    EXPECT_GT(fwd, 0.0);
    EXPECT_NEAR(std::stod(cells[10]), fwd, 1e-11 * fwd) << row;
  }
  // With the cDMA step the ratio is there as before (a number in all three outputs).
  cfg.steps = "cdma";
  cdma::test::reset_systemc_context();
  const auto rep = cdma::platform::run(cfg);
  std::ostringstream text;
  cdma::platform::print_summary(text, rep);
  EXPECT_NE(text.str().find("compression ratio (metadata included): "), std::string::npos);
  const auto j = cdma::platform::to_json(rep);
  EXPECT_DOUBLE_EQ(j["compression_ratio"].get<double>(), rep.compression_ratio());
  EXPECT_DOUBLE_EQ(j["stats"]["compression_ratio"]["value"].get<double>(), rep.compression_ratio());
  EXPECT_TRUE(j["layers"][0]["ratio"].is_number());
}
