// Approximately-timed path of the cDMA engine (cdma_engine_params::approximately_timed).
//
// The ring walker (run()) is shared with LT; in AT its access() calls become whole 4-phase
// transactions (at_access) and the window loops of copy / offload / prefetch become
// at_stream(): up to max_outstanding windows are in flight between the read's BEGIN_REQ and
// the write's response. Reads issue as soon as a window slot and the read socket's request
// phase are free; each read response is transformed (functionally, bit-exact as LT) and
// passed through the (de)compression units with the same dma_pipeline::unit() rule as LT; the
// write issues at the unit's output time, in window order (the compressed stream is packed
// back to back), once the write socket's request phase is free.
//
// Base protocol (Accellera at_initiator shape): payloads come from a payload_pool (acquire on
// allocation, release when done); BEGIN_REQ return values TLM_ACCEPTED, TLM_UPDATED (END_REQ
// or BEGIN_RESP) and TLM_COMPLETED are all handled; END_REQ and BEGIN_RESP on the backward
// path go into a PEQ whose callback ends the request phase, sends END_RESP and wakes the
// thread. One request phase open per socket (request exclusion rule).
//
// Cost: the callback also queues each finished window transaction (at_done_) for at_stream,
// which handles just those, in window order; no step visits every window in flight, so the
// work per event does not grow with max_outstanding (it did: breaker s15 F6).
#include <algorithm>
#include <sstream>
#include "tlm/cdma/cdma_engine.h"
#include "tlm/codec/window.h"
#include "tlm/core/sc_time_util.h"

