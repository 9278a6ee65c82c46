// Private to tlm/codec/zvc_avx2.cpp: shuffle tables of the AVX2 ZVC kernels, generated at
// compile time. For an 8-bit lane mask m (bit i set = element i nonzero):
//   compact8[m][k] = index of the k-th set bit of m (k < popcount(m)), else 0x80;
//   expand8[m][i]  = rank of bit i among the set bits of m (if bit i is set), else 0x80;
//   compact16 / expand16: the same for 2-byte elements, as pshufb byte indices;
//   expand8s[m][i] = 8 + rank of bit i (if bit i is set), else 0: vpermd indices (low 3 bits)
//   that are also vpsignd selectors (positive: keep the lane, 0: zero it).
// 0x80 makes pshufb write a zero byte; the 32-bit permute uses only the low 3 bits.
#pragma once
#include <array>
#include <cstdint>

namespace cdma::codec::zvc_detail {
namespace {

struct simd_luts {
  alignas(64) std::uint8_t compact8[256][8];
  alignas(64) std::uint8_t expand8[256][8];
  alignas(64) std::uint8_t compact16[256][16];
  alignas(64) std::uint8_t expand16[256][16];
  alignas(64) std::uint8_t expand8s[256][8];
};

constexpr simd_luts make_luts() {
  simd_luts t{};
  for (unsigned m = 0; m < 256; ++m) {
    unsigned k = 0;
    for (unsigned i = 0; i < 8; ++i) {
      t.compact8[m][i] = 0x80;
      t.expand8[m][i] = 0x80;
      t.compact16[m][2 * i] = 0x80;
      t.compact16[m][2 * i + 1] = 0x80;
      t.expand16[m][2 * i] = 0x80;
      t.expand16[m][2 * i + 1] = 0x80;
      t.expand8s[m][i] = 0;
    }
    for (unsigned i = 0; i < 8; ++i) {
      if (!(m >> i & 1)) continue;
      t.compact8[m][k] = static_cast<std::uint8_t>(i);
      t.expand8[m][i] = static_cast<std::uint8_t>(k);
      t.compact16[m][2 * k] = static_cast<std::uint8_t>(2 * i);
      t.compact16[m][2 * k + 1] = static_cast<std::uint8_t>(2 * i + 1);
      t.expand16[m][2 * i] = static_cast<std::uint8_t>(2 * k);
      t.expand16[m][2 * i + 1] = static_cast<std::uint8_t>(2 * k + 1);
      t.expand8s[m][i] = static_cast<std::uint8_t>(8 + k);
      ++k;
    }
  }
  return t;
}

constexpr simd_luts luts = make_luts();

}  // namespace
}  // namespace cdma::codec::zvc_detail
