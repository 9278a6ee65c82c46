// libFuzzer target: RLE decoder and encoder round trip (count width 8/16/24/32 from byte 0).
#include "tests/fuzz/fuzz_common.h"
#include "tlm/codec/rle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const unsigned bits = 8 * (1 + ((data[0] >> 2) & 3u));
  const cdma::codec::rle_codec c(cdma_fuzz::width_of(data[0]), bits);
  cdma_fuzz::exercise(c, data, size);
  return 0;
}
