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
