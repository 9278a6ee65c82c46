// System tests of the approximately-timed platform (issue 6): the whole platform with
// mode = at and a protocol_checker on every connection (check_protocol), against the same job
// loosely timed.
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>
#include "platform/config.h"
#include "platform/platform.h"
#include "support/sc_fixture.h"

using cdma::platform::platform_config;
using cdma::platform::run_report;

namespace {
platform_config small(const char* mode) {
  platform_config cfg;
  cfg.network = "synthetic";  // 4 conv layers, 32x32 (workloads/network)
  cfg.batch = 4;
  cfg.synthetic_density = 0.4;
  cfg.mode = mode;
  cfg.check_protocol = true;
  return cfg;
}
double rel(cdma::ps_t a, cdma::ps_t b) { return std::fabs(double(a) - double(b)) / double(b); }
}  // namespace

class at_platform_test : public cdma::test::sc_fixture {};

TEST_F(at_platform_test, at_run_is_bit_exact_and_checked) {
  const run_report rep = cdma::platform::run(small("at"));  // throws on a protocol violation
  EXPECT_TRUE(rep.ok());
  EXPECT_GT(rep.cdma.result.verified_bytes, 0u);
  EXPECT_GT(rep.protocol_checks, 0u);  // the checkers saw the traffic
  // Every DRAM command re-checked against the timing rules (refresh deadline included).
  EXPECT_TRUE(rep.dram_model);
  EXPECT_EQ(rep.dram_violations, 0u);
  for (const auto* s : {&rep.oracle, &rep.vdnn, &rep.cdma}) {
    EXPECT_EQ(s->dram.timing_violations, 0u);
    EXPECT_LE(s->dram.utilisation, 1.0);
    for (const auto& l : s->dram_layers) {
      EXPECT_LE(l.fwd_utilisation, 1.0);
      EXPECT_LE(l.bwd_utilisation, 1.0);
    }
  }
}

TEST_F(at_platform_test, lt_and_at_step_times_agree_on_a_small_synthetic_network) {
  const run_report lt = cdma::platform::run(small("lt"));
  cdma::test::reset_systemc_context();
  const run_report at = cdma::platform::run(small("at"));
  EXPECT_TRUE(lt.ok());
  EXPECT_TRUE(at.ok());
  EXPECT_EQ(lt.oracle.result.step, at.oracle.result.step);  // no transfers: identical
  EXPECT_LT(rel(at.vdnn.result.step, lt.vdnn.result.step), 0.02);
  EXPECT_LT(rel(at.cdma.result.step, lt.cdma.result.step), 0.02);
  // Same bytes moved: the engine's functional path does not depend on the timing style.
  EXPECT_EQ(at.cdma.d2h.payload_bytes, lt.cdma.d2h.payload_bytes);
  EXPECT_EQ(at.cdma.h2d.payload_bytes, lt.cdma.h2d.payload_bytes);
  for (const auto* r : {&lt, &at}) {
    EXPECT_TRUE(r->dram_model);
    EXPECT_EQ(r->dram_violations, 0u);
  }
}

TEST_F(at_platform_test, a_small_tensor_on_hbm_behind_a_slow_crossbar_streams_in_at_as_in_lt) {
  // Breaker s17 F4: v100-gen3 (64 HBM2 pseudo-channels) answers a small tensor's window reads
  // out of order; AT reserved the 10 GB/s crossbar stage in response order, so a late window 0
  // waited behind up to 31 later windows, no write could start, and the crossbar and the PCIe
  // writes alternated. Hand bounds for the vDNN offload of a 128 KiB tensor (32 windows of
  // 4 KiB) through the 10 GB/s crossbar and the ~12.9 GB/s measured-host posted-write stream:
  // alternating, at most 1 / (1/10 + 1/12.9) = 5.63 GB/s (AT measured 6.33 with its first
  // windows overlapped); overlapped, up to min(10, 12.9) = 10 GB/s. Window-order staging (as
  // LT): above 8 GB/s, and the steps within 1 % of LT (were +12.9 % vDNN, +3.2 % cDMA).
  auto cfg = [](const char* mode) {
    platform_config c = cdma::platform::preset("v100-gen3");
    cdma::platform::apply_override(c, "cdma.xbar_bandwidth=10GB/s");
    c.network = "synthetic";
    c.batch = 1;
    c.mode = mode;
    c.check_protocol = true;
    return c;
  };
  const run_report lt = cdma::platform::run(cfg("lt"));
  cdma::test::reset_systemc_context();
  const run_report at = cdma::platform::run(cfg("at"));
  ASSERT_TRUE(lt.ok());
  ASSERT_TRUE(at.ok());
  EXPECT_LT(rel(at.vdnn.result.step, lt.vdnn.result.step), 0.01);
  EXPECT_LT(rel(at.cdma.result.step, lt.cdma.result.step), 0.01);
  bool seen = false;
  for (const auto& l : at.vdnn.result.layers) {
    if (l.bytes != 128 * 1024 || l.offload == 0) continue;
    seen = true;
    const double GBps = static_cast<double>(l.bytes) / (static_cast<double>(l.offload) * 1e-12) / 1e9;
    EXPECT_GT(GBps, 8.0) << "offload of a 128 KiB tensor";
  }
  EXPECT_TRUE(seen) << "a 128 KiB offloaded tensor (synthetic b1)";
}

