#include "tlm/cdma/cdma_engine.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include "tlm/codec/window.h"
#include "tlm/core/sc_time_util.h"

namespace cdma {

std::string to_string(dma_direction d) {
  switch (d) {
    case dma_direction::copy_d2h: return "copy_d2h";
    case dma_direction::copy_h2d: return "copy_h2d";
    case dma_direction::offload: return "offload";
    case dma_direction::prefetch: return "prefetch";
  }
  return "unknown";
}

std::string to_string(dma_error e) {
  switch (e) {
    case dma_error::none: return "none";
    case dma_error::gpu_mem_response: return "gpu_mem error response";
    case dma_error::pcie_response: return "pcie error response";
    case dma_error::corrupt_window: return "corrupt compressed window";
    case dma_error::bad_descriptor: return "bad descriptor";
    case dma_error::queue_full: return "descriptor queue full";
  }
  return "unknown";
}

cdma_engine::cdma_engine(sc_core::sc_module_name name, const cdma_engine_params& p)
    : sc_module(name), gpu_mem("gpu_mem"), pcie("pcie"), regs("regs"), irq("irq"), p_(p) {
  if (p_.window_bytes == 0 || p_.window_bytes > (1u << 30))
    SC_REPORT_FATAL(this->name(), "window_bytes must be in 1 .. 2^30");
  regs.register_b_transport(this, &cdma_engine::b_transport);
  regs.register_transport_dbg(this, &cdma_engine::transport_dbg);
  regs.register_get_direct_mem_ptr(this, &cdma_engine::get_direct_mem_ptr);
  gpu_mem.register_nb_transport_bw(this, &cdma_engine::nb_transport_bw);
  gpu_mem.register_invalidate_direct_mem_ptr(this, &cdma_engine::invalidate_direct_mem_ptr);
  pcie.register_nb_transport_bw(this, &cdma_engine::nb_transport_bw);
  pcie.register_invalidate_direct_mem_ptr(this, &cdma_engine::invalidate_direct_mem_ptr);
  qk_.reset();
  in_buf_.resize(p_.window_bytes);
  SC_HAS_PROCESS(cdma_engine);
  SC_THREAD(run);
  SC_METHOD(drive_irq);
  sensitive << irq_ev_;
  dont_initialize();
}

const codec::codec& cdma_engine::codec_for(codec::codec_id id, unsigned width) {
  const unsigned key = static_cast<unsigned>(id) * 16 + width;
  auto it = codecs_.find(key);
  if (it == codecs_.end()) it = codecs_.emplace(key, codec::make_codec(id, width)).first;
  return *it->second;
}

ps_t cdma_engine::local_now() { return now_ps(qk_.get_local_time()); }

void cdma_engine::advance_to(ps_t t) {
  if (t > local_now()) qk_.set(to_sc(t) - sc_core::sc_time_stamp());
  if (qk_.need_sync()) qk_.sync();
}

bool cdma_engine::access(tlm_utils::simple_initiator_socket<cdma_engine>& s, tlm::tlm_command cmd,
                         std::uint64_t addr, std::uint8_t* data, std::size_t len, ps_t at,
                         ps_t& done) {
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
    return false;
  }
  if (cmd == tlm::TLM_READ_COMMAND) bytes_read_ += len; else bytes_written_ += len;
  done = now_ps(delay);
  return true;
}

void cdma_engine::run() {
  for (;;) {
    while (queue_.empty() || !(ctrl_ & reg::CTRL_ENABLE)) wait(doorbell_ev_);
    dma_record r = queue_.front();
    queue_.pop_front();
    busy_ = true;
    execute(r);
    busy_ = false;
  }
}

