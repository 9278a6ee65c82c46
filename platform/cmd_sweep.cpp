// cdma-vp sweep: runs every combination of --grid parameters as a separate `cdma-vp run`
// process (as many at once as there are cores), writes one CSV row per run and plots.
//
//   cdma-vp sweep --grid 'pcie.gen=3,4,5' --grid 'codec=none,zvc' --network synthetic --out DIR
//   cdma-vp sweep ... --out DIR --emit-slurm job.sh   (no runs: a Slurm job-array script)
//   cdma-vp sweep --merge DIR                          (gather run_*.json into CSV + plots)
//
// Options other than the sweep's own are passed to every run unchanged. DIR gets
// sweep.plan.json (the grid and the runs' arguments), run_K.json / run_K.log per run,
// sweep.csv and sweep.png / sweep.svg.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <functional>
#include <map>
#include <unordered_map>
#include <set>
#include <sstream>
#include <thread>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include "platform/command.h"
#include "platform/config.h"
#include "platform/outputs.h"
#include "tlm/codec/codec.h"
#include "tlm/core/quantity.h"
#include "workloads/io/csv.h"
#include "workloads/io/input_file.h"
#include "workloads/network/network.h"

extern char** environ;

namespace po = boost::program_options;

namespace cdma::platform {
namespace {

using nlohmann::json;

struct grid_axis {
  std::string name;
  std::vector<std::string> values;
};

/// The comma-separated items of `list`, empty ones kept ("a,,b," -> a, "", b, ""; "" -> none);
/// with `trim`, each without the spaces and tabs around it (`--grid "batch=1, 2"` was refused
/// for " 2", while `bench --batches "1, 2"` took it).
std::vector<std::string> split_commas(const std::string& list, bool trim = true) {
  std::vector<std::string> items;
  std::stringstream ss(list);
  std::string v;
  while (std::getline(ss, v, ',')) {
    const auto first = v.find_first_not_of(" \t");
    if (!trim) items.push_back(v);
    else items.push_back(first == std::string::npos ? std::string() : v.substr(first, v.find_last_not_of(" \t") - first + 1));
  }
  if (!list.empty() && list.back() == ',') items.push_back("");
  return items;
}

grid_axis parse_grid(const std::string& g) {
  const auto eq = g.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == g.size())
    throw config_error("--grid " + g + ": expected name=v1,v2,... e.g. pcie.gen=3,4,5");
  // (An empty value is allowed, e.g. activations=.)
  const std::string name = g.substr(0, eq);
  // Path values keep their spaces (breaker s24 F6: activations=" lead.npz" named another file).
  grid_axis a{name, split_commas(g.substr(eq + 1), !is_path_parameter(name))};
  if (a.values.empty()) throw config_error("--grid " + g + ": no values");
  return a;
}

/// The largest --jobs (runs at once): far above any machine's cores, and below the process
/// limits a larger value would only run into.
constexpr unsigned max_jobs = 65536;
/// Most runs in one sweep: 100000 (the plan is checked run by run, ~2 ms each: 3 minutes, and
/// kept in memory, ~0.5 KB each). A grid of 1000 x 1000 x 1000 values was planned until the
/// memory ran out (breaker s22 brk2: 730 MB after 100 s, no message).
constexpr std::uint64_t max_runs = 100000;

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot find the cdma-vp executable (/proc/self/exe)");
  buf[n] = 0;
  return buf;
}

std::string shell_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

/// The log-file argument of an #SBATCH --output line for the runs of folder `dir` (no control
/// character nor backslash: refused before): in double quotes (sbatch groups the blanks in
/// them), a double quote escaped by a backslash (sbatch drops the backslash), and % doubled
/// (sbatch's file-name pattern reads %% as one %); then /run_%a.log, %a the task's index.
std::string sbatch_quote(const std::string& dir) {
  std::string o = "\"";
  for (const char c : dir) o += c == '"' ? std::string("\\\"") : c == '%' ? std::string("%%") : std::string(1, c);
  return o + "/run_%a.log\"";
}

/// The forms a run's recorded end takes (this process's statuses, run_K.status of a local
/// sweep or of the Slurm script): ok, failed(exit=N), failed(signal=N), interrupted(signal=N)
/// with N one to three decimal digits. For messages: the same list.
constexpr const char* status_forms =
    "ok, failed(exit=N) with N 1..255, failed(signal=N) or interrupted(signal=N) with N 1..64 (no leading zeros)";
bool known_status(const std::string& s) {
  if (s == "ok") return true;
  // What this command writes: an exit status (1..255: 0 is success, not a failure) or a
  // signal number (1..64), as a plain decimal number.
  for (const std::string pre : {"failed(exit=", "failed(signal=", "interrupted(signal="}) {
    if (s.size() < pre.size() + 2 || s.size() > pre.size() + 4 || s.compare(0, pre.size(), pre) != 0 || s.back() != ')')
      continue;
    const std::string n = s.substr(pre.size(), s.size() - pre.size() - 1);
    if (n.find_first_not_of("0123456789") != std::string::npos || n[0] == '0') return false;
    const int v = std::stoi(n);  // 1..3 digits
    return v <= (pre == "failed(exit=" ? 255 : 64);
  }
  return false;
}

/// Reads run_K.status (a regular file): "" and `status` set to its word, or what is wrong for
/// the log (the content shown with control bytes as \xNN, never raw: it goes to the terminal
/// and sweep.csv). Exactly one known word, optionally followed by one newline, is a status; an
/// empty file is none (`status` stays "": the run's end was not recorded, e.g. a task killed
/// while writing it).
std::string read_status(const std::string& path, std::string& status) {
  std::ifstream f(path, std::ios::binary);
  std::string text(4097, '\0');
  f.read(&text[0], static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(f.gcount()));
  if (!f.eof() && !f.good()) return "cannot be read";
  std::string word = text;
  if (!word.empty() && word.back() == '\n') word.pop_back();
  if (text.empty()) return "";
  if (!known_status(word))
    return "holds \"" + workloads::csv::shown(text, 80) + "\"" + (text.size() > 4096 ? " (and more)" : "") +
           "; expected one status word, " + status_forms + ", optionally followed by a newline";
  status = word;
  return "";
}

/// Checks every combination's configuration in-process, so a bad key fails before any run;
/// returns it (activations as given, not resolved; `resolved_activations`: the sources the
/// run will use, paths or {"synthetic"}).
/// `outputs`: the output options the arguments set (none but -q may be, the sweep sets them
/// per run); `config_file`: the --config file they name, if any; `preset_name`: the --preset
/// they name, if any.
platform_config check_config(const std::vector<std::string>& args,
                             std::vector<std::string>* resolved_activations = nullptr,
                             output_options* outputs = nullptr, std::string* config_file = nullptr,
                             std::vector<std::pair<std::string, std::string>>* given = nullptr,
                             std::string* preset_name = nullptr) {
  config_options o;
  output_options out;
  po::options_description d;
  add_config_options(d, o);
  add_output_options(d, out);
  po::variables_map vm;
  // Stray words are errors before anything runs (breaker s23: every run failed on them, exit 1).
  const po::positional_options_description no_positional;
  po::store(parse_command_words(args, d, no_positional), vm);
  po::notify(vm);
  // Before resolve(), which may fail for the passed options alone (valid with a grid value):
  // the caller still needs the output options and the config file they name.
  if (outputs) *outputs = out;
  if (config_file) *config_file = o.config_file;
  if (preset_name) *preset_name = o.preset;
  o.resolve(vm);
  if (given) *given = o.given;
  // A file combined with synthetic-data options: refused now.
  const std::vector<std::string> acts = resolve_activations(o.config);
  if (resolved_activations) *resolved_activations = acts;
  return o.config;
}

/// Grid keys that shape synthetic activations: a grid over one of them compares synthetic
/// data, so every row runs with activations=synthetic (never the shipped real sample, which
/// the default would pick for inception_v3 in the row where the value equals its default).
bool synthetic_key(std::string k) {
  if (k.rfind("platform.", 0) == 0) k = k.substr(9);
  return k == "density" || k == "zero_run" || k == "density_profile" || k == "training_progress" || k == "seed";
}

/// A path written one way for comparing settings: absolute, symbolic links and "." / ".."
/// resolved as far as the path exists, no trailing '/' (P, /a//b/../P and a link to P agree).
std::string same_path(const std::string& p) {
  if (p.empty()) return p;
  std::error_code ec;
  const std::filesystem::path w = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
  if (ec) return absolute_path(p);
  std::string s = w.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

/// setting_of's normal form of a configuration `c` (see setting_of).
json setting_json(platform_config c) {
  std::string lower = c.network;
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.size() >= 5 && lower.compare(lower.size() - 5, 5, ".json") == 0) {
    c.network = "file " + same_path(c.network);
  } else {
    try {
      c.network = workloads::make_network(c.network, 1).name;
    } catch (const std::exception&) {  // an unknown network: the run reports it
    }
  }
  if (c.codec == "raw") c.codec = "none";
  try {
    c.missing_activations = resolve_missing_activations(c);
    c.activations = resolve_activations(c);
  } catch (const std::exception&) {
  }
  if (!synthetic_activations(c.activations))
    for (auto& a : c.activations) a = same_path(a);
  c.density_profile = same_path(c.density_profile);
  c.layer_times = same_path(c.layer_times);
  c.name_map = same_path(c.name_map);
  c.host_mem.spill_options.dir = same_path(c.host_mem.spill_options.dir);
  json j = to_json(c);
  j["pcie"].erase("preset");
  return j;
}

