#include "tlm/codec/window.h"

#include <algorithm>
#include <sstream>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace cdma::codec {
namespace {

void put_u32le(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint32_t get_u32le(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

void check_window_length(std::size_t n) {
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw codec_error("window of " + std::to_string(n) +
                      " bytes does not fit the 32-bit length of a metadata entry; expected at most "
                      "4294967295 bytes");
}

window_entry raw_entry(std::size_t n) { return window_entry{static_cast<std::uint32_t>(n), true}; }

}  // namespace

void encode_entry(const window_entry& e, std::uint8_t* out8) {
  put_u32le(out8, e.bytes);
  put_u32le(out8 + 4, e.raw ? window_flag_raw : 0u);
}

window_entry decode_entry(const std::uint8_t* in8) {
  const std::uint32_t flags = get_u32le(in8 + 4);
  if (flags & ~window_flag_raw) {
    static const char* digits = "0123456789abcdef";
    std::string hex = "0x00000000";
    for (int i = 0; i < 8; ++i) hex[9 - i] = digits[(flags >> (4 * i)) & 0xF];
    throw codec_error("window entry flags " + hex +
                      " at offset 4 of the entry have reserved bits set; expected 0 or 1 "
                      "(bit 0 = stored raw)");
  }
  return window_entry{get_u32le(in8), (flags & window_flag_raw) != 0};
}

std::size_t window_count(std::uint64_t len, std::size_t window_bytes) {
  if (window_bytes == 0) throw codec_error("window size 0 bytes; expected a positive window size");
  const std::uint64_t count = len / window_bytes + (len % window_bytes != 0);
  if (count > std::numeric_limits<std::size_t>::max())
    throw codec_error("window count " + std::to_string(count) + " does not fit size_t");
  return static_cast<std::size_t>(count);
}

window_entry window_size(const codec& c, const std::uint8_t* in, std::size_t n) {
  check_window_length(n);
  const std::size_t size = c.compressed_size(in, n);
  if (size >= n) return raw_entry(n);
  return window_entry{static_cast<std::uint32_t>(size), false};
}

window_entry compress_window(const codec& c, const std::uint8_t* in, std::size_t n,
                             std::uint8_t* out) {
  check_window_length(n);
  // codec::compress needs max_compressed_size(n) bytes of room, which exceeds n for every
  // codec that can expand; compress into a scratch buffer and copy whichever form is kept.
  // The scratch buffer is per thread and only grows: no allocation per window.
  thread_local std::vector<std::uint8_t> scratch;
  const std::size_t cap = c.max_compressed_size(n);
  if (scratch.size() < cap) scratch.resize(cap);
  const std::size_t size = c.compress(in, n, scratch.data());
  if (size >= n) {
    if (n) std::memcpy(out, in, n);
    return raw_entry(n);
  }
  if (size) std::memcpy(out, scratch.data(), size);
  return window_entry{static_cast<std::uint32_t>(size), false};
}

void decompress_window(const codec& c, const window_entry& e, const std::uint8_t* in,
                       std::size_t in_n, std::uint8_t* out, std::size_t out_n) {
  if (e.bytes > in_n)
    throw codec_error("window entry says " + std::to_string(e.bytes) +
                      " compressed bytes but only " + std::to_string(in_n) +
                      " are available; expected bytes <= available data");
  if (e.raw) {
    if (e.bytes != out_n)
      throw codec_error("raw window entry says " + std::to_string(e.bytes) +
                        " bytes; expected exactly the window size " + std::to_string(out_n));
    if (out_n) std::memcpy(out, in, out_n);
    return;
  }
  if (e.bytes >= out_n)
    throw codec_error("compressed window entry says " + std::to_string(e.bytes) +
                      " bytes for a window of " + std::to_string(out_n) +
                      "; expected fewer (a window that does not shrink is stored raw)");
  try {
    c.decompress(in, e.bytes, out, out_n);
  } catch (const codec_error& err) {
    throw codec_error("window (" + to_string(c.id()) + ", " + std::to_string(e.bytes) + " -> " +
                      std::to_string(out_n) + " bytes): " + err.what());
  }
}

std::vector<window_entry> decode_table(const codec& c, const std::uint8_t* table, std::uint64_t len,
                                       std::size_t window_bytes, std::uint64_t table_addr) {
  const std::size_t n_win = window_count(len, window_bytes);
  std::vector<window_entry> entries(n_win);
  for (std::size_t k = 0; k < n_win; ++k) {
    const std::uint64_t addr = table_addr + k * window_entry_bytes;
    try {
      entries[k] = decode_entry(table + k * window_entry_bytes);
    } catch (const codec_error& e) {
      std::ostringstream m;
      m << "metadata entry " << k << " at 0x" << std::hex << addr << ": " << e.what();
      throw table_error(k, m.str());
    }
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(window_bytes, len - std::uint64_t(k) * window_bytes));
    const std::size_t limit = entries[k].raw ? n : c.max_compressed_size(n);
    if (entries[k].bytes > limit || (entries[k].raw && entries[k].bytes != n)) {
      std::ostringstream m;
      m << "metadata entry " << k << " at 0x" << std::hex << addr << std::dec << " claims "
        << entries[k].bytes << " bytes for a " << n << "-byte window"
        << (entries[k].raw ? " stored raw" : "") << "; expected "
        << (entries[k].raw ? "exactly the window size" : "at most the codec's worst case ")
        << (entries[k].raw ? std::string() : std::to_string(limit));
      throw table_error(k, m.str());
    }
  }
  return entries;
}

}  // namespace cdma::codec