void cdma_engine::execute(dma_record& r) {
  qk_.sync();  // start each descriptor in step with the kernel
  r.started = local_now();
  const dma_descriptor& d = r.desc;
  dma_error e = dma_error::none;
  if (d.len == 0 || (d.element_width != 1 && d.element_width != 2 && d.element_width != 4)) {
    e = dma_error::bad_descriptor;
  } else {
    switch (d.direction) {
      case dma_direction::copy_d2h: e = copy(d, r, true); break;
      case dma_direction::copy_h2d: e = copy(d, r, false); break;
      case dma_direction::offload:
      case dma_direction::prefetch:
        try {
          codec_for(d.codec, d.element_width);
        } catch (const codec::codec_error&) {
          e = dma_error::bad_descriptor;
          break;
        }
        e = d.direction == dma_direction::offload ? offload(d, r) : prefetch(d, r);
        break;
    }
  }
  r.finished = std::max(local_now(), r.finished);
  advance_to(r.finished);
  qk_.sync();
  r.error = e;
  last_out_ = r.out_data_bytes;
  ++done_count_;
  records_.push_back(r);
  if (e != dma_error::none) {
    error_code_ = static_cast<std::uint32_t>(e);
    error_desc_ = static_cast<std::uint32_t>(r.sequence);
    std::ostringstream m;
    m << "descriptor " << r.sequence << " (" << to_string(d.direction) << ", src 0x" << std::hex
      << d.src << ", dst 0x" << d.dst << ", len " << std::dec << d.len
      << ") failed: " << to_string(e);
    SC_REPORT_WARNING(name(), m.str().c_str());
    raise(reg::IRQ_ERROR);
  } else {
    raise(reg::IRQ_DONE);
  }
}

dma_error cdma_engine::copy(const dma_descriptor& d, dma_record& r, bool to_host) {
  auto& from = to_host ? gpu_mem : pcie;
  auto& to = to_host ? pcie : gpu_mem;
  const dma_error from_err = to_host ? dma_error::gpu_mem_response : dma_error::pcie_response;
  const dma_error to_err = to_host ? dma_error::pcie_response : dma_error::gpu_mem_response;
  dma_pipeline pipe(1, 0.0, 0, p_.max_outstanding);
  pipe.start(local_now());
  const std::size_t W = p_.window_bytes;
  for (std::uint64_t off = 0; off < d.len; off += W) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(W, d.len - off));
    const ps_t issue = pipe.next_issue();
    advance_to(issue);
    ps_t rd = 0, wr = 0;
    if (!access(from, tlm::TLM_READ_COMMAND, d.src + off, in_buf_.data(), n, issue, rd))
      return from_err;
    if (!access(to, tlm::TLM_WRITE_COMMAND, d.dst + off, in_buf_.data(), n, rd, wr)) return to_err;
    pipe.complete(wr);
    r.out_data_bytes += n;
    ++r.windows;
  }
  r.finished = pipe.last_done();
  return dma_error::none;
}

dma_error cdma_engine::offload(const dma_descriptor& d, dma_record& r) {
  const codec::codec& c = codec_for(d.codec, d.element_width);
  const std::size_t W = p_.window_bytes;
  const std::size_t n_win = codec::window_count(d.len, W);
  std::vector<std::uint8_t> table(n_win * codec::window_entry_bytes);
  out_buf_.resize(std::max(W, c.max_compressed_size(W)));
  const double unit_Bps = p_.unit_bytes_per_cycle * p_.clock_hz;
  dma_pipeline pipe(p_.compression_units, unit_Bps,
                    cycles_ps(p_.pipeline_latency_cycles, p_.clock_hz), p_.max_outstanding);
  pipe.start(local_now());
  std::uint64_t out_off = 0;
  for (std::size_t k = 0; k < n_win; ++k) {
    const std::uint64_t off = static_cast<std::uint64_t>(k) * W;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(W, d.len - off));
    const ps_t issue = pipe.next_issue();
    advance_to(issue);
    ps_t rd = 0, wr = 0;
    if (!access(gpu_mem, tlm::TLM_READ_COMMAND, d.src + off, in_buf_.data(), n, issue, rd))
      return dma_error::gpu_mem_response;
    const codec::window_entry e = codec::compress_window(c, in_buf_.data(), n, out_buf_.data());
    const ps_t unit_done = pipe.unit(rd, n);
    if (!access(pcie, tlm::TLM_WRITE_COMMAND, d.dst + out_off, out_buf_.data(), e.bytes,
                unit_done, wr))
      return dma_error::pcie_response;
    pipe.complete(wr);
    codec::encode_entry(e, table.data() + k * codec::window_entry_bytes);
    out_off += e.bytes;
    ++r.windows;
    if (e.raw) { ++r.windows_raw; ++windows_raw_; } else { ++windows_compressed_; }
  }
  comp_busy_ += pipe.unit_busy_ps();
  r.out_data_bytes = out_off;
  ps_t meta_done = 0;
  if (!access(pcie, tlm::TLM_WRITE_COMMAND, d.meta, table.data(), table.size(), pipe.last_done(),
              meta_done))
    return dma_error::pcie_response;
  r.meta_bytes = table.size();
  r.finished = meta_done;
  return dma_error::none;
}

