// The input-table CSV dialect (workloads/io/csv.h): fields, RFC 4180 quoting within a line,
// rejected bytes and their shown form in messages. Expectations written by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "workloads/io/csv.h"

namespace csv = cdma::workloads::csv;

namespace {

std::vector<std::string> ok(const std::string& line) {
  std::vector<std::string> f;
  const std::string bad = csv::split(line, f);
  EXPECT_EQ(bad, "") << line;
  return f;
}

std::string problem(const std::string& line) {
  std::vector<std::string> f;
  return csv::split(line, f);
}

using v = std::vector<std::string>;

TEST(Csv, PlainFieldsAreTrimmedAndATrailingCommaIsAnEmptyField) {
  EXPECT_EQ(ok("a,b,c"), (v{"a", "b", "c"}));
  EXPECT_EQ(ok(" a , b\t,c "), (v{"a", "b", "c"}));
  EXPECT_EQ(ok("a,b,"), (v{"a", "b", ""}));
  EXPECT_EQ(ok(""), (v{""}));
  EXPECT_EQ(ok(",,"), (v{"", "", ""}));
}

TEST(Csv, QuotedFieldsAsSpreadsheetsExportThem) {
  EXPECT_EQ(ok("\"conv1\",1.5,3"), (v{"conv1", "1.5", "3"}));
  EXPECT_EQ(ok(" \"conv1\" , 1.5"), (v{"conv1", "1.5"}));           // spaces around the quotes
  EXPECT_EQ(ok("\"a,b\",c"), (v{"a,b", "c"}));                      // comma inside quotes
  EXPECT_EQ(ok("\"say \"\"hi\"\"\",x"), (v{"say \"hi\"", "x"}));    // "" is one quote
  EXPECT_EQ(ok("\"\",x"), (v{"", "x"}));                            // empty quoted field
  EXPECT_EQ(ok("\" keep \""), (v{" keep "}));                       // spaces inside are kept
  EXPECT_EQ(ok("x,\"y\""), (v{"x", "y"}));
}

TEST(Csv, BadLinesSayWhatIsWrongAndWhere) {
  EXPECT_EQ(problem("\"conv1,1,2"), "the quote opened at column 1 is not closed on this line");
  EXPECT_EQ(problem("\"conv1\"x,1"), "text after the closing quote at column 8; expected a comma or the end of the line");
  // Classic Mac line ends: the whole file is one line with CRs in it.
  EXPECT_EQ(problem("layer,forward_ms\rconv1,1"),
            "a carriage return inside the line at column 17 (classic Mac line ends?); expected LF or CRLF line ends");
  EXPECT_EQ(problem(std::string("ab\0c", 4)), "a control byte 0x00 at column 3 (not a text file?)");
  EXPECT_EQ(problem("a\x1b[31m"), "a control byte 0x1B at column 2 (not a text file?)");
  EXPECT_EQ(problem("a\tb,c"), "");  // a tab is white space
}

TEST(Csv, ShownEscapesUnprintableBytesAndShortensLongText) {
  EXPECT_EQ(csv::shown("conv1"), "conv1");
  EXPECT_EQ(csv::shown(std::string("a\0b\r\xff", 5)), "a\\x00b\\x0D\\xFF");
  EXPECT_EQ(csv::shown(std::string(61, 'x')), std::string(60, 'x') + "...");
  EXPECT_EQ(csv::shown(std::string(60, 'x')), std::string(60, 'x'));
}

}  // namespace
