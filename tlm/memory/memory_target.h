// memory_target: the one TLM-2.0 memory target (host DRAM and GPU DRAM both wrap it).
//
// Functional storage is a sparse backing_store; timing is one calendar_server (the data bus)
// plus a fixed access latency:
//   finish = bus.reserve(ready, len)          ready = time the request arrives (ps)
//   response time = finish + latency_ps
// The bus gives each access the earliest free interval at or after its arrival, so an LT
// b_transport called after one that arrives later (temporal decoupling: two initiators, or
// an engine's read and write streams) still starts at its own arrival when the bus is free
// then; for accesses arriving in call order (AT) it is the FIFO bandwidth_server exactly.
// LT (b_transport) annotates delay = response time - now; AT (nb_transport_fw) sends
// BEGIN_RESP at the response time. Both call the same execute() so they agree exactly.
//
// Errors never crash the simulation: they set the generic payload's response status
//   command other than read/write  -> TLM_COMMAND_ERROR_RESPONSE
//   byte enables present           -> TLM_BYTE_ENABLE_ERROR_RESPONSE (not supported)
//   streaming width < length       -> TLM_BURST_ERROR_RESPONSE (streaming not supported)
//   range outside [0, size)        -> TLM_ADDRESS_ERROR_RESPONSE + SC_REPORT_WARNING
//   null data pointer, length > 0  -> TLM_GENERIC_ERROR_RESPONSE + SC_REPORT_WARNING
// An erroneous transaction occupies no bandwidth and gets no latency.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <deque>
#include <memory>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm/core/bandwidth_server.h"
#include "tlm/core/units.h"
#include "tlm/memory/access_check.h"  // mem::refusal_log
#include "tlm/memory/backing_store.h"

namespace cdma {

/// Parameters of a memory_target.
struct memory_params {
  std::uint64_t size_bytes = 0;   ///< addressable size, bytes (storage is sparse)
  /// Data-bus service rate, B/s: 0 = infinitely fast (no bus time), else a finite rate of at
  /// least min_bandwidth_Bps (validate()).
  double bandwidth_Bps = 0.0;
  /// Fixed access latency added after the data transfer, ps, 0 .. max_latency_ps.
  ps_t latency_ps = 0;
  std::size_t page_bytes = 65536; ///< backing-store page and DMI granule, bytes
  /// Keep the stored bytes in a temporary file (spill_options) instead of RAM; no DMI then.
  bool spill = false;
  mem::spill_options spill_options{};

  /// Smallest non-zero bandwidth_Bps accepted, 1e6 B/s (1 MB/s, far below any real memory):
  /// one access of up to 2^32 - 1 bytes (a payload's length) or one DMI page then takes at
  /// most ~4.3e15 ps, far inside the 64-bit picosecond timeline (at 1e-300 B/s the service
  /// time overflowed and came out as a few ns; NaN gave 2^63 ps).
  static constexpr double min_bandwidth_Bps = 1e6;
  /// Largest latency_ps accepted, 1 s (1e12 ps), far above any memory's: a response is then
  /// due at most ~4.3e15 ps after its request (see min_bandwidth_Bps), far inside the 64-bit
  /// ps timeline (a latency of 2^64 - 1 ps wrapped and came out as -1 ps: breaker s18).
  static constexpr ps_t max_latency_ps = 1'000'000'000'000;
  /// The latency rule of every memory model (one check, one message): throws
  /// std::invalid_argument "<field> = <v>: expected 0 .. 1000000000000 ps (1 s)" if
  /// latency_ps > max_latency_ps.
  static void check_latency(const std::string& field, ps_t latency_ps);
  /// Throws std::invalid_argument naming the field and the expected form if bandwidth_Bps is
  /// NaN, infinite, negative or in (0, min_bandwidth_Bps), latency_ps is above
  /// max_latency_ps, or page_bytes is 0 or above mem::backing_store::kMaxPageBytes (1 GiB).
  /// (size_bytes may be anything: 0 is a memory every access misses.)
  void validate() const;
};

class memory_target : public sc_core::sc_module, public mem::region_host {
public:
  tlm_utils::simple_target_socket<memory_target> tgt;

  memory_target(sc_core::sc_module_name name, const memory_params& params);

  const memory_params& params() const { return params_; }
  mem::backing_store& store() { return store_; }
  const mem::backing_store& store() const { return store_; }

  /// Frees [addr, addr+len) in the store after invalidating DMI pointers into it (use this,
  /// not store().discard(), while initiators may hold DMI pointers).
  void discard(std::uint64_t addr, std::uint64_t len);

  /// Maps a content region (backing_store::map_region) after invalidating DMI over the range.
  void map_region(std::uint64_t addr, std::uint64_t len, std::shared_ptr<mem::content_region> region) override;
  void unmap_region(std::uint64_t addr) override;

  /// Bytes read / written by successful b_transport and nb_transport_fw transactions
  /// (debug and DMI accesses are not counted).
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  /// Sum of data-bus service times (ps); busy_ps() / elapsed is the bus utilisation.
  ps_t busy_ps() const { return bus_.busy_ps(); }
  /// Accesses refused for their byte enables or streaming width (each answered
  /// TLM_BYTE_ENABLE_ERROR_RESPONSE / TLM_BURST_ERROR_RESPONSE; the first few warned one by
  /// one, then a count at each power of two: mem::refusal_log).
  std::uint64_t attribute_refusals() const { return refusals_.count; }

  /// Validates and performs `trans` functionally, reserving the data bus from `ready_ps`.
  /// Returns the time (ps) the response is available (finish + latency), or `ready_ps` if
  /// the transaction failed (its response status says why). Shared by LT and AT.
  ps_t execute(tlm::tlm_generic_payload& trans, ps_t ready_ps);

private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);

  // AT response path (Accellera at_target shape): PEQ callback, exclusion rule.
  void peq_cb(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase);
  void send_response(tlm::tlm_generic_payload& trans);
  void end_response(tlm::tlm_generic_payload& trans);

  memory_params params_;
  mem::backing_store store_;
  calendar_server bus_;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
  mem::refusal_log refusals_;

  tlm_utils::peq_with_cb_and_phase<memory_target> peq_;
  tlm::tlm_generic_payload* resp_in_progress_ = nullptr;  // BEGIN_RESP sent, END_RESP pending
  std::deque<tlm::tlm_generic_payload*> resp_queue_;      // responses waiting for the channel
};

}  // namespace cdma
