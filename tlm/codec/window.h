// Windowed DMA framing of the cDMA engine (docs/ARCHITECTURE.md section 5, "Windows and raw
// fallback"). A transfer of `len` uncompressed bytes is cut into independent windows of
// `window_bytes` (default 4 KiB; the last window may be shorter). Each window is compressed on
// its own with one codec, or stored raw when compression would not shrink it, and described by
// an 8-byte metadata entry (window_entry). The metadata table is the array of entries in window
// order; its address is given by the descriptor (see the register map).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tlm/codec/codec.h"

namespace cdma::codec {

/// Per-window metadata entry, serialised as 8 bytes little-endian:
///   bytes 0..3  u32 compressed bytes of the window in the compressed stream;
///   bytes 4..7  u32 flags: bit 0 = stored raw (then bytes == the window's uncompressed size);
///               all other bits are reserved and must be 0.
struct window_entry {
  std::uint32_t bytes = 0;
  bool raw = false;
};
constexpr std::size_t window_entry_bytes = 8;
/// Flag bit 0 of the serialised entry: window stored raw.
constexpr std::uint32_t window_flag_raw = 1u;

/// Writes `e` as 8 little-endian bytes to out8[0..8).
void encode_entry(const window_entry& e, std::uint8_t* out8);
/// Reads an entry from in8[0..8). Throws codec_error if a reserved flag bit (1..31) is set.
window_entry decode_entry(const std::uint8_t* in8);

/// Number of windows for `len` bytes: ceil(len / window_bytes); 0 for len == 0.
/// Throws codec_error if window_bytes == 0 or the count does not fit std::size_t.
std::size_t window_count(std::uint64_t len, std::size_t window_bytes);

/// Compresses one window of n bytes from `in` into `out` (capacity >= n bytes). Stores it raw
/// (entry.raw = true, entry.bytes = n, out = in) when the codec's output would not be smaller
/// than n; otherwise entry.bytes < n compressed bytes are written. Never writes past out[n).
/// Throws codec_error if n does not fit the 32-bit length field.
window_entry compress_window(const codec& c, const std::uint8_t* in, std::size_t n,
                             std::uint8_t* out);
/// Size-only version of compress_window (same entry, nothing written; uses
/// codec::compressed_size).
window_entry window_size(const codec& c, const std::uint8_t* in, std::size_t n);

/// Decodes one window into out[0..out_n) from in[0..in_n), the bytes available for this window
/// (only in[0..e.bytes) are read). Validates the entry and throws codec_error when
///   e.bytes > in_n (the window runs past the available compressed data),
///   e.raw and e.bytes != out_n,
///   !e.raw and e.bytes >= out_n (compress_window would have stored such a window raw),
/// and when the codec rejects the stream (message prefixed with the window's sizes).
void decompress_window(const codec& c, const window_entry& e, const std::uint8_t* in,
                       std::size_t in_n, std::uint8_t* out, std::size_t out_n);

/// A metadata table entry that failed validation; `index` is the window number.
class table_error : public codec_error {
public:
  table_error(std::size_t index, const std::string& what) : codec_error(what), index(index) {}
  std::size_t index;
};

/// Decodes and validates the metadata table of a `len`-byte tensor framed in `window_bytes`
/// windows (window_count(len, window_bytes) entries of window_entry_bytes each at `table`):
/// a raw entry must hold exactly its window's size, a compressed one at most the codec's
/// worst case for it. `table_addr` (the table's bus address) only names the entry in errors.
/// The one rule both the LT and AT prefetch paths of the engine apply before moving data.
/// Throws table_error naming the entry, its address and the sizes.
std::vector<window_entry> decode_table(const codec& c, const std::uint8_t* table, std::uint64_t len,
                                       std::size_t window_bytes, std::uint64_t table_addr);

}  // namespace cdma::codec
