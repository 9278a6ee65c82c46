// ZVC kernels with AVX2 (+BMI1, POPCNT), compiled for that target only in this file (function
// level, via the pragma below), so the rest of the build stays portable. Selected at run time
// by zvc_isa_supported(zvc_isa::avx2). Output is byte-identical to the scalar kernels.
#include "tlm/codec/zvc.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include <cstring>
#include <string>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,bmi,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,bmi,popcnt")
#endif

#include "tlm/codec/zvc_impl.h"
#include "tlm/codec/zvc_simd_luts.h"

namespace cdma::codec::zvc_detail {
namespace {

inline __m128i loadl(const void* p) { return _mm_loadl_epi64(static_cast<const __m128i*>(p)); }

inline std::size_t count_tail(const std::uint8_t* in, std::size_t from, std::size_t e,
                              std::size_t w) {
  std::size_t nnz = 0;
  for (std::size_t i = from; i < e; ++i) {
    std::uint32_t v = 0;
    std::memcpy(&v, in + i * w, w);
    nnz += v != 0;
  }
  return nnz;
}

template <typename T>
struct avx2_kernel;

// w = 4: one block = four groups of 8 lanes. All four lane masks are computed first and every
// group's output offset comes from a popcount of the block mask prefix (no serial chain of
// pointer updates through the groups), then per group: LUT -> vpermd -> one 32-byte store.
inline unsigned zero_lanes_epi32(__m256i v) {
  return static_cast<unsigned>(
      _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, _mm256_setzero_si256()))));
}
inline __m256i compact_epi32(__m256i v, unsigned m) {  // nonzero lanes of m first, in order
  return _mm256_permutevar8x32_epi32(v, _mm256_cvtepu8_epi32(loadl(luts.compact8[m])));
}
inline __m256i expand_epi32(__m256i v, unsigned m) {  // lane i = next of v if bit i, else 0
  const __m256i idx = _mm256_cvtepi8_epi32(loadl(luts.expand8[m]));  // 0x80 -> -128
  return _mm256_andnot_si256(_mm256_srai_epi32(idx, 31), _mm256_permutevar8x32_epi32(v, idx));
}

template <>
struct avx2_kernel<std::uint32_t> {
  static std::size_t encode_full(const std::uint8_t* in, std::uint8_t* out) {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 32));
    const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 64));
    const __m256i v3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 96));
    const unsigned m0 = zero_lanes_epi32(v0) ^ 0xFFu, m1 = zero_lanes_epi32(v1) ^ 0xFFu;
    const unsigned m2 = zero_lanes_epi32(v2) ^ 0xFFu, m3 = zero_lanes_epi32(v3) ^ 0xFFu;
    const std::uint32_t mask = m0 | m1 << 8 | m2 << 16 | m3 << 24;
    std::memcpy(out, &mask, 4);  // little-endian host
    // Offsets of groups 1..3 and the end; each store stays inside 4 + 4 * 32 bytes.
    const std::size_t o1 = zvc_mask_bytes + 4 * _mm_popcnt_u32(m0);
    const std::size_t o2 = zvc_mask_bytes + 4 * _mm_popcnt_u32(mask & 0xFFFFu);
    const std::size_t o3 = zvc_mask_bytes + 4 * _mm_popcnt_u32(mask & 0xFFFFFFu);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + zvc_mask_bytes), compact_epi32(v0, m0));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + o1), compact_epi32(v1, m1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + o2), compact_epi32(v2, m2));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + o3), compact_epi32(v3, m3));
    return zvc_mask_bytes + 4 * static_cast<std::size_t>(_mm_popcnt_u32(mask));
  }
  static constexpr std::size_t read_slack = 32;
  static void decode_full(const std::uint8_t* src, std::uint32_t mask, std::uint8_t* dst) {
    const unsigned m0 = mask & 0xFFu, m1 = (mask >> 8) & 0xFFu;
    const unsigned m2 = (mask >> 16) & 0xFFu, m3 = mask >> 24;
    // Group g's data starts after the nonzeros of groups < g; the last load reads at most
    // 32 - 4 * popcount(m3) <= read_slack bytes past the block's data.
    const std::size_t o1 = 4 * _mm_popcnt_u32(m0);
    const std::size_t o2 = 4 * _mm_popcnt_u32(mask & 0xFFFFu);
    const std::size_t o3 = 4 * _mm_popcnt_u32(mask & 0xFFFFFFu);
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + o1));
    const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + o2));
    const __m256i v3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + o3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), expand_epi32(v0, m0));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32), expand_epi32(v1, m1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 64), expand_epi32(v2, m2));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 96), expand_epi32(v3, m3));
  }
  static std::size_t count_nonzero(const std::uint8_t* in, std::size_t e) {
    const __m256i z = _mm256_setzero_si256();
    std::size_t zeros = 0, i = 0;
    for (; i + 32 <= e; i += 32) {
      const std::uint8_t* p = in + 4 * i;
      const unsigned m0 = _mm256_movemask_ps(_mm256_castsi256_ps(
          _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), z)));
      const unsigned m1 = _mm256_movemask_ps(_mm256_castsi256_ps(
          _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), z)));
      const unsigned m2 = _mm256_movemask_ps(_mm256_castsi256_ps(
          _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64)), z)));
      const unsigned m3 = _mm256_movemask_ps(_mm256_castsi256_ps(
          _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 96)), z)));
      zeros += _mm_popcnt_u32(m0 | m1 << 8 | m2 << 16 | m3 << 24);
    }
    return (i - zeros) + count_tail(in, i, e, 4);
  }
};

