// cdma-vp bench pcie: a GPU bandwidth test on the PCIe link model. A traffic initiator (the
// GPU copy engine) sends one transaction of each size from 64 B to 64 MiB through pcie_link
// to host memory, host-to-device (the device reads host memory: MRd + CplD) and
// device-to-host (the device writes: MWr), in LT (b_transport) and AT (4-phase nb_transport),
// and prints the achieved GB/s (1e9 B/s) per size: bytes / (completion - issue), each
// transfer starting on an idle link. Each (preset, mode) runs in a fresh SystemC context.
//
//   cdma-vp bench pcie [--preset NAME] [--min BYTES] [--max BYTES] [--csv FILE] [--plot FILE]
//   cdma-vp bench pcie --table     bulk (16 MiB) GB/s of the measured-host presets, LT vs AT
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
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
#include "platform/config.h"
#include "platform/outputs.h"
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
  std::uint8_t* buf = nullptr;  ///< data of every transfer (untouched_buffer: never read or written)
  std::uint64_t host_addr = 0;  ///< where the transfers go in host memory
  const job** current = nullptr;       ///< set to the transfer in flight (named when the simulation fails)
  std::exception_ptr* failure = nullptr;  ///< set to what a transfer threw (the simulation is stopped)
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
    // An exception of a transfer (std::bad_alloc: the AT link queues every TLP of a transaction
    // at once) is kept for simulate() to name the transfer, not left to the SystemC kernel
    // ("Error: (E549) uncaught exception: std::bad_alloc").
    try {
      transfers();
    } catch (const std::exception&) {
      *failure = std::current_exception();
      sc_stop();
    }
  }
  void transfers() {
    for (job& j : *jobs) {
      *current = &j;
      tlm_generic_payload gp;
      gp.set_command(j.read ? TLM_READ_COMMAND : TLM_WRITE_COMMAND);
      gp.set_address(host_addr);
      gp.set_data_ptr(buf);
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

/// A measurement that could not be completed (e.g. out of memory): the message names the
/// transfer and the reason.
struct bench_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Host memory under the transfers: the bench measures time only, so the bytes are neither
/// stored nor produced (the memory target's timing does not depend on them). Writes are
/// dropped and reads leave the destination as it is, so no byte of the copy engine's buffer
/// is touched: a 2 GiB transfer needs no 2 GiB of RAM in the engine nor in host memory
/// (it was 2.5 bytes of RAM per byte of --max: 2G needed > 3.5 GB).
struct discard_region : mem::content_region {
  void read(std::uint64_t, std::uint8_t*, std::size_t) override {}
  void write(std::uint64_t, const std::uint8_t*, std::size_t) override {}
};

/// `bytes` of address space for the copy engine's data pointer, reserved without backing
/// (MAP_NORESERVE) and never touched (discard_region): it costs no RAM.
class untouched_buffer {
public:
  explicit untouched_buffer(std::uint64_t bytes) : bytes_(std::max<std::uint64_t>(bytes, 1)) {
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      throw bench_failure("cannot reserve " + std::to_string(bytes_) + " bytes (" + bench_format_bytes(bytes_) +
                          ") of address space for the transfers: " + std::strerror(errno));
    p_ = static_cast<std::uint8_t*>(p);
  }
  ~untouched_buffer() { ::munmap(p_, bytes_); }
  untouched_buffer(const untouched_buffer&) = delete;
  untouched_buffer& operator=(const untouched_buffer&) = delete;
  std::uint8_t* data() const { return p_; }

private:
  std::uint64_t bytes_;
  std::uint8_t* p_ = nullptr;
};

/// What `e` says, with std::bad_alloc worded for the user (an sc_report: its message, without
/// SystemC's "Error: (E549) uncaught exception:" and "In file:" lines).
std::string failure_reason(const std::exception& e) {
  const auto* r = dynamic_cast<const sc_report*>(&e);
  const std::string what = r ? r->get_msg() : e.what();
  if (dynamic_cast<const std::bad_alloc*>(&e) || what == "std::bad_alloc")
    return "out of memory (std::bad_alloc; the AT link model holds ~0.4 B of RAM per byte of a transfer)";
  return what;
}

/// "the AT h2d transfer of 2147483648 bytes (2 GiB)"; `j` null (before the first transfer):
/// "building the AT platform for transfers of up to 2147483648 bytes (2 GiB)".
std::string transfer_name(bool at, const job* j, std::uint64_t largest) {
  if (!j)
    return std::string("building the ") + (at ? "AT" : "LT") + " platform for transfers of up to " +
           std::to_string(largest) + " bytes (" + bench_format_bytes(largest) + ")";
  return std::string("the ") + (at ? "AT " : "LT ") + (j->read ? "h2d" : "d2h") + " transfer of " +
         std::to_string(j->bytes) + " bytes (" + bench_format_bytes(j->bytes) + ")";
}

/// Runs `jobs` on a fresh platform (copy engine + link + host memory) in a fresh context.
/// Throws bench_failure naming the transfer when the simulation fails (an exception of a
/// model, such as std::bad_alloc).
void simulate(const pcie::link_params& lp, bool at, std::vector<job>& jobs) {
  sc_curr_simcontext = new sc_simcontext();  // leaked on purpose, see tests/support/sc_fixture.h
  sc_default_global_context = sc_curr_simcontext;
  host_memory_params hp;
  // A host whose DRAM never limits the link: 8 channels DDR4-3200 = 8 x 8 B x 3.2e9 B/s
  // (JEDEC JESD79-4 speed bin), 80 ns latency (host_memory default).
  hp.bandwidth_Bps = 204.8e9;
  std::uint64_t largest = 0;
  for (const job& j : jobs) largest = std::max(largest, j.bytes);
  const job* in_flight = nullptr;  // the transfer being simulated (named when it fails)
  std::exception_ptr failure;      // what the engine's transfer threw
  try {
    const untouched_buffer buf(largest);  // (throws bench_failure)
    const std::uint64_t host_addr = 1ull << 30;
    auto eng = std::make_unique<copy_engine>("gpu_ce");
    auto link = std::make_unique<pcie_link>("pcie", lp);
    auto host = std::make_unique<host_memory>("host_mem", hp);
    // On the store itself: memory_target::map_region first invalidates DMI through the socket,
    // which is not bound yet (and no DMI pointer has been granted).
    host->store().map_region(host_addr, std::max<std::uint64_t>(largest, 1), std::make_shared<discard_region>());
    eng->at = at;
    eng->jobs = &jobs;
    eng->buf = buf.data();
    eng->host_addr = host_addr;
    eng->current = &in_flight;
    eng->failure = &failure;
    eng->init.bind(link->tgt);
    link->init.bind(host->tgt);
    link->set_host_size(hp.size_bytes);
    sc_start();
  } catch (const bench_failure&) {
    throw;
  } catch (const std::exception& e) {  // building the platform, or a process other than the engine's (E549)
    throw bench_failure(transfer_name(at, in_flight, largest) + " failed: " + failure_reason(e));
  }
  if (failure) {  // (the platform is gone: its memory is free for the message)
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      throw bench_failure(transfer_name(at, in_flight, largest) + " failed: " + failure_reason(e));
    }
  }
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

/// Largest transfer: the generic payload's data length is 32-bit (unsigned), so 2 GiB.
constexpr std::uint64_t max_transfer = 1ull << 31;

std::string plot_script() { return source_dir() + "/scripts/plot_pcie_bench.py"; }
const char* const python = "/usr/bin/python3";

/// The image formats of --plot (matplotlib's Agg backend writes each without further packages).
const char* const plot_formats[] = {"png", "svg", "pdf"};

/// The format of the --plot image: the extension of `file` (png, svg or pdf, in any case), a
/// PNG for a name without one (a device such as /dev/stdout, "plot"). Throws
/// std::invalid_argument for any other extension (the image would not be what its name says:
/// x.svg held PNG bytes).
std::string plot_format(const std::string& file) {
  const std::size_t slash = file.rfind('/');
  const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  const std::size_t dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0) return "png";  // no extension (".plot" is a name)
  std::string ext = base.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* f : plot_formats)
    if (ext == f) return ext;
  throw std::invalid_argument("--plot " + file + ": unsupported image format '." + base.substr(dot + 1) +
                              "'; expected a file name ending in .png, .svg or .pdf (the format follows the "
                              "extension; a name without one is a PNG)");
}

