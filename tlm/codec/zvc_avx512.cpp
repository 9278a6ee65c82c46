// ZVC kernels with AVX-512 (F, BW, VL, VBMI2: masked compress / expand of 32-, 16- and 8-bit
// lanes), compiled for that target only in this file (function level, via the pragma below).
// Selected at run time by zvc_isa_supported(zvc_isa::avx512) (Ice Lake / Zen 4 and later).
// Output is byte-identical to the scalar kernels.
#include "tlm/codec/zvc.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include <cstring>
#include <string>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi2,bmi,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vbmi2,bmi,popcnt")
#endif

#include "tlm/codec/zvc_impl.h"

namespace cdma::codec::zvc_detail {
namespace {

template <typename T>
struct avx512_kernel;

// Stores of a full vector at p stay inside the block's worst case 4 + 32 * w bytes: p is at
// most 4 + w * (elements before this vector) past the block start.
template <>
struct avx512_kernel<std::uint32_t> {
  static std::size_t encode_full(const std::uint8_t* in, std::uint8_t* out) {
    std::uint8_t* p = out + zvc_mask_bytes;
    std::uint32_t mask = 0;
    for (int h = 0; h < 2; ++h) {
      const __m512i v = _mm512_loadu_si512(in + 64 * h);
      const __mmask16 m = _mm512_test_epi32_mask(v, v);
      _mm512_storeu_si512(p, _mm512_maskz_compress_epi32(m, v));
      p += 4 * _mm_popcnt_u32(m);
      mask |= static_cast<std::uint32_t>(m) << (16 * h);
    }
    std::memcpy(out, &mask, 4);
    return static_cast<std::size_t>(p - out);
  }
  static constexpr std::size_t read_slack = 0;  // expandloadu reads only the set lanes
  static void decode_full(const std::uint8_t* src, std::uint32_t mask, std::uint8_t* dst) {
    for (int h = 0; h < 2; ++h) {
      const __mmask16 m = static_cast<__mmask16>(mask >> (16 * h));
      _mm512_storeu_si512(dst + 64 * h, _mm512_maskz_expandloadu_epi32(m, src));
      src += 4 * _mm_popcnt_u32(m);
    }
  }
  static std::size_t count_nonzero(const std::uint8_t* in, std::size_t e) {
    std::size_t nnz = 0, i = 0;
    for (; i + 16 <= e; i += 16) {
      const __m512i v = _mm512_loadu_si512(in + 4 * i);
      nnz += _mm_popcnt_u32(_mm512_test_epi32_mask(v, v));
    }
    for (; i < e; ++i) nnz += load<std::uint32_t>(in + 4 * i) != 0;
    return nnz;
  }
};

template <>
struct avx512_kernel<std::uint16_t> {
  static std::size_t encode_full(const std::uint8_t* in, std::uint8_t* out) {
    const __m512i v = _mm512_loadu_si512(in);
    const __mmask32 m = _mm512_test_epi16_mask(v, v);
    _mm512_storeu_si512(out + zvc_mask_bytes, _mm512_maskz_compress_epi16(m, v));
    const std::uint32_t mask = m;
    std::memcpy(out, &mask, 4);
    return zvc_mask_bytes + 2 * _mm_popcnt_u32(mask);
  }
  static constexpr std::size_t read_slack = 0;
  static void decode_full(const std::uint8_t* src, std::uint32_t mask, std::uint8_t* dst) {
    _mm512_storeu_si512(dst, _mm512_maskz_expandloadu_epi16(static_cast<__mmask32>(mask), src));
  }
  static std::size_t count_nonzero(const std::uint8_t* in, std::size_t e) {
    std::size_t nnz = 0, i = 0;
    for (; i + 32 <= e; i += 32) {
      const __m512i v = _mm512_loadu_si512(in + 2 * i);
      nnz += _mm_popcnt_u32(_mm512_test_epi16_mask(v, v));
    }
    for (; i < e; ++i) nnz += load<std::uint16_t>(in + 2 * i) != 0;
    return nnz;
  }
};

template <>
struct avx512_kernel<std::uint8_t> {
  static std::size_t encode_full(const std::uint8_t* in, std::uint8_t* out) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
    const __mmask32 m = _mm256_test_epi8_mask(v, v);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + zvc_mask_bytes),
                        _mm256_maskz_compress_epi8(m, v));
    const std::uint32_t mask = m;
    std::memcpy(out, &mask, 4);
    return zvc_mask_bytes + _mm_popcnt_u32(mask);
  }
  static constexpr std::size_t read_slack = 0;
  static void decode_full(const std::uint8_t* src, std::uint32_t mask, std::uint8_t* dst) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst),
                        _mm256_maskz_expandloadu_epi8(static_cast<__mmask32>(mask), src));
  }
  static std::size_t count_nonzero(const std::uint8_t* in, std::size_t e) {
    std::size_t nnz = 0, i = 0;
    for (; i + 64 <= e; i += 64) {
      const __m512i v = _mm512_loadu_si512(in + i);
      nnz += static_cast<std::size_t>(_mm_popcnt_u64(_mm512_test_epi8_mask(v, v)));
    }
    for (; i < e; ++i) nnz += in[i] != 0;
    return nnz;
  }
};

}  // namespace

const zvc_kernels* avx512_kernels() {
  static const zvc_kernels t = make_table<avx512_kernel>();
  return &t;
}

}  // namespace cdma::codec::zvc_detail

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#else  // not x86

namespace cdma::codec::zvc_detail {
const zvc_kernels* avx512_kernels() { return nullptr; }
}  // namespace cdma::codec::zvc_detail

#endif
