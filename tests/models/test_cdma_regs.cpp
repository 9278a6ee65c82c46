// cdma_regs (pure C++ register model) and the descriptor format, against the register map in
// docs/cdma_registers.md. No SystemC: every expected value is read off the documented tables.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tlm/cdma/cdma_regs.h"
#include "tlm/cdma/descriptor.h"

using namespace cdma;

namespace {

std::uint32_t rd(const cdma_regs& r, std::uint32_t off) {
  std::uint32_t v = 0xDEADBEEF;
  EXPECT_EQ(r.read(off, v), reg_access::ok) << "offset 0x" << std::hex << off;
  return v;
}

void wr(cdma_regs& r, std::uint32_t off, std::uint32_t v) {
  EXPECT_EQ(r.write(off, v), reg_access::ok) << "offset 0x" << std::hex << off;
}

cdma_regs_config config() {
  cdma_regs_config c;
  c.codec_caps = 0x3F;  // ids 0..5
  c.compression_units = 4;
  c.decompression_units = 6;
  c.window_bytes = 4096;
  c.ring_max = 64;
  return c;
}

}  // namespace

TEST(CdmaRegs, ResetValuesFollowTheRegisterMap) {
  cdma_regs r(config());
  EXPECT_EQ(rd(r, reg::ID), 0x43444D41u);       // "CDMA" in ASCII: 43 44 4D 41
  EXPECT_EQ(rd(r, reg::VERSION), 0x00020000u);  // 2.0
  EXPECT_EQ(rd(r, reg::CTRL), 0u);
  EXPECT_EQ(rd(r, reg::STATUS), reg::STATUS_RING_EMPTY);  // idle, no error, HEAD == TAIL
  EXPECT_EQ(rd(r, reg::ERROR_CODE), 0u);
  EXPECT_EQ(rd(r, reg::ERROR_DESC), 0xFFFFFFFFu);
  EXPECT_EQ(rd(r, reg::IRQ_COALESCE_COUNT), 1u);
  EXPECT_EQ(rd(r, reg::CODEC_CAPS), 0x3Fu);
  // HW_CONFIG: 4 compression units | 6 decompression units << 8 | widths 1,2,4 (0b111) << 16
  EXPECT_EQ(rd(r, reg::HW_CONFIG), 0x00070604u);
  EXPECT_EQ(rd(r, reg::WINDOW_BYTES), 4096u);
  EXPECT_EQ(rd(r, reg::RING_MAX), 64u);
  EXPECT_EQ(rd(r, reg::RING_SIZE), 0u);
  EXPECT_FALSE(r.irq_line());
}

TEST(CdmaRegs, WrongWidthsUndefinedAndMisalignedOffsetsAreErrors) {
  cdma_regs r(config());
  EXPECT_EQ(cdma_regs::check(reg::ID, 4, 4, false), reg_access::ok);
  EXPECT_EQ(cdma_regs::check(reg::ID, 8, 8, false), reg_access::burst_error);
  EXPECT_EQ(cdma_regs::check(reg::ID, 2, 2, false), reg_access::burst_error);
  EXPECT_EQ(cdma_regs::check(reg::ID, 1, 1, false), reg_access::burst_error);
  EXPECT_EQ(cdma_regs::check(reg::ID, 4, 2, false), reg_access::burst_error);
  EXPECT_EQ(cdma_regs::check(reg::ID, 4, 4, true), reg_access::byte_enable_error);
  EXPECT_EQ(cdma_regs::check(0x002, 4, 4, false), reg_access::address_error);
  EXPECT_EQ(cdma_regs::check(reg::SIZE, 4, 4, false), reg_access::address_error);
  EXPECT_EQ(cdma_regs::check(~0ull - 3, 4, 4, false), reg_access::address_error);
  std::uint32_t v = 0;
  // 0x068..0x07C and 0x098..0x0FC are holes in the map.
  for (std::uint32_t off : {0x068u, 0x07Cu, 0x098u, 0x0FCu}) {
    EXPECT_EQ(r.read(off, v), reg_access::address_error) << off;
    EXPECT_EQ(r.write(off, 1), reg_access::address_error) << off;
  }
  EXPECT_EQ(r.read(0x006, v), reg_access::address_error);
  // Read-only registers accept and ignore writes.
  wr(r, reg::ID, 0);
  wr(r, reg::DONE_COUNT, 77);
  EXPECT_EQ(rd(r, reg::ID), reg::ID_VALUE);
  EXPECT_EQ(rd(r, reg::DONE_COUNT), 0u);
}

