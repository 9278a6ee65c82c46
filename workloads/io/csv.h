// The small CSV dialect of the project's input tables (layer-time table, density profile):
// comma-separated fields, surrounding spaces ignored, CRLF or LF line ends, an optional UTF-8
// byte-order mark before the header, and RFC 4180 quoting within one line ("conv1" reads as
// conv1, "a,b" as a,b, "" inside quotes as one "), as spreadsheet programs export it. A field
// never spans lines. The row and field checks both tables make (header names present and
// unique, as many fields per row as the header, no empty name) are here too, so their messages
// read the same. Pure C++.
#pragma once
#include <cctype>
#include <cstdio>
#include <algorithm>
#include <string>
#include <vector>

namespace cdma::workloads::csv {

/// `s` without leading and trailing white space.
inline std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

/// Prepares line `lineno` (1-based) of a file: drops a trailing CR and, on line 1, a UTF-8
/// byte-order mark (EF BB BF, as some spreadsheet programs write it).
inline void clean_line(std::string& line, std::size_t lineno) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (lineno == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
}

/// `s` as it may appear in an error message: bytes outside printable ASCII (control bytes,
/// NUL, bytes of other encodings) written as \xNN, at most `max` characters of the text and
/// "..." after a longer one.
inline std::string shown(const std::string& s, std::size_t max = 60) {
  std::string out;
  std::size_t n = 0;
  for (const char ch : s) {
    if (n++ == max) return out + "...";
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F) {
      out += ch;
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02X", c);
      out += b;
    }
  }
  return out;
}

/// `items` joined with ", " for a message, at most `max_shown` of them: a longer list ends with
/// ", ... and N more" (a file with thousands of bad names gives a readable line: breaker s20).
inline std::string joined(const std::vector<std::string>& items, std::size_t max_shown = 20) {
  std::string out;
  const std::size_t n = std::min(items.size(), max_shown);
  for (std::size_t i = 0; i < n; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > n) out += (n ? ", ... and " : "... and ") + std::to_string(items.size() - n) + " more";
  return out;
}

/// Splits one cleaned line (clean_line) into its fields, each trimmed; "a,b," has three fields
/// (the last empty). A field whose first non-space character is a double quote is quoted: it
/// runs to the closing quote, "" inside it is one quote, and only spaces may follow it before
/// the next comma. Returns "" on success, else what is wrong (for the caller's message, which
/// adds the file, line and expected form): a carriage return inside the line (classic Mac
/// line ends), a NUL or other control byte (a binary file?), an unterminated quote, or text
/// after a closing quote.
/// `columns`, if given, receives the 1-based column where each field starts (its first
/// non-space character or opening quote; for an empty field, where it would be), for messages.
inline std::string split(const std::string& line, std::vector<std::string>& out,
                         std::vector<std::size_t>* columns = nullptr) {
  out.clear();
  if (columns) columns->clear();
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c == '\r')
      return "a carriage return inside the line at column " + std::to_string(i + 1) +
             " (classic Mac line ends?); expected LF or CRLF line ends";
    if ((c < 0x20 && c != '\t') || c == 0x7F) {
      char b[8];
      std::snprintf(b, sizeof b, "0x%02X", c);
      return std::string("a control byte ") + b + " at column " + std::to_string(i + 1) + " (not a text file?)";
    }
  }
  std::size_t pos = 0;
  for (;;) {
    const std::size_t start = pos;
    while (pos < line.size() && std::isspace(static_cast<unsigned char>(line[pos]))) ++pos;
    if (columns) {  // an empty or all-space field: where it starts
      const bool blank = pos >= line.size() || line[pos] == ',';
      columns->push_back((blank ? start : pos) + 1);
    }
    std::string field;
    if (pos < line.size() && line[pos] == '"') {
      const std::size_t open = pos++;
      for (;;) {
        if (pos >= line.size())
          return "the quote opened at column " + std::to_string(open + 1) + " is not closed on this line";
        if (line[pos] == '"') {
          if (pos + 1 < line.size() && line[pos + 1] == '"') {
            field += '"';
            pos += 2;
            continue;
          }
          ++pos;
          break;
        }
        field += line[pos++];
      }
      while (pos < line.size() && std::isspace(static_cast<unsigned char>(line[pos]))) ++pos;
      if (pos < line.size() && line[pos] != ',')
        return "text after the closing quote at column " + std::to_string(pos + 1) +
               "; expected a comma or the end of the line";
    } else {
      const std::size_t comma = line.find(',', pos);
      field = trim(line.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      pos = comma == std::string::npos ? line.size() : comma;
    }
    out.push_back(std::move(field));
    if (pos >= line.size()) return "";
    ++pos;  // the comma
  }
}

