#include "tlm/codec/zvc.h"

#include <cstring>
#include <string>

namespace cdma::codec {
namespace {

template <typename T>
inline T load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // unaligned-safe; values are only compared with 0
  return v;
}

inline void store_u32le(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v >> 16);
  p[3] = static_cast<std::uint8_t>(v >> 24);
}

inline std::uint32_t load_u32le(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

inline std::size_t blocks_for(std::size_t elements) {
  return elements / zvc_block_elements + (elements % zvc_block_elements != 0);
}

// Encodes one block of k <= 32 elements at `out`; returns bytes written.
// Writes are branchless: every element is stored at the current position, which only
// advances for nonzero elements. The store stays inside 4 + k * w bytes, the block's worst case.
template <typename T>
inline std::size_t encode_block(const std::uint8_t* in, std::size_t k, std::uint8_t* out) {
  std::uint32_t mask = 0;
  std::uint8_t* p = out + zvc_mask_bytes;
  for (std::size_t i = 0; i < k; ++i) {
    const T v = load<T>(in + i * sizeof(T));
    const bool nz = v != 0;
    mask |= static_cast<std::uint32_t>(nz) << i;
    std::memcpy(p, &v, sizeof v);
    p += nz ? sizeof(T) : 0;
  }
  store_u32le(out, mask);
  return static_cast<std::size_t>(p - out);
}

template <typename T>
std::size_t compress_t(const std::uint8_t* in, std::size_t n, std::uint8_t* out) {
  const std::size_t e = n / sizeof(T);
  const std::size_t tail = n % sizeof(T);
  std::size_t pos = 0;
  std::size_t i = 0;
  for (; i + zvc_block_elements <= e; i += zvc_block_elements)
    pos += encode_block<T>(in + i * sizeof(T), zvc_block_elements, out + pos);
  if (i < e) pos += encode_block<T>(in + i * sizeof(T), e - i, out + pos);
  if (tail) {
    std::memcpy(out + pos, in + e * sizeof(T), tail);
    pos += tail;
  }
  return pos;
}

template <typename T>
std::size_t count_nonzero(const std::uint8_t* in, std::size_t e) {
  std::size_t nnz = 0;
  for (std::size_t i = 0; i < e; ++i) nnz += load<T>(in + i * sizeof(T)) != 0;
  return nnz;
}

std::string hex32(std::uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x00000000";
  for (int i = 0; i < 8; ++i) s[9 - i] = digits[(v >> (4 * i)) & 0xF];
  return s;
}

template <typename T>
void decompress_t(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out, std::size_t out_n) {
  constexpr std::size_t w = sizeof(T);
  const std::size_t e = out_n / w;
  const std::size_t tail = out_n % w;
  const std::size_t nblocks = blocks_for(e);
  std::size_t pos = 0;
  for (std::size_t b = 0; b < nblocks; ++b) {
    const std::size_t first = b * zvc_block_elements;
    const std::size_t k = (e - first < zvc_block_elements) ? e - first : zvc_block_elements;
    if (in_n - pos < zvc_mask_bytes)
      throw codec_error("zvc stream truncated at offset " + std::to_string(pos) + ": expected the " +
                        "4-byte mask of block " + std::to_string(b) + " of " +
                        std::to_string(nblocks) + ", only " + std::to_string(in_n - pos) +
                        " bytes left (stream is " + std::to_string(in_n) + " bytes)");
    const std::uint32_t mask = load_u32le(in + pos);
    if (k < zvc_block_elements && (mask >> k) != 0)
      throw codec_error("zvc mask " + hex32(mask) + " at offset " + std::to_string(pos) +
                        " (final block " + std::to_string(b) + ") has bits set at or above element " +
                        std::to_string(k) + "; expected only bits 0.." + std::to_string(k - 1));
    const std::size_t nnz = static_cast<std::size_t>(__builtin_popcount(mask));
    const std::size_t data = pos + zvc_mask_bytes;
    if (in_n - data < nnz * w)
      throw codec_error("zvc stream truncated at offset " + std::to_string(data) + ": mask " +
                        hex32(mask) + " of block " + std::to_string(b) + " implies " +
                        std::to_string(nnz * w) + " bytes of nonzero elements, only " +
                        std::to_string(in_n - data) + " bytes left");
    std::uint8_t* dst = out + first * w;
    std::memset(dst, 0, k * w);
    const std::uint8_t* src = in + data;
    for (std::uint32_t m = mask; m != 0; m &= m - 1) {
      const unsigned i = static_cast<unsigned>(__builtin_ctz(m));
      std::memcpy(dst + i * w, src, w);
      src += w;
    }
    pos = data + nnz * w;
  }
  if (in_n - pos < tail)
    throw codec_error("zvc stream truncated at offset " + std::to_string(pos) + ": expected " +
                      std::to_string(tail) + " verbatim trailing bytes (" + std::to_string(out_n) +
                      " mod " + std::to_string(w) + "), only " + std::to_string(in_n - pos) +
                      " left");
  if (tail) std::memcpy(out + e * w, in + pos, tail);
  pos += tail;
  if (pos != in_n)
    throw codec_error("zvc stream too long: " + std::to_string(in_n - pos) +
                      " extra bytes at offset " + std::to_string(pos) + "; expected the stream of " +
                      std::to_string(out_n) + " decoded bytes to end there");
}

}  // namespace

zvc_codec::zvc_codec(unsigned element_width) : width_(element_width) {
  if (width_ != 1 && width_ != 2 && width_ != 4)
    throw codec_error("zvc codec: element width " + std::to_string(width_) +
                      " bytes is not supported; expected 1, 2 or 4");
}

std::size_t zvc_codec::max_compressed_size(std::size_t n) const {
  return zvc_mask_bytes * blocks_for(n / width_) + n;
}

std::size_t zvc_codec::compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const {
  switch (width_) {
    case 4: return compress_t<std::uint32_t>(in, n, out);
    case 2: return compress_t<std::uint16_t>(in, n, out);
    default: return compress_t<std::uint8_t>(in, n, out);
  }
}

std::size_t zvc_codec::compressed_size(const std::uint8_t* in, std::size_t n) const {
  const std::size_t e = n / width_;
  std::size_t nnz = 0;
  switch (width_) {
    case 4: nnz = count_nonzero<std::uint32_t>(in, e); break;
    case 2: nnz = count_nonzero<std::uint16_t>(in, e); break;
    default: nnz = count_nonzero<std::uint8_t>(in, e); break;
  }
  return zvc_mask_bytes * blocks_for(e) + width_ * nnz + n % width_;
}

void zvc_codec::decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                           std::size_t out_n) const {
  switch (width_) {
    case 4: decompress_t<std::uint32_t>(in, in_n, out, out_n); break;
    case 2: decompress_t<std::uint16_t>(in, in_n, out, out_n); break;
    default: decompress_t<std::uint8_t>(in, in_n, out, out_n); break;
  }
}

}  // namespace cdma::codec
