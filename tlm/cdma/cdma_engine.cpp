#include "tlm/cdma/cdma_engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <sstream>
#include <stdexcept>
#include "tlm/codec/window.h"
#include "tlm/core/sc_time_util.h"
#include "tlm/memory/access_check.h"
#include "tlm/memory/memory_target.h"

namespace cdma {

namespace {
/// A timed register access refused for its shape (reg_access::burst_error: data length other
/// than 4 or streaming width below 4; byte_enable_error): a warning from `who` naming the
/// access, the attribute and the expected form, rate-limited by `log` (mem::report_refusal).
[[gnu::cold, gnu::noinline]] void register_shape_refused(const tlm::tlm_generic_payload& p, reg_access a,
                                                         mem::refusal_log& log, const char* who) {
  std::ostringstream os;
  os << (p.is_read() ? "register read" : "register write") << " of " << p.get_data_length() << " bytes at 0x"
     << std::hex << p.get_address() << std::dec;
  if (a == reg_access::byte_enable_error) {
    os << " has byte enables (byte_enable_length " << p.get_byte_enable_length()
       << "): refused with TLM_BYTE_ENABLE_ERROR_RESPONSE (IEEE 1666-2011 §14.14); the registers take "
          "whole 32-bit accesses: expected a null byte enable pointer";
  } else {
    if (p.get_data_length() != 4)
      os << " (streaming width " << p.get_streaming_width() << ")";
    else
      os << " has streaming width " << p.get_streaming_width();
    os << ": refused with TLM_BURST_ERROR_RESPONSE (IEEE 1666-2011 §14.15); expected one 32-bit register: "
          "data length 4 and streaming width 4 (a larger width also means no streaming)";
    if (p.get_streaming_width() == 0)
      os << "; a fresh tlm_generic_payload has streaming width 0: call set_streaming_width(4)";
  }
  mem::report_refusal(log, who, os.str());
}

/// CODEC_CAPS: every codec id make_codec() accepts (probed, so new codecs appear by themselves).
std::uint32_t probe_codec_caps() {
  std::uint32_t caps = 0;
  for (unsigned id = 0; id < 32; ++id) {
    try {
      codec::make_codec(static_cast<codec::codec_id>(id), 4);
      caps |= 1u << id;
    } catch (const codec::codec_error&) {
    }
  }
  return caps;
}

/// p, validated; the exception names the module.
const cdma_engine_params& validated(const cdma_engine_params& p, const char* module) {
  try {
    p.validate();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(module) + ": " + e.what());
  }
  return p;
}

cdma_regs_config regs_config(const cdma_engine_params& p, std::uint32_t caps) {
  cdma_regs_config c;
  c.codec_caps = caps;
  c.compression_units = p.compression_units;
  c.decompression_units = p.decompression_units;
  c.window_bytes = static_cast<std::uint32_t>(p.window_bytes);
  c.ring_max = static_cast<std::uint32_t>(std::min<std::size_t>(p.queue_depth, 1u << 30));
  c.coalesce_count = p.irq_coalesce_count;
  c.coalesce_timeout_ns = p.irq_coalesce_timeout_ns;
  return c;
}
}  // namespace

