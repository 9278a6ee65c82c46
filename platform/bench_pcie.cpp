// cdma-vp bench pcie: a GPU bandwidth test on the PCIe link model. A traffic initiator (the
// GPU copy engine) sends one transaction of each size from 64 B to 64 MiB through pcie_link
// to host memory, host-to-device (the device reads host memory: MRd + CplD) and
// device-to-host (the device writes: MWr), in LT (b_transport) and AT (4-phase nb_transport),
// and prints the achieved GB/s (1e9 B/s) per size: bytes / (completion - issue), each
// transfer starting on an idle link. Each (preset, mode) runs in a fresh SystemC context.
//
//   cdma-vp bench pcie [--preset NAME] [--min BYTES] [--max BYTES] [--csv FILE] [--plot FILE]
//   cdma-vp bench pcie --table     bulk (16 MiB) GB/s of the measured-host presets, LT vs AT
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "platform/bench.h"
#include "platform/command.h"
#include "tlm/core/sc_time_util.h"
#include "tlm/memory/host_memory.h"
#include "tlm/pcie/link_math.h"
#include "tlm/pcie/pcie_link.h"

namespace cdma::platform {

namespace {

/// Repository root (for scripts/): the build's CDMA_SOURCE_DIR, else derived from this file.
std::string source_dir() {
#ifdef CDMA_SOURCE_DIR
  return CDMA_SOURCE_DIR;
#else
  const std::string f = __FILE__;
  const std::size_t k = f.rfind("/platform/");
  return k == std::string::npos ? std::string(".") : f.substr(0, k);
#endif
}

using namespace sc_core;
using namespace tlm;

struct job {
  bool read = false;  // h2d (device reads host memory)
  std::uint64_t bytes = 0;
  double seconds = 0;
};

/// The GPU copy engine: one transaction at a time, LT or AT.
struct copy_engine : sc_module {
  tlm_utils::simple_initiator_socket<copy_engine> init;
  bool at = false;
  std::vector<job>* jobs = nullptr;
  std::vector<std::uint8_t> buf;
  sc_event resp_ev;

