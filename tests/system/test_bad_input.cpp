// Bad input and failed outputs: clear errors naming the file, key or value and the expected
// form; exit 2 for bad input, 3 for an output that could not be written after (or around) a
// run; never a silent wrong result, a truncated file left behind, or a run that never ends.
#include <gtest/gtest.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <thread>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include "platform/config.h"
#include "platform/outputs.h"
#include "platform/platform.h"
#include "support/cli.h"
#include "support/sc_fixture.h"
#include "tlm/codec/window.h"
#include "workloads/vdnn/vdnn_runtime.h"
#include "workloads/activations/activation_source.h"
#include "workloads/compute/roofline.h"

using namespace cdma::platform;
using nlohmann::json;
namespace wl = cdma::workloads;
using cdma::test::cli;
using cdma::test::entries;
using cdma::test::slurp;

namespace {

std::string tmp(const std::string& name) {
  return std::string(::testing::TempDir()) + "cdma_bad_" + std::to_string(::getpid()) + "_" + name;
}

bool exists(const std::string& p) {
  struct ::stat st {};
  return ::stat(p.c_str(), &st) == 0;
}


/// Runs `cdma-vp args` and expects exit status `code` with `needle` in its stderr.
void expect_cli_error(const std::string& args, int code, const std::string& needle) {
  std::string err;
  EXPECT_EQ(cli(args, nullptr, &err), code) << args << "\n" << err;
  EXPECT_NE(err.find(needle), std::string::npos) << args << "\n" << err;
}

/// The error message apply_override gives for `a` ("" and a failure if it accepts it).
std::string override_error(const std::string& a) {
  platform_config c = preset("titanx-gen3");
  try {
    apply_override(c, a);
  } catch (const config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << a << " was accepted";
  return "";
}

/// The message of the E that run(cfg) throws ("" and a failure naming `what` if it runs).
template <typename E = std::exception>
std::string run_error(const platform_config& cfg, const std::string& what) {
  try {
    cdma::platform::run(cfg);
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << what << " was accepted";
  return "";
}

/// Parentheses and brackets close in the right order.
bool balanced(const std::string& s) {
  std::string stack;
  for (char ch : s) {
    if (ch == '(' || ch == '[') stack += ch;
    if (ch == ')' || ch == ']') {
      if (stack.empty() || stack.back() != (ch == ')' ? '(' : '[')) return false;
      stack.pop_back();
    }
  }
  return stack.empty();
}

/// A v1.0 .npy header for float32 of `shape` (the data follows; none for an empty tensor).
std::string npy_header(const std::string& shape) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  return out + h;
}

class bad_input_run : public cdma::test::sc_fixture {};

}  // namespace

// ---- 1. the activation source -------------------------------------------------------------

TEST(bad_input, activations_synthetic_is_explicit_and_the_default_rule_is_unchanged) {
  platform_config c = preset("titanx-gen3");  // inception_v3
  const std::vector<std::string> synthetic{"synthetic"};
  EXPECT_EQ(resolve_activations(c), default_activations());
  c.synthetic_density = 0.5;  // exactly its default: still the shipped sample (documented rule)
  EXPECT_EQ(resolve_activations(c), default_activations());
  c.synthetic_density = 0.3;
  EXPECT_EQ(resolve_activations(c), synthetic);
  apply_override(c, "activations=synthetic");
  c.synthetic_density = 0.5;
  EXPECT_EQ(resolve_activations(c), synthetic);
  c.activations.clear();
  c.network = "synthetic";
  EXPECT_EQ(resolve_activations(c), synthetic);
  c.activations = {"/data/acts.npz"};
  EXPECT_EQ(resolve_activations(c), std::vector<std::string>{"/data/acts.npz"});
  c.seed = 7;
  try {
    resolve_activations(c);
    FAIL() << "a file with seed=7 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/data/acts.npz"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("seed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("activations=synthetic"), std::string::npos) << e.what();
  }
}

TEST(bad_input, outputs_record_the_resolved_source_and_a_dump_reproduces_the_run) {
  const std::string j = tmp("src.json"), cj = tmp("src.config.json"), k = tmp("src2.json");
  // Default InceptionV3: the shipped sample; the effective config names its path.
  ASSERT_EQ(cli("run --batch 1 --steps oracle -q --json " + j), 0);
  const json r = json::parse(std::ifstream(j));
  EXPECT_EQ(r["config"]["activations"], json(default_activations()));
  EXPECT_EQ(json::parse(std::ifstream(cj))["activations"], json(default_activations()));
  EXPECT_EQ(r["activations"].get<std::string>().rfind("real: chelsea.npz + coffee.npz (1 distinct image); ", 0), 0u)
      << r["activations"];
  // Re-running the written configuration uses the same source.
  ASSERT_EQ(cli("run --config " + cj + " -q --json " + k), 0);
  EXPECT_EQ(json::parse(std::ifstream(k))["activations"], r["activations"]);
  // activations=synthetic with the default density: synthetic data, recorded as such.
  ASSERT_EQ(cli("run --batch 1 --steps oracle -q --activations synthetic --json " + j), 0);
  const json s = json::parse(std::ifstream(j));
  EXPECT_EQ(s["activations"], "synthetic: density 0.5 (independent zeros), seed 1");
  EXPECT_EQ(s["config"]["activations"], "synthetic");
  // config --dump writes the resolved value.
  std::string out;
  ASSERT_EQ(cli("config --dump --density 0.3", &out), 0);
  EXPECT_EQ(json::parse(out)["activations"], "synthetic");
  ASSERT_EQ(cli("config --dump", &out), 0);
  EXPECT_EQ(json::parse(out)["activations"], json(default_activations()));
}

TEST(bad_input, a_sweep_over_a_synthetic_key_runs_every_row_on_synthetic_data) {
  const std::string dir = tmp("sweep_density");
  std::system(("rm -rf " + dir).c_str());
  std::string out, err;
  // InceptionV3 (the default network): without the rule the 0.5 row would be real data.
  ASSERT_EQ(cli("sweep --grid density=0.3,0.5 --batch 1 --steps oracle --no-plot --jobs 1 --out " + dir, &out, &err),
            0) << out << err;
  std::ifstream csv(dir + "/sweep.csv");
  std::string header, r0, r1;
  std::getline(csv, header);
  std::getline(csv, r0);
  std::getline(csv, r1);
  EXPECT_EQ(header, "run,grid:density,status,network,batch,activations,oracle_s,vdnn_s,cdma_s,speedup,"
                    "compression_ratio,verified_bytes,cdma_offload_GBps,cdma_offload_bound,cdma_prefetch_GBps,"
                    "cdma_prefetch_bound");
  EXPECT_EQ(r0.rfind("0,0.3,ok,inception_v3,1,synthetic,", 0), 0u) << r0;
  EXPECT_EQ(r1.rfind("1,0.5,ok,inception_v3,1,synthetic,", 0), 0u) << r1;
  const json run1 = json::parse(std::ifstream(dir + "/run_1.json"));
  EXPECT_EQ(run1["activations"], "synthetic: density 0.5 (independent zeros), seed 1");
  {
    // oracle_s (the 7th field) is the run's step time to 12 significant digits; it was rounded
    // to 6 (0.12515 s for 0.125149678 s: new-user trial s22), hiding differences of microseconds.
    std::istringstream f(r1);
    std::string cell;
    for (int i = 0; i < 7; ++i) std::getline(f, cell, ',');
    const double want = run1["step_time_s"]["oracle"].get<double>();
    EXPECT_NEAR(std::stod(cell), want, want * 1e-11) << r1;
    // Fields 13-16, the cDMA step's transfer rates and bounds: empty, as the step did not run
    // (--steps oracle; null in the run's JSON).
    EXPECT_TRUE(run1["transfer_bounds"]["cdma"]["offload"].is_null()) << run1["transfer_bounds"];
    EXPECT_TRUE(run1["transfer_bounds"]["cdma"]["prefetch"].is_null()) << run1["transfer_bounds"];
    EXPECT_EQ(r1.substr(r1.size() - 4), ",,,,") << r1;
  }
  // Without a synthetic key in the grid, the column names the real sample.
  const std::string dir2 = tmp("sweep_codec");
  std::system(("rm -rf " + dir2).c_str());
  ASSERT_EQ(cli("sweep --grid codec=zvc --batch 1 --steps oracle --no-plot --out " + dir2), 0);
  std::ifstream csv2(dir2 + "/sweep.csv");
  std::getline(csv2, header);
  std::getline(csv2, r0);
  EXPECT_EQ(r0.rfind("0,zvc,ok,inception_v3,1," + activations_text(default_activations()) + ",", 0), 0u) << r0;
  // With an activations file given, a density grid is the conflict error, before any run.
  const std::string dir3 = tmp("sweep_conflict");
  std::system(("rm -rf " + dir3).c_str());
  EXPECT_EQ(cli("sweep --grid density=0.3,0.5 --activations " + default_activations_path() + " --out " + dir3, nullptr,
                &err), 2);
  EXPECT_NE(err.find("cannot be combined with density"), std::string::npos) << err;
  EXPECT_FALSE(exists(dir3));
  // Also when every grid value equals the default (no row would otherwise notice).
  EXPECT_EQ(cli("sweep --grid density=0.5 --activations " + default_activations_path() + " --out " + dir3, nullptr,
                &err), 2);
  EXPECT_NE(err.find("cannot be combined with --grid density"), std::string::npos) << err;
  EXPECT_FALSE(exists(dir3));
}

// ---- 2 and 3. outputs that cannot be written ----------------------------------------------

TEST(bad_input, config_dump_write_errors_are_exit_3_naming_the_file) {
  expect_cli_error("config --dump /dev/full", 3, "config --dump /dev/full: write failed: No space left on device");
  expect_cli_error("config --dump >/dev/full", 3, "standard output: write failed: No space left on device");
  // A file that cannot be opened is bad input (nothing written), as for --json.
  expect_cli_error("config --dump /nonexistent-dir/x.json", 2,
                   "/nonexistent-dir/x.json: cannot open for writing: No such file or directory");
  // analyze --json: the same rule.
  expect_cli_error("analyze " + default_activations_path() + " --json /dev/full", 3,
                   "--json /dev/full: write failed: No space left on device");
  // A dump to a file is the same JSON as on standard output.
  const std::string f = tmp("dump.json");
  std::string out;
  ASSERT_EQ(cli("config --dump " + f + " --preset a100-gen4"), 0);
  ASSERT_EQ(cli("config --dump --preset a100-gen4", &out), 0);
  EXPECT_EQ(json::parse(std::ifstream(f)), json::parse(out));
}

TEST(bad_input, sweep_files_that_cannot_be_written_are_exit_3_and_leave_nothing) {
  const std::string dir = tmp("sweep_full");
  std::system(("rm -rf " + dir).c_str());
  std::string err;
  expect_cli_error("sweep --grid pcie.gen=3,4 --network synthetic --out " + dir + " --emit-slurm /dev/full", 3,
                   "--emit-slurm /dev/full: write failed: No space left on device");
  // sweep.csv that cannot be replaced (a directory is in the way): exit 3 naming it.
  ASSERT_TRUE(exists(dir + "/sweep.plan.json"));
  ::mkdir((dir + "/sweep.csv").c_str(), 0755);
  expect_cli_error("sweep --merge " + dir + " --no-plot", 3,
                   dir + "/sweep.csv: cannot open for writing: Is a directory");
  EXPECT_FALSE(exists(dir + "/sweep.csv.tmp"));
  // A file size limit of 1 KiB (SIGXFSZ ignored: EFBIG) fails the write of the plan of 12 runs
  // (about 2 KiB; the message on stderr fits): exit 3, no empty or cut sweep.plan.json (which
  // used to fail later as a JSON parse error), no .tmp.
  std::system(("rm -rf " + dir).c_str());
  EXPECT_EQ(cli("sweep --grid pcie.gen=1,2,3,4,5,6 --grid codec=none,zvc --network synthetic --no-plot --out " + dir,
                nullptr, &err, "trap '' XFSZ; ulimit -f 1;"), 3);
  EXPECT_NE(err.find(dir + "/sweep.plan.json: write failed: File too large"), std::string::npos) << err;
  EXPECT_FALSE(exists(dir + "/sweep.plan.json"));
  EXPECT_FALSE(exists(dir + "/sweep.plan.json.tmp"));
}

TEST(bad_input, a_vcd_that_cannot_be_written_is_exit_3_and_the_other_outputs_are_kept) {
  const std::string j = tmp("vcdfull.json");
  std::remove(j.c_str());
  std::string out, err;
  EXPECT_EQ(cli("run --network synthetic --batch 1 --steps oracle -q --vcd /dev/full --json " + j, &out, &err), 3);
  EXPECT_NE(err.find("--vcd /dev/full: write failed: No space left on device"), std::string::npos) << err;
  EXPECT_NE(out.find("oracle (no transfers)"), std::string::npos) << out;  // the summary is printed
  EXPECT_TRUE(json::parse(std::ifstream(j))["step_time_s"]["oracle"].is_number());
  // --trace and --json on /dev/full: the reason is named.
  expect_cli_error("run --network synthetic --batch 1 --steps oracle -q --trace /dev/full", 3,
                   "--trace /dev/full: write failed: No space left on device");
  expect_cli_error("run --network synthetic --batch 1 --steps oracle -q --json /dev/full", 3,
                   "--json /dev/full: write failed: No space left on device");
  // A VCD written to a file is complete: it ends with the final time stamp.
  const std::string v = tmp("ok.vcd");
  ASSERT_EQ(cli("run --network synthetic --batch 1 --steps oracle -q --vcd " + v), 0);
  const std::string text = slurp(v);
  EXPECT_NE(text.find("$enddefinitions"), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(text.find(" irq "), std::string::npos) << text.substr(0, 400);
  const std::string last = text.substr(text.find_last_of('\n', text.size() - 2) + 1);
  ASSERT_FALSE(last.empty());
  EXPECT_EQ(last[0], '#') << last;  // SystemC's closing time stamp: nothing was cut off
  EXPECT_GT(std::stoull(last.substr(1)), 0ull) << last;
  EXPECT_FALSE(exists(v + ".tmp"));
}

TEST(bad_input, outputs_that_fail_midway_leave_no_truncated_file_and_keep_an_older_one) {
  // 1 KiB file size limit: the JSON results (several KiB) and the trace fail with EFBIG.
  const std::string j = tmp("trunc.json"), cfgj = tmp("trunc.config.json"), t = tmp("trunc.trace.json");
  std::ofstream(j) << "older results\n";
  std::remove(cfgj.c_str());
  std::remove(t.c_str());
  std::string out, err;
  EXPECT_EQ(cli("run --network synthetic --batch 1 --steps oracle -q --json " + j + " --trace " + t, &out, &err,
                "trap '' XFSZ; ulimit -f 1;"), 3);
  EXPECT_NE(err.find("--json " + j + ": write failed: File too large"), std::string::npos) << err;
  EXPECT_NE(err.find("--trace " + t + ": write failed: File too large"), std::string::npos) << err;
  EXPECT_EQ(slurp(j), "older results\n");  // untouched, not truncated
  EXPECT_FALSE(exists(j + ".tmp"));
  EXPECT_FALSE(exists(t));
  EXPECT_FALSE(exists(t + ".tmp"));
}

// ---- 4. messages ----------------------------------------------------------------------------

TEST(bad_input, a_host_memory_smaller_than_the_offloaded_activations_is_refused_before_simulating) {
  // fmnist_cnn at batch 4 offloads ~2.5 MB; with 1 MiB of host memory every transfer got an
  // error response and the run reported step times (breaker, session 8). The need, computed
  // from the network's shapes (vdnn_runtime::host_layout), is named in the message.
  const auto net = wl::make_network("fmnist_cnn", 4);
  // Every layer's tensor in 4 KiB-aligned buffers, then its table of one entry per 4 KiB
  // window in 64 B-aligned blocks (vdnn_runtime.h).
  std::uint64_t need = 0;
  for (const auto& l : net.layers) need += (l.offload.bytes() + 4095) / 4096 * 4096;
  for (const auto& l : net.layers)
    need += ((l.offload.bytes() + 4095) / 4096 * cdma::codec::window_entry_bytes + 63) / 64 * 64;
  EXPECT_EQ(cdma::workloads::vdnn_runtime::host_layout(net, 4096, 0), need);
  EXPECT_GT(need, 1u << 20);  // more than the 1 MiB given below
  std::string out, err;
  EXPECT_EQ(cli("--network fmnist_cnn --batch 4 -q --param host_mem.size=1MiB", &out, &err), 2) << out << err;
  EXPECT_NE(err.find("host_mem.size = 1048576 B is too small for fmnist_cnn at batch 4: the offloaded activations and "
                     "their window tables need " + std::to_string(need) + " B; expected host_mem.size >= that (e.g. \"" +
                     std::to_string((need + (1u << 20) - 1) >> 20) + " MiB\")"),
            std::string::npos) << err;
  EXPECT_EQ(out.find("step time"), std::string::npos) << out;
}

TEST(bad_input, config_messages_name_the_key_and_the_expected_form) {
  // A time with an unknown unit: one level of parentheses, the reason and the range.
  const std::string parsec = override_error("pcie.latency=1 parsec");
  EXPECT_TRUE(balanced(parsec)) << parsec;
  EXPECT_NE(parsec.find("pcie.latency = \"1 parsec\": unknown unit 'parsec'"), std::string::npos) << parsec;
  EXPECT_NE(parsec.find("allowed from 0 ns to 1 ms"), std::string::npos) << parsec;
  // A bare 0 is zero time; any other bare number still needs its unit.
  platform_config c = preset("titanx-gen3");
  apply_override(c, "pcie.latency=0");
  EXPECT_EQ(c.pcie.latency_ps, 0u);
  EXPECT_NE(override_error("pcie.latency=500").find("has no unit"), std::string::npos);
  // MPS 4096 with the measured host's finite posted-data credits (192 credits of 16 B, UpdateFC
  // every TLP): 4096 / 16 = 256 credits > 192; 2048 / 16 = 128 fits.
  const std::string mps = override_error("pcie.mps=4096");
  EXPECT_NE(mps.find("pcie.mps = 4096 B"), std::string::npos) << mps;
  EXPECT_NE(mps.find("pcie.pd_credits = 192"), std::string::npos) << mps;
  EXPECT_NE(mps.find("one of 128, 256, 512, 1024, 2048 B"), std::string::npos) << mps;
  EXPECT_EQ(mps.find("link_params"), std::string::npos) << mps;
  // density -0 is read as 0 (never kept as a negative zero).
  apply_override(c, "density=-0");
  EXPECT_EQ(c.synthetic_density, 0.0);
  EXPECT_FALSE(std::signbit(c.synthetic_density));
}

TEST_F(bad_input_run, zero_run_is_printed_with_its_exponent) {
  platform_config cfg;
  cfg.network = "synthetic";
  cfg.batch = 1;
  cfg.mean_zero_run = 1e-300;
  const std::string m = run_error(cfg, "zero_run 1e-300");
  EXPECT_NE(m.find("zero_run) 1e-300 is out of range"), std::string::npos) << m;
  EXPECT_EQ(m.find("0.000000"), std::string::npos) << m;
}

TEST_F(bad_input_run, a_tensor_with_a_zero_dimension_is_named_as_such) {
  const std::string dir = tmp("npy_dir");
  ::mkdir(dir.c_str(), 0755);
  // syn_1: the first offloaded tensor of the synthetic network (N x 16 x 32 x 32), no images.
  std::ofstream(dir + "/syn_1.npy", std::ios::binary) << npy_header("(0, 16, 32, 32)");
  platform_config cfg;
  cfg.network = "synthetic";
  cfg.batch = 1;
  cfg.activations = {dir};
  const std::string m = run_error(cfg, "an empty tensor");
  EXPECT_NE(m.find("shape 0x16x32x32 has a zero dimension"), std::string::npos) << m;
  EXPECT_EQ(m.find("not NCHW"), std::string::npos) << m;
}

// ---- 5. the density profile ---------------------------------------------------------------

namespace {
/// Writes `text` to `path` and returns the activation_error training_profile_densities
/// raises for it (a test failure if it accepts the file).
std::string profile_error(const wl::network& net, const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  try {
    wl::training_profile_densities(path, 1.0, net);
  } catch (const wl::activation_error& e) {
    return std::string(e.what());
  }
  ADD_FAILURE() << text;
  return std::string();
}
}  // namespace

TEST(bad_input, density_profile_refuses_duplicate_rows_and_negative_iterations) {
  const auto net = wl::make_network("synthetic", 1);
  auto error = [&](const std::string& text) { return profile_error(net, tmp("profile.csv"), text); };
  const std::string p = tmp("profile.csv");
  const std::string dup = error("iteration,epoch,layer,zero_fraction\n0,0,conv1,0.5\n10,1,conv1,0.6\n10,1,conv1,0.7\n");
  EXPECT_NE(dup.find(p + ":4: layer conv1 at iteration 10 is listed twice (first on line 3)"), std::string::npos) << dup;
  EXPECT_NE(dup.find("iteration,epoch,layer,zero_fraction"), std::string::npos) << dup;
  const std::string neg = error("iteration,epoch,layer,zero_fraction\n-5,0,conv1,0.5\n");
  EXPECT_NE(neg.find(p + ":2: iteration -5 is negative"), std::string::npos) << neg;
  // Not numbers: said as such (nan / inf were reported as "negative"), hexadecimal refused.
  const std::string nan = error("iteration,epoch,layer,zero_fraction\nnan,0,conv1,0.5\n");
  EXPECT_NE(nan.find(p + ":2: iteration \"nan\": not a decimal number"), std::string::npos) << nan;
  const std::string inf = error("iteration,epoch,layer,zero_fraction\n0,0,conv1,inf\n");
  EXPECT_NE(inf.find(p + ":2: zero_fraction \"inf\": not a decimal number"), std::string::npos) << inf;
  const std::string hex = error("iteration,epoch,layer,zero_fraction\n0x10,0,conv1,0.5\n");
  EXPECT_NE(hex.find(p + ":2: iteration \"0x10\": hexadecimal is not accepted"), std::string::npos) << hex;
  const std::string big = error("iteration,epoch,layer,zero_fraction\n1e400,0,conv1,0.5\n");
  EXPECT_NE(big.find(p + ":2: iteration \"1e400\": too large for a number"), std::string::npos) << big;
  // A layer without a row at an iteration another layer has (was silently held at its last
  // value): an error naming the layer and the iteration.
  const std::string gap = error("iteration,epoch,layer,zero_fraction\n0,0,conv1,0.3\n0,0,conv2,0.1\n10,1,conv1,0.9\n");
  EXPECT_NE(gap.find(p + ": layer conv2 has no row at iteration 10 (1 of 2 iterations of the profile)"),
            std::string::npos) << gap;
  try {  // a directory is said to be one
    wl::training_profile_densities(::testing::TempDir(), 1.0, net);
    ADD_FAILURE();
  } catch (const wl::activation_error& e) {
    EXPECT_NE(std::string(e.what()).find(": is a directory; expected a CSV file"), std::string::npos) << e.what();
  }
  // An empty field is named as such (was "expected at least 4 columns").
  const std::string empty = error("iteration,epoch,layer,zero_fraction\n0,0,conv1,\n");
  EXPECT_NE(empty.find(p + ":2: zero_fraction \"\": not a decimal number"), std::string::npos) << empty;
  // The epoch column, when present, is a number >= 0 too (was not read at all).
  const std::string epoch = error("iteration,epoch,layer,zero_fraction\n0,one,conv1,0.5\n");
  EXPECT_NE(epoch.find(p + ":2: epoch \"one\": not a decimal number"), std::string::npos) << epoch;
  const std::string nepoch = error("iteration,epoch,layer,zero_fraction\n0,-1,conv1,0.5\n");
  EXPECT_NE(nepoch.find(p + ":2: epoch \"-1\": negative; expected a decimal number >= 0"), std::string::npos) << nepoch;
  // CR-only line ends and an unterminated quote are named (the file is one long line then).
  const std::string cr = error("iteration,epoch,layer,zero_fraction\r0,0,conv1,0.5\r");
  EXPECT_NE(cr.find(p + ":1: a carriage return inside the line at column 36"), std::string::npos) << cr;
  const std::string quote = error("iteration,epoch,layer,zero_fraction\n0,0,\"conv1,0.5\n");
  EXPECT_NE(quote.find(p + ":2: the quote opened at column 5 is not closed"), std::string::npos) << quote;
  const std::string out = error("iteration,epoch,layer,zero_fraction\n0,0,conv1,1.5\n");
  EXPECT_NE(out.find(p + ":2: zero_fraction 1.5 is not in [0, 1]"), std::string::npos) << out;
  // A UTF-8 byte-order mark before the header, CRLF and spaces around fields are accepted
  // (as in the layer-time table): zero fraction 0.25 -> density 0.75.
  std::ofstream(p) << "\xEF\xBB\xBFiteration, epoch ,layer,zero_fraction\r\n 0 ,0, a , 0.25 \r\n";
  EXPECT_DOUBLE_EQ(wl::training_profile_densities(p, 1.0, net).at("syn_4"), 0.75);
  // The same iteration for two layers is fine: layer 0.4 zero -> density 0.6 at the end.
  std::ofstream(p) << "iteration,epoch,layer,zero_fraction\n0,0,a,0.5\n0,0,b,0.4\n";
  const auto d = wl::training_profile_densities(p, 1.0, net);
  EXPECT_DOUBLE_EQ(d.at("syn_4"), 0.6);  // last layer -> last profile layer b
}

TEST(bad_input, density_profile_rows_match_the_header_names_are_there_and_iterations_are_whole) {
  const auto net = wl::make_network("synthetic", 1);
  const std::string p = tmp("profile_rows.csv");
  auto error = [&](const std::string& text) { return profile_error(net, p, text); };
  const std::string form = " (expected rows iteration,epoch,layer,zero_fraction: one row per layer and iteration, "
                           "as many fields as the header, iteration a whole number >= 0, zero_fraction in [0, 1])";
  const std::string h = "iteration,epoch,layer,zero_fraction\n";
  // Fewer fields than the header (was accepted when the named columns were there: a fifth
  // column of the header silently missing).
  EXPECT_EQ(error("iteration,epoch,layer,zero_fraction,test_accuracy\n0,0,conv1,0.5\n"),
            p + ":2: 4 fields, the header has 5; expected one field per header column" + form);
  // More fields than the header: "0.9" at column 15 is the first extra one (was ignored).
  EXPECT_EQ(error(h + "0,0,conv1,0.5,0.9\n"),
            p + ":2: 5 fields (the first extra one at column 15), the header has 4; expected one field per header "
                "column" + form);
  // A header without a needed column shows what it found (session 8; it did not).
  EXPECT_EQ(error("iter,epoch,layer,zero_fraction\n0,0,conv1,0.5\n"),
            p + ":1: the header lacks the column iteration (header: \"iter,epoch,layer,zero_fraction\"); expected a "
                "header with the columns iteration, layer and zero_fraction" + form);
  // A column name twice in the header (the last one was used silently).
  EXPECT_EQ(error("iteration,layer,epoch,layer,zero_fraction\n0,a,0,b,0.5\n"),
            p + ":1: header column \"layer\" appears twice (fields 2 and 4, columns 11 and 23); expected each column "
                "name once" + form);
  // An empty layer name (was a layer named "").
  EXPECT_EQ(error(h + "0,0,,0.5\n"), p + ":2: empty layer name at column 5; expected a name" + form);
  EXPECT_EQ(error(h + "0,0, \"\" ,0.5\n"), p + ":2: empty layer name at column 6; expected a name" + form);
  // A fractional iteration (was interpolated as if iterations were a continuum of rows).
  EXPECT_EQ(error(h + "0,0,conv1,0.5\n2.5,0,conv1,0.4\n"),
            p + ":3: iteration \"2.5\" at column 1 is not a whole number" + form);
  // A whole number written any decimal way is that iteration: 1e1 = 10.0 = 10 (one row each,
  // so "1e1" and "10.0" are the same iteration: listed twice).
  EXPECT_EQ(error(h + "0,0,a,0.5\n1e1,1,a,0.25\n10.0,1,a,0.25\n"),
            p + ":4: layer a at iteration 10.0 is listed twice (first on line 3)" + form);
  // From 2^53 on two iterations are the same double (9007199254740993 read as ...992): refused
  // (breaker L1, session 7: they collided); 2^53 - 1 is the largest iteration.
  for (const std::string big : {"9007199254740993", "9007199254740992", "1e300"})
    EXPECT_EQ(error(h + "0,0,a,0.5\n" + big + ",1,a,0.25\n"),
              p + ":3: iteration \"" + big + "\" at column 1 is 2^53 = 9007199254740992 or more (such iterations "
                  "cannot be told apart); expected a whole number below 2^53" + form) << big;
  std::ofstream(p) << h << "0,0,a,0.5\n9007199254740991,1,a,0.25\n";
  EXPECT_DOUBLE_EQ(wl::training_profile_densities(p, 1.0, net).at("syn_4"), 0.75);
  std::ofstream(p) << h << "0,0,a,0.5\n1e1,1,a,0.25\n";  // at the end: zero fraction 0.25 -> density 0.75
  EXPECT_DOUBLE_EQ(wl::training_profile_densities(p, 1.0, net).at("syn_4"), 0.75);
  std::remove(p.c_str());
}

// ---- 6. times without an upper bound ------------------------------------------------------

TEST(bad_input, layer_times_above_ten_seconds_are_refused_naming_file_line_and_value) {
  const auto net = wl::make_network("synthetic", 1);
  const auto base = wl::roofline_times(net, wl::titan_x_maxwell());
  const std::string p = tmp("times.csv");
  for (const char* v : {"1e300", "1e5", "10000.001"}) {
    std::ofstream(p) << "layer,forward_ms,backward_ms\nsyn_conv_2,1,2\nsyn_conv_1," << v << ",1\n";
    try {
      wl::apply_time_table(p, net, base);
      FAIL() << v;
    } catch (const wl::layer_time_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(p + ":3: forward_ms \"" + v + "\""), std::string::npos) << m;
      EXPECT_NE(m.find("above 10000 ms"), std::string::npos) << m;
    }
  }
  std::ofstream(p) << "layer,forward_ms,backward_ms\nsyn_conv_1,10000,0\n";  // the bound itself is allowed
  EXPECT_EQ(wl::apply_time_table(p, net, base)[0].forward, 10000ull * 1000000000ull);
}

// A layer time of 10000 ms (the largest allowed) filled the 9-character "fwd ms" column and ran
// into the column before it ("-10000.000"): every column now widens to its longest cell.
TEST(bad_input, a_ten_second_layer_keeps_the_report_table_aligned) {
  const std::string p = tmp("long_times.csv");
  std::ofstream(p) << "layer,forward_ms,backward_ms\nsyn_conv_1,10000,10000\n";
  std::string out;
  ASSERT_EQ(cli("run --network synthetic --batch 1 --steps oracle --layer-times " + p, &out), 0) << out;
  std::istringstream text(out);
  std::string header;
  std::vector<std::string> rows;
  for (std::string l; std::getline(text, l);) {
    if (l.rfind("layer ", 0) == 0) header = l;
    else if (!header.empty() && rows.size() < 4) rows.push_back(l);
  }
  ASSERT_EQ(rows.size(), 4u) << out;
  // Where each right-aligned column ends in the header (labels in order).
  std::vector<std::size_t> ends;
  std::size_t from = header.find("offloaded X_i") + 13;
  for (const char* label : {"MB", "zero%", "comp MB", "ratio", "fwd ms", "bwd ms", "vDNN off", "vDNN pre", "cDMA off",
                            "cDMA pre", "vDNN stall", "cDMA stall", "DRAM%", "rd GB/s"}) {
    const std::size_t at = header.find(label, from);
    ASSERT_NE(at, std::string::npos) << label << "\n" << header;
    from = at + std::string(label).size();
    ends.push_back(from);
  }
  for (const std::string& row : rows) {
    // Cells are separated by spaces: 16 of them (no cell has a space), the right-aligned ones
    // ending where their label ends.
    std::vector<std::pair<std::size_t, std::size_t>> cells;  // [begin, end)
    for (std::size_t i = 0; i < row.size();) {
      if (row[i] == ' ') {
        ++i;
        continue;
      }
      const std::size_t b = i;
      while (i < row.size() && row[i] != ' ') ++i;
      cells.emplace_back(b, i);
    }
    ASSERT_EQ(cells.size(), 16u) << header << "\n" << row;
    EXPECT_EQ(cells[1].first, header.find("offloaded X_i")) << header << "\n" << row;
    for (std::size_t k = 0; k < ends.size(); ++k) EXPECT_EQ(cells[k + 2].second, ends[k]) << k << "\n" << header << "\n" << row;
  }
  // syn_conv_1: 10000 ms forward and backward, in full.
  EXPECT_NE(rows[0].find(" 10000.000 10000.000 "), std::string::npos) << header << "\n" << rows[0];
  std::remove(p.c_str());
}

// An all-zero layer-time table makes the oracle step 0 ms: the summary says there is no ratio
// (it printed "infx oracle"); a tiny oracle gives the ratio in three digits (was 38519048.000x).
TEST(bad_input, a_zero_or_tiny_oracle_step_gives_no_absurd_ratio) {
  const std::string p = tmp("zero_times.csv");
  std::ofstream(p) << "layer,forward_ms,backward_ms\nsyn_conv_1,0,0\nsyn_conv_2,0,0\nsyn_conv_3,0,0\nsyn_conv_4,0,0\n";
  std::string out;
  ASSERT_EQ(cli("run --network synthetic --batch 1 --layer-times " + p, &out), 0) << out;
  EXPECT_NE(out.find("(oracle step 0 ms: no ratio)"), std::string::npos) << out;
  EXPECT_EQ(out.find("inf"), std::string::npos) << out;
  std::ofstream(p) << "layer,forward_ms,backward_ms\nsyn_conv_1,1e-9,0\nsyn_conv_2,0,0\nsyn_conv_3,0,0\nsyn_conv_4,0,0\n";
  ASSERT_EQ(cli("run --network synthetic --batch 1 --layer-times " + p, &out), 0) << out;
  EXPECT_NE(out.find("e+07x oracle)"), std::string::npos) << out;  // 0.039 ms / 1 fs ~ 3.9e7
  // A cDMA step slower than vDNN (RLE on dense data: every window stored raw plus the engine's
  // work) is said to be slower (was "0.996x (-0.4% faster)").
  ASSERT_EQ(cli("run --network synthetic --batch 4 --codec rle --density 1", &out), 0) << out;
  EXPECT_NE(out.find("% slower)"), std::string::npos) << out;
  EXPECT_EQ(out.find("-0.4% faster"), std::string::npos) << out;
}

TEST_F(bad_input_run, a_step_beyond_the_bound_is_refused_before_simulating) {
  // 10 s forward + 10 s backward for each of the 4 layers = 80 s of kernels > 60 s per step.
  const std::string p = tmp("times80.csv");
  std::ofstream(p) << "layer,forward_ms,backward_ms\nsyn_conv_1,1e4,1e4\nsyn_conv_2,1e4,1e4\n"
                      "syn_conv_3,1e4,1e4\nsyn_conv_4,1e4,1e4\n";
  platform_config cfg;
  cfg.network = "synthetic";
  cfg.batch = 1;
  cfg.layer_times = p;
  const std::string step = run_error<std::invalid_argument>(cfg, "80 s of kernels per step");
  EXPECT_NE(step.find("add up to 80 s"), std::string::npos) << step;
  EXPECT_NE(step.find("at most 60 s per step"), std::string::npos) << step;
  // The message names the table, and with only the cDMA step asked for it no longer says the
  // simulator would walk that time "three times" (breaker M4, session 7).
  EXPECT_NE(step.find("add up to 80 s (forward + backward: --layer-times " + p + " and the roofline); expected at "
                      "most 60 s per step"),
            std::string::npos) << step;
  cfg.steps = "cdma";
  const std::string one = run_error<std::invalid_argument>(cfg, "80 s of kernels, cDMA step only");
  EXPECT_NE(one.find("in each step simulated, steps = cdma)"), std::string::npos) << one;
  EXPECT_EQ(one.find("three times"), std::string::npos) << one;
  cfg.steps = "oracle,vdnn,cdma";
  // Roofline: at 1 GFLOP/s x 0.7 the synthetic network's largest layer at batch 32 (2 x 32 x
  // 32 x 32 x 128 x 64 x 9 = 4.8 GFLOP forward) takes about 6.9 s forward and 13.8 s backward.
  platform_config slow;
  slow.network = "synthetic";
  slow.gpu.peak_flops = 1e9;
  const std::string m = run_error<std::invalid_argument>(slow, "a 13.8 s backward kernel");
  EXPECT_NE(m.find("layer 'syn_conv_4': backward kernel time 13.8"), std::string::npos) << m;
  EXPECT_NE(m.find("gpu.peak_flops"), std::string::npos) << m;
}

TEST(bad_input, every_rate_has_a_floor_named_with_its_unit) {
  EXPECT_NE(override_error("host_mem.bandwidth=1 MB/s").find("from 100 MB/s to 1000000 GB/s"), std::string::npos);
  EXPECT_NE(override_error("cdma.xbar_bandwidth=1 MB/s").find("below 100 MB/s"), std::string::npos);
  EXPECT_NE(override_error("cdma.unit_bytes_per_cycle=1e-300").find("bytes/cycle in [0.001, 1e+06]"),
            std::string::npos);
  // 0.05 bytes/cycle x 1 GHz = 50 MB/s per unit.
  const std::string unit = override_error("cdma.unit_bytes_per_cycle=0.05");
  EXPECT_NE(unit.find("= 5e+07 B/s per compression unit: expected at least 100 MB/s"), std::string::npos) << unit;
  // A codec's own unit rate (new-user trial s20 F9): 0 (the unit rate) or at least 100 MB/s.
  const std::string own = override_error("cdma.codec_bytes_per_cycle.zlib=0.05");
  EXPECT_EQ(own, "cdma.codec_bytes_per_cycle.zlib x cdma.clock = 0.05 bytes/cycle x 1e+09 Hz = 5e+07 B/s per "
                 "compression unit: expected 0 (cdma.unit_bytes_per_cycle) or at least 100 MB/s");
  EXPECT_NE(override_error("cdma.codec_bytes_per_cycle.zstd=-1")
                .find("cdma.codec_bytes_per_cycle.zstd = \"-1\": expected 0 (cdma.unit_bytes_per_cycle) or a number of "
                      "bytes/cycle in [0.001, 1e6]"),
            std::string::npos)
      << override_error("cdma.codec_bytes_per_cycle.zstd=-1");
  EXPECT_NE(override_error("cdma.codec_bytes_per_cycle.gzip=4").find("known in this group"), std::string::npos);
  EXPECT_EQ(override_error("cdma.codec_decompression_bytes_per_cycle.zlib=0.05"),
            "cdma.codec_decompression_bytes_per_cycle.zlib x cdma.clock = 0.05 bytes/cycle x 1e+09 Hz = 5e+07 B/s per "
            "decompression unit: expected 0 (cdma.codec_bytes_per_cycle.zlib) or at least 100 MB/s");
  EXPECT_NE(override_error("gpu.flop_efficiency=1e-300").find("gpu.flop_efficiency = 1e-300: expected a fraction of "
                                                              "peak in [0.01, 1]"), std::string::npos);
  EXPECT_NE(override_error("gpu_mem.efficiency=0.001").find("gpu_mem.efficiency = 0.001"), std::string::npos);
  EXPECT_NE(override_error("gpu.peak_flops=1e8 FLOP/s").find("from 1 GFLOP/s"), std::string::npos)
      << override_error("gpu.peak_flops=1e8 FLOP/s");
}

namespace {
// Breaker findings on the output handling (session 4): the process itself must turn a file
// size limit into exit 3 (no shell trap here), keep writing an existing file whose directory
// forbids the temporary file, and not block on a FIFO output that has a reader.
TEST(bad_input, size_limits_read_only_directories_and_fifos_are_handled) {
  const std::string c = tmp("xfsz.csv"), j = tmp("xfsz.json");
  std::remove(c.c_str());
  std::remove(j.c_str());
  std::string err;
  // 1 KiB limit: the per-layer CSV of the synthetic network (~0.6 KiB) fits, its JSON does not.
  EXPECT_EQ(cli("run --network synthetic --batch 1 --steps oracle -q --csv " + c + " --json " + j, nullptr, &err,
                "ulimit -f 1;"),
            3);
  EXPECT_NE(err.find("--json " + j + ": write failed: File too large"), std::string::npos) << err;
  EXPECT_TRUE(exists(c));
  EXPECT_FALSE(exists(j + ".tmp"));
  // An existing writable file in a directory where no temporary file can be created (as
  // nobody: root ignores the directory's mode): written in place, exit 0.
  const std::string d = tmp("rodir");
  ASSERT_EQ(std::system(("rm -rf " + d + " && mkdir " + d + " && touch " + d + "/out.csv && chmod 666 " + d +
                         "/out.csv && chmod 555 " + d).c_str()),
            0);
  const std::string as_nobody = ::geteuid() == 0 ? "exec setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  const std::string o = tmp("rodir_stdout");
  EXPECT_EQ(std::system(("bash -c \"" + as_nobody + std::string(CDMA_VP_EXE) +
                         " run --network synthetic --batch 1 --steps oracle -q --csv " + d + "/out.csv\" > " + o +
                         " 2>&1")
                            .c_str()),
            0)
      << slurp(o);
  EXPECT_NE(slurp(d + "/out.csv").find("layer"), std::string::npos);
  (void)std::system(("chmod 755 " + d + " && rm -rf " + d).c_str());
  // A FIFO output with a reader: written in place, the reader gets the CSV (no open for
  // reading in the path check, which used to block).
  const std::string f = tmp("out.fifo"), got = tmp("fifo_got");
  std::remove(f.c_str());
  ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
  EXPECT_EQ(cli("run --network synthetic --batch 1 --steps oracle -q --csv " + f, nullptr, &err,
                "(timeout 60 cat " + f + " > " + got + " &);"),
            0)
      << err;
  for (int i = 0; i < 50 && slurp(got).find("syn_conv_4") == std::string::npos; ++i) ::usleep(100000);
  EXPECT_NE(slurp(got).find("syn_conv_4"), std::string::npos);
  std::remove(f.c_str());
}
}  // namespace

namespace {
// Options that only mean something for the other activation source are refused, not ignored.
TEST(bad_input, options_of_the_other_activation_source_are_refused) {
  expect_cli_error("run --network synthetic --steps oracle -q --missing-activations dense", 2,
                   "missing_activations applies to real activations");
  expect_cli_error("run --activations synthetic --steps oracle -q --name-map /nonexistent.json", 2,
                   "name_map applies to real activations");
  expect_cli_error("run --network synthetic --steps oracle -q --training-progress 0.5", 2,
                   "training_progress 0.5 picks a point of a density profile, but no density_profile");
  const std::string csv = std::string(CDMA_SHARED_DATA_DIR) + "/density/fmnist_training.csv";
  // Refused where it is given, naming the option (it was refused only when the run started,
  // "training_progress -0.5 is out of range", naming no option; breaker s9 #16).
  expect_cli_error("run --network synthetic --steps oracle -q --density-profile " + csv + " --training-progress -0.5",
                   2, "cdma-vp: --training-progress: training_progress = \"-0.5\": expected a number in [0, 1] (a point "
                   "of the density profile), or -1 (unset: the end of training)");
  // The key's own range check names the meaningful values and the sentinel, as --help does.
  expect_cli_error("run --network synthetic --steps oracle -q --density-profile " + csv + " --training-progress 2", 2,
                   "expected a number in [0, 1] (a point of the density profile), or -1 (unset: the end of training)");
}

// One setting listed twice in a sweep grid, however spelled, is refused before any run:
// it would run the same configuration twice (breaker: density=0,-0 ran two identical rows).
TEST(bad_input, a_density_profile_that_cannot_be_read_says_why_and_the_expected_form) {
  // Breaker (session 9): "cannot open the density profile" without the reason; an empty CSV
  // "no data rows" without the expected form.
  expect_cli_error("run --network synthetic --steps oracle -q --density-profile /nonexistent/p.csv", 2,
                   "/nonexistent/p.csv: cannot open the density profile: No such file or directory");
  const std::string empty = ::testing::TempDir() + "empty_profile.csv";
  { std::ofstream(empty) << "iteration,epoch,layer,zero_fraction\n"; }
  expect_cli_error("run --network synthetic --steps oracle -q --density-profile " + empty, 2,
                   "no data rows (expected rows iteration,epoch,layer,zero_fraction");
  std::remove(empty.c_str());
}

TEST(bad_input, a_grid_value_listed_twice_under_two_spellings_is_refused) {
  const std::string dir = ::testing::TempDir() + "grid_twice";
  expect_cli_error("sweep --grid density=0,-0 --network synthetic --out " + dir, 2,
                   "--grid density: values '0' and '-0' are the same setting; list each value once");
  expect_cli_error("sweep --grid batch=64,6.4e1 --network synthetic --out " + dir, 2,
                   "--grid batch: values '64' and '6.4e1' are the same setting");
  expect_cli_error("sweep --grid pcie.latency=500ns,0.5us --network synthetic --out " + dir, 2,
                   "values '500ns' and '0.5us' are the same setting");
  expect_cli_error("sweep --grid density=0.5,0.5 --network synthetic --out " + dir, 2,
                   "--grid density: value '0.5' listed twice");
}
}  // namespace

namespace {
// Two outputs naming one file however spelled (breaker: "./a.json", a symbolic link) are
// refused before the run; /dev/null may take several outputs.
TEST(bad_input, two_outputs_naming_one_file_are_refused_however_spelled) {
  const std::string a = tmp("same.json"), link = tmp("same_link.json");
  std::remove(a.c_str());
  std::remove(link.c_str());
  const std::string dir = a.substr(0, a.find_last_of('/')), base = a.substr(a.find_last_of('/') + 1);
  std::string err;
  expect_cli_error("run --network synthetic --steps oracle -q --json " + a + " --csv " + dir + "/./" + base, 2,
                   "--json and --csv name the same file");
  ASSERT_EQ(::symlink(base.c_str(), link.c_str()), 0);  // dangling until the run writes a
  expect_cli_error("run --network synthetic --steps oracle -q --json " + a + " --csv " + link, 2,
                   "--json and --csv name the same file");
  EXPECT_FALSE(exists(a));
  std::remove(link.c_str());
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --json /dev/null --csv /dev/null", nullptr, &err), 0) << err;
  EXPECT_FALSE(exists("/dev/null.config.json"));  // no effective-config file beside a device
}
}  // namespace

namespace {
// The rules across parameters are checked once after every option (breaker: a clock override
// before the unit width was refused with the old width in the message).
TEST(bad_input, rules_across_parameters_do_not_depend_on_the_order_of_the_options) {
  std::string err;
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --param 'cdma.clock=1 MHz' --param "
                "cdma.unit_bytes_per_cycle=100",
                nullptr, &err),
            0)
      << err;
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --param cdma.unit_bytes_per_cycle=100 --param "
                "'cdma.clock=1 MHz'",
                nullptr, &err),
            0)
      << err;
  expect_cli_error("run --network synthetic --steps oracle -q --param 'cdma.clock=1 MHz'", 2,
                   "32 bytes/cycle x 1e+06 Hz");
}
}  // namespace

