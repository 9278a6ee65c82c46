// The TLM-2.0 base protocol's answer rules (IEEE 1666-2011 §15.2.4, Table 57), shared by the
// base-protocol checker (protocol_checker) and the targets' own checks (tlm/memory/
// access_check.h), so the two cannot disagree. Pure functions over phases; no state.
#pragma once
#include <tlm>

namespace cdma::base_protocol {

/// The four phases of the base protocol (§15.1: BEGIN_REQ .. END_RESP); any other phase but
/// UNINITIALIZED_PHASE is an extended (ignorable) one.
inline bool is_base_phase(const tlm::tlm_phase& ph) {
  return ph == tlm::BEGIN_REQ || ph == tlm::END_REQ || ph == tlm::BEGIN_RESP || ph == tlm::END_RESP;
}

/// Whether TLM_UPDATED with base phase `answer` is a legal answer of the callee to `sent`,
/// sent on the forward path (fw) or the backward path (§15.2.4, Table 57): a target may answer
/// BEGIN_REQ with END_REQ or BEGIN_RESP; an initiator BEGIN_RESP with END_RESP; END_REQ and
/// END_RESP take no TLM_UPDATED.
inline bool legal_update(const tlm::tlm_phase& sent, const tlm::tlm_phase& answer, bool fw) {
  if (fw && sent == tlm::BEGIN_REQ) return answer == tlm::END_REQ || answer == tlm::BEGIN_RESP;
  if (!fw && sent == tlm::BEGIN_RESP) return answer == tlm::END_RESP;
  return false;
}

/// The legal answers to `sent` (as legal_update()), for messages.
inline const char* legal_answers(const tlm::tlm_phase& sent, bool fw) {
  if (fw && sent == tlm::BEGIN_REQ)
    return "TLM_ACCEPTED, TLM_UPDATED with END_REQ or BEGIN_RESP, or TLM_COMPLETED";
  if (!fw && sent == tlm::BEGIN_RESP)
    return "TLM_ACCEPTED (then END_RESP on the forward path), TLM_UPDATED with END_RESP, or TLM_COMPLETED";
  return "TLM_ACCEPTED or TLM_COMPLETED";  // END_REQ (backward) and END_RESP (forward)
}

}  // namespace cdma::base_protocol
