// cdma-vp bench workload [--network vgg16] [--batches 64,128,256] [--density 0.5] [--full]
//                        [--produce-threads N]
//
// For each batch, side by side in one run (each measurement in its own child process so the
// peak RSS of one does not hide another's):
//   reference : produce every offloaded activation tensor once (synthetic source, 1 MiB
//               chunks) and ZVC-compress it in 4 KiB windows with the engine's framing
//               (codec::compress_window, + the 8-byte metadata entry per window, so its ratio
//               is the LT run's), outside the simulator;
//   LT        : the simulator on the same network, batch and activations, LT, every
//               prefetched byte verified: the cDMA training step (it produces and compresses
//               every offloaded tensor once, like the reference, and also decompresses and
//               verifies it); with --full all three steps (oracle, vDNN, cDMA) of `cdma-vp run`.
// Prints wall time and peak RSS (VmHWM) of both and the simulator overhead
// (LT wall - reference wall) / reference wall. The reference runs on one thread; the LT run
// has its simulation thread, `--produce-threads` activation producers (default: the
// platform's produce_threads, 2) and the host store's spill I/O thread, so on a machine with
// free cores its wall time hides part of its CPU time: the CPU overhead is printed beside it. Targets (issue 8): peak RSS <= 2 GB at batch
// 256, overhead < 20 %. Host memory spills to a temporary file ($TMPDIR or /tmp) beyond 2 GiB
// of offloaded bytes; a batch whose offload does not fit on that disk is not run.
#include <signal.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>

#include "platform/bench.h"
#include "platform/command.h"
#include "platform/config.h"
#include "platform/outputs.h"
#include "platform/platform.h"
#include "tlm/codec/codec.h"
#include "tlm/codec/window.h"
#include "workloads/activations/activation_source.h"
#include "workloads/io/csv.h"
#include "workloads/network/network.h"

namespace cdma::platform {
namespace {

std::uint64_t read_status_kb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size()));
  return 0;
}

/// fork() for a measurement or a check: an interrupt of cdma-vp (SIGINT, SIGTERM, SIGHUP) is
/// passed on to the child and waited for (forward_interrupt_to), so no child goes on measuring
/// after the bench has ended (`kill PID` of the bench left its child computing for minutes;
/// breaker s23); the child ends on it by the default action (the bench prints the one message).
/// The signals are held across the fork: one arriving in between is delivered once the child
/// is registered. The caller calls forget_child(pid) when it has waited for the child.
pid_t fork_child() {
  sigset_t hold, old;
  sigemptyset(&hold);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&hold, sig);
  ::pthread_sigmask(SIG_BLOCK, &hold, &old);
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction sa {};
      if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler != SIG_IGN) ::signal(sig, SIG_DFL);
    }
  } else if (pid > 0) {
    forward_interrupt_to(pid);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return pid;
}

struct measure {
  bool ok = false;
  double wall_s = 0;
  double cpu_s = 0;  ///< user + system CPU seconds of the child (wait4)
  std::uint64_t peak_rss = 0;
  std::string note;
};

/// Runs fn in a child process; fn returns a note; the child reports wall time and VmHWM.
template <typename Fn>
measure in_child(Fn fn) {
  int fds[2];
  if (::pipe(fds) != 0) return {false, 0, 0, 0, "pipe failed"};
  const pid_t pid = fork_child();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return {false, 0, 0, 0, std::string("fork failed: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::ostringstream o;
    try {
      const auto t0 = std::chrono::steady_clock::now();
      const std::string note = fn();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      o << "ok " << s << " " << read_status_kb("VmHWM") * 1024 << " " << note;
    } catch (const std::exception& e) {
      o << "error 0 0 " << e.what();
    }
    const std::string msg = o.str();
    (void)!::write(fds[1], msg.data(), msg.size());
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) msg.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  struct rusage ru {};
  while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  forget_child(pid);
  measure m;
  m.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  std::istringstream in(msg);
  std::string tag;
  in >> tag >> m.wall_s >> m.peak_rss;
  std::getline(in, m.note);
  if (!m.note.empty() && m.note[0] == ' ') m.note.erase(0, 1);
  m.ok = tag == "ok";
  if (msg.empty()) m.note = "child died (status " + std::to_string(status) + ")";
  return m;
}

/// Produces and compresses every offloaded tensor once, as the simulator's cDMA step would.
std::string reference(const workloads::network& net, double density) {
  workloads::synthetic_activation_source src(density, 1);
  const auto zvc = codec::make_codec(codec::codec_id::zvc, 4);
  const std::size_t chunk = 1 << 20, window = 4096;
  std::vector<std::uint8_t> in(chunk), out(zvc->max_compressed_size(window));
  std::uint64_t raw = 0, comp = 0;
  for (std::size_t i = 0; i + 1 < net.layers.size(); ++i) {  // the last layer's input stays resident
    const auto& l = net.layers[i];
    const std::uint64_t bytes = l.offload.bytes();
    for (std::uint64_t off = 0; off < bytes; off += chunk) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, bytes - off));
      src.fill(l.offload_key, l.offload, off, in.data(), n);
      for (std::size_t w = 0; w < n; w += window) {  // the engine's framing: raw when not smaller
        comp += codec::compress_window(*zvc, in.data() + w, std::min(window, n - w), out.data()).bytes;
      }
    }
    comp += codec::window_count(bytes, window) * codec::window_entry_bytes;  // its metadata table
    raw += bytes;
  }
  std::ostringstream o;
  if (raw == 0) return "nothing offloaded";
  o << std::fixed << std::setprecision(2) << "ratio " << static_cast<double>(raw) / static_cast<double>(comp);
  return o.str();
}