namespace cdma {

using namespace tlm;

tlm_generic_payload* cdma_engine::at_begin(socket_t& s, tlm_command cmd, std::uint64_t addr,
                                           std::uint8_t* data, std::size_t len, std::size_t window) {
  const int si = sock_index(s, *this);
  while (req_owner_[si] != nullptr) wait(at_ev_);  // request exclusion rule
  tlm_generic_payload* p = pool_.allocate();
  p->acquire();
  p->set_command(cmd);
  p->set_address(addr);
  p->set_data_ptr(data);
  p->set_data_length(static_cast<unsigned>(len));
  p->set_streaming_width(static_cast<unsigned>(len));
  p->set_byte_enable_ptr(nullptr);
  p->set_byte_enable_length(0);
  p->set_dmi_allowed(false);
  p->set_response_status(TLM_INCOMPLETE_RESPONSE);
  at_txn& t = at_txns_[p];
  t = at_txn{};
  t.sock = si;
  t.window = window;
  t.write = cmd == TLM_WRITE_COMMAND;
  req_owner_[si] = p;
  tlm_phase ph = BEGIN_REQ;
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  switch (s->nb_transport_fw(*p, ph, d)) {
    case TLM_ACCEPTED: break;  // END_REQ / BEGIN_RESP will come on the backward path
    case TLM_UPDATED:
      if (ph == END_REQ || ph == BEGIN_RESP) {
        at_peq_.notify(*p, ph, d);
      } else {
        std::ostringstream m;
        m << "BEGIN_REQ on " << s.name() << " answered TLM_UPDATED with phase " << ph
          << " (expected END_REQ or BEGIN_RESP)";
        SC_REPORT_ERROR(name(), m.str().c_str());
      }
      break;
    case TLM_COMPLETED:
      t.completed_fw = true;
      at_peq_.notify(*p, BEGIN_RESP, d);  // completes after the annotated delay
      break;
  }
  return p;
}

void cdma_engine::at_peq_cb(tlm_generic_payload& p, const tlm_phase& ph) {
  auto it = at_txns_.find(&p);
  if (it == at_txns_.end()) {
    SC_REPORT_ERROR(name(), "PEQ event for a payload without an open transaction");
    return;
  }
  at_txn& t = it->second;
  if (ph == END_REQ) {
    if (req_owner_[t.sock] == &p) req_owner_[t.sock] = nullptr;
  } else if (ph == BEGIN_RESP) {
    if (req_owner_[t.sock] == &p) req_owner_[t.sock] = nullptr;  // BEGIN_RESP ends the request too
    if (!t.completed_fw) {
      tlm_phase e = END_RESP;
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      (t.sock == 0 ? gpu_mem : pcie)->nb_transport_fw(p, e, d);
    }
    if (!t.done && t.window != no_window) at_done_.push_back(at_done_item{t.window, t.write});
    t.done = true;
    t.done_ps = now_ps();
  } else {
    std::ostringstream m;
    m << "illegal phase " << ph << " on the backward path (base protocol)";
    SC_REPORT_ERROR(name(), m.str().c_str());
  }
  at_ev_.notify();
}

bool cdma_engine::at_finish(tlm_generic_payload* p, ps_t& done) {
  const at_txn t = at_txns_.at(p);
  at_txns_.erase(p);
  done = t.done_ps;
  const bool ok = p->get_response_status() == TLM_OK_RESPONSE;
  if (!ok) {
    std::ostringstream m;
    m << (p->is_read() ? "read" : "write") << " of " << p->get_data_length() << " bytes at 0x"
      << std::hex << p->get_address() << " on socket " << (t.sock == 0 ? gpu_mem : pcie).name()
      << " failed: " << p->get_response_string();
    SC_REPORT_WARNING(name(), m.str().c_str());
    fail_addr_ = p->get_address();
  } else if (p->is_read()) {
    regs_.count_read(p->get_data_length());
  } else {
    regs_.count_written(p->get_data_length());
  }
  p->release();
  return ok;
}

bool cdma_engine::at_access(socket_t& s, tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                            std::size_t len, ps_t at, ps_t& done) {
  advance_to(at);
  tlm_generic_payload* p = at_begin(s, cmd, addr, data, len);
  while (!at_txns_.at(p).done) wait(at_ev_);
  return at_finish(p, done);
}

dma_error cdma_engine::at_stream(const at_stream_spec& sp, dma_pipeline& pipe, dma_record& r) {
  // Work per wake-up is proportional to the transactions that finished since the last one,
  // not to the windows in flight (up to max_outstanding; breaker s15 F6): the PEQ callback
  // hands each finished stream transaction over in at_done_ (window index and kind), windows
  // live in a deque indexed by k - front().k, and each window carries its retired flag.
  std::deque<at_window> win;  // issued, not yet popped; in window order (win[i].k = win.front().k + i)
  std::size_t next_read = 0, next_write = 0, completed = 0, next_stage = 0;
  dma_error err = dma_error::none;
  // The first failing window in window order (sp.windows: none). Windows before it are still
  // staged and written (a later response may fail an earlier window: it then becomes err_k),
  // none from it on, and no read is issued after an error: the LT path's rule, "windows before
  // it were written, none after" (docs/cdma_registers.md; breaker s18 F5: AT stopped every
  // write at the first error, so good windows before a corrupt one whose writes had not yet
  // been issued were lost).
  std::size_t err_k = sp.windows;
  bool sweep = false;  // err_k moved: retire the idle windows from it on
  auto fail = [&](dma_error e, std::size_t k) {
    if (k < err_k) {
      err_k = k;
      err = e;
      sweep = true;
    }
  };
  const unsigned max_out = std::max(1u, p_.max_outstanding);
  const int rsi = sock_index(*sp.rs, *this), wsi = sock_index(*sp.ws, *this);
  std::vector<at_done_item> batch;
  std::vector<std::size_t> touched;  // windows (k) that finished a transaction in this batch
  at_done_.clear();
  (void)r;
  for (;;) {
    bool acted = false;
    // Responses. Handled in window order (read before write of one window), as a scan over
    // all windows would meet them: the order fixes the unit and link reservations, the error
    // seen first and the payload pool's reuse order.
    if (!at_done_.empty()) {
      batch.swap(at_done_);
      at_done_.clear();
      std::sort(batch.begin(), batch.end(), [](const at_done_item& a, const at_done_item& b) {
        return a.k != b.k ? a.k < b.k : a.write < b.write;
      });
      touched.clear();
      for (const at_done_item& it : batch) {
        at_window& w = win[it.k - win.front().k];
        acted = true;
        touched.push_back(it.k);
        if (!it.write) {
          ps_t rt = 0;
          const bool ok = at_finish(w.rd, rt);
          w.rd = nullptr;
          if (!ok) fail(sp.read_err, w.k);
          if (ok && w.k < err_k) {
            if (!sp.transform(w)) {
              fail(dma_error::corrupt_window, w.k);
            } else {
              w.read_done = rt;
              w.read_ok = true;
            }
          }
        } else {
          ps_t wt = 0;
          const bool ok = at_finish(w.wr, wt);
          w.wr = nullptr;
          if (!ok) {
            fail(sp.write_err, w.k);
          } else {
            pipe.complete(wt);
            w.written = true;
            sp.written(w);
          }
        }
      }
      batch.clear();
      // The link / unit stage (one timing rule, one place: the LT path's dma_pipeline stages)
      // is reserved in window order, each window from its own read completion, as the LT path
      // does: a window whose read came back early waits for the windows before it (an engine
      // that writes packed windows in order keeps them in a reorder buffer). Reserved in
      // response order before session 17, a late window 0 queued behind up to max_outstanding
      // later ones on a bottleneck stage (HBM answers a small tensor's reads out of order), so
      // no write could start and the stage and the PCIe writes alternated instead of
      // overlapping: AT up to 12.9 % slower than LT (breaker s17 F4; docs/validation.md).
      while (next_stage < next_read && next_stage < err_k) {
        at_window& w = win[next_stage - win.front().k];
        if (!w.read_ok) break;
        w.ready = sp.stage(w, w.read_done);
        w.transformed = true;
        ++next_stage;
      }
      // Retire windows that are written, or will never be (from the first failing window
      // on): only the windows touched here can have changed, except when err_k moved, which
      // may strand windows from it on that wait for their write (one sweep).
      auto retire = [&](at_window& w) {
        if (w.retired || w.rd != nullptr || w.wr != nullptr) return;
        if (w.written || w.k >= err_k) {
          w.retired = true;
          ++completed;
        }
      };
      if (sweep) {
        sweep = false;
        for (at_window& w : win) retire(w);
      } else {
        for (std::size_t k : touched) retire(win[k - win.front().k]);
      }
      while (!win.empty() && win.front().retired) win.pop_front();
    }
    const ps_t now = now_ps();
    // Next write, in window order, at its unit output time.
    at_window* nw = nullptr;
    if (next_write < next_read && next_write < err_k && !win.empty())
      nw = &win[next_write - win.front().k];
    if (nw != nullptr && nw->transformed && nw->ready <= now && req_owner_[wsi] == nullptr) {
      const std::uint64_t a = sp.write_addr(*nw);
      nw->wr = at_begin(*sp.ws, TLM_WRITE_COMMAND, a, nw->out.data(), nw->out_len, nw->k);
      ++next_write;
      nw = nullptr;
      acted = true;
    }
    // Next read, when a window slot and the read socket's request phase are free.
    if (err == dma_error::none && next_read < sp.windows && next_read - completed < max_out &&
        req_owner_[rsi] == nullptr) {
      win.emplace_back();
      at_window& w = win.back();
      w.k = next_read++;
      std::uint64_t a = 0;
      std::size_t len = 0;
      sp.read_req(w.k, a, len);
      w.in.resize(std::max<std::size_t>(len, 1));
      w.rd = at_begin(*sp.rs, TLM_READ_COMMAND, a, w.in.data(), len, w.k);
      peak_in_flight_ = std::max<unsigned>(peak_in_flight_, static_cast<unsigned>(next_read - completed));
      acted = true;
    }
    if (err == dma_error::none ? completed == sp.windows : win.empty()) break;
    if (acted) continue;
    if (nw != nullptr && nw->transformed && nw->ready > now)
      wait(to_sc(nw->ready) - sc_core::sc_time_stamp(), at_ev_);
    else
      wait(at_ev_);
  }
  return err;
}

dma_error cdma_engine::at_copy(const dma_descriptor& d, dma_record& r, bool to_host) {
  const std::size_t W = p_.window_bytes;
  dma_pipeline pipe = make_pipeline(0);
  pipe.start(now_ps());
  auto n_of = [&](std::size_t k) {
    return static_cast<std::size_t>(std::min<std::uint64_t>(W, d.len - std::uint64_t(k) * W));
  };
  at_stream_spec sp;
  sp.rs = to_host ? &gpu_mem : &pcie;
  sp.ws = to_host ? &pcie : &gpu_mem;
  sp.read_err = to_host ? dma_error::gpu_mem_response : dma_error::pcie_response;
  sp.write_err = to_host ? dma_error::pcie_response : dma_error::gpu_mem_response;
  sp.windows = static_cast<std::size_t>((d.len + W - 1) / W);
  sp.stage = [&](at_window& w, ps_t rt) { return pipe.link(rt, n_of(w.k)); };
  sp.read_req = [&](std::size_t k, std::uint64_t& a, std::size_t& n) {
    a = d.src + std::uint64_t(k) * W;
    n = n_of(k);
  };
  sp.transform = [&](at_window& w) {
    w.out.swap(w.in);
    w.out_len = n_of(w.k);
    return true;
  };
  sp.write_addr = [&](at_window& w) { return d.dst + std::uint64_t(w.k) * W; };
  sp.written = [&](at_window& w) {
    r.out_data_bytes += w.out_len;
    ++r.windows;
  };
  const dma_error e = at_stream(sp, pipe, r);
  account_link(pipe);
  r.finished = pipe.last_done();
  return e;
}

dma_error cdma_engine::at_offload(const dma_descriptor& d, dma_record& r) {
  const codec::codec& c = codec_for(d.codec, d.element_width);
  const std::size_t W = p_.window_bytes;
  const std::size_t n_win = codec::window_count(d.len, W);
  // Table and entries grow with the windows issued / written (never sized from LEN up front:
  // precheck() bounded LEN only if the memories answered the range query).
  std::vector<std::uint8_t> table;
  std::vector<codec::window_entry> ents;
  const std::size_t out_cap = std::max(W, c.max_compressed_size(W));
  dma_pipeline pipe = make_pipeline(p_.compression_units, d.codec);
  pipe.start(now_ps());
  auto n_of = [&](std::size_t k) {
    return static_cast<std::size_t>(std::min<std::uint64_t>(W, d.len - std::uint64_t(k) * W));
  };
  std::uint64_t out_off = 0;
  at_stream_spec sp;
  sp.rs = &gpu_mem;
  sp.ws = &pcie;
  sp.read_err = dma_error::gpu_mem_response;
  sp.write_err = dma_error::pcie_response;
  sp.windows = n_win;
  sp.stage = [&](at_window& w, ps_t rt) { return pipe.offload_stage(rt, n_of(w.k), w.out_len); };
  sp.read_req = [&](std::size_t k, std::uint64_t& a, std::size_t& n) {
    a = d.src + std::uint64_t(k) * W;
    n = n_of(k);
  };
  sp.transform = [&](at_window& w) {
    w.out.resize(out_cap);
    if (ents.size() <= w.k) ents.resize(w.k + 1);
    ents[w.k] = codec::compress_window(c, w.in.data(), n_of(w.k), w.out.data());
    w.out_len = ents[w.k].bytes;
    return true;
  };
  sp.write_addr = [&](at_window& w) {
    const std::uint64_t a = d.dst + out_off;
    out_off += w.out_len;
    return a;
  };
  sp.written = [&](at_window& w) {
    if (table.size() < (w.k + 1) * codec::window_entry_bytes)
      table.resize((w.k + 1) * codec::window_entry_bytes);
    codec::encode_entry(ents[w.k], table.data() + w.k * codec::window_entry_bytes);
    ++r.windows;
    if (ents[w.k].raw) ++r.windows_raw;
    regs_.count_window(ents[w.k].raw);
  };
  const dma_error e = at_stream(sp, pipe, r);
  comp_busy_ += pipe.unit_busy_ps();
  account_link(pipe);
  if (e != dma_error::none) return e;
  r.out_data_bytes = out_off;
  return write_table(d, table, pipe.last_done(), r);
}

dma_error cdma_engine::at_prefetch(const dma_descriptor& d, dma_record& r) {
  const codec::codec& c = codec_for(d.codec, d.element_width);
  const std::size_t W = p_.window_bytes;
  const std::size_t n_win = codec::window_count(d.len, W);
  std::vector<std::uint8_t> table;
  ps_t meta_done = 0;
  if (const dma_error e = read_table(d, now_ps(), table, meta_done, r); e != dma_error::none) return e;
  auto n_of = [&](std::size_t k) {
    return static_cast<std::size_t>(std::min<std::uint64_t>(W, d.len - std::uint64_t(k) * W));
  };
  // Validate the whole table before moving any data (codec::decode_table, as the LT path).
  std::vector<codec::window_entry> entries;
  try {
    entries = codec::decode_table(c, table.data(), d.len, W, d.meta);
  } catch (const codec::table_error& ex) {
    SC_REPORT_WARNING(name(), ex.what());
    fail_addr_ = d.meta + ex.index * codec::window_entry_bytes;
    r.finished = meta_done;
    return dma_error::corrupt_window;
  }
  std::vector<std::uint64_t> in_off(n_win);
  for (std::size_t k = 0, off = 0; k < n_win; off += entries[k].bytes, ++k) in_off[k] = off;
  dma_pipeline pipe = make_pipeline(p_.decompression_units, d.codec, true);
  pipe.start(meta_done);
  at_stream_spec sp;
  sp.rs = &pcie;
  sp.ws = &gpu_mem;
  sp.read_err = dma_error::pcie_response;
  sp.write_err = dma_error::gpu_mem_response;
  sp.windows = n_win;
  sp.stage = [&](at_window& w, ps_t rt) {
    return pipe.prefetch_stage(rt, n_of(w.k), entries[w.k].bytes);
  };
  sp.read_req = [&](std::size_t kk, std::uint64_t& a, std::size_t& n) {
    a = d.src + in_off[kk];
    n = entries[kk].bytes;
  };
  sp.transform = [&](at_window& w) {
    const std::size_t n = n_of(w.k);
    w.out.resize(n);
    try {
      codec::decompress_window(c, entries[w.k], w.in.data(), entries[w.k].bytes, w.out.data(), n);
    } catch (const codec::codec_error& ex) {
      std::ostringstream m;
      m << "window " << w.k << " at host 0x" << std::hex << d.src + in_off[w.k] << ": " << ex.what();
      SC_REPORT_WARNING(name(), m.str().c_str());
      fail_addr_ = d.src + in_off[w.k];
      return false;
    }
    w.out_len = n;
    return true;
  };
  sp.write_addr = [&](at_window& w) { return d.dst + std::uint64_t(w.k) * W; };
  sp.written = [&](at_window& w) {
    r.out_data_bytes += w.out_len;
    ++r.windows;
    if (entries[w.k].raw) ++r.windows_raw;
  };
  const dma_error e = at_stream(sp, pipe, r);
  decomp_busy_ += pipe.unit_busy_ps();
  account_link(pipe);
  r.finished = pipe.last_done();
  return e;
}

}  // namespace cdma