void cdma_engine_params::validate() const {
  auto fail = [](const std::string& field, const std::string& value, const std::string& expected) {
    throw std::invalid_argument("cdma_engine_params." + field + " = " + value + ": expected " + expected);
  };
  auto str = [](double v) {
    std::ostringstream os;
    os << v;
    return os.str();
  };
  if (window_bytes < min_window_bytes || window_bytes > max_window_bytes)
    fail("window_bytes", std::to_string(window_bytes),
         std::to_string(min_window_bytes) + " .. " + std::to_string(max_window_bytes) + " bytes (64 B .. 1 MiB)");
  if (compression_units == 0) fail("compression_units", "0", "at least 1 unit");
  if (decompression_units == 0) fail("decompression_units", "0", "at least 1 unit");
  if (!std::isfinite(unit_bytes_per_cycle) || !(unit_bytes_per_cycle > 0.0))
    fail("unit_bytes_per_cycle", str(unit_bytes_per_cycle), "a finite number > 0 of bytes per cycle (e.g. 32)");
  if (!std::isfinite(clock_hz) || !(clock_hz > 0.0))
    fail("clock_hz", str(clock_hz), "a finite frequency > 0 in Hz (e.g. 1e9)");
  if (!(unit_bytes_per_cycle * clock_hz >= 1.0))
    fail("unit_bytes_per_cycle x clock_hz", str(unit_bytes_per_cycle * clock_hz),
         "a unit rate >= 1 B/s (e.g. 32 x 1e9)");
  for (codec::codec_id id : codec::all_codec_ids)
    for (const bool decompress : {false, true}) {
      const double v = (decompress ? codec_decompression_bytes_per_cycle : codec_bytes_per_cycle)[static_cast<std::size_t>(id)];
      if (v == 0.0) continue;  // the unit rate, or the codec's compression rate
      const std::string f = (decompress ? "codec_decompression_bytes_per_cycle[" : "codec_bytes_per_cycle[") +
                            codec::to_string(id) + "]";
      const char* zero = decompress ? "0 (codec_bytes_per_cycle, else unit_bytes_per_cycle)" : "0 (unit_bytes_per_cycle)";
      if (!std::isfinite(v) || !(v > 0.0)) fail(f, str(v), std::string(zero) + " or a finite number > 0 of bytes per cycle");
      if (!(v * clock_hz >= 1.0)) fail(f + " x clock_hz", str(v * clock_hz), "a unit rate >= 1 B/s");
    }
  if (queue_depth < 2) fail("queue_depth", std::to_string(queue_depth), "at least 2 ring entries");
  memory_params::check_latency("cdma_engine_params.register_latency_ps", register_latency_ps);
  if (xbar_Bps != 0.0 && !(std::isfinite(xbar_Bps) && xbar_Bps >= 1.0))
    fail("xbar_Bps", str(xbar_Bps), "0 (unlimited) or a finite rate >= 1 B/s");
}

cdma_engine::cdma_engine(sc_core::sc_module_name name, const cdma_engine_params& p)
    : sc_module(name), gpu_mem("gpu_mem"), pcie("pcie"), regs("regs"), irq("irq"),
      p_(validated(p, sc_module::name())),
      codec_caps_(probe_codec_caps()), regs_(regs_config(p_, codec_caps_)),
      at_peq_(this, &cdma_engine::at_peq_cb) {
  regs.register_b_transport(this, &cdma_engine::b_transport);
  regs.register_nb_transport_fw(this, &cdma_engine::regs_nb_transport_fw);
  regs.register_transport_dbg(this, &cdma_engine::transport_dbg);
  regs.register_get_direct_mem_ptr(this, &cdma_engine::get_direct_mem_ptr);
  gpu_mem.register_nb_transport_bw(this, &cdma_engine::nb_transport_bw);
  gpu_mem.register_invalidate_direct_mem_ptr(this, &cdma_engine::invalidate_direct_mem_ptr);
  pcie.register_nb_transport_bw(this, &cdma_engine::nb_transport_bw);
  pcie.register_invalidate_direct_mem_ptr(this, &cdma_engine::invalidate_direct_mem_ptr);
  qk_.reset();
  bufs_.reserve(p_.window_bytes, p_.window_bytes);
  SC_HAS_PROCESS(cdma_engine);
  SC_THREAD(run);
  SC_METHOD(drive_irq);
  sensitive << irq_ev_;
  dont_initialize();
  SC_METHOD(on_coalesce_timeout);
  sensitive << coalesce_ev_;
  dont_initialize();
}

dma_pipeline cdma_engine::make_pipeline(unsigned units, codec::codec_id id, bool decompress) const {
  if (units == 0) return dma_pipeline(1, 0.0, 0, p_.max_outstanding, p_.xbar_Bps, p_.placement);
  return dma_pipeline(units, (decompress ? p_.decompression_bytes_per_cycle(id) : p_.bytes_per_cycle(id)) * p_.clock_hz,
                      cycles_ps(p_.pipeline_latency_cycles, p_.clock_hz), p_.max_outstanding,
                      p_.xbar_Bps, p_.placement);
}

