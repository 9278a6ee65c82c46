// libFuzzer target: the .npy parser (workloads/io/npy.h). Any input is either parsed into an
// array whose data size matches its shape and dtype, or rejected with npy_error.
#include <cstdlib>

#include "workloads/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto a = cdma::workloads::parse_npy(data, size, "fuzz.npy");
    if (a.data.size() != a.elements() * a.element_width) std::abort();
  } catch (const cdma::workloads::npy_error&) {
  }
  return 0;
}
