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
  // The GPU DRAM model (gddr5_titanx, LT) broke no timing rule (refresh deadline included),
  // and the report says so in text and JSON.
  EXPECT_TRUE(rep.dram_model);
  EXPECT_EQ(rep.dram_violations, 0u);
  for (const auto* s : {&rep.oracle, &rep.vdnn, &rep.cdma}) EXPECT_EQ(s->dram.timing_violations, 0u);
  {
    std::ostringstream os;
    cdma::platform::print_summary(os, rep);
    EXPECT_NE(os.str().find("GPU DRAM timing-rule violations: 0 "), std::string::npos) << os.str();
    const auto j = cdma::platform::to_json(rep);
    EXPECT_EQ(j.at("dram_timing_violations"), 0);
    EXPECT_EQ(j.at("stats").at("dram.cdma.timing_violations").at("value"), 0.0);
    // 336 GB/s with 12 channels is the Titan X preset (docs/dram.md presets table).
    EXPECT_EQ(j.at("gpu_mem_model"),
              (nlohmann::json{{"used", "dram"}, {"dram_preset", "gddr5_titanx"}, {"bus_reason", nullptr}}));
  }

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

  // Host usage: each step that moves activations (vDNN, cDMA) reads every offloaded tensor
  // once, front to back, in 64 KiB chunks; each chunk was taken once, found ready, being
  // produced or not started. Nothing spilled (a few MB of host memory).
  std::uint64_t chunks = 0;
  for (std::size_t i = 0; i + 1 < rep.net.layers.size(); ++i)
    chunks += (rep.net.layers[i].offload.elements() * 4 + 65535) / 65536;
  const auto& c = rep.host.chunks;
  EXPECT_EQ(c.ready + c.waited + c.by_reader, 2 * chunks);
  EXPECT_EQ(rep.host.produce_threads, 2u);
  EXPECT_FALSE(rep.host.spilled);
  EXPECT_EQ(rep.host.peak_spilled_bytes, 0u);
}

TEST_F(platform_test, a_spilling_host_memory_is_reported_with_its_peak_file_bytes) {
  // Host memory in a file with 1 MiB cached: the cDMA step's offloaded bytes (data and window
  // tables) all sit in host memory at the end of the forward pass, so the file held at least
  // those beyond the cache at once, and at most the runtime's host layout.
  platform_config cfg;
  cfg.network = "synthetic";
  cfg.batch = 64;  // ~7.5 MB moved, well beyond the 1 MiB cache
  cfg.steps = {"cdma"};
  cfg.host_spill = "on";
  cfg.host_mem.spill_options.cache_bytes = 1u << 20;
  const auto rep = cdma::platform::run(cfg);
  ASSERT_TRUE(rep.ok());
  EXPECT_TRUE(rep.host.spilled);
  const std::uint64_t moved = rep.cdma.d2h.payload_bytes;
  EXPECT_GT(moved, 4u << 20);
  EXPECT_GE(rep.host.peak_spilled_bytes + (1u << 20), moved);
  EXPECT_LE(rep.host.peak_spilled_bytes, rep.config.host_mem.size_bytes);
  EXPECT_GT(rep.host.io_requests, 0u);
  EXPECT_GE(rep.host.io_pages, rep.host.io_requests);
  // The summary's host line states the same figures (peak in GB with two decimals, or in MB
  // with one below 0.1 GB: since session 25, when a few MB printed "peak 0.00 GB"; here ~7 MB).
  std::ostringstream os;
  cdma::platform::print_summary(os, rep);
  const std::string text = os.str();
  char peak[32];
  if (rep.host.peak_spilled_bytes < 100'000'000)
    std::snprintf(peak, sizeof peak, "peak %.1f MB, ", rep.host.peak_spilled_bytes / 1e6);
  else
    std::snprintf(peak, sizeof peak, "peak %.2f GB, ", rep.host.peak_spilled_bytes / 1e9);
  EXPECT_NE(text.find("host: activation chunks (64 KiB) taken " + std::to_string(rep.host.chunks.ready) + " ready, "),
            std::string::npos) << text;
  EXPECT_NE(text.find(std::string("host memory spilled to a file: ") + peak + (rep.host.direct_io ? "direct" : "buffered") +
                      " I/O, " + std::to_string(rep.host.io_requests) + " helper requests"),
            std::string::npos) << text;
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
  for (const char* k : {"produce_threads", "chunks", "spilled", "direct_io", "peak_spilled_bytes", "io_requests", "io_pages"})
    EXPECT_TRUE(j["host"].contains(k)) << k;
  for (const char* k : {"ready", "waited", "by_simulation_thread", "stolen"})
    EXPECT_TRUE(j["host"]["chunks"].contains(k)) << k;
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
  cfg.activations = {"/nonexistent/acts.npz"};
  {
    const std::string m = run_error(cfg);
    EXPECT_NE(m.find("/nonexistent/acts.npz"), std::string::npos) << m;
  }
}

