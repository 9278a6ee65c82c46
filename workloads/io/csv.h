// The small CSV dialect of the project's input tables (layer-time table, density profile):
// comma-separated fields, no quoting, surrounding spaces ignored, CRLF or LF line ends, an
// optional UTF-8 byte-order mark before the header. Pure C++.
#pragma once
#include <sys/stat.h>

#include <cctype>
#include <string>
#include <vector>

namespace cdma::workloads::csv {

/// True if `path` is a directory (an ifstream opens one and reads nothing: callers say so
/// instead of "empty file").
inline bool is_directory(const std::string& path) {
  struct ::stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

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

/// The fields of a line, each trimmed; "a,b," has three fields (the last empty).
inline std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace cdma::workloads::csv
