#include "tlm/core/protocol_checker.h"

#include "tlm/core/base_protocol.h"

#include <sstream>

namespace cdma {

protocol_checker::protocol_checker(sc_core::sc_module_name name)
    : sc_module(name), tgt("tgt"), init("init") {
  tgt.register_b_transport(this, &protocol_checker::b_transport);
  tgt.register_nb_transport_fw(this, &protocol_checker::nb_transport_fw);
  tgt.register_get_direct_mem_ptr(this, &protocol_checker::get_direct_mem_ptr);
  tgt.register_transport_dbg(this, &protocol_checker::transport_dbg);
  init.register_nb_transport_bw(this, &protocol_checker::nb_transport_bw);
  init.register_invalidate_direct_mem_ptr(this, &protocol_checker::invalidate_direct_mem_ptr);
}

void protocol_checker::violation(const std::string& what, const tlm::tlm_generic_payload* p) {
  std::ostringstream m;
  m << name() << " (" << tgt.name() << " -> " << init.name() << "): " << what;
  if (p) m << " [payload " << static_cast<const void*>(p) << ", addr 0x" << std::hex << p->get_address() << "]";
  messages_.push_back(m.str());
  SC_REPORT_ERROR(msg_type, m.str().c_str());
}

void protocol_checker::check_payload(const tlm::tlm_generic_payload& p, const char* where) {
  const std::string w(where);
  if (p.get_command() != tlm::TLM_IGNORE_COMMAND) {
    if (p.get_data_length() == 0) violation(w + ": data length is 0 (§14.13)", &p);
    if (p.get_data_ptr() == nullptr) violation(w + ": data pointer is null (§14.14)", &p);
  }
  if (p.get_streaming_width() == 0) violation(w + ": streaming width is 0 (§14.15)", &p);
  if (p.get_byte_enable_ptr() != nullptr && p.get_byte_enable_length() == 0)
    violation(w + ": byte enable pointer set with byte enable length 0 (§14.16)", &p);
  if (p.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE)
    violation(w + ": response status must be TLM_INCOMPLETE_RESPONSE when the request starts (§14.17)", &p);
}

void protocol_checker::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& d) {
  ++begun_;
  check_payload(p, "b_transport");
  if (state_.count(&p)) violation("b_transport with a payload that is still in an nb_transport transaction", &p);
  init->b_transport(p, d);
  if (p.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
    violation("b_transport returned with response status TLM_INCOMPLETE_RESPONSE (§14.17)", &p);
  ++completed_;
}

void protocol_checker::finish(tlm::tlm_generic_payload& p) {
  if (p.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
    violation("transaction completed with response status TLM_INCOMPLETE_RESPONSE (§14.17)", &p);
  if (req_open_ == &p) req_open_ = nullptr;
  if (resp_open_ == &p) resp_open_ = nullptr;
  state_.erase(&p);
  ++completed_;
}

void protocol_checker::on_phase(tlm::tlm_generic_payload& p, const tlm::tlm_phase& ph, bool fw, const char* where,
                                const sc_core::sc_time& d) {
  const std::string w(where);
  auto it = state_.find(&p);
  if (ph == tlm::BEGIN_REQ) {
    if (!fw) return violation(w + ": BEGIN_REQ on the backward path", &p);
    if (it != state_.end()) return violation(w + ": BEGIN_REQ for a payload whose transaction is still open", &p);
    if (req_open_)
      violation(w + ": BEGIN_REQ before END_REQ (or BEGIN_RESP) of the previous request (request exclusion rule, §15.2.6 e)", &p);
    check_payload(p, where);
    if (!p.has_mm()) violation(w + ": nb_transport payload has no memory manager (§14.5)", &p);
    else if (p.get_ref_count() <= 0) violation(w + ": payload reference count is 0 on BEGIN_REQ (§14.5)", &p);
    state_[&p] = {st::req, seq_++, sc_core::sc_time_stamp() + d, p.get_command(), p.get_address(),
                  p.get_data_length()};
    req_open_ = &p;
    ++begun_;
    return;
  }
  if (it == state_.end()) return violation(w + ": phase " + ph.get_name() + " for a payload with no open transaction", &p);
  if (p.has_mm() && p.get_ref_count() <= 0) violation(w + ": payload reference count dropped to 0 while the transaction is open (§14.5)", &p);
  open_txn& t = it->second;
  if (ph == tlm::END_REQ) {
    if (fw) return violation(w + ": END_REQ on the forward path", &p);
    if (t.s != st::req) return violation(w + ": END_REQ after the request phase ended", &p);
    t.s = st::req_ended;
    t.since = sc_core::sc_time_stamp() + d;
    if (req_open_ == &p) req_open_ = nullptr;
  } else if (ph == tlm::BEGIN_RESP) {
    if (fw) return violation(w + ": BEGIN_RESP on the forward path", &p);
    if (t.s != st::req && t.s != st::req_ended) return violation(w + ": BEGIN_RESP twice", &p);
    if (resp_open_ && resp_open_ != &p)
      violation(w + ": BEGIN_RESP before END_RESP of the previous response (response exclusion rule, §15.2.6 f)", &p);
    if (p.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
      violation(w + ": BEGIN_RESP with response status TLM_INCOMPLETE_RESPONSE (§14.17)", &p);
    t.s = st::resp;  // BEGIN_RESP also ends the request phase (§15.2.4)
    t.since = sc_core::sc_time_stamp() + d;
    if (req_open_ == &p) req_open_ = nullptr;
    resp_open_ = &p;
  } else if (ph == tlm::END_RESP) {
    if (!fw) return violation(w + ": END_RESP on the backward path", &p);
    if (t.s != st::resp) return violation(w + ": END_RESP before BEGIN_RESP", &p);
    finish(p);
  } else if (ph == tlm::UNINITIALIZED_PHASE) {
    violation(w + ": UNINITIALIZED_PHASE (expected a base-protocol phase or an ignorable extended phase)", &p);
  }
  // Else an extended phase inside the open transaction: an ignorable phase, allowed by the
  // base protocol between BEGIN_REQ and END_RESP (IEEE 1666-2011 §15.2.5); it changes no
  // state. Outside a transaction it is caught above ("no open transaction", §15.2.5 e).
}

void protocol_checker::on_return(tlm::tlm_generic_payload& p, tlm::tlm_sync_enum r, const tlm::tlm_phase& sent,
                                 const tlm::tlm_phase& ph, bool fw, const char* where, const sc_core::sc_time& d) {
  if (r == tlm::TLM_ACCEPTED) return;
  if (r == tlm::TLM_COMPLETED) {
    if (state_.count(&p)) finish(p);
    return;
  }
  // TLM_UPDATED: the callee moved the phase on the return path (opposite direction). An
  // answer the base protocol does not allow for the phase sent is named as such (before
  // session 25 it read e.g. "nb_transport_bw return: END_REQ on the forward path").
  // (An answer to an ignorable phase is left to on_phase(), as before.)
  if (base_protocol::is_base_phase(sent) &&
      (base_protocol::is_base_phase(ph) || ph == tlm::UNINITIALIZED_PHASE) && !base_protocol::legal_update(sent, ph, fw)) {
    const std::string callee = fw ? "the target" : "the initiator";
    return violation(std::string(where) + ": " + callee + " answered " + sent.get_name() + " with TLM_UPDATED and phase " +
                         ph.get_name() + "; legal answers: " + base_protocol::legal_answers(sent, fw) + " (§15.2.4, Table 57)",
                     &p);
  }
  on_phase(p, ph, !fw, where, d);
}

tlm::tlm_sync_enum protocol_checker::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                                     sc_core::sc_time& d) {
  on_phase(p, ph, true, "nb_transport_fw", d);
  const bool open = state_.count(&p) != 0;
  const tlm::tlm_phase sent = ph;
  const tlm::tlm_sync_enum r = init->nb_transport_fw(p, ph, d);
  if (open) on_return(p, r, sent, ph, true, "nb_transport_fw return", d);
  return r;
}

tlm::tlm_sync_enum protocol_checker::nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                                     sc_core::sc_time& d) {
  on_phase(p, ph, false, "nb_transport_bw", d);
  const bool open = state_.count(&p) != 0;
  const tlm::tlm_phase sent = ph;
  const tlm::tlm_sync_enum r = tgt->nb_transport_bw(p, ph, d);
  if (open) on_return(p, r, sent, ph, false, "nb_transport_bw return", d);
  return r;
}

std::string protocol_checker::open_report() const {
  if (state_.empty()) return {};
  const open_txn* o = nullptr;
  for (const auto& e : state_)
    if (!o || e.second.seq < o->seq) o = &e.second;
  std::ostringstream m;
  m << name() << " (" << tgt.name() << " -> " << init.name() << "): " << state_.size()
    << " transaction(s) still open at " << sc_core::sc_time_stamp() << "; the oldest, the "
    << (o->cmd == tlm::TLM_READ_COMMAND    ? "read"
        : o->cmd == tlm::TLM_WRITE_COMMAND ? "write"
                                           : "ignore command")
    << " of " << o->len << " bytes at 0x" << std::hex << o->addr << std::dec << ", is in phase ";
  switch (o->s) {
    case st::req:
      m << "BEGIN_REQ since " << o->since
        << ", awaiting END_REQ or BEGIN_RESP from the target (the initiator may send no other BEGIN_REQ "
           "meanwhile: request exclusion rule, §15.2.6 e)";
      break;
    case st::req_ended:
      m << "END_REQ since " << o->since << ", awaiting BEGIN_RESP from the target";
      break;
    case st::resp:
    case st::done:
      m << "BEGIN_RESP since " << o->since
        << ", awaiting END_RESP from the initiator (the target may send no other BEGIN_RESP meanwhile: "
           "response exclusion rule, §15.2.6 f)";
      break;
  }
  if (resp_open_ && state_.count(resp_open_) && &state_.at(resp_open_) != o)
    m << "; a response is also in progress (END_RESP awaited) for the payload at 0x" << std::hex
      << state_.at(resp_open_).addr << std::dec;
  return m.str();
}

void protocol_checker::report_open() {
  if (open_reported_ || state_.empty()) return;
  open_reported_ = true;
  const std::string m = open_report();
  SC_REPORT_WARNING(msg_type, m.c_str());
}

void protocol_checker::end_of_simulation() { report_open(); }

protocol_checker::~protocol_checker() {
  // A simulation that ran out of events (no sc_stop()) calls no end_of_simulation(): warn
  // here. Never throw from a destructor (a warning's actions may include SC_THROW).
  try {
    report_open();
  } catch (...) {
  }
}

bool protocol_checker::get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
  const bool ok = init->get_direct_mem_ptr(p, dmi);
  if (ok && dmi.get_start_address() > dmi.get_end_address())
    violation("DMI granted with start address above end address (§11.2)", &p);
  return ok;
}

unsigned int protocol_checker::transport_dbg(tlm::tlm_generic_payload& p) {
  const unsigned n = init->transport_dbg(p);
  if (n > p.get_data_length()) violation("transport_dbg returned more bytes than the data length (§11.3)", &p);
  return n;
}

void protocol_checker::invalidate_direct_mem_ptr(sc_dt::uint64 s, sc_dt::uint64 e) {
  tgt->invalidate_direct_mem_ptr(s, e);
}

}  // namespace cdma
