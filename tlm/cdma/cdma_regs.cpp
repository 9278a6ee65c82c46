#include "tlm/cdma/cdma_regs.h"

#include <algorithm>

namespace cdma {

namespace {
std::uint32_t lo(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t hi(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }
void set_lo(std::uint64_t& r, std::uint32_t v) { r = (r & ~0xFFFFFFFFull) | v; }
void set_hi(std::uint64_t& r, std::uint32_t v) {
  r = (r & 0xFFFFFFFFull) | (static_cast<std::uint64_t>(v) << 32);
}
}  // namespace

cdma_regs::cdma_regs(const cdma_regs_config& c) : cfg_(c) {
  cfg_.ring_max = std::max<std::uint32_t>(cfg_.ring_max, 2);
  reset();
}

void cdma_regs::reset() {
  ++generation_;
  ctrl_ = irq_enable_ = irq_status_ = 0;
  coal_count_ = cfg_.coalesce_count;
  coal_timeout_ns_ = cfg_.coalesce_timeout_ns;
  coal_pending_ = 0;
  error_code_ = 0;
  error_desc_ = reg::NO_DESC;
  error_addr_ = 0;
  ring_base_ = 0;
  ring_size_ = ring_ctrl_ = head_ = tail_ = 0;
  done_count_ = error_count_ = 0;
  last_out_ = bytes_read_ = bytes_written_ = 0;
  windows_compressed_ = windows_raw_ = 0;
}

reg_access cdma_regs::check(std::uint64_t addr, unsigned len, unsigned streaming_width,
                            bool byte_enables) {
  if (len != 4 || streaming_width < 4) return reg_access::burst_error;
  if (byte_enables) return reg_access::byte_enable_error;
  if ((addr & 3u) != 0 || addr >= reg::SIZE) return reg_access::address_error;
  return reg_access::ok;
}

reg_access cdma_regs::read(std::uint64_t addr, std::uint32_t& v) const {
  if ((addr & 3u) != 0 || addr >= reg::SIZE) return reg_access::address_error;
  switch (static_cast<std::uint32_t>(addr)) {
    case reg::ID: v = reg::ID_VALUE; break;
    case reg::VERSION: v = reg::VERSION_VALUE; break;
    case reg::CTRL: v = ctrl_; break;
    case reg::STATUS:
      v = ((busy_ || (enabled() && ring_pending())) ? reg::STATUS_BUSY : 0) |
          ((irq_status_ & reg::IRQ_ERROR) ? reg::STATUS_ERROR : 0) |
          (ring_pending() ? 0 : reg::STATUS_RING_EMPTY);
      break;
    case reg::ERROR_CODE: v = error_code_; break;
    case reg::ERROR_DESC: v = error_desc_; break;
    case reg::ERROR_ADDR_LO: v = lo(error_addr_); break;
    case reg::ERROR_ADDR_HI: v = hi(error_addr_); break;
    case reg::IRQ_ENABLE: v = irq_enable_; break;
    case reg::IRQ_STATUS: v = irq_status_; break;
    case reg::IRQ_COALESCE_COUNT: v = coal_count_; break;
    case reg::IRQ_COALESCE_TIMEOUT: v = coal_timeout_ns_; break;
    case reg::RING_BASE_LO: v = lo(ring_base_); break;
    case reg::RING_BASE_HI: v = hi(ring_base_); break;
    case reg::RING_SIZE: v = ring_size_; break;
    case reg::RING_CTRL: v = ring_ctrl_; break;
    case reg::RING_HEAD: v = head_; break;
    case reg::RING_TAIL: v = tail_; break;
    case reg::DONE_COUNT: v = done_count_; break;
    case reg::ERROR_COUNT: v = error_count_; break;
    case reg::LAST_OUT_LO: v = lo(last_out_); break;
    case reg::LAST_OUT_HI: v = hi(last_out_); break;
    case reg::CODEC_CAPS: v = cfg_.codec_caps; break;
    case reg::HW_CONFIG:
      v = std::min(cfg_.compression_units, 255u) | (std::min(cfg_.decompression_units, 255u) << 8) |
          (0x7u << 16);
      break;
    case reg::WINDOW_BYTES: v = cfg_.window_bytes; break;
    case reg::RING_MAX: v = cfg_.ring_max; break;
    case reg::BYTES_READ_LO: v = lo(bytes_read_); break;
    case reg::BYTES_READ_HI: v = hi(bytes_read_); break;
    case reg::BYTES_WRITTEN_LO: v = lo(bytes_written_); break;
    case reg::BYTES_WRITTEN_HI: v = hi(bytes_written_); break;
    case reg::WINDOWS_COMPRESSED: v = windows_compressed_; break;
    case reg::WINDOWS_RAW: v = windows_raw_; break;
    default: return reg_access::address_error;
  }
  return reg_access::ok;
}

reg_access cdma_regs::write(std::uint64_t addr, std::uint32_t v) {
  if ((addr & 3u) != 0 || addr >= reg::SIZE) return reg_access::address_error;
  switch (static_cast<std::uint32_t>(addr)) {
    case reg::CTRL:
      if (v & reg::CTRL_SOFT_RESET) reset();
      ctrl_ = v & reg::CTRL_ENABLE;
      return reg_access::ok;
    case reg::IRQ_ENABLE: irq_enable_ = v & (reg::IRQ_DONE | reg::IRQ_ERROR); return reg_access::ok;
    case reg::IRQ_STATUS: irq_status_ &= ~v; return reg_access::ok;
    case reg::IRQ_COALESCE_COUNT: coal_count_ = v; return reg_access::ok;
    case reg::IRQ_COALESCE_TIMEOUT: coal_timeout_ns_ = v; return reg_access::ok;
    case reg::RING_BASE_LO: set_lo(ring_base_, v & ~0x3Fu); return reg_access::ok;
    case reg::RING_BASE_HI: set_hi(ring_base_, v); return reg_access::ok;
    case reg::RING_SIZE:
      // Refused while a descriptor executes: its completion advances HEAD in the ring it was
      // fetched from. Taken (HEAD = TAIL = 0), HEAD became 1 != TAIL and the engine ran the
      // RING_SIZE - 1 stale entries after it (breaker s18).
      if (v < 2 || v > cfg_.ring_max || busy_) {
        record_error(dma_error::bad_ring_config, reg::NO_DESC, 0);
        return reg_access::ok;
      }
      ring_size_ = v;
      head_ = tail_ = 0;
      return reg_access::ok;
    case reg::RING_CTRL: ring_ctrl_ = v & reg::RING_CTRL_HOST; return reg_access::ok;
    case reg::RING_TAIL:
      if (v >= ring_size_) {
        record_error(dma_error::bad_doorbell, reg::NO_DESC, 0);
        return reg_access::ok;
      }
      tail_ = v;
      return reg_access::ok;
    default: {
      std::uint32_t ignored;
      return read(addr, ignored);  // read-only registers ignore writes; undefined -> error
    }
  }
}

void cdma_regs::record_error(dma_error e, std::uint32_t index, std::uint64_t addr) {
  error_code_ = static_cast<std::uint32_t>(e);
  error_desc_ = index;
  error_addr_ = addr;
  irq_status_ |= reg::IRQ_ERROR;
}

coalesce_timer cdma_regs::complete(dma_error e, std::uint64_t fail_addr, std::uint64_t out_bytes) {
  const std::uint32_t index = head_;
  head_ = ring_size_ ? (head_ + 1) % ring_size_ : 0;
  ++done_count_;
  last_out_ = out_bytes;
  if (e != dma_error::none) {
    ++error_count_;
    record_error(e, index, fail_addr);
  }
  ++coal_pending_;
  if (coal_pending_ >= std::max<std::uint32_t>(coal_count_, 1)) {
    irq_status_ |= reg::IRQ_DONE;
    coal_pending_ = 0;
    return coalesce_timer::cancel;
  }
  return (coal_pending_ == 1 && coal_timeout_ns_ > 0) ? coalesce_timer::arm : coalesce_timer::keep;
}

void cdma_regs::coalesce_timeout() {
  if (coal_pending_ == 0) return;
  irq_status_ |= reg::IRQ_DONE;
  coal_pending_ = 0;
}

}  // namespace cdma