/// Checks a header row (its fields and their columns from split): every column has a name
/// and no name appears twice. Returns "" or what is wrong, naming the column(s), for the
/// caller's message (which adds the file, line and expected form).
inline std::string check_header(const std::vector<std::string>& names, const std::vector<std::size_t>& columns) {
  auto col = [&](std::size_t i) { return i < columns.size() ? columns[i] : i + 1; };
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty())
      return "header field " + std::to_string(i + 1) + " (column " + std::to_string(col(i)) +
             ") has no name; expected a name for every column";
    for (std::size_t j = 0; j < i; ++j)
      if (names[j] == names[i])
        return "header column \"" + shown(names[i]) + "\" appears twice (fields " + std::to_string(j + 1) + " and " +
               std::to_string(i + 1) + ", columns " + std::to_string(col(j)) + " and " + std::to_string(col(i)) +
               "); expected each column name once";
  }
  return "";
}

/// Finds the named columns in a header row (already checked by check_header): `index[k]` is
/// the position of `required[k]` among `names`; other columns may stand anywhere and are
/// left to the caller (ignored by the readers here). Returns "" or what is wrong, naming every
/// required column the header lacks and the header's own names, for the caller's message
/// (and, for a header column that differs from a missing one only in case, that names are
/// case-sensitive).
inline std::string find_columns(const std::vector<std::string>& names, const std::vector<std::string>& required,
                                std::vector<std::size_t>& index) {
  index.assign(required.size(), 0);
  std::string missing;
  for (std::size_t k = 0; k < required.size(); ++k) {
    std::size_t i = 0;
    while (i < names.size() && names[i] != required[k]) ++i;
    if (i == names.size())
      missing += (missing.empty() ? "" : ", ") + required[k];
    else
      index[k] = i;
  }
  if (missing.empty()) return "";
  std::string have;
  for (const auto& n : names) have += (have.empty() ? "" : ",") + n;
  // A column named like a missing one but for case ("Layer"): say that names are
  // case-sensitive (new-user trial s23 F4).
  auto lower = [](std::string t) {
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  std::string cased;
  for (std::size_t k = 0; k < required.size(); ++k)
    for (const auto& n : names)
      if (n != required[k] && lower(n) == lower(required[k]) &&
          std::find(names.begin(), names.end(), required[k]) == names.end())
        cased += (cased.empty() ? "" : ", ") + ("\"" + shown(n) + "\" to " + required[k]);
  return "the header lacks the column" + std::string(missing.find(',') == std::string::npos ? " " : "s ") + missing +
         " (header: \"" + shown(have) + "\")" +
         (cased.empty() ? "" : "; column names are case-sensitive: rename " + cased);
}

/// Checks that a data row has as many fields as the header. Returns "" or what is wrong
/// ("3 fields, the header has 4" / "5 fields (the first extra one at column 19), the header has
/// 4"), for the caller's message (which adds the file, line and expected form).
inline std::string check_width(const std::vector<std::string>& fields, const std::vector<std::size_t>& columns,
                               std::size_t header_fields) {
  if (fields.size() == header_fields) return "";
  std::string m = std::to_string(fields.size()) + (fields.size() == 1 ? " field" : " fields");
  if (fields.size() > header_fields && header_fields < columns.size())
    m += " (the first extra one at column " + std::to_string(columns[header_fields]) + ")";
  return m + ", the header has " + std::to_string(header_fields) + "; expected one field per header column";
}

/// Checks that a field which names something (a layer) is not empty. Returns "" or what is
/// wrong, naming the field and its column.
inline std::string check_name(const std::string& field, const char* what, std::size_t column) {
  if (!field.empty()) return "";
  return std::string("empty ") + what + " at column " + std::to_string(column) + "; expected a name";
}

}  // namespace cdma::workloads::csv
