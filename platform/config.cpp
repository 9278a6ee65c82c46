#include "platform/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <functional>
#include <regex>
#include <sstream>
#include "tlm/codec/codec.h"
#include "tlm/core/quantity.h"
#include "tlm/memory/dram/dram_spec.h"
#include "tlm/pcie/link_math.h"
#include "workloads/io/input_file.h"

namespace cdma::platform {

namespace {

using nlohmann::json;

/// One bound parameter: how to read it from JSON / text, write it back, and check it.
struct param {
  std::string name;
  std::string kind;  // "int", "number", "bool", "string", "time", "rate", "bytes", "frequency", "flops"
  std::string doc;
  std::function<void(const json&, const std::string& where)> set;
  std::function<json()> get;
};

/// A value as JSON text for a message. json::dump() throws on a string that is not UTF-8
/// (--param mode=$'\xff' ended in "[json.exception.type_error.316] ..." naming nothing): such a
/// string is shown quoted with its bytes as they are (messages are printed through printable(),
/// which writes them as \xNN).
std::string shown(const json& v) {
  try {
    return v.dump();
  } catch (const json::type_error&) {
    if (v.is_string()) return "\"" + v.get<std::string>() + "\"";
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

[[noreturn]] void fail(const std::string& where, const std::string& key, const json& v,
                       const std::string& expected) {
  throw config_error(where + ": " + key + " = " + shown(v) + ": expected " + expected);
}

/// Values given as text on the command line (--param and the shortcut options such as
/// --density, named in messages by their option); a file must use JSON types.
bool from_command_line(const std::string& where) { return where.rfind("--", 0) == 0; }

/// A number as text with as many digits as it needs to read back as the same double (so a
/// value just below a bound never prints as the bound itself: 0.0099999999, not 0.01).
std::string shortest(double v) {
  char b[40];
  for (int p = 6; p <= 17; ++p) {
    std::snprintf(b, sizeof b, "%.*g", p, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  return b;
}

/// Text of a value for quantity parsing: strings as they are, numbers as the base unit.
std::string text(const json& v, const std::string& where, const std::string& key,
                 const std::string& expected) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) {
    std::ostringstream o;
    o.precision(17);
    o << v.get<double>();
    return o.str();
  }
  fail(where, key, v, expected);
}

}  // namespace

// Declared in config.h (sweep --jobs reads its integer the same way).
bool parse_whole(const std::string& s, long long& out) {
  std::size_t i = 0;
  const bool neg = i < s.size() && s[i] == '-';
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::string digits;  // mantissa digits, point removed
  long long point = -1;  // digits before the point
  for (; i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || (s[i] == '.' && point < 0)); ++i)
    if (s[i] == '.') point = static_cast<long long>(digits.size());
    else digits += s[i];
  if (digits.empty()) return false;
  if (point < 0) point = static_cast<long long>(digits.size());
  long long exp = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    const bool eneg = i < s.size() && s[i] == '-';
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= s.size()) return false;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      exp = exp * 10 + (s[i] - '0');
      if (exp > 100000) return false;
    }
    if (eneg) exp = -exp;
  }
  if (i != s.size()) return false;
  const long long int_len = point + exp;  // digits of the integer part (may exceed digits.size())
  for (long long k = std::max<long long>(int_len, 0); k < static_cast<long long>(digits.size()); ++k)
    if (digits[static_cast<std::size_t>(k)] != '0') return false;  // a fraction
  unsigned long long v = 0;
  const unsigned long long limit = neg ? 9223372036854775808ull : 9223372036854775807ull;
  for (long long k = 0; k < int_len; ++k) {
    const int d = k < static_cast<long long>(digits.size()) ? digits[static_cast<std::size_t>(k)] - '0' : 0;
    if (v > (limit - static_cast<unsigned long long>(d)) / 10) return false;
    v = v * 10 + static_cast<unsigned long long>(d);
  }
  out = neg ? static_cast<long long>(0 - v) : static_cast<long long>(v);
  return true;
}