const codec::codec& cdma_engine::codec_for(codec::codec_id id, unsigned width) {
  const unsigned key = static_cast<unsigned>(id) * 16 + width;
  auto it = codecs_.find(key);
  if (it == codecs_.end()) it = codecs_.emplace(key, codec::make_codec(id, width)).first;
  return *it->second;
}

ps_t cdma_engine::local_now() { return now_ps(qk_.get_local_time()); }

void cdma_engine::advance_to(ps_t t) {
  if (p_.approximately_timed) {  // AT: no local time offset, the thread really waits
    const ps_t now = now_ps();
    if (t > now) wait(to_sc(t) - sc_now());
    return;
  }
  if (t > local_now()) qk_.set(to_sc(t) - sc_now());
  if (qk_.need_sync()) qk_.sync();
}

bool cdma_engine::access(socket_t& s, tlm::tlm_command cmd, std::uint64_t addr,
                         std::uint8_t* data, std::size_t len, ps_t at, ps_t& done) {
  if (p_.approximately_timed) return at_access(s, cmd, addr, data, len, at, done);
  trans_.set_command(cmd);
  trans_.set_address(addr);
  trans_.set_data_ptr(data);
  trans_.set_data_length(static_cast<unsigned>(len));
  trans_.set_streaming_width(static_cast<unsigned>(len));
  trans_.set_byte_enable_ptr(nullptr);
  trans_.set_byte_enable_length(0);
  trans_.set_dmi_allowed(false);
  trans_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  const ps_t now = now_ps();
  sc_core::sc_time delay = to_sc(at > now ? at - now : 0);
  s->b_transport(trans_, delay);
  if (trans_.get_response_status() != tlm::TLM_OK_RESPONSE) {
    std::ostringstream m;
    m << (cmd == tlm::TLM_READ_COMMAND ? "read" : "write") << " of " << len << " bytes at 0x"
      << std::hex << addr << " on socket " << s.name() << " failed: "
      << trans_.get_response_string();
    SC_REPORT_WARNING(name(), m.str().c_str());
    fail_addr_ = addr;
    done = now_ps(delay);  // when the error response arrives (the descriptor ends no earlier)
    return false;
  }
  if (cmd == tlm::TLM_READ_COMMAND) regs_.count_read(len); else regs_.count_written(len);
  done = now_ps(delay);
  return true;
}

void cdma_engine::run() {
  std::uint8_t raw[desc::SIZE];
  std::uint8_t wb[desc::WRITEBACK_BYTES];
  for (;;) {
    while (!(regs_.enabled() && regs_.ring_pending())) wait(doorbell_ev_);
    qk_.sync();  // start each descriptor in step with the kernel
    const std::uint32_t gen = regs_.generation();
    regs_.set_busy(true);
    dma_record r;
    r.sequence = sequence_++;
    r.index = regs_.head();
    r.started = local_now();
    fail_addr_ = 0;
    const std::uint64_t da = regs_.descriptor_address(r.index);
    socket_t& ring = ring_socket();
    dma_error e = dma_error::none;
    ps_t fetched = r.started;
    bool fetched_ok = access(ring, tlm::TLM_READ_COMMAND, da, raw, desc::SIZE, r.started, fetched);
    if (!fetched_ok) {
      e = dma_error::ring_access;
    } else {
      advance_to(fetched);
      const raw_descriptor rd = decode_descriptor(raw);
      r.desc = rd.d;
      e = validate_descriptor(rd);
      const bool compressed = e == dma_error::none && (r.desc.direction == dma_direction::offload ||
                                                       r.desc.direction == dma_direction::prefetch);
      if (compressed && !codec_supported(rd.codec_field)) e = dma_error::unknown_codec;
      if (e != dma_error::none)
        fail_addr_ = da;
      else if ((e = precheck(r)) == dma_error::none)
        e = execute(r);
    }
    r.finished = std::max(local_now(), r.finished);
    if (fetched_ok && regs_.generation() == gen) {
      encode_writeback(e, static_cast<std::uint32_t>(r.windows), r.out_data_bytes, wb);
      ps_t wb_done = r.finished;
      if (access(ring, tlm::TLM_WRITE_COMMAND, da + desc::STATUS, wb, sizeof wb, r.finished,
                 wb_done))
        r.finished = wb_done;
      else if (e == dma_error::none)
        e = dma_error::ring_access;
    }
    advance_to(r.finished);
    qk_.sync();
    regs_.set_busy(false);
    if (regs_.generation() != gen) continue;  // soft reset while running: dropped silently
    r.error = e;
    records_.push_back(r);
    if (e != dma_error::none) {
      std::ostringstream m;
      if (!fetched_ok)  // nothing was read: no fields to show
        m << "descriptor " << r.index << ": the ring fetch failed at ring address 0x" << std::hex
          << da << " (" << (&ring == &pcie ? "host memory via pcie" : "GPU memory via gpu_mem")
          << "): " << to_string(e);
      else
        m << "descriptor " << r.index << " at 0x" << std::hex << da << " (" << to_string(r.desc.direction)
          << ", src 0x" << r.desc.src << ", dst 0x" << r.desc.dst << ", len " << std::dec
          << r.desc.len << ") failed: " << to_string(e);
      SC_REPORT_WARNING(name(), m.str().c_str());
    }
    switch (regs_.complete(e, fail_addr_, r.out_data_bytes)) {
      case coalesce_timer::arm:
        coalesce_ev_.notify(sc_core::sc_time(regs_.coalesce_timeout_ns(), sc_core::SC_NS));
        break;
      case coalesce_timer::cancel: coalesce_ev_.cancel(); break;
      case coalesce_timer::keep: break;
    }
    update_irq();
  }
}

