// libFuzzer target: lz4 decoder (system library behind tlm/codec/stdlib_codecs.h) and encoder
// round trip; level from byte 0 bits 2-5.
#include "tests/fuzz/fuzz_common.h"
#include "tlm/codec/stdlib_codecs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const int level = 1 + ((data[0] >> 2) & 7);  // 1..8: valid for zlib, lz4 (HC >= 2), zstd
  const cdma::codec::lz4_codec c(cdma_fuzz::width_of(data[0]), level);
  cdma_fuzz::exercise(c, data, size);
  return 0;
}