// ---- interrupts, symbolic links, temporary names, messages, standard output ----------------

namespace {


std::string fresh_dir(const std::string& name) {
  const std::string d = tmp(name);
  std::system(("rm -rf '" + d + "'").c_str());
  ::mkdir(d.c_str(), 0755);
  return d;
}

}  // namespace

// A run blocked while its VCD relay exists (the VCD is a FIFO nobody reads: the relay's open
// waits forever, so the moment is certain, not timed) is interrupted: the relay's directory and
// FIFO are removed, a message says so, and the process ends with the signal (not exit 0).
TEST(bad_input, an_interrupted_run_removes_its_temporary_files_and_ends_with_the_signal) {
  const std::string d = fresh_dir("intr"), tmpdir = d + "/tmp", fifo = d + "/f.vcd", err = d + "/stderr";
  ASSERT_EQ(::mkdir(tmpdir.c_str(), 0755), 0);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("TMPDIR", tmpdir.c_str(), 1);
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::signal(SIGINT, SIG_DFL);  // as from a terminal, even if the test runner ignores it
    ::execl(CDMA_VP_EXE, "cdma-vp", "run", "--network", "synthetic", "-q", "--vcd", fifo.c_str(), (char*)nullptr);
    ::_exit(127);
  }
  bool relay = false;
  for (int i = 0; i < 6000 && !relay; ++i) {  // until the relay exists (at most 60 s)
    for (const auto& e : entries(tmpdir)) relay |= e.rfind("cdma-vp-relay.", 0) == 0;
    if (!relay) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!relay) ::kill(pid, SIGKILL);
  ASSERT_TRUE(relay) << "the run never created its VCD relay";
  ::kill(pid, SIGINT);
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT) << st;  // a shell shows 130
  EXPECT_TRUE(entries(tmpdir).empty()) << entries(tmpdir).front();
  EXPECT_NE(slurp(err).find("cdma-vp: interrupted by SIGINT; unfinished output files removed"), std::string::npos)
      << slurp(err);
}

