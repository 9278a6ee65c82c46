// Outputs against inputs and other bad command-line input of the commands that write files
// (run, compare, analyze, config, sweep): an output that names an input file is refused before
// anything runs (exit 2, naming both options and the file), however the path is spelled; the
// sweep's own options (-q, --emit-slurm) do not break or overwrite its runs and plan; the
// per-layer CSV quotes its cells as RFC 4180 does; a run that compared nothing says so instead
// of "verified" and a 1.000x ratio; empty file names, ignored options and control characters in
// names are errors or escaped, never silent.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>
#include "platform/outputs.h"
#include "platform/report.h"
#include "support/cli.h"

using namespace cdma::platform;
using nlohmann::json;
using cdma::test::cli;
using cdma::test::slurp;

namespace {

std::string tmp(const std::string& name) {
  return std::string(::testing::TempDir()) + "cdma_oi_" + std::to_string(::getpid()) + "_" + name;
}

void put(const std::string& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

bool exists(const std::string& p) {
  struct ::stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

/// Expects exit status `code` and every one of `needles` in stderr.
void expect_error(const std::string& args, int code, const std::vector<std::string>& needles) {
  std::string err;
  EXPECT_EQ(cli(args, nullptr, &err), code) << args << "\n" << err;
  for (const auto& n : needles) EXPECT_NE(err.find(n), std::string::npos) << args << "\nexpected: " << n << "\n" << err;
}

/// A float32 .npy of shape (1, 1, 2, 2) holding 0, 1, 0, 2 (format 1.0: magic, version,
/// little-endian header length, header padded with spaces to a multiple of 64 bytes).
void write_npy(const std::string& path) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string b = "\x93NUMPY";
  b += '\x01';
  b += '\x00';
  b += static_cast<char>(header.size() & 0xFF);
  b += static_cast<char>(header.size() >> 8);
  b += header;
  const float v[4] = {0.0f, 1.0f, 0.0f, 2.0f};
  b.append(reinterpret_cast<const char*>(v), sizeof v);
  put(path, b);
}

/// One convolution layer: it is the last layer, kept resident, so nothing is offloaded.
const char* k_one_layer = R"({"name": "one", "input": [3, 8, 8],
  "layers": [{"name": "a", "type": "conv", "filters": 4, "kernel": 3, "pad": 1}]})";

const std::string k_fast = "--network synthetic --batch 1 --steps oracle -q";

}  // namespace

// ---- Item 6: an output naming an input of the same command -----------------------------------

TEST(OutputInput, RunOutputOverConfigFileIsRefusedBeforeTheRun) {
  const std::string cfg = tmp("cfg.json");
  const std::string text = R"({"network": "synthetic", "batch": 1, "steps": "oracle"})";
  put(cfg, text);
  expect_error("run -q --config " + cfg + " --csv " + cfg, 2, {"--csv and --config name the same file", cfg});
  EXPECT_EQ(slurp(cfg), text);  // untouched
  // The JSON's effective configuration beside it (FILE stem + .config.json) is an output too.
  const std::string stem = tmp("again");
  put(stem + ".config.json", text);
  expect_error("run -q --config " + stem + ".config.json --json " + stem + ".json", 2,
               {"--json (effective config) and --config name the same file"});
  EXPECT_FALSE(exists(stem + ".json"));  // nothing ran, nothing written
  EXPECT_EQ(slurp(stem + ".config.json"), text);
}

TEST(OutputInput, SpellingsOfOneFileAreTheSameFile) {
  const std::string lt = tmp("lt.csv");
  const std::string text = "layer,forward_ms,backward_ms\n";
  put(lt, text);
  const std::string dir = lt.substr(0, lt.find_last_of('/'));
  const std::string base = lt.substr(lt.find_last_of('/') + 1);
  // ./ and .. in the path
  expect_error("run " + k_fast + " --layer-times " + lt + " --trace " + dir + "/./" + base, 2,
               {"--trace and --layer-times name the same file"});
  // a symbolic link
  const std::string sym = tmp("lt_link.csv");
  ASSERT_EQ(::symlink(lt.c_str(), sym.c_str()), 0);
  expect_error("run " + k_fast + " --layer-times " + lt + " --csv " + sym, 2,
               {"--csv and --layer-times name the same file", sym});
  // a hard link: another name of the same inode
  const std::string hard = tmp("lt_hard.csv");
  ASSERT_EQ(::link(lt.c_str(), hard.c_str()), 0);
  expect_error("run " + k_fast + " --layer-times " + hard + " --vcd " + lt, 2,
               {"--vcd and --layer-times name the same file", lt});
  EXPECT_EQ(slurp(lt), text);
  // Two outputs through a hard link are one file too (was compared by path only).
  const std::string o1 = tmp("o1.csv"), o2 = tmp("o2.csv");
  put(o1, "x\n");
  ASSERT_EQ(::link(o1.c_str(), o2.c_str()), 0);
  expect_error("run " + k_fast + " --csv " + o1 + " --trace " + o2, 2, {"--csv and --trace name the same file"});
}

TEST(OutputInput, EveryInputOfARunIsProtected) {
  const std::string net = tmp("net.json");
  put(net, k_one_layer);
  expect_error("run -q --batch 1 --network " + net + " --json " + net, 2, {"--json and --network name the same file"});
  EXPECT_EQ(slurp(net), k_one_layer);
  const std::string dp = tmp("dp.csv");
  const std::string profile = "iteration,epoch,layer,zero_fraction\n";
  put(dp, profile);
  expect_error("run -q --network synthetic --batch 1 --steps oracle --density-profile " + dp + " --trace " + dp, 2,
               {"--trace and --density-profile name the same file"});
  EXPECT_EQ(slurp(dp), profile);
  // A folder of .npy: each tensor in it is an input.
  const std::string acts = tmp("acts");
  ASSERT_EQ(::mkdir(acts.c_str(), 0755), 0);
  write_npy(acts + "/conv1.npy");
  const std::string before = slurp(acts + "/conv1.npy");
  expect_error("run " + k_fast + " --activations " + acts + " --csv " + acts + "/conv1.npy", 2,
               {"--csv and --activations name the same file"});
  EXPECT_EQ(slurp(acts + "/conv1.npy"), before);
  // --name-map
  const std::string nm = tmp("map.json");
  put(nm, "{}");
  expect_error("run " + k_fast + " --activations " + acts + " --name-map " + nm + " --json " + nm, 2,
               {"--json and --name-map name the same file"});
  EXPECT_EQ(slurp(nm), "{}");
}