TEST_F(platform_test, npz_that_does_not_match_the_network_is_refused) {
  platform_config cfg;
  cfg.network = "synthetic";  // keys syn_1..: the InceptionV3 sample has none of them
  cfg.activations = {cdma::platform::default_activations_path()};
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
  cfg.activations = {cdma::platform::default_activations_path()};
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
  EXPECT_TRUE(j["speedup_cdma_over_vdnn"].is_null());  // the key stays, null without the vDNN step
  // The cDMA step alone takes the same simulated time as after the other two steps, up to the
  // state those leave behind (DRAM refresh phase and open rows). Measured: AT 250.0899 vs
  // 249.9854 us (104.5 ns, 4.2e-4); LT, since it places REFs at the AT channels' due times
  // (session 16), 250.0996 vs 249.9860 us (113.7 ns, 4.5e-4; it was 1.4 ns with refresh only
  // averaged in).
  platform_config all = cfg;
  all.steps = "oracle,vdnn,cdma";
  cdma::test::reset_systemc_context();
  EXPECT_NEAR(static_cast<double>(cdma::platform::run(all).cdma.result.step),
              static_cast<double>(rep.cdma.result.step), 1e-3 * static_cast<double>(rep.cdma.result.step));

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
// bottleneck outputs, the 10 adds' and dense_1 (an error naming them, or dense data with
// missing_activations = dense).
// (One simulation per test: a SystemC context elaborates once.)
TEST_F(platform_test, shipped_fmnist_activations_run_with_computed_pool_outputs) {
  platform_config cfg;
  cfg.steps = "cdma";
  cfg.network = "fmnist_cnn";
  cfg.batch = 16;
  cfg.activations = {std::string(CDMA_SHARED_DATA_DIR) + "/activations/fmnist_cnn/iter1404.npz"};
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
  cfg.activations = {std::string(CDMA_SHARED_DATA_DIR) + "/activations/mobilenet_v2/chelsea.npz"};
  return cfg;
}
}  // namespace

TEST_F(platform_test, shipped_mobilenet_activations_lack_tensors_error_names_them) {
  platform_config cfg = mobilenet_on_shipped_data();
  {
    const std::string m = run_error(cfg);
    EXPECT_NE(m.find("'expanded_conv_project_BN'"), std::string::npos) << m;
    EXPECT_NE(m.find("28 of 64"), std::string::npos) << m;  // tests/unit/vdnn_tensors.py --missing
    EXPECT_NE(m.find("--missing-activations dense"), std::string::npos) << m;
  }
  {
    // Policy conv offloads only what a convolution reads: 17 of its 51 tensors are missing
    // (tests/unit/vdnn_tensors.py FILE --missing NPZ --conv); the rest are never read.
    platform_config conv = cfg;
    conv.policy = "conv";
    const std::string m = run_error(conv);
    EXPECT_NE(m.find("17 of 51"), std::string::npos) << m;
  }
  cfg.missing_activations = "synthetic";
  const std::string m = run_error(cfg);
  EXPECT_NE(m.find("missing_activations"), std::string::npos) << m;
}

