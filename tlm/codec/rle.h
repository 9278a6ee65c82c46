// RLE (zero run-length) codec of the cDMA engine (docs/ARCHITECTURE.md section 5; token layout
// defined here and in docs/codecs.md).
//
//  * The input of L bytes is E = floor(L / w) little-endian elements of w bytes (w = 4, 2 or 1)
//    followed by T = L mod w trailing bytes. An element is zero only when all its w bytes are
//    0x00 (so -0.0 is a literal and round trips are bit-exact).
//  * The elements are coded as a sequence of tokens. A token is
//        count   C bytes, little-endian unsigned, C = count_bits / 8 (default 1 byte)
//        literal w bytes, one element verbatim
//    and decodes to `count` zero elements followed by the literal. The literal is omitted in
//    exactly one case: when the count's zeros reach the end of the E elements (a buffer that ends
//    in zeros ends with a count-only token).
//  * The count field holds 0..M, M = 2^count_bits - 1. A run of Z > M zeros is continued by
//    tokens (M, zero element): each decodes to M + 1 zeros (the literal is itself a zero
//    element), so the decoded data is unchanged; the encoder emits as many as needed, then
//    (Z', literal) or the final count-only token for the remaining Z' <= M zeros.
//  * The T trailing bytes follow verbatim.
//  * Worst case: every element nonzero, E * (C + w) + T bytes.
//
// Example (w = 4, 8-bit count): elements [0, 0, 7, 0] -> tokens (2, 07 00 00 00), (1) ->
// bytes 02 07 00 00 00 01 (6 bytes). 300 zeros -> (255, 00 00 00 00), (44) -> 6 bytes.
//
// Decoding takes the expected output size and rejects (codec_error, with the byte offset) a
// stream that is truncated, has bytes left after the last token and the tail, or whose run
// overflows the output (count larger than the elements left).
#pragma once
#include "tlm/codec/codec.h"

namespace cdma::codec {

class rle_codec final : public codec {
 public:
  /// element_width: 1, 2 or 4 bytes; count_bits: 8, 16, 24 or 32. Else codec_error.
  explicit rle_codec(unsigned element_width = 4, unsigned count_bits = 8);
  codec_id id() const override { return codec_id::rle; }
  unsigned element_width() const override { return width_; }
  unsigned count_bits() const { return count_bytes_ * 8; }
  /// E * (C + w) + (n mod w), E = floor(n / w), C = count_bits / 8.
  std::size_t max_compressed_size(std::size_t n) const override;
  std::size_t compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override;
  void decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                  std::size_t out_n) const override;
  std::size_t compressed_size(const std::uint8_t* in, std::size_t n) const override;

 private:
  unsigned width_;
  unsigned count_bytes_;
};

}  // namespace cdma::codec
