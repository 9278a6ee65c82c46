// cDMA descriptors, error codes and the register map (offsets). Pure C++ (no SystemC).
// The register map is documented in docs/cdma_registers.md; keep the two in step.
#pragma once
#include <cstdint>
#include <string>
#include "tlm/codec/codec.h"

namespace cdma {

/// What a descriptor asks the engine to do.
enum class dma_direction : std::uint8_t {
  copy_d2h = 0,  ///< plain copy GPU memory -> host (uncompressed vDNN offload)
  copy_h2d = 1,  ///< plain copy host -> GPU memory (uncompressed vDNN prefetch)
  offload = 2,   ///< GPU -> host, compressed in windows, metadata table written to `meta`
  prefetch = 3,  ///< host -> GPU, windows decompressed using the metadata table at `meta`
};
std::string to_string(dma_direction d);

/// One DMA job. Addresses are byte addresses in the target's own space: GPU memory
/// addresses on the `gpu_mem` socket, host (bus) addresses on the `pcie` socket.
struct dma_descriptor {
  dma_direction direction = dma_direction::copy_d2h;
  std::uint64_t src = 0;   ///< source address (GPU for copy_d2h/offload, host otherwise)
  std::uint64_t dst = 0;   ///< destination address
  std::uint64_t len = 0;   ///< uncompressed length in bytes (> 0)
  std::uint64_t meta = 0;  ///< host address of the window metadata table (offload/prefetch)
  codec::codec_id codec = codec::codec_id::zvc;
  unsigned element_width = 4;  ///< bytes per element: 1, 2 or 4
};

/// Value of the ERROR_CODE register.
enum class dma_error : std::uint32_t {
  none = 0,
  gpu_mem_response = 1,  ///< a gpu_mem transaction returned an error response (e.g. address error)
  pcie_response = 2,     ///< a pcie transaction returned an error response
  corrupt_window = 3,    ///< a metadata entry or compressed window failed validation on prefetch
  bad_descriptor = 4,    ///< length 0, unknown direction/codec or element width
  queue_full = 5,        ///< doorbell rung with the descriptor queue full; descriptor dropped
};
std::string to_string(dma_error e);

/// Register offsets (bytes) in the `regs` target. All registers are 32 bits wide and must be
/// accessed with 4-byte aligned, 4-byte transactions. 64-bit values are LO/HI pairs.
namespace reg {
constexpr std::uint32_t ID = 0x000;            ///< RO: 0x43444D41 ("CDMA")
constexpr std::uint32_t VERSION = 0x004;       ///< RO: major << 16 | minor
constexpr std::uint32_t CTRL = 0x008;          ///< RW: bit 0 ENABLE, bit 1 SOFT_RESET (self-clearing)
constexpr std::uint32_t STATUS = 0x00C;        ///< RO: bit 0 BUSY, bit 1 ERROR (cleared with IRQ_STATUS.ERROR)
constexpr std::uint32_t ERROR_CODE = 0x010;    ///< RO: dma_error of the last failed descriptor
constexpr std::uint32_t IRQ_ENABLE = 0x014;    ///< RW: bit 0 DONE, bit 1 ERROR
constexpr std::uint32_t IRQ_STATUS = 0x018;    ///< RW1C: bit 0 DONE, bit 1 ERROR
constexpr std::uint32_t DESC_SRC_LO = 0x020;
constexpr std::uint32_t DESC_SRC_HI = 0x024;
constexpr std::uint32_t DESC_DST_LO = 0x028;
constexpr std::uint32_t DESC_DST_HI = 0x02C;
constexpr std::uint32_t DESC_LEN_LO = 0x030;
constexpr std::uint32_t DESC_LEN_HI = 0x034;
constexpr std::uint32_t DESC_META_LO = 0x038;
constexpr std::uint32_t DESC_META_HI = 0x03C;
/// RW: bits [1:0] direction (dma_direction), [7:4] codec id, [11:8] element width in bytes.
constexpr std::uint32_t DESC_CTRL = 0x040;
constexpr std::uint32_t DOORBELL = 0x044;      ///< WO: write 1 to queue the staged descriptor
constexpr std::uint32_t DONE_COUNT = 0x048;    ///< RO: descriptors completed (with or without error)
constexpr std::uint32_t QUEUE_DEPTH = 0x04C;   ///< RO: descriptors queued, not yet started
constexpr std::uint32_t LAST_OUT_LO = 0x050;   ///< RO: data bytes the last descriptor wrote to its destination
constexpr std::uint32_t LAST_OUT_HI = 0x054;
constexpr std::uint32_t ERROR_DESC = 0x058;    ///< RO: sequence number (0-based) of the last failed descriptor
constexpr std::uint32_t BYTES_READ_LO = 0x060; ///< RO: total bytes read on both initiator sockets
constexpr std::uint32_t BYTES_READ_HI = 0x064;
constexpr std::uint32_t BYTES_WRITTEN_LO = 0x068;  ///< RO: total bytes written on both sockets
constexpr std::uint32_t BYTES_WRITTEN_HI = 0x06C;
constexpr std::uint32_t WINDOWS_COMPRESSED = 0x070;  ///< RO: windows stored compressed
constexpr std::uint32_t WINDOWS_RAW = 0x074;         ///< RO: windows stored raw (fallback)
constexpr std::uint32_t SIZE = 0x080;          ///< bytes of register space

constexpr std::uint32_t ID_VALUE = 0x43444D41;
constexpr std::uint32_t VERSION_VALUE = 0x00010000;
constexpr std::uint32_t CTRL_ENABLE = 1u << 0;
constexpr std::uint32_t CTRL_SOFT_RESET = 1u << 1;
constexpr std::uint32_t STATUS_BUSY = 1u << 0;
constexpr std::uint32_t STATUS_ERROR = 1u << 1;
constexpr std::uint32_t IRQ_DONE = 1u << 0;
constexpr std::uint32_t IRQ_ERROR = 1u << 1;

/// Encodes the DESC_CTRL register value.
constexpr std::uint32_t desc_ctrl(dma_direction d, codec::codec_id c, unsigned width) {
  return (static_cast<std::uint32_t>(d) & 0x3u) | ((static_cast<std::uint32_t>(c) & 0xFu) << 4) |
         ((width & 0xFu) << 8);
}
}  // namespace reg

}  // namespace cdma