dma_error cdma_engine::execute(dma_record& r) {
  const dma_descriptor& d = r.desc;
  if (p_.approximately_timed) {
    switch (d.direction) {
      case dma_direction::copy_d2h: return at_copy(d, r, true);
      case dma_direction::copy_h2d: return at_copy(d, r, false);
      case dma_direction::offload: return at_offload(d, r);
      case dma_direction::prefetch: return at_prefetch(d, r);
    }
    return dma_error::bad_descriptor;
  }
  switch (d.direction) {
    case dma_direction::copy_d2h: return copy(d, r, true);
    case dma_direction::copy_h2d: return copy(d, r, false);
    case dma_direction::offload: return offload(d, r);
    case dma_direction::prefetch: return prefetch(d, r);
  }
  return dma_error::bad_descriptor;
}

dma_error cdma_engine::precheck(const dma_record& r) {
  const dma_descriptor& d = r.desc;
  if (d.direction != dma_direction::offload && d.direction != dma_direction::prefetch)
    return dma_error::none;
  const std::string why = descriptor_problem(d, p_.window_bytes);
  if (!why.empty()) {
    std::ostringstream m;
    m << "descriptor " << r.index << " (" << to_string(d.direction) << "): " << why;
    SC_REPORT_WARNING(name(), m.str().c_str());
    fail_addr_ = regs_.descriptor_address(r.index);
    return dma_error::bad_descriptor;
  }
  // The range query: nothing moves and no time passes; a memory that does not answer it
  // leaves the range to the accesses themselves.
  const bool off = d.direction == dma_direction::offload;
  struct range { socket_t* s; const char* what; std::uint64_t addr, len; dma_error e; };
  const range ranges[] = {
      {&gpu_mem, off ? "SRC" : "DST", off ? d.src : d.dst, d.len, dma_error::gpu_mem_response},
      {&pcie, "META table", d.meta, table_bytes(d.len, p_.window_bytes), dma_error::pcie_response}};
  for (const range& g : ranges) {
    std::uint64_t inside = 0;
    if (!mem::query_range(*g.s, g.addr, g.len, inside) || inside >= g.len) continue;
    std::ostringstream m;
    m << "descriptor " << r.index << " (" << to_string(d.direction) << "): " << g.what << " range [0x"
      << std::hex << g.addr << ", +0x" << g.len << ") is not whole inside the memory behind "
      << g.s->name() << " (" << std::dec << inside << " bytes from its start are); nothing moved";
    SC_REPORT_WARNING(name(), m.str().c_str());
    fail_addr_ = g.addr + inside;
    return g.e;
  }
  return dma_error::none;
}

