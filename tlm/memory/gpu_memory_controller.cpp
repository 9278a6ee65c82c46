#include "tlm/memory/gpu_memory_controller.h"
#include "tlm/memory/access_check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "tlm/core/sc_time_util.h"

namespace cdma {

using namespace sc_core;
using namespace tlm;

void gpu_memory_params::validate() const {
  if (!(efficiency > 0.0 && efficiency <= 1.0))
    throw std::invalid_argument("gpu_memory_params.efficiency must be in (0, 1]");
  if (channels == 0 && model == gpu_memory_model::bus)
    throw std::invalid_argument("gpu_memory_params.channels must be >= 1");
  // The same floor as memory_params (memory_params::min_bandwidth_Bps: below it one access's
  // service time leaves the 64-bit ps timeline), applied to the rate actually used.
  if (!std::isfinite(peak_bandwidth_Bps) || !(effective_bandwidth_Bps() >= memory_params::min_bandwidth_Bps)) {
    std::ostringstream os;
    os << "gpu_memory_params.peak_bandwidth_Bps = " << peak_bandwidth_Bps << " B/s (x efficiency "
       << efficiency << "): expected a finite rate with peak x efficiency >= "
       << memory_params::min_bandwidth_Bps << " B/s";
    throw std::invalid_argument(os.str());
  }
  mem::backing_store::check_page_bytes("gpu_memory_params.page_bytes", page_bytes);
  // The same ceiling as memory_params (memory_params::max_latency_ps, 1 s).
  memory_params::check_latency("gpu_memory_params.latency_ps", latency_ps);
  memory_params::check_latency("gpu_memory_params.controller_latency_ps", controller_latency_ps);
  if (model == gpu_memory_model::dram) {
    if (channels == 0)
      throw std::invalid_argument("gpu_memory_params.channels must be >= 1");
    const std::string name = resolved_dram_preset();
    if (name.empty()) return;  // "auto" without a matching preset: bus model
    const dram::dram_spec s = dram::preset(name);  // throws naming the preset
    if (!preset_bandwidth_matches(s.peak_bandwidth_Bps(), peak_bandwidth_Bps)) {
      std::ostringstream os;
      os << "gpu_memory_params.peak_bandwidth_Bps = " << peak_bandwidth_Bps
         << " B/s disagrees with dram_preset '" << name << "' ("
         << s.peak_bandwidth_Bps() << " B/s); set both, or model = bus";
      throw std::invalid_argument(os.str());
    }
    if (channels != s.channels && !(name.rfind("hbm", 0) == 0))
      throw std::invalid_argument("gpu_memory_params.channels = " + std::to_string(channels) +
                                  " disagrees with dram_preset '" + name + "' (" +
                                  std::to_string(s.channels) + " channels)");
    const std::string text = address_mapping.empty() ? dram::address_mapping::default_text(s) : address_mapping;
    try {
      dram::address_mapping m(s, text);
    } catch (const std::invalid_argument& e) {
      // Named as the field, with the form (the mapping's own message names neither).
      std::string why = e.what();
      const std::string own = "address mapping '" + text + "': ";
      if (why.rfind(own, 0) == 0) why.erase(0, own.size());
      throw std::invalid_argument("gpu_memory_params.address_mapping = '" + text + "' (DRAM preset " + name +
                                  "): " + why + " (the text: fields from the most significant address bits down, " +
                                  "separated by spaces, a field in several parts as NAME:COUNT; e.g. this preset's "
                                  "default \"" + dram::address_mapping::default_text(s) + "\")");
    }
  }
}

unsigned default_max_outstanding(const dram::dram_spec& s) {
  return std::max(1024u, 16u * s.channels);
}

unsigned gpu_memory_params::outstanding_limit() const {
  if (max_outstanding) return max_outstanding;
  if (model == gpu_memory_model::dram) {
    const std::string name = resolved_dram_preset();
    if (!name.empty()) return default_max_outstanding(dram::preset(name));
  }
  return 1024;
}

std::string gpu_memory_params::resolved_dram_preset() const {
  if (dram_preset != "auto") return dram_preset;
  for (const auto& n : dram::preset_names()) {
    const dram::dram_spec s = dram::preset(n);
    const bool hbm = n.rfind("hbm", 0) == 0;
    if (preset_bandwidth_matches(s.peak_bandwidth_Bps(), peak_bandwidth_Bps) &&
        (hbm || s.channels == channels))
      return n;
  }
  return "";
}

namespace {
/// The response queue for responses due at most `horizon_ps` after the present time: a wheel
/// over 2 x horizon in buckets of at least `slot_ps`, widened so that the wheel has at most
/// max_wheel_slots buckets. The queue's order is exact whatever its window (a response beyond
/// it goes to the overflow heap, dram/response_queue.h), so this bounds only its memory:
/// sized from the latency alone, a 1 ms controller latency made 2^26 buckets (fmnist_cnn b1:
/// 286 MB and 6 s instead of 20 MB and 0.5 s), 100 ms several GB, 1 s std::bad_alloc, and a
/// latency near 2^63 ps an endless sizing loop (breaker s18). The defaults (a few thousand
/// buckets: GDDR5 2048 of 32 ps, bus 2048 of 256 ps) are far below the bound and unchanged.
template <class T>
dram::response_queue<T> make_response_queue(ps_t horizon_ps, ps_t slot_ps) {
  constexpr std::size_t max_wheel_slots = std::size_t{1} << 16;
  constexpr ps_t max_window = ps_t{1} << 62;  // the wheel's sizing loop stays inside 64 bits
  const ps_t window = horizon_ps >= max_window / 2 ? max_window : 2 * horizon_ps;
  const ps_t slot = std::max(slot_ps, (window + max_wheel_slots - 1) / max_wheel_slots);
  return dram::response_queue<T>(window, slot);
}
}  // namespace

gpu_memory_controller::gpu_memory_controller(sc_module_name name, const gpu_memory_params& p)
    : sc_module(name),
      tgt("tgt"),
      gpu_params_(p),
      max_out_(p.outstanding_limit()),
      mem_params_(p.to_memory_params()),
      store_(p.size_bytes, p.page_bytes),
      bus_(p.effective_bandwidth_Bps()) {
  if (p.effective_model() == gpu_memory_model::dram) {
    dram_ = std::make_unique<dram::dram_system>(dram::preset(p.resolved_dram_preset()),
                                                p.address_mapping,
                                                p.page_policy, p.scheduler);
    wake_at_.assign(dram_->spec().channels, dram::channel::kNever);
    wpos_.assign(dram_->spec().channels, -1);
    wheap_.reserve(dram_->spec().channels);
    // Responses are due at most max(CL, WL) + burst + controller latency after the present
    // time (later ones, e.g. after an annotated delay, go to the queue's overflow heap).
    const auto& s = dram_->spec();
    const ps_t horizon = s.ps(std::max(s.t.tCL, s.t.tWL)) + s.burst_ps() + p.controller_latency_ps;
    resp_q_ = make_response_queue<resp>(horizon, 32);
  } else {
    resp_q_ = make_response_queue<resp>(p.latency_ps, 256);
  }
  tgt.register_b_transport(this, &gpu_memory_controller::b_transport);
  tgt.register_nb_transport_fw(this, &gpu_memory_controller::nb_transport_fw);
  tgt.register_get_direct_mem_ptr(this, &gpu_memory_controller::get_direct_mem_ptr);
  tgt.register_transport_dbg(this, &gpu_memory_controller::transport_dbg);
  SC_METHOD(service_method);
  sensitive << ev_;
  dont_initialize();
}

void gpu_memory_controller::map_region(std::uint64_t addr, std::uint64_t len,
                                       std::shared_ptr<mem::content_region> region) {
  if (len) tgt->invalidate_direct_mem_ptr(addr, addr + len - 1);
  store_.map_region(addr, len, std::move(region));
}

void gpu_memory_controller::unmap_region(std::uint64_t addr) { store_.unmap_region(addr); }

void gpu_memory_controller::discard(std::uint64_t addr, std::uint64_t len) {
  if (len == 0) return;
  tgt->invalidate_direct_mem_ptr(addr, addr + len - 1);
  store_.discard(addr, len);
}

namespace {
/// Busy time before `now` of a resource with `booked` busy time whose booked work ends at
/// `until`: booked - (until - now) at least (the part after now is at most until - now).
ps_t busy_before(ps_t booked, ps_t until, ps_t now) {
  const ps_t ahead = until > now ? until - now : 0;
  return booked > ahead ? booked - ahead : 0;
}
}  // namespace

ps_t gpu_memory_controller::busy_ps() {
  const ps_t now = now_ps();
  if (!dram_) {
    bus_seen_ = std::max(bus_seen_, busy_before(bus_.busy_ps(), bus_.busy_until(), now));
    return bus_seen_;
  }
  ps_t b = dram_->lt_busy_before(now);
  at_seen_.resize(dram_->channels().size(), 0);
  for (unsigned c = 0; c < dram_->channels().size(); ++c) {
    auto& ch = dram_->channels()[c];
    // Its commands before now are issued first (advance is lazy). Not drained here: the
    // completions are taken at the channel's next wake-up or submit, as without this call
    // (the wake-up armed is still a lower bound on their responses), so the responses and
    // the moment each transaction is counted in the traffic statistics do not change.
    if (ch.queued()) ch.advance(now);
    const auto& k = ch.checker();
    at_seen_[c] = std::max(at_seen_[c], busy_before(k.data_busy_ps(), k.data_bus_free(), now));
    b += at_seen_[c];
  }
  return b;
}

double gpu_memory_controller::utilisation(ps_t busy_delta, ps_t from, ps_t to) const {
  if (to <= from) return 0.0;
  const double ch = dram_ ? dram_->spec().channels : 1.0;
  return static_cast<double>(busy_delta) / (static_cast<double>(to - from) * ch);
}

dram_traffic gpu_memory_controller::traffic(unsigned id) const {
  auto it = per_init_.find(id);
  return it == per_init_.end() ? dram_traffic{} : it->second;
}

dram_totals gpu_memory_controller::dram_stats() {
  dram_totals t;
  if (!dram_) return t;
  const ps_t now = now_ps();
  for (unsigned c = 0; c < dram_->channels().size(); ++c) {
    auto& ch = dram_->channels()[c];
    ch.check_refresh(now);  // advances to now; a REF overdue now counts (rule tREFI)
    drain(c);
    schedule_wake(c);
    const auto& k = ch.checker();
    t.acts += k.commands(dram::command::ACT);
    t.pres += k.commands(dram::command::PRE);
    t.reads += k.commands(dram::command::RD);
    t.writes += k.commands(dram::command::WR);
    t.refreshes += k.commands(dram::command::REF);
    t.row_hits += ch.row_hits();
    t.violations += k.total_violations();
    t.data_busy_ps += k.data_busy_ps();
  }
  t.acts += dram_->lt_acts();
  t.reads += dram_->lt_reads();
  t.writes += dram_->lt_writes();
  t.data_busy_ps += dram_->lt_busy_ps();
  return t;
}

// ---- functional access and statistics -------------------------------------------------------

bool gpu_memory_controller::functional(tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address();
  if (!mem::check_access(trans, store_, gpu_params_.size_bytes, name(), refusals_)) return false;
  if (!mem::perform(trans, store_, name())) return false;
  trans.set_dmi_allowed(store_.direct_access(addr));
  trans.set_response_status(TLM_OK_RESPONSE);
  return true;
}

unsigned gpu_memory_controller::initiator_id(tlm_generic_payload& trans) {
  dram_initiator_ext* ext = nullptr;
  trans.get_extension(ext);
  return ext ? ext->id : 0;
}

void gpu_memory_controller::account(tlm_generic_payload& trans, ps_t arrival, ps_t response) {
  account(initiator_id(trans), trans.get_command() == TLM_READ_COMMAND, trans.get_data_length(),
          arrival, response);
}

__attribute__((always_inline)) inline void gpu_memory_controller::account(unsigned id, bool rd,
                                                                         std::uint64_t len,
                                                                         ps_t arrival,
                                                                         ps_t response) {
  if (!last_init_ || last_init_id_ != id) {  // one map look-up per change of initiator
    last_init_ = &per_init_[id];
    last_init_id_ = id;
  }
  for (dram_traffic* t : {&all_, last_init_}) {
    if (t->reads + t->writes == 0 || arrival < t->first_request_ps) t->first_request_ps = arrival;
    if (rd) { ++t->reads; t->bytes_read += len; } else { ++t->writes; t->bytes_written += len; }
    t->last_response_ps = std::max(t->last_response_ps, response);
    t->latency_sum_ps += response - arrival;
  }
}

ps_t gpu_memory_controller::at_ps_general(const sc_time& delay) {
  if (ps_resolution_ < 0)
    ps_resolution_ = sc_get_time_resolution() == sc_time(1, SC_PS) ? 1 : 0;
  if (ps_resolution_) {
    // Inside service_method() the time is the activation's (read once there).
    const ps_t now = in_service_ ? service_now_ : static_cast<ps_t>(sc_time_stamp().value());
    return now + static_cast<ps_t>(delay.value());
  }
  return now_ps(delay);
}

sc_time gpu_memory_controller::delay_to(ps_t abs_ps) {
  if (ps_resolution_ < 0)
    ps_resolution_ = sc_get_time_resolution() == sc_time(1, SC_PS) ? 1 : 0;
  if (ps_resolution_)
    return sc_time::from_value(abs_ps - (in_service_ ? service_now_ : sc_time_stamp().value()));
  return to_sc(abs_ps) - sc_time_stamp();
}

// ---- LT -------------------------------------------------------------------------------------

void gpu_memory_controller::b_transport(tlm_generic_payload& trans, sc_time& delay) {
  if (!mem::check_arrival(trans, delay, name())) return;
  const ps_t ready = now_ps(delay);
  if (!functional(trans)) return;
  const std::uint64_t len = trans.get_data_length();
  if (len == 0 && dram_) {  // nothing to move: no DRAM command (breaker s21), the controller only
    const ps_t done = ready + gpu_params_.controller_latency_ps;
    account(trans, ready, done);  // counted as the bus model counts it (breaker2 s21 F5)
    delay = to_sc(done) - sc_now();
    return;
  }
  ps_t done;
  if (!dram_)
    done = bus_.reserve(ready, len) + gpu_params_.latency_ps;
  else {
    dram_->lt_forget_before(now_ps());  // every later b_transport is ready at or after now
    done = dram_->lt_access(trans.get_address(), len, trans.get_command() == TLM_WRITE_COMMAND,
                            ready) + gpu_params_.controller_latency_ps;
  }
  account(trans, ready, done);
  delay = to_sc(done) - sc_now();
}

// ---- AT -------------------------------------------------------------------------------------

tlm_sync_enum gpu_memory_controller::nb_transport_fw(tlm_generic_payload& trans,
                                                     tlm_phase& phase, sc_time& delay) {
  if (phase == BEGIN_REQ) {
    if (waiting_req_ != nullptr) {
      // A request is held with END_REQ withheld: a second BEGIN_REQ breaks the initiator's
      // side of the request exclusion rule. Refuse it (not acquired, not queued) and keep the
      // held request, which still gets its END_REQ and response.
      std::ostringstream os;
      os << "nb_transport_fw: BEGIN_REQ for a " << (trans.is_read() ? "read" : "write")
         << " at 0x" << std::hex << trans.get_address()
         << " while the request at 0x" << waiting_req_->get_address()
         << " still waits for END_REQ: the initiator broke the request exclusion rule (base "
            "protocol, IEEE 1666-2011 §15.2.6 e); wait for END_REQ or BEGIN_RESP before the next BEGIN_REQ";
      trans.set_response_status(TLM_GENERIC_ERROR_RESPONSE);
      SC_REPORT_ERROR(name(), os.str().c_str());
      return TLM_COMPLETED;
    }
    if (!mem::check_arrival(trans, delay, name())) return TLM_COMPLETED;  // error response
    if (trans.has_mm()) trans.acquire();
    const ps_t arrival = at_ps(delay);
    if (dram_ && outstanding_ >= max_out_) {
      // Queues full: END_REQ is withheld until a transaction completes (flow control).
      waiting_req_ = &trans;
      waiting_since_ = arrival;
      return TLM_ACCEPTED;
    }
    accept(trans, arrival);
    phase = END_REQ;
    return TLM_UPDATED;
  }
  if (phase == END_RESP) {
    if (resp_in_progress_ != &trans) {
      mem::stray_end_resp(trans, name());
      return TLM_COMPLETED;
    }
    resp_in_progress_ = nullptr;
    if (trans.has_mm()) trans.release();
    notify_at(at_ps(delay));  // the next response may begin
    return TLM_COMPLETED;
  }
  return mem::other_fw_phase(trans, phase, name());
}

void gpu_memory_controller::accept(tlm_generic_payload& trans, ps_t arrival) {
  ++outstanding_;
  const std::uint64_t seq = accept_seq_++;
  if (!functional(trans)) {
    push_response(&trans, std::max(arrival, at_ps()), seq, trans.has_mm());
    return;
  }
  const std::uint64_t len = trans.get_data_length();
  if (len == 0 && dram_) {  // nothing to move: no DRAM command (breaker s21), the controller only
    const ps_t done = arrival + gpu_params_.controller_latency_ps;
    account(trans, arrival, done);  // counted as the bus model counts it (breaker2 s21 F5)
    push_response(&trans, done, seq, trans.has_mm());
    return;
  }
  if (!dram_) {
    const ps_t done = bus_.reserve(arrival, len) + gpu_params_.latency_ps;
    account(trans, arrival, done);
    push_response(&trans, done, seq, trans.has_mm());
    return;
  }
  std::uint32_t id;
  if (free_txns_.empty()) {
    id = static_cast<std::uint32_t>(txns_.size());
    const txn* before = txns_.data();
    txns_.push_back({});
    if (txns_.data() != before)  // moved: the channels prefetch a completed request's txn
      for (auto& ch : dram_->channels()) ch.set_completion_prefetch(txns_.data(), kTxnShift);
  } else {
    id = free_txns_.back();
    free_txns_.pop_back();
  }
  // Cut into parts first (one pass), so completions drained while submitting cannot finish
  // the transaction early.
  const bool wr = trans.get_command() == TLM_WRITE_COMMAND;
  {
    // One request (e.g. a 64-B access of the default mapping): submitted directly.
    unsigned c;
    dram::request r;
    if (dram_->split_one(trans.get_address(), len, wr, id, arrival, c, r)) {
      txns_[id] = {&trans, arrival, 0, seq, 1u, initiator_id(trans), !wr, trans.has_mm(), len};
      dram_->channels()[c].submit(r);
      drain(c);
      schedule_wake(c);
      return;
    }
  }
  parts_.clear();
  dram_->split(trans.get_address(), len, wr, id, arrival,
               [&](unsigned c, const dram::request& r) { parts_.emplace_back(c, r); });
  txns_[id] = {&trans, arrival, 0, seq, static_cast<unsigned>(parts_.size()),
               initiator_id(trans), !wr, trans.has_mm(), len};
  unsigned last_ch = ~0u;
  for (const auto& [c, r] : parts_) {
    dram_->channels()[c].submit(r);
    drain(c);
    if (c != last_ch) {
      schedule_wake(c);
      last_ch = c;
    }
  }
}

void gpu_memory_controller::drain(unsigned c) {
  auto& done = dram_->channels()[c].completions();
  for (const auto& d : done) {
    txn& t = txns_[d.tag];
    t.done = std::max(t.done, d.done);
    if (--t.parts == 0) {
      const ps_t resp_t = t.done + gpu_params_.controller_latency_ps;
      account(t.init_id, t.read, t.len, t.arrival, resp_t);
      push_response(t.trans, resp_t, t.seq, t.mm);
      free_txns_.push_back(static_cast<std::uint32_t>(d.tag));
    }
  }
  done.clear();
}

void gpu_memory_controller::schedule_wake(unsigned c) {
  auto& ch = dram_->channels()[c];
  const ps_t bound = ch.completion_bound();
  if (bound == dram::channel::kNever) {
    set_wake(c, dram::channel::kNever);
    return;
  }
  // No completion the channel can produce before its next submit() ends before `bound`, so
  // no response is due before bound + controller latency: advancing the channel then (it
  // issues every command before that time) is early enough, and it is the latest time that
  // is, so one wake-up covers as many commands as possible.
  const ps_t w = std::max(bound + gpu_params_.controller_latency_ps, at_ps());
  if (w == wake_at_[c]) return;
  set_wake(c, w);
  notify_at(w);
}

std::size_t gpu_memory_controller::wake_sift_up(std::size_t i) {
  const wentry e = wheap_[i];
  while (i > 0) {
    const std::size_t up = (i - 1) / 2;
    if (!wake_before(e, wheap_[up])) break;
    wheap_[i] = wheap_[up];
    wpos_[wheap_[i].c] = static_cast<std::int32_t>(i);
    i = up;
  }
  wheap_[i] = e;
  wpos_[e.c] = static_cast<std::int32_t>(i);
  return i;
}

void gpu_memory_controller::set_wake(unsigned c, ps_t w) {
  const ps_t old = wake_at_[c];
  if (old == w) return;
  wake_at_[c] = w;
  std::int32_t p = wpos_[c];
  if (w == dram::channel::kNever) {  // remove c: the last entry takes its place
    const wentry last = wheap_.back();
    wheap_.pop_back();
    wpos_[c] = -1;
    if (last.c != c) {
      wheap_[static_cast<std::size_t>(p)] = last;
      wpos_[last.c] = p;
      wake_sift(static_cast<std::size_t>(p));
    }
    return;
  }
  if (p < 0) {
    p = static_cast<std::int32_t>(wheap_.size());
    wheap_.push_back({w, c});
    wpos_[c] = p;
  } else {
    wheap_[static_cast<std::size_t>(p)].t = w;
    if (w > old) {  // later: only the children can now come before it
      wake_sift_down(static_cast<std::size_t>(p));
      return;
    }
  }
  // New or earlier (the common case after a submit): only the parents can now come after
  // it. (Same result as wake_sift(): its downward pass would not move the entry.)
  wake_sift_up(static_cast<std::size_t>(p));
}

void gpu_memory_controller::wake_sift_down(std::size_t i) {
  const wentry e = wheap_[i];
  const std::size_t n = wheap_.size();
  for (;;) {
    std::size_t k = 2 * i + 1;
    if (k >= n) break;
    if (k + 1 < n && wake_before(wheap_[k + 1], wheap_[k])) ++k;
    if (!wake_before(wheap_[k], e)) break;
    wheap_[i] = wheap_[k];
    wpos_[wheap_[i].c] = static_cast<std::int32_t>(i);
    i = k;
  }
  wheap_[i] = e;
  wpos_[e.c] = static_cast<std::int32_t>(i);
}

void gpu_memory_controller::wake_sift(std::size_t i) {
  // Up while before the parent; if it did not move, down while a child is before it.
  if (wake_sift_up(i) == i) wake_sift_down(i);
}

__attribute__((always_inline)) inline void gpu_memory_controller::push_response(
    tlm_generic_payload* t, ps_t when, std::uint64_t seq, bool mm) {
  const ps_t now = at_ps();
  if (when < now) when = now;
  resp_q_.push(when, seq, resp{t, mm});
  notify_at(when);
}

void gpu_memory_controller::service_method() {
  ev_at_ = ~ps_t{0};  // the notification that woke this process is consumed
  const ps_t now = at_ps();
  service_now_ = now;
  in_service_ = true;
  // 1. Channels whose wake-up is due: issue their commands up to now; their completions
  //    become responses (none due before now, see schedule_wake()).
  //    The channel keeps its heap entry meanwhile (advance() and drain() do not touch the
  //    heap); schedule_wake() then moves it to its new, later wake-up (after advance(now)
  //    the bound is after now) in one downward pass, or removes it: the same heap contents
  //    as removing it first and inserting it again, and (a total order) the same order.
  while (!wheap_.empty() && wheap_.front().t <= now) {
    const std::uint32_t c = wheap_.front().c;
    dram_->channels()[c].advance(now);
    drain(c);
    schedule_wake(c);
  }
  // 2. Responses due, in order of time, then acceptance; one BEGIN_RESP at a time (base
  //    protocol: the next waits for END_RESP unless the initiator completes at once). First
  //    those already waiting for END_RESP (resp_ready_), then the due ones of resp_q_, taken
  //    from it directly. A response queued during this loop (a request accepted from within
  //    nb_transport_bw, seq >= seq_limit) waits for the next activation, as it would if every
  //    due response were moved to resp_ready_ first: it sorts after every response due now.
  const std::uint64_t seq_limit = accept_seq_;
  auto due = [&] {
    if (resp_q_.empty()) return false;
    const auto& e = resp_q_.top();
    return e.time <= now && e.seq < seq_limit;
  };
  while (resp_in_progress_ == nullptr) {
    tlm_generic_payload* t;
    bool mm;
    if (!resp_ready_.empty()) {
      std::tie(t, mm) = resp_ready_.front();
      resp_ready_.pop_front();
    } else if (due()) {
      const auto& e = resp_q_.top();
      t = e.value.trans;
      mm = e.value.mm;
      resp_q_.pop();
    } else {
      break;
    }
    --outstanding_;
    resp_in_progress_ = t;
    tlm_phase phase = BEGIN_RESP;
    sc_time delay = SC_ZERO_TIME;
    const tlm_sync_enum st = tgt->nb_transport_bw(*t, phase, delay);
    if (st == TLM_COMPLETED || (st == TLM_UPDATED && phase == END_RESP)) {
      resp_in_progress_ = nullptr;
      if (mm) t->release();
    } else if (st != TLM_ACCEPTED) {
      mem::check_begin_resp_answer(*t, st, phase, name());  // an illegal answer: reported
    }
    // A held-back request is accepted now that a slot is free.
    if (waiting_req_ && outstanding_ < max_out_) {
      tlm_generic_payload* w = waiting_req_;
      waiting_req_ = nullptr;
      accept(*w, std::max(waiting_since_, now));
      tlm_phase ph = END_REQ;
      sc_time d = SC_ZERO_TIME;
      tgt->nb_transport_bw(*w, ph, d);
    }
  }
  // The due responses left wait for END_RESP of the one in progress.
  while (due()) {
    const auto& e = resp_q_.top();
    resp_ready_.emplace_back(e.value.trans, e.value.mm);
    resp_q_.pop();
  }
  // 3. Re-arm for the next wake-up or response (stale wake entries dropped first).
  if (!wheap_.empty()) notify_at(wheap_.front().t);
  if (!resp_q_.empty()) notify_at(resp_q_.top().time);
  if (ev_at_ != ~ps_t{0}) ev_.notify(delay_to(ev_at_));
  in_service_ = false;
}

// ---- DMI and debug --------------------------------------------------------------------------

bool gpu_memory_controller::get_direct_mem_ptr(tlm_generic_payload& trans, tlm_dmi& dmi) {
  // Latency of one access in the granted page: an upper bound, the time to stream the page.
  const std::uint64_t page = store_.page_bytes();
  ps_t lat;
  if (!dram_) {
    lat = gpu_params_.latency_ps + transfer_ps(page, mem_params_.bandwidth_Bps);
  } else {
    const auto& s = dram_->spec();
    lat = gpu_params_.controller_latency_ps + dram::access_latency_ps(s, false, true, true) +
          transfer_ps(page, s.peak_bandwidth_Bps() * dram::refresh_availability(s));
  }
  return mem::grant_dmi(trans, dmi, store_, gpu_params_.size_bytes, to_sc(lat));
}

unsigned int gpu_memory_controller::transport_dbg(tlm_generic_payload& trans) {
  return mem::debug_access(trans, store_, gpu_params_.size_bytes, name());
}

}  // namespace cdma
