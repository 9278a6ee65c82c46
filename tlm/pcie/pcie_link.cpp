#include "tlm/pcie/pcie_link.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <sstream>

#include "tlm/core/sc_time_util.h"
#include "tlm/memory/access_check.h"

namespace cdma {

using namespace sc_core;
using namespace tlm;
using namespace cdma::pcie;

namespace {
link_params validated(const link_params& p) {
  p.validate();
  return p;
}
constexpr int D2H = 0, H2D = 1;
constexpr int FC_P = 0, FC_NP = 1, FC_CPL = 2;
}  // namespace

// ---- AT bookkeeping ---------------------------------------------------------------------

struct pcie_link::txn {
  tlm_generic_payload* gp = nullptr;
  std::uint64_t pending = 0;  // MWr not yet in host memory + reads not fully completed
  ps_t done = 0;
};

struct pcie_link::request {
  txn* t = nullptr;
  std::uint64_t id = 0;
  std::uint64_t addr = 0, off = 0;  // bus address, offset in the payload
  std::uint32_t len = 0;
  std::uint32_t tag = 0;
  std::uint64_t cpl_left = 0;
  bool failed = false;
};

struct pcie_link::tlp {
  enum class kind { mwr, mrd, cpld } k = kind::mwr;
  txn* t = nullptr;
  request* req = nullptr;
  std::uint64_t addr = 0, off = 0;
  std::uint32_t len = 0;  // payload (MWr, CplD) or requested bytes (MRd)
  std::uint32_t wire = 0;
  int type = FC_P;
  std::uint64_t hdr_cr = 0, data_cr = 0;
  std::uint64_t seq = 0;
  bool last = false;  // last CplD of its request
};

struct pcie_link::action {
  enum class kind { tlp_arrive, dllp_arrive, fc_release, cpl_ready } k;
  int dir = 0;
  tlp* x = nullptr;
  dllp d;
  request* req = nullptr;
};

struct pcie_link::timed_action {
  ps_t at;
  std::uint64_t seq;
  action a;
  /// Heap order (std::push_heap keeps the largest on top): later time, then later sequence,
  /// is "less urgent".
  bool operator<(const timed_action& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

pcie_link::pcie_link(sc_module_name name, const link_params& params)
    : sc_module(name),
      tgt("tgt"),
      init("init"),
      params_(validated(params)),
      lt_posted_(params_, params_.ph_credits, params_.pd_credits),
      lt_nonposted_(params_, params_.nph_credits, 0),
      lt_completion_(params_, params_.cplh_credits, params_.cpld_credits),
      lt_tags_(params_.tags),
      peq_(this, &pcie_link::peq_cb) {
  rate_ = tlp_rate_Bps(params_);
  ovh_ = tlp_overhead_bytes(params_);
  cpl_ovh_ = cpl_overhead_bytes(params_);
  dllp_bytes_ = dllp_wire_bytes(params_);
  cpl_payload_ = completion_payload(params_);
  ser_mps_ = transfer_ps(params_.mps + ovh_, rate_);
  ser_mrd_ = transfer_ps(ovh_, rate_);
  for (auto& d : dir_) d.server.set_rate(rate_);
  // Credits the root port advertises to the endpoint's transmitter (d2h) and the endpoint
  // advertises to the root port's transmitter (h2d). 0 = infinite.
  auto set = [](dir_state& d, int type, std::uint32_t h, std::uint32_t data) {
    d.hdr_inf[type] = h == 0;
    d.hdr_avail[type] = h;
    d.data_inf[type] = data == 0;
    d.data_avail[type] = data;
  };
  set(dir_[D2H], FC_P, params_.ph_credits, params_.pd_credits);
  set(dir_[D2H], FC_NP, params_.nph_credits, 0);
  set(dir_[H2D], FC_CPL, params_.cplh_credits, params_.cpld_credits);
  free_tags_.reserve(params_.tags);
  for (std::uint32_t t = params_.tags; t > 0; --t) free_tags_.push_back(t - 1);

  tgt.register_b_transport(this, &pcie_link::b_transport);
  tgt.register_nb_transport_fw(this, &pcie_link::nb_transport_fw);
  tgt.register_get_direct_mem_ptr(this, &pcie_link::get_direct_mem_ptr);
  tgt.register_transport_dbg(this, &pcie_link::transport_dbg);
  init.register_nb_transport_bw(this, &pcie_link::nb_transport_bw);
  init.register_invalidate_direct_mem_ptr(this, &pcie_link::invalidate_direct_mem_ptr);
  SC_HAS_PROCESS(pcie_link);
  SC_THREAD(tx_thread_d2h);
  SC_THREAD(tx_thread_h2d);
  SC_THREAD(action_thread);
}

pcie_link::~pcie_link() {
  for (auto& d : dir_)
    for (auto& q : d.q)
      for (tlp* x : q) delete x;
  for (tlp* x : tlp_free_) delete x;
}

pcie_link::tlp* pcie_link::new_tlp() {
  if (tlp_free_.empty()) return new tlp;
  tlp* x = tlp_free_.back();
  tlp_free_.pop_back();
  *x = tlp{};
  return x;
}

link_stats pcie_link::stats(direction dir) const {
  const dir_state& d = dir_[static_cast<int>(dir)];
  link_stats s = d.st;
  s.busy_ps = d.server.busy_ps();
  return s;
}

bool pcie_link::link_carries(const tlm_generic_payload& trans) {
  return (trans.is_read() || trans.is_write()) && trans.get_byte_enable_ptr() == nullptr &&
         trans.get_streaming_width() >= trans.get_data_length();
}

bool pcie_link::check_whole(tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address(), len = trans.get_data_length();
  const bool wraps = !mem::fits_address_space(addr, len);
  const bool outside = host_size_ != 0 && (addr >= host_size_ || len > host_size_ - addr);
  if (!wraps && !outside) return true;
  std::ostringstream os;
  os << (trans.is_read() ? "read" : "write") << " of " << len << " bytes at 0x" << std::hex << addr;
  if (wraps)
    os << " wraps past 2^64 (expected address + length <= 2^64)";
  else
    os << " is outside host memory (size 0x" << host_size_ << std::dec << " = " << host_size_
       << " bytes; expected address + length <= size)";
  os << ": refused whole, no TLP sent";
  SC_REPORT_WARNING(name(), os.str().c_str());
  trans.set_response_status(TLM_ADDRESS_ERROR_RESPONSE);
  return false;
}

ps_t pcie_link::host_access(tlm_generic_payload& trans, std::uint64_t off, std::uint64_t n,
                            ps_t ready_ps, bool* ok) {
  // The reused payload, unless it is in use: a host-memory target may wait() inside
  // b_transport (legal in LT), letting another process of this link reach here meanwhile.
  // (The local payload is constructed only then: a payload's constructor and destructor cost
  // ~220 instructions, a tenth of a 4 KiB window's LT host access.)
  std::optional<tlm_generic_payload> local;
  tlm_generic_payload& sub = sub_busy_ ? local.emplace() : sub_;
  const bool owns = !sub_busy_;
  sub_busy_ = true;
  sub.set_command(trans.get_command());
  sub.set_address(trans.get_address() + off);
  sub.set_data_ptr(trans.get_data_ptr() + off);
  sub.set_data_length(static_cast<unsigned>(n));
  sub.set_streaming_width(static_cast<unsigned>(n));
  sub.set_byte_enable_ptr(nullptr);
  sub.set_byte_enable_length(0);
  sub.set_dmi_allowed(false);
  sub.set_response_status(TLM_INCOMPLETE_RESPONSE);
  const ps_t now = now_ps();
  sc_time delay = to_sc(std::max(ready_ps, now) - now);
  init->b_transport(sub, delay);
  if (!host_waited_ && now_ps() != now)  // the target called wait(): warned once
    warn_host_waited(sub, now_ps() - now, std::max(ready_ps, now) - now);
  if (owns) sub_busy_ = false;
  if (ok != nullptr) *ok = sub.is_response_ok();
  if (!sub.is_response_ok() && trans.is_response_ok())
    trans.set_response_status(sub.get_response_status());
  return now_ps(delay);
}

void pcie_link::warn_host_waited(const tlm_generic_payload& sub, ps_t waited, ps_t passed) {
  host_waited_ = true;
  std::ostringstream os;
  os << "host memory called wait() inside b_transport (simulated time advanced by "
     << to_sc(waited) << " during a " << (sub.is_read() ? "read" : "write") << " of "
     << sub.get_data_length() << " bytes at 0x" << std::hex << sub.get_address() << std::dec
     << "; the delay passed in was " << to_sc(passed) << "): the root complex reaches host memory through b_transport, and such a call holds "
        "the calling process for the whole access. AT: from now on each host access runs in a "
        "worker thread of its own, so they overlap (only this first one held the link). LT: "
        "every transfer waits for its host accesses in turn, so LT times include those waits; "
        "for LT give the link a host memory that answers b_transport with an annotated delay "
        "(added to the delay argument, no wait()). (An AT-only target behind "
        "simple_target_socket waits in its b_transport-to-nb_transport conversion.) Warned "
        "once per link.";
  SC_REPORT_WARNING(name(), os.str().c_str());
}

// ---- LT -------------------------------------------------------------------------------------

ps_t pcie_link::lt_send(int d, const tlp_split& s, ps_t ready) {
  link_stats& st = dir_[d].st;
  st.payload_bytes += s.payload_bytes;
  st.wire_bytes += s.wire_bytes;
  st.tlps += s.tlps;
  return dir_[d].server.reserve(ready, s.wire_bytes);
}

std::uint64_t pcie_link::lt_dllps_due(int d, int type, std::uint64_t tlps, bool finite) {
  std::uint64_t n = dllps_due(lt_ack_count_[d], tlps, params_.ack_every);
  if (finite) n += dllps_due(lt_fc_count_[d][type], tlps, params_.updatefc_every);
  return n;
}

void pcie_link::lt_dllps(int d, std::uint64_t n, ps_t ready, bool occupy) {
  if (n == 0) return;
  const std::uint64_t bytes = n * dllp_bytes_;
  dir_[d].st.dllps += n;
  dir_[d].st.dllp_bytes += bytes;
  if (!occupy) return;
  // LT: charge the DLLPs' serialization time without idling the direction until `ready`
  // (which can lie a round trip ahead): reserving a future slot in the FIFO server would
  // hold back every TLP issued before it and serialize pipelined reads by their round trip.
  dir_[d].server.reserve(std::min(ready, dir_[d].server.busy_until()), bytes);
}

ps_t pcie_link::lt_write(tlm_generic_payload& trans, ps_t t0) {
  const link_params& p = params_;
  const std::uint64_t addr = trans.get_address(), len = trans.get_data_length();
  const std::uint32_t ovh = ovh_;
  // mwr_split(addr, len, p), from the runs of equal MWr (for_each_mwr_run: at most two per
  // 4 KiB page) in the same pass as the MWr themselves.
  tlp_split s;
  std::uint64_t last = 0;
  ps_t first_end = 0, link_end = 0;
  if (lt_posted_.infinite()) {  // no credit can run out: the MWr go back to back as one block
    std::uint64_t first = 0;
    for_each_mwr_run(addr, len, p, [&](std::uint64_t, std::uint64_t n, std::uint64_t k) {
      if (first == 0) first = n;
      last = n;
      s.tlps += k;
    });
    s.payload_bytes = len;
    s.wire_bytes = len + s.tlps * ovh;
    link_end = lt_send(D2H, s, t0);
    first_end = link_end - transfer_ps(s.wire_bytes, rate_) + transfer_ps(first + ovh, rate_);
  } else {
    // Posted credits over the whole stream of MWr, across transactions (credit_stream: the
    // rule AT's UpdateFC loop follows): each MWr starts once the link is free and the
    // credits it needs are back; credit_stream::send walks a run of equal MWr.
    bandwidth_server& srv = dir_[D2H].server;
    for_each_mwr_run(addr, len, p, [&](std::uint64_t, std::uint64_t n, std::uint64_t k) {
      const ps_t ser = n == p.mps ? ser_mps_ : transfer_ps(n + ovh, rate_);
      const credit_stream::ends e = lt_posted_.send(srv, t0, k, n + ovh, ser, 1, data_credits(n));
      if (first_end == 0) first_end = e.first;
      link_end = e.last;
      last = n;
      s.tlps += k;
    });
    s.payload_bytes = len;
    s.wire_bytes = len + s.tlps * ovh;
    dir_state& up = dir_[D2H];
    up.st.payload_bytes += s.payload_bytes;
    up.st.wire_bytes += s.wire_bytes;
    up.st.tlps += s.tlps;
  }
  const ps_t first_arrive = first_end + p.latency_ps;
  const ps_t last_arrive = link_end + p.latency_ps;
  // Acks and UpdateFC (posted credits) travel back on h2d.
  lt_dllps(H2D, lt_dllps_due(D2H, FC_P, s.tlps, p.ph_credits != 0 || p.pd_credits != 0), first_arrive);
  trans.set_response_status(TLM_OK_RESPONSE);
  ps_t done = 0;
  if (s.tlps > 1) done = host_access(trans, 0, len - last, first_arrive + p.rc_latency_ps);
  done = std::max(done, host_access(trans, len - last, last, last_arrive + p.rc_latency_ps));
  return done;
}

ps_t pcie_link::lt_read(tlm_generic_payload& trans, ps_t t0) {
  const link_params& p = params_;
  const std::uint64_t addr = trans.get_address(), len = trans.get_data_length();
  const std::uint32_t ovh = ovh_;
  // One pass over the MRd requests: mrd_split (r), cpld_split of the transaction (c), of its
  // first request (c1) and of its last (cl), and the first request's length (q1).
  // Runs of equal requests (for_each_mrd_run): a run's requests start MRRS apart, and MRRS
  // is a multiple of the RCB, so they all have the first one's completion count.
  std::uint64_t q1 = 0;
  tlp_split r, c, c1, cl;
  for_each_mrd_run(addr, len, p, [&](std::uint64_t a, std::uint64_t n, std::uint64_t k) {
    const std::uint64_t cnt = cpld_count(a, n, p.rcb, cpl_payload_);
    const tlp_split one{cnt, n, n + cnt * cpl_ovh_};
    if (q1 == 0) {
      q1 = n;
      c1 = one;
    }
    cl = one;
    r.tlps += k;
    c.tlps += k * cnt;
    c.payload_bytes += k * n;
    c.wire_bytes += k * one.wire_bytes;
  });
  r.wire_bytes = r.tlps * ovh;
  // Read tags over the whole stream (tag_scoreboard): if a request of this read finds no tag
  // free at t0, or completions take finite credits, the read is timed request by request.
  // Otherwise every request takes a tag free at t0 and none waits (releases set below).
  if (!lt_completion_.infinite() || !lt_tags_.take_if_free(t0, r.tlps))
    return lt_read_paced(trans, t0);
  ps_t start = 0, last_mrd = 0;  // first and last MRd start
  const ps_t ser = ser_mrd_;  // one MRd on the wire (= ser_ps(p, ovh))
  if (lt_nonposted_.infinite()) {
    start = lt_send(D2H, r, t0) - transfer_ps(r.wire_bytes, rate_);
    last_mrd = start + transfer_ps(r.wire_bytes - ovh, rate_);
  } else {  // non-posted credits over the whole stream of MRd (credit_stream, as for MWr)
    dir_[D2H].st.wire_bytes += r.wire_bytes;
    dir_[D2H].st.tlps += r.tlps;
    const credit_stream::ends e = lt_nonposted_.send(dir_[D2H].server, t0, r.tlps, ovh, ser, 1, 0);
    start = e.first - ser;
    last_mrd = e.last - ser;
  }
  const ps_t first_arrive = start + ser + p.latency_ps + p.rc_latency_ps;

  trans.set_response_status(TLM_OK_RESPONSE);
  const ps_t h1 = host_access(trans, 0, q1, first_arrive);
  const ps_t h2 = len > q1 ? host_access(trans, q1, len - q1, first_arrive + ser) : h1;
  const ps_t c_start = h1 + p.rc_latency_ps;
  if (!trans.is_response_ok()) {  // one completion without data (UR / CA status)
    tlp_split cpl;
    cpl.tlps = 1;
    cpl.wire_bytes = cpl_ovh_;
    const ps_t e = lt_send(H2D, cpl, std::max(h1, h2) + p.rc_latency_ps);
    lt_tags_.release_run(e + p.latency_ps, e + p.latency_ps, r.tlps);
    return e + p.latency_ps;
  }
  // Acks for the MRds and UpdateFC (non-posted) on h2d, booked before the completions they
  // share h2d with: they go out as the MRds arrive, while the root complex reads host memory
  // (booked after the completions, a single large read ran at the CplD-only rate; validation
  // s25: measured-host 16 MiB h2d 11.96 GB/s against 11.80 with its DLLPs).
  lt_dllps(H2D, lt_dllps_due(D2H, FC_NP, r.tlps, p.nph_credits != 0), first_arrive);
  const ps_t cpl_link_end = lt_send(H2D, c, c_start);
  // The MRd stream's own issue times hold the link and the non-posted credits of the whole
  // stream (credit_stream::send); every request had a tag at t0. The last request completes
  // after the completions of the whole read, one round trip after its issue (the first
  // request's, issue to first completion + its own completions) and after its data.
  const ps_t cl_ser = transfer_ps(cl.wire_bytes, rate_);
  const ps_t end = std::max({cpl_link_end, last_mrd + (c_start - start) + cl_ser,
                             h2 + p.rc_latency_ps + cl_ser});
  // Each request's tag is released when its last completion arrives: the first request's
  // when its completions, first in the completion block (which starts at or after c_start),
  // are through; the last's at end; the others' spread evenly in between
  // (tag_scoreboard::release_run: the bounds of `end` are linear in the request number for
  // equal requests).
  const ps_t rel1 = r.tlps == 1 ? end
                                : cpl_link_end - transfer_ps(c.wire_bytes, rate_) +
                                      transfer_ps(c1.wire_bytes, rate_);
  lt_tags_.release_run(rel1 + p.latency_ps, end + p.latency_ps, r.tlps);
  // Acks for the CplDs on d2h.
  lt_dllps(D2H, lt_dllps_due(H2D, FC_CPL, c.tlps, p.cplh_credits != 0 || p.cpld_credits != 0),
           c_start + p.latency_ps);
  return end + p.latency_ps;
}

ps_t pcie_link::lt_read_paced(tlm_generic_payload& trans, ps_t t0) {
  // Request by request, as AT times them but with no event: each MRd takes the tag released
  // earliest (tag_scoreboard) and the non-posted credits (credit_stream), the root complex
  // reads host memory for it when it arrives, its completions go out on h2d when its data is
  // there (through the completion credits, credit_stream), and its tag is released when the
  // last of them arrives. An MRd waiting for a tag beyond the direction's horizon (t0 or the
  // end of its latest reservation) books its wire bytes at the horizon, as lt_dllps does: a
  // reservation far ahead would hold back every TLP issued before it on the FIFO server.
  const link_params& p = params_;
  const std::uint64_t base = trans.get_address(), len = trans.get_data_length();
  bandwidth_server& up = dir_[D2H].server;
  bandwidth_server& down = dir_[H2D].server;
  link_stats& up_st = dir_[D2H].st;
  link_stats& down_st = dir_[H2D].st;
  const ps_t ser = ser_mrd_;
  const bool np_inf = lt_nonposted_.infinite(), cpl_inf = lt_completion_.infinite();
  // A run of `k` completions of `bytes` payload each, ready at `ready`: returns the end of the
  // last one on h2d.
  auto send_cpl = [&](std::uint64_t bytes, std::uint64_t k, ps_t ready) {
    const std::uint64_t wire = bytes + cpl_ovh_;
    down_st.tlps += k;
    down_st.payload_bytes += k * bytes;
    down_st.wire_bytes += k * wire;
    if (cpl_inf) return down.reserve(ready, k * wire);
    return lt_completion_.send(down, ready, k, wire, transfer_ps(wire, rate_), 1, data_credits(bytes))
        .last;
  };
  trans.set_response_status(TLM_OK_RESPONSE);
  ps_t end = 0, first_ready = 0, idle_from = 0;
  std::uint64_t all_cplds = 0;
  bool first = true;
  for_each_mrd(base, len, p, [&](std::uint64_t a, std::uint64_t n) {
    const ps_t at = std::max(t0, lt_tags_.take());
    const ps_t busy = up.busy_until(), horizon = std::max(t0, busy);
    const ps_t t = np_inf ? at : lt_nonposted_.ready(std::max(at, busy), 1, 0);
    const ps_t e = up.reserve(at <= horizon ? t : horizon, ovh_, ser);
    const ps_t s = std::max(t, e - ser);  // the MRd's first byte
    if (!np_inf) lt_nonposted_.take(s + ser, 1, 0);
    ++up_st.tlps;
    up_st.wire_bytes += ovh_;
    const ps_t arrive = s + ser + p.latency_ps + p.rc_latency_ps;
    bool ok = true;
    const ps_t ready = host_access(trans, a - base, n, arrive, &ok) + p.rc_latency_ps;
    if (first) {
      idle_from = down.busy_until();  // h2d is idle from here until this read's completions
      first_ready = ready;
    }
    // This MRd's Ack share and UpdateFC (non-posted) on h2d, before its completions. While
    // h2d is idle, before the read's first completion is ready, they take the idle time (as
    // in AT; the FIFO server would put them behind the completions already booked): counted,
    // no link time. Otherwise they share h2d with the completions, request by request
    // (booked after the whole read, they left a single large read at the CplD-only rate;
    // validation s25, breaker s25).
    lt_dllps(H2D, lt_dllps_due(D2H, FC_NP, 1, p.nph_credits != 0), arrive,
             !(arrive >= idle_from && arrive < first_ready));
    ps_t last = 0;
    std::uint64_t cplds = 0;
    if (!ok) {
      last = send_cpl(0, 1, ready);  // one completion without data (UR / CA status)
      cplds = 1;
    } else {  // for_each_cpld's completions, as runs of equal size
      for_each_cpld_run(a, n, p, [&](std::uint64_t, std::uint64_t bytes, std::uint64_t k) {
        last = send_cpl(bytes, k, ready);
        cplds += k;
      });
    }
    all_cplds += cplds;
    const ps_t rel = last + p.latency_ps;  // the last completion arrives: the tag is free
    lt_tags_.release(rel);
    end = std::max(end, rel);
    first = false;
  });
  // The completions' Acks and UpdateFC on d2h, as one block (per request they would sit
  // between the MRds and slow a credit-bound MRd stream: a 16 MiB read with MRRS 128, 8
  // non-posted credits, +0.67 % against AT; as a block they hold up a transfer that follows
  // a large paced read: docs/pcie.md, breaker s25 B).
  lt_dllps(D2H, lt_dllps_due(H2D, FC_CPL, all_cplds, p.cplh_credits != 0 || p.cpld_credits != 0),
           first_ready + p.latency_ps);
  return end;
}

void pcie_link::b_transport(tlm_generic_payload& trans, sc_time& delay) {
  if (!link_carries(trans)) {
    init->b_transport(trans, delay);
    return;
  }
  if (trans.get_data_length() == 0) {  // nothing to move: no TLP
    trans.set_response_status(TLM_OK_RESPONSE);
    return;
  }
  if (!mem::check_data_ptr(trans, name()) || !check_whole(trans) || !mem::check_arrival(trans, delay, name()))
    return;  // no TLP, no time
  const ps_t t0 = now_ps(delay);
  const ps_t done = trans.is_write() ? lt_write(trans, t0) : lt_read(trans, t0);
  delay = to_sc(done) - sc_now();
}

// ---- AT: target protocol (Accellera at_target_4_phase shape) ------------------------------

tlm_sync_enum pcie_link::nb_transport_fw(tlm_generic_payload& trans, tlm_phase& phase,
                                         sc_time& delay) {
  if (phase == BEGIN_REQ) {
    if (!mem::check_arrival(trans, delay, name())) return TLM_COMPLETED;  // error response
    if (trans.has_mm()) trans.acquire();
    peq_.notify(trans, phase, delay);
    return TLM_ACCEPTED;
  }
  if (phase == END_RESP) {
    peq_.notify(trans, phase, delay);
    return TLM_COMPLETED;
  }
  return mem::other_fw_phase(trans, phase, name());
}

void pcie_link::peq_cb(tlm_generic_payload& trans, const tlm_phase& phase) {
  if (phase == BEGIN_REQ) {
    tlm_phase ph = END_REQ;
    sc_time d = SC_ZERO_TIME;
    tgt->nb_transport_bw(trans, ph, d);  // accept the request now (exclusion rule)
    start_txn(trans);
  } else if (phase == BEGIN_RESP) {
    if (resp_in_progress_ != nullptr)
      resp_queue_.push_back(&trans);  // response exclusion rule
    else
      send_response(trans);
  } else if (phase == END_RESP) {
    if (resp_in_progress_ != &trans) {
      mem::stray_end_resp(trans, name());
      return;
    }
    resp_in_progress_ = nullptr;
    if (trans.has_mm()) trans.release();
    if (!resp_queue_.empty()) {
      tlm_generic_payload* next = resp_queue_.front();
      resp_queue_.pop_front();
      send_response(*next);
    }
  }
}

void pcie_link::send_response(tlm_generic_payload& trans) {
  resp_in_progress_ = &trans;
  tlm_phase phase = BEGIN_RESP;
  sc_time delay = SC_ZERO_TIME;
  const tlm_sync_enum status = tgt->nb_transport_bw(trans, phase, delay);
  if (status == TLM_COMPLETED || (status == TLM_UPDATED && phase == END_RESP))
    peq_.notify(trans, END_RESP, delay);
  else if (status != TLM_ACCEPTED)
    mem::check_begin_resp_answer(trans, status, phase, name());  // an illegal answer: reported
}

// ---- AT: endpoint splits the transaction ----------------------------------------------------

void pcie_link::start_txn(tlm_generic_payload& trans) {
  const link_params& p = params_;
  if (!link_carries(trans) || trans.get_data_length() == 0) {
    sc_time delay = SC_ZERO_TIME;
    if (!link_carries(trans))
      init->b_transport(trans, delay);
    else
      trans.set_response_status(TLM_OK_RESPONSE);  // zero length: no TLP
    peq_.notify(trans, BEGIN_RESP, delay);
    return;
  }
  if (!mem::check_data_ptr(trans, name()) || !check_whole(trans)) {
    peq_.notify(trans, BEGIN_RESP, SC_ZERO_TIME);  // refused whole: no TLP
    return;
  }
  trans.set_response_status(TLM_OK_RESPONSE);
  txn* t = new txn;
  t->gp = &trans;
  const std::uint64_t base = trans.get_address();
  dir_state& up = dir_[D2H];
  if (trans.is_write()) {
    const std::uint32_t ovh = tlp_overhead_bytes(p);
    for_each_mwr(base, trans.get_data_length(), p, [&](std::uint64_t a, std::uint64_t n) {
      tlp* x = new_tlp();
      x->k = tlp::kind::mwr;
      x->t = t;
      x->addr = a;
      x->off = a - base;
      x->len = static_cast<std::uint32_t>(n);
      x->wire = static_cast<std::uint32_t>(n + ovh);
      x->type = FC_P;
      x->hdr_cr = 1;
      x->data_cr = data_credits(n);
      x->seq = seq_++;
      up.q[FC_P].push_back(x);
      ++t->pending;
    });
  } else {
    const std::uint32_t ovh = tlp_overhead_bytes(p);
    for_each_mrd(base, trans.get_data_length(), p, [&](std::uint64_t a, std::uint64_t n) {
      request* r = new request;
      r->t = t;
      r->id = next_request_++;
      r->addr = a;
      r->off = a - base;
      r->len = static_cast<std::uint32_t>(n);
      tlp* x = new_tlp();
      x->k = tlp::kind::mrd;
      x->t = t;
      x->req = r;
      x->addr = a;
      x->off = r->off;
      x->len = r->len;
      x->wire = ovh;
      x->type = FC_NP;
      x->hdr_cr = 1;
      x->seq = seq_++;
      up.q[FC_NP].push_back(x);
      ++t->pending;
    });
  }
  up.wake.notify(SC_ZERO_TIME);
}

void pcie_link::finish_txn(txn* t) {
  const ps_t now = now_ps();
  peq_.notify(*t->gp, BEGIN_RESP, to_sc(std::max(t->done, now) - now));
  delete t;
}

// ---- AT: transmitters ---------------------------------------------------------------------

pcie_link::tlp* pcie_link::pick(int d) {
  dir_state& s = dir_[d];
  tlp* best = nullptr;
  for (int type = 0; type < 3; ++type) {
    if (s.q[type].empty()) continue;
    tlp* x = s.q[type].front();
    // PCIe ordering (Base Spec, Transaction Ordering rules): a non-posted request or a
    // completion does not pass a posted write queued before it (posted writes may pass
    // them); without relaxed ordering. A read sent past a write held by posted credits read
    // stale data (breaker2 s21 F2).
    if (type != FC_P && !s.q[FC_P].empty() && s.q[FC_P].front()->seq < x->seq) continue;
    if (!s.hdr_inf[type] && s.hdr_avail[type] < x->hdr_cr) continue;
    if (!s.data_inf[type] && s.data_avail[type] < x->data_cr) continue;
    if (x->k == tlp::kind::mrd && free_tags_.empty()) continue;
    if (best == nullptr || x->seq < best->seq) best = x;
  }
  if (best != nullptr) s.q[best->type].pop_front();
  return best;
}

void pcie_link::schedule(const action& a, ps_t at) {
  const ps_t now = now_ps();
  const ps_t when = std::max(at, now);
  act_heap_.push_back({when, act_seq_++, a});
  std::push_heap(act_heap_.begin(), act_heap_.end());
  act_ev_.notify(to_sc(when - now));  // (an earlier pending notification is kept)
}

void pcie_link::tx_thread(int d) {
  dir_state& s = dir_[d];
  for (;;) {
    ps_t end = 0;
    if (!s.dllps.empty()) {  // DLLPs go before TLPs
      const dllp x = s.dllps.front();
      s.dllps.pop_front();
      const std::uint64_t bytes = dllp_wire_bytes(params_);
      end = s.server.reserve(now_ps(), bytes);
      ++s.st.dllps;
      s.st.dllp_bytes += bytes;
      schedule(action{action::kind::dllp_arrive, d, nullptr, x, nullptr}, end + params_.latency_ps);
    } else if (tlp* x = pick(d)) {
      if (!s.hdr_inf[x->type]) s.hdr_avail[x->type] -= x->hdr_cr;
      if (!s.data_inf[x->type]) s.data_avail[x->type] -= x->data_cr;
      if (x->k == tlp::kind::mrd) {
        x->req->tag = free_tags_.back();
        free_tags_.pop_back();
      }
      end = s.server.reserve(now_ps(), x->wire);
      ++s.st.tlps;
      s.st.wire_bytes += x->wire;
      if (x->k != tlp::kind::mrd) s.st.payload_bytes += x->len;
      schedule(action{action::kind::tlp_arrive, d, x, dllp{}, nullptr}, end + params_.latency_ps);
    } else {
      wait(s.wake);
      continue;
    }
    const ps_t now = now_ps();
    wait(to_sc(end > now ? end - now : 0));
  }
}

// ---- AT: receivers, root complex, endpoint -------------------------------------------------

void pcie_link::action_thread() {
  for (;;) {
    wait(act_ev_);
    for (;;) {
      if (act_heap_.empty()) break;
      const ps_t now = now_ps();
      if (act_heap_.front().at > now) {  // the next one is later: wake then
        act_ev_.notify(to_sc(act_heap_.front().at - now));
        break;
      }
      std::pop_heap(act_heap_.begin(), act_heap_.end());
      const action act = act_heap_.back().a;  // (a copy: handling it may schedule others)
      act_heap_.pop_back();
      const action* a = &act;
      switch (a->k) {
        case action::kind::tlp_arrive: on_tlp_arrive(a->dir, a->x); break;
        case action::kind::dllp_arrive: on_dllp_arrive(a->dir, a->d); break;
        case action::kind::fc_release:
          release_credits(a->dir, a->d.type, a->d.hdr, a->d.data);
          break;
        case action::kind::cpl_ready: {
          request* r = a->req;
          const std::uint32_t ovh = cpl_overhead_bytes(params_);
          auto push = [&](std::uint64_t addr, std::uint32_t n, bool last) {
            tlp* x = new_tlp();
            x->k = tlp::kind::cpld;
            x->t = r->t;
            x->req = r;
            x->addr = addr;
            x->len = n;
            x->wire = n + ovh;
            x->type = FC_CPL;
            x->hdr_cr = 1;
            x->data_cr = data_credits(n);
            x->seq = seq_++;
            x->last = last;
            dir_[H2D].q[FC_CPL].push_back(x);
            ++r->cpl_left;
          };
          if (r->failed) {
            push(r->addr, 0, true);  // completion without data (UR / CA)
          } else {
            std::uint64_t left = r->len;
            for_each_cpld(r->addr, r->len, params_, [&](std::uint64_t addr, std::uint64_t n) {
              left -= n;
              push(addr, static_cast<std::uint32_t>(n), left == 0);
            });
          }
          dir_[H2D].wake.notify(SC_ZERO_TIME);
          break;
        }
      }
    }
  }
}

void pcie_link::on_tlp_arrive(int d, tlp* x) {
  const link_params& p = params_;
  dir_state& rx = dir_[d];
  const int back = 1 - d;
  if (dllps_due(rx.received, 1, p.ack_every) != 0) {  // Ack coalescing (one per ack_every TLPs)
    dir_[back].dllps.push_back(dllp{});
    dir_[back].wake.notify(SC_ZERO_TIME);
  }
  const bool finite = !rx.hdr_inf[x->type] || !rx.data_inf[x->type];
  if (finite) {
    dllp rel{true, x->type, x->hdr_cr, x->data_cr};
    if (p.fc_release_ps == 0)
      release_credits(d, x->type, x->hdr_cr, x->data_cr);
    else
      schedule(action{action::kind::fc_release, d, nullptr, rel, nullptr},
               now_ps() + p.fc_release_ps);
  }
  txn* t = x->t;
  switch (x->k) {
    case tlp::kind::mwr:  // root complex writes host memory
      if (host_waited_) {
        host_writes_open_.insert(host_write_seq_);
        dispatch_host_job({t, nullptr, x->off, x->len, now_ps() + p.rc_latency_ps, host_write_seq_++});
      } else {
        host_write_done(t, host_access(*t->gp, x->off, x->len, now_ps() + p.rc_latency_ps));
      }
      break;
    case tlp::kind::mrd: {  // root complex reads host memory, then completes
      request* r = x->req;
      if (host_waited_)
        dispatch_host_job({t, r, r->off, r->len, now_ps() + p.rc_latency_ps, host_write_seq_});
      else
        host_read_done(t, r, host_access(*t->gp, r->off, r->len, now_ps() + p.rc_latency_ps));
      break;
    }
    case tlp::kind::cpld: {  // endpoint: completions of one request arrive in order
      request* r = x->req;
      if (record_)
        cpl_log_.push_back({now_ps(), r->id, r->tag, x->addr, x->len, x->last});
      if (--r->cpl_left == 0 && x->last) {
        free_tags_.push_back(r->tag);  // the tag is free only after the last completion
        if (record_) tag_log_.push_back({now_ps(), r->id, r->tag});
        dir_[D2H].wake.notify(SC_ZERO_TIME);
        t->done = std::max(t->done, now_ps());
        delete r;
        if (--t->pending == 0) finish_txn(t);
      }
      break;
    }
  }
  free_tlp(x);
}

void pcie_link::host_write_done(txn* t, ps_t done) {
  t->done = std::max(t->done, done);
  if (--t->pending == 0) finish_txn(t);
}

void pcie_link::host_read_done(txn* t, request* r, ps_t done) {
  r->failed = !t->gp->is_response_ok();
  // (The MRd arrived on d2h; its completions go back on h2d.)
  schedule(action{action::kind::cpl_ready, D2H, nullptr, dllp{}, r}, done + params_.rc_latency_ps);
}

void pcie_link::dispatch_host_job(host_job j) {
  if (!host_idle_.empty()) {  // an idle worker takes it (its own event: only it wakes)
    host_worker_slot* w = host_idle_.back();
    host_idle_.pop_back();
    w->job = j;
    w->busy = true;
    w->ev.notify();
  } else if (host_workers_.size() < kMaxHostWorkers) {
    host_workers_.push_back(std::make_unique<host_worker_slot>());
    host_worker_slot* w = host_workers_.back().get();
    w->job = j;
    w->busy = true;
    sc_core::sc_spawn([this, w] { host_worker(w); }, sc_core::sc_gen_unique_name("host_worker"));
  } else {
    host_jobs_.push_back(j);
  }
}

void pcie_link::host_worker(host_worker_slot* w) {
  for (;;) {
    while (!w->busy) sc_core::wait(w->ev);
    run_host_job(w->job);
    if (!host_jobs_.empty()) {
      w->job = host_jobs_.front();
      host_jobs_.pop_front();
    } else {
      w->busy = false;
      host_idle_.push_back(w);
    }
  }
}

void pcie_link::run_host_job(const host_job& j) {
  if (j.r == nullptr) {
    host_write_done(j.t, host_access(*j.t->gp, j.off, j.len, j.ready));
    host_writes_open_.erase(j.seq);
    host_writes_ev_.notify();
    return;
  }
  // PCIe ordering: a read does not pass a posted write issued before it (PCIe Base Spec,
  // Transaction Ordering): wait for the MWr accesses dispatched before this MRd (not for later
  // ones: breaker2 s21 F1, a 4 KiB read waited for an 8 MiB write issued after it).
  while (!host_writes_open_.empty() && *host_writes_open_.begin() < j.seq) sc_core::wait(host_writes_ev_);
  host_read_done(j.t, j.r, host_access(*j.t->gp, j.off, j.len, j.ready));
}

void pcie_link::release_credits(int d, int type, std::uint64_t hdr, std::uint64_t data) {
  dir_state& rx = dir_[d];
  rx.rel_hdr[type] += hdr;
  rx.rel_data[type] += data;
  // One UpdateFC per updatefc_every released TLPs, counted over the stream: the rule LT
  // applies per transaction (dllps_due, lt_dllps_due).
  if (dllps_due(rx.rel_tlps[type], 1, params_.updatefc_every) != 0) {
    dir_state& back = dir_[1 - d];
    back.dllps.push_back(dllp{true, type, rx.rel_hdr[type], rx.rel_data[type]});
    back.wake.notify(SC_ZERO_TIME);
    rx.rel_hdr[type] = rx.rel_data[type] = 0;
  }
}

void pcie_link::on_dllp_arrive(int d, const dllp& x) {
  if (!x.updatefc) return;  // Ack: no replay buffer is modelled (no errors on the link)
  dir_state& tx = dir_[1 - d];  // the transmitter whose receiver sent the UpdateFC
  tx.hdr_avail[x.type] += x.hdr;
  tx.data_avail[x.type] += x.data;
  tx.wake.notify(SC_ZERO_TIME);
}

// ---- DMI, debug, backward path --------------------------------------------------------------

bool pcie_link::get_direct_mem_ptr(tlm_generic_payload&, tlm_dmi& dmi) {
  dmi.allow_none();
  dmi.set_start_address(0);
  dmi.set_end_address(std::numeric_limits<std::uint64_t>::max());
  return false;
}

unsigned int pcie_link::transport_dbg(tlm_generic_payload& trans) {
  if (!mem::check_data_ptr(trans, name())) return 0;
  return init->transport_dbg(trans);
}

tlm_sync_enum pcie_link::nb_transport_bw(tlm_generic_payload&, tlm_phase&, sc_time&) {
  // The root complex talks to host memory with b_transport only; an AT call back is an error.
  SC_REPORT_ERROR(name(), "nb_transport_bw: unexpected call (the link uses b_transport)");
  return TLM_COMPLETED;
}

void pcie_link::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  tgt->invalidate_direct_mem_ptr(start, end);
}

}  // namespace cdma