dma_error cdma_engine::prefetch(const dma_descriptor& d, dma_record& r) {
  const codec::codec& c = codec_for(d.codec, d.element_width);
  const std::size_t W = p_.window_bytes;
  const std::size_t n_win = codec::window_count(d.len, W);
  std::vector<std::uint8_t> table(n_win * codec::window_entry_bytes);
  ps_t meta_done = 0;
  if (!access(pcie, tlm::TLM_READ_COMMAND, d.meta, table.data(), table.size(), local_now(),
              meta_done))
    return dma_error::pcie_response;
  r.meta_bytes = table.size();
  // Validate the whole table before moving any data: a window can never take more than the
  // codec's worst case for its uncompressed size.
  std::vector<codec::window_entry> entries(n_win);
  try {
    for (std::size_t k = 0; k < n_win; ++k) {
      entries[k] = codec::decode_entry(table.data() + k * codec::window_entry_bytes);
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(W, d.len - std::uint64_t(k) * W));
      const std::size_t limit = entries[k].raw ? n : c.max_compressed_size(n);
      if (entries[k].bytes > limit || (entries[k].raw && entries[k].bytes != n)) {
        std::ostringstream m;
        m << "metadata entry " << k << " at 0x" << std::hex
          << d.meta + k * codec::window_entry_bytes << std::dec << " claims " << entries[k].bytes
          << " bytes for a " << n << "-byte window" << (entries[k].raw ? " stored raw" : "");
        throw codec::codec_error(m.str());
      }
    }
  } catch (const codec::codec_error& ex) {
    SC_REPORT_WARNING(name(), ex.what());
    r.finished = meta_done;
    return dma_error::corrupt_window;
  }
  out_buf_.resize(W);
  in_buf_.resize(std::max(W, c.max_compressed_size(W)));
  const double unit_Bps = p_.unit_bytes_per_cycle * p_.clock_hz;
  dma_pipeline pipe(p_.decompression_units, unit_Bps,
                    cycles_ps(p_.pipeline_latency_cycles, p_.clock_hz), p_.max_outstanding);
  pipe.start(meta_done);
  std::uint64_t in_off = 0;
  dma_error result = dma_error::none;
  for (std::size_t k = 0; k < n_win; ++k) {
    const std::uint64_t off = static_cast<std::uint64_t>(k) * W;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(W, d.len - off));
    const codec::window_entry& e = entries[k];
    const ps_t issue = pipe.next_issue();
    advance_to(issue);
    ps_t rd = 0, wr = 0;
    if (!access(pcie, tlm::TLM_READ_COMMAND, d.src + in_off, in_buf_.data(), e.bytes, issue, rd)) {
      result = dma_error::pcie_response;
      break;
    }
    try {
      codec::decompress_window(c, e, in_buf_.data(), e.bytes, out_buf_.data(), n);
    } catch (const codec::codec_error& ex) {
      std::ostringstream m;
      m << "window " << k << " at host 0x" << std::hex << d.src + in_off << ": " << ex.what();
      SC_REPORT_WARNING(name(), m.str().c_str());
      result = dma_error::corrupt_window;
      break;
    }
    const ps_t unit_done = pipe.unit(rd, n);
    if (!access(gpu_mem, tlm::TLM_WRITE_COMMAND, d.dst + off, out_buf_.data(), n, unit_done, wr)) {
      result = dma_error::gpu_mem_response;
      break;
    }
    pipe.complete(wr);
    in_off += e.bytes;
    r.out_data_bytes += n;
    ++r.windows;
    if (e.raw) ++r.windows_raw;
  }
  in_buf_.resize(W);
  decomp_busy_ += pipe.unit_busy_ps();
  r.finished = pipe.last_done();
  return result;
}

