// cdma-vp bench NAME [options]: runs one of the registered benchmarks (platform/bench_*.cpp).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <stdexcept>
#include "platform/bench.h"
#include "platform/command.h"
#include "platform/config.h"
#include "platform/outputs.h"
#include "tlm/core/quantity.h"

namespace cdma::platform {

std::vector<bench>& benches() {
  static std::vector<bench> all;
  return all;
}

int bench_usage_error(const std::string& name, const std::string& msg) {
  std::cerr << "cdma-vp: bench " << name << ": " << printable(msg, true) << "\n(see cdma-vp bench " << name << " --help)\n";
  return 2;
}

std::string bench_format_bytes(std::uint64_t b) { return cdma::format_bytes(b); }

namespace {
/// The rule of every bench number (bench_count, bench_bytes): given, and without white space
/// before or after it ("4096 " was a size while "5 " was not a count). Throws
/// std::invalid_argument naming the option and the value, ending in `expect`.
void check_number_text(const std::string& option, const std::string& value, const std::string& expect) {
  if (value.empty()) throw std::invalid_argument(option + " '': no number; " + expect);
  if (std::isspace(static_cast<unsigned char>(value.front())) || std::isspace(static_cast<unsigned char>(value.back())))
    throw std::invalid_argument(option + " '" + value + "': white space around the number; " + expect);
}
}  // namespace

std::uint64_t bench_count(const std::string& option, const std::string& value, std::uint64_t lo,
                          std::uint64_t hi) {
  const std::string range = "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  check_number_text(option, value, range);
  long long v = 0;
  if (!parse_whole(value, v)) {
    double d = 0;
    const std::string why = parse_decimal(value, d);  // why it is not a number, if it is not
    if (why == "too large for a number" || (why.empty() && std::fabs(d) >= 9e18))
      throw std::invalid_argument(option + " '" + value + "': out of range; " + range);
    throw std::invalid_argument(option + " '" + value + "': " + (why.empty() ? "not a whole number" : why) + "; " +
                                range);
  }
  if (v < 0 || static_cast<unsigned long long>(v) < lo || static_cast<unsigned long long>(v) > hi)
    throw std::invalid_argument(option + " '" + value + "': out of range; " + range);
  return static_cast<std::uint64_t>(v);
}

std::uint64_t bench_bytes(const std::string& option, const std::string& value, std::uint64_t lo,
                          std::uint64_t hi, std::uint64_t multiple) {
  std::string expect = "expected a size in bytes from " + bench_format_bytes(lo) + " to " + bench_format_bytes(hi);
  if (multiple > 1) expect += ", a multiple of " + std::to_string(multiple) + " B";
  expect += " (e.g. 4096, 64K, 16M, \"16 MiB\"; units B, kB, MB, GB, KiB, MiB, GiB or K, M, G for KiB, MiB, GiB)";
  check_number_text(option, value, expect);
  std::string s = value;
  // The short binary forms of bench pcie: 4K, 64M, 2G (KiB, MiB, GiB).
  if (!s.empty() && (s.back() == 'K' || s.back() == 'M' || s.back() == 'G')) s += "iB";
  std::uint64_t b = 0;
  try {
    if (hexadecimal(s)) throw quantity_error("not a size");
    b = parse_bytes(s);
  } catch (const quantity_error&) {
    throw std::invalid_argument(option + " '" + value + "': not a size in bytes; " + expect);
  }
  if (b < lo || b > hi) throw std::invalid_argument(option + " '" + value + "': out of range; " + expect);
  if (multiple > 1 && b % multiple != 0)
    throw std::invalid_argument(option + " '" + value + "': " + std::to_string(b) + " B is not a multiple of " +
                                std::to_string(multiple) + " B; " + expect);
  return b;
}

std::vector<std::string> bench_list(const std::string& option, const std::string& value) {
  if (value.empty()) throw std::invalid_argument(option + " '': an empty list; expected comma-separated names");
  std::vector<std::string> items;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = std::min(value.find(',', from), value.size());
    const std::string item = value.substr(from, comma - from);
    if (item.empty())
      throw std::invalid_argument(option + " '" + value + "': an empty item (item " + std::to_string(items.size() + 1) +
                                  "); expected comma-separated names");
    if (std::find(items.begin(), items.end(), item) != items.end())
      throw std::invalid_argument(option + " '" + value + "': '" + item + "' listed twice; expected each once");
    items.push_back(item);
    if (comma == value.size()) break;
    from = comma + 1;
  }
  return items;
}

namespace {

int bench_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << "Usage: cdma-vp bench NAME [options]   (cdma-vp bench NAME --help: its options)\n\nBenchmarks:\n";
    for (const auto& b : benches()) std::cout << "  " << b.name << "  " << b.summary << "\n";
    return args.empty() ? 2 : 0;
  }
  for (const auto& b : benches())
    if (b.name == args[0]) return b.run(std::vector<std::string>(args.begin() + 1, args.end()));
  std::string known;
  for (const auto& b : benches()) known += (known.empty() ? "" : ", ") + b.name;
  std::cerr << "cdma-vp: bench: unknown benchmark '" << args[0] << "'; expected one of: "
            << (known.empty() ? std::string("(none yet)") : known) << "\n(see cdma-vp bench --help)\n";
  return 2;
}

const command_registrar reg({"bench", "run a benchmark: cdma-vp bench NAME (see cdma-vp bench --help)",
                             bench_command});

}  // namespace
}  // namespace cdma::platform
