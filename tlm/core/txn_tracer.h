// txn_tracer: a pass-through module that writes one line per transaction event on one
// initiator -> target connection, for debugging a platform (the per-socket transaction trace
// of VCML: `time connection >> RD 0xaddr len`). Bind the initiator to `tgt` and `init` to the
// target; every call is forwarded unchanged (payload, phase, delay, return value), so a
// connection behaves the same with or without the tracer.
//
// Line format (one event per line, fields separated by one space):
//
//   <time> <label> <arrow> <event> <cmd> 0x<address> <length> B [<status>]
//
//   time     the transaction's local time in ns with ps digits: sc_time_stamp() + the
//            annotated delay of the call or return (LT: the initiator's time ahead of the
//            kernel; AT: the time the phase takes effect)
//   label    the connection's name (constructor argument; default: the module's name)
//   arrow    `>>` towards the target (forward path: a call or what it returned on the
//            backward side's behalf, e.g. END_RESP), `<<` towards the initiator
//   event    b_transport: `b_transport` (call) then `return` (with the status);
//            nb_transport: the phase (`BEGIN_REQ`, `END_REQ`, `BEGIN_RESP`, `END_RESP`) of the
//            call, then for a non-TLM_ACCEPTED return the phase it returned (`TLM_UPDATED`
//            shortcuts: e.g. `END_REQ`, `BEGIN_RESP`) or `TLM_COMPLETED`;
//            `dbg` / `dbg_return` for transport_dbg (with the bytes transferred);
//            `dmi` then `dmi_granted [0xstart, 0xend]` or `dmi_refused`;
//            `dmi_invalidate [0xstart, 0xend]` (backward)
//   cmd      RD, WR or IGN (TLM_IGNORE_COMMAND)
//   status   on responses: the TLM response status (TLM_OK_RESPONSE, TLM_ADDRESS_ERROR_RESPONSE...)
//
// Example (an AT read of 64 B answered 12.5 ns later, TLM_UPDATED shortcut for END_REQ):
//   1000.000 gpu_mem >> BEGIN_REQ RD 0x1000 64 B
//   1000.000 gpu_mem << END_REQ RD 0x1000 64 B
//   1012.500 gpu_mem << BEGIN_RESP RD 0x1000 64 B TLM_OK_RESPONSE
//   1012.500 gpu_mem >> TLM_COMPLETED RD 0x1000 64 B TLM_OK_RESPONSE
//
// Output: an std::ostream given to the constructor (not owned; it must outlive the tracer), or
// none (nullptr): then each line is an SC_INFO report of message type `msg_type` at verbosity
// SC_MEDIUM (displayed with SystemC's default settings; silenced with
// sc_report_handler::set_actions(txn_tracer::msg_type, SC_DO_NOTHING)). Cost: one formatted
// line per event, so a traced connection is meant for short runs (an LT transaction is two
// lines, an AT one three or four).
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace cdma {

class txn_tracer : public sc_core::sc_module {
public:
  tlm_utils::simple_target_socket<txn_tracer> tgt;
  tlm_utils::simple_initiator_socket<txn_tracer> init;

  /// `out`: the stream the lines go to (nullptr: SC_INFO reports of type msg_type);
  /// `label`: the connection's name in every line (empty: the module's hierarchical name).
  explicit txn_tracer(sc_core::sc_module_name name, std::ostream* out = nullptr,
                      std::string label = "");

  /// Lines written (or reported) so far.
  std::uint64_t lines() const { return lines_; }
  const std::string& label() const { return label_; }

  static constexpr const char* msg_type = "/cdma/txn_tracer";

private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& d);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                     sc_core::sc_time& d);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                     sc_core::sc_time& d);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& p);
  void invalidate_direct_mem_ptr(sc_dt::uint64 s, sc_dt::uint64 e);

  /// Writes one line: time (now + d), label, arrow, event, the payload's command, address and
  /// length, then `tail` (if not empty).
  void line(const sc_core::sc_time& d, bool fw, const char* event,
            const tlm::tlm_generic_payload& p, const std::string& tail = "");
  void emit(const std::string& s);

  std::ostream* out_;
  std::string label_;
  std::uint64_t lines_ = 0;
};

}  // namespace cdma