TEST(CdmaRegs, RingConfigurationAndDoorbell) {
  cdma_regs r(config());
  wr(r, reg::RING_BASE_LO, 0x10001234);  // bits [5:0] read as 0: 0x10001234 & ~0x3F = 0x10001200
  wr(r, reg::RING_BASE_HI, 0x2);
  EXPECT_EQ(rd(r, reg::RING_BASE_LO), 0x10001200u);
  EXPECT_EQ(r.ring_base(), 0x210001200ull);
  // Tail before a size is set: bad doorbell, ignored, ERROR raised.
  wr(r, reg::RING_TAIL, 0);
  EXPECT_EQ(rd(r, reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::bad_doorbell));
  EXPECT_EQ(rd(r, reg::IRQ_STATUS), reg::IRQ_ERROR);
  wr(r, reg::IRQ_STATUS, reg::IRQ_ERROR);  // W1C
  EXPECT_EQ(rd(r, reg::IRQ_STATUS), 0u);
  // Sizes outside 2..RING_MAX (64) are refused.
  wr(r, reg::RING_SIZE, 1);
  wr(r, reg::RING_SIZE, 65);
  EXPECT_EQ(rd(r, reg::RING_SIZE), 0u);
  EXPECT_EQ(rd(r, reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::bad_ring_config));
  wr(r, reg::RING_SIZE, 8);
  EXPECT_EQ(rd(r, reg::RING_SIZE), 8u);
  EXPECT_EQ(r.descriptor_address(3), 0x210001200ull + 3 * 64);
  wr(r, reg::RING_TAIL, 8);  // out of range: ignored
  EXPECT_EQ(rd(r, reg::RING_TAIL), 0u);
  EXPECT_FALSE(r.ring_pending());
  wr(r, reg::RING_TAIL, 3);
  EXPECT_TRUE(r.ring_pending());
  // Pending but disabled: not busy, not empty.
  EXPECT_EQ(rd(r, reg::STATUS) & (reg::STATUS_BUSY | reg::STATUS_RING_EMPTY), 0u);
  wr(r, reg::CTRL, reg::CTRL_ENABLE);
  EXPECT_TRUE(r.enabled());
  EXPECT_EQ(rd(r, reg::STATUS) & reg::STATUS_BUSY, reg::STATUS_BUSY);
  wr(r, reg::RING_CTRL, 0xFFFFFFFF);
  EXPECT_EQ(rd(r, reg::RING_CTRL), reg::RING_CTRL_HOST);
  EXPECT_TRUE(r.ring_in_host());
  // Rewriting RING_SIZE resets HEAD and TAIL.
  wr(r, reg::RING_SIZE, 4);
  EXPECT_EQ(rd(r, reg::RING_HEAD), 0u);
  EXPECT_EQ(rd(r, reg::RING_TAIL), 0u);
}

TEST(CdmaRegs, RingSizeWrittenWhileADescriptorExecutesIsRefused) {
  // Breaker s18: a RING_SIZE write while the engine executes the descriptor at HEAD 0 reset
  // HEAD and TAIL to 0; its completion then moved HEAD to 1 != TAIL 0, so the engine ran the
  // 7 stale entries 1..7 of an 8-entry ring that nobody had posted. Refused instead, as an
  // out-of-range size is: ignored, ERROR raised with bad_ring_config (docs/cdma_registers.md).
  cdma_regs r(config());
  wr(r, reg::RING_SIZE, 8);
  wr(r, reg::RING_TAIL, 1);  // one descriptor posted, at index 0
  wr(r, reg::CTRL, reg::CTRL_ENABLE);
  r.set_busy(true);          // the engine fetched it and executes it
  wr(r, reg::RING_SIZE, 8);  // the driver re-initialises the ring meanwhile
  EXPECT_EQ(rd(r, reg::ERROR_CODE), static_cast<std::uint32_t>(dma_error::bad_ring_config));
  EXPECT_EQ(rd(r, reg::ERROR_DESC), reg::NO_DESC);
  EXPECT_EQ(rd(r, reg::IRQ_STATUS), reg::IRQ_ERROR);
  EXPECT_EQ(rd(r, reg::RING_TAIL), 1u);  // nothing reset
  r.set_busy(false);
  r.complete(dma_error::none, 0, 64);
  EXPECT_EQ(rd(r, reg::RING_HEAD), 1u);  // HEAD == TAIL: the ring is empty, nothing else runs
  EXPECT_FALSE(r.ring_pending());
  // Idle again: the same write is taken and resets HEAD and TAIL.
  wr(r, reg::RING_SIZE, 4);
  EXPECT_EQ(rd(r, reg::RING_SIZE), 4u);
  EXPECT_EQ(rd(r, reg::RING_HEAD), 0u);
  EXPECT_EQ(rd(r, reg::RING_TAIL), 0u);
}