namespace {

template <typename T>
param integer(const std::string& name, T& ref, long long lo, long long hi, const std::string& doc) {
  return {name, "int", doc,
          [&ref, name, lo, hi](const json& v, const std::string& where) {
            const std::string exp = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
            long long x = 0;
            // A whole number written any decimal way (1000, 1e3, 1000.0) is that integer, as
            // for sizes, read exactly (parse_whole); a fraction is refused. A JSON float
            // (4.0) counts only where a double holds the integer exactly (below 2^53).
            if (v.is_number_unsigned() && v.get<unsigned long long>() > 9223372036854775807ull) fail(where, name, v, exp);
            else if (v.is_number_integer()) x = v.get<long long>();
            else if (v.is_number_float()) {
              const double d = v.get<double>();
              if (std::isfinite(d) && d == std::floor(d) && !(std::fabs(d) < 9007199254740992.0) &&
                  std::fabs(d) <= static_cast<double>(hi))
                // 1e16 is an integer in range, but a JSON float beyond 2^53 may not be the number
                // written (9007199254740993.0 reads as ...992): say so (it said only "expected an
                // integer in [0, 9223372036854775807]"; --param seed=1e16 is read exactly).
                fail(where, name, v, exp + ", written in digits (a JSON number with a fraction or an exponent "
                                         "is read as a double, exact only below 2^53 = 9007199254740992)");
              if (!(std::fabs(d) < 9007199254740992.0) || d != std::floor(d)) fail(where, name, v, exp);
              x = static_cast<long long>(d);
            } else if (v.is_string() && from_command_line(where)) {  // a file must use JSON numbers
              const std::string s = v.get<std::string>();
              if (hexadecimal(s))
                throw config_error(where + ": " + name + " = " + shown(v) + ": hexadecimal is not accepted; expected " +
                                   exp + " written in decimal");
              if (!parse_whole(s, x)) fail(where, name, v, exp);
            } else fail(where, name, v, exp);
            if (x < lo || x > hi) fail(where, name, v, exp);
            ref = static_cast<T>(x);
          },
          [&ref] { return json(static_cast<long long>(ref)); }};
}

/// A plain number in [lo, hi] (or (lo, hi] with lo_open); `unit` (e.g. "bytes/cycle") is
/// named in the message; `expect`, if given, replaces the message's "a number in [lo, hi]"
/// (a key whose range has a sentinel outside its meaningful values). -0 is read as 0.
param number(const std::string& name, double& ref, double lo, double hi, const std::string& doc,
             bool lo_open = false, const std::string& unit = "", const std::string& expect = "") {
  return {name, "number", doc,
          [&ref, name, lo, hi, lo_open, unit, expect](const json& v, const std::string& where) {
            std::ostringstream e;
            if (!expect.empty()) e << expect;
            else
              e << "a number " << (unit.empty() ? "" : "of " + unit + " ") << "in " << (lo_open ? "(" : "[")
                << shortest(lo) << ", " << shortest(hi) << "]";
            double x = 0;
            if (v.is_number()) x = v.get<double>();
            else if (v.is_string() && from_command_line(where)) {  // a file must use JSON numbers
              const std::string why = parse_decimal(v.get<std::string>(), x);
              if (!why.empty())
                throw config_error(where + ": " + name + " = " + shown(v) + ": " + why + "; expected " + e.str() +
                                   (hexadecimal(v.get<std::string>()) ? " written in decimal" : ""));
            } else fail(where, name, v, e.str());
            if (!(x >= lo && x <= hi) || (lo_open && x == lo)) fail(where, name, v, e.str());
            ref = x == 0 ? 0.0 : x;  // -0 is 0 (never printed as "-0")
          },
          [&ref] { return json(ref); }};
}

/// `p` (a number parameter over [sentinel, hi]) refusing the values between sentinel and lo
/// where they are given, so the message names the option or file (training_progress -0.5 was
/// refused only when the run started, naming neither).
param only_or_range(param p, double& ref, double sentinel, double lo, double hi) {
  auto set = p.set;
  const std::string name = p.name;
  p.set = [set, name, &ref, sentinel, lo, hi](const json& v, const std::string& where) {
    const double before = ref;
    set(v, where);
    if (ref != sentinel && !(ref >= lo && ref <= hi)) {
      ref = before;
      fail(where, name, v, "a number in [" + shortest(lo) + ", " + shortest(hi) + "] (a point of the density profile), or " +
                               shortest(sentinel) + " (unset: the end of training)");
    }
  };
  return p;
}

/// `p` refusing a value in its range that `ok` (called on the value set) does not allow, where
/// it is given, so the message names the option or file like every other value's ("--param:
/// pcie.lanes = \"6\": expected 1, 2, ..."; validate() said it without "--param:", new-user
/// trial s25 F7). validate() keeps the rule for configurations built in code.
template <typename T, typename Ok>
param allowed(param p, T& ref, Ok ok, const std::string& expected) {
  auto set = p.set;
  const std::string name = p.name;
  p.set = [set, name, &ref, ok, expected](const json& v, const std::string& where) {
    const T before = ref;
    set(v, where);
    if (!ok(ref)) {
      ref = before;
      fail(where, name, v, expected);
    }
  };
  return p;
}

bool power_of_two(std::uint64_t v) { return v && !(v & (v - 1)); }

param boolean(const std::string& name, bool& ref, const std::string& doc) {
  return {name, "bool", doc,
          [&ref, name](const json& v, const std::string& where) {
            if (v.is_boolean()) ref = v.get<bool>();
            else if (from_command_line(where) && v.is_string() && (v == "true" || v == "1")) ref = true;
            else if (from_command_line(where) && v.is_string() && (v == "false" || v == "0")) ref = false;
            else fail(where, name, v, from_command_line(where) ? "true or false (or 1 / 0)" : "true or false");
          },
          [&ref] { return json(ref); }};
}

param string(const std::string& name, std::string& ref, std::vector<std::string> choices,
             const std::string& doc) {
  return {name, "string", doc,
          [&ref, name, choices](const json& v, const std::string& where) {
            std::string exp = "a string";
            if (!choices.empty()) {
              exp = "one of";
              for (const auto& c : choices) exp += " " + c;
            }
            if (!v.is_string()) fail(where, name, v, exp);
            const std::string s = v.get<std::string>();
            if (!choices.empty() && std::find(choices.begin(), choices.end(), s) == choices.end())
              fail(where, name, v, exp);
            ref = s;
          },
          [&ref] { return json(ref); }};
}

/// The activation sources (platform_config::activations): in a file a string (one path,
/// "synthetic", or "" for the default) or an array of paths; on the command line one path, or
/// a JSON array literal (--param 'activations=["a.npz","b.npz"]'). Written back as a string
/// for none or one, an array for several.
param activation_sources(const std::string& name, std::vector<std::string>& ref, const std::string& doc) {
  return {name, "paths", doc,
          [&ref, name](const json& v, const std::string& where) {
            const std::string exp = "a path (a .npz, a .npy or a directory of .npy files), \"synthetic\", \"\" (the "
                                    "default), or an array of paths [\"A.npz\", \"B.npz\"] (their images concatenated "
                                    "in that order)";
            json list = v;
            if (v.is_string() && from_command_line(where)) {
              const std::string s = v.get<std::string>();
              const std::size_t first = s.find_first_not_of(" \t");
              if (first != std::string::npos && s[first] == '[') {
                try {
                  list = json::parse(s);
                } catch (const json::exception& e) {
                  throw config_error(where + ": " + name + " = " + shown(v) + ": not a JSON array of strings (" +
                                     e.what() + "); expected " + exp);
                }
              }
            }
            std::vector<std::string> out;
            if (list.is_string()) {
              if (!list.get<std::string>().empty()) out.push_back(list.get<std::string>());
            } else if (list.is_array()) {
              for (const auto& e : list) {
                if (!e.is_string() || e.get<std::string>().empty())
                  fail(where, name, v, exp + ", every element a non-empty path");
                // A NUL byte ends a path for the system ("a.npz\0/../x" opened a.npz while the
                // record said x). (One path alone: refused with every other text value.)
                if (e.get<std::string>().find('\0') != std::string::npos)
                  fail(where, name, v, exp + ", every element a path without NUL bytes (\\u0000)");
                out.push_back(e.get<std::string>());
              }
            } else {
              fail(where, name, v, exp);
            }
            if (out.size() > 1 && std::find(out.begin(), out.end(), "synthetic") != out.end())
              fail(where, name, v, exp + "; \"synthetic\" stands alone, not beside files");
            ref = out;
          },
          [&ref] { return ref.empty() ? json("") : ref.size() == 1 ? json(ref.front()) : json(ref); }};
}

/// The training steps to simulate: a comma-separated subset of oracle,vdnn,cdma in that order
/// (each once, lower case). Checked where the value is given, so the message names the option
/// or file ("--steps: steps = \"CDMA\": expected ..."), not only when the run starts.
param steps_list(const std::string& name, std::string& ref, const std::string& doc) {
  return {name, "string", doc,
          [&ref, name](const json& v, const std::string& where) {
            const std::string exp = "a comma-separated subset of oracle,vdnn,cdma in that order, each once and in "
                                    "lower case (e.g. cdma, vdnn,cdma or oracle,vdnn,cdma)";
            if (!v.is_string()) fail(where, name, v, exp);
            const std::string s = v.get<std::string>();
            const char* order[] = {"oracle", "vdnn", "cdma"};
            std::size_t next = 0, from = 0;
            for (;;) {
              const std::size_t comma = std::min(s.find(',', from), s.size());
              const std::string item = s.substr(from, comma - from);
              while (next < 3 && item != order[next]) ++next;
              if (next == 3) fail(where, name, v, exp);  // unknown, repeated, out of order or empty
              ++next;
              if (comma == s.size()) break;
              from = comma + 1;
            }
            ref = s;
          },
          [&ref] { return json(ref); }};
}

template <typename E>
param choice(const std::string& name, E& ref, std::vector<std::pair<std::string, E>> choices, const std::string& doc) {
  return {name, "string", doc,
          [&ref, name, choices](const json& v, const std::string& where) {
            std::string exp = "one of";
            for (const auto& c : choices) exp += " " + c.first;
            if (v.is_string())
              for (const auto& c : choices)
                if (c.first == v.get<std::string>()) {
                  ref = c.second;
                  return;
                }
            fail(where, name, v, exp);
          },
          [&ref, choices] {
            for (const auto& c : choices)
              if (c.second == ref) return json(c.first);
            return json("?");
          }};
}

template <typename T, typename Parse, typename Format>
param quantity(const std::string& name, const std::string& kind, T& ref, double lo, double hi,
               const std::string& example, Parse parse, Format format, const std::string& doc) {
  return {name, kind, doc,
          [&ref, name, lo, hi, example, parse, format](const json& v, const std::string& where) {
            const std::string range = "from " + format(static_cast<T>(lo)) + " to " + format(static_cast<T>(hi));
            std::ostringstream e;
            e << example << ", " << range;
            double x = 0;
            const std::string t = text(v, where, name, e.str());
            if (hexadecimal(t))
              throw config_error(where + ": " + name + " = " + shown(v) + ": hexadecimal is not accepted; expected " +
                                 e.str() + ", written in decimal");
            try {
              x = static_cast<double>(parse(t));
            } catch (const quantity_error& q) {
              // The parser's reason (unknown unit, no number, ...) and the range, without nesting.
              std::string why = q.what();
              if (why.rfind("'" + t + "': ", 0) == 0) why.erase(0, t.size() + 4);
              throw config_error(where + ": " + name + " = " + shown(v) + ": " + why + "; allowed " + range);
            }
            if (!(x >= lo && x <= hi)) fail(where, name, v, e.str());
            ref = static_cast<T>(x);
          },
          [&ref, format] { return json(format(ref)); }};
}

/// Times must carry their unit in configuration ("500" could mean ps or ns): a bare number
/// is refused, except 0 (zero time in any unit).
ps_t parse_time_with_unit(const std::string& s) {
  // A bare number (nothing after it but spaces) has no unit; text after the number is a unit,
  // known or not ("500 NS": unknown unit 'NS', said by parse_time_ps).
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() && std::string(end).find_first_not_of(" \t") == std::string::npos) {
    if (v == 0.0) return 0;
    throw quantity_error("'" + s + "' has no unit; expected a time such as \"400 ns\" (units ps, ns, us, ms, s; "
                         "only 0 needs no unit)");
  }
  return parse_time_ps(s);
}

