// Shared input layout of the codec fuzz targets (tests/fuzz/fuzz_*.cpp):
//   byte 0      selector: bits 0-1 element width index (0 -> 1, 1 -> 2, 2/3 -> 4), bits 2-7
//               codec-specific (ZVC ISA path, RLE count width, level)
//   bytes 1..2  expected decoded size, u16 little-endian (0..65535)
//   bytes 3..   the compressed stream handed to the decoder
// Every input is also used the other way round: bytes 3.. are compressed, decoded and
// compared (the encoder must round-trip anything).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tlm/codec/codec.h"
#include "tlm/codec/window.h"

namespace cdma_fuzz {

inline unsigned width_of(std::uint8_t sel) {
  const unsigned i = sel & 3u;
  return i == 0 ? 1 : i == 1 ? 2 : 4;
}

// Decodes data[3..) as a stream of c for the requested size (errors are fine), then checks the
// encoder round trip on the same bytes and the windowed framing. Aborts on any mismatch.
inline void exercise(const cdma::codec::codec& c, const std::uint8_t* data, std::size_t size) {
  if (size < 3) return;
  const std::size_t out_n = data[1] | static_cast<std::size_t>(data[2]) << 8;
  const std::uint8_t* s = data + 3;
  const std::size_t n = size - 3;
  std::vector<std::uint8_t> out(out_n);
  try {
    c.decompress(s, n, out.data(), out_n);
  } catch (const cdma::codec::codec_error&) {
  }
  // Encoder round trip of the raw bytes.
  std::vector<std::uint8_t> z(c.max_compressed_size(n));
  const std::size_t zn = c.compress(s, n, z.data());
  if (zn > z.size() || zn != c.compressed_size(s, n)) std::abort();
  std::vector<std::uint8_t> back(n);
  c.decompress(z.data(), zn, back.data(), n);  // must not throw
  for (std::size_t i = 0; i < n; ++i)
    if (back[i] != s[i]) std::abort();
  // Window framing: decode the stream under a fuzzed entry (bytes = n, raw flag from sel bit 7).
  cdma::codec::window_entry e{static_cast<std::uint32_t>(n), (data[0] & 0x80) != 0};
  try {
    cdma::codec::decompress_window(c, e, s, n, out.data(), out_n);
  } catch (const cdma::codec::codec_error&) {
  }
}

}  // namespace cdma_fuzz
