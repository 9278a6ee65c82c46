#include "tlm/cdma/descriptor.h"

#include <cstring>
#include <sstream>
#include "tlm/codec/window.h"

namespace cdma {

std::string to_string(dma_direction d) {
  switch (d) {
    case dma_direction::copy_d2h: return "copy_d2h";
    case dma_direction::copy_h2d: return "copy_h2d";
    case dma_direction::offload: return "offload";
    case dma_direction::prefetch: return "prefetch";
  }
  return "unknown direction " + std::to_string(static_cast<unsigned>(d));
}

std::string to_string(dma_error e) {
  switch (e) {
    case dma_error::none: return "none";
    case dma_error::gpu_mem_response: return "gpu_mem error response";
    case dma_error::pcie_response: return "pcie error response";
    case dma_error::corrupt_window: return "corrupt compressed window";
    case dma_error::bad_descriptor: return "bad descriptor";
    case dma_error::unknown_codec: return "unknown codec id";
    case dma_error::ring_access: return "descriptor fetch or write-back failed";
    case dma_error::bad_doorbell: return "RING_TAIL out of range";
    case dma_error::bad_ring_config: return "RING_SIZE out of range";
  }
  return "unknown error code " + std::to_string(static_cast<unsigned>(e));
}

void encode_descriptor(const dma_descriptor& d, std::uint8_t* out) {
  std::memset(out, 0, desc::SIZE);
  store_le32(out + desc::CONTROL, desc::control(d.direction, d.codec, d.element_width));
  store_le64(out + desc::SRC, d.src);
  store_le64(out + desc::DST, d.dst);
  store_le64(out + desc::LEN, d.len);
  store_le64(out + desc::META, d.meta);
  store_le64(out + desc::USER, d.user);
}

raw_descriptor decode_descriptor(const std::uint8_t* in) {
  raw_descriptor r;
  r.control = load_le32(in + desc::CONTROL);
  r.reserved0 = load_le32(in + desc::RESERVED0);
  r.direction_field = r.control & 0xFu;
  r.codec_field = (r.control >> 8) & 0xFFu;
  r.d.direction = static_cast<dma_direction>(r.direction_field);
  r.d.codec = static_cast<codec::codec_id>(r.codec_field);
  r.d.element_width = (r.control >> 16) & 0xFu;
  r.d.src = load_le64(in + desc::SRC);
  r.d.dst = load_le64(in + desc::DST);
  r.d.len = load_le64(in + desc::LEN);
  r.d.meta = load_le64(in + desc::META);
  r.d.user = load_le64(in + desc::USER);
  return r;
}

dma_error validate_descriptor(const raw_descriptor& r) {
  if ((r.control & desc::CONTROL_RESERVED_MASK) != 0 || r.reserved0 != 0)
    return dma_error::bad_descriptor;
  if (r.direction_field > static_cast<unsigned>(dma_direction::prefetch))
    return dma_error::bad_descriptor;
  const unsigned w = r.d.element_width;
  if (w != 1 && w != 2 && w != 4) return dma_error::bad_descriptor;
  if (r.d.len == 0) return dma_error::bad_descriptor;
  // [src, src + len) and [dst, dst + len) must fit the 64-bit address space: the last byte
  // src + len - 1 must not wrap (a range may end exactly at 2^64).
  constexpr std::uint64_t top = ~std::uint64_t{0};
  if (r.d.src > top - (r.d.len - 1) || r.d.dst > top - (r.d.len - 1)) return dma_error::bad_descriptor;
  return dma_error::none;
}

std::uint64_t table_bytes(std::uint64_t len, std::size_t window_bytes) {
  const std::uint64_t w = window_bytes;
  return (len / w + (len % w != 0)) * codec::window_entry_bytes;
}

std::string descriptor_problem(const dma_descriptor& d, std::size_t window_bytes) {
  if (d.direction != dma_direction::offload && d.direction != dma_direction::prefetch) return {};
  std::ostringstream os;
  const std::uint64_t tb = table_bytes(d.len, window_bytes);
  if (tb > max_table_bytes) {
    os << "LEN " << d.len << " needs a metadata table of " << tb << " bytes ("
       << window_bytes << "-byte windows); expected at most " << max_table_bytes
       << " bytes (one access), i.e. LEN <= " << (max_table_bytes / codec::window_entry_bytes) * window_bytes;
    return os.str();
  }
  constexpr std::uint64_t top = ~std::uint64_t{0};
  if (d.meta > top - (tb - 1)) {
    os << "META 0x" << std::hex << d.meta << " + its table of " << std::dec << tb
       << " bytes wraps past 2^64; expected META + table bytes <= 2^64";
    return os.str();
  }
  // Last bytes (neither range wraps: validate_descriptor and the check above).
  const std::uint64_t dst_last = d.dst + (d.len - 1), meta_last = d.meta + (tb - 1);
  if (d.direction == dma_direction::offload && d.meta <= dst_last && d.dst <= meta_last) {
    os << "META table [0x" << std::hex << d.meta << ", 0x" << meta_last
       << "] overlaps the DST range [0x" << d.dst << ", 0x" << dst_last
       << "] of the packed data (at most LEN bytes); expected disjoint host ranges";
    return os.str();
  }
  return {};
}

void encode_writeback(dma_error e, std::uint32_t windows, std::uint64_t out_bytes,
                      std::uint8_t* out16) {
  std::uint32_t status = desc::STATUS_DONE;
  if (e != dma_error::none)
    status |= desc::STATUS_ERROR | ((static_cast<std::uint32_t>(e) & 0xFFu) << 8);
  store_le32(out16, status);
  store_le32(out16 + 4, windows);
  store_le64(out16 + 8, out_bytes);
}

}  // namespace cdma