/// The setting a grid value `name=value` makes, written one way so that two spellings of one
/// setting compare equal: the effective configuration (to_json) of `base` (the sweep's other
/// options) with the value applied, with network aliases and case (resnet-50, Alexnet) as the network's name, codec raw
/// as none (the same codec), file and folder paths resolved (same_path), activations as the
/// source the run uses ("" is synthetic for most networks), and pcie.preset left out (the link
/// parameters it sets are compared one by one: gen3x16 and gen3x016). Throws what applying the
/// value throws.
json setting_of(const platform_config& base, const std::string& name, const std::string& value) {
  platform_config c = base;
  apply_override(c, name + "=" + value, false, "--grid");
  return setting_json(std::move(c));
}

/// The first pair (x, y), x < y, of positions 0 .. n-1 that are the same(x, y) (the smallest x,
/// then the smallest y), or {n, n}: positions that are the same must have the same hash(x).
/// Linear in n (a bucket per hash) where comparing every pair took 95 s for a grid axis of
/// 4000 values (breaker s22 brk2).
std::pair<std::size_t, std::size_t> first_same(std::size_t n, const std::function<std::size_t(std::size_t)>& hash,
                                               const std::function<bool(std::size_t, std::size_t)>& same) {
  std::unordered_map<std::size_t, std::vector<std::size_t>> buckets;
  std::pair<std::size_t, std::size_t> best{n, n};
  for (std::size_t y = 0; y < n; ++y) {
    auto& b = buckets[hash(y)];
    for (std::size_t x : b)  // ascending: the first match is the smallest x for this y
      if (x < best.first && same(x, y)) {
        best = {x, y};
        break;
      }
    b.push_back(y);
  }
  return best;
}

/// A hash of a grid value for first_same(): of its setting when known (two spellings of one
/// setting hash alike), else of its text.
std::size_t value_hash(const std::string& value, const json& setting) {
  return setting.is_null() ? std::hash<std::string>{}("t" + value) : std::hash<std::string>{}("s" + setting.dump());
}

/// The grid axis over the platform preset (`--grid preset=titanx-gen3,v100-gen3`): each row
/// runs with `--preset VALUE` (not a --param: the preset is where a configuration starts).
bool preset_axis(const std::string& name) { return name == "preset"; }

/// The parameter a grid axis sets, one spelling (param_name), or "preset" for the preset
/// axis. Throws param_name's unknown-parameter message, naming `where`.
std::string grid_param(const std::string& name, const std::string& where) {
  return preset_axis(name) ? std::string("preset") : param_name(name, where);
}

/// Where a grid axis's --param goes in a run's arguments (the runs apply --params in order).
/// -1: the preset axis, first of all (`--preset VALUE`; the passed options then apply on top
/// of each row's preset, as in `cdma-vp run --preset VALUE OPTIONS`).
/// 0: before the passed options: pcie.preset, which sets every pcie.* parameter, so that a
/// passed `--param pcie.lanes=8` is applied on top of each row's preset (after it, the preset
/// silently replaced it: both rows ran x16). 1, 2: pcie.gen, then pcie.lanes, after the passed
/// options and before the other axes: on a measured-host preset they rescale pcie.pd_credits /
/// pcie.cpl_bytes, so an axis of those must come after them (`--grid pcie.pd_credits=192,384
/// --grid pcie.gen=3,4` ran the row labelled 192 at Gen4 with 384). 3: the other axes, in the
/// grid's order. (`--grid pcie.gen=3,4 --grid pcie.preset=...` ran every row at Gen3.) A run
/// applies its --params in that order itself since session 25 (application_rank: a passed
/// `--param pcie.cpl_bytes=64B` came before a `pcie.gen` axis and was re-derived, new-user
/// trial s25 F2); the arguments keep this order, as plans written before list them.
int axis_rank(const std::string& name) {
  if (preset_axis(name)) return -1;
  std::string k;
  try {
    k = param_name(name, "--grid");
  } catch (const std::exception&) {
    return 3;
  }
  return application_rank(k);
}

/// The dimensions of a grid: each a list of axes (indices into the grid) that take their
/// values together (a --zip group: value i of each; else one axis alone), in the order of
/// their first axis in the grid. `zips`: the --zip groups, as axis indices.
std::vector<std::vector<std::size_t>> grid_dims(std::size_t n_axes,
                                                const std::vector<std::vector<std::size_t>>& zips) {
  std::vector<std::vector<std::size_t>> dims;
  std::vector<bool> done(n_axes, false);
  for (std::size_t a = 0; a < n_axes; ++a) {
    if (done[a]) continue;
    std::vector<std::size_t> d = {a};
    for (const auto& z : zips)
      if (std::find(z.begin(), z.end(), a) != z.end()) d = z;
    for (std::size_t x : d) done[x] = true;
    dims.push_back(std::move(d));
  }
  return dims;
}

/// The runs of a grid: every combination of its dimensions (grid_dims(): an axis alone, or a
/// --zip group whose axes take value i together), the last dimension varying fastest.
json make_plan(const std::vector<grid_axis>& grid, const std::vector<std::string>& pass,
               const std::vector<std::vector<std::size_t>>& zips = {}) {
  json runs = json::array();
  const auto dims = grid_dims(grid.size(), zips);
  std::vector<std::size_t> di(dims.size(), 0);  // value index per dimension
  std::vector<std::size_t> idx(grid.size(), 0);  // value index per axis
  std::vector<std::size_t> order(grid.size());
  for (std::size_t a = 0; a < grid.size(); ++a) order[a] = a;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return axis_rank(grid[x].name) < axis_rank(grid[y].name); });
  for (;;) {
    for (std::size_t d = 0; d < dims.size(); ++d)
      for (std::size_t a : dims[d]) idx[a] = di[d];
    json values = json::object();
    std::vector<std::string> args;
    bool passed = false;  // the passed options are in args
    for (std::size_t a : order) {
      values[grid[a].name] = grid[a].values[idx[a]];
      if (!passed && axis_rank(grid[a].name) > 0) {
        args.insert(args.end(), pass.begin(), pass.end());
        passed = true;
      }
      if (preset_axis(grid[a].name)) {
        args.push_back("--preset");
        args.push_back(grid[a].values[idx[a]]);
        continue;
      }
      args.push_back("--param");
      args.push_back(grid[a].name + "=" + grid[a].values[idx[a]]);
    }
    if (!passed) args.insert(args.end(), pass.begin(), pass.end());
    runs.push_back({{"values", values}, {"args", args}});
    std::size_t d = dims.size();  // (a zip group's axes have equal lengths: checked by the caller)
    while (d > 0 && ++di[d - 1] == grid[dims[d - 1].front()].values.size()) di[--d] = 0;
    if (d == 0) break;
  }
  json axes = json::array();
  for (const auto& g : grid) axes.push_back({{"name", g.name}, {"values", g.values}});
  json plan = {{"grid", axes}, {"runs", runs}};
  if (!zips.empty()) {  // (recorded for the reader; --merge uses the runs' values and args)
    json zj = json::array();
    for (const auto& z : zips) {
      json names = json::array();
      for (std::size_t a : z) names.push_back(grid[a].name);
      zj.push_back(names);
    }
    plan["zip"] = zj;
  }
  return plan;
}

int spawn_run(const std::string& exe, const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv_s = {exe, "run"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + exe + ": " + std::strerror(rc));
  return pid;
}

/// "" if `rec` (a run result's recorded configuration) equals `want`, else the first parameter
/// that differs ("pcie.gen = 4, the plan has pcie.gen = 3").
std::string config_diff(const platform_config& rec, const platform_config& want) {
  if (to_json(want) == to_json(rec)) return "";
  const auto had = describe_params(rec), asked = describe_params(want);
  auto shown = [](const std::string& v) { return v.empty() ? std::string("\"\"") : v; };
  for (std::size_t i = 0; i < had.size() && i < asked.size(); ++i)
    if (had[i].value != asked[i].value)
      return had[i].name + " = " + shown(had[i].value) + ", the plan has " + had[i].name + " = " + shown(asked[i].value);
  return "another configuration than the plan's";
}

/// "" if the configuration recorded in a run result (`recorded`, the result's "config") has
/// the plan's grid values for its run (`values`: name -> value as given to --param, applied in
/// the order of `names`, the plan's grid, as the run applied them: last), else what differs
/// ("pcie.gen = 4, the plan has pcie.gen = 3"). A value counts as the same when applying the
/// plan's values to the recorded configuration changes nothing (so "3" and 3, "1 us" and
/// "1000 ns", an empty activations and the source it resolves to, are the same).
std::string grid_mismatch(const json& recorded, const std::vector<std::string>& names, const json& values) {
  platform_config rec;
  try {
    apply_json(rec, recorded, "its config");
  } catch (const std::exception& e) {
    return std::string("a configuration that cannot be read (") + e.what() + ")";
  }
  platform_config want = rec;
  for (const std::string& name : names) {
    if (preset_axis(name)) continue;  // where the run started, not a value on top (plan_mismatch checks it)
    const std::string assignment = name + "=" + values[name].get<std::string>();
    try {
      apply_override(want, assignment, false);
    } catch (const std::exception& e) {
      return "a configuration to which the plan's " + assignment + " cannot be applied (" + e.what() + ")";
    }
  }
  try {
    want.missing_activations = resolve_missing_activations(want);  // as the run records it
    want.activations = resolve_activations(want);
  } catch (const std::exception& e) {
    return std::string("a configuration that contradicts the plan's values (") + e.what() + ")";
  }
  return config_diff(rec, want);
}

