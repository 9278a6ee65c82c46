// cdma_engine: descriptor-driven DMA engine with compression units on the offload path and
// decompression units on the prefetch path (Rhu et al., HPCA 2018, "Compressing DMA Engine").
//
// Sockets (named after their member):
//   gpu_mem  initiator  -> GPU memory controller (reads activations, writes prefetched data)
//   pcie     initiator  -> PCIe endpoint / link towards host memory
//   regs     target     <- MMIO from the driver (register map: tlm/cdma/descriptor.h, docs/cdma_registers.md)
//   irq      sc_out<bool>, level: high while IRQ_STATUS & IRQ_ENABLE != 0
//
// Data formats on the host side (offload / prefetch): compressed windows are packed back to
// back from `dst` (window k starts where window k-1 ended); the metadata table at `meta` has
// one 8-byte entry per window (tlm/codec/window.h). Loosely timed: one SC_THREAD runs the
// descriptor queue with a tlm_quantumkeeper; each window's stage times come from the
// targets' annotated delays and dma_pipeline (tlm/cdma/dma_pipeline.h).
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include "tlm/cdma/descriptor.h"
#include "tlm/cdma/dma_pipeline.h"
#include "tlm/codec/codec.h"
#include "tlm/core/units.h"

namespace cdma {

/// Parameters of the cDMA engine. Defaults follow the thin first version: 4 units of
/// 32 B/cycle at 1 GHz (= 128 GB/s aggregate, enough for 13.8x x 12.8 GB/s / 1.4, HPCA 2018
/// sizes its units for the PCIe rate times the compression ratio).
struct cdma_engine_params {
  std::size_t window_bytes = 4096;       ///< uncompressed bytes per window (ARCHITECTURE §5)
  unsigned compression_units = 4;        ///< units on the offload path
  unsigned decompression_units = 4;      ///< units on the prefetch path
  double unit_bytes_per_cycle = 32.0;    ///< throughput of one unit, uncompressed bytes per cycle
  double clock_hz = 1e9;                 ///< unit clock (Hz)
  unsigned pipeline_latency_cycles = 16; ///< per-window latency of a unit, cycles at clock_hz
  unsigned max_outstanding = 32;         ///< windows in flight between read issue and write done
  std::size_t queue_depth = 64;          ///< descriptors the doorbell can queue
  ps_t register_latency_ps = 10000;      ///< MMIO access time (10 ns)
};

/// Per-descriptor record, for reports: what moved and when (times in ps).
struct dma_record {
  std::uint64_t sequence = 0;
  dma_descriptor desc;
  ps_t queued = 0, started = 0, finished = 0;
  std::uint64_t out_data_bytes = 0;   ///< bytes written to the destination (data only)
  std::uint64_t meta_bytes = 0;       ///< metadata table bytes moved
  std::uint64_t windows = 0, windows_raw = 0;
  dma_error error = dma_error::none;
};

class cdma_engine : public sc_core::sc_module {
public:
  tlm_utils::simple_initiator_socket<cdma_engine> gpu_mem;
  tlm_utils::simple_initiator_socket<cdma_engine> pcie;
  tlm_utils::simple_target_socket<cdma_engine> regs;
  sc_core::sc_out<bool> irq;

  cdma_engine(sc_core::sc_module_name name, const cdma_engine_params& p = {});

  const cdma_engine_params& params() const { return p_; }
  /// Every descriptor finished so far, in completion order.
  const std::vector<dma_record>& records() const { return records_; }
  /// Sum of compression / decompression unit busy time (ps).
  ps_t compression_busy_ps() const { return comp_busy_; }
  ps_t decompression_busy_ps() const { return decomp_busy_; }

private:
  void run();
  void execute(dma_record& r);
  dma_error copy(const dma_descriptor& d, dma_record& r, bool to_host);
  dma_error offload(const dma_descriptor& d, dma_record& r);
  dma_error prefetch(const dma_descriptor& d, dma_record& r);
  /// One blocking access at absolute time `at` (ps, >= now); returns the completion time in
  /// `done` or false on an error response.
  bool access(tlm_utils::simple_initiator_socket<cdma_engine>& s, tlm::tlm_command cmd,
              std::uint64_t addr, std::uint8_t* data, std::size_t len, ps_t at, ps_t& done);
  ps_t local_now();
  void advance_to(ps_t t);
  void raise(std::uint32_t irq_bits);
  void update_irq();
  void drive_irq();
  void soft_reset();

  // regs target
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& d);
  unsigned int transport_dbg(tlm::tlm_generic_payload& p);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);
  bool reg_read(std::uint32_t off, std::uint32_t& v) const;
  bool reg_write(std::uint32_t off, std::uint32_t v);
  // initiator backward paths (LT only: nothing is expected on them)
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&);
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) {}

  cdma_engine_params p_;
  tlm_utils::tlm_quantumkeeper qk_;
  sc_core::sc_event doorbell_ev_, irq_ev_;
  std::deque<dma_record> queue_;
  std::vector<dma_record> records_;
  std::uint64_t sequence_ = 0;

  // register state
  std::uint32_t ctrl_ = 0, irq_enable_ = 0, irq_status_ = 0;
  std::uint32_t error_code_ = 0, error_desc_ = 0, done_count_ = 0;
  std::uint32_t windows_compressed_ = 0, windows_raw_ = 0;
  std::uint64_t desc_src_ = 0, desc_dst_ = 0, desc_len_ = 0, desc_meta_ = 0;
  std::uint32_t desc_ctrl_ = 0;
  std::uint64_t last_out_ = 0, bytes_read_ = 0, bytes_written_ = 0;
  bool busy_ = false;

  ps_t comp_busy_ = 0, decomp_busy_ = 0;
  tlm::tlm_generic_payload trans_;
  std::vector<std::uint8_t> in_buf_, out_buf_;
  std::map<unsigned, std::unique_ptr<codec::codec>> codecs_;
  const codec::codec& codec_for(codec::codec_id id, unsigned width);
};

}  // namespace cdma
