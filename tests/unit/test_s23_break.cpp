// Break-it round s23, tester brk (bad input to the commands other than the workload inputs:
// bench, config, sweep, output paths, signals, numeric extremes). Cases marked FINDING failed
// at the commit the round started from (f8c44d3) and pass with the fix; cases marked PASS held
// already and pin the behaviour. Expected values by hand: the suggested names are the
// parameters of `cdma-vp config --list` one or two edits away (batchh -> batch: one letter
// deleted), or the one whose last part is the key (lanes -> pcie.lanes).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/cli.h"

using cdma::test::cli;
using cdma::test::entries;
using cdma::test::slurp;

namespace {

std::string scratch(const std::string& name) {
  const std::string d = std::string(::testing::TempDir()) + "cdma_s23b_" + std::to_string(::getpid());
  std::filesystem::create_directories(d);
  return d + "/" + name;
}

/// Runs the bash `script` (written to a file, so any quoting in it is bash's alone); returns
/// its standard output.
std::string bash(const std::string& script) {
  const std::string file = scratch("script.sh"), out = scratch("script.out");
  std::ofstream(file) << script;
  const int rc = std::system(("bash " + file + " >" + out + " 2>&1").c_str());
  (void)rc;
  return slurp(out);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}

// ---- bench workload: its children end with it ---------------------------------------------

// FINDING 1: `kill PID` (SIGTERM to the bench alone, as a job scheduler or a user does) ended
// the bench, but the child process measuring the batch was not told: it went on computing
// (the reference, then nothing could read its figures), for minutes on a large batch. Now the
// interrupt is passed on to the child and waited for, and the child ends silently (one
// "interrupted" message, the bench's).
TEST(s23_break, bench_workload_sigterm_ends_the_measuring_child) {
  const std::string out = scratch("bw.out"), err = scratch("bw.err");
  const std::string script =
      std::string(CDMA_VP_EXE) + " bench workload --network alexnet --batches 512 >" + out + " 2>" + err +
      " & p=$!\n"
      // The table's header is printed once every batch has been checked (those check children
      // have ended): the next child is the reference measurement of batch 512.
      "c=\n"
      "for i in $(seq 1 2400); do\n"
      "  if grep -q '^batch ' " + out + " 2>/dev/null; then c=$(pgrep -P $p | head -1); [ -n \"$c\" ] && break; fi\n"
      "  sleep 0.05\n"
      "done\n"
      "echo \"child=$c\"\n"
      "kill -TERM $p; wait $p; echo \"rc=$?\"\n"
      "if [ -n \"$c\" ] && kill -0 $c 2>/dev/null; then echo 'child still running'; kill -KILL $c; "
      "else echo 'child ended'; fi\n";
  const std::string r = bash(script);
  EXPECT_EQ(r.find("child=\n"), std::string::npos) << "no measuring child was seen: " << r;
  EXPECT_NE(r.find("rc=143"), std::string::npos) << r;
  EXPECT_NE(r.find("child ended"), std::string::npos) << r;
  const std::string e = slurp(err);
  const std::string message = "cdma-vp: interrupted by SIGTERM";
  const auto first = e.find(message);
  EXPECT_NE(first, std::string::npos) << e;
  EXPECT_EQ(e.find("interrupted by", first + message.size()), std::string::npos) << "one message, the bench's: " << e;
}

// ---- sweep plots ----------------------------------------------------------------------------

// FINDING 2: a grid value with dollar signs (gpu.name=$\frac$) was read by matplotlib as
// mathtext: the plotter died with a Python traceback, no plot, and the sweep said "plotting
// failed (needs /usr/bin/python3 with matplotlib)". The labels are now drawn as written.
TEST(s23_break, sweep_plots_labels_with_dollar_signs) {
  const std::string dir = scratch("sweep_dollar");
  std::filesystem::remove_all(dir);
  const std::string r = bash(std::string(CDMA_VP_EXE) + " sweep --grid 'gpu.name=$\\frac$,$x^$' --network synthetic " +
                             "--steps oracle,vdnn,cdma --jobs 2 --out " + dir + " -q; echo \"rc=$?\"\n");
  EXPECT_NE(r.find("rc=0"), std::string::npos) << r;
  EXPECT_EQ(r.find("Traceback"), std::string::npos) << r;
  EXPECT_EQ(r.find("plotting failed"), std::string::npos) << r;
  EXPECT_NE(r.find("plots written to"), std::string::npos) << r;
  const auto names = entries(dir);
  EXPECT_TRUE(contains(names, "sweep.png") && contains(names, "sweep.svg")) << r;
  // The values reached the runs as written (the CSV's grid column).
  const std::string csv = slurp(dir + "/sweep.csv");
  EXPECT_NE(csv.find("\n0,$\\frac$,ok,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,$x^$,ok,"), std::string::npos) << csv;
  std::filesystem::remove_all(dir);
}

// FINDING 3: a sweep whose every run failed still "wrote plots": two empty axes. Now no plot
// is drawn and the sweep says why; the CSV (every row failed) is written as before.
TEST(s23_break, sweep_without_an_ok_run_draws_no_plot) {
  const std::string dir = scratch("sweep_failed");
  std::filesystem::remove_all(dir);
  std::string out, err;
  // 1 and 2 MiB of host memory cannot hold the offloaded activations: each run refuses to start.
  EXPECT_EQ(cli("sweep --grid host_mem.size=1MiB,2MiB --network synthetic --jobs 2 --out " + dir, &out, &err), 1)
      << err;
  EXPECT_NE(out.find("no plots: no run finished ok"), std::string::npos) << out;
  EXPECT_EQ(out.find("plots written"), std::string::npos) << out;
  const auto names = entries(dir);
  EXPECT_TRUE(contains(names, "sweep.csv"));
  EXPECT_FALSE(contains(names, "sweep.png"));
  EXPECT_FALSE(contains(names, "sweep.svg"));
  const std::string csv = slurp(dir + "/sweep.csv");
  EXPECT_NE(csv.find("\n0,1MiB,failed(exit=2),"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,2MiB,failed(exit=2),"), std::string::npos) << csv;
  // --merge of that folder: the same.
  EXPECT_EQ(cli("sweep --merge " + dir, &out, &err), 1) << err;
  EXPECT_NE(out.find("no plots: no run finished ok"), std::string::npos) << out;
  EXPECT_FALSE(contains(entries(dir), "sweep.png"));
  std::filesystem::remove_all(dir);
}

// ---- sweep --emit-slurm: the folder name in the script ---------------------------------------

// FINDING 5: --out DIR went into the Slurm script's "#SBATCH --output=DIR/run_%a.log" line and
// its "# ... --merge DIR" comment as written: a line break in DIR ended the line, and the rest
// of the name ran as a command of every task (`touch INJECTED/run_%a.log`, `touch INJECTED`);
// a blank split the sbatch argument (the log went to a file named by the first word). Now a
// control character or a backslash (which makes sbatch leave %a unexpanded) is refused before
// anything is written, and the line quotes the rest as sbatch reads it (its #SBATCH parser:
// "..." groups blanks, \" is a quote, and its file-name pattern reads %% as %).
TEST(s23_break, sweep_emit_slurm_folder_name_cannot_inject_commands) {
  const std::string base = scratch("slurm");
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  const std::string r = bash("cd " + base + " || exit 9\n" + std::string(CDMA_VP_EXE) +
                             " sweep --grid batch=1,2 --network synthetic --steps oracle --out $'nl\ntouch INJECTED' "
                             "--emit-slurm job.sh; echo \"rc=$?\"\n" +
                             std::string(CDMA_VP_EXE) + " sweep --grid batch=1,2 --network synthetic --steps oracle --out 'a\\b' "
                             "--emit-slurm job.sh; echo \"rc=$?\"\n");
  EXPECT_NE(r.find("cdma-vp: --out nl\\x0Atouch INJECTED with --emit-slurm: the folder's absolute path holds a control character, "
                   "which the script's #SBATCH --output line cannot carry; expected a folder path without control "
                   "characters and backslashes"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("cdma-vp: --out a\\b with --emit-slurm: the folder's absolute path holds a backslash"), std::string::npos) << r;
  EXPECT_EQ(r.find("rc=0"), std::string::npos) << r;
  EXPECT_TRUE(entries(base).empty()) << "nothing written: " << r;  // no folder, no script

  // Blanks, a double quote and % are quoted for sbatch; the task still writes into DIR, also
  // when the script is started from another directory (FINDING 6: it wrote DIR/run_K.json
  // relative to wherever the job was submitted: "cannot open for writing", no result).
  const std::string q = bash("cd " + base + " || exit 9\n" + std::string(CDMA_VP_EXE) +
                             " sweep --grid batch=1,2 --network synthetic --steps oracle --out 'p%c \"d' "
                             "--emit-slurm job.sh >/dev/null; echo \"rc=$?\"\n"
                             "bash -n job.sh && echo syntax-ok\n"
                             "mkdir elsewhere && cd elsewhere || exit 9\n"
                             "SLURM_ARRAY_TASK_ID=1 bash ../job.sh >/dev/null 2>&1; echo \"task=$?\"\n"
                             "cat '../p%c \"d/run_1.status'; ls\n");
  EXPECT_NE(q.find("rc=0\nsyntax-ok\ntask=0\nok\n"), std::string::npos) << q;
  EXPECT_TRUE(entries(base + "/elsewhere").empty()) << q;
  EXPECT_TRUE(contains(entries(base + "/p%c \"d"), "run_1.json")) << q;
  // The lines, derived by hand from sbatch's rules above and bash's single quotes.
  const std::string job = slurp(base + "/job.sh");
  EXPECT_NE(job.find("\n#SBATCH --output=\"" + base + "/p%%c \\\"d/run_%a.log\"\n"), std::string::npos) << job;
  EXPECT_NE(job.find("\n# One task per grid combination; afterwards: cdma-vp sweep --merge 'p%c \"d'\n"),
            std::string::npos)
      << job;
  EXPECT_NE(job.find("\ncd '" + base + "' || exit 2\n"), std::string::npos) << job;
  std::filesystem::remove_all(base);
}

// ---- gpu_mem.address_mapping: counts and the message ------------------------------------------

// FINDING 7: a field's count was read with std::stoull: "column:2abc" ran as column:2 (the rest
// dropped, exit 0), "column:-1" as 2^64 - 1 ("do not divide its size 64"); the message named
// neither the key nor the form ("invalid platform parameter: address mapping '...': ...").
TEST(s23_break, address_mapping_counts_are_whole_decimal_numbers) {
  const std::string base = "row bank column channel bankgroup column:";
  const std::string form =
      " (the text: fields from the most significant address bits down, separated by spaces, a field in several "
      "parts as NAME:COUNT; e.g. this preset's default \"row bank column channel bankgroup column:2\")";
  std::string err;
  for (const char* count : {"2abc", "-1", "+2", "0x2", "99999999999999999999", ""}) {
    const std::string text = base + count;
    EXPECT_EQ(cli("config --param 'gpu_mem.address_mapping=" + text + "'", nullptr, &err), 2) << text;
    EXPECT_NE(err.find("cdma-vp: invalid platform parameter: gpu_mem.address_mapping = '" + text +
                       "' (DRAM preset gddr5_titanx): token 'column:" + count +
                       "': count must be a positive integer (decimal digits, below 10^19)" + form),
              std::string::npos)
        << text << ": " << err;
  }
  EXPECT_EQ(cli("config --param gpu_mem.address_mapping=garbage", nullptr, &err), 2);
  EXPECT_NE(err.find("gpu_mem.address_mapping = 'garbage' (DRAM preset gddr5_titanx): unknown field 'garbage' in "
                     "token 'garbage'; expected row, bank, bankgroup, channel or column" + form),
            std::string::npos)
      << err;
  // PASS: the default written out, and the count 2 as digits, are taken.
  std::string out;
  EXPECT_EQ(cli("config --param 'gpu_mem.address_mapping=" + base + "2'", &out, &err), 0) << err;
  EXPECT_NE(out.find("\"address_mapping\": \"" + base + "2\""), std::string::npos) << out;
}

// ---- PCIe preset names: a width of many digits ----------------------------------------------

// FINDING 8: std::stoi threw std::out_of_range on the width of gen3x99999999999: `config
// --param pcie.preset=...` said "cdma-vp: stoi" (no key, no form), `bench pcie --preset ...`
// ended in SystemC's "(E549) uncaught exception: stoi", exit 1. measured-host-gen4x0 said
// "raw_rate_Bps: lanes must be >= 1". Each is now the preset's width message.
TEST(s23_break, pcie_preset_width_out_of_range_is_named) {
  std::string err;
  const std::string lanes = "': lanes must be 1, 2, 4, 8, 12, 16 or 32";
  for (const char* p : {"gen3x99999999999", "measured-host-gen4x99999999999", "measured-host-gen4x0", "gen3x0000"}) {
    EXPECT_EQ(cli(std::string("config --param pcie.preset=") + p, nullptr, &err), 2) << p;
    EXPECT_NE(err.find(std::string("cdma-vp: --param: pcie.preset = \"") + p + "\": PCIe preset '" + p + lanes),
              std::string::npos)
        << p << ": " << err;
  }
  EXPECT_EQ(cli("bench pcie --preset gen3x99999999999", nullptr, &err), 2);
  EXPECT_NE(err.find("cdma-vp: bench pcie: --preset: PCIe preset 'gen3x99999999999" + lanes), std::string::npos)
      << err;
  EXPECT_EQ(err.find("uncaught exception"), std::string::npos) << err;
  // PASS: the calibrated host at a valid width keeps its figures; a leading zero is read as
  // before (gen3x016 is Gen3 x16).
  std::string out;
  EXPECT_EQ(cli("config --param pcie.preset=gen3x016", &out, &err), 0) << err;
  EXPECT_NE(out.find("\"lanes\": 16,"), std::string::npos) << out;
  EXPECT_EQ(cli("config --param pcie.preset=measured-host-gen4x8", &out, &err), 0) << err;
  EXPECT_NE(out.find("\"lanes\": 8,"), std::string::npos) << out;
  EXPECT_NE(out.find("\"gen\": 4,"), std::string::npos) << out;
}

// ---- a lone '-' as an output ------------------------------------------------------------------

// FINDING 9: `--json -` (and every output option but config --dump's) wrote a file named "-"
// ("results written to -", exit 0) where standard output was meant. Refused before anything
// runs, naming the option and the two ways to say it.
TEST(s23_break, a_lone_dash_output_is_refused) {
  const std::string dir = scratch("dash");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string why = " -: '-' is not standard output here; expected a file name (/dev/stdout for standard "
                          "output, ./- for a file named '-')";
  const std::string npz = std::string(CDMA_TESTS_DIR) + "/../workloads/data/inception_v3/chelsea.npz";
  struct c {
    std::string args, expect;
  } cases[] = {
      {"run --network synthetic --steps oracle -q --json -", "cdma-vp: --json" + why},
      {"run --network synthetic --steps oracle -q --csv -", "cdma-vp: --csv" + why},
      {"run --network synthetic --steps oracle -q --trace -", "cdma-vp: --trace" + why},
      {"run --network synthetic --steps oracle -q --vcd -", "cdma-vp: --vcd" + why},
      {"run --network synthetic --steps oracle -q --txn-trace -", "cdma-vp: --txn-trace" + why},
      {"compare --network synthetic --steps oracle -q --json -", "cdma-vp: --json" + why},
      {"analyze " + npz + " --codecs zvc --json -", "cdma-vp: analyze: --json" + why},
      {"bench dram --csv -", "cdma-vp: bench dram: --csv" + why},
      {"bench pcie --csv -", "cdma-vp: bench pcie: --csv" + why},
      {"bench pcie --plot -", "cdma-vp: bench pcie: --plot" + why},
      {"sweep --grid batch=1,2 --network synthetic --out " + dir + "/sw --emit-slurm -", "cdma-vp: --emit-slurm" + why},
  };
  for (const auto& k : cases) {
    std::string err;
    EXPECT_EQ(cli(k.args, nullptr, &err, "cd " + dir + " &&"), 2) << k.args;
    EXPECT_NE(err.find(k.expect), std::string::npos) << k.args << ": " << err;
    EXPECT_TRUE(entries(dir).empty()) << k.args << ": nothing written";
  }
  // PASS: config --dump - is standard output, and ./- is a file named "-".
  std::string out, err;
  EXPECT_EQ(cli("config --dump - --network synthetic", &out, &err, "cd " + dir + " &&"), 0) << err;
  EXPECT_EQ(out.rfind("{", 0), 0u) << out;
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --csv ./-", nullptr, &err, "cd " + dir + " &&"), 0) << err;
  EXPECT_TRUE(contains(entries(dir), "-"));
  std::filesystem::remove_all(dir);
}

// ---- unknown parameters: the nearest name ---------------------------------------------------

// FINDING 4: `--param batchh=3` said only "unknown parameter 'batchh'; `cdma-vp config --list`
// lists them"; a near miss is now named, in --param, a --config file and a --grid axis; a group
// given one value ({"pcie": 5}) is named as a group.
TEST(s23_break, unknown_parameter_names_the_near_miss) {
  std::string err;
  struct c {
    std::string args, expect;
  } cases[] = {
      {"config --param batchh=3",
       "cdma-vp: --param: unknown parameter 'batchh' (did you mean 'batch'?); `cdma-vp config --list` lists them"},
      {"config --param Batch=3", "unknown parameter 'Batch' (did you mean 'batch'?)"},
      {"config --param lanes=8", "unknown parameter 'lanes' (did you mean 'pcie.lanes'?)"},
      {"config --param gpu.peak_flop=1",
       "unknown parameter 'gpu.peak_flop' (did you mean 'gpu.peak_flops'?); known in this group: gpu.name, "},
      {"config --param gpu_mem.dram-preset=auto", "unknown parameter 'gpu_mem.dram-preset' (did you mean "
                                                  "'gpu_mem.dram_preset'?)"},
      {"config --param platform.cdma.windw=4096",
       "unknown parameter 'platform.cdma.windw' (did you mean 'cdma.window'?)"},
      {"config --param preset=v100-gen3",
       "unknown parameter 'preset' (a platform preset is --preset NAME or \"preset\" at the top of a --config "
       "file; the PCIe link's is pcie.preset)"},
      {"sweep --grid batchh=1,2 --network synthetic --out " + scratch("sweep_unused"),
       "cdma-vp: --grid: unknown parameter 'batchh' (did you mean 'batch'?)"},
  };
  for (const auto& k : cases) {
    EXPECT_EQ(cli(k.args, nullptr, &err), 2) << k.args;
    EXPECT_NE(err.find(k.expect), std::string::npos) << k.args << ": " << err;
  }
  // A config file's key too.
  const std::string cfg = scratch("near.json");
  std::ofstream(cfg) << R"({"pcie": {"lanez": 8}})";
  EXPECT_EQ(cli("config --config " + cfg, nullptr, &err), 2);
  EXPECT_NE(err.find(cfg + ": unknown parameter 'pcie.lanez' (did you mean 'pcie.lanes'?); known in this group:"),
            std::string::npos)
      << err;
  // A group given one value was "unknown parameter 'pcie'"; it is named as a group.
  std::ofstream(cfg) << R"({"pcie": 5})";
  EXPECT_EQ(cli("config --config " + cfg, nullptr, &err), 2);
  EXPECT_NE(err.find(cfg + ": 'pcie' is a group of parameters, not one (pcie.preset, pcie.gen, pcie.lanes, "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("pcie.fc_release); expected a JSON object of them in a config file, or --param "
                     "pcie.NAME=VALUE"),
            std::string::npos)
      << err;
  EXPECT_EQ(cli("config --param cdma.codec_bytes_per_cycle=16", nullptr, &err), 2);
  EXPECT_NE(err.find("--param: 'cdma.codec_bytes_per_cycle' is a group of parameters, not one "
                     "(cdma.codec_bytes_per_cycle.raw, cdma.codec_bytes_per_cycle.zvc, cdma.codec_bytes_per_cycle.rle, "
                     "cdma.codec_bytes_per_cycle.zlib, cdma.codec_bytes_per_cycle.lz4, cdma.codec_bytes_per_cycle.zstd)"),
            std::string::npos)
      << err;
  // PASS: nothing near, no guess (three or more edits from every name; a key of up to four letters allows one).
  for (const char* far : {"zzzzzz=1", "xyz=1"}) {
    EXPECT_EQ(cli(std::string("config --param ") + far, nullptr, &err), 2) << far;
    EXPECT_EQ(err.find("did you mean"), std::string::npos) << far << ": " << err;
    EXPECT_NE(err.find("; `cdma-vp config --list` lists them"), std::string::npos) << far << ": " << err;
  }
}

}  // namespace
