#include "platform/report.h"
#include "platform/outputs.h"

#include <cerrno>
#include <cstring>

#include <cmath>
#include <boost/histogram.hpp>
#include "platform/config.h"
#include "tlm/codec/codec.h"
#include "tlm/core/quantity.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace cdma::platform {

namespace {

double ms(ps_t t) { return ps_to_s(t) * 1e3; }

/// The GPU memory model of the header: its DRAM timing preset (docs/dram.md), or "bus model"
/// (new-user trial s18: the header gave only the bandwidth, GDDR5 and HBM2 looked alike).
std::string dram_name(const gpu_memory_params& m) {
  if (m.model != gpu_memory_model::dram) return "bus model";
  try {
    const std::string p = m.resolved_dram_preset();
    return p.empty() ? "bus model" : p;
  } catch (const std::exception&) {
    return "bus model";  // (validated before a run; kept total for the report)
  }
}
double MB(std::uint64_t b) { return static_cast<double>(b) / 1e6; }

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

const layer_dram& dram_of(const step_report& s, std::size_t i) {
  static const layer_dram none{};
  return i < s.dram_layers.size() ? s.dram_layers[i] : none;
}

/// A figure of a step that was simulated, formatted with `f`; "-" for a step that did not run
/// (--steps, or stopped by an I/O error): its figures are unknown, never 0.
std::string ran_fmt(bool ran, const char* f, double v) { return ran ? fmt(f, v) : std::string("-"); }

/// The JSON form of the same rule: the value of a step that ran, else null (the key stays).
template <typename T>
nlohmann::json ran_json(bool ran, const T& v) {
  return ran ? nlohmann::json(v) : nlohmann::json();
}

/// The cDMA step ran and moved bytes (a layer was offloaded): only then is there a compression
/// ratio (run_report::compression_ratio() says 1.0 for nothing moved; a network whose layers
/// all stay resident offloads nothing).
bool compressed_any(const run_report& r) {
  if (!r.cdma.simulated) return false;
  for (const auto& l : r.cdma.result.layers)
    if (l.offloaded && l.moved_data_bytes + l.meta_bytes > 0) return true;
  return false;
}

/// Characters a terminal shows for `s` (printable() text: ASCII and well-formed UTF-8): its
/// bytes that do not continue a UTF-8 sequence.
std::size_t shown_width(const std::string& s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

double ratio(const workloads::layer_result& l) {
  const std::uint64_t moved = l.moved_data_bytes + l.meta_bytes;
  return moved ? static_cast<double>(l.bytes) / static_cast<double>(moved) : 0.0;
}

/// Where the layer kernel times came from (the header's "kernels" line, new-user trial s19):
/// "times from times.csv (11 layers measured), roofline for 0", or "roofline times (no
/// --layer-times table)".
std::string kernel_times(const run_report& r) {
  // With gpu.kernel_traffic the kernels' DRAM traffic competes with the engine's (new-user
  // trial s23 F8: nothing in the header told such a run from one without).
  const std::string traffic =
      r.config.kernel_traffic ? "; their DRAM traffic issued to the GPU memory (" +
                                    format_bytes(r.config.kernel.request_bytes) + " requests)"
                              : "";
  if (r.config.layer_times.empty()) return "roofline times (no --layer-times table)" + traffic;
  const std::size_t n = r.net.layers.size(), m = std::min(r.measured_layers, n);
  return "times from " + printable(std::filesystem::path(r.config.layer_times).filename().string()) + " (" +
         std::to_string(m) + (m == 1 ? " layer" : " layers") + " measured), roofline for " + std::to_string(n - m) +
         traffic;
}


}  // namespace

double cdma_read_Bps(const step_report& s, std::size_t i) {
  if (i >= s.dram_layers.size() || i >= s.result.layers.size()) return 0.0;
  const auto& l = s.result.layers[i];
  const std::size_t f = l.offload_during;  // i on a chain
  if (!l.offloaded || !l.offload || f >= s.dram_layers.size()) return 0.0;
  // Several tensors offloaded in layer f's forward pass (a branched network) share its reads:
  // bytes read during the layer / from the first one's start (the layer's) until the last of
  // them completed (each one's offload time is its own, one after the other).
  ps_t begin = l.offload_start, end = 0;
  for (const auto& o : s.result.layers)
    if (o.offloaded && o.offload_during == f) {
      begin = std::min(begin, o.offload_start);
      end = std::max(end, o.offload_start + o.offload);
    }
  return static_cast<double>(s.dram_layers[f].fwd_cdma_read) / ps_to_s(end - begin);
}

bool offloaded_in(const step_report& s, std::size_t i) {
  return s.simulated && i < s.result.layers.size() && s.result.layers[i].offloaded;
}

double zero_fraction(const run_report& r, std::size_t i) {
  const step_report& s = r.cdma.simulated ? r.cdma : r.vdnn;
  if (!offloaded_in(s, i)) return -1.0;
  const auto& l = s.result.layers[i];
  return l.bytes ? static_cast<double>(l.zeros) * 4 / static_cast<double>(l.bytes) : 0.0;
}

/// One compression unit's rate as the report's header shows it: "32", or for a codec with its
/// own rate (cdma.codec_bytes_per_cycle.<codec>) "4 (zlib's own; the unit rate is 32)", and a
/// decompression rate of its own (cdma.codec_decompression_bytes_per_cycle.<codec>) after it:
/// "4 (zlib's own; the unit rate is 32; decompression 16)".
static std::string unit_rate_text(const platform_config& c) {
  std::ostringstream os;
  codec::codec_id id = codec::codec_id::zvc;
  try {
    id = codec::codec_from_string(c.codec);
  } catch (const std::exception&) {
    os << format_number(c.engine.unit_bytes_per_cycle);  // (an unknown codec is refused before a run)
    return os.str();
  }
  const double v = c.engine.bytes_per_cycle(id);
  const double d = c.engine.decompression_bytes_per_cycle(id);
  os << format_number(v);
  std::vector<std::string> notes;
  if (v != c.engine.unit_bytes_per_cycle) {
    std::ostringstream n;
    n << codec::to_string(id) << "'s own; the unit rate is " << format_number(c.engine.unit_bytes_per_cycle);
    notes.push_back(n.str());
  }
  if (d != v) {
    std::ostringstream n;
    n << "decompression " << format_number(d);
    notes.push_back(n.str());
  }
  for (std::size_t k = 0; k < notes.size(); ++k) os << (k ? "; " : " (") << notes[k];
  if (!notes.empty()) os << ")";
  return os.str();
}

transfer_bounds bounds_of(const platform_config& c, const step_report& s, bool units) {
  transfer_bounds b;
  std::uint64_t act = 0, wire = 0, data = 0;
  ps_t off = 0, pre = 0;
  // The compute kernels' GPU DRAM traffic while the tensors moved (gpu.kernel_traffic; 0
  // without): each tensor's transfer time's part of the pass it moved in (its offload in the
  // forward pass of offload_during, its prefetch in the backward pass of prefetch_during) times
  // that pass's kernel bytes, at most all of them.
  double kernel_off = 0, kernel_pre = 0;
  auto kernel_part = [](std::uint64_t bytes, ps_t t, ps_t span) {
    return span > 0 ? static_cast<double>(bytes) * std::min(1.0, static_cast<double>(t) / static_cast<double>(span))
                    : 0.0;
  };
  for (const auto& l : s.result.layers) {
    if (!l.offloaded) continue;
    act += l.bytes;
    data += l.moved_data_bytes;
    wire += l.moved_data_bytes + l.meta_bytes;
    off += l.offload;
    pre += l.prefetch;
    if (l.offload_during < s.dram_layers.size()) {
      const layer_dram& d = s.dram_layers[l.offload_during];
      kernel_off += kernel_part(d.fwd_kernel_bytes, l.offload, d.fwd_span);
    }
    if (l.prefetch_during < s.dram_layers.size()) {
      const layer_dram& d = s.dram_layers[l.prefetch_during];
      kernel_pre += kernel_part(d.bwd_kernel_bytes, l.prefetch, d.bwd_span);
    }
  }
  if (!s.simulated || act == 0) return b;
  codec::codec_id id = codec::codec_id::raw;
  try {
    if (units) id = codec::codec_from_string(c.codec);
  } catch (const std::exception&) {
  }
  auto fill = [&](transfer_bounds::direction& d, bool offload, ps_t t) {
    const double unit_Bps =
        (offload ? c.engine.bytes_per_cycle(id) : c.engine.decompression_bytes_per_cycle(id)) * c.engine.clock_hz;
    if (t == 0) return;
    const double sec = static_cast<double>(t) * 1e-12;
    d.moved = true;
    d.activation_Bps = static_cast<double>(act) / sec;
    d.pcie_Bps = static_cast<double>(wire) / sec;
    const unsigned n = offload ? c.engine.compression_units : c.engine.decompression_units;
    if (units) d.shares.emplace_back(offload ? "compression units" : "decompression units", d.activation_Bps / (n * unit_Bps));
    d.shares.emplace_back(offload ? "PCIe d2h" : "PCIe h2d",
                          d.pcie_Bps / (offload ? pcie::mwr_payload_rate_Bps(c.pcie) : pcie::cpld_payload_rate_Bps(c.pcie)));
    d.shares.emplace_back("host memory", d.pcie_Bps / c.host_mem.bandwidth_Bps);
    // The GPU DRAM (gpu_mem.peak_bandwidth): the engine reads every offloaded activation byte
    // from it and writes every prefetched one back (uncompressed, at either placement), and
    // the compute kernels' traffic of those passes competes (new-user trial s25 F1: an offload
    // limited by GDDR5 reads at 92 % of its peak was named PCIe at 47 %).
    if (c.gpu_mem.peak_bandwidth_Bps > 0)
      d.shares.emplace_back("GPU DRAM", (static_cast<double>(act) + (offload ? kernel_off : kernel_pre)) / sec /
                                            c.gpu_mem.peak_bandwidth_Bps);
    // The GPU-crossbar link between GPU memory and the engine (cdma.xbar_bandwidth, when not
    // unlimited) carries the activations uncompressed, except the cDMA step's with placement
    // memory_controller: only its compressed data (metadata not charged; docs/cdma_engine.md,
    // "Placement"). Without it a crossbar-bound run named PCIe (new-user trial s22).
    if (c.engine.xbar_Bps > 0) {
      const bool compressed = units && c.engine.placement == unit_placement::memory_controller;
      d.shares.emplace_back("GPU crossbar", static_cast<double>(compressed ? data : act) / sec / c.engine.xbar_Bps);
    }
    std::size_t top = 0;
    for (std::size_t k = 1; k < d.shares.size(); ++k)
      if (d.shares[k].second > d.shares[top].second) top = k;
    d.bound = d.shares[top].first;
  };
  fill(b.offload, true, off);
  fill(b.prefetch, false, pre);
  return b;
}

namespace {
/// The report's lines for one step's bounds ("" when it moved nothing).
std::string transfer_bound_lines(const transfer_bounds& b) {
  std::ostringstream os;
  for (const auto& [what, d] : {std::pair<const char*, const transfer_bounds::direction*>{"offload ", &b.offload},
                                {"prefetch", &b.prefetch}}) {
    if (!d->moved) continue;
    os << "  " << what << ": " << fmt("%.1f", d->activation_Bps / 1e9) << " GB/s of activations, "
       << fmt("%.1f", d->pcie_Bps / 1e9) << " GB/s over PCIe -- ";
    for (std::size_t k = 0; k < d->shares.size(); ++k)
      os << (k ? ", " : "") << d->shares[k].first << " " << fmt("%.0f", d->shares[k].second * 100) << " %";
    os << " (bound: " << d->bound << ")\n";
  }
  return os.str();
}
}  // namespace

/// " (bounds the transfers: below the link's N GB/s of MWr payload)" when the host memory's
/// bandwidth is below what the link moves in one direction (every shipped preset from Gen4
/// x16 on: 25.6 GB/s against 28.7 GB/s), else "": the report's header says which one bounds
/// the offloads and prefetches (new-user trial s20 F4: Gen4 and Gen5 gave one answer, and
/// nothing in the output said why).
static std::string host_memory_bound_note(const platform_config& c) {
  const double link = pcie::mwr_payload_rate_Bps(c.pcie);
  if (!(c.host_mem.bandwidth_Bps < link)) return "";
  return " (bounds the transfers: below the link's " + fmt("%.1f", link / 1e9) + " GB/s of MWr payload)";
}

void print_setup(std::ostream& os, const run_report& r, bool with_mode) {
  // Names and paths as given (a layer file's names, --param gpu.name=...) with control
  // characters and broken UTF-8 shown as \xNN (printable()), never raw on the terminal.
  const std::string checkers = r.config.check_protocol ? "base-protocol checkers" : "";
  const std::string mode = !with_mode ? checkers
                           : (r.config.mode == "at" ? "AT (approximately timed" : "LT (loosely timed") +
                                 (checkers.empty() ? std::string(")") : ", " + checkers + ")");
  // Rates as the configuration writes them (format_flops, format_rate: exact, in the unit
  // that fits; breaker s23: 1 GFLOP/s and 400 MB/s showed as "0.0 TFLOP/s, 0 GB/s").
  os << "  platform   : " << printable(r.config.gpu.name) << " (" << format_flops(r.config.gpu.peak_flops) << ", "
     << format_rate(r.config.gpu_mem.peak_bandwidth_Bps) << " " << dram_name(r.config.gpu_mem) << "), PCIe Gen"
     << r.config.pcie.gen << " x" << r.config.pcie.lanes << " (MPS " << r.config.pcie.mps << " B), host memory "
     << format_rate(r.config.host_mem.bandwidth_Bps) << host_memory_bound_note(r.config) << "\n"
     << "  runtime    : " << mode << (mode.empty() ? "" : ", ") << "vDNN policy " << r.config.policy
     << ", codec " << r.config.codec
     << ", window " << r.config.engine.window_bytes << " B, " << r.config.engine.compression_units
     << " compression units"
     // The prefetch path's unit count when it differs (breaker s23: "4 compression units x 2
     // (...; decompression 0.25)" read as 4 decoders with 1 configured).
     << (r.config.engine.decompression_units != r.config.engine.compression_units
             ? " (" + std::to_string(r.config.engine.decompression_units) + " decompression)"
             : std::string())
     << " x " << unit_rate_text(r.config) << " B/cycle at "
     << format_frequency(r.config.engine.clock_hz)  // "1 GHz", "1 MHz": never "0.00 GHz"
     // The crossbar, when set, with what crosses it (the placement has no effect on timing
     // without it; new-user trial s22 F12).
     << (r.config.engine.xbar_Bps > 0
             ? ", crossbar " + format_rate(r.config.engine.xbar_Bps) + " (units at the " +
                   (r.config.engine.placement == unit_placement::memory_controller
                        ? "memory controller: the cDMA step's compressed data crosses it)"
                        : "engine: activations cross it)")
             : std::string())
     << "\n"
     << "  activations: " << printable(r.activations) << "\n"
     << "  kernels    : " << kernel_times(r) << "\n";
}

std::string late_kernel_traffic_warning(const run_report& r) {
  std::ostringstream os;
  // Kernel traffic that could not keep to its schedule (too few requests in flight, or a
  // saturated DRAM): the kernels' DRAM bandwidth, and so the contention, is understated.
  // Reported from 1 % of a step's kernel bytes on (a few requests behind at a saturated
  // layer are normal queueing); in LT and AT for every step (until session 25 LT's for the
  // oracle step only: its DRAM overstated it while the engine transferred).
  std::ostringstream late;
  bool slots = false;
  for (const step_report* s : {&r.oracle, &r.vdnn, &r.cdma}) {
    const std::uint64_t kb = s->kernel_bytes();
    if (!s->simulated || s->dram.kernel_late_bytes == 0 || s->dram.kernel_late_bytes * 100 < kb) continue;
    late << (late.tellp() ? ", " : "") << s->result.config.label << " "
         << fmt("%.1f", MB(s->dram.kernel_late_bytes)) << " of " << fmt("%.1f", MB(kb)) << " MB (max lag "
         << fmt("%.1f", ps_to_s(s->dram.kernel_max_lag) * 1e6) << " us)";
    slots |= s->dram.kernel_late_slot_bytes * 2 > s->dram.kernel_late_bytes;
  }
  if (late.tellp()) {
    os << "WARNING: the compute kernels' DRAM traffic fell behind the kernels (the contention is "
          "understated): "
       << late.str() << " issued after their kernel had ended; ";
    if (slots)
      os << "mostly held back by the " << r.config.kernel.outstanding()
         << (r.config.kernel.outstanding() == 1 ? " request of " : " requests of ")
         << r.config.kernel.request_bytes << " B allowed in flight: raise gpu.kernel_outstanding\n";
    else
      os << "the GPU DRAM could not serve the kernels and the engine together at the roofline's "
            "rate (see DRAM% per layer)\n";
  }
  return os.str();
}

void print_summary(std::ostream& os, const run_report& r) {
  const auto& net = r.net;
  const auto& v = r.vdnn.result;
  const auto& c = r.cdma.result;
  os << "cdma-vp: one training step of " << printable(net.name) << " at batch " << net.batch << "\n";
  print_setup(os, r, true);
  os << "\n";

  // The per-layer table: every column at least its usual width and always wider than its
  // longest cell, so a large value (a 10000 ms layer, a multi-GB tensor) widens its column
  // instead of running into the next one.
  struct column {
    const char* head;
    std::size_t width;
    bool left;
  };
  const std::vector<column> cols = {{"layer", 14, true},       {"offloaded X_i", 20, true}, {"MB", 10, false},
                                    {"zero%", 7, false},       {"comp MB", 10, false},      {"ratio", 7, false},
                                    {"fwd ms", 9, false},      {"bwd ms", 9, false},        {"vDNN off", 10, false},
                                    {"vDNN pre", 10, false},   {"cDMA off", 10, false},     {"cDMA pre", 10, false},
                                    {"vDNN stall", 11, false}, {"cDMA stall", 11, false},   {"DRAM%", 7, false},
                                    {"rd GB/s", 9, false}};
  // Per-layer facts (size, zeros, compute times) come from a step that was simulated.
  const auto& facts = (r.cdma.simulated ? c : r.vdnn.simulated ? v : r.oracle.result).layers;
  std::vector<std::vector<std::string>> rows;
  rows.reserve(net.layers.size());
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const auto& l = net.layers[i];
    const auto& lv = v.layers[i];
    const auto& lc = c.layers[i];
    const auto& lf = facts[i];
    // Zeros are counted where data moves: without a vDNN or cDMA step, or for a layer not
    // offloaded, they are unknown ("-").
    const double zf = zero_fraction(r, i);
    std::vector<std::string> row = {printable(l.name), l.offload.str(), fmt("%.2f", MB(lf.bytes)),
                                    ran_fmt(zf >= 0, "%.1f", zf * 100)};
    if (lc.offloaded) {
      row.push_back(fmt("%.2f", MB(lc.moved_data_bytes + lc.meta_bytes)));
      row.push_back(fmt("%.2f", ratio(lc)));
    } else {
      row.push_back(r.cdma.simulated ? "resident" : "-");
      row.push_back("-");
    }
    // Kernel times hold in every step; a transfer step's figures are "-" when it did not run.
    // Offload / prefetch times and the read bandwidth also "-" for a layer the step did not
    // offload (as null in the JSON, empty in the CSV).
    const bool rv = r.vdnn.simulated, rc = r.cdma.simulated;
    const bool ov = offloaded_in(r.vdnn, i), oc = offloaded_in(r.cdma, i);
    for (const auto& [ran, t] : {std::pair<bool, double>{true, ms(lf.forward)}, {true, ms(lf.backward)},
                                 {ov, ms(lv.offload)}, {ov, ms(lv.prefetch)}, {oc, ms(lc.offload)},
                                 {oc, ms(lc.prefetch)}, {rv, ms(lv.forward_stall + lv.backward_stall)},
                                 {rc, ms(lc.forward_stall + lc.backward_stall)}})
      row.push_back(ran_fmt(ran, "%.3f", t));
    row.push_back(ran_fmt(rc, "%.1f", dram_of(r.cdma, i).fwd_utilisation * 100));
    row.push_back(ran_fmt(oc, "%.2f", cdma_read_Bps(r.cdma, i) / 1e9));
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> width;
  for (std::size_t k = 0; k < cols.size(); ++k) {
    std::size_t w = cols[k].width;
    for (const auto& row : rows) w = std::max(w, shown_width(row[k]) + 1);  // one space at least
    width.push_back(w);
  }
  auto print_row = [&](const std::vector<std::string>& cells) {
    for (std::size_t k = 0; k < cols.size(); ++k) {
      // Padded by characters, not bytes (a UTF-8 layer name such as "Schicht_\xC3\xA4").
      const std::string pad(width[k] - std::min(width[k], shown_width(cells[k])), ' ');
      os << (cols[k].left ? cells[k] + pad : pad + cells[k]);
    }
    os << "\n";
  };
  {
    std::vector<std::string> head;
    for (const auto& col : cols) head.push_back(col.head);
    print_row(head);
  }
  for (const auto& row : rows) print_row(row);
  os << "  (DRAM%: GPU DRAM data-bus utilisation during the layer's forward pass in the cDMA step,\n"
     << "   all initiators; rd GB/s: the cDMA engine's achieved GPU DRAM read bandwidth while\n"
     << "   offloading; compute kernels' DRAM traffic "
     << (r.config.kernel_traffic ? "issued (gpu.kernel_traffic=true)" : "not issued (gpu.kernel_traffic=false)")
     << ")\n";
  const double to = ps_to_s(r.oracle.result.step), tv = ps_to_s(v.step), tc = ps_to_s(c.step);
  const bool so = r.oracle.simulated, sv = r.vdnn.simulated, sc = r.cdma.simulated;
  const std::string cdma_name = "cDMA (" + r.config.codec + ")";
  auto step_line = [&](const std::string& name, const step_report& s, double t, bool vs_oracle) {
    os << "  " << name << std::string(name.size() < 23 ? 23 - name.size() : 0, ' ') << ": ";
    if (s.failed) {
      os << "not completed: the run stopped at an I/O error (on standard error)\n";
      return;
    }
    if (!s.simulated) {
      os << "not simulated (steps = " << r.config.steps << ")\n";
      return;
    }
    os << fmt("%10.3f", t * 1e3) << " ms";
    // The oracle is 0 with an all-zero layer-time table: no ratio; a huge one in 3 digits.
    if (vs_oracle && so)
      os << "  (" << (to > 0 ? fmt(t / to < 1e4 ? "%.3f" : "%.3g", t / to) + "x oracle" : "oracle step 0 ms: no ratio")
         << ")";
    os << "\n";
  };
  os << "\nstep time (simulated)\n";
  step_line("oracle (no transfers)", r.oracle, to, false);
  step_line("vDNN (uncompressed DMA)", r.vdnn, tv, true);
  step_line(cdma_name, r.cdma, tc, true);
  if (sv && sc)
    os << "  cDMA speed-up over vDNN: " << fmt("%.3f", tv / tc) << "x ("
       << (tv >= tc ? fmt("%+.1f", (tv / tc - 1) * 100) + "% faster" : fmt("%.1f", (1 - tv / tc) * 100) + "% slower")
       << ")\n";
  // What bounds the transfers (share of each resource's peak while transferring).
  for (const auto& [name, step, sim, units] :
       {std::tuple<const char*, const step_report*, bool, bool>{"vDNN", &r.vdnn, sv, false},
        {"cDMA", &r.cdma, sc, true}}) {
    if (!sim) continue;
    const std::string b = transfer_bound_lines(bounds_of(r.config, *step, units));
    if (!b.empty()) os << name << " transfers (share of each resource's peak while transferring):\n" << b;
  }
  os << "GPU DRAM utilisation (oracle / vDNN / cDMA): " << ran_fmt(so, "%.1f%%", r.oracle.dram.utilisation * 100)
     << " / " << ran_fmt(sv, "%.1f%%", r.vdnn.dram.utilisation * 100) << " / "
     << ran_fmt(sc, "%.1f%%", r.cdma.dram.utilisation * 100) << "; cDMA placement "
     << (r.config.engine.placement == unit_placement::dma ? "dma" : "memory_controller") << "\n";
  // Every DRAM command is re-checked against the JEDEC timing rules (docs/dram.md): 0 expected.
  if (r.dram_model)
    os << "GPU DRAM timing-rule violations: " << r.dram_violations
       << (r.dram_violations ? " (WARNING: the DRAM model broke a timing rule; the times are not trustworthy)"
                             : " (every DRAM command re-checked, refresh deadline included)")
       << "\n";
  else
    os << "GPU DRAM timing-rule violations: n/a (gpu_mem bus model: no DRAM commands"
       << (r.bus_reason.empty() ? "" : "; used because " + r.bus_reason + ", docs/dram.md") << ")\n";
  os << late_kernel_traffic_warning(r);
  // Without a cDMA step nothing was compressed: no ratio (the JSON says null).
  if (compressed_any(r))
    os << "compression ratio (metadata included): " << fmt("%.3f", r.compression_ratio()) << "x\n";
  else if (r.cdma.simulated)  // was "1.000x" for nothing compressed
    os << "compression ratio: n/a, nothing was compressed (no layer offloaded)\n";
  else if (r.cdma.failed)
    os << "compression ratio: none, the cDMA step did not complete (the run stopped at an I/O error)\n";
  else
    os << "compression ratio: none, no cDMA step ran (steps = " << r.config.steps << ")\n";
  os << "PCIe payload bytes, device-to-host / host-to-device:\n";
  for (const step_report* s : {&r.vdnn, &r.cdma}) {
    os << "  " << (s == &r.vdnn ? "vDNN" : "cDMA") << ": ";
    if (!s->simulated) {  // nothing moved because nothing ran: no byte count, not 0 MB
      os << "- (" << (s->failed ? "not completed" : "not simulated, steps = " + r.config.steps) << ")\n";
      continue;
    }
    os << fmt("%.1f", MB(s->d2h.payload_bytes)) << " MB / " << fmt("%.1f", MB(s->h2d.payload_bytes))
       << " MB  (on the wire " << fmt("%.1f", MB(s->d2h.wire_bytes)) << " / " << fmt("%.1f", MB(s->h2d.wire_bytes))
       << " MB)\n";
  }
  if (!r.io_error.empty()) {
    os << "verification: incomplete, the run stopped at an I/O error; " << r.verified_bytes()
       << " prefetched bytes compared before it, " << r.mismatched_bytes() << " differ\n";
  } else if (!r.vdnn.simulated && !r.cdma.simulated) {
    os << "verification: no transfer step simulated (steps = " << r.config.steps << "), nothing to compare\n";
  } else if (!r.config.verify) {
    os << "verification: OFF (--no-verify): prefetched data was not compared\n";
  } else if (r.ok() && r.verified_bytes() == 0) {  // was "matched (0 bytes compared)"
    os << "verification: nothing compared, no layer was offloaded (0 prefetched bytes)\n";
  } else if (r.ok()) {
    os << "verification: every prefetched byte was compared with what was offloaded and matched ("
       << r.verified_bytes() << " bytes compared: ";
    if (sv) os << "vDNN " << v.verified_bytes << (sc ? ", " : "");
    if (sc) os << "cDMA " << c.verified_bytes;
    os << ")\n";
  } else {
    os << "verification: FAILED: " << r.mismatched_bytes() << " of " << r.verified_bytes()
       << " prefetched bytes differ\n";
    for (const auto* s : {&v, &c})
      for (const auto& e : s->errors) os << "  " << s->config.label << ": " << printable(e) << "\n";
  }
  os << "wall time: " << fmt("%.2f", r.wall_s) << " s, peak RSS " << fmt("%.0f", r.peak_rss_bytes / 1048576.0)
     << " MiB\n";
  const auto& h = r.host;
  const auto& ck = h.chunks;
  os << "host: activation chunks (64 KiB) taken " << ck.ready << " ready, " << ck.waited << " being produced, "
     << ck.by_reader << " not started (produced then by the simulation thread); " << ck.stolen
     << " others produced by the simulation thread while it waited; " << h.produce_threads << " worker thread(s)";
  // A spill file set up (host_mem.spill on, or auto for a big network) that nothing reached
  // (--steps oracle: no data moved; or every page stayed in the cache) printed "spilled to a
  // file: peak 0.00 GB" (new-user trial s25 F6).
  if (h.spilled && h.peak_spilled_bytes == 0)
    os << "; host memory spill file (host_mem.spill=" << r.config.host_spill << "): nothing spilled";
  else if (h.spilled)
    os << "; host memory spilled to a file: peak "
       << (h.peak_spilled_bytes < 100'000'000  // (a few MB printed "peak 0.00 GB": breaker s25)
               ? fmt("%.1f", h.peak_spilled_bytes / 1e6) + " MB, "
               : fmt("%.2f", h.peak_spilled_bytes / 1e9) + " GB, ")
       << (h.direct_io ? "direct" : "buffered") << " I/O"
       // Asked for but not in effect: the store gave it up, for a reason it does not record
       // (tlm/memory/backing_store.h: O_DIRECT refused when the file was opened, e.g. tmpfs; a
       // direct request refused with EINVAL; or the first kDirectProbeBytes written slower than
       // kMinDirectWriteBps).
       << (!h.direct_io && r.config.host_mem.spill_options.direct_io
               ? " (host_mem.spill_direct_io=true given up: the file system refused direct I/O, or the first " +
                     fmt("%.0f", mem::backing_store::kDirectProbeBytes / 1048576.0) + " MiB were written slower than " +
                     fmt("%.1f", mem::backing_store::kMinDirectWriteBps / 1e9) + " GB/s)"
               : std::string())
       << ", " << h.io_requests << " helper requests of "
       << fmt("%.1f", h.io_requests ? static_cast<double>(h.io_pages) / h.io_requests : 0.0) << " pages";
  os << "\n";
}

std::vector<stat> collect_stats(const run_report& r) {
  std::vector<stat> out;
  auto add = [&](const std::string& n, double v, const char* unit) { out.push_back({n, v, unit}); };
  const step_report* steps[] = {&r.oracle, &r.vdnn, &r.cdma};
  for (const step_report* s : steps) {
    if (!s->simulated) continue;
    const std::string k = s->result.config.label;
    const double t = ps_to_s(s->result.step);
    add("step_time." + k, t, "s");
    add("forward_time." + k, ps_to_s(s->result.forward), "s");
    add("backward_time." + k, ps_to_s(s->result.backward), "s");
    add("dram." + k + ".bytes", static_cast<double>(s->dram.bytes), "B");
    add("dram." + k + ".utilisation", s->dram.utilisation, "ratio");
    {
      const std::uint64_t kb = s->kernel_bytes();
      add("dram." + k + ".kernel_bytes", static_cast<double>(kb), "B");
    }
    if (r.config.kernel_traffic) {
      add("dram." + k + ".kernel_late_bytes", static_cast<double>(s->dram.kernel_late_bytes), "B");
      add("dram." + k + ".kernel_max_lag", ps_to_s(s->dram.kernel_max_lag), "s");
      add("dram." + k + ".kernel_drain", ps_to_s(s->dram.kernel_drain), "s");
    }
    if (s->dram.columns)  // column commands exist with the DRAM model (AT channels; LT: one per burst)
      add("dram." + k + ".row_hit_rate", s->dram.row_hit_rate(), "ratio");
    if (r.dram_model)
      add("dram." + k + ".timing_violations", static_cast<double>(s->dram.timing_violations), "count");
    if (s == &r.oracle) continue;
    ps_t stall = 0;
    for (const auto& l : s->result.layers) stall += l.forward_stall + l.backward_stall;
    add("stall_time." + k, ps_to_s(stall), "s");
    for (const auto& [dir, tr] : {std::pair<const char*, const pcie_traffic*>{"d2h", &s->d2h}, {"h2d", &s->h2d}}) {
      const std::string p = "pcie." + k + "." + dir;
      add(p + ".payload_bytes", static_cast<double>(tr->payload_bytes), "B");
      add(p + ".wire_bytes", static_cast<double>(tr->wire_bytes), "B");
      add(p + ".efficiency", tr->wire_bytes ? static_cast<double>(tr->payload_bytes) / tr->wire_bytes : 0.0, "ratio");
      add(p + ".mean_bandwidth", t > 0 ? tr->payload_bytes / t / 1e9 : 0.0, "GB/s");
      add(p + ".utilisation", t > 0 && r.pcie_rate_Bps > 0 ? tr->wire_bytes / (t * r.pcie_rate_Bps) : 0.0, "ratio");
    }
  }
  if (r.vdnn.simulated && r.cdma.simulated)
    add("speedup.cdma_over_vdnn", static_cast<double>(r.vdnn.result.step) / static_cast<double>(r.cdma.result.step), "ratio");
  if (compressed_any(r)) add("compression_ratio", r.compression_ratio(), "ratio");  // like step_time.cdma
  add("verified_bytes", static_cast<double>(r.verified_bytes()), "B");
  add("peak_rss", static_cast<double>(r.peak_rss_bytes), "B");
  add("wall_time", r.wall_s, "s");
  for (std::size_t i = 0; i < r.net.layers.size(); ++i) {
    const auto& c = r.cdma.result.layers[i];
    const auto& v = r.vdnn.result.layers[i];
    const std::string p = "layer." + r.net.layers[i].name;
    if (c.offloaded) add(p + ".compression_ratio", ratio(c), "ratio");
    // A step that did not run has no statistics (no key), as it has no step_time.
    if (r.vdnn.simulated) add(p + ".stall.vdnn", ps_to_s(v.forward_stall + v.backward_stall), "s");
    if (r.cdma.simulated) add(p + ".stall.cdma", ps_to_s(c.forward_stall + c.backward_stall), "s");
    for (const step_report* s : steps) {
      if (!s->simulated) continue;
      const std::string k = s->result.config.label;
      add(p + ".dram_utilisation_fwd." + k, dram_of(*s, i).fwd_utilisation, "ratio");
      add(p + ".dram_utilisation_bwd." + k, dram_of(*s, i).bwd_utilisation, "ratio");
      if (offloaded_in(*s, i))
        add(p + ".cdma_read_bandwidth." + k, cdma_read_Bps(*s, i) / 1e9, "GB/s");
    }
  }
  return out;
}

nlohmann::json transfer_histograms(const run_report& r) {
  using nlohmann::json;
  namespace bh = boost::histogram;
  json out = json::object();
  for (const step_report* s : {&r.vdnn, &r.cdma}) {
    if (!s->simulated) continue;  // no histogram of a step that did not run (not an empty one)
    for (const bool off : {true, false}) {
      // Log-spaced bins from 1 us to 1 s, 4 per decade; under/overflow kept.
      auto h = bh::make_histogram(bh::axis::regular<double, bh::axis::transform::log>(24, 1e-6, 1.0));
      for (const auto& l : s->result.layers) {
        const ps_t t = off ? l.offload : l.prefetch;
        if (l.offloaded && t) h(ps_to_s(t));
      }
      json bins = json::array();
      for (auto&& x : bh::indexed(h, bh::coverage::all))
        if (*x > 0)
          bins.push_back(json{{"lower_s", x.bin().lower()}, {"upper_s", x.bin().upper()}, {"count", static_cast<double>(*x)}});
      out[s->result.config.label + (off ? ".offload_time" : ".prefetch_time")] = {{"unit", "s"}, {"bins", bins}};
    }
  }
  return out;
}

void close_checked(std::ofstream& f, const std::string& path, const char* option) {
  errno = 0;
  f.close();  // flushes: a full disk shows up here, not at the last <<
  if (f.fail())
    throw output_error(std::string(option) + " " + path + ": write failed" +
                             (errno ? std::string(": ") + std::strerror(errno) : std::string()) +
                             " (results computed but not saved)");
}

nlohmann::json to_json(const run_report& r) {
  using nlohmann::json;
  const auto& v = r.vdnn.result;
  const auto& c = r.cdma.result;
  json j;
  j["network"] = r.net.name;
  j["batch"] = r.net.batch;
  j["activations"] = r.activations;
  j["codec"] = r.config.codec;
  j["policy"] = r.config.policy;
  j["step_time_s"] = json::object();
  for (const step_report* s : {&r.oracle, &r.vdnn, &r.cdma})  // null: step not simulated
    j["step_time_s"][s->result.config.label] = s->simulated ? json(ps_to_s(s->result.step)) : json();
  j["steps"] = json::array();
  for (const step_report* s : {&r.oracle, &r.vdnn, &r.cdma})
    if (s->simulated) j["steps"].push_back(s->result.config.label);
  // What bounds the transfers (the report's lines): per step and direction, null when the step
  // did not run or moved nothing.
  {
    nlohmann::json tb = nlohmann::json::object();
    for (const auto& [name, step, units] :
         {std::tuple<const char*, const step_report*, bool>{"vdnn", &r.vdnn, false}, {"cdma", &r.cdma, true}}) {
      const transfer_bounds b = bounds_of(r.config, *step, units);
      nlohmann::json sj = nlohmann::json::object();
      for (const auto& [dir, d] : {std::pair<const char*, const transfer_bounds::direction*>{"offload", &b.offload},
                                   {"prefetch", &b.prefetch}}) {
        if (!d->moved) {
          sj[dir] = nullptr;
          continue;
        }
        nlohmann::json shares = nlohmann::json::object();
        for (const auto& [k, v] : d->shares) shares[k] = v;
        sj[dir] = {{"activation_GBps", d->activation_Bps / 1e9}, {"pcie_GBps", d->pcie_Bps / 1e9},
                   {"share_of_peak", shares}, {"bound", d->bound}};
      }
      tb[name] = sj;
    }
    j["transfer_bounds"] = tb;
  }
  j["speedup_cdma_over_vdnn"] = r.vdnn.simulated && r.cdma.simulated  // null: one of them not run
                                    ? json(static_cast<double>(v.step) / static_cast<double>(c.step))
                                    : json();
  // null without a cDMA step, and when it compressed nothing (no layer offloaded; was 1.0)
  j["compression_ratio"] = compressed_any(r) ? json(r.compression_ratio()) : json();
  j["verified_bytes"] = r.verified_bytes();
  j["mismatched_bytes"] = r.mismatched_bytes();
  // Where the kernel times came from: the --layer-times table (null without) and how many
  // layers it lists; the others use the roofline.
  j["kernel_times"] = {{"layer_times", r.config.layer_times.empty() ? json() : json(r.config.layer_times)},
                       {"measured_layers", r.measured_layers},
                       {"roofline_layers", r.net.layers.size() - std::min(r.measured_layers, r.net.layers.size())}};
  j["warnings"] = r.warnings;  // input warnings that did not stop the run (also on standard error)
  // GPU DRAM timing-rule violations of the whole run (0 expected); null with the bus model.
  j["dram_timing_violations"] = r.dram_model ? json(r.dram_violations) : json();
  // The GPU memory timing model actually used (config.gpu_mem.model is the one asked for):
  // "dram" with its preset, or "bus" (with the reason when dram was asked for).
  j["gpu_mem_model"] = {{"used", r.dram_model ? "dram" : "bus"},
                        {"dram_preset", r.dram_model ? json(r.dram_preset) : json()},
                        {"bus_reason", r.bus_reason.empty() ? json() : json(r.bus_reason)}};
  // null: nothing was compared -- no transfer step was asked for (--steps oracle; not true
  // for 0 bytes) or verification is off (verify = false: not false, which means a mismatch);
  // After an I/O error stopped a step: false if a compared byte differed, else null (the
  // comparison is incomplete; it said false with 0 bytes compared and 0 mismatched).
  const bool transfers = r.vdnn.simulated || r.cdma.simulated || r.vdnn.failed || r.cdma.failed;
  const bool incomplete = !r.io_error.empty() && r.mismatched_bytes() == 0;
  // Transfer steps that offloaded nothing (every layer resident) compared nothing: null, not
  // true for 0 bytes (an engine error is still false).
  const bool nothing_compared = r.verified_bytes() == 0 && r.ok();
  j["verified"] = ran_json(transfers && r.config.verify && !incomplete && !nothing_compared, r.ok());
  for (const auto* s : {&r.vdnn, &r.cdma}) {
    const std::string k = s == &r.vdnn ? "vdnn" : "cdma";
    const bool ran = s->simulated;
    j["pcie"][k]["d2h"] = {{"payload_bytes", ran_json(ran, s->d2h.payload_bytes)},
                           {"wire_bytes", ran_json(ran, s->d2h.wire_bytes)}};
    j["pcie"][k]["h2d"] = {{"payload_bytes", ran_json(ran, s->h2d.payload_bytes)},
                           {"wire_bytes", ran_json(ran, s->h2d.wire_bytes)}};
  }
  json errors = json::array();
  for (const auto* s : {&v, &c})
    for (const auto& e : s->errors) errors.push_back(s->config.label + ": " + e);
  if (!r.io_error.empty()) errors.push_back("I/O error, the run stopped (steps not completed have null times): " + r.io_error);
  j["errors"] = errors;
  json layers = json::array();
  for (std::size_t i = 0; i < r.net.layers.size(); ++i) {
    const auto& l = r.net.layers[i];
    const auto& lv = v.layers[i];
    const auto& lc = c.layers[i];
    const auto& lf = (r.cdma.simulated ? c : r.vdnn.simulated ? v : r.oracle.result).layers[i];
    json o;
    o["name"] = l.name;
    o["offload_key"] = l.offload_key;
    o["shape"] = {l.offload.n, l.offload.c, l.offload.h, l.offload.w};
    o["bytes"] = lf.bytes;
    // null when no step counted the zeros (only the oracle ran; the layer was not offloaded)
    const double zf = zero_fraction(r, i);
    o["zero_fraction"] = ran_json(zf >= 0, zf);
    o["offloaded"] = lf.offloaded;
    // Where the transfers of X_i happen (null when not offloaded): offloaded during the
    // forward pass of its first consumer, prefetched during the backward pass of
    // prefetch_during (docs/workloads.md "Offload rule"); the same in the vDNN and cDMA steps.
    const std::size_t nl = r.net.layers.size();
    o["offload_during"] = ran_json(lf.offloaded && lf.offload_during < nl,
                                   lf.offload_during < nl ? r.net.layers[lf.offload_during].name : std::string());
    o["prefetch_during"] = ran_json(lf.offloaded && lf.prefetch_during < nl,
                                    lf.prefetch_during < nl ? r.net.layers[lf.prefetch_during].name : std::string());
    // Transfer figures of a step that did not run are null (the keys stay), never 0; so are
    // the offload figures of a layer the step did not offload (the resident last layer, the
    // non-convolution layers under policy conv: a ratio 0.0 read as a very bad ratio).
    const bool rv = r.vdnn.simulated, rc = r.cdma.simulated;
    const bool ov = offloaded_in(r.vdnn, i), oc = offloaded_in(r.cdma, i);
    o["compressed_bytes"] = ran_json(oc, lc.moved_data_bytes + lc.meta_bytes);
    o["ratio"] = oc ? json(ratio(lc)) : json();
    o["forward_s"] = ps_to_s(lf.forward);
    o["backward_s"] = ps_to_s(lf.backward);
    o["offload_s"] = ran_json(oc, ps_to_s(lc.offload));
    o["prefetch_s"] = ran_json(oc, ps_to_s(lc.prefetch));
    o["stall_s"] = ran_json(rc, ps_to_s(lc.forward_stall + lc.backward_stall));
    o["vdnn"] = {{"offload_s", ran_json(ov, ps_to_s(lv.offload))},
                 {"prefetch_s", ran_json(ov, ps_to_s(lv.prefetch))},
                 {"stall_s", ran_json(rv, ps_to_s(lv.forward_stall + lv.backward_stall))}};
    for (const step_report* s : {&r.oracle, &r.vdnn, &r.cdma}) {
      const layer_dram& d = dram_of(*s, i);
      const bool ran = s->simulated;
      o["dram"][s->result.config.label] = {
          {"fwd_utilisation", ran_json(ran, d.fwd_utilisation)}, {"bwd_utilisation", ran_json(ran, d.bwd_utilisation)},
          {"kernel_bytes", ran_json(ran, d.kernel_bytes())},
          {"cdma_read_bytes", ran_json(ran, d.fwd_cdma_read)},
          {"cdma_read_GBps", ran_json(offloaded_in(*s, i), cdma_read_Bps(*s, i) / 1e9)}};
    }
    layers.push_back(o);
  }
  j["layers"] = layers;
  j["wall_s"] = r.wall_s;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  {
    const auto& h = r.host;
    j["host"] = {{"produce_threads", h.produce_threads},
                 {"chunks", {{"ready", h.chunks.ready}, {"waited", h.chunks.waited},
                             {"by_simulation_thread", h.chunks.by_reader}, {"stolen", h.chunks.stolen}}},
                 {"spilled", h.spilled}, {"direct_io", h.direct_io},
                 {"peak_spilled_bytes", h.peak_spilled_bytes},
                 {"io_requests", h.io_requests}, {"io_pages", h.io_pages}};
  }
  json stats = json::object();
  for (const auto& s : collect_stats(r)) stats[s.name] = {{"value", s.value}, {"unit", s.unit}};
  j["stats"] = stats;
  j["histograms"] = transfer_histograms(r);
  j["config"] = to_json(r.config);
  return j;
}

void write_json(const std::string& path, const run_report& r) {
  write_output_file(path, to_json(r).dump(2) + "\n", "--json", "results computed but not saved");
}

}  // namespace cdma::platform