// The relayed output's temporary file beside a regular PATH (PATH.tmp.XXXXXX), its FIFO and
// directory are all registered: a SIGTERM while they exist removes them and ends the process.
TEST(bad_input, an_interrupt_removes_an_unfinished_output_and_its_relay) {
  const std::string d = fresh_dir("intr2"), tmpdir = d + "/tmp", out = d + "/out.vcd";
  ASSERT_EQ(::mkdir(tmpdir.c_str(), 0755), 0);
  std::ofstream(out) << "older\n";  // an older output stays as it was
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("TMPDIR", tmpdir.c_str(), 1);
    const int fd = ::open((d + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::signal(SIGTERM, SIG_DFL);
    install_interrupt_cleanup();
    relayed_output r(out, "--vcd", ".vcd");
    // Everything exists now: the directory with the FIFO, and the temporary file beside out.
    if (entries(tmpdir).size() != 1 || entries(d).size() != 4) ::_exit(10);
    ::raise(SIGTERM);
    ::_exit(11);  // not reached: the handler ends the process with the signal
  }
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) << "exit " << WEXITSTATUS(st);
  EXPECT_TRUE(entries(tmpdir).empty());
  EXPECT_EQ(entries(d), (std::vector<std::string>{"out.vcd", "stderr", "tmp"}));
  EXPECT_EQ(slurp(out), "older\n");
  EXPECT_EQ(slurp(d + "/stderr"), "\ncdma-vp: interrupted by SIGTERM; unfinished output files removed\n");
}

