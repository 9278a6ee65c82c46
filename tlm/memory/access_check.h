// The one validation of a memory access shared by every memory target (host memory, GPU
// memory controller): command, byte enables, streaming width and address range. On a bad
// access it sets the payload's error response (and warns, naming the address, for a range
// error) and returns false; it never throws.
#pragma once
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <systemc>
#include <tlm>
#include "tlm/core/base_protocol.h"
#include "tlm/core/sc_time_util.h"
#include "tlm/core/units.h"
#include "tlm/memory/backing_store.h"

namespace cdma::mem {

/// A read or write with a non-zero length must carry a data pointer (IEEE 1666-2011 §14.14:
/// the initiator's bug, but a target must not crash on it). Returns true if `trans` has one
/// (or needs none: another command, or length 0); else sets TLM_GENERIC_ERROR_RESPONSE, warns
/// from `who` naming the address and returns false. The one check every target of the library
/// (memory_target, gpu_memory_controller, pcie_link, the cDMA register block) applies in
/// b_transport, nb_transport_fw and transport_dbg.
[[gnu::cold, gnu::noinline]] inline bool null_data_error(tlm::tlm_generic_payload& trans, const char* who) {
  std::ostringstream os;
  os << (trans.get_command() == tlm::TLM_READ_COMMAND ? "read" : "write") << " of "
     << trans.get_data_length() << " bytes at 0x" << std::hex << trans.get_address()
     << " has a null data pointer (expected a buffer of data_length bytes, IEEE 1666 §14.14)";
  SC_REPORT_WARNING(who, os.str().c_str());
  trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
  return false;
}
inline bool check_data_ptr(tlm::tlm_generic_payload& trans, const char* who) {
  if (trans.get_data_ptr() != nullptr || trans.get_data_length() == 0) return true;
  const tlm::tlm_command cmd = trans.get_command();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND) return true;
  return null_data_error(trans, who);
}

/// Latest time a transaction may arrive at a target of the library (the kernel's time + the
/// annotated delay), ps: 2^62 ps, about 53 days of simulated time. A model bound far beyond
/// any run, not a hardware figure: a target's service times (each at most ~4.3e15 ps,
/// memory_params::min_bandwidth_Bps) then stay far inside the 64-bit picosecond timeline.
/// Before it (breaker s18 F7, fixed in session 20), an annotated delay of 2^64 - 1 ps wrapped: every target answered
/// it OK with a delay of a few ns, a response before its request.
constexpr ps_t max_arrival_ps = ps_t{1} << 62;

[[gnu::cold, gnu::noinline]] inline bool late_arrival_error(tlm::tlm_generic_payload& trans,
                                                            const sc_core::sc_time& delay,
                                                            const char* who) {
  std::ostringstream os;
  os << (trans.get_command() == tlm::TLM_READ_COMMAND    ? "read"
         : trans.get_command() == tlm::TLM_WRITE_COMMAND ? "write"
                                                         : "transaction")
     << " of " << trans.get_data_length() << " bytes at 0x" << std::hex << trans.get_address()
     << std::dec << " with annotated delay " << to_ps(delay) << " ps at time " << now_ps()
     << " ps arrives after " << max_arrival_ps
     << " ps (2^62 ps, about 53 days of simulated time, the latest time a target accepts); "
        "expected time + annotated delay below that";
  SC_REPORT_WARNING(who, os.str().c_str());
  trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
  return false;
}

/// True if a transaction with annotated delay `delay` arrives by max_arrival_ps (the kernel's
/// time + delay, without wrapping past 2^64); else sets TLM_GENERIC_ERROR_RESPONSE, warns from
/// `who` naming the address, the delay, the time and the bound, and returns false. Every
/// target of the library (memory_target, host_memory, gpu_memory_controller, pcie_link)
/// applies it in b_transport and on BEGIN_REQ before it books anything; the cDMA register
/// block in b_transport (its nb_transport_fw is the socket's adapter onto b_transport).
inline bool check_arrival(tlm::tlm_generic_payload& trans, const sc_core::sc_time& delay,
                          const char* who) {
  const ps_t now = now_ps(), d = to_ps(delay);
  if (now <= max_arrival_ps && d <= max_arrival_ps - now) return true;
  return late_arrival_error(trans, delay, who);
}

