// protocol_checker: a pass-through module that checks the TLM-2.0 base protocol on one
// initiator -> target connection (IEEE 1666-2011 §14, §15, §16) and reports each violation as
// an SC_ERROR of message type "/cdma/protocol_checker" naming the checker (and so the socket
// pair it sits on). Bind the initiator to `tgt` and `init` to the target.
//
// Checked: phase order per transaction (BEGIN_REQ -> END_REQ -> BEGIN_RESP -> END_RESP, with
// the TLM_UPDATED / TLM_COMPLETED shortcuts), the request and response exclusion rules (one
// BEGIN_REQ before END_REQ or BEGIN_RESP; one BEGIN_RESP before END_RESP), response status
// (TLM_INCOMPLETE_RESPONSE on the way in, set on the way back), data length and pointer,
// streaming width, byte-enable length, and for nb_transport a memory manager with a positive
// reference count while the transaction is open. An extended (ignorable) phase passes when it
// comes inside an open transaction (IEEE 1666-2011 §15.2.5); outside one, or
// UNINITIALIZED_PHASE, it is a violation.
//
// Transactions still open when the simulation ends (an initiator that never sends END_RESP,
// a target that never answers: a hang) are not violations of a rule at one call; open()
// counts them, and one SC_WARNING (message type msg_type) names how many and the oldest (its
// transaction, phase, the time it entered that phase and what it awaits): from
// end_of_simulation() when sc_stop() ends the simulation, else from the destructor (a
// simulation that ends by running out of events calls no end_of_simulation()).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace cdma {

class protocol_checker : public sc_core::sc_module {
public:
  tlm_utils::simple_target_socket<protocol_checker> tgt;
  tlm_utils::simple_initiator_socket<protocol_checker> init;

  explicit protocol_checker(sc_core::sc_module_name name);

  /// Violations seen so far (each was also reported).
  std::size_t violations() const { return messages_.size(); }
  const std::vector<std::string>& messages() const { return messages_; }
  /// Transactions begun (BEGIN_REQ or b_transport) and completed.
  std::size_t begun() const { return begun_; }
  std::size_t completed() const { return completed_; }
  /// Transactions still open (nb_transport only).
  std::size_t open() const { return state_.size(); }
  /// Empty when no transaction is open; else what the end-of-simulation warning says: the
  /// number open and the oldest (begun first): its command, length and address, its phase
  /// and the time it entered it, and what it awaits (e.g. "END_RESP from the initiator").
  std::string open_report() const;

  ~protocol_checker() override;

  static constexpr const char* msg_type = "/cdma/protocol_checker";

protected:
  void end_of_simulation() override;

private:
  enum class st { req, req_ended, resp, done };
  /// An open nb_transport transaction: its state, begin order, and the time (simulation time
  /// + annotated delay) it entered that state.
  struct open_txn {
    st s;
    std::uint64_t seq;
    sc_core::sc_time since;
    tlm::tlm_command cmd;
    std::uint64_t addr;
    unsigned len;
  };
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& d);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_core::sc_time& d);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_core::sc_time& d);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& p);
  void invalidate_direct_mem_ptr(sc_dt::uint64 s, sc_dt::uint64 e);

  void check_payload(const tlm::tlm_generic_payload& p, const char* where);
  /// Applies a phase seen on the forward (fw = true) or backward path, at sc_time_stamp() + d.
  void on_phase(tlm::tlm_generic_payload& p, const tlm::tlm_phase& ph, bool fw, const char* where,
                const sc_core::sc_time& d);
  /// Applies the return `r` (phase `ph`, delay `d`) of an nb_transport call that sent `sent`.
  void on_return(tlm::tlm_generic_payload& p, tlm::tlm_sync_enum r, const tlm::tlm_phase& sent,
                 const tlm::tlm_phase& ph, bool fw, const char* where, const sc_core::sc_time& d);
  void report_open();
  void finish(tlm::tlm_generic_payload& p);
  void violation(const std::string& what, const tlm::tlm_generic_payload* p = nullptr);

  std::map<const tlm::tlm_generic_payload*, open_txn> state_;
  const tlm::tlm_generic_payload* req_open_ = nullptr;   // request phase not yet ended
  const tlm::tlm_generic_payload* resp_open_ = nullptr;  // response phase not yet ended
  std::vector<std::string> messages_;
  std::size_t begun_ = 0, completed_ = 0;
  std::uint64_t seq_ = 0;
  bool open_reported_ = false;  ///< the end-of-simulation warning was given (once)
};

}  // namespace cdma
