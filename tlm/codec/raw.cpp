#include "tlm/codec/raw.h"

#include <cstring>

namespace cdma::codec {

raw_codec::raw_codec(unsigned element_width) : width_(element_width) {
  if (width_ != 1 && width_ != 2 && width_ != 4)
    throw codec_error("raw codec: element width " + std::to_string(width_) +
                      " bytes is not supported; expected 1, 2 or 4");
}

std::size_t raw_codec::compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const {
  if (n) std::memcpy(out, in, n);
  return n;
}

void raw_codec::decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                           std::size_t out_n) const {
  if (in_n < out_n)
    throw codec_error("raw stream truncated at offset " + std::to_string(in_n) + ": expected " +
                      std::to_string(out_n) + " bytes (one per decoded byte)");
  if (in_n > out_n)
    throw codec_error("raw stream too long: " + std::to_string(in_n - out_n) +
                      " extra bytes at offset " + std::to_string(out_n) + "; expected exactly " +
                      std::to_string(out_n) + " bytes");
  if (out_n) std::memcpy(out, in, out_n);
}

}  // namespace cdma::codec
