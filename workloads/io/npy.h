// NumPy .npy parser and .npz reader (activation sources for the workloads).
//
// Format: NumPy's "NPY format" (numpy/lib/format.py, NEP 1), versions 1.0, 2.0 and 3.0:
//   bytes 0..5  magic "\x93NUMPY"; byte 6 major version (1, 2 or 3); byte 7 minor version (0);
//   v1.0: bytes 8..9 u16 LE header length H; v2.0/v3.0: bytes 8..11 u32 LE header length H;
//   then H bytes of header (ASCII, UTF-8 for v3.0): a Python dict literal with exactly the keys
//   'descr' (dtype string), 'fortran_order' (True/False) and 'shape' (tuple of ints),
//   padded with spaces and a newline; then the raw data.
// An .npz is a ZIP archive with one member "<key>.npy" per array (numpy.savez[_compressed]).
//
// Supported dtypes: f2 f4 f8 i1 u1 i2 u2 i4 u4 i8 u8 b1, byte order '<', '>', '|' or '='
// ('|' and '=' mean native = little-endian on the supported hosts). Everything else (object
// 'O', strings 'S'/'U', complex, datetime, structured/list descr) is refused.
// Trailing bytes after the data are refused (a clean .npy file ends exactly at its data).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace cdma::workloads {

/// Error reading a .npy/.npz. Message form: "<file>[:<member>]: <problem>; expected <form>".
class npy_error : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A dense array as NumPy presents it.
struct npy_array {
  std::vector<std::int64_t> shape;  ///< dimensions (empty for a 0-d array)
  /// dtype string exactly as in the header, e.g. "<f4", ">i2", "|u1" (a ">" descr is kept even
  /// though `data` has been converted to little-endian).
  std::string descr;
  unsigned element_width = 0;       ///< bytes per element (1, 2, 4 or 8)
  /// elements() * element_width bytes, C order, little-endian: converted if the file was
  /// big-endian ('>') or fortran_order, so element [i0, .., ik] is where NumPy's C-ordered
  /// ascontiguousarray(a).astype('<...') would put it.
  std::vector<std::uint8_t> data;
  /// shape[0] in the file (1 for a 0-d array): the array holds fewer rows (shape[0] smaller)
  /// when it was read with a row limit.
  std::uint64_t rows_in_file = 1;
  /// Product of shape (1 for a 0-d array).
  std::uint64_t elements() const;
};

/// Parses a complete .npy image bytes[0..n). `origin` names the file (and member) in errors.
/// Throws npy_error on bad magic or version, truncated header or data, malformed header dict,
/// unsupported descr, negative or overflowing shape, or bytes after the data. Never allocates
/// more than the data actually present.
npy_array parse_npy(const std::uint8_t* bytes, std::size_t n, const std::string& origin);

/// No limit on the rows read.
constexpr std::uint64_t all_rows = ~std::uint64_t{0};

/// Reads and parses a .npy file: the header, then only the first `max_rows` entries along the
/// first axis (all of them for a Fortran-ordered array; shape[0] says how many were read,
/// rows_in_file how many the file holds); the whole file is still checked against the header
/// (its size must be exactly the header plus the data). npy_error if it cannot be read ("is a
/// directory", "cannot open file: <reason>"), if the rows read do not fit in memory ("needs N
/// bytes of memory"), or as parse_npy.
npy_array read_npy(const std::string& path, std::uint64_t max_rows = all_rows);

/// Read-only .npz archive (a ZIP of .npy members). Not copyable; one archive must not be read
/// from two threads at once (open one npz_archive per thread instead).
class npz_archive {
 public:
  /// Opens the archive. npy_error if the file is missing, unreadable, a directory or not a zip
  /// archive, or if two members hold one array (e.g. "conv1.npy" twice: numpy.load would take
  /// the last, a reader the first; neither is used).
  explicit npz_archive(const std::string& path);
  /// Opens an archive image held in memory (copied); `origin` names it in errors. npy_error if
  /// it is not a zip archive.
  npz_archive(const std::uint8_t* data, std::size_t n, const std::string& origin);
  ~npz_archive();
  npz_archive(npz_archive&&) noexcept;
  npz_archive& operator=(npz_archive&&) noexcept;
  npz_archive(const npz_archive&) = delete;
  npz_archive& operator=(const npz_archive&) = delete;

  /// Member names with a trailing ".npy" removed (as numpy.load(...).files), in archive order.
  const std::vector<std::string>& keys() const;
  bool contains(const std::string& key) const;
  /// Reads and parses member "<key>.npy" (or "<key>" if stored without the suffix), as read_npy:
  /// only the first `max_rows` rows are decompressed (a member of a few hundred kilobytes may
  /// expand to gigabytes); the member's CRC is checked when it is read to its end (always when
  /// every row is read). npy_error naming the file and key if absent, unreadable (bad CRC,
  /// truncated), corrupt or too large for memory ("needs N bytes of memory").
  npy_array read(const std::string& key, std::uint64_t max_rows = all_rows) const;
  /// The path (or origin) given to the constructor.
  const std::string& path() const;

 private:
  void index_members();
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cdma::workloads
