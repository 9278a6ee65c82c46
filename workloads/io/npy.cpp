#include "workloads/io/npy.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <utility>

#include "workloads/io/input_file.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy reader assumes a little-endian host ('=' and '|' descr mean little-endian)"
#endif

namespace cdma::workloads {
namespace {

[[noreturn]] void fail(const std::string& origin, const std::string& problem,
                       const std::string& expected) {
  throw npy_error(origin + ": " + problem + "; expected " + expected);
}

// ---- A minimal parser for the Python literal subset used in NPY headers -------------------

struct pyvalue {
  enum kind_t { str, integer, boolean, none, tuple, list, dict } kind = none;
  std::string s;                                       // str
  std::int64_t i = 0;                                  // integer
  bool b = false;                                      // boolean
  std::vector<pyvalue> items;                          // tuple, list; dict values
  std::vector<std::string> keys;                       // dict keys (str only)
};

class header_parser {
 public:
  header_parser(const std::string& text, const std::string& origin) : t_(text), origin_(origin) {}

  pyvalue parse_header() {
    pyvalue v = value(0);
    skip_ws();
    if (p_ != t_.size()) error("unexpected '" + shown(t_[p_]) + "' after the dict");
    return v;
  }

 private:
  static constexpr int max_depth = 16;
  static constexpr const char* form =
      "a header dict like {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

  /// A header byte as the message shows it: printable ASCII as itself, any other byte (a NUL
  /// of a damaged header length would cut the message where it is read as a C string) as \xNN.
  static std::string shown(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return std::string(1, c);
    static const char hex[] = "0123456789abcdef";
    return std::string("\\x") + hex[u >> 4] + hex[u & 15];
  }
  [[noreturn]] void error(const std::string& what) const {
    fail(origin_, "malformed header at character " + std::to_string(p_) + ": " + what, form);
  }
  void skip_ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r'))
      ++p_;
  }
  bool eat(char c) {
    skip_ws();
    if (p_ < t_.size() && t_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool word(const char* w) {
    const std::size_t len = std::strlen(w);
    if (t_.compare(p_, len, w) != 0) return false;
    const std::size_t e = p_ + len;
    if (e < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[e])) || t_[e] == '_'))
      return false;
    p_ = e;
    return true;
  }

  pyvalue value(int depth) {
    if (depth > max_depth) error("nesting deeper than " + std::to_string(max_depth));
    skip_ws();
    if (p_ >= t_.size()) error("header ends where a value was expected");
    const char c = t_[p_];
    pyvalue v;
    if (c == '\'' || c == '"') {
      v.kind = pyvalue::str;
      v.s = string_lit();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = pyvalue::integer;
      v.i = int_lit();
    } else if (word("True")) {
      v.kind = pyvalue::boolean;
      v.b = true;
    } else if (word("False")) {
      v.kind = pyvalue::boolean;
    } else if (word("None")) {
      v.kind = pyvalue::none;
    } else if (c == '(' || c == '[') {
      const char close = c == '(' ? ')' : ']';
      v.kind = c == '(' ? pyvalue::tuple : pyvalue::list;
      ++p_;
      bool comma = true;  // a value may follow
      while (!eat(close)) {
        if (!comma) error(std::string("expected ',' or '") + close + "'");
        v.items.push_back(value(depth + 1));
        comma = eat(',');
      }
      // (x) without a comma is just x in Python, not a tuple.
      if (v.kind == pyvalue::tuple && v.items.size() == 1 && !comma) {
        pyvalue inner = std::move(v.items[0]);
        return inner;
      }
    } else if (c == '{') {
      v.kind = pyvalue::dict;
      ++p_;
      bool comma = true;
      while (!eat('}')) {
        if (!comma) error("expected ',' or '}'");
        skip_ws();
        if (p_ >= t_.size() || (t_[p_] != '\'' && t_[p_] != '"')) error("dict key is not a string");
        std::string key = string_lit();
        if (std::find(v.keys.begin(), v.keys.end(), key) != v.keys.end())
          error("duplicate key '" + key + "'");
        if (!eat(':')) error("expected ':' after key '" + key + "'");
        v.keys.push_back(std::move(key));
        v.items.push_back(value(depth + 1));
        comma = eat(',');
      }
    } else {
      error("unexpected '" + shown(c) + "'");
    }
    return v;
  }

