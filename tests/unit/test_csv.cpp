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

TEST(Csv, SplitGivesTheColumnWhereEachFieldStarts) {
  std::vector<std::string> f;
  std::vector<std::size_t> at;
  // "a, b ,\"c,d\",,e": a at 1, b at 4 (after the space), the quote at 7, the empty field
  // where it would be (after the comma at 12: column 13), e at 14.
  ASSERT_EQ(csv::split("a, b ,\"c,d\",,e", f, &at), "");
  EXPECT_EQ(f, (v{"a", "b", "c,d", "", "e"}));
  EXPECT_EQ(at, (std::vector<std::size_t>{1, 4, 7, 13, 14}));
  ASSERT_EQ(csv::split("x,", f, &at), "");  // a trailing empty field starts after the comma
  EXPECT_EQ(at, (std::vector<std::size_t>{1, 3}));
}

TEST(Csv, HeaderNamesMustBeThereAndUnique) {
  std::vector<std::string> f;
  std::vector<std::size_t> at;
  ASSERT_EQ(csv::split("iteration,layer,zero_fraction", f, &at), "");
  EXPECT_EQ(csv::check_header(f, at), "");
  ASSERT_EQ(csv::split("iteration,layer, layer,zero_fraction", f, &at), "");
  EXPECT_EQ(csv::check_header(f, at),
            "header column \"layer\" appears twice (fields 2 and 3, columns 11 and 18); expected each column name once");
  ASSERT_EQ(csv::split("iteration,,layer", f, &at), "");
  EXPECT_EQ(csv::check_header(f, at), "header field 2 (column 11) has no name; expected a name for every column");
}

TEST(Csv, RowsHaveAsManyFieldsAsTheHeader) {
  std::vector<std::string> f;
  std::vector<std::size_t> at;
  ASSERT_EQ(csv::split("0,0,conv1,0.5", f, &at), "");
  EXPECT_EQ(csv::check_width(f, at, 4), "");
  EXPECT_EQ(csv::check_width(f, at, 5), "4 fields, the header has 5; expected one field per header column");
  // The first extra field is "0.5" at column 11.
  EXPECT_EQ(csv::check_width(f, at, 3),
            "4 fields (the first extra one at column 11), the header has 3; expected one field per header column");
  ASSERT_EQ(csv::split("conv1", f, &at), "");
  EXPECT_EQ(csv::check_width(f, at, 3), "1 field, the header has 3; expected one field per header column");
}

TEST(Csv, ANameFieldMustNotBeEmpty) {
  EXPECT_EQ(csv::check_name("conv1", "layer name", 5), "");
  EXPECT_EQ(csv::check_name("", "layer name", 5), "empty layer name at column 5; expected a name");
}

}  // namespace
