// The one validation of a memory access shared by every memory target (host memory, GPU
// memory controller): command, byte enables, streaming width and address range. On a bad
// access it sets the payload's error response (and warns, naming the address, for a range
// error) and returns false; it never throws.
#pragma once
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <systemc>
#include <tlm>
#include "tlm/memory/backing_store.h"

namespace cdma::mem {

/// check_access()'s range error: the warning and the response status (out of line, so the
/// common path of check_access() stays small enough to be inlined into every target).
[[gnu::cold, gnu::noinline]] inline bool range_error(tlm::tlm_generic_payload& trans,
                                                     std::uint64_t size_bytes, const char* who) {
  std::ostringstream os;
  os << (trans.get_command() == tlm::TLM_READ_COMMAND ? "read" : "write") << " of "
     << trans.get_data_length() << " bytes at 0x" << std::hex << trans.get_address()
     << " is outside the memory (size 0x" << size_bytes << std::dec << " = " << size_bytes
     << " bytes)";
  SC_REPORT_WARNING(who, os.str().c_str());
  trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  return false;
}

/// `who` names the module in the warning; `size_bytes` is the memory's addressable size.
inline bool check_access(tlm::tlm_generic_payload& trans, const backing_store& store,
                         std::uint64_t size_bytes, const char* who) {
  const tlm::tlm_command cmd = trans.get_command();
  const std::uint64_t addr = trans.get_address();
  const unsigned int len = trans.get_data_length();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return false;
  }
  if (trans.get_byte_enable_ptr() != nullptr) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return false;
  }
  if (trans.get_streaming_width() < len) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return false;
  }
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
inline unsigned int debug_access(tlm::tlm_generic_payload& trans, backing_store& store,
                                 std::uint64_t size_bytes) {
  const tlm::tlm_command cmd = trans.get_command();
  const std::uint64_t addr = trans.get_address();
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

}  // namespace cdma::mem
