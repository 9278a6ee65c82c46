#include "workloads/io/npy.h"

#include <zip.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

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
    if (p_ != t_.size()) error("unexpected '" + std::string(1, t_[p_]) + "' after the dict");
    return v;
  }

 private:
  static constexpr int max_depth = 16;
  static constexpr const char* form =
      "a header dict like {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

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
      error("unexpected '" + std::string(1, c) + "'");
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

npy_array parse_npy(const std::uint8_t* bytes, std::size_t n, const std::string& origin) {
  static const char magic[] = "\x93NUMPY";
  bool magic_ok = true;
  for (std::size_t i = 0; i < n && i < 6; ++i) magic_ok = magic_ok && bytes[i] == static_cast<std::uint8_t>(magic[i]);
  if (!magic_ok)
    fail(origin, "bad magic (not a .npy file)", "the 6-byte magic \\x93NUMPY at offset 0");
  if (n < 8)
    fail(origin, "truncated: file of " + std::to_string(n) + " bytes ends before the version at offset 6",
         "the 6-byte magic \\x93NUMPY and 2 version bytes");
  const unsigned major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    fail(origin, "unsupported format version " + std::to_string(major) + "." + std::to_string(minor),
         "version 1.0, 2.0 or 3.0 at offset 6");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (n < 8 + len_bytes)
    fail(origin, "truncated header: file of " + std::to_string(n) + " bytes ends inside the " +
                     "header length field at offset 8",
         std::to_string(len_bytes) + "-byte little-endian header length");
  const std::size_t hlen = get_le(bytes + 8, static_cast<unsigned>(len_bytes));
  const std::size_t data_off = 8 + len_bytes + hlen;
  if (hlen > n - 8 - len_bytes)
    fail(origin, "truncated header: header length " + std::to_string(hlen) + " at offset 8 runs " +
                     "to offset " + std::to_string(data_off) + " but the file has " +
                     std::to_string(n) + " bytes",
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

  npy_array a;
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
  const std::uint64_t avail = n - data_off;
  if (nbytes > avail)
    fail(origin, "truncated data: shape " + [&] {
           std::string s = "(";
           for (std::size_t i = 0; i < a.shape.size(); ++i)
             s += (i ? ", " : "") + std::to_string(a.shape[i]);
           return s + (a.shape.size() == 1 ? ",)" : ")");
         }() + " of " + a.descr + " needs " + std::to_string(nbytes) + " bytes at offset " +
             std::to_string(data_off) + ", the file has " + std::to_string(avail),
         "the whole array data after the header");
  if (nbytes < avail)
    fail(origin, std::to_string(avail - nbytes) + " bytes after the data at offset " +
                     std::to_string(data_off + nbytes),
         "the file to end with the array data");

  a.data.assign(bytes + data_off, bytes + data_off + nbytes);
  if (dt.big_endian && dt.width > 1) {
    for (std::size_t i = 0; i < a.data.size(); i += dt.width)
      std::reverse(a.data.begin() + static_cast<std::ptrdiff_t>(i),
                   a.data.begin() + static_cast<std::ptrdiff_t>(i + dt.width));
  }
  if (fortran->b && a.shape.size() > 1) a.data = fortran_to_c(a.data, a.shape, dt.width);
  return a;
}

npy_array read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) fail(path, "cannot open file", "a readable .npy file");
  const std::streamoff size = f.tellg();
  if (size < 0) fail(path, "cannot determine the file size", "a regular .npy file");
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(size));
  f.seekg(0);
  if (size > 0 && !f.read(reinterpret_cast<char*>(buf.data()), size))
    fail(path, "read error", "a readable .npy file");
  return parse_npy(buf.data(), buf.size(), path);
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
    if (impl_->lookup.count(key)) continue;  // first occurrence wins
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

npy_array npz_archive::read(const std::string& key) const {
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
  zip_file_t* zf = zip_fopen_index(impl_->zip, idx, 0);
  if (!zf)
    fail(origin, std::string("cannot open member (") + zip_strerror(impl_->zip) + ")",
         "a readable zip member (stored or deflated)");
  // Read in chunks: the declared size is only a hint (capped), so a corrupt directory cannot
  // make us allocate more than the data that actually decompresses.
  std::vector<std::uint8_t> buf;
  if (st.valid & ZIP_STAT_SIZE)
    buf.reserve(static_cast<std::size_t>(std::min<zip_uint64_t>(st.size, 1u << 28)));
  std::uint8_t chunk[1 << 16];
  while (true) {
    const zip_int64_t got = zip_fread(zf, chunk, sizeof chunk);
    if (got < 0) {
      const std::string msg = zip_error_strerror(zip_file_get_error(zf));
      zip_fclose(zf);
      fail(origin, "corrupt member after " + std::to_string(buf.size()) + " bytes (" + msg + ")",
           "a member that decompresses with a valid CRC");
    }
    if (got == 0) break;
    buf.insert(buf.end(), chunk, chunk + got);
  }
  zip_fclose(zf);
  if ((st.valid & ZIP_STAT_SIZE) && buf.size() != st.size)
    fail(origin, "member decompressed to " + std::to_string(buf.size()) + " bytes, the archive "
                 "declares " + std::to_string(st.size),
         "the declared uncompressed size");
  return parse_npy(buf.data(), buf.size(), origin);
}

}  // namespace cdma::workloads