void cdma_engine::raise(std::uint32_t bits) {
  irq_status_ |= bits;
  update_irq();
}

void cdma_engine::update_irq() { irq_ev_.notify(sc_core::SC_ZERO_TIME); }

void cdma_engine::drive_irq() { irq.write((irq_status_ & irq_enable_) != 0); }

void cdma_engine::soft_reset() {
  queue_.clear();
  irq_status_ = 0;
  error_code_ = error_desc_ = 0;
  done_count_ = 0;
  windows_compressed_ = windows_raw_ = 0;
  bytes_read_ = bytes_written_ = last_out_ = 0;
  desc_src_ = desc_dst_ = desc_len_ = desc_meta_ = 0;
  desc_ctrl_ = 0;
  update_irq();
}

// ---- register target ----------------------------------------------------------------

static std::uint32_t lo(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
static std::uint32_t hi(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }
static void set_lo(std::uint64_t& r, std::uint32_t v) { r = (r & ~0xFFFFFFFFull) | v; }
static void set_hi(std::uint64_t& r, std::uint32_t v) {
  r = (r & 0xFFFFFFFFull) | (static_cast<std::uint64_t>(v) << 32);
}

bool cdma_engine::reg_read(std::uint32_t off, std::uint32_t& v) const {
  switch (off) {
    case reg::ID: v = reg::ID_VALUE; return true;
    case reg::VERSION: v = reg::VERSION_VALUE; return true;
    case reg::CTRL: v = ctrl_; return true;
    case reg::STATUS:
      v = ((busy_ || !queue_.empty()) ? reg::STATUS_BUSY : 0) |
          ((irq_status_ & reg::IRQ_ERROR) ? reg::STATUS_ERROR : 0);
      return true;
    case reg::ERROR_CODE: v = error_code_; return true;
    case reg::IRQ_ENABLE: v = irq_enable_; return true;
    case reg::IRQ_STATUS: v = irq_status_; return true;
    case reg::DESC_SRC_LO: v = lo(desc_src_); return true;
    case reg::DESC_SRC_HI: v = hi(desc_src_); return true;
    case reg::DESC_DST_LO: v = lo(desc_dst_); return true;
    case reg::DESC_DST_HI: v = hi(desc_dst_); return true;
    case reg::DESC_LEN_LO: v = lo(desc_len_); return true;
    case reg::DESC_LEN_HI: v = hi(desc_len_); return true;
    case reg::DESC_META_LO: v = lo(desc_meta_); return true;
    case reg::DESC_META_HI: v = hi(desc_meta_); return true;
    case reg::DESC_CTRL: v = desc_ctrl_; return true;
    case reg::DOORBELL: v = 0; return true;
    case reg::DONE_COUNT: v = done_count_; return true;
    case reg::QUEUE_DEPTH: v = static_cast<std::uint32_t>(queue_.size()); return true;
    case reg::LAST_OUT_LO: v = lo(last_out_); return true;
    case reg::LAST_OUT_HI: v = hi(last_out_); return true;
    case reg::ERROR_DESC: v = error_desc_; return true;
    case reg::BYTES_READ_LO: v = lo(bytes_read_); return true;
    case reg::BYTES_READ_HI: v = hi(bytes_read_); return true;
    case reg::BYTES_WRITTEN_LO: v = lo(bytes_written_); return true;
    case reg::BYTES_WRITTEN_HI: v = hi(bytes_written_); return true;
    case reg::WINDOWS_COMPRESSED: v = windows_compressed_; return true;
    case reg::WINDOWS_RAW: v = windows_raw_; return true;
    default: return false;
  }
}

bool cdma_engine::reg_write(std::uint32_t off, std::uint32_t v) {
  switch (off) {
    case reg::CTRL:
      if (v & reg::CTRL_SOFT_RESET) soft_reset();
      ctrl_ = v & reg::CTRL_ENABLE;
      doorbell_ev_.notify(sc_core::SC_ZERO_TIME);
      return true;
    case reg::IRQ_ENABLE: irq_enable_ = v & (reg::IRQ_DONE | reg::IRQ_ERROR); update_irq(); return true;
    case reg::IRQ_STATUS: irq_status_ &= ~v; update_irq(); return true;
    case reg::DESC_SRC_LO: set_lo(desc_src_, v); return true;
    case reg::DESC_SRC_HI: set_hi(desc_src_, v); return true;
    case reg::DESC_DST_LO: set_lo(desc_dst_, v); return true;
    case reg::DESC_DST_HI: set_hi(desc_dst_, v); return true;
    case reg::DESC_LEN_LO: set_lo(desc_len_, v); return true;
    case reg::DESC_LEN_HI: set_hi(desc_len_, v); return true;
    case reg::DESC_META_LO: set_lo(desc_meta_, v); return true;
    case reg::DESC_META_HI: set_hi(desc_meta_, v); return true;
    case reg::DESC_CTRL: desc_ctrl_ = v; return true;
    case reg::DOORBELL: {
      if (!(v & 1u)) return true;
      dma_record r;
      r.sequence = sequence_++;
      r.desc.direction = static_cast<dma_direction>(desc_ctrl_ & 0x3u);
      r.desc.codec = static_cast<codec::codec_id>((desc_ctrl_ >> 4) & 0xFu);
      r.desc.element_width = (desc_ctrl_ >> 8) & 0xFu;
      r.desc.src = desc_src_;
      r.desc.dst = desc_dst_;
      r.desc.len = desc_len_;
      r.desc.meta = desc_meta_;
      r.queued = now_ps();
      if (queue_.size() >= p_.queue_depth) {
        error_code_ = static_cast<std::uint32_t>(dma_error::queue_full);
        error_desc_ = static_cast<std::uint32_t>(r.sequence);
        SC_REPORT_WARNING(name(), "doorbell with the descriptor queue full: descriptor dropped");
        raise(reg::IRQ_ERROR);
        return true;
      }
      queue_.push_back(r);
      doorbell_ev_.notify(sc_core::SC_ZERO_TIME);
      return true;
    }
    default: {
      std::uint32_t ignored;
      return reg_read(off, ignored);  // read-only registers ignore writes
    }
  }
}

void cdma_engine::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& d) {
  d += to_sc(p_.register_latency_ps);
  if (transport_dbg(p) == 0 && p.get_response_status() == tlm::TLM_OK_RESPONSE)
    p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
}

