// Compression codecs of the cDMA engine: the one interface every model codes against.
//
// Pure C++ (no SystemC). A codec works on a byte buffer of L bytes holding little-endian
// elements of `element_width()` bytes; the exact formats are docs/ARCHITECTURE.md section 5
// and docs/codecs.md (ZVC in zvc.h, RLE in rle.h, zlib/lz4/zstd in stdlib_codecs.h, raw in
// raw.h). Windowed DMA framing (per-window metadata, raw fallback) is in window.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace cdma::codec {

/// Error from a codec: bad parameter (unknown name, unsupported element width) or corrupt
/// compressed input. The message says what is wrong, at which byte offset, and what was expected.
class codec_error : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Codec identifiers. The numeric value is the descriptor's 4-bit codec field (see the register
/// map), so every id is < 16; raw = 0 and zvc = 1 are fixed.
enum class codec_id : std::uint8_t { raw = 0, zvc = 1, rle = 2, zlib = 3, lz4 = 4, zstd = 5 };

/// Every codec id, in numeric order.
constexpr codec_id all_codec_ids[] = {codec_id::raw, codec_id::zvc,  codec_id::rle,
                                      codec_id::zlib, codec_id::lz4, codec_id::zstd};

/// Canonical name: "raw", "zvc", "rle", "zlib", "lz4", "zstd".
std::string to_string(codec_id id);

/// Parses a codec name: "raw" or "none" -> raw, else the canonical names above (exact, lower
/// case). Throws codec_error listing the valid names otherwise.
codec_id codec_from_string(const std::string& s);

/// Codec parameters (each codec reads only its own fields). Defaults are the documented ones
/// (docs/codecs.md).
struct codec_params {
  /// RLE zero-run count field width in bits: 8, 16, 24 or 32 (byte-aligned tokens). Default 8.
  unsigned rle_count_bits = 8;
  /// zlib (deflate) level 0..9 (0 = stored, 9 = best). Default 6, zlib's own default.
  int zlib_level = 6;
  /// lz4 level: 1 = LZ4_compress_default (fast); 2..12 = LZ4HC at that level; <= 0 =
  /// LZ4_compress_fast with acceleration 1 - level. Default 1.
  int lz4_level = 1;
  /// zstd level: ZSTD_minCLevel()..ZSTD_maxCLevel() (22); negative = fast modes. Default 1.
  int zstd_level = 1;
};

/// A stateless, thread-safe compressor/decompressor for one element width.
class codec {
 public:
  virtual ~codec() = default;
  virtual codec_id id() const = 0;
  /// Element width in bytes: 1, 2 or 4.
  virtual unsigned element_width() const = 0;
  /// Worst-case compressed size in bytes for n input bytes.
  virtual std::size_t max_compressed_size(std::size_t n) const = 0;
  /// Compresses n bytes from `in`; `out` has room for max_compressed_size(n) bytes.
  /// Returns the number of bytes written. `in` may be null when n == 0.
  virtual std::size_t compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const = 0;
  /// Decodes exactly out_n bytes from in[0..in_n). Throws codec_error (message says what and
  /// at which offset) if the stream is truncated, too long, a mask implies more data than
  /// present, etc. Never reads or writes out of bounds.
  virtual void decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                          std::size_t out_n) const = 0;
  /// Size in bytes compress() would return, without writing output (fast path).
  virtual std::size_t compressed_size(const std::uint8_t* in, std::size_t n) const = 0;
  /// Decodes `count` independent streams (windows, e.g. a whole tensor compressed per window):
  /// stream k is in[offset[k] .. offset[k] + size[k]) and decodes to
  /// out[k * window .. min((k + 1) * window, out_n)); the caller guarantees every
  /// in[offset[k] .. offset[k] + size[k]) is readable (e.g. offsets from a validated window
  /// table: decode_table in tlm/codec/window.h); the streams' contents are checked as by decompress().
  /// The result and the errors are those of
  /// decompress() called for each window in order (the first failing window throws; earlier
  /// windows are decoded, later ones are not). count must be ceil(out_n / window) and window
  /// > 0, else codec_error (check_windows). A codec may amortise per-call work over the batch
  /// (zvc with zvc_store::streaming: one store fence at the end instead of one per window).
  /// Default: decompress() per window.
  virtual void decompress_windows(const std::uint8_t* in, const std::size_t* offset,
                                  const std::size_t* size, std::size_t count, std::uint8_t* out,
                                  std::size_t window, std::size_t out_n) const;
};

/// The argument check of codec::decompress_windows: throws codec_error unless window > 0 and
/// count == ceil(out_n / window).
void check_windows(std::size_t count, std::size_t window, std::size_t out_n);

/// Creates a codec. element_width must be 1, 2 or 4 bytes (else codec_error); an unknown id
/// or a parameter out of range (see codec_params) also throws codec_error.
std::unique_ptr<codec> make_codec(codec_id id, unsigned element_width = 4,
                                  const codec_params& params = codec_params{});

}  // namespace cdma::codec