/// Range query: a debug transport (transport_dbg) with TLM_IGNORE_COMMAND carrying this
/// extension asks the memory behind the socket whether [address, address + length) lies inside
/// it, without moving data or taking time (the ignore command reads and writes nothing, IEEE
/// 1666 §14.10). The library's memory targets (debug_access below: memory_target, host_memory,
/// gpu_memory_controller) set `answered` and `inside`; interconnects forward it like any debug
/// transport. A target that does not know the extension leaves `answered` false: the
/// initiator then knows nothing (the cDMA engine uses it to bound a descriptor's LEN before it
/// allocates anything proportional to it). The length is 64-bit (a payload's is 32-bit).
struct range_query : tlm::tlm_extension<range_query> {
  std::uint64_t length = 0;  ///< in: bytes from the payload's address
  bool answered = false;     ///< out: a memory answered
  std::uint64_t inside = 0;  ///< out: bytes of [address, address + length) inside the memory, from address
  tlm::tlm_extension_base* clone() const override { return new range_query(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override {
    *this = static_cast<const range_query&>(e);
  }
};

/// Asks the memory behind `socket` (anything with transport_dbg) about [addr, addr + len):
/// returns false if no memory answered; else true with `inside` set (range_query::inside).
template <typename Socket>
bool query_range(Socket& socket, std::uint64_t addr, std::uint64_t len, std::uint64_t& inside) {
  tlm::tlm_generic_payload gp;
  range_query q;
  q.length = len;
  gp.set_command(tlm::TLM_IGNORE_COMMAND);
  gp.set_address(addr);
  gp.set_data_ptr(nullptr);
  gp.set_data_length(0);
  gp.set_streaming_width(0);
  gp.set_extension(&q);
  socket->transport_dbg(gp);
  gp.clear_extension(&q);
  inside = q.inside;
  return q.answered;
}

/// Whether [addr, addr + len) fits the 64-bit address space (ends at 2^64 at the latest).
constexpr bool fits_address_space(std::uint64_t addr, std::uint64_t len) {
  return len == 0 || addr <= ~std::uint64_t{0} - (len - 1);
}

/// check_access()'s range error: the warning and the response status (out of line, so the
/// common path of check_access() stays small enough to be inlined into every target).
[[gnu::cold, gnu::noinline]] inline bool range_error(tlm::tlm_generic_payload& trans,
                                                     std::uint64_t size_bytes, const char* who) {
  std::ostringstream os;
  os << (trans.get_command() == tlm::TLM_READ_COMMAND ? "read" : "write") << " of "
     << trans.get_data_length() << " bytes at 0x" << std::hex << trans.get_address()
     << " is outside the memory (size 0x" << size_bytes << std::dec << " = " << size_bytes
     << " bytes; expected address + length <= size)";
  SC_REPORT_WARNING(who, os.str().c_str());
  trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  return false;
}

/// Rate limit of a target's warnings about refused payload attributes (byte enables,
/// streaming width; the cDMA register block: data length too). The first `detailed` refusals
/// are reported one by one; after them a count at each power of two (8, 16, 32, ...), so a
/// stream of bad accesses costs a logarithmic number of lines. One per target.
struct refusal_log {
  static constexpr std::uint64_t detailed = 4;
  std::uint64_t count = 0;  ///< refusals so far
};

/// Reports one refusal: `what` (the transaction, the attribute and its value, the response
/// status, the expected form) as an SC_WARNING from `who`, subject to `log`'s rate limit.
[[gnu::cold, gnu::noinline]] inline void report_refusal(refusal_log& log, const char* who, const std::string& what) {
  const std::uint64_t n = ++log.count;
  if (n <= refusal_log::detailed) {
    std::string m = what;
    if (n == refusal_log::detailed)
      m += " [" + std::to_string(n) + " payload-attribute refusals by this target: further ones are "
           "counted, reported at 8, 16, 32, ...]";
    SC_REPORT_WARNING(who, m.c_str());
  } else if ((n & (n - 1)) == 0) {
    const std::string m = std::to_string(n) + " payload-attribute refusals by this target so far; the latest: " + what;
    SC_REPORT_WARNING(who, m.c_str());
  }
}

/// Byte enables on an access to a target that supports none: TLM_BYTE_ENABLE_ERROR_RESPONSE
/// (IEEE 1666-2011 §14.14: a target that does not support byte enables answers so) and a
/// warning (report_refusal). Returns false.
[[gnu::cold, gnu::noinline]] inline bool byte_enable_refused(tlm::tlm_generic_payload& trans, refusal_log& log,
                                                             const char* who) {
  trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  std::ostringstream os;
  os << (trans.get_command() == tlm::TLM_READ_COMMAND ? "read" : "write") << " of "
     << trans.get_data_length() << " bytes at 0x" << std::hex << trans.get_address() << std::dec
     << " has byte enables (byte_enable_length " << trans.get_byte_enable_length()
     << "): refused with TLM_BYTE_ENABLE_ERROR_RESPONSE, nothing moved; this target supports no "
        "byte enables (IEEE 1666-2011 §14.14): expected a null byte enable pointer (every byte "
        "enabled)";
  report_refusal(log, who, os.str());
  return false;
}

/// A streaming width below the data length (a streaming burst) at a target that does not
/// stream: TLM_BURST_ERROR_RESPONSE (IEEE 1666-2011 §14.15) and a warning (report_refusal).
/// Returns false.
[[gnu::cold, gnu::noinline]] inline bool streaming_width_refused(tlm::tlm_generic_payload& trans, refusal_log& log,
                                                                 const char* who) {
  trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
  const unsigned len = trans.get_data_length();
  std::ostringstream os;
  os << (trans.get_command() == tlm::TLM_READ_COMMAND ? "read" : "write") << " of " << len
     << " bytes at 0x" << std::hex << trans.get_address() << std::dec << " has streaming width "
     << trans.get_streaming_width()
     << ": refused with TLM_BURST_ERROR_RESPONSE, nothing moved; this target does not stream "
        "(IEEE 1666-2011 §14.15): expected a streaming width equal to the data length ("
     << len << " B; a larger one also means no streaming)";
  if (trans.get_streaming_width() == 0)
    os << "; a fresh tlm_generic_payload has streaming width 0: call set_streaming_width(" << len << ")";
  report_refusal(log, who, os.str());
  return false;
}

/// `who` names the module in the warning; `size_bytes` is the memory's addressable size;
/// `refusals` rate-limits the byte-enable and streaming-width warnings (one per target).
inline bool check_access(tlm::tlm_generic_payload& trans, const backing_store& store,
                         std::uint64_t size_bytes, const char* who, refusal_log& refusals) {
  const tlm::tlm_command cmd = trans.get_command();
  const std::uint64_t addr = trans.get_address();
  const unsigned int len = trans.get_data_length();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return false;
  }
  if (trans.get_data_ptr() == nullptr && len != 0) return null_data_error(trans, who);
  if (trans.get_byte_enable_ptr() != nullptr) return byte_enable_refused(trans, refusals, who);
  if (trans.get_streaming_width() < len) return streaming_width_refused(trans, refusals, who);
  if (!store.contains(addr, len)) return range_error(trans, size_bytes, who);
  return true;
}

/// The functional part of a checked access: copies between the payload and the store. A
/// content region's region_error becomes TLM_GENERIC_ERROR_RESPONSE with a warning naming the
/// address and the cause; a spill-file I/O error (store_io_error) propagates and stops the
/// simulation (it is the simulator's storage failing, not the modelled system).
/// Returns true on success (response status not touched).
/// (Always inlined: with backing_store::read()'s inline fast path it is one page look-up and
/// a copy, and the call itself cost ~15 instructions per access.)
[[gnu::always_inline]] inline bool perform(tlm::tlm_generic_payload& trans, backing_store& store,
                                           const char* who) {
  const std::uint64_t addr = trans.get_address();
  try {
    if (trans.get_command() == tlm::TLM_READ_COMMAND)
      store.read(addr, trans.get_data_ptr(), trans.get_data_length());
    else
      store.write(addr, trans.get_data_ptr(), trans.get_data_length());
    return true;
  } catch (const store_io_error&) {
    throw;  // the simulator's own storage failed: stop the simulation, do not model an error
  } catch (const std::exception& e) {
    std::ostringstream os;
    os << (trans.get_command() == tlm::TLM_READ_COMMAND ? "read" : "write") << " of "
       << trans.get_data_length() << " bytes at 0x" << std::hex << addr << " failed: " << e.what();
    SC_REPORT_WARNING(who, os.str().c_str());
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return false;
  }
}

/// get_direct_mem_ptr of a memory target: grants the page containing the address
/// (read/write, `latency` for each access) when the store allows direct access there;
/// denies it outside the memory (whole range above it), on a page of a content region and for
/// a spill-file store (the page only).
inline bool grant_dmi(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi, backing_store& store,
                      std::uint64_t size_bytes, const sc_core::sc_time& latency) {
  const std::uint64_t addr = trans.get_address();
  if (addr >= size_bytes) {
    dmi.allow_none();
    dmi.set_start_address(size_bytes);
    dmi.set_end_address(~std::uint64_t{0});
    return false;
  }
  const std::uint64_t page = store.page_bytes();
  const std::uint64_t start = addr - addr % page;
  const std::uint64_t end = std::min(start + page, size_bytes) - 1;
  dmi.set_start_address(start);
  dmi.set_end_address(end);
  if (!store.direct_access(addr)) {
    dmi.allow_none();
    return false;
  }
  dmi.set_dmi_ptr(store.page_pointer(addr));
  dmi.allow_read_write();
  dmi.set_read_latency(latency);
  dmi.set_write_latency(latency);
  return true;
}

/// transport_dbg of a memory target: copies functionally, clipped at the end of the memory;
/// returns the bytes copied (0 for an out-of-range start or a command other than read/write).
/// Byte enables and the streaming width are ignored (every byte of the range is copied): the
/// debug interface uses only command, address, data pointer, data length and extensions
/// (SystemC 2.3.4 tlm_fw_bw_ifs.h, tlm_transport_dbg_if; docs/memory.md "Debug transport").
/// A null data pointer with a non-zero length copies nothing (0) and warns from `who`
/// (check_data_ptr); TLM_IGNORE_COMMAND with a range_query extension answers the query.
inline unsigned int debug_access(tlm::tlm_generic_payload& trans, backing_store& store,
                                 std::uint64_t size_bytes, const char* who) {
  const tlm::tlm_command cmd = trans.get_command();
  const std::uint64_t addr = trans.get_address();
  if (cmd == tlm::TLM_IGNORE_COMMAND) {
    range_query* q = nullptr;
    trans.get_extension(q);
    if (q != nullptr) {
      q->answered = true;
      q->inside = addr >= size_bytes ? 0 : std::min<std::uint64_t>(q->length, size_bytes - addr);
    }
    return 0;
  }
  if (!check_data_ptr(trans, who)) return 0;
  if (addr >= size_bytes || (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND)) return 0;
  const unsigned int len =
      static_cast<unsigned int>(std::min<std::uint64_t>(trans.get_data_length(), size_bytes - addr));
  try {
    if (cmd == tlm::TLM_READ_COMMAND)
      store.read(addr, trans.get_data_ptr(), len);
    else
      store.write(addr, trans.get_data_ptr(), len);
  } catch (const store_io_error&) {
    throw;
  } catch (const std::exception&) {
    return 0;  // a region refused the access or spill-file I/O failed: nothing moved
  }
  return len;
}

/// "read of N bytes at 0xADDR" (or "command C, N bytes at 0xADDR"): a transaction as the
/// targets' protocol messages name it.
inline std::string describe(const tlm::tlm_generic_payload& trans) {
  std::ostringstream os;
  const tlm::tlm_command cmd = trans.get_command();
  if (cmd == tlm::TLM_READ_COMMAND) os << "read";
  else if (cmd == tlm::TLM_WRITE_COMMAND) os << "write";
  else os << "ignore command";
  os << " of " << trans.get_data_length() << " bytes at 0x" << std::hex << trans.get_address();
  return os.str();
}

using base_protocol::is_base_phase;

/// nb_transport_fw of a target for a phase other than the BEGIN_REQ and END_RESP it serves:
/// an extended phase is an ignorable phase under the base protocol and is ignored, answered
/// TLM_ACCEPTED (IEEE 1666-2011 §15.2.5 b, g: the callee that ignores a phase shall return
/// TLM_ACCEPTED and not pass it on); END_REQ, BEGIN_RESP (backward-path phases) or
/// UNINITIALIZED_PHASE from an initiator break the base protocol: an SC_ERROR from `who`
/// naming the phase and the transaction, and TLM_COMPLETED.
inline tlm::tlm_sync_enum other_fw_phase(const tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase,
                                         const char* who) {
  if (!is_base_phase(phase) && phase != tlm::UNINITIALIZED_PHASE) return tlm::TLM_ACCEPTED;
  std::ostringstream os;
  os << "nb_transport_fw: illegal phase " << phase << " from the initiator for the " << describe(trans)
     << " (base protocol: an initiator sends BEGIN_REQ and END_RESP only, IEEE 1666-2011 §15.2.3 c)";
  SC_REPORT_ERROR(who, os.str().c_str());
  return tlm::TLM_COMPLETED;
}

/// The initiator's answer to a target's BEGIN_RESP, checked on the rare path only: a target
/// calls this when nb_transport_bw(BEGIN_RESP) returned neither TLM_COMPLETED nor TLM_UPDATED
/// with END_RESP (the two answers that end the response on the spot; it has already examined
/// those). TLM_ACCEPTED (END_RESP to come on the forward path) and TLM_UPDATED with an
/// ignorable (extended) phase are legal; TLM_UPDATED with BEGIN_REQ, END_REQ, BEGIN_RESP or
/// UNINITIALIZED_PHASE is not (IEEE 1666-2011 §15.2.4, Table 57; §15.2.13.3 d: the initiator
/// takes BEGIN_RESP, so it may answer only with END_RESP): an SC_ERROR from `who` naming the
/// transaction, the answer and the legal ones. The target's response stays in progress
/// either way (it waits for END_RESP under the response exclusion rule, §15.2.6 f), as before.
[[gnu::cold, gnu::noinline]] inline void check_begin_resp_answer(const tlm::tlm_generic_payload& trans,
                                                                 tlm::tlm_sync_enum answer,
                                                                 const tlm::tlm_phase& phase, const char* who) {
  if (answer != tlm::TLM_UPDATED) return;  // TLM_ACCEPTED: END_RESP comes later
  if (!is_base_phase(phase) && phase != tlm::UNINITIALIZED_PHASE) return;  // ignorable phase
  if (base_protocol::legal_update(tlm::BEGIN_RESP, phase, false)) return;
  std::ostringstream os;
  os << "the initiator answered BEGIN_RESP of the " << describe(trans) << " with TLM_UPDATED and phase " << phase
     << "; expected " << base_protocol::legal_answers(tlm::BEGIN_RESP, false)
     << " (base protocol, IEEE 1666-2011 §15.2.4 Table 57, §15.2.13.3 d). The response "
        "stays in progress: this target sends no further BEGIN_RESP until END_RESP for this "
        "transaction (response exclusion rule, §15.2.6 f)";
  SC_REPORT_ERROR(who, os.str().c_str());
}

/// END_RESP for a transaction whose response is not in progress at a target: an SC_ERROR
/// from `who` naming the transaction (the target keeps serving the others).
inline void stray_end_resp(const tlm::tlm_generic_payload& trans, const char* who) {
  const std::string m = "END_RESP for the " + describe(trans) +
                        ", whose response is not in progress (expected END_RESP only after its BEGIN_RESP)";
  SC_REPORT_ERROR(who, m.c_str());
}

}  // namespace cdma::mem
