// ZVC (zero-value compression), exactly as docs/ARCHITECTURE.md section 5 (after Rhu et al.,
// "Compressing DMA Engine", HPCA 2018):
//
//  * The input of L bytes is E = floor(L / w) little-endian elements of w bytes (w = 4, 2 or 1)
//    followed by T = L mod w trailing bytes.
//  * Elements are grouped in blocks of 32 (the last block may hold k < 32). Each block is a
//    4-byte little-endian mask (bit i set iff element i of the block is nonzero; bits >= k are 0)
//    followed by the block's nonzero elements in ascending order, w bytes each, verbatim.
//    An element is zero only when all its w bytes are 0x00 (-0.0 = 0x80000000 is nonzero).
//  * The T trailing bytes follow verbatim.
//  * Size: sum over blocks (4 + w * nnz_block) + T.
//
// Decoding rejects (codec_error, with the byte offset) a stream that is truncated, that has
// bytes left over after the last block and tail, or whose mask has bits set beyond the k
// elements of the final block. A mask bit set for an element whose stored bytes are all zero
// is not produced by the encoder but decodes unambiguously and is accepted.
//
// Speed: three implementations (ISA paths) produce identical bytes: portable scalar, AVX2
// (+BMI/POPCNT) and AVX-512 (F+BW+VL+VBMI2: masked compress/expand). The fastest one the CPU
// supports is chosen at run time (__builtin_cpu_supports); the default build stays portable
// (the SIMD code is compiled with function-level target attributes only).
#pragma once
#include <string>

#include "tlm/codec/codec.h"

namespace cdma::codec {

/// Elements per ZVC block (one 32-bit mask per block).
constexpr std::size_t zvc_block_elements = 32;
/// Bytes of one block mask.
constexpr std::size_t zvc_mask_bytes = 4;

/// Instruction-set path of the ZVC kernels.
enum class zvc_isa { scalar, avx2, avx512 };
/// "scalar", "avx2", "avx512".
std::string to_string(zvc_isa isa);
/// True if this build has the path and the running CPU (and OS) supports it.
bool zvc_isa_supported(zvc_isa isa);
/// The fastest supported path: avx512 > avx2 > scalar.
zvc_isa zvc_best_isa();

namespace zvc_detail {
/// Kernel table of one ISA path; index 0, 1, 2 = element width 1, 2, 4.
struct zvc_kernels {
  std::size_t (*compress[3])(const std::uint8_t*, std::size_t, std::uint8_t*);
  void (*decompress[3])(const std::uint8_t*, std::size_t, std::uint8_t*, std::size_t);
  std::size_t (*size[3])(const std::uint8_t*, std::size_t);
  /// Store fence to issue after decompress[i] (a streaming-store decoder), nullptr if none.
  void (*fence[3])();
};
const zvc_kernels& scalar_kernels();
/// nullptr when the build has no such path (non-x86 or compiler without the intrinsics).
const zvc_kernels* avx2_kernels();
const zvc_kernels* avx512_kernels();
/// The AVX2 table of zvc_store::streaming: its w = 4 decoder writes with non-temporal stores
/// (+ one sfence per call) when the output is 32-byte aligned. Same bytes and errors as
/// avx2_kernels(). Call only where zvc_isa_supported(zvc_isa::avx2).
const zvc_kernels* avx2_nt_kernels();
}  // namespace zvc_detail

/// How decompress writes its output.
///  * cached (default): normal stores; the decoded window stays in cache. Right for an output
///    that is read again soon, e.g. the engine's 4 KiB staging buffer, which the TLM write
///    copies right after the call (tlm/cdma). The only mode the engine uses.
///  * streaming: non-temporal stores (AVX2 path, w = 4, output 32-byte aligned), which bypass
///    the cache and need no read-for-ownership: about twice the write bandwidth of cached
///    stores to memory on Zen 3 (docs/codecs.md), but the output is then NOT in cache. Right
///    only for a large output that is not read again soon (decoding a whole tensor into its
///    destination). One sfence ends every decompress call, so the output is ordered before
///    any later store when the call returns, as with cached stores; decompress_windows
///    decodes many windows with one sfence at the end (per-window fences halve the write
///    bandwidth: docs/codecs.md). Elsewhere (scalar, AVX-512, w = 1, 2, unaligned output) it
///    behaves as cached. Compression is the same in both modes.
enum class zvc_store { cached, streaming };
std::string to_string(zvc_store s);

class zvc_codec final : public codec {
 public:
  /// element_width: 1, 2 or 4 bytes, else codec_error. isa: the kernel path (default the
  /// fastest the CPU supports); codec_error if the CPU does not support it.
  /// store: see zvc_store (default cached).
  explicit zvc_codec(unsigned element_width = 4, zvc_isa isa = zvc_best_isa(),
                     zvc_store store = zvc_store::cached);
  zvc_isa isa() const { return isa_; }
  zvc_store store() const { return store_; }
  codec_id id() const override { return codec_id::zvc; }
  unsigned element_width() const override { return width_; }
  /// 4 * ceil(E / 32) + L (every element nonzero), E = floor(n / w).
  std::size_t max_compressed_size(std::size_t n) const override;
  std::size_t compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override;
  void decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                  std::size_t out_n) const override;
  /// 4 * ceil(E / 32) + w * nnz + (n mod w), counting nonzero elements only.
  std::size_t compressed_size(const std::uint8_t* in, std::size_t n) const override;
  /// codec::decompress_windows; with zvc_store::streaming one store fence for the whole batch
  /// (also when a window throws).
  void decompress_windows(const std::uint8_t* in, const std::size_t* offset,
                          const std::size_t* size, std::size_t count, std::uint8_t* out,
                          std::size_t window, std::size_t out_n) const override;

 private:
  unsigned width_;
  zvc_isa isa_;
  zvc_store store_;
  const zvc_detail::zvc_kernels* k_;
  unsigned wi_;  // kernel table index of width_
};

}  // namespace cdma::codec