// An output path that is a symbolic link to a file that does not exist yet writes that file,
// as it does for an existing one: the link stays a link (it used to be replaced by a regular
// file, and the check before the run left an empty target behind).
TEST(bad_input, an_output_through_a_dangling_symbolic_link_creates_the_file_it_points_to) {
  const std::string d = fresh_dir("link");
  ASSERT_EQ(::symlink("target.json", (d + "/link.json").c_str()), 0);   // relative: beside the link
  ASSERT_EQ(::symlink("link.json", (d + "/chain.json").c_str()), 0);   // a link to that link
  std::string dump;
  ASSERT_EQ(cli("config --dump --network synthetic", &dump), 0);
  std::string err;
  ASSERT_EQ(cli("config --dump " + d + "/chain.json --network synthetic", nullptr, &err), 0) << err;
  struct ::stat st {};
  ASSERT_EQ(::lstat((d + "/link.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(::lstat((d + "/chain.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(slurp(d + "/target.json"), dump);
  EXPECT_EQ(entries(d), (std::vector<std::string>{"chain.json", "link.json", "target.json"}));
  // A run's JSON (and its effective config beside the link) through a dangling link.
  ASSERT_EQ(::symlink("run-target.json", (d + "/run.json").c_str()), 0);
  ASSERT_EQ(cli("run --network synthetic --steps oracle -q --json " + d + "/run.json", nullptr, &err), 0) << err;
  ASSERT_EQ(::lstat((d + "/run.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(json::parse(slurp(d + "/run-target.json"))["network"], "synthetic");
  EXPECT_TRUE(exists(d + "/run.config.json"));
  // A link into a directory that does not exist: refused before anything runs, naming both.
  ASSERT_EQ(::symlink("nodir/x.json", (d + "/bad.json").c_str()), 0);
  expect_cli_error("config --dump " + d + "/bad.json", 2,
                   "config --dump " + d + "/bad.json: cannot open for writing: No such file or directory "
                   "(a symbolic link to " + d + "/nodir/x.json)");
  // Two links pointing at each other: refused (one of them was replaced by a regular file).
  ASSERT_EQ(::symlink("loopb.json", (d + "/loopa.json").c_str()), 0);
  ASSERT_EQ(::symlink("loopa.json", (d + "/loopb.json").c_str()), 0);
  expect_cli_error("config --dump " + d + "/loopa.json", 2,
                   "config --dump " + d + "/loopa.json: a loop of symbolic links: Too many levels of symbolic "
                   "links; expected a file or a link to one");
  ASSERT_EQ(::lstat((d + "/loopa.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

// The temporary file of a checked write has a unique name created with O_EXCL: a user's file
// named PATH.tmp is neither overwritten nor renamed over PATH.
TEST(bad_input, a_users_file_named_path_tmp_is_left_alone) {
  const std::string d = fresh_dir("usertmp");
  std::ofstream(d + "/out.json.tmp") << "mine\n";
  ASSERT_EQ(cli("config --dump " + d + "/out.json --network synthetic"), 0);
  EXPECT_EQ(slurp(d + "/out.json.tmp"), "mine\n");
  EXPECT_EQ(json::parse(slurp(d + "/out.json"))["network"], "synthetic");
  EXPECT_EQ(entries(d), (std::vector<std::string>{"out.json", "out.json.tmp"}));  // no temporary file left
}

// Numbers on the command line are decimal; a value is refused for the rule it breaks; a message
// names the option the value came from and prints numbers with the digits they need.
TEST(bad_input, command_line_numbers_are_decimal_and_messages_say_the_real_rule) {
  EXPECT_EQ(override_error("density=0x0.8"),
            "--param: density = \"0x0.8\": hexadecimal is not accepted; expected a number in [0, 1] written in decimal");
  EXPECT_EQ(override_error("batch=0x10"), "--param: batch = \"0x10\": hexadecimal is not accepted; expected an "
                                          "integer in [1, 1048576] written in decimal");
  EXPECT_EQ(override_error("pcie.latency=0x10 ns"),
            "--param: pcie.latency = \"0x10 ns\": hexadecimal is not accepted; expected a time with its unit such as "
            "\"400 ns\", from 0 ns to 1 ms, written in decimal");
  EXPECT_EQ(override_error("density=1e400"), "--param: density = \"1e400\": too large for a number; expected a "
                                             "number in [0, 1]");
  EXPECT_EQ(override_error("density=abc"), "--param: density = \"abc\": not a decimal number; expected a number in [0, 1]");
  // 1e-320 is a number (subnormal) in [0, 1]: accepted as it is, not "not a number".
  platform_config c = preset("titanx-gen3");
  apply_override(c, "density=1e-320");
  EXPECT_EQ(c.synthetic_density, 1e-320);
  EXPECT_GT(c.synthetic_density, 0.0);
  // Just below a bound: printed with its digits (0.0099999999), never as the bound (%g: 0.01).
  EXPECT_EQ(override_error("gpu.flop_efficiency=0.0099999999").rfind(
                "gpu.flop_efficiency = 0.0099999999: expected a fraction of peak in [0.01, 1]", 0), 0u);
  // 0.0999999999 bytes/cycle x 1e9 Hz = 99999999.9 B/s; the double product is 99999999.89999999
  // (/usr/bin/python3: repr(0.0999999999*1e9)); %g printed it as 1e+08, the bound.
  EXPECT_NE(override_error("cdma.unit_bytes_per_cycle=0.0999999999")
                .find("0.0999999999 bytes/cycle x 1e+09 Hz = 99999999.89999999 B/s per compression unit: expected at "
                      "least 100 MB/s"), std::string::npos);
  // The spill cache's upper bound in a readable unit: 1 PiB = 2^50 B = 1024 TiB.
  EXPECT_EQ(override_error("host_mem.spill_cache=100 KiB"),
            "--param: host_mem.spill_cache = \"100 KiB\": expected a size such as \"1 MiB\", from 1 MiB to 1024 TiB");
  // A shortcut option is named as given, not as --param.
  expect_cli_error("run --missing-activations bogus", 2,
                   "cdma-vp: --missing-activations: missing_activations = \"bogus\": expected one of auto error dense");
  expect_cli_error("run --batch 0", 2, "cdma-vp: --batch: batch = \"0\": expected an integer in [1, 1048576]");
  expect_cli_error("run --zero-run 0x10", 2, "cdma-vp: --zero-run: zero_run = \"0x10\": hexadecimal is not accepted");
  // --batch and --density are read by the same parser as --param (they were typed options whose
  // error said only "the argument ('1.5') for option '--batch' is invalid").
  expect_cli_error("run --batch 1.5", 2, "cdma-vp: --batch: batch = \"1.5\": expected an integer in [1, 1048576]");
  expect_cli_error("run --density abc", 2,
                   "cdma-vp: --density: density = \"abc\": not a decimal number; expected a number in [0, 1]");
  expect_cli_error("run --density 0x1", 2, "cdma-vp: --density: density = \"0x1\": hexadecimal is not accepted");
}

// Standard output is checked like any output: a failed write is exit 3 with a message on stderr
// (the files are still written); "-" is standard output for config --dump; the unit clock is
// printed in a unit that shows it.
TEST(bad_input, standard_output_is_checked_and_dash_means_standard_output) {
  const std::string d = fresh_dir("dash");
  std::string out, err;
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --json " + d + "/r.json > /dev/full", nullptr, &err), 3);
  EXPECT_EQ(err, "cdma-vp: error: standard output: write failed: No space left on device (the summary is lost; "
                 "the output files are still written)\n");
  EXPECT_EQ(json::parse(slurp(d + "/r.json"))["network"], "synthetic");
  EXPECT_EQ(cli("config --presets > /dev/full", nullptr, &err), 3);
  EXPECT_EQ(err, "cdma-vp: error: standard output: write failed: No space left on device\n");
  EXPECT_EQ(cli("--help > /dev/full", nullptr, &err), 3);
  EXPECT_EQ(cli("config --list > /dev/full", nullptr, &err), 3);
  // config --dump -: standard output, no file named "-".
  const std::string prefix = "cd '" + d + "';";
  EXPECT_EQ(cli("config --dump - --network synthetic", &out, &err, prefix), 0) << err;
  EXPECT_EQ(json::parse(out)["network"], "synthetic");
  EXPECT_FALSE(exists(d + "/-"));
  // 1 MHz (with 100 B/cycle: 100 MB/s, the floor of a unit) used to print as "0.00 GHz".
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --param 'cdma.clock=1 MHz' --param "
                "cdma.unit_bytes_per_cycle=100", &out, &err), 0) << err;
  EXPECT_NE(out.find("4 compression units x 100 B/cycle at 1 MHz\n"), std::string::npos) << out;
  // A codec with its own unit rate says so (new-user trial s20 F9); another codec's is not shown.
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --codec zlib --param cdma.codec_bytes_per_cycle.zlib=4",
                &out, &err), 0) << err;
  EXPECT_NE(out.find("codec zlib, window 4096 B, 4 compression units x 4 (zlib's own; the unit rate is 32) B/cycle at "
                     "1 GHz\n"), std::string::npos) << out;
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --param cdma.codec_bytes_per_cycle.zlib=4", &out, &err), 0)
      << err;
  EXPECT_NE(out.find("codec zvc, window 4096 B, 4 compression units x 32 B/cycle at 1 GHz\n"), std::string::npos) << out;
  // A decompression rate of the codec's own is named too (session 23).
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --codec zlib --param cdma.codec_bytes_per_cycle.zlib=4 "
                "--param cdma.codec_decompression_bytes_per_cycle.zlib=16",
                &out, &err), 0) << err;
  EXPECT_NE(out.find("4 compression units x 4 (zlib's own; the unit rate is 32; decompression 16) B/cycle at 1 GHz\n"),
            std::string::npos) << out;
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --param cdma.codec_decompression_bytes_per_cycle.zvc=64",
                &out, &err), 0) << err;
  EXPECT_NE(out.find("4 compression units x 32 (decompression 64) B/cycle at 1 GHz\n"), std::string::npos) << out;
  // Every digit of a rate given, and the decompression unit count when it differs (breaker s23).
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --param cdma.codec_decompression_bytes_per_cycle.zvc=16.123456789 "
                "--param cdma.decompression_units=1",
                &out, &err), 0) << err;
  EXPECT_NE(out.find("4 compression units (1 decompression) x 32 (decompression 16.123456789) B/cycle at 1 GHz\n"),
            std::string::npos) << out;
  // A crossbar is named with what crosses it (new-user trial s22 F12); without one, nothing.
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --param 'cdma.xbar_bandwidth=16 GB/s'", &out, &err), 0) << err;
  EXPECT_NE(out.find("at 1 GHz, crossbar 16 GB/s (units at the engine: activations cross it)\n"), std::string::npos)
      << out;
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --param 'cdma.xbar_bandwidth=64 GB/s' --param "
                "cdma.placement=memory_controller", &out, &err), 0) << err;
  EXPECT_NE(out.find("at 1 GHz, crossbar 64 GB/s (units at the memory controller: the cDMA step's compressed data "
                     "crosses it)\n"),
            std::string::npos) << out;
  // What bounds the transfers (new-user trial s21 F2). One unit of 0.1 B/cycle x 1 GHz =
  // 100 MB/s each way: the units bound the cDMA transfers (far below PCIe's ~12-14 GB/s and
  // host memory's 25.6 GB/s); the vDNN step has no units: PCIe bounds it (12.9 GB/s of MWr
  // payload with the measured-host credits below 25.6 GB/s of host memory).
  const std::string bj = fresh_dir("bounds") + "/r.json";
  EXPECT_EQ(cli("run --network synthetic --steps vdnn,cdma -q --param cdma.compression_units=1 --param "
                "cdma.decompression_units=1 --param cdma.unit_bytes_per_cycle=0.1 --json " + bj, &out, &err), 0) << err;
  {
    // The same in --json: transfer_bounds.STEP.{offload,prefetch}; the vDNN step has no units.
    const json tb = json::parse(slurp(bj))["transfer_bounds"];
    EXPECT_EQ(tb["cdma"]["offload"]["bound"], "compression units") << tb.dump();
    EXPECT_EQ(tb["cdma"]["prefetch"]["bound"], "decompression units") << tb.dump();
    EXPECT_EQ(tb["vdnn"]["offload"]["bound"], "PCIe d2h") << tb.dump();
    EXPECT_FALSE(tb["vdnn"]["offload"]["share_of_peak"].contains("compression units")) << tb.dump();
    // 1 unit of 100 MB/s: the units' share is the activation rate over 0.1 GB/s.
    EXPECT_DOUBLE_EQ(tb["cdma"]["offload"]["share_of_peak"]["compression units"].get<double>(),
                     tb["cdma"]["offload"]["activation_GBps"].get<double>() / 0.1);
  }
  {
    // Only the decoder slow (cdma.codec_decompression_bytes_per_cycle.zvc = 0.1: one unit of
    // 100 MB/s; session 23): it bounds the prefetch at its rate, the offload stays PCIe-bound
    // with the compression units at their 32 B/cycle.
    std::string o, e;
    EXPECT_EQ(cli("run --network synthetic --steps cdma -q --param cdma.decompression_units=1 --param "
                  "cdma.codec_decompression_bytes_per_cycle.zvc=0.1 --json " + bj, &o, &e), 0) << e;
    const json tb = json::parse(slurp(bj))["transfer_bounds"];
    EXPECT_EQ(tb["cdma"]["offload"]["bound"], "PCIe d2h") << tb.dump();
    EXPECT_EQ(tb["cdma"]["prefetch"]["bound"], "decompression units") << tb.dump();
    EXPECT_DOUBLE_EQ(tb["cdma"]["prefetch"]["share_of_peak"]["decompression units"].get<double>(),
                     tb["cdma"]["prefetch"]["activation_GBps"].get<double>() / 0.1);
    EXPECT_LE(tb["cdma"]["prefetch"]["activation_GBps"].get<double>(), 0.1) << tb.dump();
    EXPECT_DOUBLE_EQ(tb["cdma"]["offload"]["share_of_peak"]["compression units"].get<double>(),
                     tb["cdma"]["offload"]["activation_GBps"].get<double>() / (4 * 32.0));
  }
  const std::size_t v = out.find("vDNN transfers (share of each resource's peak while transferring):\n  offload : ");
  const std::size_t c = out.find("cDMA transfers (share of each resource's peak while transferring):\n  offload : ");
  ASSERT_NE(v, std::string::npos) << out;
  ASSERT_NE(c, std::string::npos) << out;
  const std::string vdnn = out.substr(v, c - v), cdma = out.substr(c);
  EXPECT_NE(vdnn.find("(bound: PCIe d2h)\n  prefetch: "), std::string::npos) << vdnn;
  EXPECT_NE(vdnn.find("(bound: PCIe h2d)\n"), std::string::npos) << vdnn;
  EXPECT_EQ(vdnn.find("units"), std::string::npos) << vdnn;
  EXPECT_NE(cdma.find("(bound: compression units)\n  prefetch: "), std::string::npos) << cdma;
  EXPECT_NE(cdma.find("(bound: decompression units)\n"), std::string::npos) << cdma;
  // With a host memory of 1 GB/s, host memory bounds the vDNN transfers.
  EXPECT_EQ(cli("run --network synthetic --steps vdnn -q --param 'host_mem.bandwidth=1 GB/s'", &out, &err), 0) << err;
  EXPECT_NE(out.find("(bound: host memory)\n  prefetch: "), std::string::npos) << out;
  // A GPU crossbar of 1 GB/s (cdma.xbar_bandwidth) bounds both steps, far below PCIe's ~12 GB/s
  // (new-user trial s22: it was not among the shares and the report named PCIe). Placement dma:
  // the crossbar carries the activations uncompressed, so at most 1 GB/s of them; placement
  // memory_controller: only the cDMA step's compressed data crosses it, so the activation rate
  // is the ZVC ratio of density 0.5 times higher: per 32 floats (128 B) a 4-B mask and 64 B of
  // nonzeros, 128 / 68 = 1.88x. The vDNN step's plain copies cross uncompressed either way.
  double act_dma = 0;
  for (const std::string pl : {"dma", "memory_controller"}) {
    EXPECT_EQ(cli("run --network synthetic --steps vdnn,cdma -q --param 'cdma.xbar_bandwidth=1 GB/s' --param "
                  "cdma.placement=" + pl + " --json " + bj, &out, &err), 0) << err;
    const json tb = json::parse(slurp(bj))["transfer_bounds"];
    for (const char* step : {"vdnn", "cdma"})
      for (const char* dir : {"offload", "prefetch"}) {
        const json& d = tb[step][dir];
        EXPECT_EQ(d["bound"], "GPU crossbar") << pl << " " << step << " " << dir << " " << d.dump();
        const double share = d["share_of_peak"]["GPU crossbar"].get<double>();
        EXPECT_GT(share, 0.8) << d.dump();
        EXPECT_LE(share, 1.0) << d.dump();
      }
    EXPECT_LE(tb["vdnn"]["offload"]["activation_GBps"].get<double>(), 1.0) << tb.dump();
    const double act = tb["cdma"]["offload"]["activation_GBps"].get<double>();
    if (pl == "dma") {
      EXPECT_LE(act, 1.0) << tb.dump();
      EXPECT_DOUBLE_EQ(tb["cdma"]["offload"]["share_of_peak"]["GPU crossbar"].get<double>(), act / 1.0);
      act_dma = act;
    } else {
      EXPECT_GT(act, 1.0) << tb.dump();
      EXPECT_NEAR(act / act_dma, 128.0 / 68.0, 0.1) << tb.dump();
    }
    EXPECT_NE(out.find("GPU crossbar"), std::string::npos) << out;
  }
  // Unlimited (the default): no crossbar share.
  EXPECT_EQ(cli("run --network synthetic --steps cdma -q --json " + bj, &out, &err), 0) << err;
  EXPECT_FALSE(json::parse(slurp(bj))["transfer_bounds"]["cdma"]["offload"]["share_of_peak"].contains("GPU crossbar"));
  // A step that did not run: null directions, and no lines.
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --json " + bj, &out, &err), 0) << err;
  EXPECT_TRUE(json::parse(slurp(bj))["transfer_bounds"]["cdma"]["offload"].is_null());
  EXPECT_EQ(out.find("transfers (share"), std::string::npos) << out;
}

