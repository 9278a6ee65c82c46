// A generic payload set up for one plain access (tests): command, address, data pointer,
// length = streaming width (bytes), no byte enables, DMI hint cleared, status INCOMPLETE
// (the state a target must overwrite).
#pragma once
#include <cstdint>

#include <tlm>

namespace cdma::test {

inline void setup_payload(tlm::tlm_generic_payload& gp, tlm::tlm_command cmd, std::uint64_t addr,
                          std::uint8_t* data, std::uint64_t len) {
  gp.set_command(cmd);
  gp.set_address(addr);
  gp.set_data_ptr(data);
  gp.set_data_length(static_cast<unsigned>(len));
  gp.set_streaming_width(static_cast<unsigned>(len));
  gp.set_byte_enable_ptr(nullptr);
  gp.set_byte_enable_length(0);
  gp.set_dmi_allowed(false);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

}  // namespace cdma::test