TEST(OutputInput, OtherCommandsRefuseAnOutputOverAnInput) {
  // analyze --json x.npy x.npy replaced the tensor by the analysis.
  const std::string npy = tmp("x.npy");
  write_npy(npy);
  const std::string before = slurp(npy);
  expect_error("analyze --json " + npy + " " + npy, 2, {"--json and the input name the same file", npy});
  EXPECT_EQ(slurp(npy), before);
  // ... also when the input is found in a folder given as PATH
  const std::string dir = tmp("adir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  write_npy(dir + "/y.npy");
  expect_error("analyze --json " + dir + "/y.npy " + dir, 2, {"--json and the input name the same file"});
  // compare --json over its --config; config --dump over a layer file
  const std::string cfg = tmp("cmp.json");
  const std::string text = R"({"network": "synthetic", "batch": 1, "steps": "oracle"})";
  put(cfg, text);
  expect_error("compare --config " + cfg + " --json " + cfg, 2, {"--json and --config name the same file"});
  EXPECT_EQ(slurp(cfg), text);
  const std::string net = tmp("dumpnet.json");
  put(net, k_one_layer);
  expect_error("config --network " + net + " --dump " + net, 2, {"config --dump and --network name the same file"});
  EXPECT_EQ(slurp(net), k_one_layer);
}

TEST(OutputInput, SweepFilesDoNotOverwriteTheRunsInputs) {
  const std::string lt = tmp("sweep_lt.csv");
  put(lt, "layer,forward_ms,backward_ms\n");
  const std::string out = tmp("sweep_in");
  expect_error("sweep " + k_fast + " --layer-times " + lt + " --grid pcie.lanes=4,8 --out " + out +
                   " --emit-slurm " + lt,
               2, {"--emit-slurm and --layer-times name the same file"});
  EXPECT_FALSE(exists(out));
  // An input inside --out that the sweep writes (and first removes): run_0.json.
  ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
  const std::string cfg = out + "/run_0.json";
  const std::string text = R"({"network": "synthetic", "batch": 1, "steps": "oracle"})";
  put(cfg, text);
  expect_error("sweep -q --config " + cfg + " --grid pcie.lanes=4,8 --out " + out + " --no-plot", 2,
               {"--out (run_0.json) and --config name the same file"});
  EXPECT_EQ(slurp(cfg), text);
  EXPECT_FALSE(exists(out + "/sweep.plan.json"));
}

// ---- Item 7: sweep -q ---------------------------------------------------------------------

TEST(OutputInput, SweepQuietRunsEveryRun) {
  const std::string out = tmp("sweep_q");
  std::string err;
  ASSERT_EQ(cli("sweep --network synthetic --batch 1 --steps oracle -q --grid pcie.lanes=4,8 --no-plot --jobs 1 --out " +
                    out,
                nullptr, &err),
            0)
      << err;
  const std::string csv = slurp(out + "/sweep.csv");
  EXPECT_NE(csv.find("\n0,4,ok,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,8,ok,"), std::string::npos) << csv;
  // --quiet in the Slurm script: given once.
  const std::string out2 = tmp("sweep_q2"), script = tmp("sweep_q2.sh");
  ASSERT_EQ(cli("sweep " + k_fast.substr(0, k_fast.size() - 3) + " --quiet --grid pcie.lanes=4,8 --out " + out2 +
                    " --emit-slurm " + script),
            0);
  const std::string s = slurp(script);
  EXPECT_NE(s.find("'--quiet'"), std::string::npos) << s;
  EXPECT_EQ(s.find("-q --json"), std::string::npos) << s;
  // An output option spelled --json=FILE is set per run by the sweep too.
  expect_error("sweep " + k_fast + " --json=x.json --grid pcie.lanes=4,8 --out " + tmp("sweep_q3"), 2,
               {"--json is set per run by the sweep"});
}

// ---- Item 8: --emit-slurm over the sweep's own files ------------------------------------------

TEST(OutputInput, SlurmScriptMustNotBeAFileOfTheSweep) {
  const std::string out = tmp("sweep_e");
  expect_error("sweep " + k_fast + " --grid pcie.lanes=4,8 --out " + out + " --emit-slurm " + out + "/sweep.plan.json", 2,
               {"--emit-slurm " + out + "/sweep.plan.json is " + out + "/sweep.plan.json, a file the sweep writes"});
  EXPECT_FALSE(exists(out));
  ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
  // Spelled another way, a run's file, and the folder itself.
  expect_error("sweep " + k_fast + " --grid pcie.lanes=4,8 --out " + out + " --emit-slurm " + out + "/../" +
                   out.substr(out.find_last_of('/') + 1) + "/run_1.log",
               2, {"a file the sweep writes"});
  expect_error("sweep " + k_fast + " --grid pcie.lanes=4,8 --out " + out + " --emit-slurm " + out, 2,
               {"is the --out folder"});
  EXPECT_FALSE(exists(out + "/sweep.plan.json"));
  // A script beside the folder is fine; --merge then still finds a valid plan.
  ASSERT_EQ(cli("sweep " + k_fast + " --grid pcie.lanes=4,8 --out " + out + " --emit-slurm " + out + ".sh"), 0);
  const json plan = json::parse(slurp(out + "/sweep.plan.json"), nullptr, false);
  EXPECT_FALSE(plan.is_discarded());
  EXPECT_EQ(plan["runs"].size(), 2u);
}

// ---- Item 9: the per-layer CSV quotes its cells -----------------------------------------------

TEST(OutputInput, CsvFieldQuotesAsRfc4180) {
  EXPECT_EQ(csv_field("conv1"), "conv1");
  EXPECT_EQ(csv_field("c,1\"x"), "\"c,1\"\"x\"");
  EXPECT_EQ(csv_field("a\nb"), "\"a\nb\"");
  // Control characters: the bytes are kept, the cell quoted.
  EXPECT_EQ(csv_field(std::string("\xC3\xA9\tt\x01", 5)), std::string("\"\xC3\xA9\tt\x01\"", 7));
  EXPECT_EQ(csv_field("a\x7F"), "\"a\x7F\"");
  // Spaces a reader trims around a field are kept by quoting.
  EXPECT_EQ(csv_field(" a"), "\" a\"");
  EXPECT_EQ(csv_field("a b"), "a b");
  // A leading = + - @ is not altered (documented: the CSV is data, not a spreadsheet).
  EXPECT_EQ(csv_field("=cmd|' /C calc'!A0"), "=cmd|' /C calc'!A0");
  EXPECT_EQ(csv_field(""), "");
}

TEST(OutputInput, RunCsvQuotesLayerNames) {
  const std::string net = tmp("weird.json");
  put(net, R"({"name": "w", "input": [3, 8, 8], "layers": [
    {"name": "c,1\"x", "type": "conv", "filters": 4, "kernel": 3, "pad": 1, "relu": true},
    {"name": "b", "type": "conv", "filters": 4, "kernel": 3, "pad": 1}]})");
  const std::string csv = tmp("weird.csv");
  std::string err;
  ASSERT_EQ(cli("run -q --batch 1 --network " + net + " --csv " + csv, nullptr, &err), 0) << err;
  const std::string t = slurp(csv);
  std::istringstream lines(t);
  std::string header, row1, row2;
  std::getline(lines, header);
  std::getline(lines, row1);
  std::getline(lines, row2);
  // The name quoted (and the next layer's offload key, X_2 = the output of layer 1): the row
  // keeps the header's columns.
  EXPECT_EQ(row1.rfind("\"c,1\"\"x\",,1,3,8,8,", 0), 0u) << row1;
  EXPECT_EQ(row2.rfind("b,\"c,1\"\"x\",1,4,8,8,", 0), 0u) << row2;
  auto columns = [](const std::string& line) {  // commas outside quotes + 1
    std::size_t n = 1;
    bool quoted = false;
    for (const char c : line) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) ++n;
    }
    return n;
  };
  EXPECT_EQ(columns(row1), columns(header));
  EXPECT_EQ(columns(row2), columns(header));
}

