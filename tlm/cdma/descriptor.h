// cDMA programming model, pure C++ (no SystemC): the in-memory descriptor format, the error
// codes and the register map (offsets and bit fields). docs/cdma_registers.md documents the
// same facts for driver writers; keep the two in step.
//
// Everything here is little-endian and fixed size so that a driver written against
// docs/cdma_registers.md (or a CPU model in another virtual platform) produces the same bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include "tlm/codec/codec.h"

namespace cdma {

/// What a descriptor asks the engine to do (descriptor CONTROL bits [3:0]).
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
  std::uint64_t user = 0;      ///< opaque driver cookie (descriptor bytes 0x28..0x2F), never used
};

/// Value of the ERROR_CODE register and of the descriptor's write-back status error field.
enum class dma_error : std::uint32_t {
  none = 0,
  gpu_mem_response = 1,  ///< a data access on gpu_mem got an error response (e.g. address outside memory)
  pcie_response = 2,     ///< a data access on pcie got an error response (e.g. address outside memory)
  corrupt_window = 3,    ///< a metadata entry or compressed window failed validation on prefetch
  bad_descriptor = 4,    ///< length 0, unknown direction, element width not 1/2/4, reserved bits set
  unknown_codec = 5,     ///< codec id not implemented (see CODEC_CAPS)
  ring_access = 6,       ///< fetching the descriptor or writing its status back failed
  bad_doorbell = 7,      ///< RING_TAIL written with a value >= RING_SIZE (write ignored)
  bad_ring_config = 8,   ///< RING_SIZE written outside 2..RING_MAX (write ignored)
};
std::string to_string(dma_error e);

/// Descriptor in memory: 64 bytes, little-endian, 64-byte aligned, RING_SIZE of them back to
/// back from RING_BASE. The driver fills 0x00..0x2F; the engine writes 0x30..0x3F back when
/// it has finished the descriptor (the driver should zero them when posting).
namespace desc {
constexpr std::size_t SIZE = 64;
constexpr std::size_t CONTROL = 0x00;   ///< u32: [3:0] direction, [15:8] codec id, [19:16] element width (bytes); rest reserved 0
constexpr std::size_t RESERVED0 = 0x04; ///< u32: reserved, must be 0
constexpr std::size_t SRC = 0x08;       ///< u64
constexpr std::size_t DST = 0x10;       ///< u64
constexpr std::size_t LEN = 0x18;       ///< u64: uncompressed bytes
constexpr std::size_t META = 0x20;      ///< u64: host address of the window metadata table
constexpr std::size_t USER = 0x28;      ///< u64: driver cookie, ignored by the engine
constexpr std::size_t STATUS = 0x30;    ///< u32 write-back: bit 0 DONE, bit 1 ERROR, [15:8] dma_error
constexpr std::size_t WINDOWS = 0x34;   ///< u32 write-back: windows processed
constexpr std::size_t OUT_BYTES = 0x38; ///< u64 write-back: data bytes written to the destination
constexpr std::size_t WRITEBACK_BYTES = 16;  ///< bytes 0x30..0x3F written back in one access

constexpr std::uint32_t CONTROL_RESERVED_MASK = 0xFFF000F0u;
constexpr std::uint32_t STATUS_DONE = 1u << 0;
constexpr std::uint32_t STATUS_ERROR = 1u << 1;

constexpr std::uint32_t control(dma_direction d, codec::codec_id c, unsigned width) {
  return (static_cast<std::uint32_t>(d) & 0xFu) | ((static_cast<std::uint32_t>(c) & 0xFFu) << 8) |
         ((width & 0xFu) << 16);
}
}  // namespace desc

/// Descriptor as decoded from its 64 bytes, before validation.
struct raw_descriptor {
  std::uint32_t control = 0, reserved0 = 0;
  dma_descriptor d;
  unsigned direction_field = 0, codec_field = 0;
};

/// Serialises d into out[0..64) (write-back fields zero).
void encode_descriptor(const dma_descriptor& d, std::uint8_t* out64);
/// Parses in[0..64) without validating it.
raw_descriptor decode_descriptor(const std::uint8_t* in64);
/// Validates a decoded descriptor's fields (not the codec's availability):
/// dma_error::none or dma_error::bad_descriptor. SRC + LEN and DST + LEN may end at 2^64 at
/// the latest (a range whose last byte is 2^64 - 1 is accepted).
dma_error validate_descriptor(const raw_descriptor& r);

/// Largest metadata table the engine moves: one access (a TLM payload's length is 32-bit),
/// 2^32 - 1 bytes, i.e. 536,870,911 windows (LEN < 2 TiB with 4 KiB windows).
constexpr std::uint64_t max_table_bytes = 0xFFFFFFFFull;
/// Bytes of the metadata table of an offload / prefetch of `len` bytes in windows of
/// `window_bytes`: ceil(len / window_bytes) x 8.
std::uint64_t table_bytes(std::uint64_t len, std::size_t window_bytes);
/// The checks of a validated offload / prefetch descriptor that need the window size (pure,
/// before anything is allocated or moved): empty if it is fine, else the reason it is a
/// bad_descriptor, naming the field: the table exceeds max_table_bytes; META + table wraps
/// past 2^64; an offload's META table overlaps its DST range [DST, DST + LEN) (the packed data
/// is at most LEN bytes: a window that does not shrink is stored raw). Copies: always empty.
std::string descriptor_problem(const dma_descriptor& d, std::size_t window_bytes);
/// Write-back bytes 0x30..0x3F of a finished descriptor into out[0..16).
void encode_writeback(dma_error e, std::uint32_t windows, std::uint64_t out_bytes,
                      std::uint8_t* out16);