  std::string string_lit() {
    const char q = t_[p_++];
    std::string s;
    while (true) {
      if (p_ >= t_.size()) error("unterminated string");
      const char c = t_[p_++];
      if (c == q) return s;
      if (c == '\\') {
        if (p_ >= t_.size()) error("unterminated string");
        s.push_back(t_[p_++]);
      } else {
        s.push_back(c);
      }
    }
  }

  std::int64_t int_lit() {
    const bool neg = t_[p_] == '-';
    if (neg) ++p_;
    if (p_ >= t_.size() || t_[p_] < '0' || t_[p_] > '9') error("expected digits");
    std::uint64_t mag = 0;
    const std::uint64_t limit = neg ? std::uint64_t(1) << 63 : (std::uint64_t(1) << 63) - 1;
    while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') {
      const unsigned d = static_cast<unsigned>(t_[p_] - '0');
      if (mag > (limit - d) / 10)
        fail(origin_, "integer in header overflows 64 bits at character " + std::to_string(p_),
             "dimensions that fit a signed 64-bit integer");
      mag = mag * 10 + d;
      ++p_;
    }
    if (p_ < t_.size() && (t_[p_] == 'L' || t_[p_] == 'l')) ++p_;  // Python 2 long suffix
    if (neg) return mag == (std::uint64_t(1) << 63) ? std::numeric_limits<std::int64_t>::min()
                                                     : -static_cast<std::int64_t>(mag);
    return static_cast<std::int64_t>(mag);
  }

  const std::string& t_;
  const std::string& origin_;
  std::size_t p_ = 0;
};

// ---- descr ---------------------------------------------------------------------------------

struct dtype_info {
  unsigned width = 0;
  bool big_endian = false;
};

dtype_info parse_descr(const std::string& d, const std::string& origin) {
  static const char* form =
      "a simple numeric descr: byte order '<', '>', '|' or '=' followed by one of "
      "f2 f4 f8 i1 u1 i2 u2 i4 u4 i8 u8 b1 (e.g. '<f4')";
  if (d.size() != 3) fail(origin, "unsupported descr '" + d + "'", form);
  const char order = d[0];
  const std::string code = d.substr(1);
  static const char* const codes[] = {"f2", "f4", "f8", "i1", "u1", "i2",
                                      "u2", "i4", "u4", "i8", "u8", "b1"};
  if ((order != '<' && order != '>' && order != '|' && order != '=') ||
      std::find(std::begin(codes), std::end(codes), code) == std::end(codes))
    fail(origin, "unsupported descr '" + d + "'", form);
  return dtype_info{static_cast<unsigned>(code[1] - '0'), order == '>'};
}

std::uint32_t get_le(const std::uint8_t* p, unsigned bytes) {
  std::uint32_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}

// Fortran-order data (first index fastest) to C order (last index fastest).
std::vector<std::uint8_t> fortran_to_c(const std::vector<std::uint8_t>& f,
                                       const std::vector<std::int64_t>& shape, unsigned w) {
  std::vector<std::uint8_t> c(f.size());
  const std::size_t nd = shape.size();
  const std::size_t count = f.size() / w;
  if (count == 0) return c;
  // Fortran strides in elements.
  std::vector<std::size_t> fstride(nd, 1);
  for (std::size_t k = 1; k < nd; ++k)
    fstride[k] = fstride[k - 1] * static_cast<std::size_t>(shape[k - 1]);
  std::vector<std::size_t> idx(nd, 0);
  std::size_t src = 0;  // Fortran offset of idx, in elements
  for (std::size_t dst = 0; dst < count; ++dst) {
    std::memcpy(&c[dst * w], &f[src * w], w);
    // Advance the C-order odometer (last index fastest), updating the Fortran offset.
    for (std::size_t k = nd; k-- > 0;) {
      if (++idx[k] < static_cast<std::size_t>(shape[k])) {
        src += fstride[k];
        break;
      }
      src -= fstride[k] * (idx[k] - 1);
      idx[k] = 0;
    }
  }
  return c;
}