// ---- Item 10: a run that compared nothing -------------------------------------------------------

TEST(OutputInput, NothingOffloadedIsNothingComparedAndNoRatio) {
  const std::string net = tmp("one.json");
  put(net, k_one_layer);
  const std::string js = tmp("one_result.json");
  std::string out, err;
  ASSERT_EQ(cli("run -q --batch 1 --network " + net + " --json " + js, &out, &err), 0) << err;
  EXPECT_NE(out.find("verification: nothing compared, no layer was offloaded (0 prefetched bytes)"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("matched (0 bytes compared"), std::string::npos) << out;
  EXPECT_NE(out.find("compression ratio: n/a, nothing was compressed (no layer offloaded)"), std::string::npos) << out;
  EXPECT_EQ(out.find("1.000x\n"), std::string::npos) << out;
  const json j = json::parse(slurp(js));
  EXPECT_TRUE(j["verified"].is_null()) << j["verified"];
  EXPECT_EQ(j["verified_bytes"], 0);
  EXPECT_TRUE(j["compression_ratio"].is_null()) << j["compression_ratio"];
  EXPECT_FALSE(j["stats"].contains("compression_ratio"));
  // A sweep takes such a result as a run that succeeded (verified null with 0 bytes compared).
  const std::string dir = tmp("one_sweep");
  ASSERT_EQ(cli("sweep -q --batch 1 --network " + net + " --grid pcie.lanes=4,8 --no-plot --jobs 1 --out " + dir,
                nullptr, &err),
            0)
      << err << slurp(dir + "/run_0.log");
  const std::string csv = slurp(dir + "/sweep.csv");
  EXPECT_NE(csv.find("\n0,4,ok,"), std::string::npos) << csv;
}

// ---- Section B ----------------------------------------------------------------------------

TEST(OutputInput, EmptyOutputPathsAreErrors) {
  for (const char* opt : {"--json", "--csv", "--trace", "--vcd"})
    expect_error("run " + k_fast + " " + opt + " ''", 2, {std::string(opt) + " '': an empty file name"});
  expect_error("compare " + k_fast.substr(0, k_fast.size() - 3) + " --json ''", 2, {"--json '': an empty file name"});
  const std::string npy = tmp("e.npy");
  write_npy(npy);
  expect_error("analyze --json '' " + npy, 2, {"--json '': an empty file name"});
  expect_error("config --dump ''", 2, {"an empty file name"});
  const std::string out = tmp("sweep_empty");
  expect_error("sweep " + k_fast + " --grid pcie.lanes=4,8 --out " + out + " --emit-slurm ''", 2,
               {"--emit-slurm '': an empty file name"});
  EXPECT_FALSE(exists(out));  // the sweep did not run
}

TEST(OutputInput, AnalyzeUnknownShortOptionIsNotAPath) {
  const std::string npy = tmp("q.npy");
  write_npy(npy);
  expect_error("analyze -q " + npy, 2, {"unknown option '-q'"});
  // A PATH that starts with '-' after "--".
  const std::string dir = tmp("dash");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  write_npy(dir + "/-q.npy");
  std::string out, err;
  EXPECT_EQ(cli("analyze --codecs zvc -- " + dir + "/-q.npy", &out, &err), 0) << err;
  EXPECT_NE(out.find("-q.npy (1 tensors"), std::string::npos) << out;
}

TEST(OutputInput, ConfigOptionsAreNotSilentlyIgnored) {
  expect_error("config --list --dump", 2, {"--dump, --list and --presets"});
  expect_error("config --presets --preset bogus", 2, {"--presets lists the shipped presets and takes no other option",
                                                      "--preset"});
  expect_error("config --presets --param pcie.lanes=8", 2, {"takes no other option (got --param)"});
  std::string out;
  EXPECT_EQ(cli("config --presets", &out), 0);
  EXPECT_NE(out.find("titanx-gen3"), std::string::npos);
}

TEST(OutputInput, CompareRefusesAMode) {
  expect_error("compare " + k_fast.substr(0, k_fast.size() - 3) + " --mode at", 2,
               {"--mode at: compare runs the job in both modes"});
  expect_error("compare " + k_fast.substr(0, k_fast.size() - 3) + " --param mode=lt", 2,
               {"--param mode=lt: compare runs the job in both modes"});
  // ... and its help does not offer --mode (docs audit s15: it listed the option it refuses).
  std::string help;
  ASSERT_EQ(cli("compare --help", &help), 0);
  EXPECT_EQ(help.find("--mode"), std::string::npos) << help;
  ASSERT_EQ(cli("run --help", &help), 0);
  EXPECT_NE(help.find("--mode arg"), std::string::npos) << help;
}

TEST(OutputInput, PrintableEscapesControlsAndBrokenUtf8) {
  EXPECT_EQ(printable("a\x1B[31mRED\a"), "a\\x1B[31mRED\\x07");
  EXPECT_EQ(printable("tab\there\r"), "tab\\x09here\\x0D");
  EXPECT_EQ(printable("l1\nl2"), "l1\\x0Al2");
  EXPECT_EQ(printable("l1\nl2", true), "l1\nl2");
  // Well-formed UTF-8 stays; a stray byte, a truncated sequence, an overlong form and a
  // surrogate are shown byte by byte.
  EXPECT_EQ(printable("Schicht_\xC3\xA4"), "Schicht_\xC3\xA4");
  EXPECT_EQ(printable("\xE2\x82\xAC 5"), "\xE2\x82\xAC 5");
  EXPECT_EQ(printable("a\xFF" "b"), "a\\xFFb");
  EXPECT_EQ(printable("a\xC3"), "a\\xC3");
  EXPECT_EQ(printable("\xC0\xAF"), "\\xC0\\xAF");
  EXPECT_EQ(printable("\xED\xA0\x80"), "\\xED\\xA0\\x80");
  // C1 controls (U+009B is a CSI on some terminals) and a right-to-left override.
  EXPECT_EQ(printable("\xC2\x9B" "2J"), "\\xC2\\x9B2J");
  EXPECT_EQ(printable("x\xE2\x80\xAEy"), "x\\xE2\\x80\\xAEy");
  // Invisible format characters (breaker s24 F8: `--batch` + U+200B looked like --batch):
  // zero-width space U+200B, word joiner U+2060, byte-order mark U+FEFF; a visible en dash
  // (U+2013) stays.
  EXPECT_EQ(printable("batch\xE2\x80\x8B"), "batch\\xE2\\x80\\x8B");
  EXPECT_EQ(printable("a\xE2\x81\xA0" "b"), "a\\xE2\\x81\\xA0b");
  EXPECT_EQ(printable("\xEF\xBB\xBFx"), "\\xEF\\xBB\\xBFx");
  EXPECT_EQ(printable("\xE2\x80\x93x"), "\xE2\x80\x93x");
  // Soft hyphen U+00AD and combining grapheme joiner U+034F (breaker s25) too.
  EXPECT_EQ(printable("ba\xC2\xADtch"), "ba\\xC2\\xADtch");
  EXPECT_EQ(printable("ba\xCD\x8Ftch"), "ba\\xCD\\x8Ftch");
}

TEST(OutputInput, ControlCharactersInNamesAreEscapedOnTheTerminal) {
  std::string out, err;
  ASSERT_EQ(cli("run " + k_fast + " --param gpu.name=$'a\\e[31mRED\\a'", &out, &err), 0) << err;
  EXPECT_NE(out.find("platform   : a\\x1B[31mRED\\x07 ("), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1B'), std::string::npos);
  EXPECT_EQ(out.find('\a'), std::string::npos);
  // In an error message (through usage_error).
  EXPECT_EQ(cli("run " + k_fast + " --param $'pcie.lan\\eX=4'", nullptr, &err), 2);
  EXPECT_NE(err.find("pcie.lan\\x1BX"), std::string::npos) << err;
  EXPECT_EQ(err.find('\x1B'), std::string::npos) << err;
}

TEST(OutputInput, ConfigurationTextThatIsNotUtf8IsRefused) {
  // JSON holds UTF-8 only: the outputs failed after the run (exit 3) and `config --dump` ended
  // with an uncaught exception.
  expect_error("config --param gpu.name=$'\\xff'", 2, {"gpu.name = \"\\xFF\": not valid UTF-8 text"});
  expect_error("run " + k_fast + " --param gpu.name=$'a\\xc3' --json " + tmp("utf8.json"), 2,
               {"gpu.name = \"a\\xC3\": not valid UTF-8 text"});
  EXPECT_FALSE(exists(tmp("utf8.json")));
  // Well-formed UTF-8 is fine, and kept in the JSON.
  std::string out, err;
  ASSERT_EQ(cli("config --param gpu.name=$'Karte_\\xc3\\xa4'", &out, &err), 0) << err;
  EXPECT_EQ(json::parse(out)["gpu"]["name"], "Karte_\xC3\xA4");
  // Among several activation sources too (json::dump() threw "[json.exception.type_error.316]"
  // naming nothing), in either order and through --param's JSON array. (cli() runs bash -c
  // "...": a quote reaching bash is \" here.)
  expect_error("config --activations $'\\xff.npz' --activations b.npz", 2,
               {"activations = \"[\"\\xFF.npz\",\"b.npz\"]\": not valid UTF-8 text"});
  expect_error("config --param $'activations=[\\\"b.npz\\\",\\\"\\xff.npz\\\"]'", 2,
               {"--param: activations = \"[\"b.npz\",\"\\xFF.npz\"]\": not a JSON array of strings",
                "ill-formed UTF-8 byte"});
  // A value refused for another reason is quoted with its bytes shown (json::dump() threw).
  expect_error("config --param mode=$'\\xff'", 2, {"--param: mode = \"\\xFF\": expected one of lt at"});
  expect_error("config --param $'pcie.lanes=\\xff'", 2, {"--param: pcie.lanes = \"\\xFF\": expected an integer"});
}

TEST(OutputInput, ANulByteInAPathIsRefused) {
  // "a.npz\0/../x": the system opened a.npz while the report and the .config.json recorded
  // x (run again from that record, it read another file or none). Refused naming the key.
  expect_error("config --param 'activations=[\\\"n1.npz\\\\u0000/../x\\\",\\\"n2.npz\\\"]'", 2,
               {"--param: activations = \"[\\\"n1.npz\\\\u0000/../x\\\",", "every element a path without NUL bytes"});
  const std::string cfg = tmp("nul.json");
  put(cfg, "{\"activations\": \"a.npz\\u0000b\"}");
  expect_error("config --config " + cfg, 2, {"activations = \"a.npz\\x00b\": holds a NUL byte"});
  put(cfg, "{\"name_map\": \"m.json\\u0000\"}");
  expect_error("run --config " + cfg + " --steps oracle", 2, {"name_map = \"m.json\\x00\": holds a NUL byte"});
}

TEST(OutputInput, DirectIoGivenUpIsExplained) {
  // The store falls back to buffered I/O (O_DIRECT refused, or a slow disk) without recording
  // why; the host line says direct I/O was asked for and what gives it up. A report as a run
  // that spilled makes it (no file system here refuses O_DIRECT reliably: tmpfs takes it).
  run_report r;
  r.config.host_mem.spill_options.direct_io = true;
  r.host.spilled = true;
  r.host.peak_spilled_bytes = 256u << 20;  // something spilled (with 0: "nothing spilled", s25 F6)
  r.host.direct_io = false;
  std::ostringstream os;
  print_summary(os, r);
  EXPECT_NE(os.str().find("host memory spilled to a file: peak 0.27 GB, buffered I/O (host_mem.spill_direct_io=true given up: the file system refused direct I/O, "
                          "or the first 64 MiB were written slower than 0.4 GB/s), "),
            std::string::npos)
      << os.str();
  // Not asked for: plain "buffered I/O"; in effect: "direct I/O".
  r.config.host_mem.spill_options.direct_io = false;
  std::ostringstream plain;
  print_summary(plain, r);
  EXPECT_NE(plain.str().find("buffered I/O, "), std::string::npos) << plain.str();
  EXPECT_EQ(plain.str().find("given up"), std::string::npos);
  // Below 0.1 GB in MB (breaker s25: 2.2 MB printed "peak 0.00 GB"): 2,300,000 B = 2.3 MB.
  r.host.peak_spilled_bytes = 2'300'000;
  std::ostringstream small;
  print_summary(small, r);
  EXPECT_NE(small.str().find("host memory spilled to a file: peak 2.3 MB, buffered I/O"), std::string::npos)
      << small.str();
}

// An output named /dev/stdout while stdout is appended to a file (`>> log`): written through
// the process's own descriptor, so the file keeps what it held and what the run printed
// before (a temporary file renamed over the redirect target replaced it; reopening the path
// with O_TRUNC would empty it); no FILE.config.json beside a path in /dev (re-breaker,
// session 12).
TEST(output_input, dev_stdout_output_appends_to_the_redirected_file) {
  const std::string log = tmp("appended.log");
  {
    std::ofstream(log) << "PREVIOUS\n";
  }
  struct ::stat before {};
  ASSERT_EQ(::stat(log.c_str(), &before), 0);
  const std::string cmd = std::string(CDMA_VP_EXE) +
                          " run --network synthetic --batch 1 --steps oracle --csv /dev/stdout >> " + log + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string text = slurp(log);
  EXPECT_EQ(text.rfind("PREVIOUS\n", 0), 0u) << text;                     // kept, at the start
  EXPECT_NE(text.find("one training step"), std::string::npos) << text;  // the report
  EXPECT_NE(text.find("\nlayer,"), std::string::npos) << text;           // then the CSV
  struct ::stat after {};
  ASSERT_EQ(::stat(log.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);  // the same file, not a replacement
  const std::string json_cmd = std::string(CDMA_VP_EXE) +
                               " run --network synthetic --batch 1 --steps oracle -q --json /dev/stdout >> " + log;
  ASSERT_EQ(std::system(json_cmd.c_str()), 0);
  EXPECT_NE(slurp(log).find("\"verified\""), std::string::npos);
  struct ::stat st {};
  EXPECT_NE(::stat("/dev/stdout.config.json", &st), 0);
  // Other spellings of the descriptor: a doubled slash, the thread's own fd directory, a
  // symbolic link to /dev/stdout (each replaced or emptied the file before).
  const std::string link = tmp("to_stdout.json");
  std::remove(link.c_str());
  ASSERT_EQ(::symlink("/dev/stdout", link.c_str()), 0);
  for (const std::string& spelling : {std::string("/dev//stdout"), std::string("/proc/thread-self/fd/1"), link}) {
    std::ofstream(log) << "PREVIOUS\n";
    const std::string c = std::string(CDMA_VP_EXE) +
                          " run --network synthetic --batch 1 --steps oracle -q --json " + spelling + " >> " + log;
    ASSERT_EQ(std::system(c.c_str()), 0) << spelling;
    const std::string t = slurp(log);
    EXPECT_EQ(t.rfind("PREVIOUS\n", 0), 0u) << spelling << ": " << t.substr(0, 200);
    EXPECT_NE(t.find("\"verified\""), std::string::npos) << spelling;
  }
  std::remove(link.c_str());
}

// A regular file in a directory under /dev (/dev/shm, a tmpfs) is a file like any other:
// an output naming the --config file there is refused (it was exempt as "special").
TEST(output_input, regular_file_under_dev_is_checked_like_any_other) {
  struct ::stat st {};
  if (::stat("/dev/shm", &st) != 0 || !S_ISDIR(st.st_mode) || ::access("/dev/shm", W_OK) != 0)
    GTEST_SKIP() << "no writable /dev/shm";
  const std::string cfg = "/dev/shm/cdma_test_" + std::to_string(::getpid()) + ".json";
  std::ofstream(cfg) << "{}\n";
  std::string err;
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --config " + cfg + " --csv " + cfg, nullptr, &err), 2) << err;
  EXPECT_NE(err.find("the output would overwrite an input"), std::string::npos) << err;
  EXPECT_EQ(slurp(cfg), "{}\n");
  std::remove(cfg.c_str());
}

// sweep --merge only gathers DIR's results: any option that plans or runs a sweep is refused
// rather than silently ignored (--emit-slurm with --merge exited 0 and wrote no script;
// re-breaker, session 12).
TEST(output_input, sweep_merge_takes_no_other_option) {
  const std::string dir = tmp("merge_only");
  std::string err;
  EXPECT_EQ(cli("sweep --merge " + dir + " --emit-slurm " + tmp("x.sh"), nullptr, &err), 2) << err;
  EXPECT_NE(err.find("--merge " + dir + " takes no other option but --no-plot (got --emit-slurm)"), std::string::npos)
      << err;
  EXPECT_EQ(cli("sweep --merge " + dir + " -q --network alexnet", nullptr, &err), 2) << err;
  EXPECT_NE(err.find("(got -q --network alexnet)"), std::string::npos) << err;
}

// An output path through a file ("cfg.json/x.csv", "cfg.json/") is "Not a directory", and a
// path ending with '/' is a directory name (both said "Is a directory"; re-breaker, session 12).
TEST(output_input, output_path_through_a_file_or_ending_with_a_slash_is_named_as_such) {
  const std::string f = tmp("plain.json");
  std::ofstream(f) << "{}\n";
  std::string err;
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --csv " + f + "/x.csv", nullptr, &err), 2) << err;
  EXPECT_NE(err.find(f + "/x.csv: cannot open for writing: Not a directory"), std::string::npos) << err;
  EXPECT_EQ(cli("run --network synthetic --steps oracle -q --csv " + tmp("no_such_dir") + "/", nullptr, &err), 2) << err;
  EXPECT_NE(err.find("ends with '/', a directory name; expected a file name"), std::string::npos) << err;
}

// compare runs both modes: a mode in its --config file is not used, and it says so (it ran
// both silently; refusing would break `compare --config RUN.config.json`, whose effective
// configuration always records a mode).
TEST(output_input, compare_notes_an_unused_mode_of_its_config_file) {
  const std::string c = tmp("mode_at.json");
  std::ofstream(c) << "{\"mode\": \"at\"}\n";
  std::string err;
  EXPECT_EQ(cli("compare --network synthetic --steps oracle --config " + c, nullptr, &err), 0) << err;
  EXPECT_NE(err.find("note: compare runs the job in both modes (lt and at); mode \"at\" of --config " + c +
                     " is not used"),
            std::string::npos)
      << err;
}

// analyze took the last of a repeated option (--json a.json --json b.json wrote b.json only),
// while every other command refuses it: refused before anything is analysed or written.
TEST(OutputInput, AnalyzeRefusesARepeatedOption) {
  const std::string npy = tmp("rep.npy"), a = tmp("rep_a.json"), b = tmp("rep_b.json");
  write_npy(npy);
  for (const auto& [opt, twice] : std::vector<std::pair<std::string, std::string>>{
           {"--json", "--json " + a + " --json " + b},
           {"--window", "--window 4096 --window 8192"},
           {"--codecs", "--codecs zvc --codecs raw"},
           {"--json", "--json " + a + " " + npy + " --json " + b}}) {
    std::string out, err;
    EXPECT_EQ(cli("analyze " + twice + " " + npy, &out, &err), 2) << twice << "\n" << err;
    EXPECT_NE(err.find("cdma-vp: analyze: option '" + opt + "' cannot be specified more than once"), std::string::npos)
        << twice << "\n" << err;
    EXPECT_EQ(out, "") << twice;  // nothing analysed
    EXPECT_FALSE(exists(a));
    EXPECT_FALSE(exists(b));
  }
  // Each option once is still fine.
  std::string out, err;
  EXPECT_EQ(cli("analyze --json " + b + " --window 64 --codecs zvc " + npy, &out, &err), 0) << err;
  EXPECT_EQ(json::parse(slurp(b))["window_bytes"], 64);
}

// analyze --window is read as cdma.window reads it (breaker s17: "4 KiB" was refused with a
// message saying "as cdma.window takes them"), and --codecs lists each codec once (a codec
// given twice printed its rows twice; raw and none are one codec).
TEST(OutputInput, AnalyzeWindowTakesSizesAsCdmaWindowAndCodecsOnce) {
  const std::string npy = tmp("win.npy"), j = tmp("win.json");
  write_npy(npy);
  for (const auto& [text, bytes] : std::vector<std::pair<std::string, int>>{
           {"'4 KiB'", 4096}, {"1.5KiB", 1536}, {"1000", 1000}, {"1MiB", 1048576}}) {
    std::string out, err;
    std::remove(j.c_str());
    EXPECT_EQ(cli("analyze --json " + j + " --window " + text + " --codecs zvc " + npy, &out, &err), 0) << text << err;
    EXPECT_EQ(json::parse(slurp(j))["window_bytes"], bytes) << text;
  }
  for (const std::string bad : {"63", "0x1000", "4096.5", "'4 kib'", "2MiB"}) {
    std::string out, err;
    EXPECT_EQ(cli("analyze --window " + bad + " " + npy, &out, &err), 2) << bad;
    EXPECT_NE(err.find("expected bytes per window as cdma.window takes them"), std::string::npos) << bad << err;
    EXPECT_EQ(out, "") << bad;
  }
  for (const std::string twice : {"zvc,lz4,zvc", "raw,none"}) {
    std::string out, err;
    EXPECT_EQ(cli("analyze --codecs " + twice + " " + npy, &out, &err), 2) << twice;
    EXPECT_NE(err.find("names a codec listed before"), std::string::npos) << twice << err;
    EXPECT_EQ(out, "") << twice;
  }
}

// config --dump --output FILE: the messages named the option "config --dump"; they name it as
// given, --output (the positional FILE of `config --dump FILE` stays "config --dump FILE").
TEST(OutputInput, ConfigDumpOutputMessagesNameTheOptionAsGiven) {
  std::string err;
  EXPECT_EQ(cli("config --dump --output /proc/x", nullptr, &err), 2) << err;
  EXPECT_NE(err.find("cdma-vp: --output /proc/x: cannot open for writing: No such file or directory"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("config --dump"), std::string::npos) << err;
  EXPECT_EQ(cli("config --output=/proc/x", nullptr, &err), 2) << err;
  EXPECT_NE(err.find("cdma-vp: --output /proc/x: cannot open for writing"), std::string::npos) << err;
  EXPECT_EQ(cli("config --dump --output ''", nullptr, &err), 2) << err;
  EXPECT_NE(err.find("cdma-vp: --output '': an empty file name; expected a path, or - for standard output"),
            std::string::npos)
      << err;
  EXPECT_EQ(cli("config --dump --output /dev/full", nullptr, &err), 3) << err;
  EXPECT_NE(err.find("cdma-vp: error: --output /dev/full: write failed: No space left on device"), std::string::npos)
      << err;
  const std::string cfg = tmp("dump_in.json");
  put(cfg, "{\"batch\": 2}");
  EXPECT_EQ(cli("config --config " + cfg + " --dump --output " + cfg, nullptr, &err), 2) << err;
  EXPECT_NE(err.find("--output and --config name the same file"), std::string::npos) << err;
  EXPECT_EQ(slurp(cfg), "{\"batch\": 2}");
  // The positional FILE: named as before.
  EXPECT_EQ(cli("config --dump /proc/x", nullptr, &err), 2) << err;
  EXPECT_NE(err.find("cdma-vp: config --dump /proc/x: cannot open for writing"), std::string::npos) << err;
}

// Standard output a pipe whose reader is gone (`cdma-vp config --list | head -1` once head has
// exited): the write fails with EPIPE (SIGPIPE is ignored so that the other outputs are still
// written); exit 3 as for any failed write, but no message (the reader took what it wanted).
// /dev/full, by contrast, is still reported (ConfigDumpOutputMessagesNameTheOptionAsGiven).
TEST(OutputInput, ClosedPipeOnStandardOutputIsExit3WithoutAMessage) {
  int out[2], err[2];
  ASSERT_EQ(::pipe(out), 0);
  ASSERT_EQ(::pipe(err), 0);
  ::close(out[0]);  // the reader is gone before anything is written: EPIPE, no race
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::close(err[0]);
    ::execl(CDMA_VP_EXE, CDMA_VP_EXE, "config", "--list", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  std::string msg;
  char buf[4096];
  for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<std::size_t>(n));
  ::close(err[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_EQ(msg, "");
}

// New-user trial s18: the header names the GPU DRAM model (the DRAM timing preset, or the bus
// model), not only its bandwidth: GDDR5 and HBM2 at one bandwidth looked alike.
TEST(OutputInput, HeaderNamesTheDramPreset) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "(7 TFLOP/s, 336 GB/s gddr5_titanx), PCIe Gen3 x16"},
      {" --preset v100-gen3", "(15.7 TFLOP/s, 900 GB/s hbm2_v100), PCIe Gen3 x16"},
      {" --param gpu_mem.model=bus", "(7 TFLOP/s, 336 GB/s bus model), PCIe Gen3 x16"},
      // Rates exact, in the unit that fits (breaker s23: "(0.0 TFLOP/s, 0 GB/s bus model)",
      // "host memory 0.1 GB/s").
      {" --param 'gpu.peak_flops=1 GFLOP/s' --param 'gpu_mem.peak_bandwidth=400 MB/s' --param gpu_mem.model=bus "
       "--param 'host_mem.bandwidth=140 MB/s'",
       "(1 GFLOP/s, 400 MB/s bus model), PCIe Gen3 x16 (MPS 256 B), host memory 140 MB/s"},
      {" --param 'gpu.peak_flops=1.23456789 TFLOP/s'", "(1.23456789 TFLOP/s, 336 GB/s gddr5_titanx)"},
  };
  for (const auto& [args, want] : cases) {
    std::string out, err;
    ASSERT_EQ(cli("run " + k_fast + args, &out, &err), 0) << args << "\n" << err;
    EXPECT_NE(out.find("platform   : "), std::string::npos) << out;
    EXPECT_NE(out.find(want), std::string::npos) << args << "\n" << out;
  }
}

// New-user trial s20 F4: Gen4 and Gen5 gave the same step times and nothing said why. The
// header names the host memory's bandwidth and, when it is below the link's MWr payload rate
// (Gen4 x16: 16e9 x 128/130 x 370/371 x 256/280 = 28.73 GB/s by hand; Gen3 x16 14.36 GB/s),
// says that it bounds the transfers.
TEST(OutputInput, HeaderSaysWhenHostMemoryBoundsTheTransfers) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "PCIe Gen3 x16 (MPS 256 B), host memory 25.6 GB/s\n"},
      {" --preset a100-gen4",
       "PCIe Gen4 x16 (MPS 256 B), host memory 25.6 GB/s (bounds the transfers: below the link's 28.7 GB/s of MWr "
       "payload)\n"},
      {" --preset a100-gen4 --param 'host_mem.bandwidth=200 GB/s'", "PCIe Gen4 x16 (MPS 256 B), host memory 200 GB/s\n"},
  };
  for (const auto& [args, want] : cases) {
    std::string out, err;
    ASSERT_EQ(cli("run " + k_fast + args, &out, &err), 0) << args << "\n" << err;
    EXPECT_NE(out.find(want), std::string::npos) << args << "\n" << out;
  }
}

