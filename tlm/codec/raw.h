// Raw (identity) codec: the compressed stream is the input, byte for byte.
// Used for the "no compression" baseline (vDNN) and as the window fallback format.
#pragma once
#include "tlm/codec/codec.h"

namespace cdma::codec {

/// Identity codec. compress() copies n bytes; decompress() requires in_n == out_n exactly.
class raw_codec final : public codec {
 public:
  /// element_width: 1, 2 or 4 bytes (recorded only; raw ignores element boundaries).
  /// Throws codec_error otherwise.
  explicit raw_codec(unsigned element_width = 4);
  codec_id id() const override { return codec_id::raw; }
  unsigned element_width() const override { return width_; }
  /// Exactly n.
  std::size_t max_compressed_size(std::size_t n) const override { return n; }
  std::size_t compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override;
  /// Throws codec_error if in_n != out_n (truncated or too long).
  void decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                  std::size_t out_n) const override;
  std::size_t compressed_size(const std::uint8_t*, std::size_t n) const override { return n; }

 private:
  unsigned width_;
};

}  // namespace cdma::codec