/// A shape as NumPy prints it: (2, 3), (5,) or ().
std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

const pyvalue* dict_get(const pyvalue& d, const std::string& key) {
  for (std::size_t i = 0; i < d.keys.size(); ++i)
    if (d.keys[i] == key) return &d.items[i];
  return nullptr;
}

}  // namespace

std::uint64_t npy_array::elements() const {
  std::uint64_t e = 1;
  for (auto d : shape) e *= static_cast<std::uint64_t>(d);
  return e;
}

namespace {

/// A parsed .npy header and where its data lies.
struct npy_header {
  npy_array a;  // shape, descr, element_width; no data
  dtype_info dt;
  bool fortran = false;
  std::size_t data_off = 0;
  std::uint64_t nbytes = 0;  // data bytes the shape needs
};

/// Bytes of the header (magic, version, length field and dict) as far as the first `n` bytes
/// tell (n >= 12 is always enough), or 0 when they do not (bad magic / version: parse_header
/// says what is wrong).
std::size_t header_end(const std::uint8_t* bytes, std::size_t n) {
  if (n < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0) return 0;
  const unsigned major = bytes[6];
  if (major != 1 && major != 2 && major != 3) return 0;
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (n < 8 + len_bytes) return 0;
  return 8 + len_bytes + get_le(bytes + 8, static_cast<unsigned>(len_bytes));
}

/// Parses the header of a .npy image of `total` bytes from its first `n` bytes (n = total, or n
/// >= header_end() when that is <= total) and checks that the data the shape needs is exactly
/// what follows the header. Throws npy_error as parse_npy; never allocates for the data.
/// Thrown by parse_header with `declared` when the data the shape needs does not end exactly at
/// `total`: a size declared by a zip directory may be wrong, the member's bytes say more.
struct declared_size_mismatch {};

npy_header parse_header(const std::uint8_t* bytes, std::size_t n, std::uint64_t total, const std::string& origin,
                        bool declared = false) {
  static const char magic[] = "\x93NUMPY";
  bool magic_ok = true;
  for (std::size_t i = 0; i < n && i < 6; ++i) magic_ok = magic_ok && bytes[i] == static_cast<std::uint8_t>(magic[i]);
  if (!magic_ok)
    fail(origin, "bad magic (not a .npy file)", "the 6-byte magic \\x93NUMPY at offset 0");
  if (total < 8)
    fail(origin, "truncated: file of " + std::to_string(total) + " bytes ends before the version at offset 6",
         "the 6-byte magic \\x93NUMPY and 2 version bytes");
  const unsigned major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    fail(origin, "unsupported format version " + std::to_string(major) + "." + std::to_string(minor),
         "version 1.0, 2.0 or 3.0 at offset 6");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (total < 8 + len_bytes)
    fail(origin, "truncated header: file of " + std::to_string(total) + " bytes ends inside the " +
                     "header length field at offset 8",
         std::to_string(len_bytes) + "-byte little-endian header length");
  const std::size_t hlen = get_le(bytes + 8, static_cast<unsigned>(len_bytes));
  const std::size_t data_off = 8 + len_bytes + hlen;
  if (hlen > total - 8 - len_bytes || data_off > n)
    fail(origin, "truncated header: header length " + std::to_string(hlen) + " at offset 8 runs " +
                     "to offset " + std::to_string(data_off) + " but the file has " +
                     std::to_string(total) + " bytes",
         "the whole header dict before the data");
  const std::string text(reinterpret_cast<const char*>(bytes + 8 + len_bytes), hlen);
  const pyvalue h = header_parser(text, origin).parse_header();

  static const char* form =
      "a header dict with exactly the keys 'descr', 'fortran_order' and 'shape'";
  if (h.kind != pyvalue::dict) fail(origin, "header is not a dict", form);
  const pyvalue* descr = dict_get(h, "descr");
  const pyvalue* fortran = dict_get(h, "fortran_order");
  const pyvalue* shape = dict_get(h, "shape");
  if (!descr || !fortran || !shape || h.keys.size() != 3)
    fail(origin, "header has the wrong keys", form);
  if (descr->kind != pyvalue::str)
    fail(origin, descr->kind == pyvalue::list ? "unsupported descr: structured dtype"
                                              : "unsupported descr: not a string",
         "a simple numeric descr string such as '<f4'");
  if (fortran->kind != pyvalue::boolean)
    fail(origin, "'fortran_order' is not a bool", "True or False");
  if (shape->kind != pyvalue::tuple)
    fail(origin, "'shape' is not a tuple", "a tuple of non-negative integers, e.g. (1, 32, 149, 149)");

  npy_header r;
  npy_array& a = r.a;
  a.descr = descr->s;
  const dtype_info dt = parse_descr(a.descr, origin);
  a.element_width = dt.width;

  // Shape: non-negative, and the byte count must fit in 64 bits (checked before any allocation).
  std::uint64_t count = 1;
  bool zero = false;
  for (const pyvalue& d : shape->items) {
    if (d.kind != pyvalue::integer)
      fail(origin, "'shape' has a non-integer entry", "a tuple of non-negative integers");
    if (d.i < 0)
      fail(origin, "'shape' has a negative dimension " + std::to_string(d.i),
           "a tuple of non-negative integers");
    a.shape.push_back(d.i);
    if (d.i == 0) zero = true;
  }
  if (zero) {
    count = 0;
  } else {
    const std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max() / dt.width;
    for (auto d : a.shape) {
      if (static_cast<std::uint64_t>(d) > max_bytes / count)
        fail(origin, "'shape' overflows: the element count does not fit 64 bits",
             "a shape whose data fits the file");
      count *= static_cast<std::uint64_t>(d);
    }
  }
  const std::uint64_t nbytes = count * dt.width;
  const std::uint64_t avail = total - data_off;
  if (declared && nbytes != avail) throw declared_size_mismatch{};
  if (nbytes > avail)
    fail(origin, "truncated data: shape " + shape_text(a.shape) + " of " + a.descr + " needs " +
                     std::to_string(nbytes) + " bytes at offset " + std::to_string(data_off) + ", the file has " +
                     std::to_string(avail),
         "the whole array data after the header");
  if (nbytes < avail)
    fail(origin, std::to_string(avail - nbytes) + " bytes after the data at offset " +
                     std::to_string(data_off + nbytes),
         "the file to end with the array data");
  a.rows_in_file = a.shape.empty() ? 1 : static_cast<std::uint64_t>(a.shape[0]);
  r.dt = dt;
  r.fortran = fortran->b;
  r.data_off = data_off;
  r.nbytes = nbytes;
  return r;
}

/// Bytes of data to read for at most `max_rows` entries along the first axis (all of them for
/// a 0-d or Fortran-ordered array, whose first axis is not contiguous); sets a.shape[0].
std::uint64_t bytes_to_read(npy_header& h, std::uint64_t max_rows) {
  npy_array& a = h.a;
  if (a.shape.empty() || h.nbytes == 0 || (h.fortran && a.shape.size() > 1) ||
      static_cast<std::uint64_t>(a.shape[0]) <= max_rows)
    return h.nbytes;
  const std::uint64_t row = h.nbytes / static_cast<std::uint64_t>(a.shape[0]);
  a.shape[0] = static_cast<std::int64_t>(max_rows);
  return row * max_rows;
}

/// a.data sized to `bytes` (of the `need` bytes the rows read take); an allocation failure is an
/// npy_error naming the file and `need`.
void allocate(npy_array& a, std::uint64_t bytes, std::uint64_t need, const std::string& origin) {
  try {
    if (bytes > std::numeric_limits<std::size_t>::max()) throw std::bad_alloc();
    a.data.resize(static_cast<std::size_t>(bytes));
  } catch (const std::bad_alloc&) {
    fail(origin, "shape " + shape_text(a.shape) + " of " + a.descr + " needs " + std::to_string(need) +
                     " bytes of memory, more than could be allocated",
         "an array that fits in memory (real activations need only as many images as the batch)");
  }
}

/// Converts the data read to little-endian C order.
void finish(npy_header& h) {
  npy_array& a = h.a;
  if (h.dt.big_endian && h.dt.width > 1) {
    for (std::size_t i = 0; i < a.data.size(); i += h.dt.width)
      std::reverse(a.data.begin() + static_cast<std::ptrdiff_t>(i),
                   a.data.begin() + static_cast<std::ptrdiff_t>(i + h.dt.width));
  }
  if (h.fortran && a.shape.size() > 1) a.data = fortran_to_c(a.data, a.shape, h.dt.width);
}

/// Reads a .npy image of `total` bytes from a stream: read(p, n) fills p[0..n) as far as the
/// stream goes and returns the bytes it gave (fewer only at its end). Reads the header, then
/// only the data of the first `max_rows` rows.
template <typename Read>
npy_array read_image(Read read, std::uint64_t total, std::uint64_t max_rows, const std::string& origin,
                     bool declared = false) {
  std::vector<std::uint8_t> head(static_cast<std::size_t>(std::min<std::uint64_t>(total, 12)));
  std::size_t got = read(head.data(), head.size());
  std::size_t expect = head.size();
  head.resize(got);
  const std::size_t end = header_end(head.data(), head.size());
  if (end > head.size() && end <= total) {  // the rest of the header (a longer one is refused by parse_header)
    expect = end;
    head.resize(end);
    got += read(head.data() + got, end - got);
    head.resize(got);
  }
  if (head.size() < expect) {
    if (declared) throw declared_size_mismatch{};
    fail(origin, "ends after " + std::to_string(head.size()) + " bytes, " + std::to_string(total) + " were declared",
         "the declared size");
  }
  npy_header h = parse_header(head.data(), head.size(), total, origin, declared);
  const std::uint64_t want = bytes_to_read(h, max_rows);
  // A file's size is what it holds: allocate the rows at once. A size declared by a zip
  // directory may be a lie (a corrupt archive): grow with the bytes that really arrive, from
  // 64 MiB, so memory stays within twice the data present.
  std::uint64_t n = 0;
  allocate(h.a, declared ? std::min<std::uint64_t>(want, std::uint64_t{64} << 20) : want, want, origin);
  for (;;) {
    const std::size_t room = h.a.data.size() - static_cast<std::size_t>(n);
    const std::size_t got = read(h.a.data.data() + n, room);
    n += got;
    if (got < room || n == want) break;
    allocate(h.a, std::min<std::uint64_t>(want, 2 * n), want, origin);
  }
  if (n != want && declared) throw declared_size_mismatch{};
  if (n != want)
    fail(origin, "ends after " + std::to_string(h.data_off + n) + " bytes, " + std::to_string(total) +
                     " were declared",
         "the declared size");
  finish(h);
  return std::move(h.a);
}

}  // namespace

