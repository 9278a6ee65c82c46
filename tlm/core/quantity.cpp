#include "tlm/core/quantity.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>

namespace cdma {

bool hexadecimal(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  return i + 1 < s.size() && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
}

std::string parse_decimal(const std::string& s, double& out) {
  std::size_t i = 0, digits = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits > 0 && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1, exp_digits = 0;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j, ++exp_digits;
    if (exp_digits > 0) i = j;
  }
  if (digits == 0 || i != s.size())
    return hexadecimal(s) ? "hexadecimal is not accepted" : "not a decimal number";
  errno = 0;
  const double v = std::strtod(s.c_str(), nullptr);
  if (errno == ERANGE && std::isinf(v)) return "too large for a number";
  out = v;
  return "";
}

namespace {

/// Splits "12.8 GB/s" into 12.8 and "GB/s"; throws on no number or trailing junk in it.
std::pair<double, std::string> split(const std::string& s, const char* expected) {
  const char* p = s.c_str();
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;
  char* end = nullptr;
  const double v = std::strtod(p, &end);
  if (end == p || !std::isfinite(v))
    throw quantity_error("'" + s + "' is not a number with a unit; expected " + expected);
  std::string unit(end);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.erase(0, 1);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  if (v < 0) throw quantity_error("'" + s + "' is negative; expected " + expected);
  return {v, unit};
}

double scale(const std::string& s, const std::string& unit,
             const std::vector<std::pair<const char*, double>>& table, const char* expected) {
  for (const auto& [name, f] : table)
    if (unit == name) return f;
  throw quantity_error("'" + s + "': unknown unit '" + unit + "'; expected " + expected);
}

/// `x / f` written so that reading it back (the number times `f`, as the parse functions do)
/// gives `x` again, with the fewest significant digits from 6 up (a 6-digit form turned "547.61234 GB/s" into "547.612 GB/s" in `config --dump`,
/// whose output is meant to reproduce the run; session 23); whole numbers below 1e15 in plain
/// digits ("1000000 GB/s", not "1e+06 GB/s"). "" when no decimal in that unit reads back as `x`
/// (e.g. a rate given in MB/s that no GB/s figure multiplies back to); with f = 1 never "".
std::string exact(double x, double f) {
  const auto reads_back = [&](const char* t) { return std::strtod(t, nullptr) * f == x; };
  const double v = x / f;
  char b[64];
  if (std::fabs(v) < 1e15 && v == std::floor(v)) {
    std::snprintf(b, sizeof b, "%.0f", v);
    if (reads_back(b)) return b;
  }
  for (int p = 6; p <= 17; ++p)
    for (double c : {v, std::nextafter(v, HUGE_VAL), std::nextafter(v, -HUGE_VAL)}) {
      std::snprintf(b, sizeof b, "%.*g", p, c);
      if (reads_back(b)) return b;
    }
  return "";
}

/// `x` in the first unit of `units` (largest first) it reaches and is exact in, else in the
/// base unit `base`.
std::string with_unit(double x, std::initializer_list<std::pair<double, const char*>> units, const char* base) {
  for (const auto& [f, name] : units)
    if (x >= f)
      if (std::string t = exact(x, f); !t.empty()) return t + " " + name;
  return exact(x, 1.0) + " " + base;
}

}  // namespace

ps_t parse_time_ps(const std::string& s) {
  static const char* exp = "a time such as \"850 ns\", \"1 us\", \"2 ms\" (units ps, ns, us, ms, s)";
  auto [v, u] = split(s, exp);
  const double f = scale(s, u, {{"", 1}, {"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}}, exp);
  const double ps = v * f;
  if (ps > 1.8e19) throw quantity_error("'" + s + "' is too large; expected " + std::string(exp));
  return static_cast<ps_t>(std::llround(ps));
}
double parse_rate_Bps(const std::string& s) {
  static const char* exp = "a bandwidth such as \"12.8 GB/s\" (units B/s, kB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s)";
  auto [v, u] = split(s, exp);
  return v * scale(s, u, {{"", 1}, {"B/s", 1}, {"kB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9},
                          {"TB/s", 1e12}, {"KiB/s", 1024.0}, {"MiB/s", 1048576.0},
                          {"GiB/s", 1073741824.0}}, exp);
}

std::uint64_t parse_bytes(const std::string& s) {
  static const char* exp = "a size such as \"4 KiB\", \"12 GiB\", \"4096\" (units B, kB, MB, GB, KiB, MiB, GiB, TiB)";
  auto [v, u] = split(s, exp);
  const double b = v * scale(s, u, {{"", 1}, {"B", 1}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
                                    {"TB", 1e12}, {"KiB", 1024.0}, {"MiB", 1048576.0},
                                    {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}}, exp);
  if (b != std::floor(b) || b > 1.8e19)
    throw quantity_error("'" + s + "' is not a whole number of bytes; expected " + std::string(exp));
  return static_cast<std::uint64_t>(b);
}

double parse_frequency_hz(const std::string& s) {
  static const char* exp = "a frequency such as \"1 GHz\" (units Hz, kHz, MHz, GHz)";
  auto [v, u] = split(s, exp);
  return v * scale(s, u, {{"", 1}, {"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}}, exp);
}

double parse_flops(const std::string& s) {
  static const char* exp = "a throughput such as \"7 TFLOP/s\" (units FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s)";
  auto [v, u] = split(s, exp);
  return v * scale(s, u, {{"", 1}, {"FLOP/s", 1}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12},
                          {"PFLOP/s", 1e15}}, exp);
}

std::string format_time(ps_t t) {
  if (t == 0) return "0 ns";
  const std::pair<ps_t, const char*> units[] = {{ps_per_s, "s"}, {1000000000ull, "ms"}, {ps_per_us, "us"},
                                                {ps_per_ns, "ns"}};
  // Whole numbers of the largest unit that divides t: exact ("1234567 ns" was "1.23457e+06 ns").
  for (const auto& [f, name] : units)
    if (t % f == 0) return std::to_string(t / f) + " " + name;
  return std::to_string(t) + " ps";
}

std::string format_rate(double Bps) { return with_unit(Bps, {{1e9, "GB/s"}, {1e6, "MB/s"}}, "B/s"); }

std::string format_bytes(std::uint64_t b) {
  const std::pair<std::uint64_t, const char*> units[] = {
      {1ull << 40, "TiB"}, {1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (const auto& [f, name] : units)
    if (b >= f && b % f == 0) return std::to_string(b / f) + " " + name;
  return std::to_string(b) + " B";
}

std::string format_frequency(double hz) { return with_unit(hz, {{1e9, "GHz"}, {1e6, "MHz"}}, "Hz"); }

std::string format_number(double v) { return exact(v, 1.0); }

std::string format_flops(double f) { return with_unit(f, {{1e12, "TFLOP/s"}, {1e9, "GFLOP/s"}}, "FLOP/s"); }

}  // namespace cdma
