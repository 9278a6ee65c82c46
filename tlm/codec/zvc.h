// ZVC (zero-value compression), exactly as docs/ARCHITECTURE.md section 5 (after Rhu et al.,
// "Compressing DMA Engine", HPCA 2018):
//
//  * The input of L bytes is E = floor(L / w) little-endian elements of w bytes (w = 4, 2 or 1)
//    followed by T = L mod w trailing bytes.
//  * Elements are grouped in blocks of 32 (the last block may hold k < 32). Each block is a
//    4-byte little-endian mask (bit i set iff element i of the block is nonzero; bits >= k are 0)
//    followed by the block's nonzero elements in ascending order, w bytes each, verbatim.
//    An element is zero only when all its w bytes are 0x00 (-0.0 = 0x80000000 is nonzero).
//  * The T trailing bytes follow verbatim.
//  * Size: sum over blocks (4 + w * nnz_block) + T.
//
// Decoding rejects (codec_error, with the byte offset) a stream that is truncated, that has
// bytes left over after the last block and tail, or whose mask has bits set beyond the k
// elements of the final block. A mask bit set for an element whose stored bytes are all zero
// is not produced by the encoder but decodes unambiguously and is accepted.
#pragma once
#include "tlm/codec/codec.h"

namespace cdma::codec {

/// Elements per ZVC block (one 32-bit mask per block).
constexpr std::size_t zvc_block_elements = 32;
/// Bytes of one block mask.
constexpr std::size_t zvc_mask_bytes = 4;

class zvc_codec final : public codec {
 public:
  /// element_width: 1, 2 or 4 bytes, else codec_error.
  explicit zvc_codec(unsigned element_width = 4);
  codec_id id() const override { return codec_id::zvc; }
  unsigned element_width() const override { return width_; }
  /// 4 * ceil(E / 32) + L (every element nonzero), E = floor(n / w).
  std::size_t max_compressed_size(std::size_t n) const override;
  std::size_t compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override;
  void decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                  std::size_t out_n) const override;
  /// 4 * ceil(E / 32) + w * nnz + (n mod w), counting nonzero elements only.
  std::size_t compressed_size(const std::uint8_t* in, std::size_t n) const override;

 private:
  unsigned width_;
};

}  // namespace cdma::codec
