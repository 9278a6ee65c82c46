// GPU compute model: presets and the per-layer time table (CSV) override.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "workloads/compute/roofline.h"

namespace wl = cdma::workloads;

namespace {

std::string write_tmp(const std::string& text) {
  static int n = 0;
  const std::string p = "/tmp/cdma_times_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".csv";
  std::ofstream(p) << text;
  return p;
}

TEST(ComputeModel, Presets) {
  // Datasheet values (roofline.h): FLOP/s fp32, DRAM B/s.
  EXPECT_DOUBLE_EQ(wl::gpu_preset("titanx").peak_flops, 7e12);
  EXPECT_DOUBLE_EQ(wl::gpu_preset("TitanXp").dram_Bps, 547.6e9);
  EXPECT_DOUBLE_EQ(wl::gpu_preset("v100").dram_Bps, 900e9);
  EXPECT_DOUBLE_EQ(wl::gpu_preset("a100").peak_flops, 19.5e12);
  EXPECT_DOUBLE_EQ(wl::gpu_preset("h100").dram_Bps, 3350e9);
  EXPECT_EQ(wl::gpu_preset_names().size(), 5u);
  try {
    wl::gpu_preset("k80");
    ADD_FAILURE();
  } catch (const wl::gpu_params_error& e) {
    EXPECT_NE(std::string(e.what()).find("k80"), std::string::npos);
  }
}

// The roofline times of a 3-conv synthetic chain on the Titan X, with the table `text` applied.
std::vector<wl::layer_time> with_table(const std::string& text) {
  const wl::network net = wl::synthetic_chain(1, 3);
  const std::string p = write_tmp(text);
  const auto t = wl::apply_time_table(p, net, wl::roofline_times(net, wl::titan_x_maxwell()));
  std::remove(p.c_str());
  return t;
}

TEST(ComputeModel, TimeTableOverridesListedLayers) {
  const auto base = wl::roofline_times(wl::synthetic_chain(1, 3), wl::titan_x_maxwell());
  const auto t = with_table("layer,forward_ms,backward_ms\n# measured\nsyn_conv_2,1.5,3\n\n");
  EXPECT_EQ(t[1].forward, 1'500'000'000);  // 1.5 ms = 1.5e9 ps
  EXPECT_EQ(t[1].backward, 3'000'000'000);
  EXPECT_EQ(t[0].forward, base[0].forward);
  EXPECT_EQ(t[2].backward, base[2].backward);
}

void expect_table_error(const std::string& text, const std::string& line, const char* what) {
  const wl::network net = wl::synthetic_chain(1, 3);
  const std::string p = write_tmp(text);
  try {
    wl::apply_time_table(p, net, {});
    ADD_FAILURE() << text;
  } catch (const wl::layer_time_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(p + ":" + line), std::string::npos) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
  std::remove(p.c_str());
}

TEST(ComputeModel, TimeTableErrorsNameFileAndLine) {
  expect_table_error("layer,fwd,bwd\n", "1", "header");
  expect_table_error("layer,forward_ms,backward_ms\nsyn_conv_1,1\n", "2", "the header has 3");
  expect_table_error("layer,forward_ms,backward_ms\nsyn_conv_1,1,2\nnope,1,2\n", "3", "\"nope\"");
  expect_table_error("layer,forward_ms,backward_ms\nsyn_conv_1,x,2\n", "2", "forward_ms");
  expect_table_error("layer,forward_ms,backward_ms\nsyn_conv_1,1,-2\n", "2", "backward_ms");
  expect_table_error("layer,forward_ms,backward_ms\nsyn_conv_1,1,2\nsyn_conv_1,1,2\n", "3", "twice");
  // Hexadecimal was read as a number (0x10 = 16 ms); nan / inf are not decimal numbers.
  expect_table_error("layer,forward_ms,backward_ms\nsyn_conv_1,0x10,2\n", "2",
                     "forward_ms \"0x10\": hexadecimal is not accepted");
  expect_table_error("layer,forward_ms,backward_ms\nsyn_conv_1,1,inf\n", "2", "backward_ms \"inf\": not a decimal number");
  expect_table_error("layer,forward_ms,backward_ms\nsyn_conv_1,1,-2\n", "2", "backward_ms \"-2\" is negative");
  // Classic Mac line ends (CR only) and binary bytes are named, not echoed raw.
  expect_table_error("layer,forward_ms,backward_ms\rsyn_conv_1,1,2\r", "1", "carriage return inside the line");
  expect_table_error(std::string("layer,forward_ms,backward_ms\nsyn\0conv_1,1,2\n", 44), "2",
                     "control byte 0x00 at column 4");
  expect_table_error("layer,forward_ms,backward_ms\n\"syn_conv_1,1,2\n", "2", "quote opened at column 1 is not closed");
  expect_table_error("layer,forward_ms,backward_ms\nsyn_conv_9\xff,1,2\n", "2", "layer \"syn_conv_9\\xFF\" is not a layer");
  // A directory is said to be one (was "empty file").
  try {
    wl::apply_time_table(::testing::TempDir(), wl::synthetic_chain(1, 3), {});
    ADD_FAILURE();
  } catch (const wl::layer_time_error& e) {
    EXPECT_NE(std::string(e.what()).find(": is a directory; expected a CSV file"), std::string::npos) << e.what();
  }
}

// The message apply_time_table gives for `text` ("" and a failure if it accepts it), with the
// temporary file's path replaced by FILE.
std::string table_error(const std::string& text) {
  const std::string p = write_tmp(text);
  std::string m;
  try {
    wl::apply_time_table(p, wl::synthetic_chain(1, 3), {});
    ADD_FAILURE() << text;
  } catch (const wl::layer_time_error& e) {
    m = e.what();
    if (m.rfind(p, 0) == 0) m = "FILE" + m.substr(p.size());
  }
  std::remove(p.c_str());
  return m;
}

TEST(ComputeModel, TimeTableRowWidthAndEmptyNamesAreNamedWithTheirColumn) {
  // The row/field checks shared with the density profile (workloads/io/csv.h).
  EXPECT_EQ(table_error("layer,forward_ms,backward_ms\nsyn_conv_1,1,2,3\n"),
            "FILE:2: 4 fields (the first extra one at column 16), the header has 3; expected one field per header "
            "column (expected rows layer,forward_ms,backward_ms as the header orders them)");
  EXPECT_EQ(table_error("layer,forward_ms,backward_ms\nsyn_conv_1,1\n"),
            "FILE:2: 2 fields, the header has 3; expected one field per header column (expected rows "
            "layer,forward_ms,backward_ms as the header orders them)");
  // An empty layer name was "layer \"\" is not a layer of network ...".
  EXPECT_EQ(table_error("layer,forward_ms,backward_ms\n ,1,2\n"),
            "FILE:2: empty layer name at column 1; expected a name (expected rows layer,forward_ms,backward_ms, "
            "layer a layer of network synthetic)");
  EXPECT_EQ(table_error("layer,forward_ms,backward_ms\n\"\",1,2\n"),
            "FILE:2: empty layer name at column 1; expected a name (expected rows layer,forward_ms,backward_ms, "
            "layer a layer of network synthetic)");
  // A duplicate header column is a wrong header (shared check with the density profile).
  EXPECT_EQ(table_error("layer,layer,backward_ms\n"),
            "FILE:1: header column \"layer\" appears twice (fields 1 and 2, columns 1 and 7); expected each column "
            "name once; expected a header with the columns layer, forward_ms and backward_ms (in any order; other "
            "columns are ignored)"
            ", or layer, forward_s and backward_s (seconds, as cdma-vp run --csv writes them)");
  // A missing column is named, with the header as read.
  EXPECT_EQ(table_error("layer,fwd_ms,bwd_ms\n"),
            "FILE:1: the header lacks the columns forward_ms, backward_ms (header: \"layer,fwd_ms,bwd_ms\"); expected "
            "a header with the columns layer, forward_ms and backward_ms (in any order; other columns are ignored)"
            ", or layer, forward_s and backward_s (seconds, as cdma-vp run --csv writes them)");
  EXPECT_EQ(table_error("name,forward_ms,backward_ms\n"),
            "FILE:1: the header lacks the column layer (header: \"name,forward_ms,backward_ms\"); expected a header "
            "with the columns layer, forward_ms and backward_ms (in any order; other columns are ignored)"
            ", or layer, forward_s and backward_s (seconds, as cdma-vp run --csv writes them)");
}

TEST(ComputeModel, TimeTableColumnsInAnyOrderWithOtherColumnsIgnored) {
  // A profiler's export: the three columns in another order among columns the reader does not
  // use (new-user trial, session 19, F9). Same values as TimeTableOverridesListedLayers.
  const auto t = with_table("gpu,backward_ms,kernels,layer,forward_ms\nTitanX,3,12,syn_conv_2,1.5\n");
  EXPECT_EQ(t[1].forward, 1'500'000'000);  // 1.5 ms = 1.5e9 ps
  EXPECT_EQ(t[1].backward, 3'000'000'000);
  // The ignored columns are not read as numbers, but a row still has one field per column.
  EXPECT_EQ(table_error("backward_ms,layer,forward_ms,note\n4,syn_conv_1,x,\"first, warm\"\n"),
            "FILE:2: forward_ms \"x\": not a decimal number; expected milliseconds >= 0 written in decimal");
  EXPECT_EQ(table_error("backward_ms,layer,forward_ms\n4, ,1\n"),
            "FILE:2: empty layer name at column 3; expected a name (expected rows layer,forward_ms,backward_ms, "
            "layer a layer of network synthetic)");
}

TEST(ComputeModel, TimeTableInSecondsAsRunCsvWritesIt) {
  // The columns forward_s and backward_s (seconds, as `cdma-vp run --csv` writes them): that
  // file pins another run's kernel times (new-user trial s22 F5 converted it by hand). Same
  // values as TimeTableOverridesListedLayers: 0.0015 s = 1.5 ms = 1.5e9 ps.
  const auto t = with_table("layer,offload_key,forward_s,backward_s,bytes\nsyn_conv_2,,0.0015,0.003,12\n");
  EXPECT_EQ(t[1].forward, 1'500'000'000);
  EXPECT_EQ(t[1].backward, 3'000'000'000);
  // The seconds of a ps-exact CSV cell come back to the ps: 7.74762e-07 s = 774 762 ps.
  EXPECT_EQ(with_table("layer,forward_s,backward_s\nsyn_conv_2,7.74762e-07,1.549524e-06\n")[1].forward, 774'762);
  // Both units in one header: refused (which pair is meant is unknown; 9 s against 1.5 ms here).
  const std::string both =
      "FILE:1: the header has both millisecond (forward_ms, backward_ms) and second (forward_s, backward_s) "
      "columns; expected one unit: remove or rename the columns of the other";
  EXPECT_EQ(table_error("layer,forward_s,backward_s,forward_ms,backward_ms\nsyn_conv_2,9,9,1.5,3\n"), both);
  EXPECT_EQ(table_error("layer,forward_ms,backward_ms,backward_s\nsyn_conv_2,1.5,3,9\n"), both);
  // Errors name the column and the unit; the bound is 10 s in either unit.
  EXPECT_EQ(table_error("layer,forward_s,backward_s\nsyn_conv_1,0.001,-2\n"),
            "FILE:2: backward_s \"-2\" is negative; expected seconds >= 0");
  EXPECT_EQ(table_error("layer,forward_s,backward_s\nsyn_conv_1,11,0\n"),
            "FILE:2: forward_s \"11\" of layer \"syn_conv_1\" is above 10 s (more than any real GPU layer "
            "takes; the bound keeps simulated time finite); expected seconds in [0, 10]");
  // In milliseconds the bound is given in both units: 10000 ms = 10 s.
  EXPECT_EQ(table_error("layer,forward_ms,backward_ms\nsyn_conv_1,0,10000.5\n"),
            "FILE:2: backward_ms \"10000.5\" of layer \"syn_conv_1\" is above 10000 ms (10 s, more than any real GPU "
            "layer takes; the bound keeps simulated time finite); expected milliseconds in [0, 10000]");
  // A seconds header lacking a column names the missing seconds column (breaker s23 #7: it
  // named forward_ms, backward_ms, neither of which the header was meant to have).
  EXPECT_EQ(table_error("layer,forward_s\nsyn_conv_1,1\n"),
            "FILE:1: the header lacks the column backward_s (header: \"layer,forward_s\"); expected a "
            "header with the columns layer, forward_ms and backward_ms (in any order; other columns are ignored), "
            "or layer, forward_s and backward_s (seconds, as cdma-vp run --csv writes them)");
  EXPECT_EQ(table_error("name,backward_s,forward_s\nsyn_conv_1,1,1\n").rfind(
                "FILE:1: the header lacks the column layer (header: \"name,backward_s,forward_s\")", 0),
            0u);
}

TEST(ComputeModel, TimeTableWithOneMillisecondColumnNamesTheOther) {
  // Breaker s22 brk2: a millisecond column beside a complete seconds pair ("layer,forward_ms,
  // forward_s,backward_s": backward_ms missing) read the seconds and ignored forward_ms
  // silently. Any header with columns of both units is refused (session 23; with both pairs
  // complete the milliseconds used to win silently, TimeTableInSecondsAsRunCsvWritesIt).
  const std::string both =
      "FILE:1: the header has both millisecond (forward_ms, backward_ms) and second (forward_s, backward_s) "
      "columns; expected one unit: remove or rename the columns of the other";
  EXPECT_EQ(table_error("layer,forward_ms,forward_s,backward_s\nsyn_conv_1,2,1,1\n"), both);
  EXPECT_EQ(table_error("layer,backward_ms,forward_s,backward_s\nsyn_conv_1,2,1,1\n"), both);
  // One millisecond column alone names the other.
  EXPECT_EQ(table_error("layer,forward_ms\nsyn_conv_1,2\n").rfind(
                "FILE:1: the header lacks the column backward_ms (header: \"layer,forward_ms\")", 0),
            0u);
  // Seconds alone still read: 1 s = 1e12 ps.
  const auto t = with_table("layer,forward_s,backward_s\nsyn_conv_2,1,0.5\n");
  EXPECT_EQ(t[1].forward, 1'000'000'000'000);
  EXPECT_EQ(t[1].backward, 500'000'000'000);
}

TEST(ComputeModel, TimeTableTakesTinyTimesAsTheNumbersTheyAre) {
  // 1e-320 ms is a number (subnormal): it was refused as "not a number >= 0"; it rounds to
  // 0 ps (1e-320 x 1e9 ps).
  const auto t = with_table("layer,forward_ms,backward_ms\nsyn_conv_2,1e-320,0.000001\n");
  EXPECT_EQ(t[1].forward, 0);
  EXPECT_EQ(t[1].backward, 1000);  // 1e-6 ms = 1 ns = 1000 ps
  // A UTF-8 byte-order mark before the header (spreadsheet export) is not part of it.
  const auto u = with_table("\xEF\xBB\xBFlayer,forward_ms,backward_ms\r\nsyn_conv_2, 2 ,4\r\n");
  EXPECT_EQ(u[1].forward, 2'000'000'000);
  EXPECT_EQ(u[1].backward, 4'000'000'000);
  // Quoted fields (spreadsheet export) read as their text.
  const auto q = with_table("\"layer\",\"forward_ms\",\"backward_ms\"\n\"syn_conv_2\",\"2.5\",4\n");
  EXPECT_EQ(q[1].forward, 2'500'000'000);
  EXPECT_EQ(q[1].backward, 4'000'000'000);
}

}  // namespace
