// libFuzzer target: ZVC decoder (every ISA path the CPU supports) and encoder round trip.
// All ISA paths, and the AVX2 streaming-store decoder, must give the same verdict and bytes.
#include <cstring>
#include <string>

#include "tests/fuzz/fuzz_common.h"
#include "tlm/codec/zvc.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cdma::codec;
  if (size < 3) return 0;
  const unsigned w = cdma_fuzz::width_of(data[0]);
  const zvc_codec ref(w, zvc_isa::scalar);
  cdma_fuzz::exercise(ref, data, size);
  const std::size_t out_n = data[1] | static_cast<std::size_t>(data[2]) << 8;
  std::vector<std::uint8_t> a(out_n), b(out_n);
  std::string ea, eb;
  try {
    ref.decompress(data + 3, size - 3, a.data(), out_n);
  } catch (const codec_error& e) {
    ea = e.what();
  }
  for (zvc_isa isa : {zvc_isa::avx2, zvc_isa::avx512}) {
    if (!zvc_isa_supported(isa)) continue;
    const zvc_codec c(w, isa);
    cdma_fuzz::exercise(c, data, size);
    eb.clear();
    try {
      c.decompress(data + 3, size - 3, b.data(), out_n);
    } catch (const codec_error& e) {
      eb = e.what();
    }
    if (ea != eb || (ea.empty() && a != b)) std::abort();
    std::vector<std::uint8_t> za(ref.max_compressed_size(size - 3)), zb(za.size());
    const std::size_t na = ref.compress(data + 3, size - 3, za.data());
    const std::size_t nb = c.compress(data + 3, size - 3, zb.data());
    if (na != nb || (na && std::memcmp(za.data(), zb.data(), na) != 0)) std::abort();
  }
  if (zvc_isa_supported(zvc_isa::avx2)) {  // zvc_store::streaming: same verdict and bytes
    const zvc_codec c(w, zvc_isa::avx2, zvc_store::streaming);
    std::vector<std::uint8_t> buf(out_n + 32);
    const std::size_t shift = (32 - reinterpret_cast<std::uintptr_t>(buf.data()) % 32) % 32;
    eb.clear();
    try {
      c.decompress(data + 3, size - 3, buf.data() + shift, out_n);
    } catch (const codec_error& e) {
      eb = e.what();
    }
    if (ea != eb || (ea.empty() && out_n && std::memcmp(a.data(), buf.data() + shift, out_n) != 0))
      std::abort();
  }
  return 0;
}