/// Little-endian helpers (explicit byte order, host-independent).
inline std::uint32_t load_le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
inline std::uint64_t load_le64(const std::uint8_t* p) {
  return static_cast<std::uint64_t>(load_le32(p)) |
         (static_cast<std::uint64_t>(load_le32(p + 4)) << 32);
}
inline void store_le32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline void store_le64(std::uint8_t* p, std::uint64_t v) {
  store_le32(p, static_cast<std::uint32_t>(v));
  store_le32(p + 4, static_cast<std::uint32_t>(v >> 32));
}

/// Register offsets (bytes) in the `regs` target. All registers are 32 bits wide and must be
/// accessed with 4-byte aligned, 4-byte transactions; 64-bit values are LO/HI pairs.
/// Anything else (other widths, misaligned or undefined offsets, byte enables) gets a TLM
/// error response (docs/cdma_registers.md, "Access rules").
namespace reg {
constexpr std::uint32_t ID = 0x000;            ///< RO: 0x43444D41 ("CDMA")
constexpr std::uint32_t VERSION = 0x004;       ///< RO: major << 16 | minor
constexpr std::uint32_t CTRL = 0x008;          ///< RW: bit 0 ENABLE, bit 1 SOFT_RESET (self-clearing)
constexpr std::uint32_t STATUS = 0x00C;        ///< RO: bit 0 BUSY, bit 1 ERROR, bit 2 RING_EMPTY
constexpr std::uint32_t ERROR_CODE = 0x010;    ///< RO: dma_error of the last failure
constexpr std::uint32_t ERROR_DESC = 0x014;    ///< RO: ring index of the last failed descriptor (0xFFFFFFFF: none)
constexpr std::uint32_t ERROR_ADDR_LO = 0x018; ///< RO: address of the failing access (0 if none)
constexpr std::uint32_t ERROR_ADDR_HI = 0x01C;
constexpr std::uint32_t IRQ_ENABLE = 0x020;    ///< RW: bit 0 DONE, bit 1 ERROR
constexpr std::uint32_t IRQ_STATUS = 0x024;    ///< RW1C: bit 0 DONE, bit 1 ERROR
constexpr std::uint32_t IRQ_COALESCE_COUNT = 0x028;    ///< RW: DONE after this many completions (0, 1: each)
constexpr std::uint32_t IRQ_COALESCE_TIMEOUT = 0x02C;  ///< RW: ns after the first unsignalled completion (0: off)
constexpr std::uint32_t RING_BASE_LO = 0x030;  ///< RW: bits [5:0] read as 0 (64-byte aligned)
constexpr std::uint32_t RING_BASE_HI = 0x034;  ///< RW
constexpr std::uint32_t RING_SIZE = 0x038;     ///< RW: entries, 2..RING_MAX; a write resets HEAD and TAIL to 0
constexpr std::uint32_t RING_CTRL = 0x03C;     ///< RW: bit 0 LOCATION (0: GPU memory via gpu_mem, 1: host via pcie)
constexpr std::uint32_t RING_HEAD = 0x040;     ///< RO: index of the next descriptor the engine executes
constexpr std::uint32_t RING_TAIL = 0x044;     ///< RW doorbell: index one past the last posted descriptor
constexpr std::uint32_t DONE_COUNT = 0x048;    ///< RO: descriptors finished (with or without error)
constexpr std::uint32_t ERROR_COUNT = 0x04C;   ///< RO: descriptors finished with an error
constexpr std::uint32_t LAST_OUT_LO = 0x050;   ///< RO: data bytes the last finished descriptor wrote
constexpr std::uint32_t LAST_OUT_HI = 0x054;
constexpr std::uint32_t CODEC_CAPS = 0x058;    ///< RO: bit i set = codec id i implemented
constexpr std::uint32_t HW_CONFIG = 0x05C;     ///< RO: [7:0] comp. units, [15:8] decomp. units, [18:16] widths 1/2/4 B
constexpr std::uint32_t WINDOW_BYTES = 0x060;  ///< RO: uncompressed bytes per window
constexpr std::uint32_t RING_MAX = 0x064;      ///< RO: largest RING_SIZE accepted
constexpr std::uint32_t BYTES_READ_LO = 0x080; ///< RO: bytes read on both initiator sockets
constexpr std::uint32_t BYTES_READ_HI = 0x084;
constexpr std::uint32_t BYTES_WRITTEN_LO = 0x088;  ///< RO: bytes written on both sockets
constexpr std::uint32_t BYTES_WRITTEN_HI = 0x08C;
constexpr std::uint32_t WINDOWS_COMPRESSED = 0x090;  ///< RO: offload windows stored compressed
constexpr std::uint32_t WINDOWS_RAW = 0x094;         ///< RO: offload windows stored raw (fallback)
constexpr std::uint32_t SIZE = 0x100;          ///< bytes of register space

constexpr std::uint32_t ID_VALUE = 0x43444D41;
constexpr std::uint32_t VERSION_VALUE = 0x00020000;  ///< 2.0: descriptor ring
constexpr std::uint32_t CTRL_ENABLE = 1u << 0;
constexpr std::uint32_t CTRL_SOFT_RESET = 1u << 1;
constexpr std::uint32_t STATUS_BUSY = 1u << 0;
constexpr std::uint32_t STATUS_ERROR = 1u << 1;
constexpr std::uint32_t STATUS_RING_EMPTY = 1u << 2;
constexpr std::uint32_t IRQ_DONE = 1u << 0;
constexpr std::uint32_t IRQ_ERROR = 1u << 1;
constexpr std::uint32_t RING_CTRL_HOST = 1u << 0;
constexpr std::uint32_t NO_DESC = 0xFFFFFFFFu;
}  // namespace reg

}  // namespace cdma