/// "" if the configuration recorded in a run result is the one the plan's arguments for the
/// run give (`args`, read as `cdma-vp run` reads them: preset, --config file, options,
/// --param, grid values; activations resolved as the run records them), else the first
/// parameter that differs. Throws what reading the arguments throws (e.g. a --config file
/// that is gone since the sweep ran): the caller then compares the grid values only.
std::string plan_mismatch(const json& recorded, const std::vector<std::string>& args) {
  platform_config rec;
  try {
    apply_json(rec, recorded, "its config");
  } catch (const std::exception& e) {
    return std::string("a configuration that cannot be read (") + e.what() + ")";
  }
  std::vector<std::string> acts;
  platform_config want = check_config(args, &acts);
  want.missing_activations = resolve_missing_activations(want);  // before activations is resolved
  want.activations = acts;
  return config_diff(rec, want);
}

/// Reads run_K.json of every planned run and writes sweep.csv (+ plots). Returns failures.
/// `statuses`: run index -> status of the runs of this process (else read from run_K.status).
/// Throws output_error if sweep.csv cannot be written.
int merge(const std::string& dir, bool plot, std::ostream& log,
          const std::map<std::size_t, std::string>& statuses = {}) {
  std::ifstream pf;
  if (const workloads::io::input_problem p = workloads::io::open_input(pf, dir + "/sweep.plan.json")) {
    if (p.kind != workloads::io::input_problem::cannot_open)  // a directory, a FIFO (never opened: no wait)
      throw config_error(dir + "/sweep.plan.json: " + p.text() + "; expected the plan file cdma-vp sweep writes");
    throw config_error(dir + "/sweep.plan.json: not found; expected a folder made by cdma-vp sweep");
  }
  json plan;
  try {
    plan = json::parse(pf);
  } catch (const std::exception& e) {
    throw config_error(dir + "/sweep.plan.json: not valid JSON (" + e.what() + ")");
  }
  if (!plan.is_object() || !plan.contains("grid") || !plan.contains("runs"))
    throw config_error(dir + "/sweep.plan.json: not a sweep plan (expected the keys grid and runs)");
  // The shape every later read relies on (a hand-edited plan gave library messages and read
  // through missing keys): grid = [{"name": string}], runs = [{"values": {name: string}}].
  {
    const std::string bad = dir + "/sweep.plan.json: not a sweep plan (";
    if (!plan["grid"].is_array() || !plan["runs"].is_array())
      throw config_error(bad + "expected grid and runs to be arrays)");
    for (const auto& a : plan["grid"])
      if (!a.is_object() || !a.contains("name") || !a["name"].is_string())
        throw config_error(bad + "expected every grid entry to have a string \"name\")");
    // Two axes of one parameter (a plan of an earlier version, or edited): rows labelled with
    // values the runs never used (the last --param won).
    for (std::size_t x = 0; x < plan["grid"].size(); ++x)
      for (std::size_t y = x + 1; y < plan["grid"].size(); ++y) {
        const std::string nx = plan["grid"][x]["name"].get<std::string>(), ny = plan["grid"][y]["name"].get<std::string>();
        std::string px, py;
        try {
          px = grid_param(nx, "--merge");
          py = grid_param(ny, "--merge");
        } catch (const config_error&) {  // an unknown name: the runs' checks report it
          continue;
        }
        if (px == py)
          throw config_error(bad + "grid " + nx + " and grid " + ny + " set the same parameter " + px +
                             "; expected one grid entry per parameter)");
      }
    for (std::size_t k = 0; k < plan["runs"].size(); ++k) {
      const json& run = plan["runs"][k];
      if (!run.is_object() || !run.contains("values") || !run["values"].is_object())
        throw config_error(bad + "run " + std::to_string(k) + " has no \"values\" object)");
      for (const auto& a : plan["grid"]) {
        const std::string n = a["name"].get<std::string>();
        if (!run["values"].contains(n) || !run["values"][n].is_string())
          throw config_error(bad + "run " + std::to_string(k) + " has no string value for grid " + n + ")");
      }
      // The row is labelled with values, the run made from args: they must agree (an edited
      // value was merged as ok under a label the run never used).
      if (run.contains("args")) {
        if (!run["args"].is_array())
          throw config_error(bad + "run " + std::to_string(k) + " has \"args\" that are not an array of strings)");
        for (const auto& a : run["args"])
          if (!a.is_string())
            throw config_error(bad + "run " + std::to_string(k) + " has \"args\" that are not an array of strings)");
        const auto args = run["args"].get<std::vector<std::string>>();
        for (const auto& a : plan["grid"]) {
          const std::string n = a["name"].get<std::string>(), v = run["values"][n].get<std::string>();
          std::string given;  // the last --param n=... (the one the run applies)
          bool found = false;
          for (std::size_t i = 0; i + 1 < args.size(); ++i)
            if (preset_axis(n) ? args[i] == "--preset"
                               : args[i] == "--param" && args[i + 1].rfind(n + "=", 0) == 0) {
              found = true;
              given = preset_axis(n) ? args[i + 1] : args[i + 1].substr(n.size() + 1);
            }
          if (!found || given != v)
            throw config_error(dir + "/sweep.plan.json: run " + std::to_string(k) + " is labelled " + n + " = \"" + v +
                               "\" but its args " +
                               (found ? "set " + n + " = \"" + given + "\"" : "do not set " + n) +
                               "; expected the plan as cdma-vp sweep wrote it (values and args agree)");
        }
      }
    }
    if (plan["runs"].empty())
      throw config_error(bad + "no runs; expected at least one run, as cdma-vp sweep writes)");
  }
  std::ostringstream csv;
  csv << "run";
  for (const auto& a : plan["grid"]) csv << ",grid:" << a["name"].get<std::string>();
  // activations: the source each run used (a path, or synthetic), from its effective config.
  // Then what bounds the cDMA step's transfers (the run's transfer_bounds.cdma): activation
  // bytes per second while offloading / prefetching (the engine's GPU DRAM read / write rate)
  // and the resource named as the bound (new-user trial s22 F6: only in run_K.json before).
  csv << ",status,network,batch,activations,oracle_s,vdnn_s,cdma_s,speedup,compression_ratio,verified_bytes"
         ",cdma_offload_GBps,cdma_offload_bound,cdma_prefetch_GBps,cdma_prefetch_bound\n";
  csv.precision(12);
  int failed = 0;                         // runs without results, of any kind:
  std::map<std::string, int> not_ok;      // "failed", "interrupted", "not run" -> count
  for (std::size_t k = 0; k < plan["runs"].size(); ++k) {
    const auto& run = plan["runs"][k];
    csv << k;
    for (const auto& a : plan["grid"])
      csv << "," << csv_field(run["values"][a["name"].get<std::string>()].get<std::string>());
    const std::string base = dir + "/run_" + std::to_string(k);
    // The recorded end of the run (this process's, else run_K.status), read first: a run whose
    // status says it failed or was interrupted is reported so even if a run_K.json exists (a
    // stale one, e.g. of an earlier attempt of the task).
    // Only regular files are opened: a FIFO (or a device) named run_K.* would block the merge.
    auto regular = [](const std::string& f) {
      struct stat sb {};
      return ::stat(f.c_str(), &sb) == 0 && S_ISREG(sb.st_mode);
    };
    auto present = [](const std::string& f) {
      struct stat sb {};
      return ::lstat(f.c_str(), &sb) == 0;
    };
    json r;
    bool ok = false, bad_result = false, bad_status = false;
    std::string recorded_status;
    if (auto st = statuses.find(k); st != statuses.end()) {
      recorded_status = st->second;
    } else if (regular(base + ".status")) {
      const std::string why = read_status(base + ".status", recorded_status);
      if (!why.empty()) {
        bad_status = true;
        log << "run " << k << ": " << base << ".status " << why << "\n";
      } else if (recorded_status.empty()) {
        log << "run " << k << ": " << base << ".status is empty: read as no status (the run's end was not recorded)\n";
      }
    } else if (present(base + ".status")) {
      bad_result = true;
      log << "run " << k << ": " << base << ".status is not a regular file; expected the run's status text\n";
    }
    const bool status_not_ok = !recorded_status.empty() && recorded_status != "ok";
    std::ifstream rf;
    if (regular(base + ".json")) {
      rf.open(base + ".json");
    } else if (present(base + ".json")) {
      bad_result = true;
      log << "run " << k << ": " << base << ".json is not a regular file; expected a cdma-vp run result\n";
    }
    const bool have_json = rf.is_open();
    if (bad_result || bad_status) {
      // reported below as bad-result / bad-status
    } else if (have_json && status_not_ok) {
      log << "run " << k << ": " << base << ".json not used: " << base << ".status says " << recorded_status << "\n";
    } else if (have_json) {
      try {
        r = json::parse(rf);
        // A result of cdma-vp run: its shape is checked before any field is read (a hand-made
        // or truncated run_K.json is a row without results, not a library message).
        bool shaped = r.is_object() && r.value("network", json()).is_string() &&
                      r.value("batch", json()).is_number() && r.value("step_time_s", json()).is_object() &&
                      r.value("verified_bytes", json()).is_number() &&
                      (r.value("verified", json()).is_boolean() || r.value("verified", json(0)).is_null()) &&
                      r.contains("config") && r["config"].is_object();
        // verified is null where nothing was compared: no vDNN and no cDMA step, verification
        // off, or transfer steps that moved nothing (no layer offloaded: 0 bytes compared and
        // 0 payload bytes device-to-host in each transfer step that ran).
        auto nothing_moved = [&r] {
          if (r["verified_bytes"] != 0) return false;
          const json& pcie = r.value("pcie", json());
          for (const char* step : {"vdnn", "cdma"}) {
            if (r["step_time_s"].value(step, json()).is_null()) continue;
            if (!pcie.is_object() || !pcie.value(step, json()).is_object() ||
                !pcie[step].value("d2h", json()).is_object() || pcie[step]["d2h"].value("payload_bytes", json()) != 0)
              return false;
          }
          return true;
        };
        if (shaped && r["verified"].is_null())
          shaped = (r["step_time_s"].value("vdnn", json()).is_null() && r["step_time_s"].value("cdma", json()).is_null()) ||
                   r["config"].value("verify", true) == false || nothing_moved();
        // Step times: a number >= 0 s, or null for a step not run; a ratio > 0 or null.
        if (shaped)
          for (const auto& [step, t] : r["step_time_s"].items())
            if (!t.is_null() && !(t.is_number() && t.get<double>() >= 0)) shaped = false;
        if (shaped && r.contains("compression_ratio") && !r["compression_ratio"].is_null() &&
            !(r["compression_ratio"].is_number() && r["compression_ratio"].get<double>() > 0))
          shaped = false;
        const bool verified =
            shaped && (r["verified"].is_null() || r["verified"].get<bool>() || !r["config"].value("verify", true));
        ok = verified;
        bad_result = !shaped;
        if (!shaped) log << "run " << k << ": " << dir << "/run_" << k << ".json is not a cdma-vp run result\n";
        if (shaped && !verified) {
          recorded_status = "mismatch";  // the run's prefetched bytes differed from the offloaded ones
          log << "run " << k << ": " << base << ".json records a failed verification ("
              << r.value("mismatched_bytes", json()).dump() << " mismatched bytes)\n";
        }
        // A result of another plan (or another run of this one) is not this run's result:
        // its recorded configuration must have the plan's grid values for run k.
        if (shaped) {
          // The plan's resolved network and batch must be the result's configuration's too
          // (config.network as given, e.g. a layer file's path; the result's top-level
          // "network" is the network's name).
          const json& want = run.value("resolved", json::object());
          const json& got = r["config"];
          std::string diff;
          if (want.is_object() && want.value("network", json()).is_string() &&
              want["network"] != got.value("network", json()))
            diff = "network = " + got.value("network", json()).dump() + ", the plan has network = " +
                   want["network"].dump();
          else if (want.is_object() && want.value("batch", json()).is_number() &&
                   (want["batch"] != got.value("batch", json()) || want["batch"] != r["batch"]))
            diff = "batch = " + r["batch"].dump() + ", the plan has batch = " + want["batch"].dump();
          if (!diff.empty()) {
            ok = false;
            bad_result = true;
            log << "run " << k << ": " << base << ".json is not the result of the plan's run " << k << ": it records "
                << diff << "\n";
          }
        }
        if (shaped && !bad_result) {
          std::vector<std::string> names;
          for (const auto& a : plan["grid"]) names.push_back(a["name"].get<std::string>());
          // Every parameter, not only the grid's (an edited pcie.lanes was merged as ok): the
          // configuration the plan's arguments give; if they cannot be read any more (a --config
          // file moved since), the grid values alone.
          std::string diff;
          try {
            diff = plan_mismatch(r["config"], run["args"].get<std::vector<std::string>>());
          } catch (const std::exception& e) {
            log << "run " << k << ": the plan's arguments for run " << k << " cannot be read now (" << e.what()
                << "); only its grid values are compared with " << base << ".json\n";
            diff = grid_mismatch(r["config"], names, run["values"]);
          }
          if (!diff.empty()) {
            ok = false;
            bad_result = true;
            log << "run " << k << ": " << base << ".json is not the result of the plan's run " << k << ": it records "
                << diff << "\n";
          }
        }
      } catch (const std::exception&) {
        bad_result = true;
        log << "run " << k << ": " << dir << "/run_" << k << ".json is not valid JSON\n";
      }
    }
    if (!ok) {
      ++failed;
      // The recorded exit status; else a run that never started (no log: the sweep was stopped
      // or is still running its jobs elsewhere) or one that started but whose end was not
      // recorded (the sweep was interrupted while it ran).
      std::string status = present(base + ".log") ? "interrupted" : "not-run";
      if (!recorded_status.empty()) status = recorded_status;
      if (status == "ok" && !have_json && !bad_result) {  // was a row "ok" without results
        bad_result = true;
        log << "run " << k << ": " << base << ".status says ok but " << base << ".json is missing\n";
      }
      if (bad_result) status = "bad-result";  // whatever the status file says: no usable result
      if (bad_status) status = "bad-status";  // named (and its content shown) in the log above
      // network, batch and activations as the run was asked for (the plan's resolved values);
      // the results stay empty.
      const json& want = run.value("resolved", json::object());
      auto cell = [&](const char* key) {
        if (!want.is_object() || !want.contains(key)) return std::string();
        return want[key].is_string() ? csv_field(want[key].get<std::string>()) : want[key].dump();
      };
      csv << "," << csv_field(status) << "," << cell("network") << "," << cell("batch") << "," << cell("activations")
          << ",,,,,,,,,,\n";
      ++not_ok[status == "not-run" ? "not run" : status.rfind("interrupted", 0) == 0 ? "interrupted" : "failed"];
      if (status == "not-run") log << "run " << k << " not run (no " << base << ".log)\n";
      else log << "run " << k << " " << status << " (see " << base << ".log)\n";
      continue;
    }
    // A value a run did not produce (a step left out with --steps) is an empty cell.
    // 12 significant digits, as csv.precision above meant (a fresh stream has 6: a 0.1-s step
    // time was rounded to 1 us, 0.12515 s for 0.125149678 s; new-user trial s22).
    auto num = [](const nlohmann::json& v) {
      std::ostringstream o;
      o.precision(12);
      if (v.is_number()) o << v.get<double>();
      return o.str();
    };
    const auto& st = r["step_time_s"];
    const json& rc = r.value("config", json::object());
    // One source: its path (or synthetic); several (an array): the paths joined by " + ".
    std::string acts;
    if (rc.is_object() && rc.value("activations", json()).is_string()) acts = rc["activations"].get<std::string>();
    else if (rc.is_object() && rc.value("activations", json()).is_array())
      for (const auto& a : rc["activations"])
        if (a.is_string()) acts += (acts.empty() ? "" : " + ") + a.get<std::string>();
    csv << ",ok," << csv_field(r["network"].get<std::string>()) << "," << r["batch"] << "," << csv_field(acts) << ","
        << num(st.value("oracle", nlohmann::json()))
        << "," << num(st.value("vdnn", nlohmann::json())) << "," << num(st.value("cdma", nlohmann::json())) << ","
        << num(r.value("speedup_cdma_over_vdnn", nlohmann::json())) << ","
        << num(r.value("compression_ratio", nlohmann::json())) << "," << r["verified_bytes"];
    for (const char* dir : {"offload", "prefetch"}) {  // empty cells when the step did not run
      const json* d = nullptr;
      if (r.contains("transfer_bounds") && r["transfer_bounds"].is_object() &&
          r["transfer_bounds"].value("cdma", json()).is_object() && r["transfer_bounds"]["cdma"].value(dir, json()).is_object())
        d = &r["transfer_bounds"]["cdma"][dir];
      csv << "," << (d ? num(d->value("activation_GBps", json())) : std::string()) << ","
          << (d && d->value("bound", json()).is_string() ? csv_field((*d)["bound"].get<std::string>()) : std::string());
    }
    csv << "\n";
  }
  write_output_file(dir + "/sweep.csv", csv.str(), "sweep");
  log << "sweep table written to " << printable(dir) << "/sweep.csv (" << plan["runs"].size() - failed << " ok";
  for (const auto& [what, count] : not_ok) log << ", " << count << " " << what;
  log << ")\n";
  if (plot && failed == static_cast<int>(plan["runs"].size())) {
    // No run finished ok: nothing to draw (two empty axes were written as the sweep's plots).
    log << "no plots: no run finished ok\n";
  } else if (plot) {
    // A child like the runs: an interrupt of the sweep is passed to it and waited for (it was
    // started through std::system and went on writing plots after the sweep had ended).
    int st = -1;
    std::vector<std::string> argv = {"/usr/bin/python3", std::string(CDMA_SOURCE_DIR) + "/scripts/plot_sweep.py"};
    // Axes whose 0 is a setting, not a quantity (cdma.xbar_bandwidth 0: unlimited): the
    // plotter draws no line through such a 0 (it stood at x = 0, left of the slowest value).
    for (const auto& a : plan["grid"]) {
      const std::string name = a["name"].get<std::string>();
      try {
        if (zero_is_not_a_value(grid_param(name, "--grid"))) argv.push_back("--zero-not-a-value=grid:" + name);
      } catch (const config_error&) {  // `preset` or an unknown name: not a parameter
      }
    }
    argv.push_back(dir + "/sweep.csv");  // (the paths last: scripts/plot_sweep.py's flags come first)
    argv.push_back(dir + "/sweep");
    const std::string why = run_program(argv, false, false, &st);
    if (st == 0)
      log << "plots written to " << printable(dir) << "/sweep.png and " << printable(dir) << "/sweep.svg\n";
    else if (st == 3)  // scripts/plot_sweep.py: a plot file cannot be written
      throw output_error("sweep: " + dir + "/sweep.png / .svg could not be written (the reason is on the line "
                         "above); sweep.csv is complete");
    else
      log << "warning: plotting failed (needs /usr/bin/python3 with matplotlib); the CSV is complete\n";
  }
  return failed;
}