param time_p(const std::string& n, ps_t& r, double lo, double hi, const std::string& doc) {
  return quantity(n, "time", r, lo, hi, "a time with its unit such as \"400 ns\"", parse_time_with_unit,
                  format_time, doc);
}
/// Bandwidths from 100 MB/s to 1 PB/s. Below 100 MB/s (slower than any GPU or host memory, or
/// PCIe Gen1 x1 at 250 MB/s) one step of a shipped network takes hours of simulated time: not a
/// real platform, most likely a unit typo.
constexpr double min_rate_Bps = 1e8;
param rate_p(const std::string& n, double& r, const std::string& doc) {
  return quantity(n, "rate", r, min_rate_Bps, 1e15, "a bandwidth such as \"12.8 GB/s\"",
                  parse_rate_Bps, format_rate, doc);
}
/// parse_bytes, with a size beyond 2^64 bytes named as such (it was "not a whole number of
/// bytes", e.g. for "17000000 TiB").
std::uint64_t parse_bytes_checked(const std::string& v) {
  try {
    return parse_bytes(v);
  } catch (const quantity_error&) {
    const char* b = v.c_str();
    char* end = nullptr;
    const double x = std::strtod(b, &end);
    if (end != b && std::isfinite(x)) {
      std::string u(end);
      u.erase(0, std::min(u.find_first_not_of(" \t"), u.size()));
      const std::pair<const char*, double> units[] = {{"", 1}, {"B", 1}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
                                                      {"TB", 1e12}, {"KiB", 1024.0}, {"MiB", 1048576.0},
                                                      {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
      for (const auto& [name, f] : units)
        if (u == name && x * f > 1.8e19)
          throw quantity_error("'" + v + "': beyond the largest size a 64-bit byte count holds (16 EiB)");
    }
    throw;
  }
}

template <typename T>
param bytes_p(const std::string& n, T& r, double lo, double hi, const std::string& doc) {
  // The example is inside the range (a key whose minimum is 1 MiB said "such as 4 KiB").
  const std::string example = lo > 4096 ? format_bytes(static_cast<std::uint64_t>(lo)) : std::string("4 KiB");
  return quantity(n, "bytes", r, lo, hi, "a size such as \"" + example + "\"", parse_bytes_checked,
                  [](T v) { return format_bytes(static_cast<std::uint64_t>(v)); }, doc);
}

/// pcie.gen or pcie.lanes (`p`) on a measured-host PCIe preset: the rate-dependent calibration
/// follows the link. The posted data credits and the completion size become those of the
/// measured-host-genGxW preset of the new gen x lanes (docs/pcie.md "Measured-host preset";
/// pcie::measured_host_pd_credits(), measured_host_cpl_bytes()) when they still hold the
/// calibration of the old gen x lanes; a value set to anything else (in a file or with
/// --param, before or after) is kept. (A rule on values, not on which keys were written: the
/// effective configuration every run writes lists every key, and re-running it with another
/// pcie.gen must rescale as on the preset.) A value given in the same file or the same command
/// line as pcie.gen / lanes is applied after them (application_rank), so it is kept even when
/// it equals the old calibration (new-user trial s25 F2). A spec-ideal genGxW preset has
/// unlimited credits and nothing to follow.
param following_measured_host(param p, platform_config& c) {
  p.set = [set = std::move(p.set), &c](const json& v, const std::string& where) {
    const int gen0 = c.pcie.gen, lanes0 = c.pcie.lanes;
    set(v, where);
    if (c.pcie_preset.rfind("measured-host", 0) != 0) return;
    if (c.pcie.pd_credits == pcie::measured_host_pd_credits(gen0, lanes0, c.pcie.updatefc_every))
      c.pcie.pd_credits = pcie::measured_host_pd_credits(c.pcie.gen, c.pcie.lanes, c.pcie.updatefc_every);
    if (c.pcie.cpl_bytes == pcie::measured_host_cpl_bytes(gen0))
      c.pcie.cpl_bytes = pcie::measured_host_cpl_bytes(c.pcie.gen);
  };
  return p;
}

/// The parameter table, bound to one configuration object. Sources of defaults are in the
/// parameter structs' docstrings (tlm/..., workloads/...).
std::vector<param> table(platform_config& c) {
  auto codecs = std::vector<std::string>{"none", "raw", "zvc"};
  for (const char* extra : {"rle", "zlib", "lz4", "zstd"}) {
    try {
      codec::codec_from_string(extra);
      codecs.push_back(extra);
    } catch (const std::exception&) {
    }
  }
  std::vector<param> t = {
      // workload
      string("network", c.network, {}, "network to train (see cdma-vp run --help)"),
      integer("batch", c.batch, 1, 1 << 20, "batch size"),
      string("codec", c.codec, codecs, "codec of the cDMA step"),
      string("policy", c.policy, {"none", "all", "conv"},
             "vDNN offload policy of the vDNN and cDMA steps (none: no transfers, both equal the oracle)"),
      activation_sources("activations", c.activations,
             "real activations (.npz, .npy or a directory of .npy; several: an array, images concatenated in "
             "order), or synthetic; empty: the shipped sample (chelsea + coffee) for inception_v3, synthetic "
             "otherwise (a synthetic-data option away from its default: synthetic)"),
      number("density", c.synthetic_density, 0.0, 1.0, "nonzero fraction of synthetic activations"),
      boolean("verify", c.verify, "compare every prefetched byte with what was offloaded"),
      string("name_map", c.name_map, {}, "JSON {\"name in file\": \"layer key\"} renaming the tensors of activations"),
      string("missing_activations", c.missing_activations, {"auto", "error", "dense"},
             "offloaded tensors the activations file does not hold (pool outputs are computed from their input): error, or dense synthetic data; auto (default): dense for the embedded default's shipped sample, else error (the list shows it resolved)"),
      number("zero_run", c.mean_zero_run, 0.0, 1e9, "synthetic: mean zero-run length in elements (clustered zeros); 0 = independent"),
      string("density_profile", c.density_profile, {}, "synthetic: per-layer density over training from a CSV (iteration,epoch,layer,zero_fraction)"),
      only_or_range(number("training_progress", c.training_progress, -1.0, 1.0, "0..1: point of density_profile to use; -1: end of training",
             false, "", "a number in [0, 1] (a point of the density profile), or -1 (unset: the end of training)"),
             c.training_progress, -1.0, 0.0, 1.0),
      integer("seed", c.seed, 0, std::numeric_limits<long long>::max(), "seed of the synthetic activations"),
      integer("produce_ahead", c.produce_ahead, 0, 1 << 16, "64 KiB activation chunks produced ahead of the engine's reads on a worker thread; 0: no thread (same results, only wall time differs)"),
      integer("produce_threads", c.produce_threads, 1, 64, "threads producing activation chunks ahead when the source allows it (synthetic data; real files use one); same results, only wall time differs"),
      string("layer_times", c.layer_times, {}, "CSV layer,forward_ms,backward_ms overriding the roofline for the listed layers"),
      steps_list("steps", c.steps, "training steps to simulate, comma-separated subset of oracle,vdnn,cdma in that order"),
      string("mode", c.mode, {"lt", "at"}, "timing style: lt (b_transport + quantum) or at (4-phase nb_transport)"),
      boolean("check_protocol", c.check_protocol, "protocol_checker on every initiator -> target connection"),
      quantity("quantum", "time", c.quantum_ns, 1e-3, 1e9, "a time with its unit such as \"1 us\"",
               [](const std::string& s) { return static_cast<double>(parse_time_with_unit(s)) / 1e3; },
               [](double ns) { return format_time(static_cast<ps_t>(ns * 1e3 + 0.5)); },
               "global LT quantum (tlm_global_quantum)"),
      // GPU compute (roofline)
      string("gpu.name", c.gpu.name, {}, "GPU name for reports"),
      quantity("gpu.peak_flops", "flops", c.gpu.peak_flops, 1e9, 1e18, "a throughput such as \"7 TFLOP/s\"",
               parse_flops, format_flops, "peak fp32 FLOP/s"),
      number("gpu.flop_efficiency", c.gpu.flop_efficiency, 0.0, 1.0, "fraction of peak FLOP/s kernels reach", true),
      number("gpu.bw_efficiency", c.gpu.bw_efficiency, 0.0, 1.0, "fraction of peak DRAM bandwidth kernels reach", true),
      number("gpu.backward_flops_factor", c.gpu.backward_flops_factor, 0.0, 100.0, "backward FLOPs / forward FLOPs"),
      number("gpu.backward_bytes_factor", c.gpu.backward_bytes_factor, 0.0, 100.0, "backward bytes / forward bytes"),
      boolean("gpu.kernel_traffic", c.kernel_traffic,
              "issue the compute kernels' own DRAM traffic to GPU memory (contention with cDMA reads)"),
      bytes_p("gpu.kernel_request", c.kernel.request_bytes, 64, 1 << 30, "kernel traffic: bytes per request"),
      integer("gpu.kernel_outstanding", c.kernel.max_outstanding, 0, 1 << 16, "kernel traffic (LT and AT): requests in flight at most (0 = auto: 1 MiB in flight)"),
      // GPU memory
      bytes_p("gpu_mem.size", c.gpu_mem.size_bytes, 1 << 20, 1152921504606846976.0 /* 2^60 B = 1 EiB, printed "1048576 TiB" */, "GPU DRAM capacity"),
      rate_p("gpu_mem.peak_bandwidth", c.gpu_mem.peak_bandwidth_Bps, "peak GPU DRAM bandwidth (also the roofline's)"),
      integer("gpu_mem.channels", c.gpu_mem.channels, 1, 1024, "DRAM channels (HBM: pseudo-channels)"),
      number("gpu_mem.efficiency", c.gpu_mem.efficiency, 0.0, 1.0, "achieved / peak for streaming", true),
      time_p("gpu_mem.latency", c.gpu_mem.latency_ps, 0, 1e9, "access latency (model bus)"),
      choice("gpu_mem.model", c.gpu_mem.model, {{"dram", gpu_memory_model::dram}, {"bus", gpu_memory_model::bus}},
             "timing model: dram (banks, scheduler, JEDEC timing) or bus (bandwidth + latency)"),
      // Checked where it is given (was "invalid platform parameter: unknown DRAM preset" from
      // the model, naming neither the key nor auto). "" (no DRAM preset: bus timing) stays.
      {"gpu_mem.dram_preset", "string", "DRAM timing preset (docs/dram.md) or auto: matched by peak bandwidth",
       [&c](const json& v, const std::string& where) {
         std::string exp = "auto";
         for (const auto& n : dram::preset_names()) exp += ", " + n;
         exp = "one of " + exp + " (lower case)";
         if (!v.is_string()) fail(where, "gpu_mem.dram_preset", v, exp);
         const std::string s = v.get<std::string>();
         const auto names = dram::preset_names();
         if (!s.empty() && s != "auto" && std::find(names.begin(), names.end(), s) == names.end())
           fail(where, "gpu_mem.dram_preset", v, exp);
         c.gpu_mem.dram_preset = s;
       },
       [&c] { return json(c.gpu_mem.dram_preset); }},
      choice("gpu_mem.page_policy", c.gpu_mem.page_policy, {{"open", dram::page_policy::open}, {"closed", dram::page_policy::closed}},
             "row-buffer policy"),
      choice("gpu_mem.scheduler", c.gpu_mem.scheduler, {{"frfcfs", dram::scheduler::frfcfs}, {"fcfs", dram::scheduler::fcfs}},
             "DRAM command scheduler"),
      string("gpu_mem.address_mapping", c.gpu_mem.address_mapping, {}, "address mapping text (docs/dram.md); empty: default GPU interleave"),
      time_p("gpu_mem.controller_latency", c.gpu_mem.controller_latency_ps, 0, 1e9, "controller front end + PHY latency"),
      integer("gpu_mem.max_outstanding", c.gpu_mem.max_outstanding, 0, 1 << 20,
              "AT: transactions accepted and not yet answered (0 = auto: max(1024, 16 x DRAM channels) of the DRAM preset, 2560 for hbm3_h100)"),
      // host memory
      bytes_p("host_mem.size", c.host_mem.size_bytes, 1 << 20, 1152921504606846976.0 /* 2^60 B = 1 EiB, printed "1048576 TiB" */, "host memory address space (sparse)"),
      rate_p("host_mem.bandwidth", c.host_mem.bandwidth_Bps, "host DRAM bandwidth"),
      time_p("host_mem.latency", c.host_mem.latency_ps, 0, 1e9, "host DRAM access latency"),
      string("host_mem.spill", c.host_spill, {"auto", "on", "off"},
             "keep host memory in a temporary file instead of RAM: on, off, or auto (on when the offloaded bytes exceed 2 GiB)"),
      string("host_mem.spill_dir", c.host_mem.spill_options.dir, {}, "directory of the spill file; empty: $TMPDIR or /tmp"),
      // Up to 1 PiB (printed "1024 TiB"): more RAM than any host has, so in effect unlimited.
      bytes_p("host_mem.spill_cache", c.host_mem.spill_options.cache_bytes, 1 << 20, 1125899906842624.0,
              "host memory pages kept in RAM when spilling (least recently used evicted)"),
      boolean("host_mem.spill_io_thread", c.host_mem.spill_options.io_thread,
              "spill-file writes (write-behind) and reads (read-ahead) on a helper thread; same results, only wall time differs"),
      boolean("host_mem.spill_direct_io", c.host_mem.spill_options.direct_io,
              "spill-file I/O bypasses the page cache (O_DIRECT) when the file system allows it; same results, only CPU and wall time differ"),
      // PCIe
      {"pcie.preset", "string", "link preset applied first: measured-host[-genGxW] (calibrated) or genGxW (spec-ideal), e.g. gen4x16",
       [&c](const json& v, const std::string& where) {
         if (!v.is_string()) fail(where, "pcie.preset", v, "a preset name such as \"measured-host\" or \"gen4x16\"");
         try {
           c.pcie = pcie::preset(v.get<std::string>());
         } catch (const std::invalid_argument& e) {
           throw config_error(where + ": pcie.preset = " + shown(v) + ": " + e.what());
         }
         c.pcie_preset = v.get<std::string>();
       },
       [&c] { return json(c.pcie_preset); }},
      following_measured_host(integer("pcie.gen", c.pcie.gen, 1, 6,
                   "PCIe generation (on a measured-host preset also rescales the calibrated credits and completion size)"), c),
      following_measured_host(
          allowed(integer("pcie.lanes", c.pcie.lanes, 1, 32,
                          "link width (1, 2, 4, 8, 12, 16, 32; on a measured-host preset also rescales the calibrated credits)"),
                  c.pcie.lanes, [](int n) { return n == 1 || n == 2 || n == 4 || n == 8 || n == 12 || n == 16 || n == 32; },
                  "1, 2, 4, 8, 12, 16 or 32"),
          c),
      allowed(bytes_p("pcie.mps", c.pcie.mps, 128, 4096, "Max Payload Size"), c.pcie.mps,
              [](std::uint64_t v) { return power_of_two(v); }, "a power of two in [128, 4096]"),
      allowed(bytes_p("pcie.mrrs", c.pcie.mrrs, 128, 4096, "Max Read Request Size"), c.pcie.mrrs,
              [](std::uint64_t v) { return power_of_two(v); }, "a power of two in [128, 4096]"),
      allowed(bytes_p("pcie.rcb", c.pcie.rcb, 64, 128, "Read Completion Boundary"), c.pcie.rcb,
              [](std::uint64_t v) { return v == 64 || v == 128; }, "64 or 128"),
      boolean("pcie.header_4dw", c.pcie.header_4dw, "64-bit addressing (16 B headers)"),
      boolean("pcie.ecrc", c.pcie.ecrc, "end-to-end CRC (+4 B per TLP)"),
      time_p("pcie.latency", c.pcie.latency_ps, 0, 1e9, "one-way link latency"),
      time_p("pcie.rc_latency", c.pcie.rc_latency_ps, 0, 1e9, "root-complex latency each way"),
      bytes_p("pcie.cpl_bytes", c.pcie.cpl_bytes, 0, 4096, "completion size (0: RCB/MPS rule)"),
      integer("pcie.tags", c.pcie.tags, 1, 768, "read tags (outstanding MRd; 10-bit tags: up to 768, PCIe 4.0 §2.2.6.2)"),
      integer("pcie.ack_every", c.pcie.ack_every, 1, 1 << 16, "TLPs per ACK DLLP"),
      integer("pcie.updatefc_every", c.pcie.updatefc_every, 1, 1 << 16, "TLPs per UpdateFC DLLP"),
      integer("pcie.ph_credits", c.pcie.ph_credits, 0, 1 << 20, "posted header credits (0: unlimited)"),
      integer("pcie.pd_credits", c.pcie.pd_credits, 0, 1 << 24, "posted data credits, 16 B each (0: unlimited)"),
      integer("pcie.nph_credits", c.pcie.nph_credits, 0, 1 << 20, "non-posted header credits (0: unlimited)"),
      integer("pcie.cplh_credits", c.pcie.cplh_credits, 0, 1 << 20, "completion header credits (0: unlimited)"),
      integer("pcie.cpld_credits", c.pcie.cpld_credits, 0, 1 << 24, "completion data credits (0: unlimited)"),
      time_p("pcie.fc_release", c.pcie.fc_release_ps, 0, 1e9, "time for a credit to return"),
      // cDMA engine
      allowed(bytes_p("cdma.window", c.engine.window_bytes, 64, static_cast<double>(max_window_bytes),
                      "uncompressed bytes per compression window (at most 1 MiB: the engine holds windows whole)"),
              c.engine.window_bytes, [](std::uint64_t v) { return v % 4 == 0; }, "a multiple of 4 bytes"),
      integer("cdma.compression_units", c.engine.compression_units, 1, 1024, "units on the offload path"),
      integer("cdma.decompression_units", c.engine.decompression_units, 1, 1024, "units on the prefetch path"),
      number("cdma.unit_bytes_per_cycle", c.engine.unit_bytes_per_cycle, 1e-3, 1e6,
             "throughput of one unit, bytes/cycle (unit rate x cdma.clock: at least 100 MB/s)", false, "bytes/cycle"),
      quantity("cdma.clock", "frequency", c.engine.clock_hz, 1e6, 1e12, "a frequency such as \"1 GHz\"",
               parse_frequency_hz, format_frequency, "unit clock"),
      integer("cdma.pipeline_latency_cycles", c.engine.pipeline_latency_cycles, 0, 1 << 20, "per-window unit latency, cycles"),
      integer("cdma.max_outstanding", c.engine.max_outstanding, 1, 1 << 20, "windows in flight"),
      integer("cdma.queue_depth", c.engine.queue_depth, 2, 1 << 20, "descriptors queued (a ring has at least 2 entries)"),
      choice("cdma.placement", c.engine.placement,
             {{"dma", unit_placement::dma}, {"memory_controller", unit_placement::memory_controller}},
             "compression units at the engine (dma) or beside the DRAM channels (memory_controller); "
             "no effect on timing unless cdma.xbar_bandwidth is set"),
      quantity("cdma.xbar_bandwidth", "rate", c.engine.xbar_Bps, 0.0, 1e15,
               "0 (unlimited) or a bandwidth from 100 MB/s such as \"64 GB/s\"",
               [](const std::string& v) {
                 const double b = parse_rate_Bps(v);
                 if (b != 0.0 && b < min_rate_Bps)
                   throw quantity_error("'" + v + "' is below 100 MB/s; expected 0 (unlimited) or a bandwidth from 100 MB/s");
                 return b;
               },
               [](double v) { return v > 0 ? format_rate(v) : std::string("0"); },
               "GPU-crossbar link between GPU memory and the engine, each way (0: unlimited)"),
  };
  // Per codec, after cdma.unit_bytes_per_cycle: cdma.codec_bytes_per_cycle.<codec> (one
  // unit's rate, both paths unless overridden), then cdma.codec_decompression_bytes_per_cycle.
  // <codec> (the prefetch path's own rate).
  auto at = std::find_if(t.begin(), t.end(), [](const param& p) { return p.name == "cdma.unit_bytes_per_cycle"; });
  for (const bool decompress : {false, true})
    for (codec::codec_id id : codec::all_codec_ids) {
      const std::string n = codec::to_string(id);
      const std::string fallback = decompress ? "cdma.codec_bytes_per_cycle." + n : "cdma.unit_bytes_per_cycle";
      at = t.insert(at + 1,
                    number(std::string(decompress ? "cdma.codec_decompression_bytes_per_cycle." : "cdma.codec_bytes_per_cycle.") + n,
                           (decompress ? c.engine.codec_decompression_bytes_per_cycle
                                       : c.engine.codec_bytes_per_cycle)[static_cast<std::size_t>(id)],
                           0, 1e6,
                           std::string(decompress ? "one decompression unit's" : "one unit's") + " throughput under codec " +
                               n + (id == codec::codec_id::raw ? " (none)" : "") + ", bytes/cycle; 0: " + fallback +
                               (decompress ? " (the compression rate)" : ""),
                           false, "bytes/cycle", "0 (" + fallback + ") or a number of bytes/cycle in [0.001, 1e6]"));
    }
  return t;
}

std::string strip_prefix(std::string k) {
  if (k.rfind("platform.", 0) == 0) k = k.substr(9);
  return k;
}

/// The parameter an unknown key `k` most likely meant, or "": the name within edit distance 2
/// (1 for a key of up to 4 characters; the nearest, the first of the table on a tie), else the
/// one whose last part is `k` (lanes: pcie.lanes) when just one is.
std::string near_miss(const std::vector<param>& t, const std::string& k) {
  const std::size_t limit = k.size() <= 4 ? 1 : 2;
  std::string best, by_leaf;
  std::size_t best_d = limit + 1, leaves = 0;
  for (const auto& p : t) {
    const std::size_t d = edit_distance(k, p.name);
    if (d < best_d) best_d = d, best = p.name;
    const auto dot = p.name.rfind('.');
    if (dot != std::string::npos && edit_distance(k, p.name.substr(dot + 1)) == 0) ++leaves, by_leaf = p.name;
  }
  if (!best.empty()) return best;
  return leaves == 1 ? by_leaf : std::string();
}

void apply_leaf(std::vector<param>& t, const std::string& key, const json& v, const std::string& where) {
  const std::string k = strip_prefix(key);
  for (auto& p : t)
    if (p.name == k) return p.set(v, where);
  std::string hint;
  const auto dot = k.find('.');
  for (auto& p : t)
    if (dot != std::string::npos && p.name.compare(0, dot + 1, k, 0, dot + 1) == 0)
      hint += (hint.empty() ? "" : ", ") + p.name;
  // A group given a value ({"pcie": 5}, --param pcie=8) was "unknown parameter 'pcie'".
  std::string members;
  for (auto& p : t)
    if (p.name.rfind(k + ".", 0) == 0) members += (members.empty() ? "" : ", ") + p.name;
  if (!members.empty())
    throw config_error(where + ": '" + key + "' is a group of parameters, not one (" + members +
                       "); expected a JSON object of them in a config file, or --param " + k + ".NAME=VALUE");
  // A near miss is named (breaker s23: --param batchh=3 said only "unknown parameter").
  // "preset" is not a parameter: the platform's is --preset NAME (or "preset" atop a --config
  // file), the link's pcie.preset.
  const std::string guess = near_miss(t, k);
  const std::string why =
      k == "preset" ? " (a platform preset is --preset NAME or \"preset\" at the top of a --config file; the PCIe "
                      "link's is pcie.preset)"
      : guess.empty() ? std::string()
                      : " (did you mean '" + guess + "'?)";
  throw config_error(where + ": unknown parameter '" + key + "'" + why +
                     (hint.empty() ? std::string("; `cdma-vp config --list` lists them")
                                   : "; known in this group: " + hint));
}

}  // namespace

// Edit distance (declared in config.h) (insertions, deletions, substitutions, one each) of `a` and `b`, letters
// compared case-insensitively and '-' as '_'.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  auto same = [](char x, char y) {
    if (x == '-') x = '_';
    if (y == '-') y = '_';
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string param_name(const std::string& key, const std::string& where) {
  platform_config c;
  auto t = table(c);
  const std::string k = strip_prefix(key);
  for (const auto& p : t)
    if (p.name == k) return k;
  apply_leaf(t, key, json(), where);  // throws the unknown-parameter message with its hints
  return k;
}

bool zero_is_not_a_value(const std::string& key) {
  platform_config c;
  const std::string k = strip_prefix(key);
  for (const auto& p : table(c))
    if (p.name == k) {
      // The parameter's own description (the text of `config --list`) says what its 0 means.
      static const std::regex zero_means(R"((^|[(;,:] ?)0( = |: | \())");
      return std::regex_search(p.doc, zero_means);
    }
  return false;
}

std::string absolute_path(const std::string& p) {
  if (p.empty()) return p;
  std::error_code ec;
  std::filesystem::path a = std::filesystem::absolute(p, ec);
  if (ec) return p;
  std::string s = a.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

bool is_path_parameter(const std::string& key) {
  // The parameters with_absolute_paths() below resolves, bar `network` (a name, or a .json
  // file: its grid values are names). Keep the two together.
  const std::string k = strip_prefix(key);
  for (const char* p : {"activations", "name_map", "density_profile", "layer_times", "host_mem.spill_dir"})
    if (k == p) return true;
  return false;
}

platform_config with_absolute_paths(platform_config c) {
  auto json_file = [](const std::string& n) {
    return n.size() >= 5 && std::equal(n.end() - 5, n.end(), ".json", [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           });
  };
  if (json_file(c.network)) c.network = absolute_path(c.network);
  if (!synthetic_activations(c.activations))
    for (auto& a : c.activations) a = absolute_path(a);
  c.density_profile = absolute_path(c.density_profile);
  c.layer_times = absolute_path(c.layer_times);
  c.name_map = absolute_path(c.name_map);
  c.host_mem.spill_options.dir = absolute_path(c.host_mem.spill_options.dir);
  return c;
}

namespace {

/// `seen`: parameter name -> the spelling that set it in this document, so that one
/// parameter written twice in different spellings ("pcie.lanes": 4 and "pcie": {"lanes": 8},
/// or under "platform") is refused rather than silently taking the later value (re-breaker,
/// session 12; a key repeated verbatim is refused by the JSON reader).
/// `shown`: the JSON keys leading to `j`, as the messages show them ("pcie" / "lanes").
/// `leaves`: every (key as written, value) of the document, applied by the caller (apply_json)
/// in the order that gives a JSON object, whose keys have no order, one meaning.
void walk(const std::vector<param>& t, const json& j, const std::string& prefix, const std::string& where,
          std::map<std::string, std::string>& seen, std::vector<std::pair<std::string, json>>& leaves,
          const std::string& shown = "") {
  auto leaf = [&](const std::string& key, const std::string& json_key, const json& v) {
    const std::string k = strip_prefix(key);
    const std::string as = shown + (shown.empty() ? "" : " / ") + "\"" + json_key + "\"";
    const auto [it, fresh] = seen.emplace(k, as);
    if (!fresh)
      throw config_error(where + ": parameter " + k + " is given twice (as " + it->second + " and as " + as +
                         "); expected it once");
    leaves.emplace_back(key, v);
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (prefix.empty() && (it.key() == "preset" || it.key() == "description")) continue;
    if (it.value().is_object()) {
      // An object is a group of parameters ("pcie": {...}); at a parameter's own key ("batch":
      // {}) it is a wrong type, refused by the parameter (was walked as an empty group and
      // silently ignored); at a key that is neither, an unknown parameter.
      const std::string k = strip_prefix(key);
      bool is_leaf = false, group = key == "platform";  // "platform": {...} nests every key
      for (const auto& p : t) {
        is_leaf = is_leaf || p.name == k;
        group = group || p.name.rfind(k + ".", 0) == 0;
      }
      if (is_leaf || !group) leaf(key, it.key(), it.value());
      else walk(t, it.value(), key, where, seen, leaves, shown + (shown.empty() ? "" : " / ") + "\"" + it.key() + "\"");
    } else leaf(key, it.key(), it.value());
  }
}

// ---- presets -----------------------------------------------------------------------------
// Sources: ARCHITECTURE.md §9 and the vendors' spec sheets (fp32 non-tensor peak; memory
// bandwidth and capacity); PCIe generation of each system's host link.
const char* const preset_text[][2] = {
    {"titanx-gen3", R"J({
  "description": "Titan X (Maxwell), 12 GB GDDR5, PCIe Gen3 x16: the vDNN paper's system",
  "gpu": {"name": "Titan X (Maxwell)", "peak_flops": "7 TFLOP/s"},
  "gpu_mem": {"size": "12 GiB", "peak_bandwidth": "336 GB/s", "channels": 12},
  "pcie": {"preset": "measured-host"}
})J"},
    {"titanxp-gen3", R"J({
  "description": "Titan Xp, 12 GB GDDR5X, PCIe Gen3 x16: the cDMA (HPCA 2018) paper's system",
  "gpu": {"name": "Titan Xp", "peak_flops": "12.1 TFLOP/s"},
  "gpu_mem": {"size": "12 GiB", "peak_bandwidth": "547.6 GB/s", "channels": 12},
  "pcie": {"preset": "measured-host"}
})J"},
    {"v100-gen3", R"J({
  "description": "Tesla V100 SXM2 16 GB HBM2, PCIe Gen3 x16 host link",
  "gpu": {"name": "V100", "peak_flops": "15.7 TFLOP/s"},
  "gpu_mem": {"size": "16 GiB", "peak_bandwidth": "900 GB/s", "channels": 64},
  "pcie": {"preset": "measured-host"}
})J"},
    {"a100-gen4", R"J({
  "description": "A100 40 GB HBM2, PCIe Gen4 x16 host link",
  "gpu": {"name": "A100-40GB", "peak_flops": "19.5 TFLOP/s"},
  "gpu_mem": {"size": "40 GiB", "peak_bandwidth": "1555 GB/s", "channels": 80},
  "pcie": {"preset": "measured-host-gen4x16"}
})J"},
    {"h100-gen5", R"J({
  "description": "H100 SXM5 80 GB HBM3, PCIe Gen5 x16 host link",
  "gpu": {"name": "H100 SXM", "peak_flops": "67 TFLOP/s"},
  "gpu_mem": {"size": "80 GiB", "peak_bandwidth": "3350 GB/s", "channels": 160},
  "pcie": {"preset": "measured-host-gen5x16"}
})J"},
};

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> n;
  for (const auto& p : preset_text) n.push_back(p[0]);
  return n;
}