int usage(const std::string& msg) { return bench_usage_error("workload", msg); }

/// What the simulated run (run(), LT) says of `c` before it simulates anything: "" when it
/// starts, else its refusal (e.g. host_mem.size too small for the batch, a layer kernel beyond
/// the time bound). Checked in a child process that stops as the simulation starts: a method
/// spawned before run() builds the platform runs first when sc_start initialises (the kernel
/// runs methods before threads), after every check run() makes and the platform's construction,
/// before any process has done work (the first layer starts only after the runtime produced
/// the first tensor). So every batch is checked before any measurement starts, each in a few
/// tens of ms (vgg16 at batch 256 and 128: 0.03-0.06 s each, strace).
std::string refusal(const platform_config& c) {
  int fds[2];
  if (::pipe(fds) != 0) return std::string("pipe failed: ") + std::strerror(errno);
  const pid_t pid = fork_child();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::string("fork failed: ") + std::strerror(errno);
  }
  if (pid == 0) {
    ::close(fds[0]);
    const int out = fds[1];
    std::string msg = "ok";
    try {
      sc_core::sc_spawn_options method;
      method.spawn_method();
      sc_core::sc_spawn(
          [out] {
            (void)!::write(out, "ok", 2);
            ::_exit(0);  // the simulation has started: nothing more to check
          },
          "bench_workload_check", &method);
      run_hooks h;  // (also stops at the first layer, should a thread run before that method)
      h.progress = [out](const std::string&, bool, std::size_t, std::size_t) {
        (void)!::write(out, "ok", 2);
        ::_exit(0);  // the run has started: nothing more to check
      };
      run(c, h);
    } catch (const std::exception& e) {
      msg = std::string("error ") + e.what();
    }
    (void)!::write(out, msg.data(), msg.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) msg.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  forget_child(pid);
  if (msg.rfind("ok", 0) == 0) return "";
  if (msg.rfind("error ", 0) == 0) return msg.substr(6);
  return "the check of the run ended without an answer (wait status " + std::to_string(status) + ")";
}

/// The LT run's configuration for batch `b` (the reference's synthetic data and density).
platform_config lt_config(const std::string& network, int b, double density, std::uint64_t produce_threads,
                          bool full) {
  platform_config c;
  c.network = network;
  c.batch = b;
  // Synthetic data at the reference's density (and seed), whatever the network: the
  // shipped real sample of inception_v3 made the ratios differ (1.83 vs 2.04).
  c.activations = {"synthetic"};
  c.synthetic_density = density;
  c.produce_threads = produce_threads;
  if (!full) c.steps = "cdma";
  return c;
}

