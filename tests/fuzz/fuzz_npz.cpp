// libFuzzer target: the .npz reader (zip archive from memory, every member parsed).
#include <cstdlib>

#include "workloads/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const cdma::workloads::npz_archive z(data, size, "fuzz.npz");
    for (const auto& k : z.keys()) {
      try {
        const auto a = z.read(k);
        if (a.data.size() != a.elements() * a.element_width) std::abort();
      } catch (const cdma::workloads::npy_error&) {
      }
    }
  } catch (const cdma::workloads::npy_error&) {
  }
  return 0;
}
