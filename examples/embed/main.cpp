// Embedding the cDMA engine in another virtual platform, using only the installed package
// (find_package(cdma_vp) -> cdma::tlm) and the public programming model
// (docs/cdma_registers.md):
//
//   cpu.bus ───────────┐
//   cdma.gpu_mem ──────┼─► router ─┬─► dram.tgt   0x0000_0000 .. 0x03FF_FFFF (64 MiB)
//   cdma.pcie ─────────┘           └─► cdma.regs  0x4000_0000 .. 0x4000_00FF
//   cdma.irq ──► cpu.irq
//
// In this SoC both engine "sides" reach the same system memory through the router. The CPU
// program stores a tensor, writes two descriptors into a ring in DRAM (plain timed stores),
// rings the tail doorbell for each, sleeps until the interrupt, reads the status written back
// into the descriptor, and finally compares the prefetched tensor with the original.
// Exit status 0 when every byte matches and no error was reported.
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "router.h"
#include "tlm/cdma/cdma_engine.h"
#include "tlm/cdma/descriptor.h"
#include "tlm/memory/memory_target.h"

namespace {

constexpr std::uint64_t DRAM_BASE = 0x00000000, DRAM_SIZE = 64ull << 20;
constexpr std::uint64_t CDMA_BASE = 0x40000000;
constexpr std::uint64_t TENSOR = 0x01000000;   // source activations
constexpr std::uint64_t RESTORED = 0x01800000; // prefetch destination
constexpr std::uint64_t PACKED = 0x02000000;   // compressed copy
constexpr std::uint64_t META = 0x02F00000;     // window metadata table
constexpr std::uint64_t RING = 0x03000000;     // descriptor ring, 16 x 64 B
constexpr std::uint32_t RING_SIZE = 16;
constexpr std::uint64_t LEN = 1 << 20;         // 1 MiB of fp32

struct cpu : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<cpu> bus;
  sc_core::sc_in<bool> irq;
  int errors = 0;
  bool finished = false;
  std::uint32_t tail = 0;

  SC_HAS_PROCESS(cpu);
  explicit cpu(sc_core::sc_module_name n) : sc_module(n), bus("bus"), irq("irq") {
    SC_THREAD(program);
  }

  void transfer(tlm::tlm_command cmd, std::uint64_t addr, void* data, unsigned len) {
    tlm::tlm_generic_payload t;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(static_cast<unsigned char*>(data));
    t.set_data_length(len);
    t.set_streaming_width(len);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    bus->b_transport(t, d);
    wait(d);
    if (t.is_response_error()) {
      std::cerr << "cpu: " << t.get_response_string() << " at 0x" << std::hex << addr << std::dec << "\n";
      ++errors;
    }
  }
  void wr(std::uint32_t off, std::uint32_t v) {
    std::uint8_t b[4];
    cdma::store_le32(b, v);
    transfer(tlm::TLM_WRITE_COMMAND, CDMA_BASE + off, b, 4);
  }
  std::uint32_t rd(std::uint32_t off) {
    std::uint8_t b[4] = {};
    transfer(tlm::TLM_READ_COMMAND, CDMA_BASE + off, b, 4);
    return cdma::load_le32(b);
  }

  /// Posts one descriptor, waits for its interrupt; returns the OUT_BYTES write-back.
  std::uint64_t run_descriptor(const cdma::dma_descriptor& d, const char* what) {
    std::uint8_t b[cdma::desc::SIZE];
    cdma::encode_descriptor(d, b);
    const std::uint32_t index = tail;
    transfer(tlm::TLM_WRITE_COMMAND, RING + std::uint64_t(index) * cdma::desc::SIZE, b, sizeof b);
    tail = (tail + 1) % RING_SIZE;
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    wr(cdma::reg::RING_TAIL, tail);
    if (!irq.read()) wait(irq.posedge_event());
    const std::uint32_t status = rd(cdma::reg::IRQ_STATUS);
    wr(cdma::reg::IRQ_STATUS, status);  // W1C: drops the line
    std::uint8_t wb[cdma::desc::WRITEBACK_BYTES];
    transfer(tlm::TLM_READ_COMMAND, RING + std::uint64_t(index) * cdma::desc::SIZE + cdma::desc::STATUS,
             wb, sizeof wb);
    const std::uint32_t st = cdma::load_le32(wb);
    const std::uint64_t out = cdma::load_le64(wb + 8);
    std::cout << what << ": descriptor " << index << " status 0x" << std::hex << st << std::dec
              << ", " << cdma::load_le32(wb + 4) << " windows, " << out << " bytes written, "
              << (sc_core::sc_time_stamp() - t0).to_seconds() * 1e6 << " us (doorbell to irq)\n";
    if (!(st & cdma::desc::STATUS_DONE) || (st & cdma::desc::STATUS_ERROR) ||
        (status & cdma::reg::IRQ_ERROR)) {
      std::cerr << what << " failed: "
                << cdma::to_string(static_cast<cdma::dma_error>(rd(cdma::reg::ERROR_CODE))) << "\n";
      ++errors;
    }
    return out;
  }