int bench_workload(const std::vector<std::string>& args) {
  // Values are read as the configuration reads them (apply_override: whole numbers written any
  // decimal way, 4, 4.0 or 4e0; ranges and messages of the keys batch, density, produce_threads).
  platform_config opts;
  opts.network = "vgg16";
  std::vector<int> batches{64, 128, 256};
  bool full = false;
  std::vector<std::string> given;  // options seen: each at most once (the last one was kept)
  for (std::size_t i = 0; i < args.size(); ++i) {
    // --opt value and --opt=value
    std::string opt = args[i];
    std::optional<std::string> inline_value;
    if (const auto eq = opt.find('='); opt.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = opt.substr(eq + 1);
      opt.erase(eq);
    }
    auto value = [&]() {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) throw std::invalid_argument(opt + " needs a value");
      return args[++i];
    };
    try {
      if (opt.rfind("--", 0) == 0 && opt != "--help") {
        if (std::find(given.begin(), given.end(), opt) != given.end())
          throw std::invalid_argument(opt + " given twice; expected each option once");
        given.push_back(opt);
      }
      if (opt == "--network") opts.network = value();
      else if (opt == "--density") apply_override(opts, "density=" + value(), false, "--density");
      else if (opt == "--full" && !inline_value) full = true;
      else if (opt == "--full") throw std::invalid_argument("--full takes no value (got --full=" + *inline_value + ")");
      else if (opt == "--produce-threads") apply_override(opts, "produce_threads=" + value(), false, "--produce-threads");
      else if (opt == "--batches") {
        // Comma-separated batch sizes, each read as the key batch is: 64, 6.4e1; no empty item.
        const std::string list = value();
        batches.clear();
        std::size_t from = 0;
        for (;;) {
          const std::size_t comma = std::min(list.find(',', from), list.size());
          // Spaces around an item are ignored, as in the CSV inputs ("64, 128").
          const std::string b = workloads::csv::trim(list.substr(from, comma - from));
          if (b.empty())
            throw std::invalid_argument("--batches '" + list + "': an empty batch size (item " +
                                        std::to_string(batches.size() + 1) +
                                        "); expected comma-separated batch sizes, e.g. 64,128,256");
          platform_config one;
          apply_override(one, "batch=" + b, false, "--batches");
          // The same batch twice (also 8 and 8.0) would be measured twice, as a sweep refuses.
          if (std::find(batches.begin(), batches.end(), one.batch) != batches.end())
            throw std::invalid_argument("--batches '" + list + "': batch " + std::to_string(one.batch) +
                                        " listed twice; expected each batch size once");
          batches.push_back(one.batch);
          if (comma == list.size()) break;
          from = comma + 1;
        }
      } else if (opt == "--help" || opt == "-h") {
        std::cout << "Usage: cdma-vp bench workload [--network NAME] [--batches 64,128,256] "
                     "[--density D] [--full] [--produce-threads N]\n"
                     "  LT runs the cDMA step only (it produces + compresses every activation once, as the\n"
                     "  reference does); --full runs oracle, vDNN and cDMA steps as `cdma-vp run` does.\n"
                     "  --produce-threads: activation producer threads of the LT run (default 2; the\n"
                     "  reference always uses one thread).\n"
                     "  Values as in `cdma-vp run` (--opt value or --opt=value; whole numbers 64, 6.4e1);\n"
                     "  batch sizes 1..1048576, density 0..1, producer threads 1..64.\n"
                     "  Every batch is first checked against the simulated run's own rules (e.g. host_mem.size,\n"
                     "  the kernel-time bounds): a batch it would refuse is refused before anything is measured\n"
                     "  (exit 2). Exit status 1 when a measurement fails (the reference, or the LT run: an\n"
                     "  error or a prefetched byte that differs); the table still shows the others.\n";
        return 0;
      } else {
        return usage("unknown option '" + args[i] + "'");
      }
    } catch (const std::exception& e) {
      return usage(e.what());
    }
  }
  const std::string network = opts.network;
  const double density = opts.synthetic_density;
  const std::uint64_t produce_threads = opts.produce_threads;
  // Every batch's network is built before the table starts (an unknown network printed the
  // table header before failing).
  std::string shown = network;  // the network's own name, not the alias given (inceptionv3)
  for (const int b : batches) {
    try {
      shown = workloads::make_network(network, b).name;
    } catch (const std::exception& e) {
      return usage("--network " + network + ": " + e.what());
    }
  }
  // Every batch the simulated run would refuse is refused here, before any measurement (the
  // reference of a batch ran, for minutes, before its LT run failed at once).
  for (const int b : batches) {
    const std::string why = refusal(lt_config(network, b, density, produce_threads, full));
    if (!why.empty()) return usage("batch " + std::to_string(b) + ": the simulated run refuses it: " + why);
  }
  std::cout << "bench workload: " << printable(shown) << ", synthetic density " << density << ", LT "
            << (full ? "oracle + vDNN + cDMA steps" : "cDMA step")
            << ", every prefetched byte verified; each figure from its own child process\n"
            << "threads: reference 1; LT 1 simulation + "
            << (platform_config{}.produce_ahead > 0 ? std::to_string(produce_threads) : std::string("0"))
            << " activation producer(s) (synthetic data) + 1 spill I/O (beyond 2 GiB offloaded)\n\n"
            << "(wall s: elapsed; cpu s: user + system CPU of the child, the fair figure on a shared"
               " machine;\n overhead = (LT - ref) / ref, from wall and from CPU time)\n\n"
            << std::left << std::setw(6) << "batch" << std::right << std::setw(11) << "offload GB"
            << std::setw(9) << "ref wall" << std::setw(9) << "ref cpu" << std::setw(10) << "ref RSS"
            << std::setw(9) << "LT wall" << std::setw(9) << "LT cpu" << std::setw(10) << "LT RSS"
            << std::setw(10) << "ovh wall" << std::setw(10) << "ovh cpu" << "  note\n" << std::flush;
  std::vector<std::string> failures;  // measurements that failed, named by batch
  for (int b : batches) {
    const workloads::network net = workloads::make_network(network, b);  // checked above
    std::uint64_t offload = 0;
    for (std::size_t i = 0; i + 1 < net.layers.size(); ++i) offload += net.layers[i].offload.bytes();
    const measure ref = in_child([&] { return reference(net, density); });
    measure lt;
    // Beyond 2 GiB the host memory spills to a file: the offloaded bytes must fit on that disk.
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = (tmp && *tmp) ? tmp : "/tmp";
    struct statvfs vfs {};
    const std::uint64_t disk = ::statvfs(dir.c_str(), &vfs) == 0 ? std::uint64_t(vfs.f_bavail) * vfs.f_frsize : 0;
    const std::uint64_t need = full ? offload : offload / 2;  // vDNN holds raw bytes; cDMA ~half
    const bool lt_skipped = offload > (2ull << 30) && disk && need > disk * 9 / 10;
    if (lt_skipped) {
      std::ostringstream o;
      o << "LT not run: the host-memory spill file needs ~" << std::fixed << std::setprecision(1)
        << need / 1e9 << " GB, " << dir << " has " << disk / 1e9 << " GB free";
      lt.note = o.str();
    } else {
      lt = in_child([&] {
        const run_report r = run(lt_config(network, b, density, produce_threads, full));
        // CPU of the simulation thread alone (the activation producers run on their own
        // threads): the critical path when the cores are free.
        struct rusage self {};
        ::getrusage(RUSAGE_THREAD, &self);
        const double main_cpu = static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
                                static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6;
        std::ostringstream o;
        const double vb = static_cast<double>(r.verified_bytes());  // MB below 1 GB (was "0.0 GB")
        if (!r.io_error.empty()) throw std::runtime_error("stopped by an I/O error: " + r.io_error);
        if (!r.ok()) throw std::runtime_error("VERIFY FAILED: " + std::to_string(r.mismatched_bytes()) +
                                              " of " + std::to_string(r.verified_bytes()) + " prefetched bytes differ");
        o << std::fixed << std::setprecision(1);
        if (vb == 0) o << "nothing offloaded, nothing compared";
        else
          o << "verified " << (vb < 1e9 ? vb / 1e6 : vb / 1e9) << (vb < 1e9 ? " MB" : " GB") << ", ratio "
            << std::setprecision(2) << r.compression_ratio();
        o << ", simulation thread " << std::setprecision(2) << main_cpu << " s CPU";
        return o.str();
      });
    }
    auto pct = [](double lt_s, double ref_s) {
      std::ostringstream o;
      o << std::fixed << std::setprecision(0) << 100.0 * (lt_s - ref_s) / ref_s << "%";
      return o.str();
    };
    const bool both = lt.ok && ref.ok && ref.wall_s > 0 && ref.cpu_s > 0;
    std::cout << std::left << std::setw(6) << b << std::right << std::fixed << std::setprecision(2)
              << std::setw(11) << offload / 1e9 << std::setw(9) << ref.wall_s << std::setw(9) << ref.cpu_s
              << std::setw(10) << (std::to_string(ref.peak_rss >> 20) + " MiB") << std::setw(9) << lt.wall_s
              << std::setw(9) << lt.cpu_s << std::setw(10)
              << (lt.ok ? std::to_string(lt.peak_rss >> 20) + " MiB" : std::string("-")) << std::setw(10)
              << (both ? pct(lt.wall_s, ref.wall_s) : "-") << std::setw(10) << (both ? pct(lt.cpu_s, ref.cpu_s) : "-")
              << "  ref: " << ref.note << "; LT: " << lt.note << "\n" << std::flush;
    if (!ref.ok) failures.push_back("batch " + std::to_string(b) + ": reference failed: " + ref.note);
    if (!lt.ok && !lt_skipped) failures.push_back("batch " + std::to_string(b) + ": LT run failed: " + lt.note);
  }
  std::cout << "\ntargets: LT peak RSS <= 2 GB at batch 256; overhead (LT - ref) / ref < 20 %\n";
  if (!failures.empty()) {
    std::cout << std::flush;
    for (const std::string& f : failures) std::cerr << "cdma-vp: bench workload: " << printable(f, true) << "\n";
    std::cerr << "cdma-vp: bench workload: " << failures.size() << " measurement(s) failed; the figures above "
              << "are incomplete\n";
    return 1;
  }
  return 0;
}

const bench_registrar reg({"workload", "VGG-16 at batch 64/128/256 in LT vs producing + compressing the activations once",
                           bench_workload});

}  // namespace
}  // namespace cdma::platform
