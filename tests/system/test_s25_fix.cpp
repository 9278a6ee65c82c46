// Fixes of new-user trial s25 (/work/notes/trial-explore-s25.md): F1 the GPU DRAM among what
// bounds the transfers, F2 a --param pcie.cpl_bytes / pd_credits kept whatever its place
// beside pcie.gen / lanes (run and sweep), F6 no "spilled ... peak 0.00 GB" when nothing was
// spilled, F7 the single-value rules (pcie.lanes 6, ...) refused naming --param / the file.
// (F5, the plot legend: tests/scripts/test_plot_sweep.py.) Expected values by hand from the
// model's parameters (docs/pcie.md: measured-host calibration 192 posted data credits per Gen3
// x16 rate, 64-B completions up to Gen4 and 128 B from Gen5) or from the run's own JSON figures.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "platform/config.h"
#include "support/cli.h"
#include "support/files.h"

using cdma::test::cli;
using cdma::test::slurp;
using nlohmann::json;
namespace cp = cdma::platform;

namespace {

std::string scratch() {
  static const std::string dir = cdma::test::scratch_dir("s25_fix");
  return dir;
}

/// The PCIe link of the effective configuration a run wrote (FILE.config.json).
cdma::pcie::link_params link_of(const std::string& config_json) {
  return cp::load_config_file(config_json).pcie;
}

const char* quick = " --network synthetic --batch 1 --steps oracle -q";

}  // namespace

// ---- F2: a given pcie.cpl_bytes / pcie.pd_credits is kept, whatever the order ----------------

TEST(s25_fix, run_keeps_a_given_completion_size_and_credit_count_in_either_order) {
  // titanx-gen3 (measured-host Gen3 x16): 64-B completions, 192 posted data credits. Gen5 x16
  // re-derives 128 B and 4 x 192 = 768 credits, unless the value was given: 64 B and 192 are
  // the old calibration, which a pcie.gen given after them replaced (new-user trial s25 F2).
  const std::string j = scratch() + "/run.json", c = scratch() + "/run.config.json";
  for (const std::string params : {" --param pcie.cpl_bytes=64B --param pcie.pd_credits=192 --param pcie.gen=5",
                                   " --param pcie.gen=5 --param pcie.cpl_bytes=64B --param pcie.pd_credits=192",
                                   " --param pcie.cpl_bytes=64B --param pcie.gen=5 --param pcie.pd_credits=192"}) {
    std::string out, err;
    ASSERT_EQ(cli("run" + std::string(quick) + params + " --json " + j, &out, &err), 0) << err;
    const auto l = link_of(c);
    EXPECT_EQ(l.gen, 5) << params;
    EXPECT_EQ(l.cpl_bytes, 64u) << params;  // was 128 when cpl_bytes came first
    EXPECT_EQ(l.pd_credits, 192u) << params;  // was 768 when pd_credits came first
  }
  // Not given: the calibration still follows the link (Gen5 x8 = Gen4 x16 rate: 384 credits).
  std::string err;
  ASSERT_EQ(cli("run" + std::string(quick) + " --param pcie.lanes=8 --param pcie.gen=5 --json " + j, nullptr, &err), 0)
      << err;
  EXPECT_EQ(link_of(c).cpl_bytes, 128u);
  EXPECT_EQ(link_of(c).pd_credits, 384u);
  // A pcie.preset given after a link value no longer replaces it (it is applied first, as in a
  // file): x8 on the spec-ideal Gen4 preset.
  ASSERT_EQ(cli("run" + std::string(quick) + " --param pcie.lanes=8 --param pcie.preset=gen4x16 --json " + j, nullptr,
                &err), 0) << err;
  EXPECT_EQ(link_of(c).gen, 4);
  EXPECT_EQ(link_of(c).lanes, 8);
  // Of one key given twice the last still wins.
  ASSERT_EQ(cli("run" + std::string(quick) + " --param pcie.cpl_bytes=128B --param pcie.gen=4 --param "
                "pcie.cpl_bytes=64B --json " + j, nullptr, &err), 0) << err;
  EXPECT_EQ(link_of(c).cpl_bytes, 64u);
}