/// A word left for the runs that is no run option but a sweep option mistyped or abbreviated
/// (`--gird a=1` said "no --grid given"; `--emit x.sh` ran the sweep): throws config_error
/// naming the sweep option meant (guess_option() over the sweep's and the runs' options
/// together). Other words are left to the runs' parser (check_config()).
void refuse_near_sweep_option(const std::string& word) {
  const std::string name = word.substr(2, word.find('=') == std::string::npos ? std::string::npos : word.find('=') - 2);
  config_options o;
  output_options out;
  po::options_description d;
  add_config_options(d, o);
  add_output_options(d, out);
  if (name.empty() || d.find_nothrow(name, false)) return;
  const std::vector<std::string> own = {"grid", "zip", "out", "jobs", "emit-slurm", "merge", "no-plot"};
  std::vector<std::string> all = own;
  for (const auto& opt : d.options()) all.push_back(opt->long_name());
  const option_guess g = guess_option(name, all);
  const bool names_own = std::any_of(g.names.begin(), g.names.end(), [&](const std::string& n) {
    return std::find(own.begin(), own.end(), n) != own.end();
  });
  if (names_own) throw config_error("unrecognised option '--" + printable(name) + "'" + option_hint(g));
}

int sweep_command(const std::vector<std::string>& args) {
  std::vector<grid_axis> grid;
  std::vector<std::string> zip_args;  // --zip NAME,NAME,...: axes that take their values together
  std::vector<std::string> pass;
  std::string out, slurm, merge_dir;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool plot = true;
  std::vector<std::string> seen;
  try {
    // The sweep's own options also take their value after '=' (--grid=batch=1,2, --out=DIR),
    // as the runs' options do (breaker s24 F1: refused, with a hint naming the option typed).
    std::vector<std::string> words;
    for (const std::string& w : args) {
      const auto eq = w.find('=');
      const std::string opt = w.substr(0, eq);
      if (eq != std::string::npos && (opt == "--grid" || opt == "--zip" || opt == "--out" || opt == "--jobs" ||
                                      opt == "--emit-slurm" || opt == "--merge")) {
        words.push_back(opt);
        words.push_back(w.substr(eq + 1));
      } else if (eq != std::string::npos && opt == "--no-plot") {
        throw config_error("--no-plot takes no value (got '" + w + "')");
      } else {
        words.push_back(w);
      }
    }
    for (std::size_t i = 0; i < words.size(); ++i) {
      const std::string& a = words[i];
      auto value = [&](const char* opt) -> std::string {
        if (i + 1 >= words.size()) throw config_error(std::string(opt) + " needs a value");
        return words[++i];
      };
      // The sweep's own options once each (a repeated --jobs quietly kept the last).
      for (const char* once : {"--out", "--jobs", "--emit-slurm", "--merge", "--no-plot"}) {
        if (a != once) continue;
        if (std::find(seen.begin(), seen.end(), a) != seen.end())
          throw config_error(a + " given twice; expected each of the sweep's options once");
        seen.push_back(a);
      }
      // -h among grouped short flags (-qh, as run and compare read it) is the help too; --help
      // takes no value (--help=1 said "no --grid given").
      const bool short_flags_with_h = a.size() > 2 && a[0] == '-' && a[1] != '-' &&
                                      a.find_first_not_of("qh", 1) == std::string::npos &&
                                      a.find('h') != std::string::npos;
      if (a.rfind("--help=", 0) == 0)
        throw config_error("option '--help' does not take any arguments (got '" + printable(a) + "')");
      if (a == "--help" || a == "-h" || short_flags_with_h) {
        std::cout << "Usage: cdma-vp sweep --grid NAME=V1,V2,... [--grid ...] [--zip NAME,NAME,...] --out DIR "
                     "[--jobs N] [--no-plot] [run options]\n"
                     "       cdma-vp sweep --grid ... --out DIR --emit-slurm FILE [run options]\n"
                     "       cdma-vp sweep --merge DIR [--no-plot]\n\n"
                     "Runs every combination of the grid as a separate `cdma-vp run` (NAME is any parameter\n"
                     "of `cdma-vp config --list`, or preset: --grid preset=titanx-gen3,v100-gen3 runs each row\n"
                     "with --preset VALUE, the other options on top), N at once (--jobs, 1..65536, default: cores), then writes DIR/sweep.csv\n"
                     "(one row per run; a failed run is marked and the others complete) and DIR/sweep.png/.svg.\n"
                     "Runs are numbered from 0 (run_K.json, the column run, the progress on stderr).\n"
                     "--zip NAME,NAME,...: those --grid axes (same number of values) take value i together\n"
                     "instead of every combination: --grid network=alexnet,vgg16 --grid batch=128,64\n"
                     "--zip network,batch runs alexnet at 128 and vgg16 at 64 (other axes still combine).\n"
                     "DIR must be a folder without a sweep (a new one; not a file, not another sweep's folder).\n"
                     "The column activations names each run's sources (a path, paths joined by \" + \", or\n"
                     "synthetic; a grid over activations gives one path per row). A grid over a\n"
                     "synthetic-data key (density, zero_run, density_profile, training_progress, seed) runs\n"
                     "every row on synthetic data (activations=synthetic; with an activations file: an error).\n"
                     "Exit status: 0 ok, 1 a run failed, 2 bad input (nothing run), 3 a file of the sweep\n"
                     "(plan, Slurm script, status, sweep.csv, plots) could not be written.\n";
        return 0;
      } else if (a == "--grid") {
        grid.push_back(parse_grid(value("--grid")));
        // The parameter the axis sets, one spelling (platform.pcie.lanes is pcie.lanes): two
        // axes of one parameter ran rows labelled with values the runs never used (the last
        // --param wins). An unknown name is named as a --grid (it said "--param: ...").
        const std::string param = grid_param(grid.back().name, "--grid");
        for (std::size_t g = 0; g + 1 < grid.size(); ++g) {
          if (grid[g].name == grid.back().name)
            throw config_error("--grid " + grid.back().name + " given twice; expected one --grid per parameter "
                               "with all its values, e.g. " + grid.back().name + "=3,4");
          if (grid_param(grid[g].name, "--grid") == param)
            throw config_error("--grid " + grid[g].name + " and --grid " + grid.back().name + " set the same parameter " +
                               param + "; expected one --grid per parameter with all its values, e.g. " + param +
                               "=4,8,16");
        }
      }
      else if (a == "--zip") zip_args.push_back(value("--zip"));
      else if (a == "--out") out = value("--out");
      else if (a == "--jobs") {
        // Read like an integer parameter (parse_whole: 4, 4.0, 1e0); at most max_jobs.
        const std::string v = value("--jobs");
        long long x = 0;
        const std::string exp = "expected a whole number of runs at once in [1, " + std::to_string(max_jobs) + "]";
        if (v.empty()) throw config_error("--jobs '': an empty value; " + exp);
        if (hexadecimal(v)) throw config_error("--jobs " + v + ": hexadecimal is not accepted; " + exp + " written in decimal");
        if (!parse_whole(v, x) || x < 1 || x > static_cast<long long>(max_jobs))
          throw config_error("--jobs " + v + ": " + exp);
        jobs = static_cast<unsigned>(x);
      } else if (a == "--emit-slurm") {
        slurm = value("--emit-slurm");
        if (slurm.empty())  // it ran the sweep instead of writing a script
          throw config_error("--emit-slurm '': an empty file name; expected the path of the Slurm script to write");
      }
      else if (a == "--merge") {
        merge_dir = value("--merge");
        if (merge_dir.empty())
          throw config_error("--merge '': an empty folder name; expected the --out DIR of a cdma-vp sweep");
      }
      else if (a == "--no-plot") plot = false;
      else if (a == "--json" || a == "--csv" || a == "--trace" || a == "--vcd")
        throw config_error(a + " is set per run by the sweep (DIR/run_K.json); not allowed here");
      else {
        if (a.rfind("--", 0) == 0) refuse_near_sweep_option(a);
        pass.push_back(a);
      }
    }
    if (!merge_dir.empty()) {
      // --merge only reads DIR's results: options that plan or run a sweep would be ignored.
      std::vector<std::string> unused;
      if (!grid.empty()) unused.push_back("--grid");
      if (!zip_args.empty()) unused.push_back("--zip");
      if (!out.empty()) unused.push_back("--out");
      if (std::find(seen.begin(), seen.end(), "--jobs") != seen.end()) unused.push_back("--jobs");  // (breaker s24 F9)
      if (!slurm.empty()) unused.push_back("--emit-slurm");
      for (const auto& p : pass) unused.push_back(p);
      if (!unused.empty()) {
        std::string list;
        for (const auto& u : unused) list += (list.empty() ? "" : " ") + u;
        throw config_error("--merge " + merge_dir + " takes no other option but --no-plot (got " + list +
                           "); expected cdma-vp sweep --merge DIR [--no-plot]");
      }
      // A file (e.g. DIR/run_0.json) or a missing folder: named as such, not as a missing plan.
      if (!workloads::io::is_directory(merge_dir)) {
        struct stat sb {};
        throw config_error("--merge " + merge_dir + ": " +
                           (::stat(merge_dir.c_str(), &sb) == 0 ? "not a folder" : "no such folder") +
                           "; expected the --out DIR of a cdma-vp sweep (the folder holding sweep.plan.json)");
      }
      const int failed = merge(merge_dir, plot, std::cout);
      if (check_stdout()) return 3;
      return failed ? 1 : 0;
    }
    if (grid.empty()) throw config_error("no --grid given; expected e.g. --grid 'pcie.gen=3,4,5'");
    // --zip groups: axes (named as in their --grid, or another spelling of the parameter) that
    // take value i together instead of every combination (`--grid network=alexnet,vgg16
    // --grid batch=128,64 --zip network,batch`: 2 runs, alexnet at 128 and vgg16 at 64).
    std::vector<std::vector<std::size_t>> zips;
    std::vector<bool> zipped(grid.size(), false);
    for (const std::string& z : zip_args) {
      const std::string form = "expected --zip NAME,NAME,... naming two or more --grid axes of the same number of "
                               "values, e.g. --grid network=alexnet,vgg16 --grid batch=128,64 --zip network,batch";
      const std::vector<std::string> names = split_commas(z);
      if (names.size() < 2) throw config_error("--zip " + printable(z) + ": one name; " + form);
      std::vector<std::size_t> group;
      for (const std::string& n : names) {
        if (n.empty()) throw config_error("--zip " + printable(z) + ": an empty name; " + form);
        std::size_t found = grid.size();
        for (std::size_t g = 0; g < grid.size() && found == grid.size(); ++g) {
          if (grid[g].name == n) found = g;
          else {
            try {
              if (grid_param(n, "--zip") == grid_param(grid[g].name, "--grid")) found = g;
            } catch (const std::exception&) {  // not a parameter: not this axis
            }
          }
        }
        if (found == grid.size())
          throw config_error("--zip " + printable(z) + ": " + printable(n) + " is not a --grid axis; " + form);
        if (zipped[found])
          throw config_error("--zip " + printable(z) + ": --grid " + printable(grid[found].name) +
                             " is named twice in --zip; " + form + " (each axis once, in one group at most)");
        zipped[found] = true;
        group.push_back(found);
      }
      for (std::size_t g : group)
        if (grid[g].values.size() != grid[group.front()].values.size())
          throw config_error("--zip " + printable(z) + ": --grid " + printable(grid[group.front()].name) + " has " +
                             std::to_string(grid[group.front()].values.size()) + " values, --grid " +
                             printable(grid[g].name) + " " + std::to_string(grid[g].values.size()) + "; " + form);
      std::sort(group.begin(), group.end());
      zips.push_back(std::move(group));
    }
    {
      // The number of runs: the product of the dimensions' lengths (a --zip group counts once).
      std::uint64_t n = 1;
      std::string product;
      for (const auto& d : grid_dims(grid.size(), zips)) {
        const std::uint64_t len = grid[d.front()].values.size();
        n = len != 0 && n > max_runs / len ? max_runs + 1 : n * len;
        product += (product.empty() ? "" : " x ") + std::to_string(len);
      }
      if (n > max_runs)
        throw config_error("--grid: " + product + " values make more than " + std::to_string(max_runs) +
                           " runs; expected at most " + std::to_string(max_runs) +
                           " runs in one sweep (split the grid into several sweeps, or --zip axes that go together)");
    }
    {
      // The same setting written twice (also as two spellings of one value: 0 and -0, 0.5 and
      // 5e-1, 64 and 6.4e1, alexnet and Alexnet, none and raw, two paths of one file, "" and
      // synthetic activations where both mean synthetic data) would run the same configuration
      // twice. Each value is applied to the configuration of the sweep's other options.
      platform_config base;
      try {
        base = check_config(pass);
      } catch (const std::exception&) {  // reported with the plan's other checks below
      }
      std::vector<std::vector<json>> settings(grid.size());
      for (std::size_t gi = 0; gi < grid.size(); ++gi) {
        const grid_axis& ax = grid[gi];
        if (preset_axis(ax.name)) {
          // The platform preset: the configuration each row starts from, the passed options on
          // top (make_plan). Beside a --preset or --config option it would be replaced (or the
          // runs refused: --preset and --config both given).
          std::string passed_preset, passed_config;
          try {
            check_config(pass, nullptr, nullptr, &passed_config, nullptr, &passed_preset);
          } catch (const std::exception&) {  // reported with the plan's other checks below
          }
          if (!passed_preset.empty() || !passed_config.empty())
            throw config_error("--grid preset and the passed option " +
                               (passed_preset.empty() ? "--config " + printable(passed_config)
                                                      : "--preset " + printable(passed_preset)) +
                               " both choose the platform; expected one of them (a --grid preset row starts from "
                               "its preset, the other options apply on top)");
        }
        std::vector<json> setting(ax.values.size());
        for (std::size_t x = 0; x < ax.values.size(); ++x) {
          if (preset_axis(ax.name)) {
            try {
              preset(ax.values[x]);
            } catch (const config_error& e) {  // named as the --grid value it is, as other axes' values
              throw config_error("--grid: preset = \"" + printable(ax.values[x]) + "\": " + e.what());
            }
            try {
              std::vector<std::string> args = {"--preset", ax.values[x]};
              args.insert(args.end(), pass.begin(), pass.end());
              setting[x] = setting_json(check_config(args));
            } catch (const std::exception&) {  // reported with the plan's other checks below
            }
            continue;
          }
          try {
            setting[x] = setting_of(base, ax.name, ax.values[x]);
          } catch (const config_error&) {
            throw;  // the value itself is malformed: named as the --grid value it is
          } catch (const std::exception&) {  // reported with the plan's other checks below
          }
          if (axis_rank(ax.name) == 0 && !setting[x].is_null()) {
            // A pcie.preset axis is applied before the passed options (make_plan): compare the
            // configurations the runs get (with --param pcie.gen=4 passed, measured-host and
            // measured-host-gen5x16 are both the Gen4 calibration).
            platform_config c;
            try {
              std::vector<std::string> args = {"--param", ax.name + "=" + ax.values[x]};
              args.insert(args.end(), pass.begin(), pass.end());
              c = check_config(args);
            } catch (const std::exception&) {  // reported with the plan's other checks below
              continue;
            }
            if (c.pcie_preset != ax.values[x])
              throw config_error("--grid " + ax.name + " and the passed option --param pcie.preset=" +
                                 printable(c.pcie_preset) + " both set pcie.preset (the option would replace every "
                                 "grid value); expected one of them");
            setting[x] = setting_json(std::move(c));
          }
        }
        settings[gi] = setting;
        if (zipped[gi]) continue;  // (a value may repeat in a --zip group: its tuples are checked below)
        // Two values are the same when written alike or making the same (known) setting.
        const auto [x, y] = first_same(
            ax.values.size(), [&](std::size_t v) { return value_hash(ax.values[v], setting[v]); },
            [&](std::size_t a, std::size_t b) {
              return ax.values[a] == ax.values[b] || (!setting[a].is_null() && setting[a] == setting[b]);
            });
        if (x < ax.values.size()) {
          if (ax.values[x] == ax.values[y])
            throw config_error("--grid " + ax.name + ": value '" + ax.values[x] + "' listed twice");
          throw config_error("--grid " + ax.name + ": values '" + ax.values[x] + "' and '" + ax.values[y] +
                             "' are the same setting; list each value once");
        }
      }
      // A --zip group runs value i of its axes together: two positions with the same values (or
      // the same settings) on every axis of the group would run one configuration twice.
      for (const auto& z : zips) {
        auto tuple = [&](std::size_t x) {
          std::string t;
          for (std::size_t g : z) t += (t.empty() ? "" : ", ") + grid[g].name + "=" + grid[g].values[x];
          return printable(t);
        };
        const std::size_t n = grid[z.front()].values.size();
        const auto [x, y] = first_same(
            n,
            [&](std::size_t v) {
              std::size_t h = 0;
              for (std::size_t g : z) h = h * 1000003u ^ value_hash(grid[g].values[v], settings[g][v]);
              return h;
            },
            [&](std::size_t a, std::size_t b) {
              for (std::size_t g : z)
                if (grid[g].values[a] != grid[g].values[b] &&
                    (settings[g][a].is_null() || settings[g][a] != settings[g][b]))
                  return false;
              return true;
            });
        if (x < n) {
          bool same_text = true;
          for (std::size_t g : z) same_text = same_text && grid[g].values[x] == grid[g].values[y];
          if (same_text)
            throw config_error("--zip: (" + tuple(x) + ") listed twice (positions " + std::to_string(x + 1) + " and " +
                               std::to_string(y + 1) + "); list each combination once");
          throw config_error("--zip: (" + tuple(x) + ") and (" + tuple(y) +
                             ") are the same settings; list each combination once");
        }
      }
    }
    if (out.empty()) throw config_error("--out DIR is required");
    {
      // A file (or a device such as /dev/null) where the folder goes is bad input (it was exit
      // 3, "cannot create DIR/sweep.plan.json.tmp: Not a directory"), and so is the folder of
      // another sweep: its plan and results were replaced, run_K files beyond the new plan's
      // runs left behind.
      struct stat sb {};
      if (::stat(out.c_str(), &sb) == 0 && !S_ISDIR(sb.st_mode))
        throw config_error("--out " + out + ": exists and is not a folder; expected a folder for the sweep's files "
                           "(a new one)");
      if (::lstat((out + "/sweep.plan.json").c_str(), &sb) == 0)
        throw config_error("--out " + out + ": already holds a sweep (" + out + "/sweep.plan.json); choose another "
                           "folder, or remove that one first (cdma-vp sweep --merge " + out +
                           " gathers its results again)");
    }
    // The run options passed through, as a run reads them (any spelling: --json=F, an
    // abbreviation): an output option would be given twice to every run (each failed, exit 2);
    // -q / --quiet is passed on and the sweep adds no second one (it made every run fail).
    output_options pass_out;
    std::vector<std::pair<std::string, std::string>> pass_given;
    try {
      check_config(pass, nullptr, &pass_out, nullptr, &pass_given);
    } catch (const std::exception&) {  // reported with the runs' checks below
    }
    // A grid axis over a parameter a passed option also sets: the grid value replaced the
    // option in every run, silently (`--grid batch=1,2 --batch 4`: the 4 was dropped; breaker
    // s17). Refused, as a passed --param pcie.preset beside a preset axis is above.
    for (const grid_axis& ax : grid) {
      std::string key;
      try {
        key = grid_param(ax.name, "--grid");
      } catch (const std::exception&) {  // an unknown axis: reported with the plan's checks
        continue;
      }
      for (const auto& [k, opt] : pass_given)
        if (k == key)
          throw config_error("--grid " + ax.name + " and the passed option " + opt + " both set " + key +
                             " (the grid value would replace it in every run); expected one of them");
    }
    for (const auto& [path, opt] : {std::pair<const std::string&, const char*>{pass_out.json_path, "--json"},
                                    {pass_out.csv_path, "--csv"}, {pass_out.trace_path, "--trace"},
                                    {pass_out.vcd_path, "--vcd"}, {pass_out.txn_trace_path, "--txn-trace"},
                                    {pass_out.txn_trace_only, "--txn-trace-only"}})
      if (!path.empty())
        throw config_error(std::string(opt) == "--json"
                               ? std::string("--json is set per run by the sweep (DIR/run_K.json); not allowed here")
                               : std::string(opt) + " is a per-run output, which the sweep does not pass to its runs "
                                 "(each run writes DIR/run_K.json; the sweep writes DIR/sweep.csv); not allowed here");
    const bool pass_quiet = pass_out.quiet;
    json plan = make_plan(grid, pass, zips);
    std::string synthetic_grid;  // the first grid key of synthetic data, if any
    for (const auto& g : grid)
      if (synthetic_grid.empty() && synthetic_key(g.name)) synthetic_grid = g.name;
    std::vector<named_file> inputs;  // the files the runs read, for the check below
    std::string layer_times;         // a --layer-times table of a run, if any (the warning below)
    std::set<std::string> codecs_used;  // the codecs of the runs (canonical names), for the warning below
    std::size_t run_index = 0;
    // Two runs of one configuration would run it twice: also when the axes' values differ one
    // by one but not the runs, e.g. a pcie.preset axis zipped with (or beside) a pcie.gen axis
    // of one value: gen3x16 and gen4x16 at pcie.gen=4 are the same link (breaker s22 brk2).
    // Hash of config_text -> run.
    std::multimap<std::size_t, std::size_t> configs;
    auto values_text = [](const json& run) {
      std::string t;
      for (const auto& [name, value] : run["values"].items())
        t += (t.empty() ? "" : ", ") + name + "=" + value.get<std::string>();
      return "(" + printable(t) + ")";
    };
    // (The effective configuration as written, pcie.preset's name aside: setting_json's
    // spellings would cost a network build per run, and the axes' spellings are checked above.)
    auto config_text = [](const platform_config& c) {
      json j = to_json(c);
      j["pcie"].erase("preset");
      return j.dump();
    };
    auto check_new_config = [&](std::size_t k, const platform_config& c) {
      const std::string sj = config_text(c);
      const std::size_t h = std::hash<std::string>{}(sj);
      for (auto [it, end] = configs.equal_range(h); it != end; ++it) {
        const json& other = plan["runs"][it->second];
        if (config_text(check_config(other["args"].get<std::vector<std::string>>())) == sj)
          throw config_error("--grid: runs " + std::to_string(it->second) + " " + values_text(other) + " and " +
                             std::to_string(k) + " " + values_text(plan["runs"][k]) +
                             " are the same configuration (their grid values set the same parameters); list each "
                             "combination once");
      }
      configs.emplace(h, k);
    };
    for (auto& r : plan["runs"]) {
      const std::size_t k = run_index++;
      auto a = r["args"].get<std::vector<std::string>>();
      std::vector<std::string> acts;
      std::string config_file;
      const platform_config c = check_config(a, &acts, nullptr, &config_file);
      if (layer_times.empty()) layer_times = c.layer_times;
      try {
        codecs_used.insert(codec::to_string(codec::codec_from_string(c.codec)));
      } catch (const std::exception&) {  // an unknown codec: the run reports it
        codecs_used.insert(c.codec);
      }
      // Each row must run with the grid values it is labelled with: nothing applied after an
      // axis may change it (make_plan orders the axes so that the grid's own do not; a passed
      // --param pcie.preset after a pcie.preset axis would).
      for (const auto& [name, value] : r["values"].items()) {
        if (preset_axis(name)) continue;  // where the row starts: the options apply on top of it
        platform_config d = c;
        apply_override(d, name + "=" + value.get<std::string>(), false, "--grid");
        const bool held = axis_rank(name) == 0 ? d.pcie_preset == c.pcie_preset : to_json(d) == to_json(c);
        if (!held) {
          const auto got = describe_params(c), want = describe_params(d);
          std::string diff = "pcie.preset = " + c.pcie_preset;
          for (std::size_t i = 0; axis_rank(name) != 0 && i < got.size() && i < want.size(); ++i)
            if (got[i].value != want[i].value) {
              diff = got[i].name + " = " + got[i].value + " (the grid value gives " + want[i].value + ")";
              break;
            }
          throw config_error("--grid " + name + "=" + value.get<std::string>() + ": run " +
                             std::to_string(k) + " would run with " + diff +
                             ", set by an option applied after the grid value; expected the grid's parameters "
                             "set by the grid alone (drop the other option)");
        }
      }
      for (auto& f : config_inputs(c, config_file))
        if (std::none_of(inputs.begin(), inputs.end(), [&f](const named_file& g) { return g.path == f.path; }))
          inputs.push_back(std::move(f));
      // What the run is asked for, for sweep.csv even when the run fails.
      r["resolved"] = {{"network", c.network}, {"batch", c.batch}, {"activations", activations_text(acts)}};
      if (synthetic_grid.empty() || synthetic_activations(c.activations)) {
        check_new_config(k, c);
        continue;
      }
      if (!c.activations.empty())  // even in a row where the grid value equals the default
        throw config_error("activations \"" + activations_text(c.activations) +
                           "\" (real activations) cannot be combined with --grid " +
                           synthetic_grid + " (an option of synthetic activations); drop one of them, or use "
                           "activations=synthetic");
      a.push_back("--param");
      a.push_back("activations=synthetic");
      r["args"] = a;
      r["resolved"]["activations"] = "synthetic";
      check_new_config(k, check_config(a));
    }
    // A batch axis with measured kernel times: the table's times are used as given at every
    // batch (they do not scale with it), so the kernels' share shrinks as the batch grows
    // (new-user trial s19: cDMA's speed-up 1.107 / 1.182 / 1.355 at batch 4 / 8 / 16 with one
    // table). A warning, not an error: a table may hold times for one batch on purpose. A
    // batch "axis" of one value runs one batch: nothing to warn of.
    for (const grid_axis& ax : grid)
      if (!layer_times.empty() && ax.values.size() > 1 && grid_param(ax.name, "--grid") == "batch") {
        std::string values;
        for (const auto& v : ax.values) values += (values.empty() ? "" : ",") + v;
        std::cerr << "cdma-vp: warning: --grid " << printable(ax.name) << "=" << printable(values)
                  << " with layer_times = " << printable(layer_times)
                  << ": the table's kernel times are used as given at every batch (they do not scale with it), "
                     "so only the transfers grow with the batch; sweep the batch with the roofline (no "
                     "layer_times), or run each batch with a table measured at that batch\n";
        break;
      }
    // An axis of a codec's own rate when no run uses that codec changes nothing: every row the
    // same (breaker s23 #5: --codec zvc --grid cdma.codec_decompression_bytes_per_cycle.zlib=1,4,16
    // ran 3 identical rows without a word). Said before running, and kept in the plan.
    json plan_warnings = json::array();
    for (const grid_axis& ax : grid) {
      std::string key;
      try {
        key = grid_param(ax.name, "--grid");
      } catch (const std::exception&) {
        continue;
      }
      for (const char* prefix : {"cdma.codec_bytes_per_cycle.", "cdma.codec_decompression_bytes_per_cycle."}) {
        const std::string p = prefix;
        if (key.compare(0, p.size(), p) != 0) continue;
        const std::string codec_name = key.substr(p.size());
        if (codecs_used.count(codec_name)) continue;
        std::string used;
        for (const auto& u : codecs_used) used += (used.empty() ? "" : ", ") + (u == "raw" ? std::string("none") : u);
        const std::string w =
            "--grid " + printable(ax.name) + ": " + key + " is the rate of codec " + codec_name + ", which no run of "
            "the sweep uses (codec " + used + "): the axis changes nothing and its rows are the same; sweep the rate "
            "of the codec in use, or add codec " + codec_name + " (--codec " + codec_name + " or --grid codec=...)";
        std::cerr << "cdma-vp: warning: " << w << "\n";
        plan_warnings.push_back(w);
      }
    }
    if (!plan_warnings.empty()) plan["warnings"] = plan_warnings;
    const std::size_t n_runs = plan["runs"].size();
    {
      // The files the sweep writes in DIR. The Slurm script must not be one of them (it
      // replaced the plan: --merge then failed), nor DIR itself; and no file of the sweep may
      // be an input of a run (--config, a layer file, --layer-times, ...: it was overwritten).
      std::vector<named_file> own;
      for (const char* f : {"sweep.plan.json", "sweep.csv", "sweep.png", "sweep.svg"})
        own.push_back({out + "/" + f, "--out (" + std::string(f) + ")"});
      for (std::size_t k = 0; k < n_runs; ++k)
        for (const char* ext : {".json", ".config.json", ".log", ".status"}) {
          const std::string f = "run_" + std::to_string(k) + ext;
          own.push_back({out + "/" + f, "--out (" + f + ")"});
        }
      if (!slurm.empty()) {
        // DIR goes into the script's #SBATCH --output line: a line break in it ended that line
        // and the rest of the name ran as a command of the job (breaker s23: --out $'d\ntouch X'
        // ran `touch X`); sbatch takes a backslash in a log name as "no %a": one log for every
        // task. Quotes, blanks and % are written so that sbatch reads them as they are.
        // (The absolute path: the script names DIR so, and enters this directory first.)
        for (const char ch : absolute_path(out))
          if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f || ch == '\\')
            throw config_error("--out " + printable(out) + " with --emit-slurm: the folder's absolute path holds " +
                               (ch == '\\' ? std::string("a backslash") : std::string("a control character")) +
                               ", which the script's #SBATCH --output line cannot carry; expected a folder path "
                               "without control characters and backslashes");
        if (same_file(slurm, out))
          throw config_error("--emit-slurm " + printable(slurm) + " is the --out folder; expected a file outside " +
                             "the sweep's files (e.g. " + printable(out) + ".sh)");
        for (const auto& f : own)
          if (same_file(slurm, f.path))
            throw config_error("--emit-slurm " + printable(slurm) + " is " + printable(f.path) + ", a file the sweep " +
                               "writes; expected another file for the Slurm script (e.g. " + printable(out) + ".sh)");
        own.push_back({slurm, "--emit-slurm"});
      }
      check_distinct_files(own, inputs, false);
    }
    if (!slurm.empty()) check_output_path(slurm, "--emit-slurm");
    if (mkdir(out.c_str(), 0755) != 0 && errno != EEXIST)
      throw config_error("--out " + out + ": cannot create the folder: " + std::strerror(errno));
    write_output_file(out + "/sweep.plan.json", plan.dump(2) + "\n", "--out");
    const std::size_t n = plan["runs"].size();
    // Results of an earlier plan in the same folder must not be merged into this one.
    for (std::size_t k = 0; k < n; ++k)
      for (const char* ext : {".json", ".status", ".config.json", ".log"})
        std::remove((out + "/run_" + std::to_string(k) + ext).c_str());
    const std::string exe = self_exe();
    if (!slurm.empty()) {
      std::ostringstream s;
      // Relative paths (DIR, the files of the run options) are those of this directory, also for
      // a script submitted from another one (its tasks failed: "--json DIR/run_0.json: cannot
      // open for writing", the logs went nowhere; breaker s23): the logs' path is absolute and
      // the tasks start here.
      const std::string here = absolute_path(".");
      s << "#!/bin/bash\n#SBATCH --job-name=cdma-vp-sweep\n#SBATCH --array=0-" << n - 1
        << "\n#SBATCH --cpus-per-task=1\n#SBATCH --output=" << sbatch_quote(absolute_path(out)) << "\n"
        << "# One task per grid combination; afterwards: cdma-vp sweep --merge " << shell_quote(out) << "\n"
        << "# (in " << shell_quote(here) << ", where the relative paths below start)\n"
        << "cd " << shell_quote(here) << " || exit 2\n"
        << "CDMA_VP=${CDMA_VP:-" << shell_quote(exe) << "}\ncase \"$SLURM_ARRAY_TASK_ID\" in\n";
      for (std::size_t k = 0; k < n; ++k) {
        s << "  " << k << ") ARGS=(";
        for (const auto& a : plan["runs"][k]["args"]) s << " " << shell_quote(a.get<std::string>());
        s << " ) ;;\n";
      }
      s << "  *) echo \"unknown task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\nesac\n"
        << "\"$CDMA_VP\" run \"${ARGS[@]}\"" << (pass_quiet ? "" : " -q") << " --json " << shell_quote(out) << "/run_${SLURM_ARRAY_TASK_ID}.json\n"
        // The task's end in run_K.status, in the words of a local sweep, for --merge (a
        // failed task read as "interrupted" without it).
        << "rc=$?\ncase $rc in\n  0) st=ok ;;\n  129|130|143) st=\"interrupted(signal=$((rc - 128)))\" ;;\n"
        << "  12[9]|1[3-9][0-9]|2[0-9][0-9]) st=\"failed(signal=$((rc - 128)))\" ;;\n  *) st=\"failed(exit=$rc)\" ;;\nesac\n"
        << "echo \"$st\" > " << shell_quote(out) << "/run_${SLURM_ARRAY_TASK_ID}.status\nexit $rc\n";
      write_output_file(slurm, s.str(), "--emit-slurm");
      std::cout << "Slurm job-array script with " << n << " tasks written to " << printable(slurm)
                << "; after the jobs: cdma-vp sweep --merge " << out << "\n";
      return check_stdout();
    }
    // An interrupt stops the runs (each removes its unfinished files); the finished ones stay.
    set_interrupt_note("the finished runs are kept in " + out + "; cdma-vp sweep --merge " + out +
                       " gathers them into sweep.csv");
    std::map<pid_t, std::size_t> running;
    std::map<std::size_t, std::string> statuses;
    std::string status_error;
    std::size_t next = 0, finished = 0;
    while (next < n || !running.empty()) {
      while (next < n && running.size() < jobs) {
        auto a = plan["runs"][next]["args"].get<std::vector<std::string>>();
        if (!pass_quiet) a.push_back("-q");  // given once (a second one failed the run)
        a.push_back("--json");
        a.push_back(out + "/run_" + std::to_string(next) + ".json");
        const pid_t pid = spawn_run(exe, a, out + "/run_" + std::to_string(next) + ".log");
        forward_interrupt_to(pid);
        running[pid] = next;
        ++next;
      }
      int st = 0;
      const pid_t pid = waitpid(-1, &st, 0);
      if (pid < 0) break;
      forget_child(pid);
      const std::size_t k = running[pid];
      running.erase(pid);
      const bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
      const bool stopped = WIFSIGNALED(st) && (WTERMSIG(st) == SIGINT || WTERMSIG(st) == SIGTERM ||
                                               WTERMSIG(st) == SIGHUP);  // the interrupt we forwarded
      statuses[k] = ok        ? "ok"
                    : stopped ? "interrupted(signal=" + std::to_string(WTERMSIG(st)) + ")"
                    : WIFEXITED(st) ? "failed(exit=" + std::to_string(WEXITSTATUS(st)) + ")"
                                    : "failed(signal=" + std::to_string(WTERMSIG(st)) + ")";
      try {  // for a later --merge; this process keeps the statuses in memory
        write_output_file(out + "/run_" + std::to_string(k) + ".status", statuses[k], "sweep");
      } catch (const output_error& e) {
        if (status_error.empty()) status_error = e.what();
      }
      // Runs are numbered from 0 as in sweep.csv and the file names (run_K.json).
      ++finished;
      std::cerr << "run " << k << (ok ? " done" : " FAILED (see " + out + "/run_" + std::to_string(k) + ".log)") << ", "
                << finished << " of " << n << " finished\n";
    }
    const int failed = merge(out, plot, std::cout, statuses);
    if (!status_error.empty()) throw output_error(status_error);
    if (check_stdout()) return 3;
    return failed ? 1 : 0;
  } catch (const output_error& e) {  // results (runs) exist; what records them could not be written
    std::cerr << "cdma-vp: error: " << printable(e.what(), true) << "\n";
    return 3;
  } catch (const config_error& e) {
    return usage_error(e.what());
  } catch (const po::error& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
}

const command_registrar reg({"sweep", "run a grid of configurations as parallel processes; CSV and plots",
                             sweep_command});

}  // namespace
}  // namespace cdma::platform