template <>
struct avx2_kernel<std::uint16_t> {
  static std::size_t encode_full(const std::uint8_t* in, std::uint8_t* out) {
    const __m128i z = _mm_setzero_si128();
    std::uint8_t* p = out + zvc_mask_bytes;
    std::uint32_t mask = 0;
    for (int g = 0; g < 4; ++g) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * g));
      const __m128i c = _mm_cmpeq_epi16(v, z);
      const unsigned m = ~static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(c, c))) & 0xFFu;
      const __m128i sh = _mm_load_si128(reinterpret_cast<const __m128i*>(luts.compact16[m]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm_shuffle_epi8(v, sh));
      p += 2 * _mm_popcnt_u32(m);
      mask |= m << (8 * g);
    }
    std::memcpy(out, &mask, 4);
    return static_cast<std::size_t>(p - out);
  }
  static constexpr std::size_t read_slack = 16;
  static void decode_full(const std::uint8_t* src, std::uint32_t mask, std::uint8_t* dst) {
    for (int g = 0; g < 4; ++g) {
      const unsigned m = (mask >> (8 * g)) & 0xFFu;
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
      const __m128i sh = _mm_load_si128(reinterpret_cast<const __m128i*>(luts.expand16[m]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16 * g), _mm_shuffle_epi8(v, sh));
      src += 2 * _mm_popcnt_u32(m);
    }
  }
  static std::size_t count_nonzero(const std::uint8_t* in, std::size_t e) {
    const __m256i z = _mm256_setzero_si256();
    std::size_t zeros2 = 0, i = 0;  // zero elements counted twice (2 mask bits each)
    for (; i + 32 <= e; i += 32) {
      const std::uint8_t* p = in + 2 * i;
      const std::uint64_t m0 = static_cast<std::uint32_t>(_mm256_movemask_epi8(
          _mm256_cmpeq_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), z)));
      const std::uint64_t m1 = static_cast<std::uint32_t>(_mm256_movemask_epi8(
          _mm256_cmpeq_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), z)));
      zeros2 += static_cast<std::size_t>(_mm_popcnt_u64(m0 | m1 << 32));
    }
    return (i - zeros2 / 2) + count_tail(in, i, e, 2);
  }
};

template <>
struct avx2_kernel<std::uint8_t> {
  static std::size_t encode_full(const std::uint8_t* in, std::uint8_t* out) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
    const std::uint32_t mask =
        ~static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_setzero_si256())));
    std::uint8_t* p = out + zvc_mask_bytes;
    for (int g = 0; g < 4; ++g) {
      const unsigned m = (mask >> (8 * g)) & 0xFFu;
      const __m128i x = loadl(in + 8 * g);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_shuffle_epi8(x, loadl(luts.compact8[m])));
      p += _mm_popcnt_u32(m);
    }
    std::memcpy(out, &mask, 4);
    return static_cast<std::size_t>(p - out);
  }
  static constexpr std::size_t read_slack = 8;
  static void decode_full(const std::uint8_t* src, std::uint32_t mask, std::uint8_t* dst) {
    for (int g = 0; g < 4; ++g) {
      const unsigned m = (mask >> (8 * g)) & 0xFFu;
      const __m128i x = loadl(src);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 8 * g),
                       _mm_shuffle_epi8(x, loadl(luts.expand8[m])));
      src += _mm_popcnt_u32(m);
    }
  }
  static std::size_t count_nonzero(const std::uint8_t* in, std::size_t e) {
    const __m256i z = _mm256_setzero_si256();
    std::size_t zeros = 0, i = 0;
    for (; i + 64 <= e; i += 64) {
      const std::uint64_t m0 = static_cast<std::uint32_t>(_mm256_movemask_epi8(
          _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)), z)));
      const std::uint64_t m1 = static_cast<std::uint32_t>(_mm256_movemask_epi8(
          _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 32)), z)));
      zeros += static_cast<std::size_t>(_mm_popcnt_u64(m0 | m1 << 32));
    }
    return (i - zeros) + count_tail(in, i, e, 1);
  }
};

}  // namespace

const zvc_kernels* avx2_kernels() {
  static const zvc_kernels t = make_table<avx2_kernel>();
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
const zvc_kernels* avx2_kernels() { return nullptr; }
}  // namespace cdma::codec::zvc_detail

#endif
