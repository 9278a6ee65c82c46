// Software comparator codecs from the system libraries (docs/ARCHITECTURE.md section 5):
//   zlib — RFC 1950 stream (2-byte header, raw deflate, Adler-32) from the system zlib;
//   lz4  — one LZ4 *block* (no frame header; the decoded size is known from the window);
//   zstd — one zstd frame (RFC 8878) with the content size in its header.
// They ignore the element width (recorded only) and see the buffer as bytes, so their ratio
// depends on the layout (NCHW vs NHWC) of the tensor.
//
// Decoders take the expected output size and reject (codec_error naming the library's verdict)
// a stream that is truncated, corrupt, decodes to a different size, or has bytes left over
// after the end of the stream. They never write past out[out_n) or read past in[in_n).
// All three are thread-safe; library contexts are kept per thread and reused.
#pragma once
#include "tlm/codec/codec.h"

namespace cdma::codec {

/// zlib, level 0..9 (default 6). Source: zlib 1.2.13 manual (deflate, inflate).
class zlib_codec final : public codec {
 public:
  explicit zlib_codec(unsigned element_width = 4, int level = 6);
  codec_id id() const override { return codec_id::zlib; }
  unsigned element_width() const override { return width_; }
  int level() const { return level_; }
  /// deflateBound(n) for the default window and memory level.
  std::size_t max_compressed_size(std::size_t n) const override;
  std::size_t compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override;
  void decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                  std::size_t out_n) const override;
  /// Compresses into a per-thread scratch buffer (no cheaper way to know deflate's size).
  std::size_t compressed_size(const std::uint8_t* in, std::size_t n) const override;

 private:
  unsigned width_;
  int level_;
};

/// lz4 block. level 1 (default) = LZ4_compress_default; 2..12 = LZ4HC; <= 0 = fast mode with
/// acceleration 1 - level (down to -65536). Source: lz4 1.9.4 lz4.h / lz4hc.h.
class lz4_codec final : public codec {
 public:
  explicit lz4_codec(unsigned element_width = 4, int level = 1);
  codec_id id() const override { return codec_id::lz4; }
  unsigned element_width() const override { return width_; }
  int level() const { return level_; }
  /// LZ4_compressBound(n). n must be <= LZ4_MAX_INPUT_SIZE (0x7E000000), else codec_error.
  std::size_t max_compressed_size(std::size_t n) const override;
  std::size_t compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override;
  void decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                  std::size_t out_n) const override;
  std::size_t compressed_size(const std::uint8_t* in, std::size_t n) const override;

 private:
  unsigned width_;
  int level_;
};

/// zstd frame, level ZSTD_minCLevel()..ZSTD_maxCLevel() (default 1). Source: zstd 1.5.4 zstd.h.
class zstd_codec final : public codec {
 public:
  explicit zstd_codec(unsigned element_width = 4, int level = 1);
  codec_id id() const override { return codec_id::zstd; }
  unsigned element_width() const override { return width_; }
  int level() const { return level_; }
  /// ZSTD_compressBound(n).
  std::size_t max_compressed_size(std::size_t n) const override;
  std::size_t compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override;
  void decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                  std::size_t out_n) const override;
  std::size_t compressed_size(const std::uint8_t* in, std::size_t n) const override;

 private:
  unsigned width_;
  int level_;
};

}  // namespace cdma::codec
