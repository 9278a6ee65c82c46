// cdma-vp bench dram [--csv FILE] [--presets a,b] [--bytes N] [--random N] [--model dram|bus]
// Achieved DRAM bandwidth as a fraction of peak per preset, in LT and AT, for a sequential
// read stream, a sequential write stream and random 64-byte reads; timing-rule violations;
// simulation speed of AT random 64-byte traffic (requests per wall-clock second).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "platform/bench.h"
#include "platform/outputs.h"
#include "tlm/core/sc_time_util.h"
#include "tlm/memory/gpu_memory_controller.h"

namespace cdma::platform {
namespace {

using namespace sc_core;
using namespace tlm;

enum class pattern { seq_read, seq_write, random_read };
const char* pattern_name(pattern p) {
  return p == pattern::seq_read ? "seq_read" : p == pattern::seq_write ? "seq_write" : "rand64_read";
}

/// AT/LT traffic generator: `count` requests of `size` bytes, sequential or random (aligned),
/// at most `outstanding` in flight (AT); LT issues them all at time 0 through b_transport.
/// AT: a response is answered at once (TLM_COMPLETED) and the next request is issued from
/// within nb_transport_bw, at the same time stamp, with a payload other than the completing
/// one (the pool holds outstanding + 1 + kAhead), so a response costs no delta cycle of the
/// generator;
/// the requests and their arrival times are the same as when issued from a separate process.
struct traffic_gen : sc_module {
  tlm_utils::simple_initiator_socket<traffic_gen> init;
  bool at = true;
  pattern pat = pattern::seq_read;
  std::uint64_t count = 0, size = 64, span = 1ull << 30;
  std::uint64_t slots = 0;  ///< span / size (set in run(): one division, not one per request)
  std::uint64_t slots_mask = 0;  ///< slots - 1 when slots is a power of two (x % slots = x & mask), else 0
  unsigned outstanding = 512;
  std::uint64_t issued = 0, done = 0;
  unsigned inflight = 0;
  ps_t first = 0, last = 0;
  std::uint64_t resp_hash = 0;  ///< order-independent checksum of the response times
  bool req_busy = false;
  /// The AT payloads (outstanding + 1 + kAhead), each its own allocation (followed in memory
  /// by its extension array, which the payload's constructor allocates next), and the free
  /// ones in the order they were freed (a ring: first freed, first reused; with the window
  /// full a payload is reused kAhead + 1 responses after it was freed and prefetched).
  std::vector<std::unique_ptr<tlm_generic_payload>> pool;
  std::vector<tlm_generic_payload*> free_;  ///< ring of a power-of-two size
  std::size_t free_head = 0, free_tail = 0;  ///< taken / freed so far (index: & (size - 1))
  std::vector<std::uint8_t> buf;
  std::mt19937_64 rng{12345};
  sc_event issue_ev;
  /// Cache lines prefetched from the start of a freed payload: the payload itself and the
  /// extension array allocated right after it.
  static constexpr unsigned kPrefetchLines = (sizeof(tlm_generic_payload) + 48 + 63) / 64 + 1;
  /// Spare payloads, so that a freed payload is not reused by the next request: the next
  /// response is often due in the same activation, too soon for the prefetch to arrive.
  static constexpr unsigned kAhead = 4;

