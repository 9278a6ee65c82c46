// Benchmarks of `cdma-vp bench NAME`. Each lives in platform/bench_<name>.cpp, linked into
// the executable, and registers itself with a static `bench_registrar`. Benchmarks print
// figures measured side by side in one run (ratios), never pass/fail on wall time.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cdma::platform {

struct bench {
  std::string name;
  std::string summary;
  std::function<int(const std::vector<std::string>& args)> run;  ///< args after the bench name
};

std::vector<bench>& benches();

struct bench_registrar {
  explicit bench_registrar(bench b) { benches().push_back(std::move(b)); }
};

// Option values of the benchmarks, read as `cdma-vp run` reads them. Each throws
// std::invalid_argument with a message naming the option, the value as given and what is
// allowed (the caller prints it with bench_usage_error: exit 2, nothing measured). A number
// (bench_count, bench_bytes) has no white space before or after it ("5 ", " 4096").

/// A bad option of `cdma-vp bench NAME`: prints "cdma-vp: bench NAME: <msg>" and
/// "(see cdma-vp bench NAME --help)" on stderr; returns 2.
int bench_usage_error(const std::string& name, const std::string& msg);

/// A whole number in [lo, hi], written in decimal as the configuration reads integers
/// (parse_whole: 1000, 1e3, 1000.0; not -5, 2.5, 10xyz, 0x10, "" or beyond the range).
std::uint64_t bench_count(const std::string& option, const std::string& value, std::uint64_t lo,
                          std::uint64_t hi);

/// A size in bytes in [lo, hi] and a multiple of `multiple`: a whole number of bytes with an
/// optional unit as in the configuration (B, kB, MB, GB, TB = powers of 1000; KiB, MiB, GiB,
/// TiB = powers of 1024; "16 MiB", "16MiB", "1e6") or K, M, G for KiB, MiB, GiB ("64M").
/// No hexadecimal, negative, fractional or trailing text.
std::uint64_t bench_bytes(const std::string& option, const std::string& value, std::uint64_t lo,
                          std::uint64_t hi, std::uint64_t multiple = 1);

/// A comma-separated list: at least one item, no empty item (",a", "a,,b"), no item twice.
std::vector<std::string> bench_list(const std::string& option, const std::string& value);

/// "64 KiB" / "2 GiB" / "1000 B": a byte count as the messages show it.
std::string bench_format_bytes(std::uint64_t b);

}  // namespace cdma::platform