json preset_json(const std::string& name) {
  for (const auto& p : preset_text)
    if (name == p[0]) return json::parse(p[1]);
  std::string known;
  for (const auto& n : preset_names()) known += " " + n;
  throw config_error("unknown preset '" + name + "'; expected one of:" + known);
}

platform_config preset(const std::string& name) {
  platform_config c;
  apply_json(c, preset_json(name), "preset " + name);
  return c;
}

void apply_json(platform_config& cfg, const json& j, const std::string& origin) {
  if (!j.is_object()) throw config_error(origin + ": the configuration must be a JSON object");
  platform_config next = cfg;
  auto t = table(next);
  std::map<std::string, std::string> seen;
  std::vector<std::pair<std::string, json>> leaves;
  walk(t, j, "", origin, seen, leaves);
  // A JSON object has no key order of its own (the reader sorts the keys), so the order of
  // application is fixed here, whatever the spelling ("pcie": {"preset"}, "pcie.preset",
  // "platform.pcie.preset"): pcie.preset first (it replaces every pcie.* value: in key order a
  // flat "pcie.latency" sorted before "pcie.preset" was silently reset to the preset's), then
  // pcie.gen, pcie.lanes, then the other keys. On a measured-host preset gen / lanes rescale
  // the calibrated pcie.pd_credits / pcie.cpl_bytes (following_measured_host); applied before
  // them, every value the document gives is used as written, so a run's effective
  // configuration re-loads as it ran. In key order ("cpl_bytes" < "gen" < "pd_credits") the
  // file of `run --param pcie.gen=5 --param pcie.cpl_bytes=64` re-loaded with cpl_bytes 128,
  // and a dump of h100-gen5 with "gen" edited to 4 kept pd_credits 768 but rescaled cpl_bytes
  // 128 -> 64, half of each link (breaker s17). Calibrated values the document does not give
  // still follow its gen / lanes ({"pcie": {"gen": 4}}: 384 credits).
  std::stable_sort(leaves.begin(), leaves.end(), [&](const auto& a, const auto& b) {
    return application_rank(a.first) < application_rank(b.first);
  });
  for (const auto& [key, v] : leaves) apply_leaf(t, key, v, origin);
  try {
    validate(next);
  } catch (const config_error& e) {
    throw config_error(origin + ": " + e.what());
  }
  cfg = next;
}