// Under policy conv the dense share is a share of the bytes that policy offloads: 17 tensors,
// 8.7 % (policy all: 28 tensors, 11.4 %; tests/unit/vdnn_tensors.py --missing NPZ [--conv]).
TEST_F(platform_test, shipped_mobilenet_dense_share_follows_the_policy) {
  platform_config cfg = mobilenet_on_shipped_data();
  cfg.missing_activations = "dense";
  cfg.policy = "conv";
  const auto rep = cdma::platform::run(cfg);
  EXPECT_TRUE(rep.ok());
  EXPECT_NE(rep.activations.find("17 tensors not in the file produced as dense synthetic data (8.7 % of the "
                                 "offloaded bytes"),
            std::string::npos)
      << rep.activations;
}

// The shipped InceptionV3 sample lacks only dense_1, which no convolution reads: under policy
// conv nothing is missing, so an explicit missing_activations = error runs (it stopped, naming
// dense_1, a tensor the run never offloads), and no tensor is synthetic but the input image.
TEST_F(platform_test, shipped_inception_under_policy_conv_misses_nothing) {
  platform_config cfg;  // inception_v3 on the shipped sample
  cfg.batch = 1;
  cfg.steps = "cdma";
  cfg.policy = "conv";
  cfg.missing_activations = "error";
  const auto rep = cdma::platform::run(cfg);
  EXPECT_TRUE(rep.ok());
  EXPECT_EQ(rep.activations.find("dense synthetic data"), std::string::npos) << rep.activations;
  EXPECT_NE(rep.activations.find("computed by pooling tensors of the files: "), std::string::npos) << rep.activations;
}

// The embedded default (InceptionV3 on the shipped sample, chelsea + coffee, activations not
// given): the sample lacks dense_1 (the Dense(256) ReLU output dense_2 offloads; not derivable), so
// missing_activations "auto" (the default) makes it dense synthetic data, one tensor of
// 256 floats per image; an explicit "error" is kept and the run stops naming it; with an
// activations file named by the user, "auto" means "error".
TEST_F(platform_test, embedded_default_makes_dense_1_dense_only_when_missing_activations_is_auto) {
  platform_config cfg;  // inception_v3, activations not given
  cfg.batch = 1;
  cfg.steps = "cdma";
  EXPECT_EQ(cdma::platform::resolve_missing_activations(cfg), "dense");
  const auto rep = cdma::platform::run(cfg);
  EXPECT_TRUE(rep.ok());
  EXPECT_NE(rep.activations.find("1 tensor not in the files produced as dense synthetic data"), std::string::npos)
      << rep.activations;
  EXPECT_EQ(rep.config.missing_activations, "dense");  // recorded as resolved
  std::ostringstream os;
  cdma::platform::print_summary(os, rep);
  EXPECT_NE(os.str().find("runtime    : LT (loosely timed), vDNN policy all, codec zvc"), std::string::npos)
      << os.str();
  platform_config strict = cfg;
  strict.missing_activations = "error";
  EXPECT_EQ(cdma::platform::resolve_missing_activations(strict), "error");
  const std::string m = run_error(strict);
  EXPECT_NE(m.find("'dense_1'"), std::string::npos) << m;
  platform_config named = cfg;
  named.activations = {cdma::platform::default_activations_path()};
  EXPECT_EQ(cdma::platform::resolve_missing_activations(named), "error");
}

