// A small approximately-timed test initiator (the Accellera at_initiator shape): issues
// `count` writes then reads of `bytes` each to consecutive addresses, keeps up to
// `outstanding` in flight, and handles every base-protocol path: TLM_ACCEPTED, TLM_UPDATED
// (END_REQ or straight to BEGIN_RESP) and TLM_COMPLETED on the forward call, END_REQ and
// BEGIN_RESP on the backward path. With `complete_on_resp` it answers BEGIN_RESP with
// TLM_COMPLETED instead of sending END_RESP.
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>
#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>
#include "tlm/core/payload_pool.h"

namespace cdma::test {

class at_initiator : public sc_core::sc_module {
public:
  tlm_utils::simple_initiator_socket<at_initiator> init;
  unsigned count = 16, outstanding = 4;
  std::uint32_t bytes = 64;
  std::uint64_t base = 0;
  bool complete_on_resp = false;
  bool reads_after_writes = true;
  /// Responses seen, responses with an error, and data mismatches of the read-back.
  unsigned responses = 0, errors = 0, mismatches = 0;
  sc_core::sc_time last_response;
  payload_pool pool;

  explicit at_initiator(sc_core::sc_module_name n)
      : sc_module(n), init("init"), peq_(this, &at_initiator::peq_cb) {
    init.register_nb_transport_bw(this, &at_initiator::nb_transport_bw);
    SC_HAS_PROCESS(at_initiator);
    SC_THREAD(run);
  }

private:
  void run() {
    const unsigned total = reads_after_writes ? 2 * count : count;
    for (unsigned i = 0; i < total; ++i) {
      while (in_flight_ >= outstanding || req_busy_) wait(ev_);
      const bool write = i < count;
      const unsigned k = i % count;
      tlm::tlm_generic_payload* p = pool.allocate();
      p->acquire();
      auto& buf = data_[p];
      buf.assign(bytes, 0);
      if (write)
        for (std::uint32_t b = 0; b < bytes; ++b) buf[b] = static_cast<std::uint8_t>(k * 7 + b);
      p->set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
      p->set_address(base + std::uint64_t(k) * bytes);
      p->set_data_ptr(buf.data());
      p->set_data_length(bytes);
      p->set_streaming_width(bytes);
      p->set_byte_enable_ptr(nullptr);
      p->set_dmi_allowed(false);
      p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      tlm::tlm_phase ph = tlm::BEGIN_REQ;
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      ++in_flight_;
      req_busy_ = true;
      req_ = p;
      const tlm::tlm_sync_enum r = init->nb_transport_fw(*p, ph, d);
      if (r == tlm::TLM_UPDATED) {
        peq_.notify(*p, ph, d);
      } else if (r == tlm::TLM_COMPLETED) {
        end_request(*p);
        wait(d);
        response(*p);
      }
      wait(sc_core::SC_ZERO_TIME);
    }
    while (in_flight_ > 0) wait(ev_);
  }

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_core::sc_time& d) {
    if (ph == tlm::BEGIN_RESP && complete_on_resp) {
      end_request(p);  // BEGIN_RESP ends this transaction's request phase too
      response(p);
      return tlm::TLM_COMPLETED;
    }
    peq_.notify(p, ph, d);
    return tlm::TLM_ACCEPTED;
  }

  void peq_cb(tlm::tlm_generic_payload& p, const tlm::tlm_phase& ph) {
    if (ph == tlm::END_REQ) {
      end_request(p);
      ev_.notify();
    } else if (ph == tlm::BEGIN_RESP) {
      end_request(p);
      tlm::tlm_phase end = tlm::END_RESP;
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      init->nb_transport_fw(p, end, d);
      response(p);
    }
  }

  /// END_REQ or BEGIN_RESP of `p` ends the request phase only if p's request is the open one
  /// (a response to an earlier transaction does not end a later transaction's request).
  void end_request(tlm::tlm_generic_payload& p) {
    if (&p == req_) {
      req_busy_ = false;
      req_ = nullptr;
    }
  }

  void response(tlm::tlm_generic_payload& p) {
    ++responses;
    last_response = sc_core::sc_time_stamp();
    if (p.is_response_error()) ++errors;
    if (p.is_read()) {
      const unsigned k = static_cast<unsigned>((p.get_address() - base) / bytes);
      const auto& buf = data_[&p];
      for (std::uint32_t b = 0; b < bytes; ++b)
        if (buf[b] != static_cast<std::uint8_t>(k * 7 + b)) { ++mismatches; break; }
    }
    --in_flight_;
    p.release();
    ev_.notify();
  }

  tlm_utils::peq_with_cb_and_phase<at_initiator> peq_;
  sc_core::sc_event ev_;
  unsigned in_flight_ = 0;
  bool req_busy_ = false;
  tlm::tlm_generic_payload* req_ = nullptr;  ///< transaction whose request phase is open
  std::map<tlm::tlm_generic_payload*, std::vector<std::uint8_t>> data_;
};

}  // namespace cdma::test
