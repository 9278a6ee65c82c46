// The cDMA engine with its real chain, built from the installed package (find_package(cdma_vp)
// -> cdma::tlm) and wired by hand, as an integrator would in their own platform
// (docs/user-guide.md, "Building your own platform from the models"):
//
//   cpu.mem ───────┐
//   cdma.gpu_mem ──┴─► initiator_mux ──► gpu_memory_controller   GPU DRAM (Titan X GDDR5), 64 MiB
//   cdma.pcie ───────► pcie_link ("measured-host" preset) ──► host_memory (DDR4, 64 GiB sparse)
//   cpu.regs ────────► cdma.regs                                  MMIO, offsets 0x00 .. 0xFF
//   cdma.irq ────────► cpu.irq
//
// The CPU puts a tensor and a descriptor ring in GPU memory (debug transport: untimed), programs
// the engine through its registers (timed b_transport), runs one offload (GPU -> compressed in
// host memory) and one prefetch (back to GPU memory), and compares the restored tensor.
//   cdma_chain [lt|at] [check]    lt (default): loosely timed engine; at: approximately timed;
//                                 check: a cdma::protocol_checker on each of the 6 connections
// Exit status 0 when every byte matches, no error was reported and no check failed.
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm/cdma/cdma_engine.h"
#include "tlm/cdma/descriptor.h"
#include "tlm/core/initiator_mux.h"
#include "tlm/core/protocol_checker.h"
#include "tlm/memory/gpu_memory_controller.h"
#include "tlm/memory/host_memory.h"
#include "tlm/pcie/pcie_link.h"

namespace {

constexpr std::uint64_t TENSOR = 0x0100000, RESTORED = 0x0200000, RING = 0x0300000;  // GPU
constexpr std::uint64_t PACKED = 0x10000000, META = 0x20000000;                    // host
constexpr std::uint32_t RING_SIZE = 16;
constexpr std::uint64_t LEN = 1 << 20;  // 1 MiB of fp32

struct cpu : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<cpu> mem;   // GPU memory, through the mux
  tlm_utils::simple_initiator_socket<cpu> regs;  // the engine's registers
  sc_core::sc_in<bool> irq;
  int errors = 0;
  bool finished = false;

  SC_HAS_PROCESS(cpu);
  explicit cpu(sc_core::sc_module_name n) : sc_module(n), mem("mem"), regs("regs"), irq("irq") {
    SC_THREAD(program);
  }

  static void fill(tlm::tlm_generic_payload& t, tlm::tlm_command c, std::uint64_t a, void* p,
                   unsigned n) {
    t.set_command(c);
    t.set_address(a);
    t.set_data_ptr(static_cast<unsigned char*>(p));
    t.set_data_length(n);
    t.set_streaming_width(n);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }
  void dbg(tlm::tlm_command c, std::uint64_t a, void* p, unsigned n) {  // untimed, functional
    tlm::tlm_generic_payload t;
    fill(t, c, a, p, n);
    if (mem->transport_dbg(t) != n) {
      std::cerr << "cpu: debug access failed at 0x" << std::hex << a << std::dec << "\n";
      ++errors;
    }
  }
  std::uint32_t reg(tlm::tlm_command c, std::uint32_t off, std::uint32_t v = 0) {  // timed MMIO
    std::uint8_t b[4];
    cdma::store_le32(b, v);
    tlm::tlm_generic_payload t;
    fill(t, c, off, b, 4);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    regs->b_transport(t, d);
    wait(d);
    if (t.is_response_error()) {
      std::cerr << "cpu: register 0x" << std::hex << off << std::dec << ": "
                << t.get_response_string() << "\n";
      ++errors;
    }
    return cdma::load_le32(b);
  }
  void wr(std::uint32_t off, std::uint32_t v) { reg(tlm::TLM_WRITE_COMMAND, off, v); }
  std::uint32_t rd(std::uint32_t off) { return reg(tlm::TLM_READ_COMMAND, off); }

  /// Posts descriptor `index`, sleeps until the interrupt; returns OUT_BYTES of the write-back.
  std::uint64_t run(const cdma::dma_descriptor& d, std::uint32_t index, const char* what) {
    std::uint8_t b[cdma::desc::SIZE];
    cdma::encode_descriptor(d, b);
    dbg(tlm::TLM_WRITE_COMMAND, RING + index * cdma::desc::SIZE, b, sizeof b);
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    wr(cdma::reg::RING_TAIL, (index + 1) % RING_SIZE);  // doorbell
    if (!irq.read()) wait(irq.posedge_event());
    const double us = (sc_core::sc_time_stamp() - t0).to_seconds() * 1e6;
    wr(cdma::reg::IRQ_STATUS, rd(cdma::reg::IRQ_STATUS));  // W1C: drops the line
    std::uint8_t wb[cdma::desc::WRITEBACK_BYTES];
    dbg(tlm::TLM_READ_COMMAND, RING + index * cdma::desc::SIZE + cdma::desc::STATUS, wb, sizeof wb);
    const std::uint32_t st = cdma::load_le32(wb);
    const std::uint64_t out = cdma::load_le64(wb + 8);
    std::cout << what << ": status 0x" << std::hex << st << std::dec << ", " << out
              << " bytes written, " << us << " us doorbell to irq (" << double(d.len) / us / 1e3
              << " GB/s of tensor)\n";
    if (!(st & cdma::desc::STATUS_DONE) || (st & cdma::desc::STATUS_ERROR)) {
      std::cerr << what << " failed: "
                << cdma::to_string(static_cast<cdma::dma_error>(rd(cdma::reg::ERROR_CODE))) << "\n";
      ++errors;
    }
    return out;
  }