dma_error cdma_engine::copy(const dma_descriptor& d, dma_record& r, bool to_host) {
  auto& from = to_host ? gpu_mem : pcie;
  auto& to = to_host ? pcie : gpu_mem;
  const dma_error from_err = to_host ? dma_error::gpu_mem_response : dma_error::pcie_response;
  const dma_error to_err = to_host ? dma_error::pcie_response : dma_error::gpu_mem_response;
  dma_pipeline pipe = make_pipeline(0);
  pipe.start(local_now());
  const std::size_t W = p_.window_bytes;
  for (std::uint64_t off = 0; off < d.len; off += W) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(W, d.len - off));
    const ps_t issue = pipe.next_issue();
    advance_to(issue);
    ps_t rd = 0, wr = 0;
    // A failed access ends the descriptor, after the windows already written (as in AT,
    // where their writes are in flight) and the error response.
    if (!access(from, tlm::TLM_READ_COMMAND, d.src + off, bufs_.in(), n, issue, rd)) {
      account_link(pipe);
      r.finished = std::max(pipe.last_done(), rd);
      return from_err;
    }
    if (!access(to, tlm::TLM_WRITE_COMMAND, d.dst + off, bufs_.in(), n, pipe.link(rd, n), wr)) {
      account_link(pipe);
      r.finished = std::max(pipe.last_done(), wr);
      return to_err;
    }
    pipe.complete(wr);
    r.out_data_bytes += n;
    ++r.windows;
  }
  account_link(pipe);
  r.finished = pipe.last_done();
  return dma_error::none;
}

dma_error cdma_engine::offload(const dma_descriptor& d, dma_record& r) {
  const codec::codec& c = codec_for(d.codec, d.element_width);
  const std::size_t W = p_.window_bytes;
  const std::size_t n_win = codec::window_count(d.len, W);
  // The table grows with the windows written (never sized from LEN up front: precheck()
  // bounded LEN only if the memories answered the range query).
  std::vector<std::uint8_t> table;
  table.reserve(std::min<std::size_t>(n_win, std::size_t{1} << 16) * codec::window_entry_bytes);
  bufs_.reserve(W, std::max(W, c.max_compressed_size(W)));
  dma_pipeline pipe = make_pipeline(p_.compression_units, d.codec);
  pipe.start(local_now());
  std::uint64_t out_off = 0;
  for (std::size_t k = 0; k < n_win; ++k) {
    const std::uint64_t off = static_cast<std::uint64_t>(k) * W;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(W, d.len - off));
    const ps_t issue = pipe.next_issue();
    advance_to(issue);
    ps_t rd = 0, wr = 0;
    if (!access(gpu_mem, tlm::TLM_READ_COMMAND, d.src + off, bufs_.in(), n, issue, rd)) {
      comp_busy_ += pipe.unit_busy_ps();
      account_link(pipe);
      r.finished = std::max(pipe.last_done(), rd);  // (see copy())
      return dma_error::gpu_mem_response;
    }
    const codec::window_entry e = codec::compress_window(c, bufs_.in(), n, bufs_.out());
    const ps_t unit_done = pipe.offload_stage(rd, n, e.bytes);
    if (!access(pcie, tlm::TLM_WRITE_COMMAND, d.dst + out_off, bufs_.out(), e.bytes,
                unit_done, wr)) {
      comp_busy_ += pipe.unit_busy_ps();
      account_link(pipe);
      r.finished = std::max(pipe.last_done(), wr);
      return dma_error::pcie_response;
    }
    pipe.complete(wr);
    table.resize(table.size() + codec::window_entry_bytes);
    codec::encode_entry(e, table.data() + k * codec::window_entry_bytes);
    out_off += e.bytes;
    ++r.windows;
    if (e.raw) ++r.windows_raw;
    regs_.count_window(e.raw);
  }
  comp_busy_ += pipe.unit_busy_ps();
  account_link(pipe);
  r.out_data_bytes = out_off;
  return write_table(d, table, pipe.last_done(), r);
}

dma_error cdma_engine::write_table(const dma_descriptor& d, const std::vector<std::uint8_t>& table,
                                   ps_t after, dma_record& r) {
  ps_t meta_done = 0;
  if (!access(pcie, tlm::TLM_WRITE_COMMAND, d.meta, const_cast<std::uint8_t*>(table.data()), table.size(),
              after, meta_done)) {
    r.finished = std::max(after, meta_done);
    return dma_error::pcie_response;
  }
  r.meta_bytes = table.size();
  r.finished = meta_done;
  return dma_error::none;
}