platform_config load_config_file(const std::string& path) {
  std::ifstream f;
  if (const workloads::io::input_problem p = workloads::io::open_input(f, path)) {
    if (p.kind != workloads::io::input_problem::cannot_open)  // a directory, a FIFO, a device
      throw config_error(path + ": " + p.text() + "; expected a JSON configuration file");
    throw config_error(path + ": cannot open the configuration file");  // (sweep --merge quotes this text)
  }
  json j;
  try {
    j = workloads::io::strict_json(f);
  } catch (const workloads::io::duplicate_key& e) {
    throw config_error(path + ": " + e.what());
  } catch (const std::ios_base::failure& e) {
    throw config_error(path + ": read error (" + e.what() + ")");
  } catch (const json::parse_error& e) {
    throw config_error(path + ": not valid JSON (" + e.what() + ")");
  } catch (const json::out_of_range& e) {  // e.g. a number beyond double (1e400)
    throw config_error(path + ": not valid JSON: a number is out of range (" + e.what() + ")");
  }
  if (!j.is_object()) throw config_error(path + ": the configuration must be a JSON object");
  std::string base = preset_names().front();
  if (j.contains("preset")) {
    if (!j["preset"].is_string()) throw config_error(path + ": preset must be a string naming a preset");
    base = j["preset"].get<std::string>();
  }
  platform_config c;
  try {
    c = preset(base);
  } catch (const config_error& e) {
    throw config_error(path + ": " + e.what());
  }
  apply_json(c, j, path);
  return c;
}