TEST(CdmaRegs, CompletionAdvancesHeadAndRaisesDone) {
  cdma_regs r(config());
  wr(r, reg::RING_SIZE, 2);
  wr(r, reg::RING_TAIL, 1);
  wr(r, reg::IRQ_ENABLE, reg::IRQ_DONE | reg::IRQ_ERROR);
  EXPECT_EQ(r.complete(dma_error::none, 0, 12800), coalesce_timer::cancel);
  EXPECT_EQ(rd(r, reg::RING_HEAD), 1u);
  EXPECT_EQ(rd(r, reg::DONE_COUNT), 1u);
  EXPECT_EQ(rd(r, reg::LAST_OUT_LO), 12800u);
  EXPECT_EQ(rd(r, reg::IRQ_STATUS), reg::IRQ_DONE);
  EXPECT_TRUE(r.irq_line());
  wr(r, reg::IRQ_STATUS, reg::IRQ_DONE);
  EXPECT_FALSE(r.irq_line());
  // A second descriptor wraps HEAD to 0 (ring of 2).
  wr(r, reg::RING_TAIL, 0);
  r.complete(dma_error::none, 0, 5);
  EXPECT_EQ(rd(r, reg::RING_HEAD), 0u);
  // Interrupt enable masks the pin, not the status.
  wr(r, reg::IRQ_ENABLE, 0);
  EXPECT_EQ(rd(r, reg::IRQ_STATUS), reg::IRQ_DONE);
  EXPECT_FALSE(r.irq_line());
}

TEST(CdmaRegs, ErrorsSetCodeIndexAddressAndRaiseAtOnce) {
  cdma_regs r(config());
  wr(r, reg::RING_SIZE, 8);
  wr(r, reg::RING_TAIL, 3);
  wr(r, reg::IRQ_ENABLE, reg::IRQ_ERROR);
  wr(r, reg::IRQ_COALESCE_COUNT, 100);
  r.complete(dma_error::none, 0, 1);
  r.complete(dma_error::corrupt_window, 0x123456789ull, 0);
  EXPECT_EQ(rd(r, reg::ERROR_CODE), 3u);
  EXPECT_EQ(rd(r, reg::ERROR_DESC), 1u);  // ring index of the failing descriptor
  EXPECT_EQ(rd(r, reg::ERROR_ADDR_LO), 0x23456789u);
  EXPECT_EQ(rd(r, reg::ERROR_ADDR_HI), 0x1u);
  EXPECT_EQ(rd(r, reg::ERROR_COUNT), 1u);
  EXPECT_EQ(rd(r, reg::DONE_COUNT), 2u);
  EXPECT_EQ(rd(r, reg::IRQ_STATUS), reg::IRQ_ERROR);  // DONE still coalesced (2 < 100)
  EXPECT_TRUE(r.irq_line());
  EXPECT_EQ(rd(r, reg::STATUS) & reg::STATUS_ERROR, reg::STATUS_ERROR);
  wr(r, reg::IRQ_STATUS, reg::IRQ_ERROR);
  EXPECT_EQ(rd(r, reg::STATUS) & reg::STATUS_ERROR, 0u);
  // The error registers keep the last failure until the next one.
  EXPECT_EQ(rd(r, reg::ERROR_CODE), 3u);
}

TEST(CdmaRegs, CoalescingByCountAndTimeout) {
  cdma_regs r(config());
  wr(r, reg::RING_SIZE, 16);
  wr(r, reg::RING_TAIL, 10);
  wr(r, reg::IRQ_ENABLE, reg::IRQ_DONE);
  wr(r, reg::IRQ_COALESCE_COUNT, 3);
  // Count only (timeout 0): DONE on the 3rd completion, the timer is never armed.
  EXPECT_EQ(r.complete(dma_error::none, 0, 0), coalesce_timer::keep);
  EXPECT_EQ(r.complete(dma_error::none, 0, 0), coalesce_timer::keep);
  EXPECT_FALSE(r.irq_line());
  EXPECT_EQ(r.complete(dma_error::none, 0, 0), coalesce_timer::cancel);
  EXPECT_TRUE(r.irq_line());
  wr(r, reg::IRQ_STATUS, reg::IRQ_DONE);
  // With a timeout: the first unsignalled completion arms the timer, expiry raises DONE.
  wr(r, reg::IRQ_COALESCE_TIMEOUT, 2000);
  EXPECT_EQ(r.coalesce_timeout_ns(), 2000u);
  EXPECT_EQ(r.complete(dma_error::none, 0, 0), coalesce_timer::arm);
  EXPECT_EQ(r.complete(dma_error::none, 0, 0), coalesce_timer::keep);
  EXPECT_FALSE(r.irq_line());
  r.coalesce_timeout();
  EXPECT_TRUE(r.irq_line());
  wr(r, reg::IRQ_STATUS, reg::IRQ_DONE);
  // A stale expiry with nothing pending does nothing.
  r.coalesce_timeout();
  EXPECT_FALSE(r.irq_line());
}