// ---- a TMPDIR that is not a directory ------------------------------------------------------

// The VCD relay picks its directory as the host-memory spill does ($TMPDIR, else /tmp) and,
// like it, refuses before anything is simulated when it is unusable, naming TMPDIR (the relay
// named only the template path; the spill named neither TMPDIR nor that it can be changed).
TEST(bad_input, an_unusable_tmpdir_is_named_by_the_vcd_relay_and_by_the_spill) {
  const std::string vcd = tmp("tmpdir.vcd");
  std::string out, err;
  EXPECT_EQ(cli("run --network synthetic --batch 1 --steps oracle --vcd " + vcd, &out, &err,
                "TMPDIR=/nonexistent/cdma-vp"),
            2);
  EXPECT_NE(err.find("cdma-vp: --vcd " + vcd + ": cannot create a temporary directory in $TMPDIR "
                     "(/nonexistent/cdma-vp): No such file or directory (the VCD is relayed through a FIFO "
                     "there; expected TMPDIR to name a writable directory, or TMPDIR unset to use /tmp)\n"),
            std::string::npos) << err;
  EXPECT_EQ(out.find("step time"), std::string::npos) << out;  // nothing simulated
  EXPECT_FALSE(exists(vcd));
  EXPECT_EQ(cli("run --network synthetic --batch 1 --steps oracle --param host_mem.spill=on", &out, &err,
                "TMPDIR=/nonexistent/cdma-vp"),
            2);
  EXPECT_NE(err.find("cannot create a spill file in directory '/nonexistent/cdma-vp' ($TMPDIR): No such file or "
                     "directory (expected a writable directory; set host_mem.spill_dir or TMPDIR)"),
            std::string::npos) << err;
  // An empty TMPDIR is unset: /tmp (both run).
  EXPECT_EQ(cli("run --network synthetic --batch 1 --steps oracle --param host_mem.spill=on --vcd " + vcd, &out, &err,
                "TMPDIR="),
            0) << err;
  EXPECT_TRUE(exists(vcd));
  std::remove(vcd.c_str());
}

// ---- sweep --merge: the status first, the plan checked -----------------------------------

TEST(bad_input, sweep_merge_compares_grid_values_only_when_the_plans_arguments_cannot_be_read_any_more) {
  // The plan's --config file moved after the sweep: the merge says so and still checks the
  // grid values (the runs stay ok; an edited grid value is still caught).
  const std::string dir = tmp("sweep_merge_moved_config");
  std::system(("rm -rf " + dir + " " + dir + ".json " + dir + ".moved.json").c_str());
  std::ofstream(dir + ".json") << "{\"pcie\": {\"lanes\": 8}}\n";
  std::string out, err;
  ASSERT_EQ(cli("sweep --config " + dir + ".json --grid pcie.gen=3,4 --network synthetic --batch 1 --steps oracle "
                "--no-plot --jobs 1 --out " + dir, &out, &err),
            0) << out << err;
  ASSERT_EQ(std::rename((dir + ".json").c_str(), (dir + ".moved.json").c_str()), 0);
  EXPECT_EQ(cli("sweep --merge " + dir + " --no-plot", &out), 0) << out;
  EXPECT_NE(out.find("run 0: the plan's arguments for run 0 cannot be read now (" + dir +
                     ".json: cannot open the configuration file); only its grid values are compared with " + dir +
                     "/run_0.json\n"),
            std::string::npos) << out;
  EXPECT_NE(out.find("(2 ok)"), std::string::npos) << out;
  std::system(("rm -rf " + dir + " " + dir + ".moved.json").c_str());
}

