#include "tlm/cdma/descriptor.h"

#include <cstring>

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
  // src + len and dst + len must not wrap the 64-bit address space.
  if (r.d.src + r.d.len < r.d.src || r.d.dst + r.d.len < r.d.dst) return dma_error::bad_descriptor;
  return dma_error::none;
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