  SC_HAS_PROCESS(traffic_gen);
  explicit traffic_gen(sc_module_name n) : sc_module(n), init("init") {
    init.register_nb_transport_bw(this, &traffic_gen::nb_transport_bw);
    SC_THREAD(run);
    SC_METHOD(issue_method);
    sensitive << issue_ev;
    dont_initialize();
  }
  /// splitmix64 finaliser: summed over the responses, a checksum of their times that does
  /// not depend on the order of responses at equal times.
  static std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  std::uint64_t next_addr() {
    if (pat == pattern::random_read)  // (a mask instead of a 64-bit division when slots is 2^k)
      return (slots_mask ? rng() & slots_mask : rng() % slots) * size;
    return (issued * size) % span;
  }
  void setup(tlm_generic_payload& g, std::uint64_t addr) {
    g.set_command(pat == pattern::seq_write ? TLM_WRITE_COMMAND : TLM_READ_COMMAND);
    g.set_address(addr);
    g.set_data_ptr(buf.data());
    g.set_data_length(static_cast<unsigned>(size));
    g.set_streaming_width(static_cast<unsigned>(size));
    g.set_byte_enable_ptr(nullptr);
    g.set_response_status(TLM_INCOMPLETE_RESPONSE);
  }
  void run() {
    buf.assign(size, 0x5a);
    slots = span / size;
    slots_mask = slots > 1 && (slots & (slots - 1)) == 0 ? slots - 1 : 0;
    if (!at) {
      sc_time delay = SC_ZERO_TIME;
      tlm_generic_payload g;
      for (issued = 0; issued < count;) {
        setup(g, next_addr());
        ++issued;
        sc_time d = delay;  // every request ready at time 0: the memory is the bottleneck
        init->b_transport(g, d);
        last = std::max(last, to_ps(d));
        resp_hash += mix(to_ps(d));
        ++done;
      }
      return;
    }
    for (std::uint32_t i = 0; i <= outstanding + kAhead; ++i)
      pool.push_back(std::make_unique<tlm_generic_payload>());
    std::size_t ring = 1;
    while (ring < pool.size()) ring *= 2;
    free_.assign(ring, nullptr);
    for (auto& p : pool) free_[free_tail++ & (ring - 1)] = p.get();
    issue_ev.notify(SC_ZERO_TIME);
  }
  /// Issues requests while the window and the request channel allow.
  void issue_some() {
    while (!req_busy && inflight < outstanding && issued < count) {
      tlm_generic_payload& g = *free_[free_head++ & (free_.size() - 1)];
      setup(g, next_addr());
      ++issued;
      ++inflight;
      tlm_phase ph = BEGIN_REQ;
      sc_time d = SC_ZERO_TIME;
      const tlm_sync_enum st = init->nb_transport_fw(g, ph, d);
      if (st == TLM_ACCEPTED) req_busy = true;  // END_REQ comes on the backward path
    }
  }
  void issue_method() { issue_some(); }
  tlm_sync_enum nb_transport_bw(tlm_generic_payload& g, tlm_phase& ph, sc_time& d) {
    if (ph == END_REQ) {
      req_busy = false;
      issue_ev.notify(SC_ZERO_TIME);
      return TLM_ACCEPTED;
    }
    last = now_ps(d);
    resp_hash += mix(last);
    ++done;
    --inflight;
    issue_some();  // g is still in use here: the next request takes another payload
    free_[free_tail++ & (free_.size() - 1)] = &g;
    // g is reused kAhead + 1 responses from now: last touched when it was issued, a window of
    // requests ago, so not in the cache. Fetching its lines now (the payload and the
    // extension array allocated after it, which the controller reads at acceptance) keeps
    // those misses off that request's path.
    const char* line = reinterpret_cast<const char*>(&g);
    for (unsigned k = 0; k < kPrefetchLines; ++k) __builtin_prefetch(line + 64 * k, 1);
    return TLM_COMPLETED;
  }
};

struct result {
  std::string preset, mode, pat;
  double peak_Bps = 0, achieved_Bps = 0;
  std::uint64_t requests = 0, bytes = 0, violations = 0, refreshes = 0;
  // Exact simulated results (CSV only): time of the last response (ps), summed latency (ps),
  // checksum of the response times, ACTs, row hits.
  std::uint64_t last_ps = 0, latency_sum_ps = 0, resp_hash = 0, acts = 0, row_hits = 0;
  double wall_s = 0, cpu_s = 0, sim_s = 0;
};

result run_one(const std::string& preset, bool at, pattern pat, std::uint64_t total_bytes,
               std::uint64_t random_requests, unsigned outstanding, bool bus_model = false) {
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  gpu_memory_params p;
  const dram::dram_spec s = dram::preset(preset);
  p.dram_preset = preset;
  p.peak_bandwidth_Bps = s.peak_bandwidth_Bps();
  p.channels = s.channels;
  p.size_bytes = 4ull << 30;
  p.max_outstanding = outstanding;
  if (bus_model) p.model = gpu_memory_model::bus;
  auto mem = std::make_unique<gpu_memory_controller>("gpu_mem", p);
  auto gen = std::make_unique<traffic_gen>("gen");
  gen->at = at;
  gen->pat = pat;
  if (pat == pattern::random_read) {
    gen->size = 64;
    gen->count = random_requests;
  } else {
    gen->size = 512;
    gen->count = total_bytes / 512;
  }
  gen->outstanding = outstanding;
  gen->init.bind(mem->tgt);
  const auto w0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  sc_start();
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const dram_totals t = mem->dram_stats();
  result r;
  r.preset = preset;
  r.mode = at ? "AT" : "LT";
  r.pat = pattern_name(pat);
  r.peak_Bps = s.peak_bandwidth_Bps();
  r.requests = gen->done;
  r.bytes = gen->done * gen->size;
  r.sim_s = ps_to_s(gen->last - gen->first);
  r.achieved_Bps = r.sim_s > 0 ? static_cast<double>(r.bytes) / r.sim_s : 0;
  r.violations = t.violations;
  r.refreshes = t.refreshes;
  r.last_ps = gen->last;
  r.latency_sum_ps = mem->traffic_total().latency_sum_ps;
  r.resp_hash = gen->resp_hash;
  r.acts = t.acts;
  r.row_hits = t.row_hits;
  r.wall_s = wall;
  r.cpu_s = cpu;
  gen.reset();
  mem.reset();
  return r;
}

/// Sequential stream length: 16 MiB, or (a power of two) at least 4 x tREFI at peak, so every
/// channel sees several refreshes and the ones that fall in the window average out (a stream
/// of one or two tREFI ends with the channels that had one more refresh). H100: 64 MiB.
std::uint64_t stream_bytes(const dram::dram_spec& s) {
  const double need = s.peak_bandwidth_Bps() * 4.0 * ps_to_s(s.ps(s.t.tREFI));
  std::uint64_t b = 16ull << 20;
  while (static_cast<double>(b) < need) b *= 2;
  return b;
}

/// Limits of the options (help text and messages): --random and --bytes bound the run time
/// (~1e9 requests: minutes to hours); the sequential streams wrap at 1 GiB (traffic_gen::span),
/// so seq_write keeps at most min(--bytes, 1 GiB) of written pages in RAM whatever --bytes is.
constexpr std::uint64_t max_random = 1000000000;
constexpr std::uint64_t seq_request = 512;  ///< bytes per sequential request
constexpr std::uint64_t max_bytes = 64ull << 30;
constexpr std::uint64_t max_outstanding = 65536;

int bench_dram(const std::vector<std::string>& args) {
  std::string csv;
  std::vector<std::string> presets = dram::preset_names();
  std::uint64_t bytes = 0, randoms = 200000;  // bytes 0: per preset (stream_bytes)
  // AT requests in flight (generator window and controller max_outstanding); 0: per preset,
  // the controller's own default window, default_max_outstanding() (gpu_memory_controller.h:
  // max(1024, 16 x channels), 2560 for hbm3_h100, and why).
  unsigned outstanding = 0;
  bool run_lt = true, run_at = true;
  bool bus_model = false;  // --model bus: the same traffic on the bus model (TLM-path floor)
  bool run_pat[3] = {true, true, true};
  std::vector<std::string> given;  // options seen: each at most once
  auto seen = [&](const char* o) { return std::find(given.begin(), given.end(), o) != given.end(); };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      return args[++i];
    };
    try {
      if (a.rfind("--", 0) == 0 && a != "--help") {
        if (std::find(given.begin(), given.end(), a) != given.end())
          throw std::invalid_argument(a + " given twice; expected each option once");
        given.push_back(a);
      }
      if (a == "--csv") {
        csv = val();
        if (csv.empty()) throw std::invalid_argument("--csv '': an empty file name; expected a path");
      } else if (a == "--bytes") {
        bytes = bench_bytes(a, val(), seq_request, max_bytes, seq_request);
      } else if (a == "--random") {
        randoms = bench_count(a, val(), 1, max_random);
      } else if (a == "--model") {
        const std::string m = val();
        if (m != "dram" && m != "bus") throw std::invalid_argument("--model '" + m + "': expected dram or bus");
        bus_model = m == "bus";
      } else if (a == "--outstanding") {
        outstanding = static_cast<unsigned>(bench_count(a, val(), 1, max_outstanding));
      } else if (a == "--modes") {
        const std::string m = val();
        run_lt = m == "lt" || m == "both";
        run_at = m == "at" || m == "both";
        if (!run_lt && !run_at) throw std::invalid_argument("--modes '" + m + "': expected lt, at or both");
      } else if (a == "--patterns") {
        run_pat[0] = run_pat[1] = run_pat[2] = false;
        for (const std::string& x : bench_list(a, val())) {
          if (x == "seq_read") run_pat[0] = true;
          else if (x == "seq_write") run_pat[1] = true;
          else if (x == "rand64_read") run_pat[2] = true;
          else throw std::invalid_argument("--patterns: unknown pattern '" + x +
                                           "'; expected seq_read, seq_write, rand64_read");
        }
      } else if (a == "--presets") {
        presets = bench_list(a, val());
        for (const std::string& x : presets) {
          try {
            dram::preset(x);  // validates the name
          } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("--presets: ") + e.what());
          }
        }
      } else if (a == "--help" || a == "-h") {
        std::cout << "Usage: cdma-vp bench dram [--csv FILE] [--presets a,b,...] [--bytes N]"
                     " [--random N] [--outstanding N] [--modes lt|at|both]"
                     " [--patterns seq_read,seq_write,rand64_read] [--model dram|bus]\n"
                     "  --bytes N        sequential streams of N bytes in 512-B requests (default: 16 MiB, or the\n"
                     "                   power of two >= 4 tREFI at peak: 64 MiB for hbm3_h100); 512 B .. 64 GiB, a\n"
                     "                   multiple of 512 (4096, 16M, \"16 MiB\"). The streams wrap at 1 GiB: seq_write\n"
                     "                   keeps up to min(N, 1 GiB) of written pages in memory\n"
                     "  --random N       random 64-B reads (default 200000); 1 .. 1000000000\n"
                     "  --outstanding N  AT: requests in flight for the generator and the controller\n"
                     "                   (max_outstanding); default max(1024, 16 x channels); 1 .. 65536\n"
                     "  --presets, --patterns  comma-separated, each name once; --modes lt, at or both (default)\n"
                     "  --csv FILE       one row per run; checked before the runs, written when all are done\n"
                     "                   (an existing FILE is replaced only then)\n"
                     "  Numbers as `cdma-vp run` reads them (whole numbers 200000, 2e5); each option once;\n"
                     "  --bytes needs a sequential pattern, --random rand64_read, --outstanding AT.\n"
                     "  Simulation speed: requests per wall-clock second and per CPU second of the process.\n"
                     "  --model bus: the same traffic on the controller's bus model (no DRAM core):"
                     " the cost of the generator, the TLM path and the SystemC kernel alone\n";
        return 0;
      } else {
        return bench_usage_error("dram", "unknown option '" + a + "'");
      }
    } catch (const std::exception& e) {
      return bench_usage_error("dram", e.what());
    }
  }
  // An option that no selected run uses would be ignored silently: refuse it.
  if (seen("--bytes") && !run_pat[0] && !run_pat[1])
    return bench_usage_error("dram", "--bytes sets the sequential streams, but --patterns selects none "
                                     "(seq_read, seq_write)");
  if (seen("--random") && !run_pat[2])
    return bench_usage_error("dram", "--random sets the rand64_read requests, but --patterns leaves rand64_read out");
  if (seen("--outstanding") && !run_at)
    return bench_usage_error("dram", "--outstanding applies to AT, but --modes lt runs LT only");
  // The output is checked before the runs (minutes), and written only after them.
  if (!csv.empty()) {
    try {
      check_output_path(csv, "--csv");
    } catch (const std::exception& e) {
      return bench_usage_error("dram", e.what());
    }
  }
  std::ostringstream out;
  out << "preset,mode,pattern,peak_GBps,achieved_GBps,fraction_of_peak,requests,bytes,"
         "sim_time_us,wall_s,requests_per_wall_s,cpu_s,requests_per_cpu_s,refreshes,violations,"
         "last_response_ps,latency_sum_ps,response_checksum,acts,row_hits\n";
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  std::cout << std::left << std::setw(16) << "preset" << std::setw(5) << "mode" << std::setw(13)
            << "pattern" << std::right << std::setw(10) << "peak GB/s" << std::setw(11)
            << "achieved" << std::setw(8) << "frac" << std::setw(10) << "sim us" << std::setw(12)
            << "req/wall-s" << std::setw(12) << "req/cpu-s" << std::setw(8) << "REFs" << std::setw(6) << "viol" << "\n";
  std::uint64_t total_viol = 0;
  for (const auto& ps : presets)
    for (pattern pat : {pattern::seq_read, pattern::seq_write, pattern::random_read})
      for (bool at : {false, true}) {
        if (!run_pat[static_cast<int>(pat)] || (at ? !run_at : !run_lt)) continue;
        const dram::dram_spec sp = dram::preset(ps);
        const result r = run_one(ps, at, pat, bytes ? bytes : stream_bytes(sp), randoms,
                                 outstanding ? outstanding : default_max_outstanding(sp), bus_model);
        total_viol += r.violations;
        const double rps = r.wall_s > 0 ? r.requests / r.wall_s : 0;
        const double cps = r.cpu_s > 0 ? r.requests / r.cpu_s : 0;
        std::cout << std::left << std::setw(16) << r.preset << std::setw(5) << r.mode
                  << std::setw(13) << r.pat << std::right << std::fixed << std::setprecision(1)
                  << std::setw(10) << r.peak_Bps / 1e9 << std::setw(11) << r.achieved_Bps / 1e9
                  << std::setprecision(3) << std::setw(8) << r.achieved_Bps / r.peak_Bps
                  << std::setprecision(1) << std::setw(10) << r.sim_s * 1e6 << std::setw(12)
                  << std::setprecision(0) << rps << std::setw(12) << cps << std::setw(8) << r.refreshes << std::setw(6)
                  << r.violations << "\n";
        out << r.preset << "," << r.mode << "," << r.pat << "," << r.peak_Bps / 1e9 << ","
              << r.achieved_Bps / 1e9 << "," << r.achieved_Bps / r.peak_Bps << "," << r.requests
              << "," << r.bytes << "," << r.sim_s * 1e6 << "," << r.wall_s << "," << rps << "," << r.cpu_s << "," << cps << ","
              << r.refreshes << "," << r.violations << "," << r.last_ps << ","
              << r.latency_sum_ps << "," << r.resp_hash << "," << r.acts << "," << r.row_hits
              << "\n";
      }
  if (run_lt)  // (the LT rows' REFs column is always 0: not a missing refresh)
    std::cout << "REFs: refresh commands the AT channels issued; LT issues none: a busy channel is charged the\n"
                 "availability (tREFI - tRFC) / tREFI, an idle one waits for a REF due at the AT channel's\n"
                 "time and finds its rows closed (docs/dram.md, LT estimate)\n";
  std::cout << "timing-rule violations, all runs: " << total_viol << "\n";
  if (!csv.empty()) {
    std::cout << std::flush;
    try {
      write_output_file(csv, out.str(), "--csv");
    } catch (const std::exception& e) {
      std::cerr << "cdma-vp: bench dram: " << printable(e.what(), true) << "\n";
      return 3;
    }
    std::cout << "CSV written to " << printable(csv) << "\n";
  }
  return total_viol == 0 ? 0 : 1;
}

const bench_registrar reg({"dram", "GPU DRAM: achieved bandwidth / peak per preset (LT, AT), sim speed",
                           bench_dram});

}  // namespace
}  // namespace cdma::platform