// ---- New-user trial s19: what the outputs say about the inputs ------------------------------

// F2: density-profile layer names that are no layer of the network were used silently, by their
// position; now a warning on standard error names the file and every such name (the JSON lists
// it), and the report's activations line says which layers borrowed whose curve.
TEST(OutputInput, DensityProfileNamesNotInTheNetworkAreAWarning) {
  const std::string prof = tmp("torch_profile.csv"), js = tmp("torch_profile.json");
  put(prof, "iteration,epoch,layer,zero_fraction\n0,0,features.0,0.3\n0,0,conv2,0.4\n0,0,classifier.1,0.5\n"
            "100,1,features.0,0.5\n100,1,conv2,0.6\n100,1,classifier.1,0.7\n");
  std::string out, err;
  ASSERT_EQ(cli("run --network fmnist_cnn --batch 1 --steps oracle -q --density-profile " + prof + " --json " + js, &out,
                &err),
            0)
      << err;
  const std::string w = prof + ": 2 layer names of the density profile are not layers of network fmnist_cnn: "
                               "'features.0', 'classifier.1' (";
  EXPECT_NE(err.find("cdma-vp: warning: " + w), std::string::npos) << err;
  // fmnist_cnn: conv1 conv2 pool1 conv3 conv4 pool2 conv5 pool3 fc6 fc7 (n 10); profile order
  // as in the file (m 3). By hand, layer k takes round(k x 2 / 9): conv1 0 -> features.0, pool1
  // (2) 0, conv3 (3) 1 -> conv2, ...: 1 named, 9 not named, of which fc6 (the last layer's
  // input) and fc7 (the output) are never offloaded: 7 borrowed. Progress 1 = iteration 100.
  const std::string base = prof.substr(prof.rfind('/') + 1);  // the report names the file without its folder
  EXPECT_NE(out.find("; density profile " + base + " at progress 1 (iteration 100): 1 of 10 layers named, 7 borrowed "
                     "(conv1 <- features.0, pool1 <- features.0, conv3 <- conv2, conv4 <- conv2, +3 more), 2 not named "
                     "but never offloaded (fc6, fc7), 2 profile names not in the network\n"),
            std::string::npos)
      << out;
  const json j = json::parse(slurp(js));
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0].get<std::string>().rfind(w, 0), 0u) << j["warnings"];
  // A profile of the network's own names: no warning.
  put(prof, "iteration,epoch,layer,zero_fraction\n0,0,conv1,0.3\n0,0,conv2,0.4\n");
  ASSERT_EQ(cli("run --network fmnist_cnn --batch 1 --steps oracle -q --density-profile " + prof + " --json " + js, &out,
                &err),
            0)
      << err;
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
  EXPECT_TRUE(json::parse(slurp(js))["warnings"].empty());
}