/// A private temporary directory ($TMPDIR, else /tmp) for the plot's CSV and image (`format`:
/// png, svg, pdf), removed (with the files) by the destructor and by the interrupt handler.
class plot_workdir {
public:
  explicit plot_workdir(const std::string& format) : format_(format) {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/cdma-vp-plot.XXXXXX";
    std::vector<char> b(tmpl.begin(), tmpl.end());
    b.push_back('\0');
    if (!::mkdtemp(b.data()))
      throw std::runtime_error("--plot: cannot create a temporary directory " + tmpl + ": " + std::strerror(errno) +
                               " (set TMPDIR to a writable directory)");
    dir_ = b.data();
    clean_dir_ = interrupt_cleanup(dir_, true);
    clean_csv_ = interrupt_cleanup(csv());
    clean_image_ = interrupt_cleanup(image());
  }
  ~plot_workdir() {
    ::unlink(csv().c_str());
    ::unlink(image().c_str());
    ::rmdir(dir_.c_str());
  }
  plot_workdir(const plot_workdir&) = delete;
  plot_workdir& operator=(const plot_workdir&) = delete;
  std::string csv() const { return dir_ + "/bench.csv"; }
  std::string image() const { return dir_ + "/plot." + format_; }

private:
  std::string format_;
  std::string dir_;
  interrupt_cleanup clean_dir_, clean_csv_, clean_image_;
};

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream o;
  o << f.rdbuf();
  if (!f && !f.eof()) throw std::runtime_error("cannot read " + path);
  return o.str();
}