TEST(bad_input, sweep_merge_reports_by_status_checks_results_against_the_plan_and_numbers_runs_from_0) {
  const std::string dir = tmp("sweep_merge_check");
  std::system(("rm -rf " + dir).c_str());
  std::string out, err;
  // --jobs is read like an integer parameter: 1e0 is 1 (it was refused).
  ASSERT_EQ(cli("sweep --grid pcie.gen=3,4 --network synthetic --batch 1 --steps oracle --no-plot --jobs 1e0 --out " +
                    dir, &out, &err),
            0) << out << err;
  // Progress on stderr numbers runs from 0, as sweep.csv and run_K.json do (it said "run 1 of 2").
  EXPECT_NE(err.find("run 0 done, 1 of 2 finished\nrun 1 done, 2 of 2 finished\n"), std::string::npos) << err;
  auto row = [&](int k) {
    std::ifstream csv(dir + "/sweep.csv");
    std::string l;
    for (int i = 0; i <= k + 1; ++i) std::getline(csv, l);
    return l;
  };
  EXPECT_EQ(row(0).rfind("0,3,ok,synthetic,1,synthetic,", 0), 0u) << row(0);
  const std::string run0 = slurp(dir + "/run_0.json");
  // A run whose status says it failed or was interrupted is reported so, even with a (stale)
  // run_K.json (it was reported ok from the JSON).
  for (const std::string status : {"failed(exit=2)", "interrupted(signal=2)"}) {
    std::ofstream(dir + "/run_0.status") << status << "\n";
    EXPECT_EQ(cli("sweep --merge " + dir + " --no-plot", &out), 1) << out;
    EXPECT_NE(out.find("run 0: " + dir + "/run_0.json not used: " + dir + "/run_0.status says " + status + "\n"),
              std::string::npos) << out;
    EXPECT_EQ(row(0), "0,3," + status + ",synthetic,1,synthetic,,,,,,,,,,");
    EXPECT_EQ(row(1).rfind("1,4,ok,", 0), 0u) << row(1);
  }
  // A result whose recorded grid value is not the plan's (run 1's result as run_0.json) is a
  // bad-result row naming the file and the value (it was merged as run 0's result).
  std::ofstream(dir + "/run_0.status") << "ok\n";
  std::ofstream(dir + "/run_0.json") << slurp(dir + "/run_1.json");
  EXPECT_EQ(cli("sweep --merge " + dir + " --no-plot", &out), 1) << out;
  EXPECT_NE(out.find("run 0: " + dir + "/run_0.json is not the result of the plan's run 0: it records pcie.gen = 4, "
                     "the plan has pcie.gen = 3\n"),
            std::string::npos) << out;
  EXPECT_EQ(row(0), "0,3,bad-result,synthetic,1,synthetic,,,,,,,,,,");
  // A status "ok" without a run_K.json is not a result (it was a row "ok" with empty cells).
  std::remove((dir + "/run_0.json").c_str());
  EXPECT_EQ(cli("sweep --merge " + dir + " --no-plot", &out), 1) << out;
  EXPECT_NE(out.find("run 0: " + dir + "/run_0.status says ok but " + dir + "/run_0.json is missing\n"),
            std::string::npos) << out;
  EXPECT_EQ(row(0), "0,3,bad-result,synthetic,1,synthetic,,,,,,,,,,");
  // The right result merges again (a value written another way, "3" and 3, is the same).
  std::ofstream(dir + "/run_0.json") << run0;
  EXPECT_EQ(cli("sweep --merge " + dir + " --no-plot", &out), 0) << out;
  EXPECT_EQ(row(0).rfind("0,3,ok,", 0), 0u) << row(0);
  // Edited results are not "ok" (breaker, session 7): no "config" (the grid check was skipped),
  // another batch than the plan's, a step time that is not a number >= 0, and a failed
  // verification (it read "ok" with empty cells and counted as failed).
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string j = run0;
    const auto at = j.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) j.replace(at, from.size(), to);
    std::ofstream(dir + "/run_0.json") << j;
    return cli("sweep --merge " + dir + " --no-plot", &out);
  };
  EXPECT_EQ(edited("\"config\":", "\"konfig\":"), 1) << out;
  EXPECT_NE(out.find("run 0: " + dir + "/run_0.json is not a cdma-vp run result\n"), std::string::npos) << out;
  EXPECT_EQ(row(0), "0,3,bad-result,synthetic,1,synthetic,,,,,,,,,,");
  EXPECT_EQ(edited("\"batch\": 1,", "\"batch\": 64,"), 1) << out;
  EXPECT_NE(out.find("run 0: " + dir + "/run_0.json is not the result of the plan's run 0: it records batch = 64, "
                     "the plan has batch = 1\n"),
            std::string::npos) << out;
  EXPECT_EQ(row(0), "0,3,bad-result,synthetic,1,synthetic,,,,,,,,,,");
  // A parameter outside the grid (session 8: an edited pcie.lanes was merged as ok): the run's
  // whole configuration is compared with what the plan's arguments give.
  EXPECT_EQ(edited("\"lanes\": 16", "\"lanes\": 8"), 1) << out;
  EXPECT_NE(out.find("run 0: " + dir + "/run_0.json is not the result of the plan's run 0: it records pcie.lanes = 8, "
                     "the plan has pcie.lanes = 16\n"),
            std::string::npos) << out;
  EXPECT_EQ(row(0), "0,3,bad-result,synthetic,1,synthetic,,,,,,,,,,");
  // (The runs are --steps oracle: nothing to verify, "verified" is null since session 8.)
  EXPECT_EQ(edited("\"verified\": null", "\"verified\": false"), 1) << out;
  EXPECT_NE(out.find("run 0: " + dir + "/run_0.json records a failed verification ("), std::string::npos) << out;
  EXPECT_EQ(row(0), "0,3,mismatch,synthetic,1,synthetic,,,,,,,,,,");
  // "verified": null (nothing to verify) is no result of a run with a transfer step.
  EXPECT_EQ(edited("\"vdnn\": null", "\"vdnn\": 0.001"), 1) << out;
  EXPECT_NE(out.find("run 0: " + dir + "/run_0.json is not a cdma-vp run result\n"), std::string::npos) << out;
  EXPECT_EQ(row(0), "0,3,bad-result,synthetic,1,synthetic,,,,,,,,,,");
  // A FIFO named run_0.json is not opened (the merge blocked on it): bad-result at once.
  std::remove((dir + "/run_0.json").c_str());
  ASSERT_EQ(::mkfifo((dir + "/run_0.json").c_str(), 0600), 0);
  EXPECT_EQ(cli("sweep --merge " + dir + " --no-plot", &out), 1) << out;
  EXPECT_NE(out.find("run 0: " + dir + "/run_0.json is not a regular file; expected a cdma-vp run result\n"),
            std::string::npos) << out;
  EXPECT_EQ(row(0), "0,3,bad-result,synthetic,1,synthetic,,,,,,,,,,");
  std::remove((dir + "/run_0.json").c_str());
  std::ofstream(dir + "/run_0.json") << run0;
  // run_K.status holds exactly one status word, optionally + a newline (breaker M1/M2,
  // session 7: only the first word counted, "banana" was a status, ESC and BEL went raw to the
  // terminal and sweep.csv); an empty one is no status (judged by the result, here ok).
  auto merged_with_status = [&](const std::string& status) {
    std::ofstream(dir + "/run_0.status", std::ios::binary) << status;
    return cli("sweep --merge " + dir + " --no-plot", &out, &err);
  };
  EXPECT_EQ(merged_with_status(""), 0) << out << err;
  EXPECT_NE(out.find("run 0: " + dir + "/run_0.status is empty: read as no status"), std::string::npos) << out;
  EXPECT_EQ(row(0).rfind("0,3,ok,", 0), 0u) << row(0);
  for (const std::string good : {"ok", "ok\n"}) {
    EXPECT_EQ(merged_with_status(good), 0) << out << err;
    EXPECT_EQ(row(0).rfind("0,3,ok,", 0), 0u) << row(0);
  }
  const std::string expected_form = "; expected one status word, ok, failed(exit=N) with N 1..255, failed(signal=N) "
                                    "or interrupted(signal=N) with N 1..64 (no leading zeros), optionally followed "
                                    "by a newline\n";
  for (const auto& [status, shown] :
       {std::pair<std::string, std::string>{"ok\nfailed(exit=1)\n", "ok\\x0Afailed(exit=1)\\x0A"},
        {"banana", "banana"}, {"ok ", "ok "}, {"ok\n\n", "ok\\x0A\\x0A"}, {"failed(exit=)", "failed(exit=)"},
        {"\x1B[31mok\x07", "\\x1B[31mok\\x07"},
        // Numbers this command never writes (breaker, session 8): exit 0 is no failure, a
        // leading zero, a signal beyond 64, an exit status beyond 255.
        {"failed(exit=0)", "failed(exit=0)"}, {"failed(exit=01)", "failed(exit=01)"},
        {"interrupted(signal=999)", "interrupted(signal=999)"}, {"failed(signal=0)", "failed(signal=0)"},
        {"failed(exit=256)", "failed(exit=256)"}}) {
    EXPECT_EQ(merged_with_status(status), 1) << shown << "\n" << out << err;
    EXPECT_NE(out.find("run 0: " + dir + "/run_0.status holds \"" + shown + "\"" + expected_form), std::string::npos)
        << out;
    EXPECT_EQ(row(0), "0,3,bad-status,synthetic,1,synthetic,,,,,,,,,,");
    const std::string csv = slurp(dir + "/sweep.csv");
    for (const std::string& text : {out, err, csv}) {
      EXPECT_EQ(text.find('\x1B'), std::string::npos) << text;
      EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
    }
  }
  std::remove((dir + "/run_0.status").c_str());
  // A directory where sweep.png goes: an error naming it, exit status 3 as for any file of the
  // sweep that cannot be written (it was a Python traceback blaming matplotlib, and exit 0).
  ASSERT_EQ(::mkdir((dir + "/sweep.png").c_str(), 0755), 0);
  EXPECT_EQ(cli("sweep --merge " + dir, &out, &err), 3) << out << err;
  EXPECT_NE(err.find("cdma-vp: error: " + dir + "/sweep.png: is a directory; expected a file name for the plot"),
            std::string::npos) << err;
  EXPECT_NE(err.find("cdma-vp: error: sweep: " + dir + "/sweep.png / .svg could not be written"), std::string::npos)
      << err;
  EXPECT_EQ(err.find("Traceback"), std::string::npos) << err;
  EXPECT_EQ(out.find("matplotlib"), std::string::npos) << out;
  EXPECT_FALSE(exists(dir + "/sweep.svg"));
  ::rmdir((dir + "/sweep.png").c_str());
  // A file or a missing folder given to --merge is named as such (it said
  // "DIR/run_0.json/sweep.plan.json: not found").
  expect_cli_error("sweep --merge " + dir + "/run_0.json", 2,
                   "cdma-vp: --merge " + dir + "/run_0.json: not a folder; expected the --out DIR of a cdma-vp sweep "
                   "(the folder holding sweep.plan.json)");
  expect_cli_error("sweep --merge " + dir + "/nosuch", 2, "cdma-vp: --merge " + dir + "/nosuch: no such folder");
  // An empty --merge folder is named as such (it said "no --grid given").
  expect_cli_error("sweep --merge ''", 2, "cdma-vp: --merge '': an empty folder name; expected the --out DIR of a "
                                          "cdma-vp sweep");
  // A network given as a layer file: the result's "network" is its name (fmnist_cnn), its
  // config the path; the plan's check compares the path and merges the run as ok.
  const std::string file_dir = tmp("sweep_merge_layer_file");
  std::system(("rm -rf " + file_dir).c_str());
  ASSERT_EQ(cli("sweep --grid pcie.gen=3 --network " + std::string(CDMA_TESTS_DIR) +
                    "/../workloads/networks/fmnist_cnn.json --batch 1 --steps oracle --no-plot --out " + file_dir,
                &out, &err),
            0) << out << err;
  EXPECT_EQ(cli("sweep --merge " + file_dir + " --no-plot", &out), 0) << out;
  std::system(("rm -rf " + file_dir).c_str());
  // --jobs: a whole number in [1, 65536], the bound named.
  for (const std::string v : {"0", "65537", "2.5", "-1", "x"}) {
    EXPECT_EQ(cli("sweep --grid pcie.gen=3 --network synthetic --jobs '" + v + "' --out " + dir, nullptr, &err), 2) << v;
    EXPECT_NE(err.find("cdma-vp: --jobs " + v + ": expected a whole number of runs at once in [1, 65536]\n"),
              std::string::npos) << err;
  }
  // An empty value is named as such (it read "--jobs : expected ...").
  expect_cli_error("sweep --grid pcie.gen=3 --network synthetic --jobs '' --out " + dir, 2,
                   "cdma-vp: --jobs '': an empty value; expected a whole number of runs at once in [1, 65536]\n");
  EXPECT_EQ(cli("sweep --grid pcie.gen=3 --network synthetic --jobs 0x2 --out " + dir, nullptr, &err), 2);
  EXPECT_NE(err.find("cdma-vp: --jobs 0x2: hexadecimal is not accepted; expected a whole number of runs at once in "
                     "[1, 65536] written in decimal\n"),
            std::string::npos) << err;
  std::system(("rm -rf " + dir).c_str());
}

// ---- bench workload options (breaker M3, session 7) ----------------------------------------

TEST(bad_input, bench_workload_reads_options_as_the_configuration_does) {
  std::string out, err;
  // Whole numbers written any decimal way (1e0 was refused, config and sweep accept it), and
  // --opt=value forms (were unknown options).
  ASSERT_EQ(cli("bench workload --network synthetic --batches 1 --produce-threads 1e0 --density 0.5", &out, &err), 0)
      << out << err;
  EXPECT_NE(out.find("1 activation producer(s)"), std::string::npos) << out;
  ASSERT_EQ(cli("bench workload --network=synthetic --batches=1,2.0 --produce-threads=3", &out, &err), 0) << out << err;
  EXPECT_NE(out.find("3 activation producer(s)"), std::string::npos) << out;
  EXPECT_NE(out.find("\n2 "), std::string::npos) << out;  // the row of batch 2
  // Spaces around a batch size are ignored, as in the CSV inputs (were refused); a small run
  // says MB, not "0.0 GB".
  ASSERT_EQ(cli("bench workload --network synthetic --batches '1, 2'", &out, &err), 0) << out << err;
  EXPECT_NE(out.find("\n2 "), std::string::npos) << out;
  EXPECT_EQ(out.find("verified 0.0 GB"), std::string::npos) << out;
  EXPECT_NE(out.find(" MB, ratio"), std::string::npos) << out;
  // Refused before anything runs, naming the option, the value, the expected form and where
  // the options are listed (they pointed to `cdma-vp --help`).
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"--batches '1,'", "--batches '1,': an empty batch size (item 2); expected comma-separated batch sizes"},
           {"--batches ',1'", "--batches ',1': an empty batch size (item 1)"},
           {"--batches=", "--batches '': an empty batch size (item 1)"},
           {"--batches 1,2.5", "--batches: batch = \"2.5\": expected an integer in [1, 1048576]"},
           {"--produce-threads 65", "--produce-threads: produce_threads = \"65\": expected an integer in [1, 64]"},
           {"--produce-threads 0x2", "--produce-threads: produce_threads = \"0x2\": hexadecimal is not accepted"},
           {"--density 1.5", "--density: density = \"1.5\": expected a number in [0, 1]"},
           {"--full=1", "--full takes no value (got --full=1)"},
           {"--produce-threads", "--produce-threads needs a value"},
           {"--bogus", "unknown option '--bogus'"}}) {
    EXPECT_EQ(cli("bench workload --network synthetic " + args, &out, &err), 2) << args << "\n" << out << err;
    EXPECT_NE(err.find("cdma-vp: bench workload: " + needle), std::string::npos) << args << "\n" << err;
    EXPECT_NE(err.find("\n(see cdma-vp bench workload --help)\n"), std::string::npos) << err;
    EXPECT_EQ(out, "") << args;
  }
  // An unknown network fails before the table header is printed.
  EXPECT_EQ(cli("bench workload --network nosuch --batches 1", &out, &err), 2) << out << err;
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("cdma-vp: bench workload: --network nosuch: "), std::string::npos) << err;
  EXPECT_NE(err.find("(see cdma-vp bench workload --help)"), std::string::npos) << err;
}

// ---- layer-time table: no rows; the step bound names the file (breaker M4, session 7) -------

TEST(bad_input, a_layer_time_table_without_rows_is_refused_naming_the_file) {
  const auto net = wl::make_network("synthetic", 1);
  const auto base = wl::roofline_times(net, wl::titan_x_maxwell());
  const std::string p = tmp("header_only.csv");
  for (const char* text : {"layer,forward_ms,backward_ms\n", "layer,forward_ms,backward_ms\n\n# none yet\n",
                           "\xEF\xBB\xBFlayer,forward_ms,backward_ms\r\n"}) {
    std::ofstream(p, std::ios::binary) << text;
    try {
      wl::apply_time_table(p, net, base);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const wl::layer_time_error& e) {
      EXPECT_NE(std::string(e.what()).find(p + ": no rows after the header; expected one row "
                                           "layer,forward_ms,backward_ms per layer"),
                std::string::npos) << e.what();
    }
  }
  std::remove(p.c_str());
}

// ---- --steps: checked where it is given (breaker L2, session 7: "steps: ..." at run time) -----

TEST(bad_input, steps_are_checked_naming_the_option_and_the_valid_steps) {
  for (const std::string v : {"CDMA", "cdma,vdnn", "oracle,,cdma", "oracle,oracle", "cdma,", ""})
    expect_cli_error("run --network synthetic --batch 1 -q --steps '" + v + "'", 2,
                     "cdma-vp: --steps: steps = \"" + v + "\": expected a comma-separated subset of oracle,vdnn,cdma "
                     "in that order, each once and in lower case (e.g. cdma, vdnn,cdma or oracle,vdnn,cdma)");
  expect_cli_error("run --network synthetic --batch 1 -q --param steps=Oracle", 2,
                   "cdma-vp: --param: steps = \"Oracle\": expected a comma-separated subset");
}

// ---- breaker report, session 9 -------------------------------------------------------------

