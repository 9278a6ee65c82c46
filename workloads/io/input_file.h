// Opening the project's input files (configuration, layer files, Keras graphs, name maps, .npy
// tensors): one place that says what is wrong with a path in the words every reader uses. An
// ifstream opens a directory without complaint on Linux and then reads nothing (an "empty
// file"), fails with "basic_filebuf::underflow" without the file name, or reports a size of
// 2^63 bytes (read_npy then asked for that much memory: std::bad_alloc); callers say "is a
// directory" instead. Also a strict JSON reader: nlohmann::json keeps the last of two equal
// keys in an object silently ({"batch": 2, "batch": 4} read as 4), strict_json refuses them.
// Pure C++.
#pragma once
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cdma::workloads::io {

/// Why an input file cannot be read.
struct input_problem {
  enum kind_t { none, directory, not_regular, cannot_open } kind = none;
  std::string reason;  ///< strerror(errno) of the failed open (cannot_open); the file type (not_regular)
  int error = 0;       ///< errno of the failed open (cannot_open), e.g. EMFILE; 0 otherwise
  explicit operator bool() const { return kind != none; }
  /// What to write after "<path>: ": "is a directory", "is a FIFO, not a regular file" or
  /// "cannot open <what>: <reason>" (`what` e.g. "the name map"; "cannot open file" when
  /// `what` is empty).
  std::string text(const std::string& what = "") const {
    if (kind == directory) return "is a directory";
    if (kind == not_regular) return "is " + reason + ", not a regular file";
    return "cannot open " + (what.empty() ? std::string("file") : what) + (reason.empty() ? "" : ": " + reason);
  }
};

/// The kind of a file that is neither a regular file nor a directory, as messages name it
/// ("a FIFO", "a character device", ...).
inline std::string file_type_name(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// What is wrong with `path` as an input file before it is opened: a directory, or not a
/// regular file (a FIFO with no writer blocked the open forever; a pipe or device cannot be
/// read twice and has no size). A path that does not exist is not looked at here (the open
/// says why). Symbolic links are followed: a link to a regular file is one.
inline input_problem input_file_type(const std::string& path) {
  input_problem p;
  struct ::stat st {};
  if (::stat(path.c_str(), &st) != 0) return p;
  if (S_ISDIR(st.st_mode)) {
    p.kind = input_problem::directory;
  } else if (!S_ISREG(st.st_mode)) {
    p.kind = input_problem::not_regular;
    p.reason = file_type_name(st.st_mode);
  }
  return p;
}

/// True if `path` is a directory (symbolic links followed).
inline bool is_directory(const std::string& path) { return input_file_type(path).kind == input_problem::directory; }

/// Opens `path` for reading (binary: bytes as they are) into `in`. Returns a problem (tested
/// as false when there is none): the path is a directory, is not a regular file (a FIFO, a
/// device, a socket: never opened, so never waited for), or cannot be opened (reason:
/// strerror). Every input of the project is a regular file.
inline input_problem open_input(std::ifstream& in, const std::string& path) {
  input_problem p = input_file_type(path);
  if (p) return p;
  errno = 0;
  in.open(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    p.kind = input_problem::cannot_open;
    p.reason = e ? std::strerror(e) : "";
    p.error = e;
  }
  return p;
}

/// A JSON object holding one key twice: its path in the document ("layers[0].filters") and key.
class duplicate_key : public std::runtime_error {
 public:
  duplicate_key(const std::string& path, const std::string& key)
      : std::runtime_error("key \"" + key + "\" appears twice in " + (path.empty() ? "the top-level object" : path) +
                           "; expected each key once in an object"),
        path(path), key(key) {}
  std::string path, key;
};

/// json::parse(in) that refuses an object holding one key twice (duplicate_key, which names
/// the key and where it is: "key \"batch\" appears twice in the top-level object" /
/// "... in layers[0]"). Throws json::exception as json::parse does otherwise.
///
/// A SAX handler over nlohmann's own DOM builder: json::parse with a callback (the form used
/// before) scans the whole enclosing array at the end of every object (nlohmann 3.11.2,
/// json_sax_dom_callback_parser::end_object, "remove discarded value"), so a layer file of
/// 100000 layers took 10 s to read and one of 1000000 about 1000 s (breaker s22 F5).
inline nlohmann::json strict_json(std::istream& in) {
  using json = nlohmann::json;
  struct strict_sax : nlohmann::detail::json_sax_dom_parser<json> {
    using base = nlohmann::detail::json_sax_dom_parser<json>;
    struct frame {
      bool array = false;
      std::size_t count = 0;  // elements finished (array)
      std::string key;        // key of the member being read (object)
      std::set<std::string> keys;
    };
    std::vector<frame> stack;
    explicit strict_sax(json& j) : base(j, true) {}
    std::string where() const {
      std::string p;
      for (std::size_t i = 0; i + 1 < stack.size(); ++i)  // the containers around the innermost one
        p += stack[i].array ? "[" + std::to_string(stack[i].count) + "]" : (p.empty() ? "" : ".") + stack[i].key;
      return p;
    }
    void element_done() {
      if (!stack.empty() && stack.back().array) ++stack.back().count;
    }
    bool null() { return element_done(), base::null(); }
    bool boolean(bool v) { return element_done(), base::boolean(v); }
    bool number_integer(json::number_integer_t v) { return element_done(), base::number_integer(v); }
    bool number_unsigned(json::number_unsigned_t v) { return element_done(), base::number_unsigned(v); }
    bool number_float(json::number_float_t v, const json::string_t& s) { return element_done(), base::number_float(v, s); }
    bool string(json::string_t& v) { return element_done(), base::string(v); }
    bool binary(json::binary_t& v) { return element_done(), base::binary(v); }
    bool open(bool array) {
      stack.emplace_back();
      stack.back().array = array;
      return true;
    }
    bool close() {
      stack.pop_back();
      element_done();
      return true;
    }
    bool start_object(std::size_t n) { return open(false) && base::start_object(n); }
    bool key(json::string_t& k) {
      if (!stack.back().keys.insert(k).second) throw duplicate_key(where(), k);
      stack.back().key = k;
      return base::key(k);
    }
    bool end_object() { return close() && base::end_object(); }
    bool start_array(std::size_t n) { return open(true) && base::start_array(n); }
    bool end_array() { return close() && base::end_array(); }
  };
  json j;
  strict_sax sax(j);
  json::sax_parse(in, &sax);
  return j;
}

}  // namespace cdma::workloads::io