int application_rank(const std::string& key) {
  const std::string k = strip_prefix(key);
  return k == "pcie.preset" ? 0 : k == "pcie.gen" ? 1 : k == "pcie.lanes" ? 2 : 3;
}

void apply_override(platform_config& cfg, const std::string& a, bool check_rules, const std::string& option) {
  const auto eq = a.find('=');
  if (eq == std::string::npos || eq == 0)
    throw config_error(option + " " + a + ": expected name=value, e.g. pcie.lanes=8");
  platform_config next = cfg;  // all or nothing: cfg is unchanged if the value is refused
  auto t = table(next);
  const std::string key = a.substr(0, eq), val = a.substr(eq + 1);
  apply_leaf(t, key, json(val), from_command_line(option) ? option : "--param");
  if (check_rules) validate(next);
  cfg = next;
}

void apply_activations(platform_config& cfg, const std::vector<std::string>& sources, const std::string& option) {
  platform_config next = cfg;  // all or nothing
  auto t = table(next);
  // An array, so that a path starting with '[' stays a path; one empty value: the default.
  apply_leaf(t, "activations", sources.size() == 1 && sources.front().empty() ? json("") : json(sources), option);
  cfg = next;
}

namespace {

std::string g(double v) { return shortest(v); }

/// The PCIe cross-parameter rules of link_params::validate(), stated with configuration keys.
void validate_pcie_credits(const pcie::link_params& p) {
  if (p.cpl_bytes != 0 && (p.cpl_bytes % p.rcb != 0 || p.cpl_bytes > p.mps))
    throw config_error("pcie.cpl_bytes = " + std::to_string(p.cpl_bytes) + " B: expected 0 (completion size by the "
                       "RCB/MPS rule) or a multiple of pcie.rcb (" + std::to_string(p.rcb) +
                       " B) that is <= pcie.mps (" + std::to_string(p.mps) + " B); pcie.cpl_bytes comes from "
                       "the preset unless given, so a pcie.rcb or pcie.mps change may need it too, e.g. "
                       "--param pcie.cpl_bytes=" + std::to_string(p.rcb <= p.mps ? p.rcb : 0) + "B (breaker s25)");
  const std::uint64_t n = p.updatefc_every;
  // A finite credit pool must hold one UpdateFC batch of the largest TLP (else the transmitter
  // could wait for credits the receiver never returns).
  const std::pair<const char*, std::uint32_t> headers[] = {
      {"pcie.ph_credits", p.ph_credits}, {"pcie.nph_credits", p.nph_credits}, {"pcie.cplh_credits", p.cplh_credits}};
  for (const auto& [key, v] : headers)
    if (v != 0 && v < n)
      throw config_error(std::string(key) + " = " + std::to_string(v) + ": expected 0 (unlimited) or >= " +
                         "pcie.updatefc_every (" + std::to_string(n) + "): a finite pool must hold one UpdateFC batch");
  const std::pair<const char*, std::uint32_t> data[] = {{"pcie.pd_credits", p.pd_credits},
                                                         {"pcie.cpld_credits", p.cpld_credits}};
  for (const auto& [key, v] : data) {
    if (v == 0 || v >= n * pcie::data_credits(p.mps)) continue;
    std::string fits;
    for (std::uint64_t m = 128; m <= 4096; m *= 2)
      if (v >= n * pcie::data_credits(m)) fits += (fits.empty() ? "" : ", ") + std::to_string(m);
    throw config_error("pcie.mps = " + std::to_string(p.mps) + " B does not fit " + key + " = " + std::to_string(v) +
                       ": a finite data-credit pool must hold pcie.updatefc_every x mps / 16 = " + std::to_string(n) +
                       " x " + std::to_string(p.mps) + " / 16 = " + std::to_string(n * pcie::data_credits(p.mps)) +
                       " credits; expected " + (fits.empty() ? std::string() : "pcie.mps one of " + fits + " B, or ") +
                       key + " = 0 (unlimited) or >= " + std::to_string(n * pcie::data_credits(p.mps)) +
                       (fits.empty() ? " (no pcie.mps from 128 to 4096 B fits " + std::to_string(v) + " credits)"
                                     : std::string()));
  }
}

/// Every rate a run depends on has a floor (see min_rate_Bps): efficiencies at least 1 % of
/// peak, a compression unit at least 100 MB/s, its pipeline latency at most 1 ms per window.
void validate_rates(const platform_config& c) {
  const std::pair<const char*, double> effs[] = {{"gpu.flop_efficiency", c.gpu.flop_efficiency},
                                                  {"gpu.bw_efficiency", c.gpu.bw_efficiency},
                                                  {"gpu_mem.efficiency", c.gpu_mem.efficiency}};
  for (const auto& [key, v] : effs)
    if (v < 0.01)
      throw config_error(std::string(key) + " = " + g(v) + ": expected a fraction of peak in [0.01, 1] (at least 1 %; "
                         "below, kernel and transfer times grow without bound)");
  const double unit_Bps = c.engine.unit_bytes_per_cycle * c.engine.clock_hz;
  if (unit_Bps < min_rate_Bps)
    throw config_error("cdma.unit_bytes_per_cycle x cdma.clock = " + g(c.engine.unit_bytes_per_cycle) +
                       " bytes/cycle x " + g(c.engine.clock_hz) + " Hz = " + g(unit_Bps) +
                       " B/s per compression unit: expected at least 100 MB/s");
  for (codec::codec_id id : codec::all_codec_ids)
    for (const bool decompress : {false, true}) {
      const std::string n = codec::to_string(id);
      const double v =
          (decompress ? c.engine.codec_decompression_bytes_per_cycle : c.engine.codec_bytes_per_cycle)[static_cast<std::size_t>(id)];
      if (v != 0.0 && v * c.engine.clock_hz < min_rate_Bps)
        throw config_error(std::string(decompress ? "cdma.codec_decompression_bytes_per_cycle." : "cdma.codec_bytes_per_cycle.") +
                           n + " x cdma.clock = " + g(v) + " bytes/cycle x " + g(c.engine.clock_hz) + " Hz = " +
                           g(v * c.engine.clock_hz) + " B/s per " + (decompress ? "decompression" : "compression") +
                           " unit: expected 0 (" +
                           (decompress ? "cdma.codec_bytes_per_cycle." + n : std::string("cdma.unit_bytes_per_cycle")) +
                           ") or at least 100 MB/s");
    }
  const double latency_s = static_cast<double>(c.engine.pipeline_latency_cycles) / c.engine.clock_hz;
  if (latency_s > 1e-3)
    throw config_error("cdma.pipeline_latency_cycles / cdma.clock = " + std::to_string(c.engine.pipeline_latency_cycles) +
                       " cycles / " + g(c.engine.clock_hz) + " Hz = " + g(latency_s) +
                       " s per window: expected at most 1 ms");
}

}  // namespace