npy_array parse_npy(const std::uint8_t* bytes, std::size_t n, const std::string& origin) {
  npy_header h = parse_header(bytes, n, n, origin);
  h.a.data.assign(bytes + h.data_off, bytes + h.data_off + h.nbytes);
  finish(h);
  return std::move(h.a);
}

npy_array read_npy(const std::string& path, std::uint64_t max_rows) {
  std::ifstream f;
  if (const io::input_problem p = io::open_input(f, path))
    fail(path, p.text(), "a readable .npy file");
  struct ::stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    fail(path, "not a regular file", "a .npy file");
  const auto total = static_cast<std::uint64_t>(st.st_size);
  bool failed = false;
  auto read = [&](std::uint8_t* p, std::size_t n) -> std::size_t {
    if (n == 0 || failed) return 0;
    f.read(reinterpret_cast<char*>(p), static_cast<std::streamsize>(n));
    const auto g = static_cast<std::size_t>(f.gcount());
    if (g < n) failed = true;
    return g;
  };
  return read_image(read, total, max_rows, path);
}

// ---- npz -----------------------------------------------------------------------------------

struct npz_archive::impl {
  std::string path;
  std::vector<std::uint8_t> image;  // archive bytes when opened from memory
  zip_t* zip = nullptr;
  std::vector<std::string> keys;
  std::vector<zip_uint64_t> index;                    // zip entry index per key
  std::unordered_map<std::string, std::size_t> lookup;  // key -> position in keys
  ~impl() {
    if (zip) zip_discard(zip);
  }
};