namespace {

// #1: one parameter under two spellings in two --grid axes (the rows were labelled with values
// the runs never used: the last --param won).
TEST(bad_input, s9_two_grid_axes_of_one_parameter_are_refused) {
  const std::string dir = tmp("s9_two_axes");
  std::system(("rm -rf " + dir).c_str());
  expect_cli_error("sweep --grid pcie.lanes=4,8 --grid platform.pcie.lanes=16 --network synthetic --out " + dir, 2,
                   "cdma-vp: --grid pcie.lanes and --grid platform.pcie.lanes set the same parameter pcie.lanes; "
                   "expected one --grid per parameter with all its values, e.g. pcie.lanes=4,8,16");
  expect_cli_error("sweep --grid platform.codec=zvc --grid codec=none,zvc --network synthetic --out " + dir, 2,
                   "--grid platform.codec and --grid codec set the same parameter codec");
  EXPECT_FALSE(exists(dir));
  // --merge of such a plan (made by an earlier version): refused as well (it merged as ok).
  ASSERT_EQ(cli("sweep --grid pcie.lanes=4,8 --network synthetic --out " + dir + " --emit-slurm " + tmp("s9a.sh")), 0);
  json plan = json::parse(std::ifstream(dir + "/sweep.plan.json"));
  plan["grid"].push_back({{"name", "platform.pcie.lanes"}, {"values", {"16"}}});
  for (auto& r : plan["runs"]) {
    r["values"]["platform.pcie.lanes"] = "16";
    r["args"].push_back("--param");
    r["args"].push_back("platform.pcie.lanes=16");
  }
  std::ofstream(dir + "/sweep.plan.json") << plan.dump(2);
  expect_cli_error("sweep --merge " + dir + " --no-plot", 2,
                   dir + "/sweep.plan.json: not a sweep plan (grid pcie.lanes and grid platform.pcie.lanes set the "
                   "same parameter pcie.lanes; expected one grid entry per parameter)");
  std::system(("rm -rf " + dir + " " + tmp("s9a.sh")).c_str());
  // #16: an unknown grid name is named as a --grid (it said "--param: unknown parameter").
  // (`preset` itself is a grid axis since session 20: cli.sweep_over_platform_presets.)
  expect_cli_error("sweep --grid presets=a100-gen4 --network synthetic --out " + dir, 2,
                   "cdma-vp: --grid: unknown parameter 'presets'");
  // A malformed grid value is named as a --grid value too (it said "--param: ...", an option
  // the user never wrote; breaker s14 F3).
  expect_cli_error("sweep --grid pcie.lanes=4,99 --network synthetic --out " + dir, 2,
                   "cdma-vp: --grid: pcie.lanes = \"99\": expected an integer in [1, 32]");
  expect_cli_error("sweep --grid 'activations=[a].npz,b.npz' --network synthetic --out " + dir, 2,
                   "cdma-vp: --grid: activations = \"[a].npz\": not a JSON array of strings");
}

// #3: a key set to {} (an empty group) was silently ignored: batch {} ran at batch 32.
TEST(bad_input, s9_an_object_at_a_parameter_key_is_refused) {
  const std::string f = tmp("s9_obj.json");
  const std::pair<std::string, std::string> cases[] = {
      {R"({"network": "fmnist_cnn", "batch": {}, "steps": "cdma"})", ": batch = {}: expected an integer in [1, 1048576]"},
      {R"({"network": {}})", ": network = {}: expected a string"},
      {R"({"training_progress": {}})", ": training_progress = {}: expected a number in [0, 1]"},
      {R"({"codec": {}})", ": codec = {}: expected one of none raw zvc"},
      {R"({"steps": {}})", ": steps = {}: expected a comma-separated subset"},
      {R"({"host_mem": {"spill": {}}})", ": host_mem.spill = {}: expected one of auto on off"},
      {R"({"nosuchkey": {}})", ": unknown parameter 'nosuchkey'"},
  };
  for (const auto& [text, msg] : cases) {
    std::ofstream(f) << text;
    expect_cli_error("run -q --config " + f, 2, f + msg);
  }
  // A group still nests its keys, also under "platform".
  std::ofstream(f) << R"({"platform": {"pcie": {"lanes": 8}}, "gpu": {}})";
  EXPECT_EQ(load_config_file(f).pcie.lanes, 8);
  std::remove(f.c_str());
}

// #4: bench workload's LT run used the shipped real sample of inception_v3 while the
// reference used synthetic data: the ratios differed (1.83 vs 2.04). Both on synthetic data
// at one density: the same ratio (the reference adds the same 8-byte entry per 4 KiB window).
TEST(bad_input, s9_bench_workload_compares_like_with_like) {
  std::string out, err;
  ASSERT_EQ(cli("bench workload --network inceptionv3 --batches 1", &out, &err), 0) << out << err;
  const auto ref = out.find("ref: ratio "), lt = out.find("ratio ", out.find("LT: verified"));
  ASSERT_NE(ref, std::string::npos) << out;
  ASSERT_NE(lt, std::string::npos) << out;
  EXPECT_EQ(out.substr(ref + 11, 4), out.substr(lt + 6, 4)) << out;
  // #18: the header names the network (not the alias given) and what the producers are.
  EXPECT_NE(out.find("bench workload: inception_v3, synthetic density 0.5"), std::string::npos) << out;
  EXPECT_NE(out.find("LT 1 simulation + 2 activation producer(s) (synthetic data)"), std::string::npos) << out;
}

// #18: a batch listed twice or an option given twice (the last was kept) are refused.
TEST(bad_input, s9_bench_workload_and_sweep_refuse_repeats) {
  expect_cli_error("bench workload --batches 8,8.0", 2,
                   "cdma-vp: bench workload: --batches '8,8.0': batch 8 listed twice; expected each batch size once");
  expect_cli_error("bench workload --batches=4 --batches=2", 2,
                   "cdma-vp: bench workload: --batches given twice; expected each option once");
  expect_cli_error("sweep --grid pcie.gen=3 --network synthetic --jobs 1 --jobs 2 --out " + tmp("s9_jobs"), 2,
                   "cdma-vp: --jobs given twice; expected each of the sweep's options once");
}

// #5 and #13: a spill-file I/O error (a file size limit) is exit 3 with its reason in compare
// (was exit 1 "prefetched data did not match in LT"), and the run's JSON says "verified": null
// (nothing compared to the end; was false with 0 bytes compared and 0 mismatched).
TEST(bad_input, s9_a_spill_io_error_is_exit_3_with_its_reason_and_verified_null) {
  const std::string spill = " --network synthetic --batch 32 --param host_mem.spill=on --param host_mem.spill_cache=1MiB"
                            " --param host_mem.spill_dir=" + std::string(::testing::TempDir());
  std::string out, err;
  EXPECT_EQ(cli("compare" + spill, &out, &err, "ulimit -f 256;"), 3) << out << err;
  EXPECT_NE(err.find("cdma-vp: error: at run: "), std::string::npos) << err;  // AT runs first (s23)
  EXPECT_NE(err.find("File too large"), std::string::npos) << err;
  EXPECT_EQ(err.find("did not match"), std::string::npos) << err;
  const std::string j = tmp("s9_spill.json");
  std::remove(j.c_str());
  EXPECT_EQ(cli("run -q" + spill + " --json " + j, &out, &err, "ulimit -f 256;"), 3) << out << err;
  const json r = json::parse(std::ifstream(j));
  EXPECT_TRUE(r["verified"].is_null()) << r["verified"];
  EXPECT_EQ(r["mismatched_bytes"], 0);
  std::remove(j.c_str());
  std::remove(tmp("s9_spill.config.json").c_str());
}

// #6: --density beside --density-profile was recorded but never used.
TEST(bad_input, s9_density_and_a_density_profile_are_refused_together) {
  const std::string csv = std::string(CDMA_SHARED_DATA_DIR) + "/density/fmnist_training.csv";
  expect_cli_error("run --network fmnist_cnn --batch 8 --steps cdma -q --density 0.3 --density-profile " + csv, 2,
                   "density = 0.3 (--density) cannot be combined with density_profile = \"" + csv +
                   "\" (--density-profile), which sets every layer's density; expected one of them");
  const std::string dir = tmp("s9_dens_prof");
  std::system(("rm -rf " + dir).c_str());
  expect_cli_error("sweep --grid density=0.3,0.7 --density-profile " + csv + " --network fmnist_cnn --out " + dir, 2,
                   "cannot be combined with density_profile");
  EXPECT_FALSE(exists(dir + "/sweep.plan.json"));
}

// #8 and #15: --out must be a folder (a file or /dev/null was exit 3), and not the folder of
// another sweep (its plan and results were replaced, stale run_K files left behind).
TEST(bad_input, s9_sweep_out_is_a_new_folder) {
  const std::string f = tmp("s9_afile");
  std::ofstream(f) << "x";
  expect_cli_error("sweep --grid pcie.gen=3 --network synthetic --out " + f, 2,
                   "cdma-vp: --out " + f + ": exists and is not a folder; expected a folder for the sweep's files");
  expect_cli_error("sweep --grid pcie.gen=3 --network synthetic --out /dev/null", 2,
                   "cdma-vp: --out /dev/null: exists and is not a folder");
  expect_cli_error("sweep --grid pcie.gen=3 --network synthetic --out " + f + "/x", 2,
                   "--out " + f + "/x: cannot create the folder: Not a directory");
  std::remove(f.c_str());
  const std::string dir = tmp("s9_reuse");
  std::system(("rm -rf " + dir).c_str());
  ASSERT_EQ(cli("sweep --grid pcie.gen=3 --network synthetic --out " + dir + " --emit-slurm " + tmp("s9.sh")), 0);
  const std::string plan = slurp(dir + "/sweep.plan.json");
  expect_cli_error("sweep --grid pcie.gen=4,5 --network synthetic --batch 1 --out " + dir, 2,
                   "cdma-vp: --out " + dir + ": already holds a sweep (" + dir + "/sweep.plan.json); choose another "
                   "folder, or remove that one first");
  EXPECT_EQ(slurp(dir + "/sweep.plan.json"), plan);
  EXPECT_FALSE(exists(dir + "/run_0.log"));
  std::system(("rm -rf " + dir + " " + tmp("s9.sh")).c_str());
}

// #9: --merge of a plan whose values disagree with its args (a row labelled 0.7 showed the 0.5
// result as ok), or with no runs (a sweep.csv with a header only, exit 0).
TEST(bad_input, s9_merge_refuses_edited_values_and_an_empty_plan) {
  const std::string dir = tmp("s9_merge_edit");
  std::system(("rm -rf " + dir).c_str());
  ASSERT_EQ(cli("sweep --grid pcie.gen=3,4 --network synthetic --out " + dir + " --emit-slurm " + tmp("s9m.sh")), 0);
  json plan = json::parse(std::ifstream(dir + "/sweep.plan.json"));
  plan["runs"][1]["values"]["pcie.gen"] = "5";
  std::ofstream(dir + "/sweep.plan.json") << plan.dump(2);
  expect_cli_error("sweep --merge " + dir + " --no-plot", 2,
                   dir + "/sweep.plan.json: run 1 is labelled pcie.gen = \"5\" but its args set pcie.gen = \"4\"; "
                   "expected the plan as cdma-vp sweep wrote it");
  plan["runs"] = json::array();
  std::ofstream(dir + "/sweep.plan.json") << plan.dump(2);
  expect_cli_error("sweep --merge " + dir + " --no-plot", 2,
                   dir + "/sweep.plan.json: not a sweep plan (no runs; expected at least one run");
  EXPECT_FALSE(exists(dir + "/sweep.csv"));
  std::system(("rm -rf " + dir + " " + tmp("s9m.sh")).c_str());
}

// #10: standard output that cannot be written is exit 3 for every sub-command (was 0 outside
// run / config / sweep).
TEST(bad_input, s9_standard_output_write_errors_are_exit_3_everywhere) {
  for (const std::string& c : std::vector<std::string>{"run --help", "sweep --help", "compare --help", "analyze --help", "config --help",
                              "bench --help", "bench workload --help", "bench dram --help", "bench pcie --help",
                              "compare --network synthetic --batch 1 --steps oracle",
                              "analyze " + default_activations_path()})
    // (The reason is named when the failing write is the last flush; output that flushed itself
    // earlier, e.g. with std::endl, has lost it by then.)
    expect_cli_error(c + " >/dev/full", 3, "cdma-vp: error: standard output: write failed");
}

// #14: the dumped configuration holds absolute paths, so it reproduces the run from another
// directory (a relative density profile was not found from there).
TEST(bad_input, s9_dumped_configs_hold_absolute_paths) {
  const std::string d = tmp("s9_rel");
  std::system(("rm -rf " + d + " && mkdir -p " + d + "/dp " + d + "/other").c_str());
  std::ofstream(d + "/dp/prof.csv") << slurp(std::string(CDMA_SHARED_DATA_DIR) + "/density/fmnist_training.csv");
  std::string out, err;
  ASSERT_EQ(cli("config --dump --network fmnist_cnn --density-profile dp/prof.csv", &out, &err, "cd " + d + " &&"), 0)
      << err;
  EXPECT_EQ(json::parse(out)["density_profile"], d + "/dp/prof.csv");
  ASSERT_EQ(cli("run -q --network fmnist_cnn --batch 2 --steps oracle --density-profile dp/prof.csv --json a.json",
                &out, &err, "cd " + d + " &&"),
            0) << err;
  EXPECT_EQ(json::parse(std::ifstream(d + "/a.config.json"))["density_profile"], d + "/dp/prof.csv");
  EXPECT_EQ(cli("run -q --config ../a.config.json", &out, &err, "cd " + d + "/other &&"), 0) << err;
  std::system(("rm -rf " + d).c_str());
}

// #11: two spellings of one setting in one grid axis (network aliases and case, none/raw,
// paths of one file, "" and synthetic where they resolve alike, gen3x16/gen3x016).
TEST(bad_input, s9_grid_values_spelling_one_setting_are_refused) {
  const std::string dir = tmp("s9_spell");
  std::system(("rm -rf " + dir).c_str());
  const std::string csv = std::string(CDMA_SHARED_DATA_DIR) + "/density/fmnist_training.csv";
  const std::string csv2 = std::string(CDMA_SHARED_DATA_DIR) + "//density/../density/fmnist_training.csv";
  const std::pair<std::string, std::string> cases[] = {
      {"network=alexnet,Alexnet", "values 'alexnet' and 'Alexnet' are the same setting"},
      {"network=resnet50,resnet-50", "values 'resnet50' and 'resnet-50' are the same setting"},
      {"network=mobilenet_v2,mobilenetv2", "values 'mobilenet_v2' and 'mobilenetv2' are the same setting"},
      {"network=squeezenet,squeezenet1_0", "values 'squeezenet' and 'squeezenet1_0' are the same setting"},
      {"codec=none,raw", "values 'none' and 'raw' are the same setting"},
      {"density_profile=" + csv + "," + csv2, "are the same setting"},
      {"host_mem.spill_dir=/tmp,/tmp/", "values '/tmp' and '/tmp/' are the same setting"},
      {"pcie.preset=gen3x16,gen3x016", "values 'gen3x16' and 'gen3x016' are the same setting"},
  };
  for (const auto& [grid, msg] : cases)
    expect_cli_error("sweep --grid '" + grid + "' --network fmnist_cnn --out " + dir, 2, msg);
  expect_cli_error("sweep --grid activations=,synthetic --network fmnist_cnn --out " + dir, 2,
                   "values '' and 'synthetic' are the same setting");
  EXPECT_FALSE(exists(dir));
}

// #16: gpu_mem.dram_preset is checked where it is given, naming the key and listing auto.
TEST(bad_input, s9_dram_preset_names_the_key_and_auto) {
  EXPECT_EQ(override_error("gpu_mem.dram_preset=AUTO"),
            "--param: gpu_mem.dram_preset = \"AUTO\": expected one of auto, gddr5_titanx, gddr5x_titanxp, hbm2_p100, "
            "hbm2_v100, hbm2_a100, hbm3_h100 (lower case)");
  // host_mem.size's bound in a readable unit (it was "17578125000000000 KiB"): 2^60 B = 2^20 TiB.
  EXPECT_NE(override_error("host_mem.size=100 KiB").find("from 1 MiB to 1048576 TiB"), std::string::npos)
      << override_error("host_mem.size=100 KiB");
  // A size beyond 2^64 bytes is named as such (it was "not a whole number of bytes").
  EXPECT_EQ(override_error("host_mem.size=17000000 TiB"),
            "--param: host_mem.size = \"17000000 TiB\": beyond the largest size a 64-bit byte count holds "
            "(16 EiB); allowed from 1 MiB to 1048576 TiB");
}

// #17: config --list agrees with the rule (100 MB/s) and keeps a space after a long value.
TEST(bad_input, s9_config_list_matches_the_rules_and_separates_columns) {
  std::string out;
  ASSERT_EQ(cli("config --list", &out), 0);
  EXPECT_NE(out.find("(unit rate x cdma.clock: at least 100 MB/s)"), std::string::npos);
  EXPECT_NE(out.find(json(default_activations()).dump() + " real activations"), std::string::npos) << out;
  // Every row's kind starts in the header's "kind" column (new-user trial s21: the longest
  // names, cdma.codec_bytes_per_cycle.*, shifted their rows).
  std::istringstream in(out);
  std::string line;
  std::getline(in, line);
  const std::size_t kind_col = line.find("kind");
  ASSERT_NE(kind_col, std::string::npos) << line;
  for (int n = 0; std::getline(in, line); ++n) {
    ASSERT_GT(line.size(), kind_col) << line;
    EXPECT_EQ(line[kind_col - 1], ' ') << line;
    EXPECT_NE(line[kind_col], ' ') << line;
  }
}

// #20: compare with times that print as 0.000 s gives no ratio.
TEST(bad_input, s9_compare_gives_no_speed_ratio_for_times_printed_as_zero) {
  std::string out, err;
  ASSERT_EQ(cli("compare --network synthetic --batch 1 --steps oracle", &out, &err), 0) << err;
  if (out.find("AT 0.000 s") != std::string::npos || out.find("LT 0.000 s") != std::string::npos) {
    EXPECT_NE(out.find("too short to compare (under 0.5 ms)"), std::string::npos) << out;
  }
  EXPECT_EQ(out.find("0.000 s, LT is"), std::string::npos) << out;
}

// New-user trial s18: a DRAM preset whose bandwidth is not the platform's was refused in the
// model's struct fields ("gpu_mem.peak_bandwidth_Bps = 3.36e+11 B/s ...; set both, or model =
// bus"); it names the configuration's keys and the values that would fit.
TEST(bad_input, s18_dram_preset_against_the_bandwidth_names_the_keys) {
  expect_cli_error("run --param gpu_mem.dram_preset=hbm2_v100", 2,
                   "gpu_mem.dram_preset = \"hbm2_v100\" (900 GB/s peak) disagrees with gpu_mem.peak_bandwidth = "
                   "336 GB/s; expected both to describe one memory: also set --param "
                   "gpu_mem.peak_bandwidth=900GB/s, use a platform --preset with that DRAM (cdma-vp config "
                   "--presets), or --param gpu_mem.model=bus");
  // A GDDR preset also needs its channel count (12: docs/dram.md).
  expect_cli_error("run --preset v100-gen3 --param gpu_mem.dram_preset=gddr5_titanx", 2,
                   "also set --param gpu_mem.peak_bandwidth=336GB/s and gpu_mem.channels=12,");
}

// New-user trial s18: compare takes -q / --quiet as run and sweep do (it was "unrecognised
// option '-q'"): no progress lines on stderr, the same table on stdout.
TEST(bad_input, s18_compare_takes_quiet) {
  std::string out, err, out_q, err_q;
  ASSERT_EQ(cli("compare --network synthetic --batch 1 --steps oracle", &out, &err), 0) << err;
  ASSERT_EQ(cli("compare -q --network synthetic --batch 1 --steps oracle", &out_q, &err_q), 0) << err_q;
  EXPECT_NE(err.find("cdma-vp compare: running lt"), std::string::npos) << err;
  EXPECT_EQ(err_q.find("running"), std::string::npos) << err_q;
  EXPECT_EQ(out_q.substr(0, out_q.find("wall clock")), out.substr(0, out.find("wall clock")));
}

// New-user trial s23 F8: compare's header said network, batch, codec and platform only, so a
// run with kernel traffic or the protocol checkers read like one without; a bad compare option
// pointed at `cdma-vp --help` (the command list). AT runs first (F2: the first run of a process
// pays the first touch of its memory pages).
TEST(bad_input, s23_compare_header_names_the_setup) {
  std::string out, err;
  ASSERT_EQ(cli("compare --network synthetic --batch 1 --steps oracle --check-protocol --param gpu.kernel_traffic=true "
                "--param gpu.kernel_request=1KiB",
                &out, &err), 0) << err;
  EXPECT_NE(out.find("\n  runtime    : base-protocol checkers, vDNN policy all, codec zvc,"), std::string::npos) << out;
  EXPECT_NE(out.find("\n  kernels    : roofline times (no --layer-times table); their DRAM traffic issued to the "
                     "GPU memory (1 KiB requests)\n"),
            std::string::npos) << out;
  EXPECT_EQ(out.find("loosely timed"), std::string::npos) << out;  // both modes run: neither named there
  EXPECT_LT(err.find("cdma-vp compare: running at"), err.find("cdma-vp compare: running lt")) << err;
  // Without them: no checkers in the runtime line, no traffic in the kernels line.
  ASSERT_EQ(cli("compare --network synthetic --batch 1 --steps oracle", &out, &err), 0) << err;
  EXPECT_NE(out.find("\n  runtime    : vDNN policy all,"), std::string::npos) << out;
  EXPECT_NE(out.find("\n  kernels    : roofline times (no --layer-times table)\n"), std::string::npos) << out;
  // A usage error points at the sub-command's own --help (run's when no command is named).
  EXPECT_EQ(cli("compare --bogus", &out, &err), 2);
  EXPECT_NE(err.find("unrecognised option '--bogus'\n(see cdma-vp compare --help)\n"), std::string::npos) << err;
  EXPECT_EQ(cli("--bogus", &out, &err), 2);
  EXPECT_NE(err.find("(see cdma-vp run --help)\n"), std::string::npos) << err;
  EXPECT_EQ(cli("nosuchcommand", &out, &err), 2);
  EXPECT_NE(err.find("unknown command 'nosuchcommand'; expected one of: "), std::string::npos) << err;
  EXPECT_NE(err.find("(see cdma-vp --help)\n"), std::string::npos) << err;
}
}  // namespace