dma_error cdma_engine::read_table(const dma_descriptor& d, ps_t at, std::vector<std::uint8_t>& table,
                                  ps_t& done, dma_record& r) {
  const std::uint64_t bytes = table_bytes(d.len, p_.window_bytes);  // <= max_table_bytes (precheck)
  try {
    table.assign(static_cast<std::size_t>(bytes), 0);
  } catch (const std::bad_alloc&) {
    std::ostringstream m;
    m << "the metadata table of " << bytes << " bytes (LEN " << d.len
      << ") cannot be allocated by the simulator: bad descriptor";
    SC_REPORT_WARNING(name(), m.str().c_str());
    fail_addr_ = d.meta;
    return dma_error::bad_descriptor;
  }
  if (!access(pcie, tlm::TLM_READ_COMMAND, d.meta, table.data(), table.size(), at, done))
    return dma_error::pcie_response;
  r.meta_bytes = table.size();
  return dma_error::none;
}

dma_error cdma_engine::prefetch(const dma_descriptor& d, dma_record& r) {
  const codec::codec& c = codec_for(d.codec, d.element_width);
  const std::size_t W = p_.window_bytes;
  const std::size_t n_win = codec::window_count(d.len, W);
  std::vector<std::uint8_t> table;
  ps_t meta_done = 0;
  if (const dma_error e = read_table(d, local_now(), table, meta_done, r); e != dma_error::none) return e;
  // Validate the whole table before moving any data (codec::decode_table: the rule the AT
  // path applies too).
  std::vector<codec::window_entry> entries;
  try {
    entries = codec::decode_table(c, table.data(), d.len, W, d.meta);
  } catch (const codec::table_error& ex) {
    SC_REPORT_WARNING(name(), ex.what());
    fail_addr_ = d.meta + ex.index * codec::window_entry_bytes;
    r.finished = meta_done;
    return dma_error::corrupt_window;
  }
  bufs_.reserve(std::max(W, c.max_compressed_size(W)), W);
  dma_pipeline pipe = make_pipeline(p_.decompression_units, d.codec, true);
  pipe.start(meta_done);
  std::uint64_t in_off = 0;
  dma_error result = dma_error::none;
  ps_t failed_at = 0;  // when a failed access's error response arrived
  for (std::size_t k = 0; k < n_win; ++k) {
    const std::uint64_t off = static_cast<std::uint64_t>(k) * W;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(W, d.len - off));
    const codec::window_entry& e = entries[k];
    const ps_t issue = pipe.next_issue();
    advance_to(issue);
    ps_t rd = 0, wr = 0;
    if (!access(pcie, tlm::TLM_READ_COMMAND, d.src + in_off, bufs_.in(), e.bytes, issue, rd)) {
      result = dma_error::pcie_response;
      failed_at = rd;
      break;
    }
    try {
      codec::decompress_window(c, e, bufs_.in(), e.bytes, bufs_.out(), n);
    } catch (const codec::codec_error& ex) {
      std::ostringstream m;
      m << "window " << k << " at host 0x" << std::hex << d.src + in_off << ": " << ex.what();
      SC_REPORT_WARNING(name(), m.str().c_str());
      fail_addr_ = d.src + in_off;
      result = dma_error::corrupt_window;
      break;
    }
    const ps_t unit_done = pipe.prefetch_stage(rd, n, e.bytes);
    if (!access(gpu_mem, tlm::TLM_WRITE_COMMAND, d.dst + off, bufs_.out(), n, unit_done, wr)) {
      result = dma_error::gpu_mem_response;
      failed_at = wr;
      break;
    }
    pipe.complete(wr);
    in_off += e.bytes;
    r.out_data_bytes += n;
    ++r.windows;
    if (e.raw) ++r.windows_raw;
  }
  decomp_busy_ += pipe.unit_busy_ps();
  account_link(pipe);
  r.finished = std::max(pipe.last_done(), failed_at);
  return result;
}

void cdma_engine::update_irq() { irq_ev_.notify(sc_core::SC_ZERO_TIME); }