  void program() {
    std::vector<std::uint8_t> t(LEN);  // ReLU-like: about half the fp32 elements zero, in runs
    for (std::uint64_t i = 0; i < LEN / 4; ++i) {
      const std::uint32_t h = static_cast<std::uint32_t>((i / 7) * 2654435761u);
      cdma::store_le32(t.data() + 4 * i, (h >> 31) ? 0u : (0x3F800000u | (h & 0x7FFFFF)));
    }
    dbg(tlm::TLM_WRITE_COMMAND, TENSOR, t.data(), LEN);

    // Driver init: ring in GPU memory (RING_CTRL.LOCATION = 0), interrupts on, engine on.
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
    const std::uint64_t packed = run(d, 0, "offload ");
    d.direction = cdma::dma_direction::prefetch;
    d.src = PACKED;
    d.dst = RESTORED;
    run(d, 1, "prefetch");

    std::vector<std::uint8_t> back(LEN);
    dbg(tlm::TLM_READ_COMMAND, RESTORED, back.data(), LEN);
    const bool same = back == t;
    const std::uint64_t meta = LEN / rd(cdma::reg::WINDOW_BYTES) * 8;  // 8 B per window
    std::cout << "compressed " << LEN << " -> " << packed << " + " << meta << " metadata bytes ("
              << double(LEN) / double(packed + meta) << "x), restored tensor "
              << (same ? "matches" : "DIFFERS FROM") << " the original\n";
    if (!same) ++errors;
    finished = true;  // nothing else is scheduled: sc_start() returns
  }
};

}  // namespace

int sc_main(int argc, char* argv[]) {
  bool at = false, check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "at" || a == "lt") at = a == "at";
    else if (a == "check") check = true;
    else { std::cerr << "usage: cdma_chain [lt|at] [check]\n"; return 2; }
  }

  cdma::gpu_memory_params gp;  // defaults: Titan X, 12 channels of GDDR5 at 336 GB/s peak
  gp.size_bytes = 64ull << 20;
  cdma::gpu_memory_controller gpu("gpu_mem", gp);
  cdma::host_memory host("host_mem");  // defaults: 64 GiB sparse, 25.6 GB/s, 80 ns
  // Not link_params{}: that is the spec-ideal Gen3 x16 link (14.51 / 14.36 GB/s host-to-device /
  // device-to-host); the platform and the docs' figures use the calibrated measured-host preset
  // (11.79 / 12.89 GB/s, docs/pcie.md).
  cdma::pcie_link link("pcie", cdma::pcie::preset("measured-host"));
  link.set_host_size(host.host_params().size_bytes);  // refuse out-of-range DMAs whole
  cdma::cdma_engine_params ep;
  ep.approximately_timed = at;
  cdma::cdma_engine engine("cdma", ep);
  cdma::initiator_mux gpu_bus("gpu_bus");  // the CPU and the engine share GPU memory
  cpu core("cpu");
  sc_core::sc_signal<bool> irq("irq");

  std::vector<std::unique_ptr<cdma::protocol_checker>> checkers;
  auto connect = [&](auto& initiator, auto& target, const char* name) {
    if (!check) {
      initiator.bind(target);
      return;
    }
    checkers.push_back(std::make_unique<cdma::protocol_checker>(name));
    initiator.bind(checkers.back()->tgt);
    checkers.back()->init.bind(target);
  };
  connect(core.mem, gpu_bus.tgt, "chk_cpu_mem");
  connect(engine.gpu_mem, gpu_bus.tgt, "chk_cdma_gpu_mem");
  connect(gpu_bus.init, gpu.tgt, "chk_gpu_bus");
  connect(engine.pcie, link.tgt, "chk_cdma_pcie");
  connect(link.init, host.tgt, "chk_pcie_host");
  connect(core.regs, engine.regs, "chk_cpu_regs");
  engine.irq.bind(irq);
  core.irq.bind(irq);
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));

  std::cout << std::fixed << std::setprecision(3) << "cdma_chain " << (at ? "AT" : "LT")
            << (check ? ", protocol checkers on" : "") << ", PCIe " << link.rate_Bps() / 1e9 << " GB/s TLP rate per direction\n";
  sc_core::sc_start();  // returns when no process has anything left to do
  std::size_t violations = 0;
  for (const auto& c : checkers) violations += c->violations();
  std::cout << "host memory: " << host.bytes_written() << " bytes written, " << host.bytes_read()
            << " read; simulated " << sc_core::sc_time_stamp().to_seconds() * 1e6 << " us";
  if (check) std::cout << "; " << violations << " protocol violations";
  std::cout << "\n";
  return core.finished && core.errors == 0 && violations == 0 ? 0 : 1;
}
