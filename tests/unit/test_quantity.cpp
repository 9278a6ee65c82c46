// Quantities with units in configuration values (tlm/core/quantity.h).
#include <gtest/gtest.h>
#include "tlm/core/quantity.h"

using namespace cdma;

TEST(quantity, times_parse_to_picoseconds) {
  EXPECT_EQ(parse_time_ps("850 ns"), 850000u);
  EXPECT_EQ(parse_time_ps("1 us"), 1000000u);
  EXPECT_EQ(parse_time_ps("1.5 ms"), 1500000000u);
  EXPECT_EQ(parse_time_ps("2 s"), 2000000000000u);
  EXPECT_EQ(parse_time_ps("400000"), 400000u);  // bare number: ps
  EXPECT_EQ(parse_time_ps(" 10ns "), 10000u);
}

TEST(quantity, rates_are_decimal_gigabytes) {
  EXPECT_DOUBLE_EQ(parse_rate_Bps("12.8 GB/s"), 12.8e9);
  EXPECT_DOUBLE_EQ(parse_rate_Bps("336e9 B/s"), 336e9);
  EXPECT_DOUBLE_EQ(parse_rate_Bps("1 GiB/s"), 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_rate_Bps("25 MB/s"), 25e6);
}

TEST(quantity, sizes_and_other_units) {
  EXPECT_EQ(parse_bytes("4 KiB"), 4096u);
  EXPECT_EQ(parse_bytes("12 GiB"), 12ull << 30);
  EXPECT_EQ(parse_bytes("1 MB"), 1000000u);
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_DOUBLE_EQ(parse_frequency_hz("1 GHz"), 1e9);
  EXPECT_DOUBLE_EQ(parse_flops("7 TFLOP/s"), 7e12);
}

TEST(quantity, bad_text_names_the_value_and_the_expected_form) {
  for (const char* bad : {"abc", "12 parsecs", "-5 ns", "", "1.5 B"}) {
    try {
      if (std::string(bad) == "1.5 B") parse_bytes(bad); else parse_time_ps(bad);
      FAIL() << bad;
    } catch (const quantity_error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("expected"), std::string::npos) << e.what();
    }
  }
}

TEST(quantity, formatting_round_trips) {
  EXPECT_EQ(format_time(400000), "400 ns");
  EXPECT_EQ(format_time(1000000), "1 us");
  EXPECT_EQ(format_bytes(4096), "4 KiB");
  EXPECT_EQ(format_bytes(12ull << 30), "12 GiB");
  EXPECT_EQ(format_bytes(1000), "1000 B");
  EXPECT_EQ(format_rate(336e9), "336 GB/s");
  EXPECT_EQ(parse_rate_Bps(format_rate(12.8e9)), 12.8e9);
  EXPECT_EQ(parse_time_ps(format_time(123456)), 123456u);
}

TEST(quantity, formatting_keeps_every_digit_that_matters) {
  // `config --dump` is meant to reproduce the run; a 6-digit form rounded these (session 23).
  EXPECT_EQ(format_rate(547.61234e9), "547.61234 GB/s");
  EXPECT_EQ(format_frequency(1.23456789e9), "1.23456789 GHz");
  EXPECT_EQ(format_flops(12.1234567e12), "12.1234567 TFLOP/s");
  EXPECT_EQ(format_time(1'234'567'000), "1234567 ns");  // was "1.23457e+06 ns"
  // Whole numbers in plain digits, not an exponent: the largest allowed bandwidth, 1 PB/s.
  EXPECT_EQ(format_rate(1e15), "1000000 GB/s");
  EXPECT_EQ(format_rate(336e9), "336 GB/s");  // short forms stay short
  EXPECT_EQ(format_rate(12.8e9), "12.8 GB/s");
  EXPECT_EQ(format_number(100), "100");  // not "1e+02"
  EXPECT_EQ(format_number(16.123456789), "16.123456789");
  EXPECT_EQ(format_number(0.1), "0.1");
  // Any value reads back as itself: 1/3 GB/s needs 17 digits (0.333... x 1e9 B/s).
  for (double x : {1e9 / 3, 547.61234e9, 15.754e9 * 7 / 9, 1e8 + 1, 123456789012345.0, 2.0 / 3}) {
    EXPECT_EQ(parse_rate_Bps(format_rate(x)), x) << format_rate(x);
    EXPECT_EQ(parse_frequency_hz(format_frequency(x)), x) << format_frequency(x);
    EXPECT_EQ(parse_flops(format_flops(x)), x) << format_flops(x);
  }
}