TEST(s25_fix, a_sweep_keeps_a_passed_completion_size_beside_a_gen_axis) {
  // The trial's sweep: --grid pcie.gen=4,5 --param pcie.cpl_bytes=64B --param pcie.lanes=8 ran
  // its Gen5 row with 128-B completions (the passed options come before the grid values).
  const std::string dir = scratch() + "/sweep";
  std::system(("rm -rf " + dir).c_str());
  std::string out, err;
  ASSERT_EQ(cli("sweep --jobs 1 --no-plot --grid pcie.gen=4,5 --param pcie.cpl_bytes=64B --param pcie.lanes=8" +
                std::string(quick) + " --out " + dir, &out, &err), 0) << out << err;
  for (int k = 0; k < 2; ++k) {
    const auto l = link_of(dir + "/run_" + std::to_string(k) + ".config.json");
    EXPECT_EQ(l.gen, 4 + k);
    EXPECT_EQ(l.lanes, 8);
    EXPECT_EQ(l.cpl_bytes, 64u) << "run " << k;  // run_1 had 128
    // Not given: Gen4 x8 and Gen5 x8 calibrations, 192 x (16 / 8.0 x 8 / 16) = 192 and 384.
    EXPECT_EQ(l.pd_credits, k == 0 ? 192u : 384u) << "run " << k;
  }
  // The same with the credits given (192 = Gen3 x16's calibration) and a Gen3 / Gen5 axis at x16:
  // Gen5 x16 would re-derive 768 credits and 128 B.
  std::system(("rm -rf " + dir).c_str());
  ASSERT_EQ(cli("sweep --jobs 1 --no-plot --grid pcie.gen=3,5 --param pcie.pd_credits=192 --param pcie.cpl_bytes=64B" +
                std::string(quick) + " --out " + dir, &out, &err), 0) << out << err;
  for (int k = 0; k < 2; ++k) {
    const auto l = link_of(dir + "/run_" + std::to_string(k) + ".config.json");
    EXPECT_EQ(l.gen, k == 0 ? 3 : 5);
    EXPECT_EQ(l.cpl_bytes, 64u) << "run " << k;
    EXPECT_EQ(l.pd_credits, 192u) << "run " << k;
  }
  // sweep --merge checks the runs against the plan with the same order: all ok.
  ASSERT_EQ(cli("sweep --merge " + dir + " --no-plot", &out, &err), 0) << out << err;
  EXPECT_NE(out.find("(2 ok)"), std::string::npos) << out;
  std::system(("rm -rf " + dir).c_str());
}

TEST(s25_fix, the_order_of_application_ranks_preset_gen_lanes_first) {
  EXPECT_EQ(cp::application_rank("pcie.preset"), 0);
  EXPECT_EQ(cp::application_rank("platform.pcie.gen"), 1);
  EXPECT_EQ(cp::application_rank("pcie.lanes"), 2);
  EXPECT_EQ(cp::application_rank("pcie.cpl_bytes"), 3);
  EXPECT_EQ(cp::application_rank("no.such.key"), 3);
}

// ---- F7: single-value rules refused where the value is given --------------------------------

TEST(s25_fix, a_value_outside_its_allowed_set_is_refused_naming_the_option_or_file) {
  struct row { const char* assignment; const char* message; };
  for (const row r : {row{"pcie.lanes=6", "pcie.lanes = \"6\": expected 1, 2, 4, 8, 12, 16 or 32"},
                      row{"pcie.rcb=96B", "pcie.rcb = \"96B\": expected 64 or 128"},
                      row{"pcie.mps=384B", "pcie.mps = \"384B\": expected a power of two in [128, 4096]"},
                      row{"pcie.mrrs=384B", "pcie.mrrs = \"384B\": expected a power of two in [128, 4096]"},
                      row{"cdma.window=66B", "cdma.window = \"66B\": expected a multiple of 4 bytes"}}) {
    std::string out, err;
    EXPECT_EQ(cli("run" + std::string(quick) + " --param " + r.assignment, &out, &err), 2) << r.assignment;
    EXPECT_NE(err.find(std::string("cdma-vp: --param: ") + r.message + "\n"), std::string::npos) << err;
  }
  // In a file: named by the file, the value as written there.
  const std::string f = cdma::test::write_text(scratch(), "lanes6.json", R"({"pcie": {"lanes": 6}})");
  std::string err;
  EXPECT_EQ(cli("run -q --config " + f, nullptr, &err), 2);
  EXPECT_NE(err.find(f + ": pcie.lanes = 6: expected 1, 2, 4, 8, 12, 16 or 32"), std::string::npos) << err;
  // A grid value: named by --grid, before anything runs.
  const std::string dir = scratch() + "/lanes_sweep";
  std::system(("rm -rf " + dir).c_str());
  EXPECT_EQ(cli("sweep --no-plot --grid pcie.lanes=8,6" + std::string(quick) + " --out " + dir, nullptr, &err), 2);
  EXPECT_NE(err.find("--grid: pcie.lanes = \"6\": expected 1, 2, 4, 8, 12, 16 or 32"), std::string::npos) << err;
  // The value stays refused in a configuration built in code (validate()).
  cp::platform_config c = cp::preset("titanx-gen3");
  c.pcie.lanes = 6;
  EXPECT_THROW(cp::validate(c), cp::config_error);
}

// ---- F6: nothing spilled, no "peak 0.00 GB" ------------------------------------------------

