// A CPU-like driver of the cDMA engine for model tests: register accesses through b_transport,
// descriptors stored into an 8-entry ring at RING in a memory_target's store (the CPU's own
// store: untimed), the interrupt pin, DONE_COUNT polling. Shared by the engine's AT and
// placement tests.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm/cdma/cdma_regs.h"
#include "tlm/cdma/descriptor.h"
#include "tlm/memory/memory_target.h"

namespace cdma::test {

struct ring_cpu : sc_core::sc_module {
  static constexpr std::uint64_t RING = 0xF0000;  ///< ring base address (64-byte aligned)
  tlm_utils::simple_initiator_socket<ring_cpu> regs;
  sc_core::sc_in<bool> irq;
  std::function<void(ring_cpu&)> body;
  memory_target* ring_mem = nullptr;
  std::uint32_t tail = 0;
  bool finished = false;
  SC_HAS_PROCESS(ring_cpu);
  ring_cpu(sc_core::sc_module_name n, std::function<void(ring_cpu&)> b)
      : sc_module(n), regs("regs"), irq("irq"), body(std::move(b)) {
    SC_THREAD(run);
  }
  void run() {
    body(*this);
    finished = true;
  }
  std::uint32_t access(tlm::tlm_command cmd, std::uint32_t off, std::uint32_t v = 0) {
    std::uint8_t b[4];
    store_le32(b, v);
    tlm::tlm_generic_payload t;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    t.set_command(cmd);
    t.set_address(off);
    t.set_data_ptr(b);
    t.set_data_length(4);
    t.set_streaming_width(4);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    regs->b_transport(t, d);
    wait(d);
    EXPECT_EQ(t.get_response_status(), tlm::TLM_OK_RESPONSE) << off;
    return load_le32(b);
  }
  void wr(std::uint32_t off, std::uint32_t v) { access(tlm::TLM_WRITE_COMMAND, off, v); }
  std::uint32_t rd(std::uint32_t off) { return access(tlm::TLM_READ_COMMAND, off); }
  void init() {
    wr(reg::RING_BASE_LO, static_cast<std::uint32_t>(RING));
    wr(reg::RING_BASE_HI, 0);
    wr(reg::RING_CTRL, 0);
    wr(reg::RING_SIZE, 8);
    wr(reg::IRQ_ENABLE, reg::IRQ_DONE | reg::IRQ_ERROR);
    wr(reg::CTRL, reg::CTRL_ENABLE);
  }
  void post(const dma_descriptor& d) {
    std::uint8_t b[desc::SIZE];
    encode_descriptor(d, b);
    ring_mem->store().write(RING + std::uint64_t(tail) * desc::SIZE, b, desc::SIZE);
    tail = (tail + 1) % 8;
    wr(reg::RING_TAIL, tail);
  }
  void wait_done(std::uint32_t n) {
    while (rd(reg::DONE_COUNT) < n) {
      if (!irq.read()) wait(irq.posedge_event());
      wr(reg::IRQ_STATUS, rd(reg::IRQ_STATUS));
    }
  }
};

}  // namespace cdma::test