  void program() {
    const std::uint32_t id = rd(cdma::reg::ID), ver = rd(cdma::reg::VERSION);
    std::cout << "cdma at 0x" << std::hex << CDMA_BASE << ": ID 0x" << id << ", version "
              << std::dec << (ver >> 16) << "." << (ver & 0xFFFF) << ", codecs 0x" << std::hex
              << rd(cdma::reg::CODEC_CAPS) << std::dec << ", window "
              << rd(cdma::reg::WINDOW_BYTES) << " B\n";
    if (id != cdma::reg::ID_VALUE) {
      ++errors;
      sc_core::sc_stop();
      return;
    }

    // A ReLU-like tensor: about half of the fp32 elements are zero, in runs.
    std::vector<std::uint8_t> t(LEN);
    for (std::uint64_t i = 0; i < LEN / 4; ++i) {
      const std::uint32_t h = static_cast<std::uint32_t>((i / 7) * 2654435761u);
      cdma::store_le32(t.data() + 4 * i, (h >> 31) ? 0u : (0x3F800000u | (h & 0x7FFFFF)));
    }
    for (std::uint64_t off = 0; off < LEN; off += 4096)
      transfer(tlm::TLM_WRITE_COMMAND, TENSOR + off, t.data() + off, 4096);

    // Driver init: ring in DRAM fetched through gpu_mem, interrupts on, engine on.
    wr(cdma::reg::RING_BASE_LO, static_cast<std::uint32_t>(RING));
    wr(cdma::reg::RING_BASE_HI, static_cast<std::uint32_t>(RING >> 32));
    wr(cdma::reg::RING_CTRL, 0);
    wr(cdma::reg::RING_SIZE, RING_SIZE);
    wr(cdma::reg::IRQ_ENABLE, cdma::reg::IRQ_DONE | cdma::reg::IRQ_ERROR);
    wr(cdma::reg::CTRL, cdma::reg::CTRL_ENABLE);

    cdma::dma_descriptor d;
    d.codec = cdma::codec::codec_id::zvc;
    d.element_width = 4;
    d.len = LEN;
    d.meta = META;
    d.direction = cdma::dma_direction::offload;
    d.src = TENSOR;
    d.dst = PACKED;
    const std::uint64_t packed = run_descriptor(d, "offload ");
    d.direction = cdma::dma_direction::prefetch;
    d.src = PACKED;
    d.dst = RESTORED;
    run_descriptor(d, "prefetch");

    std::vector<std::uint8_t> back(LEN);
    for (std::uint64_t off = 0; off < LEN; off += 4096)
      transfer(tlm::TLM_READ_COMMAND, RESTORED + off, back.data() + off, 4096);
    const bool same = back == t;
    const std::uint64_t meta_bytes = (LEN / rd(cdma::reg::WINDOW_BYTES)) * 8;
    std::cout << "compression ratio " << std::fixed << std::setprecision(3)
              << double(LEN) / double(packed + meta_bytes) << "x (" << packed << " + "
              << meta_bytes << " metadata bytes for " << LEN << "), windows compressed "
              << rd(cdma::reg::WINDOWS_COMPRESSED) << ", raw " << rd(cdma::reg::WINDOWS_RAW)
              << "\nprefetched tensor " << (same ? "matches" : "DIFFERS FROM") << " the original\n";
    if (!same) ++errors;
    finished = true;
    sc_core::sc_stop();
  }
};

}  // namespace

int sc_main(int, char*[]) {
  cdma::memory_params mp;
  mp.size_bytes = DRAM_SIZE;
  mp.bandwidth_Bps = 25.6e9;      // DDR4-1600 x 2 channels
  mp.latency_ps = 80 * 1000;      // 80 ns
  cdma::memory_target dram("dram", mp);
  cdma::cdma_engine engine("cdma", cdma::cdma_engine_params{});
  embed::router bus("bus");
  cpu core("cpu");
  sc_core::sc_signal<bool> irq("irq");

  core.bus.bind(bus.tgt);
  engine.gpu_mem.bind(bus.tgt);
  engine.pcie.bind(bus.tgt);
  bus.init.bind(dram.tgt);    // port 0
  bus.init.bind(engine.regs); // port 1
  bus.map(0, DRAM_BASE, DRAM_SIZE, "dram");
  bus.map(1, CDMA_BASE, cdma::reg::SIZE, "cdma.regs");
  engine.irq.bind(irq);
  core.irq.bind(irq);

  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  std::cout << "simulated " << sc_core::sc_time_stamp().to_seconds() * 1e6 << " us\n";
  if (!core.finished) {
    std::cerr << "the CPU program did not finish\n";
    return 1;
  }
  return core.errors == 0 ? 0 : 1;
}