unsigned int cdma_engine::transport_dbg(tlm::tlm_generic_payload& p) {
  const std::uint64_t a = p.get_address();
  if (p.get_data_length() != 4 || p.get_streaming_width() < 4 || (a & 3u) != 0) {
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return 0;
  }
  if (p.get_byte_enable_ptr() != nullptr) {
    p.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return 0;
  }
  if (a >= reg::SIZE) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  const auto off = static_cast<std::uint32_t>(a);
  std::uint32_t v = 0;
  bool ok = false;
  if (p.is_read()) {
    ok = reg_read(off, v);
    if (ok) std::memcpy(p.get_data_ptr(), &v, 4);
  } else if (p.is_write()) {
    std::memcpy(&v, p.get_data_ptr(), 4);
    ok = reg_write(off, v);
  } else {
    p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return 0;
  }
  if (!ok) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  return 4;
}

bool cdma_engine::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  // Registers have side effects: no DMI. Deny over the whole register space.
  dmi.set_start_address(0);
  dmi.set_end_address(reg::SIZE - 1);
  dmi.allow_none();
  return false;
}

tlm::tlm_sync_enum cdma_engine::nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase&,
                                                sc_core::sc_time&) {
  // The engine is loosely timed: it only calls b_transport, so no backward calls arrive.
  SC_REPORT_ERROR(name(), "unexpected nb_transport_bw: the engine issues only b_transport");
  p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
  return tlm::TLM_COMPLETED;
}

}  // namespace cdma
