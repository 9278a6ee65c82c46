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
  if (!store.contains(addr, len)) {
    std::ostringstream os;
    os << (cmd == tlm::TLM_READ_COMMAND ? "read" : "write") << " of " << len << " bytes at 0x"
       << std::hex << addr << " is outside the memory (size 0x" << size_bytes << std::dec
       << " = " << size_bytes << " bytes)";
    SC_REPORT_WARNING(who, os.str().c_str());
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
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
  if (cmd == tlm::TLM_READ_COMMAND)
    store.read(addr, trans.get_data_ptr(), len);
  else
    store.write(addr, trans.get_data_ptr(), len);
  return len;
}

}  // namespace cdma::mem