void validate(const platform_config& c) {
  auto pow2 = [](std::uint64_t v) { return v && !(v & (v - 1)); };
  const int lanes[] = {1, 2, 4, 8, 12, 16, 32};
  if (std::find(std::begin(lanes), std::end(lanes), c.pcie.lanes) == std::end(lanes))
    throw config_error("pcie.lanes = " + std::to_string(c.pcie.lanes) + ": expected 1, 2, 4, 8, 12, 16 or 32");
  if (!pow2(c.pcie.mps)) throw config_error("pcie.mps = " + std::to_string(c.pcie.mps) + ": expected a power of two in [128, 4096]");
  if (!pow2(c.pcie.mrrs)) throw config_error("pcie.mrrs = " + std::to_string(c.pcie.mrrs) + ": expected a power of two in [128, 4096]");
  if (c.pcie.rcb != 64 && c.pcie.rcb != 128) throw config_error("pcie.rcb = " + std::to_string(c.pcie.rcb) + ": expected 64 or 128");
  if (c.engine.window_bytes % 4 != 0)
    throw config_error("cdma.window = " + std::to_string(c.engine.window_bytes) + ": expected a multiple of 4 bytes");
  validate_pcie_credits(c.pcie);
  validate_rates(c);
  // A density profile gives every layer's density: a density set beside it would be recorded
  // but never used (a grid over it ran identical rows).
  if (!c.density_profile.empty() && c.synthetic_density != platform_config{}.synthetic_density)
    throw config_error("density = " + g(c.synthetic_density) + " (--density) cannot be combined with density_profile = \"" +
                       c.density_profile + "\" (--density-profile), which sets every layer's density; expected "
                       "one of them");
  // The DRAM preset fixes the peak bandwidth: say it with the configuration's keys (the
  // model's own message names its struct fields; new-user trial s18).
  if (c.gpu_mem.model == gpu_memory_model::dram) {
    std::string name;
    try {
      name = c.gpu_mem.resolved_dram_preset();
    } catch (const std::invalid_argument&) {
      // an unknown preset: reported below by validate(), naming it
    }
    if (!name.empty()) {
      const dram::dram_spec spec = dram::preset(name);
      const double want = spec.peak_bandwidth_Bps();
      // (validate() also requires the channel count of a GDDR preset; HBM presets set theirs.)
      const std::string channels =
          name.rfind("hbm", 0) == 0 ? ""
                                    : " and gpu_mem.channels=" + std::to_string(spec.channels);
      if (!gpu_memory_params::preset_bandwidth_matches(want, c.gpu_mem.peak_bandwidth_Bps))
        throw config_error("gpu_mem.dram_preset = \"" + name + "\" (" + g(want / 1e9) +
                           " GB/s peak) disagrees with gpu_mem.peak_bandwidth = " +
                           g(c.gpu_mem.peak_bandwidth_Bps / 1e9) +
                           " GB/s; expected both to describe one memory: also set "
                           "--param gpu_mem.peak_bandwidth=" + g(want / 1e9) +
                           "GB/s" + channels + ", use a platform --preset with that "
                           "DRAM (cdma-vp config --presets), or --param gpu_mem.model=bus");
    }
  }
  try {
    c.pcie.validate();
    c.gpu_mem.validate();
  } catch (const std::invalid_argument& e) {
    // The models name their struct fields (link_params.mps); say the configuration keys.
    std::string m = e.what();
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"link_params.", "pcie."},
                                   {"gpu_memory_params.", "gpu_mem."}})
      for (std::size_t at; (at = m.find(from)) != std::string::npos;) m.replace(at, from.size(), to);
    throw config_error(std::string("invalid platform parameter: ") + m);
  }
}

json to_json(const platform_config& cfg) {
  platform_config copy = cfg;
  auto t = table(copy);
  json j = json::object();
  for (auto& p : t) {
    json* node = &j;
    std::string name = p.name;
    std::size_t pos;
    while ((pos = name.find('.')) != std::string::npos) {
      node = &(*node)[name.substr(0, pos)];
      name = name.substr(pos + 1);
    }
    (*node)[name] = p.get();
  }
  return j;
}

std::vector<param_doc> describe_params(const platform_config& cfg) {
  platform_config copy = cfg;
  std::vector<param_doc> out;
  for (auto& p : table(copy)) {
    const json v = p.get();
    std::string text;
    if (v.is_string()) {
      text = v.get<std::string>();
    } else {
      try {
        text = v.dump();
      } catch (const json::type_error&) {
        // A list with a path that is not UTF-8 (json::dump() throws): the paths as they are,
        // which the caller refuses naming the key (load_run_options).
        for (const auto& e : v) text += (text.empty() ? "[\"" : ",\"") + (e.is_string() ? e.get<std::string>() : e.dump()) + "\"";
        text += "]";
      }
    }
    out.push_back({p.name, p.kind, text, p.doc});
  }
  return out;
}

}  // namespace cdma::platform
