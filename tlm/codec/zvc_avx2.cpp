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
inline __m256i compact_epi32(__m256i v, std::uint64_t m) {  // nonzero lanes of m first, in order
  return _mm256_permutevar8x32_epi32(v, _mm256_cvtepu8_epi32(loadl(luts.compact8[m])));
}
// Expand: lane i of the result = the next element of v if bit i of m is set, else 0.
// expand_index(m): vpermd indices 8 + rank for a set lane (vpermd uses the low 3 bits), 0 for
// a zero lane, so the same vector is the vpsignd selector that zeroes the zero lanes (one
// instruction instead of a shift and an and-not).
inline __m256i expand_index(std::uint64_t m) { return _mm256_cvtepu8_epi32(loadl(luts.expand8s[m])); }
inline __m256i expand_with(__m256i v, __m256i idx) {
  return _mm256_sign_epi32(_mm256_permutevar8x32_epi32(v, idx), idx);
}

// w = 4. NT = true: the streaming-store variant (zvc_store::streaming, avx2_nt_kernels()): the
// decoder writes with non-temporal stores when the output is 32-byte aligned (checked once per
// call); same bytes and errors. The store fence is not issued here but by zvc_codec, after each
// decompress call or once after a decompress_windows batch (the table's `fence`).
template <bool NT>
struct avx2_kernel_u32 {
  static constexpr bool streaming_output = NT;
  template <bool Stream>
  static void put(std::uint8_t* dst, __m256i v) {
    if (Stream)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), v);
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), v);
  }
  static bool stream_to(const std::uint8_t* out) {
    return NT && (reinterpret_cast<std::uintptr_t>(out) & 31) == 0;
  }
  static std::size_t encode_full(const std::uint8_t* in, std::uint8_t* out) {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 32));
    const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 64));
    const __m256i v3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 96));
    // The 32-bit mask with one movemask: the four compare results are packed to bytes
    // (packs work per 128-bit lane, which leaves dword k of the low lane = elements 0..3 of
    // group k and dword k of the high lane = its elements 4..7; the vpermd puts them in
    // element order). Replaces four movmskps (one per cycle on Zen 3) and their shifts / ors.
    const __m256i z = _mm256_setzero_si256();
    const __m256i p01 = _mm256_packs_epi32(_mm256_cmpeq_epi32(v0, z), _mm256_cmpeq_epi32(v1, z));
    const __m256i p23 = _mm256_packs_epi32(_mm256_cmpeq_epi32(v2, z), _mm256_cmpeq_epi32(v3, z));
    const __m256i zb = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p01, p23),
                                                   _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    const std::uint32_t mask = ~static_cast<std::uint32_t>(_mm256_movemask_epi8(zb));
    std::memcpy(out, &mask, 4);  // little-endian host
    // Offsets of groups 1..3 (64-bit element counts, scaled by 4 in the store addresses) and
    // the end; each store stays inside 4 + 4 * 32 bytes.
    const std::uint64_t m = mask;
    const std::uint64_t c1 = static_cast<std::uint64_t>(_mm_popcnt_u64(m & 0xFFu));
    const std::uint64_t c2 = static_cast<std::uint64_t>(_mm_popcnt_u64(m & 0xFFFFu));
    const std::uint64_t c3 = static_cast<std::uint64_t>(_mm_popcnt_u64(m & 0xFFFFFFu));
    std::uint8_t* d = out + zvc_mask_bytes;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), compact_epi32(v0, m & 0xFFu));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 4 * c1), compact_epi32(v1, (m >> 8) & 0xFFu));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 4 * c2), compact_epi32(v2, (m >> 16) & 0xFFu));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 4 * c3), compact_epi32(v3, m >> 24));
    return zvc_mask_bytes + 4 * static_cast<std::size_t>(_mm_popcnt_u64(m));
  }
  static constexpr std::size_t read_slack = 32;
  // One block from its mask m and the four groups' expand indices (expand_indices(m)).
  // The group offsets are 64-bit element counts, scaled by 4 in the load addresses; the four
  // loads depend only on the mask. Group g's data starts after the nonzeros of groups < g;
  // the last load reads at most 32 - 4 * popcount(m3) <= read_slack bytes past the data.
  template <bool Stream>
  static void decode_with(const std::uint8_t* src, std::uint64_t m, const __m256i (&idx)[4],
                          std::uint8_t* dst) {
    const std::uint64_t c1 = static_cast<std::uint64_t>(_mm_popcnt_u64(m & 0xFFu));
    const std::uint64_t c2 = static_cast<std::uint64_t>(_mm_popcnt_u64(m & 0xFFFFu));
    const std::uint64_t c3 = static_cast<std::uint64_t>(_mm_popcnt_u64(m & 0xFFFFFFu));
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 4 * c1));
    const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 4 * c2));
    const __m256i v3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 4 * c3));
    put<Stream>(dst, expand_with(v0, idx[0]));
    put<Stream>(dst + 32, expand_with(v1, idx[1]));
    put<Stream>(dst + 64, expand_with(v2, idx[2]));
    put<Stream>(dst + 96, expand_with(v3, idx[3]));
  }
  static void expand_indices(std::uint64_t m, __m256i (&idx)[4]) {
    idx[0] = expand_index(m & 0xFFu);
    idx[1] = expand_index((m >> 8) & 0xFFu);
    idx[2] = expand_index((m >> 16) & 0xFFu);
    idx[3] = expand_index(m >> 24);
  }
  static void decode_full(const std::uint8_t* src, std::uint32_t mask, std::uint8_t* dst) {
    __m256i idx[4];
    expand_indices(mask, idx);
    decode_with<false>(src, mask, idx, dst);
  }
  // A full block whose data ends fewer than read_slack bytes before the end of the stream
  // (the stream's last 3-4 blocks at density 0.05): each group's nonzeros are loaded with a
  // masked load of exactly its popcount lanes (vpmaskmovd: masked-off lanes are not accessed
  // and cannot fault), so nothing past the block's data is read. Replaces the zero-padded copy
  // of the stream's end (a memcpy + memset per call).
  static void decode_exact(const std::uint8_t* src, std::uint32_t mask, std::uint8_t* dst) {
    const std::uint64_t m = mask;
    const int c1 = static_cast<int>(_mm_popcnt_u64(m & 0xFFu));
    const int c2 = static_cast<int>(_mm_popcnt_u64(m & 0xFFFFu));
    const int c3 = static_cast<int>(_mm_popcnt_u64(m & 0xFFFFFFu));
    const int c4 = static_cast<int>(_mm_popcnt_u64(m));
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const auto first = [&](int n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane); };
    const auto at = [&](int c) { return reinterpret_cast<const int*>(src + 4 * c); };
    __m256i idx[4];
    expand_indices(m, idx);
    const bool s = stream_to(dst);  // dst of a block is 32-aligned iff the output is
    const __m256i v0 = _mm256_maskload_epi32(at(0), first(c1));
    const __m256i v1 = _mm256_maskload_epi32(at(c1), first(c2 - c1));
    const __m256i v2 = _mm256_maskload_epi32(at(c2), first(c3 - c2));
    const __m256i v3 = _mm256_maskload_epi32(at(c3), first(c4 - c3));
    if (s) {
      put<true>(dst, expand_with(v0, idx[0])), put<true>(dst + 32, expand_with(v1, idx[1]));
      put<true>(dst + 64, expand_with(v2, idx[2])), put<true>(dst + 96, expand_with(v3, idx[3]));
    } else {
      put<false>(dst, expand_with(v0, idx[0])), put<false>(dst + 32, expand_with(v1, idx[1]));
      put<false>(dst + 64, expand_with(v2, idx[2])), put<false>(dst + 96, expand_with(v3, idx[3]));
    }
  }
  // The fast loop of decompress_loop (same contract: decodes blocks b, b+1, .. < nfull while a
  // block's mask, data and read_slack lie inside the stream; returns with pos and b at the
  // first block it did not decode), software-pipelined: the next block's mask, length and
  // expand indices (the LUT loads) are issued before this block's permutes and stores, so the
  // long mask -> LUT -> permute latency of one block overlaps the work of the previous one.
  // The next mask is read only when this block's end + read_slack <= in_n (so it lies in the
  // stream). Unrolled by two so that the two index sets swap roles instead of being copied.
  // Output prefetch (cached stores only): only when `prefetch` (decompress_loop's rule).
  template <bool Stream>
  static void fast_loop(const std::uint8_t* in, std::size_t in_n, std::size_t& pos_io,
                        std::size_t& b_io, std::size_t nfull, std::uint8_t* out, std::size_t out_n,
                        bool prefetch) {
    std::size_t pos = pos_io, b = b_io;
    if (b >= nfull || in_n < read_slack + zvc_mask_bytes || pos > in_n - read_slack - zvc_mask_bytes)
      return;
    const std::size_t limit = in_n - read_slack;  // a block may be decoded iff its end <= limit
    std::uint64_t m = load_u32le(in + pos);
    std::size_t end = pos + zvc_mask_bytes + 4 * static_cast<std::size_t>(_mm_popcnt_u64(m));
    if (end > limit) return;
    __m256i idx[4], idxn[4];
    expand_indices(m, idx);
    std::uint64_t mn;
    std::size_t endn;
    for (;;) {
      if (!Stream && prefetch && b % 8 == 0)
        prefetch_kib(out, b * 128 + zvc_prefetch_distance, out_n, true);
      mn = load_u32le(in + end);
      endn = end + zvc_mask_bytes + 4 * static_cast<std::size_t>(_mm_popcnt_u64(mn));
      expand_indices(mn, idxn);
      decode_with<Stream>(in + pos + zvc_mask_bytes, m, idx, out + b * 128);
      pos = end;
      if (++b == nfull || endn > limit) break;
      if (!Stream && prefetch && b % 8 == 0)
        prefetch_kib(out, b * 128 + zvc_prefetch_distance, out_n, true);
      m = load_u32le(in + endn);
      end = endn + zvc_mask_bytes + 4 * static_cast<std::size_t>(_mm_popcnt_u64(m));
      expand_indices(m, idx);
      decode_with<Stream>(in + pos + zvc_mask_bytes, mn, idxn, out + b * 128);
      pos = endn;
      if (++b == nfull || end > limit) break;
    }
    // The stream's last full blocks (data ends fewer than read_slack bytes before in_n): the
    // two checks of the careful loop for a full block (mask and data inside the stream), then
    // decode_exact. The first block that fails a check is left to the careful loop, which
    // reports it.
    for (; b < nfull; ++b) {
      if (in_n - pos < zvc_mask_bytes) break;
      const std::uint32_t mt = load_u32le(in + pos);
      const std::size_t e_t =
          pos + zvc_mask_bytes + 4 * static_cast<std::size_t>(_mm_popcnt_u64(mt));
      if (e_t > in_n) break;
      decode_exact(in + pos + zvc_mask_bytes, mt, out + b * 128);
      pos = e_t;
    }
    pos_io = pos;
    b_io = b;
  }
  static void decode_fast(const std::uint8_t* in, std::size_t in_n, std::size_t& pos_io,
                          std::size_t& b_io, std::size_t nfull, std::uint8_t* out,
                          std::size_t out_n, bool prefetch) {
    if (stream_to(out))
      fast_loop<true>(in, in_n, pos_io, b_io, nfull, out, out_n, prefetch);
    else
      fast_loop<false>(in, in_n, pos_io, b_io, nfull, out, out_n, prefetch);
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
struct avx2_kernel<std::uint32_t> : avx2_kernel_u32<false> {};

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

namespace {
template <typename T>
struct avx2_nt_kernel : avx2_kernel<T> {};
template <>
struct avx2_nt_kernel<std::uint32_t> : avx2_kernel_u32<true> {};
}  // namespace

namespace {
// Orders the non-temporal stores of the streaming decoder before any later store (and makes
// them visible to other threads): sfence.
void stream_fence() { _mm_sfence(); }
}  // namespace

const zvc_kernels* avx2_nt_kernels() {
  static const zvc_kernels t = [] {
    zvc_kernels k = make_table<avx2_nt_kernel>();
    k.fence[2] = &stream_fence;  // w = 4 streams; w = 1, 2 are the cached kernels
    return k;
  }();
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
const zvc_kernels* avx2_nt_kernels() { return nullptr; }
}  // namespace cdma::codec::zvc_detail

#endif
