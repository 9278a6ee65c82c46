// N-to-1 interconnect: several initiators share one target (e.g. the cDMA engine and the
// GPU compute model both reach the GPU memory controller). Forwards all four TLM entry
// points; the backward path of nb_transport is routed to the initiator that sent the
// payload. Adds no delay: arbitration is the target's bandwidth rule.
//
// Request exclusion rule (IEEE 1666-2011 §15.2.8 / TLM-2.0 base protocol) on the shared
// downstream socket: each initiator keeps it on its own socket, but two initiators could send
// BEGIN_REQ downstream before the target's END_REQ. A BEGIN_REQ arriving while a request phase
// is open downstream is queued (TLM_ACCEPTED to its initiator, whose request phase stays open)
// and forwarded, in arrival order, in the delta cycle after the open one ends, with what is
// left of its annotated delay (it is never forwarded before the time its initiator gave it:
// the delay was dropped before, breaker s21); the mux then passes on whatever the target
// answers (END_REQ, BEGIN_RESP, or a completion) on the initiator's backward path.
#pragma once
#include <deque>
#include <map>
#include <set>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

namespace cdma {

class initiator_mux : public sc_core::sc_module {
public:
  /// Bind any number of initiators here.
  tlm_utils::multi_passthrough_target_socket<initiator_mux> tgt;
  /// Bind to the shared target.
  tlm_utils::simple_initiator_socket<initiator_mux> init;

  explicit initiator_mux(sc_core::sc_module_name name) : sc_module(name), tgt("tgt"), init("init") {
    tgt.register_b_transport(this, &initiator_mux::b_transport);
    tgt.register_nb_transport_fw(this, &initiator_mux::nb_transport_fw);
    tgt.register_get_direct_mem_ptr(this, &initiator_mux::get_direct_mem_ptr);
    tgt.register_transport_dbg(this, &initiator_mux::transport_dbg);
    init.register_nb_transport_bw(this, &initiator_mux::nb_transport_bw);
    init.register_invalidate_direct_mem_ptr(this, &initiator_mux::invalidate_direct_mem_ptr);
    SC_HAS_PROCESS(initiator_mux);
    SC_METHOD(forward_queued);
    sensitive << req_free_;
    dont_initialize();
  }

private:
  void b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& d) { init->b_transport(p, d); }

  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                     sc_core::sc_time& d) {
    if (ph == tlm::BEGIN_REQ) {
      owner_[&p] = id;
      if (req_open_ || !queue_.empty()) {  // downstream request phase busy: wait in line
        queue_.push_back({&p, sc_core::sc_time_stamp() + d});
        return tlm::TLM_ACCEPTED;
      }
      req_open_ = &p;
      const tlm::tlm_sync_enum r = init->nb_transport_fw(p, ph, d);
      if (r != tlm::TLM_ACCEPTED) request_ended(&p);  // END_REQ, BEGIN_RESP or completed
      if (r == tlm::TLM_COMPLETED) owner_.erase(&p);
      return r;
    }
    if (ph == tlm::END_RESP && done_downstream_.erase(&p)) {  // the target already completed it
      owner_.erase(&p);
      return tlm::TLM_COMPLETED;
    }
    const tlm::tlm_sync_enum r = init->nb_transport_fw(p, ph, d);
    if (r == tlm::TLM_COMPLETED || ph == tlm::END_RESP) owner_.erase(&p);
    return r;
  }

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                     sc_core::sc_time& d) {
    auto it = owner_.find(&p);
    if (it == owner_.end()) {
      SC_REPORT_ERROR(name(), "nb_transport_bw for a payload this mux never forwarded");
      return tlm::TLM_COMPLETED;
    }
    if (&p == req_open_ && (ph == tlm::END_REQ || ph == tlm::BEGIN_RESP)) request_ended(&p);
    const int id = it->second;
    const tlm::tlm_sync_enum r = tgt[id]->nb_transport_bw(p, ph, d);
    if (r == tlm::TLM_COMPLETED || ph == tlm::END_RESP) owner_.erase(&p);
    return r;
  }

  void request_ended(tlm::tlm_generic_payload* p) {
    if (req_open_ != p) return;
    req_open_ = nullptr;
    if (!queue_.empty()) req_free_.notify(sc_core::SC_ZERO_TIME);
  }

  /// Forwards the oldest queued BEGIN_REQ (delta cycle after the request phase freed) and
  /// relays the target's immediate answer on the initiator's backward path.
  void forward_queued() {
    while (!req_open_ && !queue_.empty()) {
      const queued q = queue_.front();
      queue_.pop_front();
      tlm::tlm_generic_payload* p = q.p;
      req_open_ = p;
      tlm::tlm_phase ph = tlm::BEGIN_REQ;
      const sc_core::sc_time now = sc_core::sc_time_stamp();
      sc_core::sc_time d = q.arrival > now ? q.arrival - now : sc_core::SC_ZERO_TIME;
      const tlm::tlm_sync_enum r = init->nb_transport_fw(*p, ph, d);
      if (r == tlm::TLM_ACCEPTED) return;  // END_REQ comes on the backward path
      request_ended(p);
      const int id = owner_[p];
      // The target's answer: END_REQ, BEGIN_RESP (request and response at once) or completed
      // (the initiator still needs a response, so it gets BEGIN_RESP and its END_RESP, if
      // any, is answered by the mux).
      const tlm::tlm_phase sent = r == tlm::TLM_COMPLETED ? tlm::BEGIN_RESP : ph;
      if (r == tlm::TLM_COMPLETED) done_downstream_.insert(p);
      ph = sent;
      const tlm::tlm_sync_enum rb = tgt[id]->nb_transport_bw(*p, ph, d);
      const bool resp_ended = sent == tlm::BEGIN_RESP &&
                              (rb == tlm::TLM_COMPLETED || (rb == tlm::TLM_UPDATED && ph == tlm::END_RESP));
      if (!resp_ended) continue;
      if (r == tlm::TLM_COMPLETED) {
        done_downstream_.erase(p);
      } else {  // tell the target the response phase is over
        tlm::tlm_phase end = tlm::END_RESP;
        sc_core::sc_time d2 = sc_core::SC_ZERO_TIME;
        init->nb_transport_fw(*p, end, d2);
      }
      owner_.erase(p);
    }
  }

  bool get_direct_mem_ptr(int, tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
    return init->get_direct_mem_ptr(p, dmi);
  }

  unsigned int transport_dbg(int, tlm::tlm_generic_payload& p) { return init->transport_dbg(p); }

  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
    for (unsigned i = 0; i < tgt.size(); ++i) tgt[i]->invalidate_direct_mem_ptr(start, end);
  }

  std::map<tlm::tlm_generic_payload*, int> owner_;
  tlm::tlm_generic_payload* req_open_ = nullptr;       ///< downstream request phase open
  /// A BEGIN_REQ waiting for the downstream request phase, and the time it arrived at (the
  /// kernel's time + its annotated delay when the mux took it).
  struct queued {
    tlm::tlm_generic_payload* p;
    sc_core::sc_time arrival;
  };
  std::deque<queued> queue_;                           ///< BEGIN_REQs waiting for it
  std::set<tlm::tlm_generic_payload*> done_downstream_;///< completed by the target, response pending upstream
  sc_core::sc_event req_free_;
};

}  // namespace cdma