npz_archive::npz_archive(const std::string& path) : impl_(std::make_unique<impl>()) {
  impl_->path = path;
  {
    std::ifstream probe;
    const io::input_problem p = io::open_input(probe, path);
    if (p.kind != io::input_problem::none && p.kind != io::input_problem::cannot_open)  // libzip says why else
      fail(path, p.text(), "an .npz (zip) file");
    // The process's open-file limit, not the file: every archive stays open while it is read
    // lazily, so a long list of activations sources reaches it (about 1020 with the common
    // `ulimit -n` of 1024).
    if (p.kind == io::input_problem::cannot_open && (p.error == EMFILE || p.error == ENFILE)) {
      struct rlimit rl {};
      const std::string limit = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                                    ? " (`ulimit -n`: " + std::to_string(rl.rlim_cur) + ")"
                                    : "";
      fail(path, "cannot open: " + p.reason + "; the open-file limit" + limit +
                     " is reached, and every .npz source stays open while the run reads it",
           "fewer .npz sources than the open-file limit, or a higher limit (`ulimit -n`)");
    }
  }
  int err = 0;
  impl_->zip = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (!impl_->zip) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    const std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    fail(path, "cannot open as a zip archive (" + msg + ")", "an existing .npz (zip) file");
  }
  index_members();
}