TEST_F(platform_test, shipped_mobilenet_activations_run_with_dense_missing_tensors) {
  platform_config cfg = mobilenet_on_shipped_data();
  cfg.missing_activations = "dense";
  const auto rep = cdma::platform::run(cfg);
  EXPECT_TRUE(rep.ok());
  EXPECT_NE(rep.activations.find("28 tensors not in the file produced as dense synthetic data"), std::string::npos)
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

// A step that did not run has no figures (breaker H5, session 7: they printed 0): "-" in the
// report, null in the JSON (keys kept; stats keys absent), empty CSV cells; with no transfer
// step "verified" is null (it said true for 0 bytes compared). The figures of the steps that
// ran are numbers (a transfer step offloads syn_1, layer 0's 12288-byte input, so its offload
// time is > 0).
TEST_F(platform_test, figures_of_a_step_not_run_are_dash_null_or_empty_never_zero) {
  platform_config cfg;
  cfg.network = "synthetic";
  cfg.batch = 1;
  cfg.synthetic_density = 0.3;
  for (const std::string steps : {"oracle", "cdma", "vdnn,cdma"}) {
    SCOPED_TRACE(steps);
    const bool ro = steps == "oracle", rv = steps.find("vdnn") != std::string::npos,
               rc = steps.find("cdma") != std::string::npos;
    cfg.steps = steps;
    cdma::test::reset_systemc_context();
    const auto rep = cdma::platform::run(cfg);

    // Text: the per-layer table (16 cells a row, none with a space), then the summary lines.
    std::ostringstream os;
    cdma::platform::print_summary(os, rep);
    const std::string text = os.str();
    std::istringstream lines(text);
    std::vector<std::vector<std::string>> rows;
    bool table = false;
    for (std::string l; std::getline(lines, l);) {
      if (l.rfind("layer ", 0) == 0) {
        table = true;
        continue;
      }
      if (!table || rows.size() == 4) continue;
      std::vector<std::string> cells;
      std::istringstream ws(l);
      for (std::string c; ws >> c;) cells.push_back(c);
      rows.push_back(cells);
    }
    ASSERT_EQ(rows.size(), 4u) << text;
    for (std::size_t ri = 0; ri < rows.size(); ++ri) {
      const auto& cells = rows[ri];
      ASSERT_EQ(cells.size(), 16u) << text;
      // 6 fwd ms, 7 bwd ms (every step), 8 vDNN off, 9 vDNN pre, 10 cDMA off, 11 cDMA pre,
      // 12 vDNN stall, 13 cDMA stall, 14 DRAM% and 15 rd GB/s (cDMA step). Offload, prefetch
      // and read bandwidth are "-" for the resident last layer too (as null in the JSON).
      const bool off = ri + 1 < rows.size();
      for (const auto& [col, ran] : {std::pair<int, bool>{6, true}, {7, true}, {8, rv && off}, {9, rv && off},
                                     {10, rc && off}, {11, rc && off}, {12, rv}, {13, rc}, {14, rc},
                                     {15, rc && off}}) {
        const std::string& c = cells[static_cast<std::size_t>(col)];
        if (ran) {
          EXPECT_NE(c.find_first_of("0123456789"), std::string::npos) << col << ": " << c;
          EXPECT_EQ(c.find('-'), std::string::npos) << col << ": " << c;
        } else {
          EXPECT_EQ(c, "-") << col;
        }
      }
    }
    auto pct = [](bool ran) { return ran ? std::string("%") : std::string("-"); };
    {
      const auto at = text.find("GPU DRAM utilisation (oracle / vDNN / cDMA): ");
      ASSERT_NE(at, std::string::npos) << text;
      std::istringstream ws(text.substr(at + 45, text.find(';', at) - at - 45));
      std::string o, s1, v, s2, c;
      ws >> o >> s1 >> v >> s2 >> c;
      EXPECT_EQ(o.substr(o.size() - 1), pct(ro)) << o;
      EXPECT_EQ(v.substr(v.size() - 1), pct(rv)) << v;
      EXPECT_EQ(c.substr(c.size() - 1), pct(rc)) << c;
    }
    for (const auto& [name, ran] : {std::pair<std::string, bool>{"vDNN", rv}, {"cDMA", rc}}) {
      const std::string none = "  " + name + ": - (not simulated, steps = " + steps + ")\n";
      EXPECT_EQ(text.find(none) != std::string::npos, !ran) << text;
      EXPECT_EQ(text.find("  " + name + ": 0.0 MB"), std::string::npos) << text;
    }
    if (ro) {
      EXPECT_NE(text.find("verification: no transfer step simulated (steps = oracle), nothing to compare"),
                std::string::npos) << text;
    } else {
      EXPECT_NE(text.find(rv ? "bytes compared: vDNN " : "bytes compared: cDMA "), std::string::npos) << text;
      EXPECT_EQ(text.find("vDNN 0,"), std::string::npos) << text;
    }

    // JSON, read back through the parser as a user would.
    const auto j = nlohmann::json::parse(cdma::platform::to_json(rep).dump());
    EXPECT_EQ(j["verified"].is_null(), ro) << j["verified"];
    if (!ro) {
      EXPECT_TRUE(j["verified"].get<bool>());
    }
    for (const char* step : {"vdnn", "cdma"}) {
      const bool ran = std::string(step) == "vdnn" ? rv : rc;
      for (const char* dir : {"d2h", "h2d"})
        for (const char* k : {"payload_bytes", "wire_bytes"}) {
          const auto& v = j["pcie"][step][dir][k];
          EXPECT_EQ(v.is_null(), !ran) << step << dir << k;
          if (ran) {
            EXPECT_GT(v.get<double>(), 0.0) << step << dir << k;
          }
        }
    }
    ASSERT_EQ(j["layers"].size(), 4u);
    for (std::size_t li = 0; li < j["layers"].size(); ++li) {
      const auto& l = j["layers"][li];
      // Policy all: every layer but the last (resident) is offloaded in the transfer steps;
      // the offload figures of a layer not offloaded are null too (session 8: they were 0).
      const bool off = li + 1 < j["layers"].size();
      for (const char* k : {"offload_s", "prefetch_s", "stall_s"}) {
        const bool per_offload = std::string(k) != "stall_s";
        ASSERT_TRUE(l.contains(k)) << k;
        EXPECT_EQ(l[k].is_null(), !rc || (per_offload && !off)) << k << " layer " << li;
        ASSERT_TRUE(l["vdnn"].contains(k)) << k;
        EXPECT_EQ(l["vdnn"][k].is_null(), !rv || (per_offload && !off)) << k << " layer " << li;
      }
      EXPECT_EQ(l["compressed_bytes"].is_null(), !rc || !off) << li;
      EXPECT_EQ(l["ratio"].is_null(), !rc || !off) << li;
      EXPECT_TRUE(l["forward_s"].is_number());
      for (const auto& [step, ran] : {std::pair<std::string, bool>{"oracle", ro}, {"vdnn", rv}, {"cdma", rc}})
        for (const char* k : {"fwd_utilisation", "bwd_utilisation", "kernel_bytes", "cdma_read_bytes", "cdma_read_GBps"}) {
          ASSERT_TRUE(l["dram"][step].contains(k)) << step << k;
          // The read bandwidth of the engine: null where the step read nothing of the layer
          // (the oracle never offloads).
          const bool read = std::string(k) == "cdma_read_GBps";
          EXPECT_EQ(l["dram"][step][k].is_null(), !ran || (read && (step == "oracle" || !off))) << step << k;
        }
    }
    EXPECT_EQ(j["layers"][0]["offload_s"].is_number() && j["layers"][0]["offload_s"].get<double>() > 0, rc);
    EXPECT_EQ(j["layers"][0]["vdnn"]["offload_s"].is_number() && j["layers"][0]["vdnn"]["offload_s"].get<double>() > 0,
              rv);
    const auto& st = j["stats"];
    for (const auto& [step, ran] : {std::pair<std::string, bool>{"oracle", ro}, {"vdnn", rv}, {"cdma", rc}}) {
      const std::string p = "layer." + rep.net.layers[0].name;
      EXPECT_EQ(st.contains(p + ".dram_utilisation_fwd." + step), ran) << step;
      EXPECT_EQ(st.contains(p + ".dram_utilisation_bwd." + step), ran) << step;
      EXPECT_EQ(st.contains("dram." + step + ".utilisation"), ran) << step;
      if (step != "oracle") {
        EXPECT_EQ(st.contains(p + ".stall." + step), ran) << step;
        EXPECT_EQ(j["histograms"].contains(step + ".offload_time"), ran) << step;
      }
    }

    // CSV: the cells of a step not run are empty, the others numbers.
    const std::string csv = ::testing::TempDir() + "cdma_not_run_" + std::to_string(::getpid()) + ".csv";
    cdma::platform::write_csv(csv, rep);
    std::ifstream f(csv);
    auto split = [](const std::string& line) {
      std::vector<std::string> cells;
      std::size_t from = 0;
      for (;;) {
        const auto comma = line.find(',', from);
        cells.push_back(line.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        if (comma == std::string::npos) return cells;
        from = comma + 1;
      }
    };
    std::string line;
    std::getline(f, line);
    const auto head = split(line);
    int data_rows = 0;
    while (std::getline(f, line)) {
      const auto cells = split(line);
      ASSERT_EQ(cells.size(), head.size()) << line;
      ++data_rows;
      const bool off = data_rows < 4;  // the last of the 4 layers stays resident
      for (std::size_t k = 0; k < head.size(); ++k) {
        const bool v = head[k].rfind("vdnn_", 0) == 0, c = head[k].rfind("cdma_", 0) == 0;
        if (!v && !c) continue;
        // Offload figures of the resident layer are empty too (session 8: they were 0).
        const bool per_offload = head[k].find("offload_s") != std::string::npos ||
                                 head[k].find("prefetch_s") != std::string::npos ||
                                 head[k].find("read_GBps") != std::string::npos;
        EXPECT_EQ(cells[k].empty(), (v ? !rv : !rc) || (per_offload && !off)) << head[k] << " in " << line;
        if (!cells[k].empty()) {
          EXPECT_GE(std::stod(cells[k]), 0.0) << head[k];
        }
      }
    }
    EXPECT_EQ(data_rows, 4);
    std::remove(csv.c_str());
  }
}

// gpu_mem.model dram whose dram_preset auto matches no preset (336 GB/s is GDDR5's, but with 2
// channels, not 12) falls back to the bus model as documented -- and says so in the report
// and the JSON (re-check s15: the JSON config said "model": "dram" and nothing else did).
TEST_F(platform_test, a_fallback_to_the_bus_model_is_said_with_its_reason) {
  platform_config cfg;
  cfg.network = "synthetic";
  cfg.batch = 1;
  cfg.steps = "oracle";
  cfg.gpu_mem.channels = 2;
  const auto rep = cdma::platform::run(cfg);
  EXPECT_FALSE(rep.dram_model);
  EXPECT_EQ(rep.bus_reason, "dram_preset auto matches no DRAM preset for 336 GB/s with 2 channels");
  std::ostringstream os;
  cdma::platform::print_summary(os, rep);
  EXPECT_NE(os.str().find("GPU DRAM timing-rule violations: n/a (gpu_mem bus model: no DRAM commands; used because "
                          "dram_preset auto matches no DRAM preset for 336 GB/s with 2 channels, docs/dram.md)"),
            std::string::npos)
      << os.str();
  const auto j = cdma::platform::to_json(rep);
  EXPECT_EQ(j.at("gpu_mem_model").at("used"), "bus");
  EXPECT_TRUE(j.at("gpu_mem_model").at("dram_preset").is_null());
  EXPECT_EQ(j.at("gpu_mem_model").at("bus_reason"), rep.bus_reason);
  EXPECT_EQ(j.at("config").at("gpu_mem").at("model"), "dram");  // what was asked for
}
