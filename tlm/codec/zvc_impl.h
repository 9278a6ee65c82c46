// Private to tlm/codec/zvc*.cpp: the ZVC block loops shared by the scalar, AVX2 and AVX-512
// kernels. Everything has internal linkage (anonymous namespace) because each kernel file
// includes this header under a different `#pragma GCC target`; sharing instantiations across
// those files would let the linker pick an AVX2 copy for the scalar path.
//
// A kernel K provides, for element type T (w = sizeof(T)):
//   static std::size_t encode_full(const uint8_t* in, uint8_t* out)
//       one full block of 32 elements; returns bytes written (4 + w * nnz). May store up to
//       the block's worst case 4 + 32 * w bytes (never more).
//   static constexpr std::size_t read_slack
//       bytes past the block's nonzero data decode_full may read (loaded, not used).
//   static void decode_full(const uint8_t* src, uint32_t mask, uint8_t* dst)
//       writes exactly 32 * w bytes: element i = next nonzero from src if mask bit i, else 0.
//   static std::size_t count_nonzero(const uint8_t* in, std::size_t e)
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "tlm/codec/codec.h"
#include "tlm/codec/zvc.h"

namespace cdma::codec::zvc_detail {
namespace {

template <typename T>
inline T load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // unaligned-safe; values are only compared with 0
  return v;
}

inline void store_u32le(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v >> 16);
  p[3] = static_cast<std::uint8_t>(v >> 24);
}

