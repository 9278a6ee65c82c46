#include "workloads/vdnn/vdnn_runtime.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include "tlm/codec/window.h"
#include "tlm/core/sc_time_util.h"

namespace cdma::workloads {

std::string to_string(vdnn_policy p) {
  switch (p) {
    case vdnn_policy::none: return "none";
    case vdnn_policy::all: return "all";
    case vdnn_policy::conv: return "conv";
  }
  return "unknown";
}

vdnn_policy policy_from_string(const std::string& s) {
  if (s == "none") return vdnn_policy::none;
  if (s == "all") return vdnn_policy::all;
  if (s == "conv") return vdnn_policy::conv;
  throw std::invalid_argument("unknown vDNN policy '" + s + "'; expected none, all or conv");
}

namespace {
std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

vdnn_runtime::vdnn_runtime(sc_core::sc_module_name name, const network& net,
                           std::vector<layer_time> times, activation_source& source,
                           mem::region_host& gpu_regions, const vdnn_runtime_params& p)
    : sc_module(name), regs("regs"), gpu_mem("gpu_mem"), irq("irq"), net_(net),
      times_(std::move(times)), source_(source), gpu_regions_(gpu_regions), p_(p),
      conv_inputs_(conv_input_keys(net_)), uses_(tensor_use_layers(net_)) {
  if (times_.size() != net_.layers.size())
    throw std::invalid_argument(std::string(this->name()) + ": " +
                                std::to_string(times_.size()) + " layer times for " +
                                std::to_string(net_.layers.size()) + " layers");
  producer_ = std::make_shared<chunk_producer>(source_, p_.produce_ahead_chunks, true, p_.produce_threads);
  regs.register_nb_transport_bw(this, &vdnn_runtime::nb_transport_bw);
  gpu_mem.register_nb_transport_bw(this, &vdnn_runtime::nb_transport_bw);
  // Host buffers: one data region and one metadata table per layer, never reused within a
  // step (all offloaded tensors are held until backward). GPU: gpu_slots() slots, used by
  // the transfers in flight.
  for (const layer& l : net_.layers) slot_bytes_ = std::max(slot_bytes_, align_up(l.offload.elements() * 4, 4096));
  const std::size_t n = net_.layers.size();
  offloads_at_.assign(n, {});
  needed_at_.assign(n, {});
  for (std::size_t i = 0; i < n; ++i) {
    offloads_at_[uses_[i].first].push_back(i);
    needed_at_[uses_[i].last].push_back(i);
  }
  slot_of_.assign(n, 0);
  slot_mapped_.assign(gpu_slots(net_), false);
  host_layout(net_, p_.window_bytes, p_.host_base, &host_data_, &host_meta_);
  SC_HAS_PROCESS(vdnn_runtime);
  SC_THREAD(run);
}

std::uint64_t vdnn_runtime::host_layout(const network& net, std::size_t window_bytes, std::uint64_t host_base,
                                        std::vector<std::uint64_t>* data, std::vector<std::uint64_t>* meta) {
  std::uint64_t host = host_base;
  for (const layer& l : net.layers) {
    if (data) data->push_back(host);
    host += align_up(l.offload.elements() * 4, 4096);
  }
  for (const layer& l : net.layers) {
    if (meta) meta->push_back(host);
    host += align_up(codec::window_count(l.offload.elements() * 4, window_bytes) * codec::window_entry_bytes, 64);
  }
  return host;
}

std::size_t vdnn_runtime::gpu_slots(const network& net) {
  // The most tensors one layer moves under policy all (every X_i but the last layer's input):
  // in its forward pass (first consumer) or its backward pass (last consumer).
  const std::vector<tensor_uses> u = tensor_use_layers(net);
  const std::size_t n = net.layers.size();
  std::vector<std::size_t> out(n, 0), back(n, 0);
  std::size_t most = 3;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    most = std::max(most, ++out[u[i].first]);
    most = std::max(most, ++back[u[i].last]);
  }
  return most;
}

void vdnn_runtime::assign_slots(const std::vector<std::size_t>& tensors) {
  std::vector<bool> used(slot_mapped_.size(), false);
  std::vector<std::size_t> rest;
  for (std::size_t j : tensors) {
    if (!used[j % 3]) {
      slot_of_[j] = j % 3;
      used[j % 3] = true;
    } else {
      rest.push_back(j);
    }
  }
  for (std::size_t j : rest) {
    std::size_t k = 0;
    while (used[k]) ++k;  // gpu_slots() >= the tensors one layer moves
    slot_of_[j] = k;
    used[k] = true;
  }
}

std::vector<std::size_t> vdnn_runtime::not_back(std::size_t k, const step_result& r,
                                                const std::vector<bool>& prefetched) const {
  std::vector<std::size_t> v;
  for (std::size_t j : needed_at_[k])
    if (r.layers[j].offloaded && !prefetched[j]) v.push_back(j);
  return v;
}

std::size_t vdnn_runtime::prefetch_target(std::size_t i, const step_result& r,
                                          const std::vector<bool>& prefetched) const {
  // vDNN (MICRO 2016, §III-C): the nearest earlier layer with an input that was offloaded and
  // is not back yet, searching no further back than the closest convolution layer. A layer's
  // inputs that are not back are exactly those it is the last consumer of (a tensor with a
  // later consumer L came back before L's backward pass, or L lies between and is found
  // first), so needed_at_ is searched.
  for (std::size_t k = i; k-- > 0;) {
    if (!not_back(k, r, prefetched).empty()) return k;
    if (net_.layers[k].kind == layer_kind::conv) break;
  }
  return net_.layers.size();
}

bool vdnn_runtime::offloaded(std::size_t i, vdnn_policy p) const {
  if (i + 1 >= net_.layers.size()) return false;  // the last layer's input stays resident
  switch (p) {
    case vdnn_policy::none: return false;
    case vdnn_policy::all: return true;
    // Exactly the tensors a convolution reads (a concatenation's parts included).
    case vdnn_policy::conv: return conv_inputs_.count(net_.layers[i].offload_key) > 0;
  }
  return false;
}

void vdnn_runtime::reg_access(tlm::tlm_command cmd, std::uint32_t off, std::uint32_t& v) {
  const bool rd = cmd == tlm::TLM_READ_COMMAND;
  auto fail = [&](const tlm::tlm_generic_payload& t) {
    SC_REPORT_ERROR(name(), (std::string("register ") + (rd ? "read of" : "write to") + " offset " +
                             std::to_string(off) + " failed: " + t.get_response_string()).c_str());
  };
  if (!p_.approximately_timed) {
    tlm::tlm_generic_payload t;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    t.set_command(cmd);
    t.set_address(off);
    t.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
    t.set_data_length(4);
    t.set_streaming_width(4);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    regs->b_transport(t, d);
    if (t.is_response_error()) fail(t);
    wait(d);
    return;
  }
  // Approximately timed: BEGIN_REQ, then the response (on the return path or the backward
  // path, which completes it); one access at a time, as a CPU core's uncached MMIO.
  tlm::tlm_generic_payload* t = pool_.allocate();
  t->acquire();
  t->set_command(cmd);
  t->set_address(off);
  t->set_data_ptr(reinterpret_cast<unsigned char*>(&v));
  t->set_data_length(4);
  t->set_streaming_width(4);
  t->set_byte_enable_ptr(nullptr);
  t->set_dmi_allowed(false);
  t->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  mmio_ = t;
  mmio_done_ = false;
  tlm::tlm_phase ph = tlm::BEGIN_REQ;
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum st = regs->nb_transport_fw(*t, ph, d);
  if (st == tlm::TLM_COMPLETED) {
    wait(d);
  } else if (st == tlm::TLM_UPDATED && ph == tlm::BEGIN_RESP) {
    wait(d);
    tlm::tlm_phase end = tlm::END_RESP;
    sc_core::sc_time d2 = sc_core::SC_ZERO_TIME;
    regs->nb_transport_fw(*t, end, d2);
  } else {
    while (!mmio_done_) wait(mmio_ev_);  // END_REQ (if any) then BEGIN_RESP on the backward path
  }
  mmio_ = nullptr;
  if (t->is_response_error()) fail(*t);
  t->release();
}

void vdnn_runtime::write_reg(std::uint32_t off, std::uint32_t v) { reg_access(tlm::TLM_WRITE_COMMAND, off, v); }

std::uint32_t vdnn_runtime::read_reg(std::uint32_t off) {
  std::uint32_t v = 0;
  reg_access(tlm::TLM_READ_COMMAND, off, v);
  return v;
}

std::uint64_t vdnn_runtime::submit(dma_direction dir, std::uint64_t src, std::uint64_t dst,
                                   std::uint64_t len, std::uint64_t meta,
                                   const vdnn_step_config& cfg) {
  // As a driver does: wait for a free ring slot, write the descriptor into the ring in GPU
  // memory (the CPU's own store, modelled by debug transport), then ring the tail doorbell.
  const std::uint32_t next = (ring_tail_ + 1) % ring_size_;
  // A full ring (a layer of a branched network moving more tensors than the ring holds): the
  // completions it waits for are acknowledged here, so that each raises the interrupt again
  // (overlap() counts them by DONE_COUNT and each descriptor's write-back).
  // The HEAD read also tells which descriptors have completed (those no longer between HEAD
  // and TAIL): their completion times are kept for overlap() (seen_done_), which otherwise
  // would first see them after the ring had room, late by the wait here.
  for (;;) {
    const std::uint32_t head = read_reg(reg::RING_HEAD);
    const std::uint64_t done = submitted_ - (ring_tail_ + ring_size_ - head) % ring_size_;
    for (; seen_through_ < done; ++seen_through_) seen_done_.emplace(seen_through_ + 1, now_ps());
    if (head != next) break;
    if (irq.read()) write_reg(reg::IRQ_STATUS, read_reg(reg::IRQ_STATUS));
    else wait(irq.posedge_event());
  }
  dma_descriptor d;
  d.direction = dir;
  d.src = src;
  d.dst = dst;
  d.len = len;
  d.meta = meta;
  d.codec = cfg.codec;
  d.element_width = cfg.element_width;
  d.user = submitted_ + 1;
  std::uint8_t bytes[desc::SIZE];
  encode_descriptor(d, bytes);
  dbg(tlm::TLM_WRITE_COMMAND, ring_base_ + std::uint64_t(ring_tail_) * desc::SIZE, bytes, desc::SIZE);
  ring_tail_ = next;
  write_reg(reg::RING_TAIL, ring_tail_);
  return ++submitted_;
}

void vdnn_runtime::overlap(ps_t t0, ps_t compute, std::vector<transfer>& transfers, step_result& r) {
  const ps_t compute_end = t0 + compute;
  std::size_t next = 0;  // the first descriptor not seen completed
  const std::size_t count = transfers.size();
  for (transfer& t : transfers) t.done_at = t.began = t0;  // (each is set when its completion is seen)
  compute_busy.write(compute > 0);
  transfer_busy.write(count > 0);
  for (;;) {
    // The descriptors complete in ring order; each completion is acknowledged (IRQ_STATUS
    // cleared) so that the next one raises the interrupt again.
    while (next < count && (irq.read() || read_reg(reg::DONE_COUNT) >= transfers[next].seq)) {
      if (read_reg(reg::DONE_COUNT) < transfers[next].seq) break;
      transfer& t = transfers[next++];
      t.done_at = now_ps();
      if (const auto seen = seen_done_.find(t.seq); seen != seen_done_.end()) {  // seen by submit() already
        t.done_at = std::min(t.done_at, seen->second);
        seen_done_.erase(seen);
      }
      seen_through_ = std::max(seen_through_, t.seq);
      t.began = next >= 2 ? std::max(t.submitted, transfers[next - 2].done_at) : t.submitted;
      if (next == count) transfer_busy.write(false);
      const std::uint32_t status = read_reg(reg::IRQ_STATUS);
      write_reg(reg::IRQ_STATUS, status);
      // The descriptor's own write-back status says whether *it* failed.
      std::uint8_t wb[desc::WRITEBACK_BYTES];
      const std::uint32_t index = static_cast<std::uint32_t>((t.seq - 1) % ring_size_);
      dbg(tlm::TLM_READ_COMMAND, ring_base_ + std::uint64_t(index) * desc::SIZE + desc::STATUS,
          wb, sizeof wb);
      const std::uint32_t ds = load_le32(wb);
      std::uint64_t out = 0;
      for (std::size_t b = 0; b < 8; ++b)
        out |= std::uint64_t(wb[desc::OUT_BYTES - desc::STATUS + b]) << (8 * b);
      t.out_bytes = out;
      if (ds & desc::STATUS_ERROR) {
        const auto code = static_cast<dma_error>((ds >> 8) & 0xFFu);
        std::ostringstream m;
        m << t.what << ": " << to_string(code) << " (descriptor " << index << ", address 0x"
          << std::hex << ((std::uint64_t(read_reg(reg::ERROR_ADDR_HI)) << 32) |
                          read_reg(reg::ERROR_ADDR_LO))
          << ")";
        r.errors.push_back(m.str());
        SC_REPORT_WARNING(name(), m.str().c_str());
      }
    }
    const bool done = next == count;
    const ps_t now = now_ps();
    if (now >= compute_end) compute_busy.write(false);
    if (done) {
      if (now < compute_end) wait(to_sc(compute_end - now));
      compute_busy.write(false);
      return;
    }
    if (now < compute_end)
      wait(to_sc(compute_end - now), irq.posedge_event());
    else if (!irq.read())
      wait(irq.posedge_event());
  }
}

void vdnn_runtime::dbg(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                       std::size_t len) {
  tlm::tlm_generic_payload t;
  t.set_command(cmd);
  t.set_address(addr);
  t.set_data_ptr(data);
  t.set_data_length(static_cast<unsigned>(len));
  t.set_streaming_width(static_cast<unsigned>(len));
  const unsigned n = gpu_mem->transport_dbg(t);
  if (n != len) {
    std::ostringstream m;
    m << "debug " << (cmd == tlm::TLM_READ_COMMAND ? "read" : "write") << " of " << len
      << " bytes at GPU address 0x" << std::hex << addr << " moved only " << std::dec << n;
    SC_REPORT_ERROR(name(), m.str().c_str());
  }
}

// Regions still mapped in the GPU memory may keep records (and the producer) alive after
// the runtime; the worker must not call the source beyond this point.
vdnn_runtime::~vdnn_runtime() { producer_->stop(); }

std::uint64_t vdnn_runtime::slot(std::size_t i) const { return p_.gpu_base + slot_of_[i] * slot_bytes_; }

void vdnn_runtime::map_slot(std::size_t i, std::shared_ptr<mem::content_region> region) {
  const std::size_t k = slot_of_[i];
  if (slot_mapped_[k]) gpu_regions_.unmap_region(slot(i));
  slot_mapped_[k] = false;
  const std::uint64_t bytes = net_.layers[i].offload.elements() * 4;
  if (bytes == 0) return;
  gpu_regions_.map_region(slot(i), bytes, std::move(region));
  slot_mapped_[k] = true;
}

void vdnn_runtime::release_slots() {
  for (std::size_t k = 0; k < slot_mapped_.size(); ++k)
    if (slot_mapped_[k]) {
      gpu_regions_.unmap_region(p_.gpu_base + k * slot_bytes_);
      slot_mapped_[k] = false;
    }
}

void vdnn_runtime::produce(std::size_t i) {
  const layer& l = net_.layers[i];
  records_[i] = std::make_shared<tensor_record>(producer_, l.offload_key, l.offload);
}

void vdnn_runtime::expect_offload(std::size_t i) {
  map_slot(i, std::make_shared<tensor_source_region>(records_[i]));
}

void vdnn_runtime::expect_prefetch(std::size_t i) {
  // vDNN released the buffer after the offload: nothing of X_i is left in GPU memory; the
  // region accepts the prefetched bytes and checks them.
  map_slot(i, std::make_shared<tensor_sink_region>(records_[i]));
}

void vdnn_runtime::release_host(std::size_t i) {
  if (on_host_release) on_host_release(host_data_[i], align_up(net_.layers[i].offload.elements() * 4, 4096));
}

void vdnn_runtime::verify(std::size_t i, step_result& r) {
  const tensor_record& rec = *records_[i];
  const std::uint64_t bad = rec.mismatched_bytes();
  r.verified_bytes += rec.bytes();
  r.mismatched_bytes += bad;
  if (bad) {
    std::ostringstream m;
    m << "layer " << net_.layers[i].name << ": " << bad << " of " << rec.bytes()
      << " prefetched bytes differ from what was offloaded";
    if (const std::uint64_t u = rec.unwritten_bytes()) m << " (" << u << " never written)";
    r.errors.push_back(m.str());
    SC_REPORT_WARNING(name(), m.str().c_str());
  }
}

void vdnn_runtime::step(const vdnn_step_config& cfg, step_result& r) {
  const std::size_t n = net_.layers.size();
  r.config = cfg;
  r.layers.assign(n, layer_result{});
  const ps_t t_start = now_ps();
  r.start = t_start;
  records_.assign(n, nullptr);
  for (std::size_t i = 0; i < n; ++i) {
    r.layers[i].bytes = net_.layers[i].offload.elements() * 4;
    r.layers[i].offloaded = offloaded(i, cfg.policy);
  }
  // A tensor's record (its chunks produced ahead by the workers) is created when the layer
  // before its offload starts (X_{f+1}, the layer's output, on a chain): not earlier, so a
  // tensor waiting for a later first consumer holds no produced chunks (wall time and memory).
  auto produce_for = [&](std::size_t f) {
    if (f < n)
      for (std::size_t i : offloads_at_[f])
        if (r.layers[i].offloaded && !records_[i]) produce(i);
  };
  produce_for(0);

  // The driver's bookkeeping reads (LAST_OUT) of layer f's last offload happen while layer
  // f+1's kernel runs, so they never extend a layer (with a fast link vDNN equals the oracle);
  // the other offloads of layer f take OUT_BYTES from their descriptors' write-back.
  std::size_t pending_out = n;
  auto collect_out = [&] {
    if (pending_out >= n) return;
    r.layers[pending_out].moved_data_bytes =
        (static_cast<std::uint64_t>(read_reg(reg::LAST_OUT_HI)) << 32) | read_reg(reg::LAST_OUT_LO);
    pending_out = n;
  };
  std::vector<transfer> transfers;
  for (std::size_t f = 0; f < n; ++f) {
    const layer& l = net_.layers[f];
    layer_result& lf = r.layers[f];
    lf.forward = times_[f].forward;
    lf.backward = times_[f].backward;
    const ps_t t0 = now_ps();
    lf.forward_start = t0;
    if (on_layer) on_layer(cfg.label, true, f, n);
    if (on_kernel) on_kernel(true, f);
    collect_out();
    produce_for(f + 1);
    // The input tensors layer f is the first consumer of (X_f on a chain), mapped where the
    // engine reads them, offloaded in index order.
    std::vector<std::size_t> out;
    for (std::size_t i : offloads_at_[f])
      if (r.layers[i].offloaded) out.push_back(i);
    assign_slots(out);
    transfers.clear();
    for (std::size_t i : out) {
      expect_offload(i);
      transfers.push_back({submit(cfg.compress ? dma_direction::offload : dma_direction::copy_d2h, slot(i),
                                  host_data_[i], r.layers[i].bytes, host_meta_[i], cfg),
                           "offload of " + (i == f ? l.name + "'s input" : "X_" + std::to_string(i) + " (" +
                                            net_.layers[i].offload_key + ") during " + l.name)});
      transfers.back().submitted = transfers.size() == 1 ? t0 : now_ps();
    }
    overlap(t0, lf.forward, transfers, r);
    for (std::size_t t = 0; t < out.size(); ++t) {
      layer_result& li = r.layers[out[t]];
      li.offload = transfers[t].done_at - transfers[t].began;  // its own, not the wait behind earlier ones
      li.offload_during = f;
      li.offload_start = transfers[t].began;
      li.zeros = records_[out[t]]->zeros();
      li.moved_data_bytes = transfers[t].out_bytes;
      if (cfg.compress)
        li.meta_bytes = codec::window_count(li.bytes, p_.window_bytes) * codec::window_entry_bytes;
    }
    if (!out.empty()) pending_out = out.back();  // LAST_OUT is read at the next layer's start, hidden by its kernel
    lf.forward_stall = now_ps() - t0 - lf.forward;
  }
  const ps_t t_mid = now_ps();
  std::vector<bool> prefetched(n, false);
  for (std::size_t i = n; i-- > 0;) {
    const ps_t t0 = now_ps();
    r.layers[i].backward_start = t0;
    if (on_layer) on_layer(cfg.label, false, i, n);
    collect_out();
    // Fetches (one layer's worth, each tensor in its own slot) in index order, issued at
    // `from` (the first one's start).
    auto fetch = [&](const std::vector<std::size_t>& js, const std::string& what, ps_t from) {
      assign_slots(js);
      transfers.clear();
      for (std::size_t j : js) {
        expect_prefetch(j);
        prefetched[j] = true;
        transfers.push_back({submit(cfg.compress ? dma_direction::prefetch : dma_direction::copy_h2d,
                                    host_data_[j], slot(j), r.layers[j].bytes, host_meta_[j], cfg),
                             what + " of " + (j == i || js.size() == 1 ? net_.layers[j].name + "'s input"
                                                                       : "X_" + std::to_string(j) + " (" +
                                                                             net_.layers[j].offload_key + ")")});
        transfers.back().submitted = transfers.size() == 1 ? from : now_ps();
      }
    };
    auto fetched = [&](const std::vector<std::size_t>& js, bool on_demand) {
      for (std::size_t t = 0; t < js.size(); ++t) {
        layer_result& lj = r.layers[js[t]];
        lj.on_demand = on_demand;
        lj.prefetch = transfers[t].done_at - transfers[t].began;  // its own, not the wait behind earlier ones
        lj.prefetch_during = i;
        lj.prefetch_start = transfers[t].began;
        if (p_.verify) verify(js[t], r);
        release_host(js[t]);
      }
    };
    // The tensors layer i is the last consumer of (X_i on a chain), offloaded and not back yet:
    // fetched on demand before the kernel runs.
    const std::vector<std::size_t> on_demand = not_back(i, r, prefetched);
    if (!on_demand.empty()) {
      fetch(on_demand, "on-demand fetch", t0);
      overlap(t0, 0, transfers, r);
      fetched(on_demand, true);
    }
    const ps_t tc = now_ps();
    if (on_kernel) on_kernel(false, i);  // after an on-demand fetch, if there was one
    const std::size_t k = prefetch_target(i, r, prefetched);
    const std::vector<std::size_t> ahead = k < n ? not_back(k, r, prefetched) : std::vector<std::size_t>{};
    if (!ahead.empty()) fetch(ahead, "prefetch", tc);
    else transfers.clear();
    overlap(tc, r.layers[i].backward, transfers, r);
    fetched(ahead, false);
    r.layers[i].backward_stall = now_ps() - t0 - r.layers[i].backward;
  }
  release_slots();
  records_.clear();
  r.forward = t_mid - t_start;
  r.backward = now_ps() - t_mid;
  r.step = now_ps() - t_start;
}

void vdnn_runtime::run() {
  // Driver init: a 16-entry descriptor ring in GPU memory after the activation slots,
  // interrupts on every completion and on errors, engine enabled.
  ring_base_ = align_up(p_.gpu_base + slot_mapped_.size() * slot_bytes_, 4096);
  ring_size_ = std::min<std::uint32_t>(16, read_reg(reg::RING_MAX));
  ring_tail_ = 0;
  write_reg(reg::RING_BASE_LO, static_cast<std::uint32_t>(ring_base_));
  write_reg(reg::RING_BASE_HI, static_cast<std::uint32_t>(ring_base_ >> 32));
  write_reg(reg::RING_CTRL, 0);  // ring in GPU memory: fetched over gpu_mem
  write_reg(reg::RING_SIZE, ring_size_);
  write_reg(reg::IRQ_COALESCE_COUNT, 1);
  write_reg(reg::IRQ_ENABLE, reg::IRQ_DONE | reg::IRQ_ERROR);
  write_reg(reg::CTRL, reg::CTRL_ENABLE);
  for (const vdnn_step_config& cfg : p_.steps) {
    step_result r;
    step(cfg, r);
    if (drain) drain();
    results_.push_back(std::move(r));
    if (on_step_done) on_step_done(results_.back());
  }
  finished_ = true;
  sc_core::sc_stop();
}

tlm::tlm_sync_enum vdnn_runtime::nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph,
                                                 sc_core::sc_time& d) {
  if (&p != mmio_) {
    SC_REPORT_ERROR(name(), "nb_transport_bw for a transaction the runtime has not issued");
    return tlm::TLM_COMPLETED;
  }
  if (ph == tlm::END_REQ) return tlm::TLM_ACCEPTED;
  if (ph == tlm::BEGIN_RESP) {  // the initiator completes on the backward path
    mmio_done_ = true;
    mmio_ev_.notify(d);
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR(name(), "nb_transport_bw: unexpected phase (base protocol)");
  return tlm::TLM_COMPLETED;
}

}  // namespace cdma::workloads