// F4: the header says where the kernel times came from; the JSON too.
TEST(OutputInput, ReportHeaderNamesTheLayerTimesTable) {
  const std::string lt = tmp("two_layers.csv"), js = tmp("two_layers.json");
  put(lt, "layer,forward_ms,backward_ms\nconv1,0.1,0.2\nfc7,0.01,0.02\n");
  std::string out, err;
  ASSERT_EQ(cli("run --network fmnist_cnn --batch 1 --steps oracle -q --layer-times " + lt + " --json " + js, &out, &err), 0)
      << err;
  EXPECT_NE(out.find("\n  kernels    : times from " + lt.substr(lt.rfind('/') + 1) +
                     " (2 layers measured), roofline for 8\n"),
            std::string::npos)
      << out;
  const json j = json::parse(slurp(js));
  EXPECT_EQ(j["kernel_times"]["measured_layers"], 2);
  EXPECT_EQ(j["kernel_times"]["roofline_layers"], 8);
  EXPECT_EQ(j["kernel_times"]["layer_times"].get<std::string>().find("two_layers.csv") != std::string::npos, true);
  ASSERT_EQ(cli("run --network fmnist_cnn --batch 1 --steps oracle -q", &out, &err), 0) << err;
  EXPECT_NE(out.find("\n  kernels    : roofline times (no --layer-times table)\n"), std::string::npos) << out;
}