inline std::uint32_t load_u32le(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

inline std::size_t blocks_for(std::size_t elements) {
  return elements / zvc_block_elements + (elements % zvc_block_elements != 0);
}

// Encodes one block of k <= 32 elements at `out`; returns bytes written. Branchless: every
// element is stored at the current position, which only advances for nonzero elements; the
// stores stay inside 4 + k * w bytes, the block's worst case.
template <typename T>
inline std::size_t encode_block_scalar(const std::uint8_t* in, std::size_t k, std::uint8_t* out) {
  std::uint32_t mask = 0;
  std::uint8_t* p = out + zvc_mask_bytes;
  for (std::size_t i = 0; i < k; ++i) {
    const T v = load<T>(in + i * sizeof(T));
    const bool nz = v != 0;
    mask |= static_cast<std::uint32_t>(nz) << i;
    std::memcpy(p, &v, sizeof v);
    p += nz ? sizeof(T) : 0;
  }
  store_u32le(out, mask);
  return static_cast<std::size_t>(p - out);
}

template <typename T>
inline void decode_block_scalar(const std::uint8_t* src, std::uint32_t mask, std::size_t k,
                                std::uint8_t* dst) {
  constexpr std::size_t w = sizeof(T);
  std::memset(dst, 0, k * w);
  for (std::uint32_t m = mask; m != 0; m &= m - 1) {
    const unsigned i = static_cast<unsigned>(__builtin_ctz(m));
    std::memcpy(dst + i * w, src, w);
    src += w;
  }
}

template <typename T>
inline std::size_t count_nonzero_scalar(const std::uint8_t* in, std::size_t e) {
  std::size_t nnz = 0;
  for (std::size_t i = 0; i < e; ++i) nnz += load<T>(in + i * sizeof(T)) != 0;
  return nnz;
}

template <typename T>
struct scalar_kernel {
  static std::size_t encode_full(const std::uint8_t* in, std::uint8_t* out) {
    return encode_block_scalar<T>(in, zvc_block_elements, out);
  }
  static constexpr std::size_t read_slack = 0;
  static void decode_full(const std::uint8_t* src, std::uint32_t mask, std::uint8_t* dst) {
    decode_block_scalar<T>(src, mask, zvc_block_elements, dst);
  }
  static std::size_t count_nonzero(const std::uint8_t* in, std::size_t e) {
    return count_nonzero_scalar<T>(in, e);
  }
};

inline std::string hex32(std::uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x00000000";
  for (int i = 0; i < 8; ++i) s[9 - i] = digits[(v >> (4 * i)) & 0xF];
  return s;
}

// Software prefetch, inside the caller's buffers only (never past their end). A 4 KiB window's
// first 1 KiB is requested at entry, and every 1 KiB of coded data requests the next-but-one
// KiB (compress: the input; decompress: the output): windows are page-sized and the hardware
// prefetchers restart at every 4 KiB page, so without this each line of a window waits for
// DRAM. Until 2026-11-30 the per-block prefetch was written as a loop that GCC 12 deleted
// (a loop or branch whose only effect is __builtin_prefetch is dead code to it), so only the
// entry prefetch was in effect; prefetch_kib is unrolled and fenced with an empty asm.
// Measured on Zen 3 (same process, old and new kernels interleaved, 32 MiB of 4 KiB windows):
// compress and decompress +9-11 % in the stream regime; in L2 (128 KiB resident) it costs
// about 5 % (one 16-line burst per KiB: two checked prefetches per 128-byte block cost
// 10-15 % there). Prefetches are plain read hints (prefetcht0 on x86): they do not change
// what is cached after the call, unlike non-temporal stores (a window decoded into the
// engine's 4 KiB staging buffer is read right after and must stay in cache).
constexpr std::size_t zvc_prefetch_head = 1024;      // bytes requested at entry
constexpr std::size_t zvc_prefetch_distance = 1024;  // bytes ahead of the KiB being coded

inline void prefetch_line(const std::uint8_t* p, bool write) {
  if (write)
    __builtin_prefetch(p, 1, 3);
  else
    __builtin_prefetch(p, 0, 3);
}

// The 16 cache lines of [start, start + 1 KiB) of a buffer of n bytes, when they all lie
// inside it. Unrolled, and the empty asm keeps GCC from deleting the branch.
inline void prefetch_kib(const std::uint8_t* p, std::size_t start, std::size_t n, bool write) {
  if (start + 1024 > n) return;
  asm volatile("");
  p += start;
  prefetch_line(p, write), prefetch_line(p + 64, write), prefetch_line(p + 128, write);
  prefetch_line(p + 192, write), prefetch_line(p + 256, write), prefetch_line(p + 320, write);
  prefetch_line(p + 384, write), prefetch_line(p + 448, write), prefetch_line(p + 512, write);
  prefetch_line(p + 576, write), prefetch_line(p + 640, write), prefetch_line(p + 704, write);
  prefetch_line(p + 768, write), prefetch_line(p + 832, write), prefetch_line(p + 896, write);
  prefetch_line(p + 960, write);
}

inline void prefetch_head(const std::uint8_t* p, std::size_t n, bool write) {
  if (n >= zvc_prefetch_head) {  // the common case (4 KiB windows): one unrolled burst
    static_assert(zvc_prefetch_head == 1024, "prefetch_kib requests 1 KiB");
    prefetch_kib(p, 0, n, write);
    return;
  }
  for (std::size_t o = 0; o < n; o += 64) {
    asm volatile("");  // see prefetch_kib
    prefetch_line(p + o, write);
  }
}

template <typename T, typename K>
std::size_t compress_loop(const std::uint8_t* in, std::size_t n, std::uint8_t* out) {
  constexpr std::size_t w = sizeof(T);
  const std::size_t e = n / w;
  const std::size_t tail = n % w;
  std::size_t pos = 0;
  std::size_t i = 0;
  prefetch_head(in, n, false);
  for (; i + zvc_block_elements <= e; i += zvc_block_elements) {
    if ((i * w) % 1024 == 0) prefetch_kib(in, i * w + zvc_prefetch_distance, n, false);
    pos += K::encode_full(in + i * w, out + pos);
  }
  if (i < e) pos += encode_block_scalar<T>(in + i * w, e - i, out + pos);
  if (tail) {
    std::memcpy(out + pos, in + e * w, tail);
    pos += tail;
  }
  return pos;
}

template <typename T, typename K>
std::size_t size_loop(const std::uint8_t* in, std::size_t n) {
  constexpr std::size_t w = sizeof(T);
  const std::size_t e = n / w;
  return zvc_mask_bytes * blocks_for(e) + w * K::count_nonzero(in, e) + n % w;
}

[[noreturn]] inline void fail_mask_truncated(std::size_t pos, std::size_t b, std::size_t nblocks,
                                             std::size_t in_n) {
  throw codec_error("zvc stream truncated at offset " + std::to_string(pos) + ": expected the " +
                    "4-byte mask of block " + std::to_string(b) + " of " +
                    std::to_string(nblocks) + ", only " + std::to_string(in_n - pos) +
                    " bytes left (stream is " + std::to_string(in_n) + " bytes)");
}
[[noreturn]] inline void fail_mask_bits(std::uint32_t mask, std::size_t pos, std::size_t b,
                                        std::size_t k) {
  throw codec_error("zvc mask " + hex32(mask) + " at offset " + std::to_string(pos) +
                    " (final block " + std::to_string(b) + ") has bits set at or above element " +
                    std::to_string(k) + "; expected only bits 0.." + std::to_string(k - 1));
}
[[noreturn]] inline void fail_data_truncated(std::size_t data, std::uint32_t mask, std::size_t b,
                                             std::size_t need, std::size_t left) {
  throw codec_error("zvc stream truncated at offset " + std::to_string(data) + ": mask " +
                    hex32(mask) + " of block " + std::to_string(b) + " implies " +
                    std::to_string(need) + " bytes of nonzero elements, only " +
                    std::to_string(left) + " bytes left");
}

// A kernel may replace the generic fast loop of decompress_loop with its own
// `static void decode_fast(in, in_n, pos&, b&, nfull, out, out_n, prefetch)` (same contract;
// `prefetch`: whether to prefetch the output, decompress_loop's rule).
template <typename K, typename = void>
struct has_decode_fast : std::false_type {};
template <typename K>
struct has_decode_fast<K, std::void_t<decltype(&K::decode_fast)>> : std::true_type {};

// A kernel that writes its output with non-temporal stores (zvc_store::streaming) declares
// `static constexpr bool streaming_output = true`: no output prefetch then. Its table's
// `fence` (set by the kernel file) is the store fence zvc_codec issues after the call or the
// batch (decompress_windows).
template <typename K, typename = void>
struct has_streaming_output : std::false_type {};
template <typename K>
struct has_streaming_output<K, std::void_t<decltype(K::streaming_output)>>
    : std::integral_constant<bool, K::streaming_output> {};

// A kernel with read slack may provide `static void decode_exact(src, mask, dst)`: decode_full
// reading nothing past the block's data (AVX2 w = 4: masked loads). The stream's last full
// blocks use it instead of the zero-padded copy below.
template <typename K, typename = void>
struct has_decode_exact : std::false_type {};
template <typename K>
struct has_decode_exact<K, std::void_t<decltype(&K::decode_exact)>> : std::true_type {};

template <typename T, typename K>
void decompress_loop(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                     std::size_t out_n) {
  constexpr std::size_t w = sizeof(T);
  const std::size_t e = out_n / w;
  const std::size_t tail = out_n % w;
  const std::size_t nblocks = blocks_for(e);
  std::size_t pos = 0;
  std::size_t b = 0;
  // Output prefetch: cached stores only (a streaming kernel's stores need no line in cache).
  constexpr bool prefetch = !has_streaming_output<K>::value;
  if (prefetch) prefetch_head(out, out_n, true);
  // Fast path over full blocks: one bounds check per block. A block is decoded here only when
  // its mask, its data and the kernel's read slack (at least the next block's 4 mask bytes) lie
  // inside the stream, so every check of the careful loop below holds for it; the first block
  // that fails this (truncation, the stream's last bytes, a partial block) goes to the careful
  // loop, which reports errors with the same offsets.
  constexpr std::size_t fast_slack =
      K::read_slack > zvc_mask_bytes ? K::read_slack : zvc_mask_bytes;
  const std::size_t nfull = e / zvc_block_elements;
  if constexpr (has_decode_fast<K>::value) {
    K::decode_fast(in, in_n, pos, b, nfull, out, out_n, prefetch);  // same contract, own loop
  } else if (in_n >= zvc_mask_bytes) {
    for (; b < nfull; ++b) {
      const std::uint32_t mask = load_u32le(in + pos);
      // end <= pos + 4 + 32 * w <= in_n + 132: no overflow; one test for "data and slack fit".
      const std::size_t end =
          pos + zvc_mask_bytes + w * static_cast<std::size_t>(__builtin_popcountll(mask));
      if (end + fast_slack > in_n) break;
      if (prefetch && (b * zvc_block_elements * w) % 1024 == 0)
        prefetch_kib(out, b * zvc_block_elements * w + zvc_prefetch_distance, out_n, true);
      K::decode_full(in + pos + zvc_mask_bytes, mask, out + b * zvc_block_elements * w);
      pos = end;
    }
  }
  // The stream's last bytes: a full block whose data lies in the stream but is followed by
  // fewer than read_slack bytes is decoded by the SIMD kernel from a zero-padded copy of the
  // rest of the stream (copied once, at the first such block: then in_n - tail_base <
  // read_slack + 32 * w, and every later block's data plus its read slack lies in the copy).
  // The checks and error messages are the same as for every other block.
  constexpr std::size_t tail_cap = 2 * K::read_slack + zvc_block_elements * w;
  alignas(32) std::uint8_t tail_copy[tail_cap > 0 ? tail_cap : 1];
  std::size_t tail_base = in_n + 1;  // none yet
  for (; b < nblocks; ++b) {
    const std::size_t first = b * zvc_block_elements;
    const std::size_t k = (e - first < zvc_block_elements) ? e - first : zvc_block_elements;
    if (in_n - pos < zvc_mask_bytes) fail_mask_truncated(pos, b, nblocks, in_n);
    const std::uint32_t mask = load_u32le(in + pos);
    if (k < zvc_block_elements && (mask >> k) != 0) fail_mask_bits(mask, pos, b, k);
    const std::size_t nnz = static_cast<std::size_t>(__builtin_popcount(mask));
    const std::size_t data = pos + zvc_mask_bytes;
    const std::size_t left = in_n - data;
    if (left < nnz * w) fail_data_truncated(data, mask, b, nnz * w, left);
    if (k == zvc_block_elements && left - nnz * w >= K::read_slack) {
      K::decode_full(in + data, mask, out + first * w);
    } else if (k == zvc_block_elements && has_decode_exact<K>::value) {
      if constexpr (has_decode_exact<K>::value) K::decode_exact(in + data, mask, out + first * w);
    } else if (k == zvc_block_elements) {
      if (tail_base > in_n) {
        tail_base = data;
        std::memcpy(tail_copy, in + data, left);  // left < read_slack + 32 * w
        std::memset(tail_copy + left, 0, tail_cap - left);
      }
      K::decode_full(tail_copy + (data - tail_base), mask, out + first * w);
    } else {
      decode_block_scalar<T>(in + data, mask, k, out + first * w);
    }
    pos = data + nnz * w;
  }
  if (in_n - pos < tail)
    throw codec_error("zvc stream truncated at offset " + std::to_string(pos) + ": expected " +
                      std::to_string(tail) + " verbatim trailing bytes (" + std::to_string(out_n) +
                      " mod " + std::to_string(w) + "), only " + std::to_string(in_n - pos) +
                      " left");
  if (tail) std::memcpy(out + e * w, in + pos, tail);
  pos += tail;
  if (pos != in_n)
    throw codec_error("zvc stream too long: " + std::to_string(in_n - pos) +
                      " extra bytes at offset " + std::to_string(pos) + "; expected the stream of " +
                      std::to_string(out_n) + " decoded bytes to end there");
}

// Function table of one ISA path, per element width.
template <template <typename> class K>
zvc_kernels make_table() {
  zvc_kernels t;
  t.compress[0] = &compress_loop<std::uint8_t, K<std::uint8_t>>;
  t.compress[1] = &compress_loop<std::uint16_t, K<std::uint16_t>>;
  t.compress[2] = &compress_loop<std::uint32_t, K<std::uint32_t>>;
  t.decompress[0] = &decompress_loop<std::uint8_t, K<std::uint8_t>>;
  t.decompress[1] = &decompress_loop<std::uint16_t, K<std::uint16_t>>;
  t.decompress[2] = &decompress_loop<std::uint32_t, K<std::uint32_t>>;
  t.size[0] = &size_loop<std::uint8_t, K<std::uint8_t>>;
  t.size[1] = &size_loop<std::uint16_t, K<std::uint16_t>>;
  t.size[2] = &size_loop<std::uint32_t, K<std::uint32_t>>;
  t.fence[0] = t.fence[1] = t.fence[2] = nullptr;  // cached stores: nothing to fence
  return t;
}

}  // namespace
}  // namespace cdma::codec::zvc_detail