TEST(s25_fix, a_spill_file_nothing_reached_says_nothing_spilled) {
  std::string out, err;
  ASSERT_EQ(cli("run" + std::string(quick) + " --param host_mem.spill=on", &out, &err), 0) << err;
  EXPECT_NE(out.find("; host memory spill file (host_mem.spill=on): nothing spilled\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("spilled to a file"), std::string::npos) << out;
  // Without a spill file: no word of it.
  ASSERT_EQ(cli("run" + std::string(quick) + " --param host_mem.spill=off", &out, &err), 0) << err;
  EXPECT_EQ(out.find("spill"), std::string::npos) << out;
}

// ---- F1: the GPU DRAM among the bounds ------------------------------------------------------

TEST(s25_fix, a_slow_gpu_dram_bounds_the_transfers) {
  // GPU memory of 10 GB/s (bus model, 90 % efficiency: at most 9 GB/s) below the link's
  // 12.9 GB/s of MWr payload: the engine reads every offloaded activation byte from it, so its
  // share is the activation rate over 10 GB/s, above PCIe's (vDNN: the same bytes over 12.9
  // GB/s; cDMA: fewer, compressed) and host memory's (25.6 GB/s). It was not weighed and the
  // line said PCIe (new-user trial s25 F1).
  const std::string j = scratch() + "/dram.json";
  std::string out, err;
  ASSERT_EQ(cli("run --network synthetic --batch 1 --steps vdnn,cdma -q --param gpu_mem.model=bus --param "
                "'gpu_mem.peak_bandwidth=10 GB/s' --json " + j, &out, &err), 0) << err;
  const json tb = json::parse(slurp(j))["transfer_bounds"];
  for (const char* step : {"vdnn", "cdma"})
    for (const char* dir : {"offload", "prefetch"}) {
      const json& d = tb[step][dir];
      EXPECT_EQ(d["bound"], "GPU DRAM") << step << " " << dir << " " << d.dump();
      const double act = d["activation_GBps"].get<double>(), share = d["share_of_peak"]["GPU DRAM"].get<double>();
      EXPECT_NEAR(share, act / 10.0, 1e-12) << d.dump();
      EXPECT_LE(share, 0.9 + 1e-9) << d.dump();  // the bus model's efficiency
      EXPECT_GT(share, 0.5) << d.dump();
    }
  EXPECT_NE(out.find("GPU DRAM"), std::string::npos) << out;
  EXPECT_NE(out.find("(bound: GPU DRAM)\n  prefetch: "), std::string::npos) << out;
}

TEST(s25_fix, the_default_gpu_dram_share_is_small_and_counts_the_kernels_traffic) {
  // titanx-gen3's 336 GB/s GDDR5: the share is the activation rate over 336 GB/s, far below
  // PCIe's, which stays the bound.
  const std::string j = scratch() + "/dram_default.json";
  std::string out, err;
  ASSERT_EQ(cli("run --network synthetic --batch 1 --steps vdnn,cdma -q --json " + j, &out, &err), 0) << err;
  json r = json::parse(slurp(j));
  for (const char* step : {"vdnn", "cdma"}) {
    const json& d = r["transfer_bounds"][step]["offload"];
    EXPECT_EQ(d["bound"], "PCIe d2h") << d.dump();
    EXPECT_NEAR(d["share_of_peak"]["GPU DRAM"].get<double>(), d["activation_GBps"].get<double>() / 336.0, 1e-12);
  }
  // With the kernels' DRAM traffic: the share adds their bytes during the transfers, so it lies
  // between the engine's alone (activation rate / 336 GB/s) and the engine's plus every kernel
  // byte of the step over the transfer time (the layers' offload_s summed).
  ASSERT_EQ(cli("run --network synthetic --batch 1 --steps cdma -q --param gpu.kernel_traffic=true --json " + j, &out,
                &err), 0) << err;
  r = json::parse(slurp(j));
  const json& d = r["transfer_bounds"]["cdma"]["offload"];
  double off_s = 0, act_bytes = 0, kernel_bytes = 0;
  for (const json& l : r["layers"]) {
    kernel_bytes += l["dram"]["cdma"]["kernel_bytes"].get<double>();
    if (l["offload_s"].is_null()) continue;
    off_s += l["offload_s"].get<double>();
    act_bytes += l["bytes"].get<double>();
  }
  ASSERT_GT(kernel_bytes, 0.0);
  const double share = d["share_of_peak"]["GPU DRAM"].get<double>();
  EXPECT_NEAR(d["activation_GBps"].get<double>(), act_bytes / off_s / 1e9, 1e-6 * d["activation_GBps"].get<double>());
  EXPECT_GT(share, act_bytes / off_s / 336e9 * (1 + 1e-9)) << d.dump();
  EXPECT_LE(share, (act_bytes + kernel_bytes) / off_s / 336e9) << d.dump();
}