/// Runs the measurement `m`; a failure (bench_failure naming the transfer, or any other
/// exception, e.g. std::bad_alloc while building a platform) is printed naming `what` was
/// asked and returns 1 (nothing measured is printed), as bench workload's failed measurements.
int measured(const std::string& what, const std::function<void()>& m) {
  try {
    m();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "cdma-vp: bench pcie: measurement failed (" << what << "): "
              << printable(failure_reason(e), true) << "\n";
  }
  return 1;
}

int bench_pcie(const std::vector<std::string>& args) {
  std::string preset_name = "measured-host", csv, plot;
  std::uint64_t lo = 64, hi = 64ull << 20;
  bool want_table = false;
  std::vector<std::string> given;  // options seen: each at most once
  try {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
        return args[++i];
      };
      if (a.rfind("--", 0) == 0 && a != "--help") {
        if (std::find(given.begin(), given.end(), a) != given.end())
          throw std::invalid_argument(a + " given twice; expected each option once");
        given.push_back(a);
      }
      // Sizes: powers of two from 1 B to 2 GiB (the generic payload's length is 32-bit).
      auto size = [&](const std::string& v) {
        const std::uint64_t b = bench_bytes(a, v, 1, max_transfer);
        if ((b & (b - 1)) != 0)
          throw std::invalid_argument(a + " '" + v + "': " + std::to_string(b) +
                                      " B is not a power of two; expected a power of two from 1 B to 2 GiB "
                                      "(e.g. 64, 4K, 64M, 2G)");
        return b;
      };
      if (a == "--help" || a == "-h") {
        std::cout << "Usage: cdma-vp bench pcie [--preset NAME] [--min BYTES] [--max BYTES]\n"
                     "                          [--csv FILE] [--plot FILE] | --table\n"
                     "  --preset  genGxW (G 1..6) or measured-host[-genGxW]; default measured-host\n"
                     "  --min/--max  size range, powers of two from 1 B to 2 GiB (default 64 .. 64M;\n"
                     "            64, 4K, 64M, 2G, \"64 MiB\"); one transfer of each size per direction and\n"
                     "            mode; the bytes are not stored (timing only): RAM ~0.4 B per byte of --max\n"
                     "            (the AT link queues a transfer's TLPs at once), 2G: ~0.9 GB, ~1 minute\n"
                     "  --csv     write mode,direction,bytes,gbps to FILE\n"
                     "  --plot    write an image to FILE, its format from the extension: .png, .svg or .pdf\n"
                     "            (a name without one is a PNG; another extension is refused); nothing else is\n"
                     "            written beside it; drawn by /usr/bin/python3 scripts/plot_pcie_bench.py\n"
                     "            (Debian's python3-matplotlib) in a temporary directory ($TMPDIR or /tmp)\n"
                     "  Outputs are checked before the measurement and replaced only when complete.\n"
                     "  --table   bulk GB/s of several presets, LT vs AT, and the 64 B read RTT;\n"
                     "            takes no other option\n"
                     "Exit status: 0 ok, 1 a measurement failed (e.g. out of memory: the message names the\n"
                     "transfer), 2 bad options (nothing measured), 3 an output could not be written.\n";
        return 0;
      } else if (a == "--table") {
        want_table = true;
      } else if (a == "--preset") {
        preset_name = value();
      } else if (a == "--min") {
        lo = size(value());
      } else if (a == "--max") {
        hi = size(value());
      } else if (a == "--csv") {
        csv = value();
        if (csv.empty()) throw std::invalid_argument("--csv '': an empty file name; expected a path");
      } else if (a == "--plot") {
        plot = value();
        if (plot.empty()) throw std::invalid_argument("--plot '': an empty file name; expected a path");
        plot_format(plot);  // (refused before measuring)
      } else {
        throw std::invalid_argument("unknown option '" + a + "'");
      }
    }
    if (want_table && given.size() > 1) {
      std::string others;
      for (const std::string& g : given)
        if (g != "--table") others += (others.empty() ? "" : ", ") + g;
      throw std::invalid_argument("--table measures its own presets and sizes (16 MiB) and writes no file; it "
                                  "takes no other option (got " + others + ")");
    }
    if (!csv.empty() && !plot.empty()) try {  // one file under two names; devices may be shared
        check_distinct_files({{csv, "--csv"}, {plot, "--plot"}}, {});
      } catch (const std::runtime_error& e) {
        throw std::invalid_argument(e.what());
      }
    if (hi < lo)
      throw std::invalid_argument("--min " + std::to_string(lo) + " is above --max " + std::to_string(hi) +
                                  "; expected min <= max");
  } catch (const std::invalid_argument& e) {
    return bench_usage_error("pcie", e.what());
  }
  if (want_table) return measured("--table", [] { table(); });
  pcie::link_params lp;
  try {
    lp = pcie::preset(preset_name);
  } catch (const std::invalid_argument& e) {
    return bench_usage_error("pcie", std::string("--preset: ") + e.what());
  }
  // Outputs and the plotting are checked before the measurement (minutes with a large --max).
  std::unique_ptr<plot_workdir> work;
  try {
    if (!csv.empty()) check_output_path(csv, "--csv");
    if (!plot.empty()) {
      check_output_path(plot, "--plot");
      if (::access(python, X_OK) != 0)
        throw std::runtime_error(std::string("--plot needs ") + python + ": " + std::strerror(errno));
      if (::access(plot_script().c_str(), R_OK) != 0)
        throw std::runtime_error("--plot needs " + plot_script() + ": " + std::strerror(errno));
      const std::string why = run_program({python, "-c", "import matplotlib"}, true, true);
      if (!why.empty())
        throw std::runtime_error(std::string("--plot needs matplotlib for ") + python +
                                 " (Debian: python3-matplotlib): 'import matplotlib' " + why);
      work = std::make_unique<plot_workdir>(plot_format(plot));
    }
  } catch (const std::exception& e) {
    return bench_usage_error("pcie", e.what());
  }
  std::vector<row> rows;
  if (const int rc = measured("--max " + bench_format_bytes(hi), [&] { rows = sweep(lp, lo, hi); })) return rc;

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
  std::cout << std::flush;
  std::ostringstream table_csv;
  table_csv << "mode,direction,bytes,gbps\n";
  for (const row& r : rows)
    table_csv << r.mode << "," << r.direction << "," << r.bytes << "," << std::setprecision(6) << r.gbps << "\n";
  int rc = 0;
  if (!csv.empty()) {
    try {
      write_output_file(csv, table_csv.str(), "--csv");
    } catch (const std::exception& e) {
      std::cerr << "cdma-vp: bench pcie: " << printable(e.what(), true) << "\n";
      rc = 3;
    }
  }
  if (!plot.empty()) {
    // The script writes into the private directory; the image is then written to FILE as any
    // output is (a temporary file beside it renamed into place; /dev/full etc. in place).
    try {
      write_output_file(work->csv(), table_csv.str(), "plot data");
      const std::string why =
          run_program({python, plot_script(), work->csv(), work->image(), "PCIe " + preset_name}, false, false);
      if (!why.empty())
        throw output_error("--plot " + plot + ": plotting failed: " + python + " " + plot_script() + " " + why);
      write_output_file(plot, read_file(work->image()), "--plot");
      std::cout << "plot: " << printable(plot) << "\n";
    } catch (const std::exception& e) {
      std::cerr << "cdma-vp: bench pcie: " << printable(e.what(), true) << "\n";
      rc = 3;
    }
  }
  return rc;
}

const bench_registrar reg({"pcie",
                           "PCIe bandwidth test: GB/s per size 64 B..64 MiB, h2d/d2h, LT and AT",
                           bench_pcie});

}  // namespace
}  // namespace cdma::platform