npz_archive::npz_archive(const std::uint8_t* data, std::size_t n, const std::string& origin)
    : impl_(std::make_unique<impl>()) {
  impl_->path = origin;
  impl_->image.assign(data, data + n);
  zip_error_t ze;
  zip_error_init(&ze);
  // libzip needs a non-null buffer even for 0 bytes.
  static const std::uint8_t empty = 0;
  zip_source_t* src = zip_source_buffer_create(n ? impl_->image.data() : &empty, n, 0, &ze);
  if (src) {
    impl_->zip = zip_open_from_source(src, ZIP_RDONLY, &ze);
    if (!impl_->zip) zip_source_free(src);
  }
  if (!impl_->zip) {
    const std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    fail(origin, "cannot open as a zip archive (" + msg + ")", "a .npz (zip) image");
  }
  zip_error_fini(&ze);
  index_members();
}

void npz_archive::index_members() {
  const zip_int64_t n = zip_get_num_entries(impl_->zip, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(impl_->zip, static_cast<zip_uint64_t>(i), 0);
    if (!name) continue;
    std::string key = name;
    if (key.size() >= 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    // Two members of one name (a zip may hold them; numpy.load takes the last, libzip the
    // first): which one is meant is unknown, so neither is used.
    if (auto dup = impl_->lookup.find(key); dup != impl_->lookup.end()) {
      const char* first = zip_get_name(impl_->zip, impl_->index[dup->second], 0);
      fail(impl_->path, "two members hold array '" + key + "' (\"" + std::string(first ? first : "?") + "\" and \"" +
                            name + "\", entries " + std::to_string(impl_->index[dup->second]) + " and " +
                            std::to_string(i) + ")",
           "each array once in the archive");
    }
    impl_->lookup.emplace(key, impl_->keys.size());
    impl_->keys.push_back(key);
    impl_->index.push_back(static_cast<zip_uint64_t>(i));
  }
}

npz_archive::~npz_archive() = default;
npz_archive::npz_archive(npz_archive&&) noexcept = default;
npz_archive& npz_archive::operator=(npz_archive&&) noexcept = default;

const std::vector<std::string>& npz_archive::keys() const { return impl_->keys; }
const std::string& npz_archive::path() const { return impl_->path; }
bool npz_archive::contains(const std::string& key) const { return impl_->lookup.count(key) != 0; }

npy_array npz_archive::read(const std::string& key, std::uint64_t max_rows) const {
  const std::string origin = impl_->path + ":" + key;
  auto it = impl_->lookup.find(key);
  if (it == impl_->lookup.end())
    fail(origin, "no such array in the archive (" + std::to_string(impl_->keys.size()) + " keys)",
         "one of the archive's keys, e.g. '" +
             (impl_->keys.empty() ? std::string("<none>") : impl_->keys.front()) + "'");
  const zip_uint64_t idx = impl_->index[it->second];
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(impl_->zip, idx, 0, &st) != 0)
    fail(origin, std::string("cannot stat member (") + zip_strerror(impl_->zip) + ")",
         "a readable zip member");
  auto open_member = [&] {
    zip_file_t* f = zip_fopen_index(impl_->zip, idx, 0);
    if (!f)
      fail(origin, std::string("cannot open member (") + zip_strerror(impl_->zip) + ")",
           "a readable zip member (stored or deflated)");
    return f;
  };
  struct closer {
    zip_file_t* f;
    ~closer() {
      if (f) zip_fclose(f);
    }
  } member{open_member()};
  zip_file_t* zf = member.f;
  std::uint64_t pos = 0;  // bytes read from the member
  auto read = [&](std::uint8_t* p, std::size_t n) -> std::size_t {
    std::size_t done = 0;
    while (done < n) {
      const zip_int64_t got = zip_fread(zf, p + done, n - done);
      if (got < 0)
        fail(origin, "corrupt member after " + std::to_string(pos + done) + " bytes (" +
                         zip_error_strerror(zip_file_get_error(zf)) + ")",
             "a member that decompresses with a valid CRC");
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    pos += done;
    return done;
  };
  if (st.valid & ZIP_STAT_SIZE) try {
    // The declared size bounds what is read: the header, then only the rows asked for, read
    // straight into the array (a small compressed member may expand to gigabytes).
    npy_array a = read_image(read, st.size, max_rows, origin, true);
    // Read on to the end of the member, discarding the rows not asked for: libzip checks the
    // CRC only there (a member corrupt in rows a small batch does not use was used silently:
    // breaker, session 12), and a member longer than declared is refused. Memory stays the
    // rows asked for plus this buffer; time is one decompression of the whole member.
    std::uint8_t rest[1 << 16];
    while (read(rest, sizeof rest) != 0) {
    }
    if (pos != st.size)
      fail(origin, "member decompressed to " + std::to_string(pos) + " bytes, the archive declares " +
                       std::to_string(st.size),
           "the declared uncompressed size");
    return a;
  } catch (const declared_size_mismatch&) {
    // The header and the declared size disagree: read the member again, keeping only its
    // header and counting the rest (the CRC still checked at the end; never the whole member
    // in memory: a 400 KB member of 400 MB zeros behind a 4-byte shape took 537 MB), so the
    // message says what its bytes hold (truncated data, bytes after the data, a corrupt
    // stream) or, when the header fits them, that the declared size is wrong.
    zip_fclose(member.f);
    member.f = nullptr;
    member.f = zf = open_member();
    pos = 0;
    std::vector<std::uint8_t> head(1 << 16);
    head.resize(read(head.data(), head.size()));
    std::uint8_t rest[1 << 16];
    while (read(rest, sizeof rest) != 0) {
    }
    (void)parse_header(head.data(), head.size(), pos, origin);  // throws naming the problem
    fail(origin, "member decompressed to " + std::to_string(pos) + " bytes, the archive declares " +
                     std::to_string(st.size),
         "the declared uncompressed size");
  }
  // No declared size (or a wrong one): read the member whole, in chunks (never more than what
  // decompresses).
  std::vector<std::uint8_t> buf;
  std::uint8_t chunk[1 << 16];
  for (std::size_t got; (got = read(chunk, sizeof chunk)) != 0;) {
    try {
      buf.insert(buf.end(), chunk, chunk + got);
    } catch (const std::bad_alloc&) {
      fail(origin, "member needs more than " + std::to_string(buf.size()) + " bytes of memory, more than could be allocated",
           "a member that fits in memory");
    }
  }
  if ((st.valid & ZIP_STAT_SIZE) && buf.size() != st.size)
    fail(origin, "member decompressed to " + std::to_string(buf.size()) + " bytes, the archive declares " +
                     std::to_string(st.size),
         "the declared uncompressed size");
  npy_array a = parse_npy(buf.data(), buf.size(), origin);
  if (max_rows < a.rows_in_file && !a.shape.empty()) {
    const std::size_t row = a.data.size() / static_cast<std::size_t>(a.shape[0]);
    a.shape[0] = static_cast<std::int64_t>(max_rows);
    a.data.resize(row * static_cast<std::size_t>(max_rows));
  }
  return a;
}

}  // namespace cdma::workloads