  SC_HAS_PROCESS(copy_engine);
  explicit copy_engine(sc_module_name n) : sc_module(n), init("init") {
    init.register_nb_transport_bw(this, &copy_engine::nb_transport_bw);
    SC_THREAD(run);
  }
  tlm_sync_enum nb_transport_bw(tlm_generic_payload&, tlm_phase& ph, sc_time&) {
    if (ph == BEGIN_RESP) {
      resp_ev.notify(SC_ZERO_TIME);
      return TLM_COMPLETED;
    }
    return TLM_ACCEPTED;  // END_REQ
  }
  void run() {
    const std::uint64_t host_addr = 1ull << 30;
    for (job& j : *jobs) {
      if (buf.size() < j.bytes) buf.resize(j.bytes, 0x5a);
      tlm_generic_payload gp;
      gp.set_command(j.read ? TLM_READ_COMMAND : TLM_WRITE_COMMAND);
      gp.set_address(host_addr);
      gp.set_data_ptr(buf.data());
      gp.set_data_length(static_cast<unsigned>(j.bytes));
      gp.set_streaming_width(static_cast<unsigned>(j.bytes));
      gp.set_response_status(TLM_INCOMPLETE_RESPONSE);
      const sc_time t0 = sc_time_stamp();
      if (at) {
        tlm_phase ph = BEGIN_REQ;
        sc_time d = SC_ZERO_TIME;
        init->nb_transport_fw(gp, ph, d);
        wait(resp_ev);
        j.seconds = (sc_time_stamp() - t0).to_seconds();
      } else {
        sc_time d = SC_ZERO_TIME;
        init->b_transport(gp, d);
        j.seconds = d.to_seconds();
        wait(d);
      }
      if (!gp.is_response_ok()) SC_REPORT_ERROR(name(), "transfer failed");
      wait(sc_time(20, SC_US));  // idle link (Acks, UpdateFCs drained) before the next one
    }
  }
};

/// Runs `jobs` on a fresh platform (copy engine + link + host memory) in a fresh context.
void simulate(const pcie::link_params& lp, bool at, std::vector<job>& jobs) {
  sc_curr_simcontext = new sc_simcontext();  // leaked on purpose, see tests/support/sc_fixture.h
  sc_default_global_context = sc_curr_simcontext;
  host_memory_params hp;
  // A host whose DRAM never limits the link: 8 channels DDR4-3200 = 8 x 8 B x 3.2e9 B/s
  // (JEDEC JESD79-4 speed bin), 80 ns latency (host_memory default).
  hp.bandwidth_Bps = 204.8e9;
  auto eng = std::make_unique<copy_engine>("gpu_ce");
  auto link = std::make_unique<pcie_link>("pcie", lp);
  auto host = std::make_unique<host_memory>("host_mem", hp);
  eng->at = at;
  eng->jobs = &jobs;
  eng->init.bind(link->tgt);
  link->init.bind(host->tgt);
  sc_start();
}

struct row {
  std::string mode, direction;
  std::uint64_t bytes;
  double gbps;
};

std::vector<row> sweep(const pcie::link_params& lp, std::uint64_t lo, std::uint64_t hi) {
  std::vector<row> rows;
  for (bool at : {false, true}) {
    std::vector<job> jobs;
    for (bool read : {true, false})
      for (std::uint64_t b = lo; b <= hi; b *= 2) jobs.push_back({read, b, 0});
    simulate(lp, at, jobs);
    for (const job& j : jobs)
      rows.push_back({at ? "at" : "lt", j.read ? "h2d" : "d2h", j.bytes,
                      static_cast<double>(j.bytes) / j.seconds / 1e9});
  }
  return rows;
}

std::uint64_t parse_bytes(const std::string& s, const std::string& opt) {
  std::size_t pos = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(s, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  std::string suf = s.substr(pos);
  if (pos == 0 || !(suf.empty() || suf == "K" || suf == "KiB" || suf == "M" || suf == "MiB"))
    throw std::invalid_argument(opt + " expects a byte count like 64, 4K or 64M, got '" + s + "'");
  if (suf[0] == 'K') v <<= 10;
  if (!suf.empty() && suf[0] == 'M') v <<= 20;
  return v;
}

int table() {
  const std::uint64_t bulk = 16ull << 20;
  std::cout << "PCIe bulk bandwidth, " << (bulk >> 20)
            << " MiB transfers, GB/s (1e9 B/s); h2d = device reads host, d2h = device writes\n";
  std::cout << std::left << std::setw(26) << "preset" << std::right << std::setw(10) << "h2d LT"
            << std::setw(10) << "h2d AT" << std::setw(10) << "d2h LT" << std::setw(10) << "d2h AT"
            << std::setw(12) << "64B RTT us\n";
  for (const char* name : {"measured-host", "measured-host-gen4x16", "measured-host-gen5x16",
                           "measured-host-gen6x16", "gen3x16", "gen4x16", "gen5x16", "gen6x16",
                           "gen3x8", "gen4x4", "gen5x1"}) {
    const pcie::link_params lp = pcie::preset(name);
    double g[2][2] = {};
    double rtt = 0;
    for (bool at : {false, true}) {
      std::vector<job> jobs = {{true, bulk, 0}, {false, bulk, 0}, {true, 64, 0}};
      simulate(lp, at, jobs);
      g[at][0] = bulk / jobs[0].seconds / 1e9;
      g[at][1] = bulk / jobs[1].seconds / 1e9;
      if (!at) rtt = jobs[2].seconds * 1e6;
    }
    std::cout << std::left << std::setw(26) << name << std::right << std::fixed
              << std::setprecision(2) << std::setw(10) << g[0][0] << std::setw(10) << g[1][0]
              << std::setw(10) << g[0][1] << std::setw(10) << g[1][1] << std::setw(11)
              << std::setprecision(3) << rtt << "\n";
  }
  return 0;
}

int bench_pcie(const std::vector<std::string>& args) {
  std::string preset_name = "measured-host", csv, plot;
  std::uint64_t lo = 64, hi = 64ull << 20;
  try {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
        return args[++i];
      };
      if (a == "--help" || a == "-h") {
        std::cout << "Usage: cdma-vp bench pcie [--preset NAME] [--min BYTES] [--max BYTES]\n"
                     "                          [--csv FILE] [--plot FILE.png] | --table\n"
                     "  --preset  genGxW (G 1..6) or measured-host[-genGxW]; default measured-host\n"
                     "  --min/--max  size range, powers of two (default 64 .. 64M)\n"
                     "  --csv     write mode,direction,bytes,gbps\n"
                     "  --plot    PNG via /usr/bin/python3 scripts/plot_pcie_bench.py\n"
                     "  --table   bulk GB/s of several presets, LT vs AT, and the 64 B read RTT\n";
        return 0;
      } else if (a == "--table") {
        return table();
      } else if (a == "--preset") {
        preset_name = value();
      } else if (a == "--min") {
        lo = parse_bytes(value(), a);
      } else if (a == "--max") {
        hi = parse_bytes(value(), a);
      } else if (a == "--csv") {
        csv = value();
      } else if (a == "--plot") {
        plot = value();
      } else {
        throw std::invalid_argument("unknown option '" + a + "' of bench pcie");
      }
    }
    if (lo == 0 || hi < lo || hi > (1ull << 31))
      throw std::invalid_argument("--min/--max: need 0 < min <= max <= 2G");
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  }
  pcie::link_params lp;
  try {
    lp = pcie::preset(preset_name);
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  }
  const std::vector<row> rows = sweep(lp, lo, hi);