// F4: a sweep over batch with one measured table keeps the kernels fixed while the transfers
// grow: warned before any run (here with --emit-slurm, which runs nothing).
TEST(OutputInput, SweepWarnsOfABatchAxisWithALayerTimesTable) {
  const std::string lt = tmp("sweep_times.csv");
  put(lt, "layer,forward_ms,backward_ms\nconv1,0.1,0.2\n");
  std::string err;
  ASSERT_EQ(cli("sweep --grid batch=1,2 --network fmnist_cnn --layer-times " + lt + " --out " + tmp("sw_b") +
                    " --emit-slurm " + tmp("sw_b.sh"),
                nullptr, &err),
            0)
      << err;
  EXPECT_NE(err.find("cdma-vp: warning: --grid batch=1,2 with layer_times = "), std::string::npos) << err;
  EXPECT_NE(err.find("the table's kernel times are used as given at every batch (they do not scale with it)"),
            std::string::npos)
      << err;
  // Another axis, a batch axis with the roofline, or a batch "axis" of one value (one batch,
  // breaker s19: it was warned of): no warning.
  for (const std::string& args : {"--grid pcie.gen=3,4 --network fmnist_cnn --layer-times " + lt + " --out " + tmp("sw_g"),
                                  "--grid batch=1,2 --network fmnist_cnn --out " + tmp("sw_r"),
                                  "--grid batch=2 --grid pcie.gen=3,4 --network fmnist_cnn --layer-times " + lt +
                                      " --out " + tmp("sw_1")}) {
    ASSERT_EQ(cli("sweep " + args + " --emit-slurm " + tmp("sw_x.sh"), nullptr, &err), 0) << args << "\n" << err;
    EXPECT_EQ(err.find("warning"), std::string::npos) << args << "\n" << err;
  }
}

// F10: compare named the network, batch and codec but not the platform.
TEST(OutputInput, CompareNamesThePlatform) {
  const std::string js = tmp("cmp_platform.json");
  std::string out, err;
  ASSERT_EQ(cli("compare --network fmnist_cnn --batch 1 --steps oracle -q --preset v100-gen3 --json " + js, &out, &err), 0)
      << err;
  EXPECT_EQ(out.rfind("network fmnist_cnn, batch 1, codec zvc, platform v100-gen3 (", 0), 0u) << out;
  EXPECT_NE(out.find(", PCIe Gen3 x16)\n"), std::string::npos) << out;
  EXPECT_EQ(json::parse(slurp(js))["platform"], "v100-gen3");
  // The default preset when none is given; --param changes show in the link.
  ASSERT_EQ(cli("compare --network fmnist_cnn --batch 1 --steps oracle -q --param pcie.gen=4", &out, &err), 0) << err;
  EXPECT_EQ(out.rfind("network fmnist_cnn, batch 1, codec zvc, platform titanx-gen3 (Titan X (Maxwell), PCIe Gen4 x16)\n",
                      0),
            0u)
      << out;
}