void cdma_engine::drive_irq() { irq.write(regs_.irq_line()); }

void cdma_engine::on_coalesce_timeout() {
  regs_.coalesce_timeout();
  update_irq();
}

// ---- register target (all decoding is in cdma_regs) ---------------------------------------

void cdma_engine::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& d) {
  // As every target of the library: a delay past mem::max_arrival_ps is refused before the
  // latency is added (2^64 - 1001 ps + 10 ns wrapped to 9 ns: breaker s21).
  if (!mem::check_arrival(p, d, name())) return;
  d += to_sc(p_.register_latency_ps);
  if (!mem::check_data_ptr(p, name())) return;  // null data pointer: generic error, warned
  // A command other than read / write is a command error whatever its shape (the ignore
  // command executes nothing: memory.md).
  if (!p.is_read() && !p.is_write()) {
    reg_response(p, reg_access::command_error);
    return;
  }
  reg_access a = cdma_regs::check(p.get_address(), p.get_data_length(), p.get_streaming_width(),
                                  p.get_byte_enable_ptr() != nullptr);
  if (a == reg_access::burst_error || a == reg_access::byte_enable_error)
    register_shape_refused(p, a, reg_refusals_, name());
  std::uint32_t v = 0;
  if (a == reg_access::ok) {
    if (p.is_read()) {
      a = regs_.read(p.get_address(), v);
      if (a == reg_access::ok) store_le32(p.get_data_ptr(), v);
    } else {
      const std::uint32_t gen = regs_.generation();
      a = regs_.write(p.get_address(), load_le32(p.get_data_ptr()));
      if (regs_.generation() != gen) coalesce_ev_.cancel();  // soft reset
      doorbell_ev_.notify(sc_core::SC_ZERO_TIME);
      update_irq();
    }
  }
  reg_response(p, a);
}

tlm::tlm_sync_enum cdma_engine::regs_nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                                     sc_core::sc_time& d) {
  if (ph == tlm::BEGIN_REQ) {
    b_transport(p, d);
    return tlm::TLM_COMPLETED;
  }
  if (ph == tlm::END_RESP) {  // every transaction completed on its BEGIN_REQ: none in progress
    mem::stray_end_resp(p, name());
    return tlm::TLM_COMPLETED;
  }
  return mem::other_fw_phase(p, ph, name());
}

unsigned int cdma_engine::transport_dbg(tlm::tlm_generic_payload& p) {
  if (!mem::check_data_ptr(p, name())) return 0;  // null data pointer: generic error, warned
  if (!p.is_read()) return reg_response(p, reg_access::command_error);
  const unsigned len = p.get_data_length();
  reg_access a = cdma_regs::check(p.get_address(), len, len, false);
  std::uint32_t v = 0;
  if (a == reg_access::ok) {
    a = regs_.read(p.get_address(), v);
    if (a == reg_access::ok) store_le32(p.get_data_ptr(), v);
  }
  return reg_response(p, a);
}

unsigned int cdma_engine::reg_response(tlm::tlm_generic_payload& p, reg_access a) {
  switch (a) {
    case reg_access::ok: p.set_response_status(tlm::TLM_OK_RESPONSE); return 4;
    case reg_access::address_error: p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); break;
    case reg_access::burst_error: p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE); break;
    case reg_access::byte_enable_error:
      p.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
      break;
    case reg_access::command_error: p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE); break;
  }
  return 0;
}

bool cdma_engine::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  // Registers have side effects: no DMI. Deny over the whole register space.
  dmi.set_start_address(0);
  dmi.set_end_address(reg::SIZE - 1);
  dmi.allow_none();
  return false;
}

tlm::tlm_sync_enum cdma_engine::nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                                sc_core::sc_time& d) {
  if (at_txns_.find(&p) == at_txns_.end()) {
    // LT issues only b_transport; in AT only the engine's own open transactions come back.
    SC_REPORT_ERROR(name(), "unexpected nb_transport_bw for a payload the engine has no open "
                            "nb_transport transaction for");
    return tlm::TLM_COMPLETED;
  }
  at_peq_.notify(p, ph, d);  // Accellera at_initiator shape: handled in the PEQ callback
  return tlm::TLM_ACCEPTED;
}

}  // namespace cdma