TEST(CdmaRegs, SoftResetRestoresResetValues) {
  cdma_regs r(config());
  wr(r, reg::RING_SIZE, 8);
  wr(r, reg::RING_TAIL, 2);
  wr(r, reg::IRQ_ENABLE, 3);
  r.count_read(100);
  r.count_window(true);
  r.complete(dma_error::pcie_response, 0x40, 0);
  const std::uint32_t gen = r.generation();
  wr(r, reg::CTRL, reg::CTRL_SOFT_RESET | reg::CTRL_ENABLE);
  EXPECT_EQ(r.generation(), gen + 1);
  EXPECT_EQ(rd(r, reg::CTRL), reg::CTRL_ENABLE);  // SOFT_RESET self-clears
  for (std::uint32_t off : {reg::RING_SIZE, reg::RING_HEAD, reg::RING_TAIL, reg::IRQ_ENABLE,
                            reg::IRQ_STATUS, reg::ERROR_CODE, reg::DONE_COUNT, reg::ERROR_COUNT,
                            reg::BYTES_READ_LO, reg::WINDOWS_RAW})
    EXPECT_EQ(rd(r, off), 0u) << "offset 0x" << std::hex << off;
  EXPECT_EQ(rd(r, reg::ERROR_DESC), reg::NO_DESC);
}

TEST(CdmaDescriptor, SixtyFourLittleEndianBytesAsDocumented) {
  dma_descriptor d;
  d.direction = dma_direction::prefetch;
  d.codec = codec::codec_id::zvc;
  d.element_width = 2;
  d.src = 0x0102030405060708ull;
  d.dst = 0x1112131415161718ull;
  d.len = 0x4000;
  d.meta = 0x2122232425262728ull;
  d.user = 0xCAFE;
  std::vector<std::uint8_t> b(64, 0xFF);
  encode_descriptor(d, b.data());
  // CONTROL = 3 | 1 << 8 | 2 << 16 = 0x00020103, little-endian.
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin(), b.begin() + 8),
            (std::vector<std::uint8_t>{0x03, 0x01, 0x02, 0x00, 0, 0, 0, 0}));
  EXPECT_EQ(b[0x08], 0x08);  // SRC low byte first
  EXPECT_EQ(b[0x0F], 0x01);
  EXPECT_EQ(b[0x18], 0x00);  // LEN 0x4000
  EXPECT_EQ(b[0x19], 0x40);
  EXPECT_EQ(b[0x28], 0xFE);  // USER
  for (std::size_t i = 0x30; i < 0x40; ++i) EXPECT_EQ(b[i], 0) << i;  // write-back zeroed
  const raw_descriptor r = decode_descriptor(b.data());
  EXPECT_EQ(validate_descriptor(r), dma_error::none);
  EXPECT_EQ(r.d.direction, dma_direction::prefetch);
  EXPECT_EQ(r.d.src, d.src);
  EXPECT_EQ(r.d.dst, d.dst);
  EXPECT_EQ(r.d.meta, d.meta);
  EXPECT_EQ(r.d.element_width, 2u);

  // Validation: reserved bits, direction 4, width 3, length 0, wrap-around.
  auto bad = [&](auto mutate) {
    std::vector<std::uint8_t> c = b;
    mutate(c.data());
    return validate_descriptor(decode_descriptor(c.data()));
  };
  EXPECT_EQ(bad([](std::uint8_t* p) { p[0] = 0x04; }), dma_error::bad_descriptor);
  EXPECT_EQ(bad([](std::uint8_t* p) { p[3] = 0x80; }), dma_error::bad_descriptor);
  EXPECT_EQ(bad([](std::uint8_t* p) { p[4] = 1; }), dma_error::bad_descriptor);
  EXPECT_EQ(bad([](std::uint8_t* p) { p[2] = 3; }), dma_error::bad_descriptor);
  EXPECT_EQ(bad([](std::uint8_t* p) { store_le64(p + desc::LEN, 0); }), dma_error::bad_descriptor);
  EXPECT_EQ(bad([](std::uint8_t* p) { store_le64(p + desc::SRC, ~0ull); }),
            dma_error::bad_descriptor);
  // An unknown codec id is not a format error (the engine checks it against CODEC_CAPS).
  EXPECT_EQ(bad([](std::uint8_t* p) { p[1] = 0xEE; }), dma_error::none);

  std::uint8_t wb[16];
  encode_writeback(dma_error::corrupt_window, 7, 0x1234, wb);
  // STATUS = DONE | ERROR | 3 << 8 = 0x303
  EXPECT_EQ(load_le32(wb), 0x303u);
  EXPECT_EQ(load_le32(wb + 4), 7u);
  EXPECT_EQ(load_le64(wb + 8), 0x1234u);
}