  std::cout << "PCIe bandwidth test, preset " << preset_name << ": Gen" << lp.gen << " x"
            << lp.lanes << ", MPS " << lp.mps << ", MRRS " << lp.mrrs << ", completions "
            << pcie::completion_payload(lp) << " B, " << lp.tags << " tags; GB/s = 1e9 B/s\n";
  std::cout << std::setw(12) << "bytes" << std::setw(10) << "h2d LT" << std::setw(10) << "h2d AT"
            << std::setw(10) << "d2h LT" << std::setw(10) << "d2h AT" << "\n";
  auto find = [&](const char* m, const char* d, std::uint64_t b) {
    for (const row& r : rows)
      if (r.mode == m && r.direction == d && r.bytes == b) return r.gbps;
    return 0.0;
  };
  for (std::uint64_t b = lo; b <= hi; b *= 2)
    std::cout << std::setw(12) << b << std::fixed << std::setprecision(2) << std::setw(10)
              << find("lt", "h2d", b) << std::setw(10) << find("at", "h2d", b) << std::setw(10)
              << find("lt", "d2h", b) << std::setw(10) << find("at", "d2h", b) << "\n";
  if (!csv.empty() || !plot.empty()) {
    const std::string path = csv.empty() ? plot + ".csv" : csv;
    std::ofstream f(path);
    if (!f) {
      std::cerr << "cdma-vp: cannot write " << path << "\n";
      return 2;
    }
    f << "mode,direction,bytes,gbps\n";
    for (const row& r : rows)
      f << r.mode << "," << r.direction << "," << r.bytes << "," << std::setprecision(6) << r.gbps
        << "\n";
    f.close();
    if (!plot.empty()) {
      const std::string cmd = "/usr/bin/python3 '" + source_dir() +
                              "/scripts/plot_pcie_bench.py' '" + path + "' '" + plot +
                              "' 'PCIe " + preset_name + "'";
      if (std::system(cmd.c_str()) != 0) {
        std::cerr << "cdma-vp: plotting failed (" << cmd << ")\n";
        return 1;
      }
      std::cout << "plot: " << plot << "\n";
    }
  }
  return 0;
}

const bench_registrar reg({"pcie",
                           "PCIe bandwidth test: GB/s per size 64 B..64 MiB, h2d/d2h, LT and AT",
                           bench_pcie});

}  // namespace
}  // namespace cdma::platform
