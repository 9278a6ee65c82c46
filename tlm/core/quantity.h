// Parsing and formatting of quantities with units, for configuration files and the command
// line ("850 ns", "12.8 GB/s", "4 KiB", "1 GHz", "7 TFLOP/s"). Pure C++.
//
// Decimal prefixes (k, M, G, T) are powers of 1000, binary ones (Ki, Mi, Gi, Ti) powers of
// 1024: 1 GB/s = 1e9 B/s, 1 KiB = 1024 B. A bare number is taken in the base unit (ps, B/s,
// bytes, Hz, FLOP/s).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include "tlm/core/units.h"

namespace cdma {

/// A quantity that does not parse; what() gives the text and the expected form.
class quantity_error : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

/// True for C's hexadecimal integer / floating forms ("0x10", "-0X1p4"), which strtod and
/// stoll would otherwise read.
bool hexadecimal(const std::string& s);
/// Reads a decimal number: optional sign, digits with an optional fraction, optional exponent
/// (0.5, -1e-3, .25); nothing else (no hexadecimal, inf, nan, spaces or trailing text). A value
/// below the smallest normal double (1e-320) is what strtod makes of it (subnormal, or 0): a
/// number, range-checked by the caller like any other. Returns "" and sets `out`, or returns
/// why the text is refused ("hexadecimal is not accepted", "not a decimal number", "too large
/// for a number").
std::string parse_decimal(const std::string& s, double& out);

/// "850 ns", "1 us", "1.5 ms", "2 s", "400000 ps" or a bare number of ps -> picoseconds.
ps_t parse_time_ps(const std::string& s);
/// "12.8 GB/s", "336e9 B/s", "25 MB/s", "1.5 GiB/s" or a bare number of B/s -> bytes/s.
double parse_rate_Bps(const std::string& s);
/// "4 KiB", "12 GiB", "1 MB", "4096 B" or a bare integer -> bytes.
std::uint64_t parse_bytes(const std::string& s);
/// "1 GHz", "875 MHz" or a bare number of Hz -> Hz.
double parse_frequency_hz(const std::string& s);
/// "7 TFLOP/s", "12.1e12 FLOP/s" or a bare number -> FLOP/s.
double parse_flops(const std::string& s);

/// Shortest readable forms used when the effective configuration is written out.
std::string format_time(ps_t t);          ///< e.g. "400 ns"
std::string format_rate(double Bps);      ///< e.g. "12.8 GB/s"
std::string format_bytes(std::uint64_t b);///< e.g. "12 GiB", "4096 B"
std::string format_frequency(double hz);  ///< e.g. "1 GHz"
std::string format_flops(double f);       ///< e.g. "7 TFLOP/s"
/// A bare number in the fewest digits that read back as `v` (strtod): "32", "16.123456789", "0.1";
/// whole numbers below 1e15 in plain digits ("100", not "1e+02").
std::string format_number(double v);

}  // namespace cdma
