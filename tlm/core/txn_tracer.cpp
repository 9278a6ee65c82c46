#include "tlm/core/txn_tracer.h"
#include "tlm/core/sc_time_util.h"

#include <cinttypes>
#include <cstdio>
#include <utility>

namespace cdma {

using namespace sc_core;
using namespace tlm;

namespace {
const char* cmd_name(tlm_command c) {
  return c == TLM_READ_COMMAND ? "RD" : c == TLM_WRITE_COMMAND ? "WR" : "IGN";
}
const char* phase_name(const tlm_phase& ph) {
  if (ph == BEGIN_REQ) return "BEGIN_REQ";
  if (ph == END_REQ) return "END_REQ";
  if (ph == BEGIN_RESP) return "BEGIN_RESP";
  if (ph == END_RESP) return "END_RESP";
  return ph.get_name();  // a protocol-specific phase: its declared name
}
/// The response status as its enumerator name (tlm_generic_payload::get_response_string()).
std::string status(const tlm_generic_payload& p) { return p.get_response_string(); }
/// "<ns>.<ps> " of a time (exact: integer picoseconds).
std::string stamp(const sc_time& t) {
  const ps_t ps = to_ps(t);
  char b[48];
  std::snprintf(b, sizeof b, "%" PRIu64 ".%03u ", static_cast<std::uint64_t>(ps / 1000),
                static_cast<unsigned>(ps % 1000));
  return b;
}
/// "[0xstart, 0xend]"
std::string range(sc_dt::uint64 s, sc_dt::uint64 e) {
  char b[64];
  std::snprintf(b, sizeof b, "[0x%" PRIx64 ", 0x%" PRIx64 "]", static_cast<std::uint64_t>(s),
                static_cast<std::uint64_t>(e));
  return b;
}
}  // namespace

txn_tracer::txn_tracer(sc_module_name name, std::ostream* out, std::string label)
    : sc_module(name), tgt("tgt"), init("init"), out_(out), label_(std::move(label)) {
  if (label_.empty()) label_ = this->name();
  tgt.register_b_transport(this, &txn_tracer::b_transport);
  tgt.register_nb_transport_fw(this, &txn_tracer::nb_transport_fw);
  tgt.register_get_direct_mem_ptr(this, &txn_tracer::get_direct_mem_ptr);
  tgt.register_transport_dbg(this, &txn_tracer::transport_dbg);
  init.register_nb_transport_bw(this, &txn_tracer::nb_transport_bw);
  init.register_invalidate_direct_mem_ptr(this, &txn_tracer::invalidate_direct_mem_ptr);
}

void txn_tracer::emit(const std::string& s) {
  ++lines_;
  if (out_) {
    *out_ << s << '\n';
  } else {
    SC_REPORT_INFO_VERB(msg_type, s.c_str(), SC_MEDIUM);
  }
}

void txn_tracer::line(const sc_time& d, bool fw, const char* event, const tlm_generic_payload& p,
                      const std::string& tail) {
  char mid[96];
  std::snprintf(mid, sizeof mid, " %s 0x%" PRIx64 " %u B", cmd_name(p.get_command()),
                static_cast<std::uint64_t>(p.get_address()), p.get_data_length());
  std::string s = stamp(sc_time_stamp() + d) + label_ + (fw ? " >> " : " << ") + event + mid;
  if (!tail.empty()) s += " " + tail;
  emit(s);
}

void txn_tracer::b_transport(tlm_generic_payload& p, sc_time& d) {
  line(d, true, "b_transport", p);
  init->b_transport(p, d);
  line(d, false, "return", p, status(p));
}

tlm_sync_enum txn_tracer::nb_transport_fw(tlm_generic_payload& p, tlm_phase& ph, sc_time& d) {
  line(d, true, phase_name(ph), p);
  const tlm_sync_enum r = init->nb_transport_fw(p, ph, d);
  if (r == TLM_UPDATED)
    line(d, false, phase_name(ph), p, ph == BEGIN_RESP ? status(p) : "");
  else if (r == TLM_COMPLETED)
    line(d, false, "TLM_COMPLETED", p, status(p));
  return r;
}

tlm_sync_enum txn_tracer::nb_transport_bw(tlm_generic_payload& p, tlm_phase& ph, sc_time& d) {
  line(d, false, phase_name(ph), p, ph == BEGIN_RESP ? status(p) : "");
  const tlm_sync_enum r = tgt->nb_transport_bw(p, ph, d);
  if (r == TLM_UPDATED)
    line(d, true, phase_name(ph), p);
  else if (r == TLM_COMPLETED)
    line(d, true, "TLM_COMPLETED", p, status(p));
  return r;
}

bool txn_tracer::get_direct_mem_ptr(tlm_generic_payload& p, tlm_dmi& dmi) {
  line(SC_ZERO_TIME, true, "dmi", p);
  const bool ok = init->get_direct_mem_ptr(p, dmi);
  line(SC_ZERO_TIME, false, ok ? "dmi_granted" : "dmi_refused", p,
       ok ? range(dmi.get_start_address(), dmi.get_end_address()) : "");
  return ok;
}

unsigned int txn_tracer::transport_dbg(tlm_generic_payload& p) {
  line(SC_ZERO_TIME, true, "dbg", p);
  const unsigned int n = init->transport_dbg(p);
  line(SC_ZERO_TIME, false, "dbg_return", p, std::to_string(n) + " B transferred");
  return n;
}

void txn_tracer::invalidate_direct_mem_ptr(sc_dt::uint64 s, sc_dt::uint64 e) {
  emit(stamp(sc_time_stamp()) + label_ + " << dmi_invalidate " + range(s, e));
  tgt->invalidate_direct_mem_ptr(s, e);
}

}  // namespace cdma
