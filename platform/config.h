// Platform configuration: presets, JSON files, `--param name=value` overrides and the
// effective configuration written with every run.
//
// Parameter names are hierarchical and equal to the module path in the platform
// (`pcie.lanes`, `gpu_mem.peak_bandwidth`, `cdma.compression_units`); workload settings sit
// at the top level (`network`, `batch`, `codec`, ...). A leading "platform." is accepted.
// Values carry units where they have them ("850 ns", "12.8 GB/s", "12 GiB"). Unknown keys,
// wrong types and out-of-range values are config_errors naming the key, the value, the
// file (or --param) and the expected form.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>
#include "platform/platform.h"

namespace cdma::platform {

class config_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Names of the shipped presets; the first is the default.
std::vector<std::string> preset_names();
/// The preset's configuration. config_error listing the names if unknown.
platform_config preset(const std::string& name);
/// The preset's JSON text as shipped (what `cdma-vp config --dump --preset NAME` starts from).
nlohmann::json preset_json(const std::string& name);

/// Applies every leaf of `j` (nested objects or dotted keys) to cfg. `origin` names the file
/// in errors.
void apply_json(platform_config& cfg, const nlohmann::json& j, const std::string& origin);
/// Reads a JSON file (optionally with "preset": NAME to start from) and applies it.
platform_config load_config_file(const std::string& path);
/// Applies one "name=value" override (value parsed like in a file; strings need no quotes;
/// numbers in decimal only: 0x10 is refused). The value's own range is always checked; the
/// rules across parameters (validate(), e.g. cdma.unit_bytes_per_cycle x cdma.clock) only with
/// `check_rules`: a caller applying several overrides checks them once after the last (so their
/// order does not matter). `option` is the command-line option the value came from, named in
/// errors ("--param", or a shortcut such as "--missing-activations").
void apply_override(platform_config& cfg, const std::string& assignment, bool check_rules = true,
                    const std::string& option = "--param");
/// Where parameter `key` (a leading "platform." allowed) comes in the order of application of
/// a configuration file's keys and of the --param options (apply_json, config_options): 0
/// pcie.preset (it sets every pcie.* value), 1 pcie.gen, 2 pcie.lanes (on a measured-host
/// preset they re-derive the calibrated pcie.pd_credits / pcie.cpl_bytes), 3 every other key
/// (an unknown one too). Sorted by it (stably), every value given is used as given, whatever
/// the order it was written in (new-user trial s25 F2).
int application_rank(const std::string& key);
/// Sets `activations` from an option given once per source (`--activations A --activations B`):
/// each value one path as typed (never read as a JSON array), or "synthetic" alone; one empty
/// value is the default. Refused as the `activations` key is, naming `option`.
void apply_activations(platform_config& cfg, const std::vector<std::string>& sources, const std::string& option);
/// The rules across parameters; throws config_error naming the keys.
void validate(const platform_config& cfg);
/// The effective configuration as nested JSON with units, loadable by load_config_file.
nlohmann::json to_json(const platform_config& cfg);

/// The parameter `key` sets, written one way (a leading "platform." dropped: platform.pcie.lanes
/// and pcie.lanes are one parameter). config_error "<where>: unknown parameter ..." if none.
std::string param_name(const std::string& key, const std::string& where);

/// True when parameter `key`'s value 0 is no quantity but a setting of its own, as its
/// description in `config --list` says ("0 = auto: ...", "0: unlimited", "0 (the compression
/// rate)"): cdma.xbar_bandwidth, the PCIe credits, the codec rates, gpu.kernel_outstanding...
/// A plot must not place such a 0 on a numeric axis. False for an unknown key.
bool zero_is_not_a_value(const std::string& key);

/// True when parameter `key` (a leading "platform." allowed) is a file or folder path
/// (activations, name_map, density_profile, layer_times, host_mem.spill_dir): its values are
/// taken as written, spaces included (sweep's --grid trims the others' values).
bool is_path_parameter(const std::string& key);

/// Edit distance of `a` and `b` (insertions, deletions, substitutions, one each), letters
/// compared case-insensitively and '-' as '_': for the "did you mean" of unknown names.
std::size_t edit_distance(const std::string& a, const std::string& b);
/// `p` as an absolute path (relative to the current directory), lexically normal, without a
/// trailing '/'; "" stays "".
std::string absolute_path(const std::string& p);
/// `c` with every file or folder path absolute (network PATH.json, every activations file, density_profile,
/// layer_times, name_map, host_mem.spill_dir): the dumped configuration reproduces the run from
/// any directory.
platform_config with_absolute_paths(platform_config c);

/// Reads `s` as a whole number written in decimal, exactly: [+-]digits[.digits][e[+-]digits]
/// whose value has no fraction (1000, 1e3, 64.0, 1.5e1; not 2.5 or 2.0000000000000001), with
/// no spaces. Exact for every integer in the long long range (no detour through a double).
/// False if `s` is not such a number or is out of that range. (How integer parameters given
/// on the command line are read; also `sweep --jobs`.)
bool parse_whole(const std::string& s, long long& out);

/// One documented parameter, for `cdma-vp config --list` and docs.
struct param_doc {
  std::string name, kind, value, doc;
};
std::vector<param_doc> describe_params(const platform_config& cfg);

}  // namespace cdma::platform