// Session 24: options are not abbreviated in any command (run, compare, config and sweep took
// `--bat 4` as --batch 4 through boost's guessing; bench and analyze never did), and an unknown
// option names the one it most likely meant: the only option it begins, else one within two
// edits (by hand: batchh -> batch deletes one letter; gird -> grid swaps two, two edits).
TEST(bad_input, s24_options_are_not_abbreviated_and_a_near_miss_is_named) {
  struct c {
    std::string args, expect;
  } cases[] = {
      {"run --bat 4", "unrecognised option '--bat' (did you mean '--batch'? options are not abbreviated)\n"
                      "(see cdma-vp run --help)\n"},
      {"--bat=4", "unrecognised option '--bat=4' (did you mean '--batch'? options are not abbreviated)"},
      {"run --batchh 4", "unrecognised option '--batchh' (did you mean '--batch'?)"},
      {"compare --netw alexnet", "unrecognised option '--netw' (did you mean '--network'? options are not abbreviated)"},
      {"config --li", "unrecognised option '--li' (did you mean '--list'? options are not abbreviated)"},
      {"sweep --gird batch=1,2", "unrecognised option '--gird' (did you mean '--grid'?)"},
      {"sweep --grid batch=1,2 --emit x.sh", "unrecognised option '--emit' (did you mean '--emit-slurm'? options are "
                                             "not abbreviated)"},
      {"sweep --grid batch=1,2 --out d --bat 3", "unrecognised option '--bat' (did you mean '--batch'? options are not "
                                                 "abbreviated)"},
  };
  std::string out, err;
  for (const auto& k : cases) {
    EXPECT_EQ(cli(k.args, &out, &err), 2) << k.args;
    EXPECT_NE(err.find(k.expect), std::string::npos) << k.args << ": " << err;
    EXPECT_EQ(out, "") << k.args;  // nothing ran
  }
  // Two options begin with the word: both named.
  EXPECT_EQ(cli("run --co x", &out, &err), 2);
  EXPECT_NE(err.find("unrecognised option '--co' (options are not abbreviated; those beginning so: --"),
            std::string::npos) << err;
  // The full names still work, with a value attached or apart.
  EXPECT_EQ(cli("config --dump --batch=4", &out, &err), 0) << err;
  EXPECT_NE(out.find("\"batch\": 4"), std::string::npos);
}

namespace {

/// The "values" of each run that `cdma-vp sweep ARGS --out=DIR --emit-slurm=DIR.sh` plans (the
/// sweep is planned, not run); the files are removed after.
std::vector<nlohmann::json> planned_values(const std::string& args, const std::string& tag) {
  const std::string dir = std::string(::testing::TempDir()) + "cdma_s24_" + tag + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::string out, err;
  std::vector<nlohmann::json> values;
  EXPECT_EQ(cli("sweep " + args + " --out=" + dir + " --emit-slurm=" + dir + ".sh", &out, &err), 0) << err;
  if (std::filesystem::exists(dir + "/sweep.plan.json")) {
    const auto plan = nlohmann::json::parse(slurp(dir + "/sweep.plan.json"));  // (kept: the loop reads into it)
    for (const auto& r : plan["runs"]) values.push_back(r["values"]);
  }
  std::filesystem::remove_all(dir);
  std::filesystem::remove(dir + ".sh");
  return values;
}

}  // namespace

// Session 24: spaces around grid values and --zip names are dropped (`--grid "batch=1, 2"` was
// refused for " 2"; `bench --batches "1, 2"` took it). By hand: the plan's two runs take
// batch 1 with codec zvc and batch 2 with codec none.
TEST(bad_input, s24_grid_values_lose_the_spaces_around_them) {
  const auto v = planned_values("--grid 'batch=1, 2' --grid 'codec= zvc ,none' --zip ' batch , codec' "
                                "--network synthetic --steps oracle", "grid");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], (nlohmann::json{{"batch", "1"}, {"codec", "zvc"}}));
  EXPECT_EQ(v[1], (nlohmann::json{{"batch", "2"}, {"codec", "none"}}));
}

// Breaker s24: the sweep's own options take their value after '=' as the runs' options do
// (F1: --grid=batch=1,2 was refused with "did you mean '--grid'?"); grid values of a path
// parameter keep their spaces, names and numbers lose them (F6: activations=" lead.npz" was
// trimmed to another file); a value that is an option of the command is refused (F4: `run
// --json --no-verify` wrote a file named --no-verify and ran verified).
TEST(bad_input, s24_breaker_sweep_equals_path_spaces_and_missing_values) {
  const auto v = planned_values("--grid='activations=a.npz, lead.npz' --grid 'codec=zvc, none' "
                                "--zip=activations,codec --batch 1 --steps oracle", "brk");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], (nlohmann::json{{"activations", "a.npz"}, {"codec", "zvc"}}));
  EXPECT_EQ(v[1], (nlohmann::json{{"activations", " lead.npz"}, {"codec", "none"}}));
  const std::string dir = std::string(::testing::TempDir()) + "cdma_s24_brk_" + std::to_string(::getpid());
  std::string out, err;
  EXPECT_EQ(cli("sweep --grid batch=1 --no-plot=1 --out " + dir, &out, &err), 2);
  EXPECT_NE(err.find("--no-plot takes no value (got '--no-plot=1')"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir));
  const std::string j = dir + "_run";
  std::filesystem::create_directories(j);
  EXPECT_EQ(cli("run --network synthetic --batch 1 --steps oracle --json --no-verify", &out, &err), 2);
  EXPECT_NE(err.find("--json '--no-verify': the value is missing (--no-verify is an option of this command)"),
            std::string::npos) << err;
  EXPECT_EQ(cli("compare --network synthetic --batch 1 --steps oracle --csv --check-protocol", &out, &err), 2);
  EXPECT_NE(err.find("--csv '--check-protocol': the value is missing"), std::string::npos) << err;
  EXPECT_EQ(out, "");
  std::filesystem::remove_all(j);
}

// Breaker s24 F8 / F9: a stray word is named (boost said only "too many positional options
// have been specified"); sweep --merge refuses --jobs like the other planning options.
TEST(bad_input, s24_breaker_stray_words_are_named_and_merge_refuses_jobs) {
  std::string out, err;
  EXPECT_EQ(cli("run --network fmnist_cnn 4", &out, &err), 2);
  EXPECT_NE(err.find("cdma-vp: unexpected word '4': not an option (options begin with --) nor the value of one"),
            std::string::npos) << err;
  EXPECT_EQ(cli("compare --batch 1 x.json", &out, &err), 2);
  EXPECT_NE(err.find("unexpected word 'x.json'"), std::string::npos) << err;
  EXPECT_EQ(cli("sweep --merge /nonexistent --jobs 2", &out, &err), 2);
  EXPECT_NE(err.find("--merge /nonexistent takes no other option but --no-plot (got --jobs)"), std::string::npos) << err;
}

// Breaker s24 F8 (rest): a long option written with one '-' or with a typographic dash pasted
// from a document names the option meant; an invisible character in an option is shown
// escaped (the word looked like --batch).
TEST(bad_input, s25_single_and_typographic_dashes_name_the_option_meant) {
  std::string out, err;
  EXPECT_EQ(cli("run -batch 4", &out, &err), 2);
  EXPECT_NE(err.find("unrecognised option '-batch' (did you mean '--batch'? long options begin with two '-')"),
            std::string::npos) << err;
  // en dash + '-' (U+2013), em dash (U+2014) before a prefix, minus sign (U+2212), no near name.
  EXPECT_EQ(cli("run $'\\xe2\\x80\\x93-batch' 4", &out, &err), 2);
  EXPECT_NE(err.find("unexpected word '\xE2\x80\x93-batch': it begins with a typographic dash, not two '-'; "
                     "did you mean '--batch'?"), std::string::npos) << err;
  EXPECT_EQ(cli("compare $'\\xe2\\x80\\x94netw' alexnet", &out, &err), 2);
  EXPECT_NE(err.find("did you mean '--network'?"), std::string::npos) << err;
  // config takes a positional word (its output file): one with a typographic dash is refused,
  // not written (breaker s25: `config --network alexnet —batch` wrote the dump to '—batch').
  const std::string cwd = std::string(::testing::TempDir()) + "cdma_s25_dash_" + std::to_string(::getpid());
  std::filesystem::create_directories(cwd);
  EXPECT_EQ(cli("config --network alexnet $'\\xe2\\x80\\x94batch'", &out, &err, "cd " + cwd + " &&"), 2);
  EXPECT_NE(err.find("it begins with a typographic dash, not two '-'; did you mean '--batch'?"), std::string::npos)
      << err;
  EXPECT_TRUE(std::filesystem::is_empty(cwd));
  std::filesystem::remove_all(cwd);
  EXPECT_EQ(cli("run $'\\xe2\\x88\\x92zzz'", &out, &err), 2);
  EXPECT_NE(err.find("it begins with a typographic dash, not two '-'; options begin with --"), std::string::npos) << err;
  EXPECT_EQ(cli("run $'--batch\\xe2\\x80\\x8b' 4", &out, &err), 2);
  EXPECT_NE(err.find("unrecognised option '--batch\\xE2\\x80\\x8B'"), std::string::npos) << err;
  // sweep reads -qh as run does (the help), and refuses --help=1 as run does.
  EXPECT_EQ(cli("sweep --grid batch=1 --out /nonexistent/x -qh", &out, &err), 0) << err;
  EXPECT_EQ(out.rfind("Usage: cdma-vp sweep --grid", 0), 0u) << out;
  EXPECT_EQ(cli("sweep --help=1", &out, &err), 2);
  EXPECT_NE(err.find("option '--help' does not take any arguments (got '--help=1')"), std::string::npos) << err;
  EXPECT_EQ(cli("run $'--bat\\nch' 4", &out, &err), 2);
  EXPECT_NE(err.find("unrecognised option '--bat\\x0Ach' (did you mean '--batch'?)"), std::string::npos) << err;
  EXPECT_EQ(out, "");
}

// Breaker s25: `--param pcie.rcb=128` on measured-host (64 B completions) failed naming only
// pcie.cpl_bytes; the message says the preset set it and how to give it (128 B, a multiple of
// the 128 B RCB and <= the 256 B MPS, by hand).
TEST(bad_input, s25_rcb_change_names_the_cpl_bytes_to_give) {
  std::string out, err;
  EXPECT_EQ(cli("config --param pcie.rcb=128B", &out, &err), 2);
  EXPECT_NE(err.find("pcie.cpl_bytes = 64 B: expected 0 (completion size by the RCB/MPS rule) or a multiple of "
                     "pcie.rcb (128 B) that is <= pcie.mps (256 B); pcie.cpl_bytes comes from the preset unless "
                     "given, so a pcie.rcb or pcie.mps change may need it too, e.g. --param pcie.cpl_bytes=128B"),
            std::string::npos) << err;
  EXPECT_EQ(cli("config --param pcie.rcb=128B --param pcie.cpl_bytes=128B --dump", &out, &err), 0) << err;
  EXPECT_NE(out.find("\"cpl_bytes\": \"128 B\""), std::string::npos) << out;
}

// Breaker s24 F3: compare prints (and puts in its JSON "warnings") the AT run's WARNING of
// kernel traffic behind schedule; with one 4 KiB request in flight nearly all of it is late.
TEST(bad_input, s24_breaker_compare_names_late_kernel_traffic) {
  const std::string j = std::string(::testing::TempDir()) + "cdma_s24_cmp_" + std::to_string(::getpid()) + ".json";
  std::string out, err;
  ASSERT_EQ(cli("compare -q --network fmnist_cnn --batch 2 --param gpu.kernel_traffic=true --param "
                "gpu.kernel_outstanding=1 --param gpu.kernel_request=4KiB --json " + j,
                &out, &err), 0) << err;
  EXPECT_NE(out.find("\nAT run: WARNING: the compute kernels' DRAM traffic fell behind the kernels (the contention "
                     "is understated): oracle "),
            std::string::npos) << out;
  EXPECT_NE(out.find("mostly held back by the 1 request of 4096 B allowed in flight: raise gpu.kernel_outstanding\n"),
            std::string::npos) << out;
  const auto js = nlohmann::json::parse(slurp(j));
  ASSERT_EQ(js["warnings"].size(), 1u);
  EXPECT_EQ(js["warnings"][0].get<std::string>().rfind("WARNING: the compute kernels' DRAM traffic fell behind", 0), 0u);
  std::filesystem::remove(j);
  std::filesystem::remove(j.substr(0, j.size() - 5) + ".config.json");
}