TEST_F(at_platform_test, lt_with_checkers_is_time_for_time_the_plain_lt_run) {
  platform_config c = small("lt");
  c.check_protocol = false;
  const run_report plain = cdma::platform::run(c);
  cdma::test::reset_systemc_context();
  c.check_protocol = true;
  const run_report checked = cdma::platform::run(c);
  EXPECT_EQ(plain.cdma.result.step, checked.cdma.result.step);
  EXPECT_EQ(plain.vdnn.result.step, checked.vdnn.result.step);
}

TEST_F(at_platform_test, bad_mode_is_rejected_naming_the_value) {
  platform_config c = small("xt");
  try {
    cdma::platform::run(c);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("xt"), std::string::npos);
  }
}

// cdma-vp compare --json: step times of both modes, their difference, the wall-clock ratio and
// the CPU seconds of each mode (getrusage, issue 6 speed target on a shared machine). Only the
// keys and their consistency are checked (no timing assertion in a test).
TEST(at_compare_cli, json_has_step_times_wall_and_cpu_seconds_of_both_modes) {
  const std::string out = std::string(::testing::TempDir()) + "cdma_cmp_" + std::to_string(::getpid());
  const std::string cmd = std::string(CDMA_VP_EXE) +
                          " compare --network synthetic --batch 2 --param steps=vdnn,cdma --json " +
                          out + ".json >" + out + ".txt 2>&1";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd;
  std::ifstream f(out + ".json");
  const nlohmann::json j = nlohmann::json::parse(f);
  for (const char* m : {"lt", "at"}) {
    EXPECT_GT(j[m]["step_time_s"].get<double>(), 0.0) << m;
    EXPECT_GT(j[m]["wall_s"].get<double>(), 0.0) << m;
    EXPECT_GT(j[m]["cpu_s"].get<double>(), 0.0) << m;
    EXPECT_TRUE(j[m]["ok"].get<bool>()) << m;
  }
  EXPECT_NEAR(j["cpu_ratio_lt_over_at"].get<double>(),
              j["at"]["cpu_s"].get<double>() / j["lt"]["cpu_s"].get<double>(), 1e-9);
  EXPECT_LT(std::fabs(j["diff_pct"]["cdma"].get<double>()), 2.0);
  EXPECT_EQ(j["tolerance_pct"], 2.0);
  EXPECT_EQ(j["beyond_tolerance"], nlohmann::json::array());
  // What was compared is recorded, as in a run's JSON.
  EXPECT_EQ(j["network"], "synthetic");
  EXPECT_EQ(j["batch"], 2);
  EXPECT_EQ(j["activations"].get<std::string>().rfind("synthetic", 0), 0u) << j["activations"];
  EXPECT_EQ(j["config"]["steps"], "vdnn,cdma");
  EXPECT_EQ(j["config"]["mode"], "lt");
  std::ifstream t(out + ".txt");
  const std::string text((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("CPU (user+sys): LT"), std::string::npos) << text;
  EXPECT_NE(text.find("LT vs AT: every step simulated in both within 2 % (the tolerance of docs/validation.md)\n"),
            std::string::npos)
      << text;
  // The oracle step was left out (steps=vdnn,cdma): "-" and null, not 0 (session 8).
  EXPECT_NE(text.find("\noracle                -              -         -\n"), std::string::npos) << text;
  for (const char* m : {"lt", "at"}) EXPECT_TRUE(j[m]["oracle_s"].is_null()) << m;
  EXPECT_TRUE(j["diff_pct"]["oracle"].is_null());
  EXPECT_GT(j["lt"]["vdnn_s"].get<double>(), 0.0);
  std::remove((out + ".json").c_str());
  std::remove((out + ".txt").c_str());
}

// A difference beyond the validated 2 % is said, with the steps and their differences, and
// listed in the JSON (breaker s15 F5: +1047 % was printed without a word). The job: kernel
// DRAM traffic with a 1 ms quantum, whose LT contention estimate is coarse (vDNN -23 % in AT
// against LT when written, -3.4 % since LT books kernel traffic at its own time, 2026-12-01:
// near the 2 %); the check itself is that the note lists exactly
// the steps whose |diff_pct| exceeds 2.
// New-user trial s23 F4: compare --csv lists every offload and prefetch with its LT and AT
// time; the expectation comes from two separate runs' --csv (run --mode lt / --mode at), and
// compare's largest gap (JSON largest_layer_gap) is the largest |AT - LT| of the rows.
TEST(at_compare_cli, csv_lists_every_transfer_in_both_modes) {
  const std::string out = std::string(::testing::TempDir()) + "cdma_cmp_csv_" + std::to_string(::getpid());
  const std::string job = " --network synthetic --batch 2 --param steps=vdnn,cdma";
  auto sh = [](const std::string& c) {
    const int rc = std::system(c.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  const std::string exe = CDMA_VP_EXE;
  ASSERT_EQ(sh(exe + " compare -q" + job + " --csv " + out + ".csv --json " + out + ".json >/dev/null 2>&1"), 0);
  ASSERT_EQ(sh(exe + " run -q --mode lt" + job + " --csv " + out + "_lt.csv >/dev/null 2>&1"), 0);
  ASSERT_EQ(sh(exe + " run -q --mode at" + job + " --csv " + out + "_at.csv >/dev/null 2>&1"), 0);
  auto rows = [](const std::string& path) {
    std::ifstream f(path);
    std::vector<std::vector<std::string>> r;
    for (std::string line; std::getline(f, line);) {
      std::vector<std::string> cells;
      std::stringstream ss(line);
      for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
      if (!line.empty() && line.back() == ',') cells.push_back("");
      r.push_back(cells);
    }
    return r;
  };
  const auto c = rows(out + ".csv"), lt = rows(out + "_lt.csv"), at = rows(out + "_at.csv");
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c[0], (std::vector<std::string>{"step", "layer", "offload_key", "transfer", "bytes", "lt_s", "at_s",
                                             "at_minus_lt_pct"}));
  auto col = [](const std::vector<std::string>& header, const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  std::size_t n = 0;
  double largest = 0;
  for (std::size_t i = 1; i < c.size(); ++i) {
    const auto& r = c[i];
    ASSERT_EQ(r.size(), 8u) << i;
    // The same layer's row in the runs' CSVs (one row per layer, in order).
    const auto find = [&](const std::vector<std::vector<std::string>>& t) {
      for (std::size_t k = 1; k < t.size(); ++k)
        if (t[k][0] == r[1]) return t[k];
      return std::vector<std::string>{};
    };
    const auto a = find(lt), b = find(at);
    ASSERT_FALSE(a.empty()) << r[1];
    const std::string name = r[0] + "_" + r[3] + "_s";  // e.g. cdma_prefetch_s
    EXPECT_EQ(std::stod(r[5]), std::stod(a[col(lt[0], name)])) << r[1] << " " << name;
    EXPECT_EQ(std::stod(r[6]), std::stod(b[col(at[0], name)])) << r[1] << " " << name;
    EXPECT_EQ(r[4], a[col(lt[0], "bytes")]) << r[1];
    EXPECT_EQ(r[2], a[col(lt[0], "offload_key")]) << r[1];
    EXPECT_NEAR(std::stod(r[7]), 100.0 * (std::stod(r[6]) - std::stod(r[5])) / std::stod(r[5]), 1e-9) << r[1];
    largest = std::max(largest, std::fabs(std::stod(r[6]) - std::stod(r[5])));
    ++n;
  }
  // Two steps x two transfers per offloaded layer: every layer of synthetic but the last.
  std::size_t offloaded = 0;
  for (std::size_t k = 1; k < lt.size(); ++k) offloaded += !lt[k][col(lt[0], "cdma_offload_s")].empty();
  EXPECT_EQ(n, 4 * offloaded);
  std::ifstream f(out + ".json");
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_NEAR(std::fabs(j["largest_layer_gap"]["at_s"].get<double>() - j["largest_layer_gap"]["lt_s"].get<double>()),
              largest, 1e-15);
  for (const char* x : {".csv", ".json", "_lt.csv", "_at.csv"}) std::remove((out + x).c_str());
}

TEST(at_compare_cli, a_difference_beyond_the_tolerance_is_named) {
  const std::string out = std::string(::testing::TempDir()) + "cdma_cmp_tol_" + std::to_string(::getpid());
  const std::string cmd = std::string(CDMA_VP_EXE) +
                          // (session 19: the titanx job of this test came within 2 % with the LT
                          // DRAM's gap filling; session 24: its v100-gen3 successor, with
                          // quantum=1ms, too, -3.09 -> -1.12 % with LT's kernel traffic capped
                          // at AT's outstanding requests; session 25: 64-B kernel requests on
                          // v100-gen3, -2.18 / -2.96 -> -0.54 / +0.43 % with the LT DRAM's
                          // reservations split over gaps. With the bus model (a FIFO server, not
                          // the DRAM's gap servers) that job is still beyond: vDNN -2.59 %, cDMA
                          // -3.05 %)
                          " compare --network fmnist_cnn --batch 2 --preset v100-gen3 --param gpu.kernel_traffic=true"
                          " --param gpu.kernel_request=64B --param gpu_mem.model=bus"
                          " --json " + out + ".json >" + out + ".txt 2>&1";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd;  // a gap is not a failure
  std::ifstream f(out + ".json");
  const nlohmann::json j = nlohmann::json::parse(f);
  std::ifstream t(out + ".txt");
  const std::string text((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
  std::vector<std::string> expected;
  for (const char* k : {"oracle", "vdnn", "cdma"})
    if (std::fabs(j["diff_pct"][k].get<double>()) > 2.0) expected.push_back(k);
  ASSERT_FALSE(expected.empty()) << "this job no longer shows a gap: choose another for this test\n" << text;
  EXPECT_EQ(j["beyond_tolerance"].get<std::vector<std::string>>(), expected);
  EXPECT_NE(text.find("beyond the 2 % tolerance of docs/validation.md; LT is an estimate and AT the reference"),
            std::string::npos)
      << text;
  for (const auto& k : expected) {
    char d[64];
    std::snprintf(d, sizeof d, "%s %+.3f %%", k.c_str(), j["diff_pct"][k].get<double>());
    EXPECT_NE(text.find(d), std::string::npos) << d << "\n" << text;
  }
  std::remove((out + ".json").c_str());
  std::remove((out + ".txt").c_str());
}

// compare names the per-layer transfer whose LT and AT times differ most (new-user trial s22
// F7: step times within 0.07 % hid a prefetch 21 % shorter in LT). Expected value computed here
// from two separate runs' JSON (layers[].offload_s / prefetch_s: cDMA step; layers[].vdnn.*:
// vDNN step), the largest |AT - LT| over both steps, offloads and prefetches.
TEST(at_compare_cli, names_the_largest_per_layer_transfer_difference) {
  const std::string out = std::string(::testing::TempDir()) + "cdma_cmp_gap_" + std::to_string(::getpid());
  const std::string job = " --network synthetic --batch 2 --param steps=vdnn,cdma";
  auto run = [&](const std::string& args, const std::string& log) {
    const std::string cmd = std::string(CDMA_VP_EXE) + args + job + " >" + log + " 2>&1";
    const int rc = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd;
  };
  run(" compare --json " + out + ".json", out + ".txt");
  run(" run --mode lt -q --json " + out + "_lt.json", out + "_lt.txt");
  run(" run --mode at -q --json " + out + "_at.json", out + "_at.txt");
  auto load = [](const std::string& f) {
    std::ifstream in(f);
    return nlohmann::json::parse(in);
  };
  const nlohmann::json j = load(out + ".json"), lt = load(out + "_lt.json"), at = load(out + "_at.json");
  double best = -1, want_lt = 0, want_at = 0;
  std::string want_step, want_layer, want_transfer;
  for (const char* step : {"vdnn", "cdma"})
    for (std::size_t i = 0; i < lt["layers"].size(); ++i)
      for (const char* t : {"offload_s", "prefetch_s"}) {
        auto get = [&](const nlohmann::json& r) {
          const nlohmann::json& l = r["layers"][i];
          const nlohmann::json& v = std::string(step) == "vdnn" ? l["vdnn"] : l;
          return v.is_object() && v.contains(t) && v[t].is_number() ? v[t].get<double>() : 0.0;
        };
        const double x = get(lt), y = get(at);
        if (std::fabs(y - x) > best + 1e-15) {
          best = std::fabs(y - x);
          want_lt = x;
          want_at = y;
          want_step = step;
          want_layer = lt["layers"][i]["name"];
          want_transfer = std::string(t) == "offload_s" ? "offload" : "prefetch";
        }
      }
  ASSERT_GT(best, 0.0);
  const nlohmann::json& g = j["largest_layer_gap"];
  EXPECT_EQ(g["step"], want_step) << g;
  EXPECT_EQ(g["layer"], want_layer) << g;
  EXPECT_EQ(g["transfer"], want_transfer) << g;
  EXPECT_DOUBLE_EQ(g["lt_s"].get<double>(), want_lt);
  EXPECT_DOUBLE_EQ(g["at_s"].get<double>(), want_at);
  std::ifstream t(out + ".txt");
  const std::string text((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("largest per-layer transfer difference: " + want_step + " " + want_layer + " " + want_transfer +
                      ", LT "),
            std::string::npos)
      << text;
  for (const char* sfx : {".json", ".txt", "_lt.json", "_lt.txt", "_at.json", "_at.txt", "_lt.json.config.json",
                          "_at.json.config.json", ".json.config.json"})
    std::remove((out + sfx).c_str());
}
