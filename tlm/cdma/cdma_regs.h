// cdma_regs: the register model of the cDMA engine, pure C++ (no SystemC): the middle of the
// engine's three layers (NVDLA cmod style):
//   ports      cdma_engine (sc_module): sockets, irq pin, processes, time
//   registers  cdma_regs (this class): decode, access rules, side effects, interrupt logic
//   core       descriptor format (descriptor.h), window codecs (tlm/codec/window.h) and the
//              window pipeline timing (dma_pipeline.h)
// The register map is tlm/cdma/descriptor.h (namespace reg) and docs/cdma_registers.md.
//
// The engine asks this class what to do next (enabled(), ring_pending(), head(),
// descriptor_address()), reports what happened (count_read(), complete(), ...) and drives the
// irq pin from irq_line(). Time-dependent behaviour (the coalescing timeout) is left to the
// engine: complete() says when to arm or cancel the timer and coalesce_timeout() is called
// when it expires.
#pragma once
#include <cstdint>
#include "tlm/cdma/descriptor.h"

namespace cdma {

/// Reset values and read-only facts of the register block.
struct cdma_regs_config {
  std::uint32_t codec_caps = 0x3;        ///< CODEC_CAPS: bit i = codec id i implemented
  unsigned compression_units = 4;        ///< reported in HW_CONFIG[7:0] (saturates at 255)
  unsigned decompression_units = 4;      ///< reported in HW_CONFIG[15:8]
  std::uint32_t window_bytes = 4096;     ///< WINDOW_BYTES
  std::uint32_t ring_max = 65536;        ///< RING_MAX: largest RING_SIZE accepted (>= 2)
  std::uint32_t coalesce_count = 1;      ///< reset value of IRQ_COALESCE_COUNT
  std::uint32_t coalesce_timeout_ns = 0; ///< reset value of IRQ_COALESCE_TIMEOUT (ns)
};

/// Outcome of one register access; maps 1:1 onto TLM response statuses in the engine.
enum class reg_access {
  ok,
  address_error,      ///< undefined or misaligned offset -> TLM_ADDRESS_ERROR_RESPONSE
  burst_error,        ///< length != 4 or streaming width < 4 -> TLM_BURST_ERROR_RESPONSE
  byte_enable_error,  ///< byte enables given -> TLM_BYTE_ENABLE_ERROR_RESPONSE
  command_error,      ///< neither read nor write -> TLM_COMMAND_ERROR_RESPONSE
};

/// What the engine must do about the coalescing timer after complete().
enum class coalesce_timer { keep, arm, cancel };

class cdma_regs {
public:
  explicit cdma_regs(const cdma_regs_config& c = {});

  // ---- bus side -------------------------------------------------------------------------
  /// Checks the shape of an access (length, streaming width, byte enables, alignment, offset)
  /// without performing it.
  static reg_access check(std::uint64_t addr, unsigned len, unsigned streaming_width,
                          bool byte_enables);
  /// 32-bit read of a defined, aligned offset; address_error otherwise. No side effects.
  reg_access read(std::uint64_t addr, std::uint32_t& value) const;
  /// 32-bit write; address_error for undefined/misaligned offsets. Writes to read-only
  /// registers are accepted and ignored. RING_SIZE outside 2..RING_MAX, or written while a
  /// descriptor executes (set_busy(true)), is ignored and raises bad_ring_config.
  reg_access write(std::uint64_t addr, std::uint32_t value);

  // ---- engine side ----------------------------------------------------------------------
  bool enabled() const { return (ctrl_ & reg::CTRL_ENABLE) != 0; }
  /// A descriptor is posted and not yet finished (HEAD != TAIL).
  bool ring_pending() const { return head_ != tail_; }
  std::uint32_t head() const { return head_; }
  std::uint32_t tail() const { return tail_; }
  std::uint32_t ring_size() const { return ring_size_; }
  std::uint64_t ring_base() const { return ring_base_; }
  bool ring_in_host() const { return (ring_ctrl_ & reg::RING_CTRL_HOST) != 0; }
  /// Memory address of ring entry `index`.
  std::uint64_t descriptor_address(std::uint32_t index) const {
    return ring_base_ + static_cast<std::uint64_t>(index) * desc::SIZE;
  }
  /// Incremented by every soft reset: a descriptor started under an older generation is
  /// dropped silently when it finishes.
  std::uint32_t generation() const { return generation_; }
  std::uint32_t coalesce_timeout_ns() const { return coal_timeout_ns_; }

  void set_busy(bool b) { busy_ = b; }
  void count_read(std::uint64_t bytes) { bytes_read_ += bytes; }
  void count_written(std::uint64_t bytes) { bytes_written_ += bytes; }
  void count_window(bool raw) { ++(raw ? windows_raw_ : windows_compressed_); }

  /// Descriptor at HEAD finished with `e` (failing access at `fail_addr`, 0 if none) after
  /// writing `out_bytes` data bytes: advances HEAD, updates counters and error registers,
  /// raises ERROR at once and DONE per the coalescing rule. Returns what to do with the timer.
  coalesce_timer complete(dma_error e, std::uint64_t fail_addr, std::uint64_t out_bytes);
  /// The coalescing timer expired: raises DONE if completions are waiting to be signalled.
  void coalesce_timeout();
  /// Level of the interrupt pin: (IRQ_STATUS & IRQ_ENABLE) != 0.
  bool irq_line() const { return (irq_status_ & irq_enable_) != 0; }
  std::uint32_t irq_status() const { return irq_status_; }

private:
  void reset();
  void record_error(dma_error e, std::uint32_t index, std::uint64_t addr);

  cdma_regs_config cfg_;
  std::uint32_t generation_ = 0;
  bool busy_ = false;
  std::uint32_t ctrl_ = 0, irq_enable_ = 0, irq_status_ = 0;
  std::uint32_t coal_count_ = 1, coal_timeout_ns_ = 0, coal_pending_ = 0;
  std::uint32_t error_code_ = 0, error_desc_ = reg::NO_DESC;
  std::uint64_t error_addr_ = 0;
  std::uint64_t ring_base_ = 0;
  std::uint32_t ring_size_ = 0, ring_ctrl_ = 0, head_ = 0, tail_ = 0;
  std::uint32_t done_count_ = 0, error_count_ = 0;
  std::uint64_t last_out_ = 0, bytes_read_ = 0, bytes_written_ = 0;
  std::uint32_t windows_compressed_ = 0, windows_raw_ = 0;
};

}  // namespace cdma
