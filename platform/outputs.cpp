#include "platform/outputs.h"

#include <climits>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <random>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <iterator>
#include <utility>
#include <iostream>
#include <memory>
#include "platform/config.h"
#include "tlm/core/worker_thread.h"
#include "platform/report.h"
#include "workloads/activations/activation_source.h"

namespace po = boost::program_options;

extern char** environ;

namespace cdma::platform {

// ---- command words ------------------------------------------------------------------------
option_guess guess_option(const std::string& word, const std::vector<std::string>& names) {
  option_guess g;
  std::string nearest;
  std::size_t nearest_d = 3;  // within two edits
  for (const auto& n : names) {
    if (n.empty()) continue;
    if (!word.empty() && n.rfind(word, 0) == 0) g.names.push_back(n);
    const std::size_t d = edit_distance(word, n);
    if (d < nearest_d) nearest_d = d, nearest = n;
  }
  g.abbreviated = !g.names.empty();
  if (!g.abbreviated && !nearest.empty()) g.names.push_back(nearest);
  return g;
}

namespace {
/// `word` without the dashes it begins with, ASCII '-' and the typographic ones a word processor
/// or a web page substitutes (U+2010..U+2015 hyphens and dashes, U+2212 minus), and whether a
/// typographic one was among them.
std::string strip_leading_dashes(const std::string& word, bool& typographic) {
  typographic = false;
  std::size_t i = 0;
  for (;;) {
    if (i < word.size() && word[i] == '-') {
      ++i;
    } else if (i + 2 < word.size() && static_cast<unsigned char>(word[i]) == 0xE2 &&
               ((static_cast<unsigned char>(word[i + 1]) == 0x80 && static_cast<unsigned char>(word[i + 2]) >= 0x90 &&
                 static_cast<unsigned char>(word[i + 2]) <= 0x95) ||
                (static_cast<unsigned char>(word[i + 1]) == 0x88 && static_cast<unsigned char>(word[i + 2]) == 0x92))) {
      i += 3;
      typographic = true;
    } else {
      break;
    }
  }
  return word.substr(i);
}

std::vector<std::string> long_names(const po::options_description& d) {
  std::vector<std::string> names;
  for (const auto& o : d.options()) names.push_back(o->long_name());
  return names;
}
/// A word that begins with a typographic dash (`–-batch`, `—batch`, a lone `—`: pasted from a
/// document) is an option meant, never a value or a file name (breaker s24 F8; s25: `config
/// —batch` wrote the dump to a file so named): throws po::error naming the option meant.
void refuse_typographic_dash(const std::string& w, const po::options_description& d) {
  bool typographic = false;
  const std::string bare = strip_leading_dashes(w.substr(0, w.find('=')), typographic);
  if (!typographic) return;
  const option_guess g = bare.empty() ? option_guess{} : guess_option(bare, long_names(d));
  const std::string meant =
      bare.empty() ? "" : d.find_nothrow(bare, false) ? bare : g.names.size() == 1 ? g.names[0] : "";
  throw po::error("unexpected word '" + printable(w) + "': it begins with a typographic dash, not two '-'" +
                  (meant.empty() ? std::string("; options begin with --") : "; did you mean '--" + meant + "'?"));
}
}  // namespace

std::string option_hint(const option_guess& g) {
  if (g.names.empty()) return "";
  if (!g.abbreviated) return " (did you mean '--" + g.names[0] + "'?)";
  if (g.names.size() == 1) return " (did you mean '--" + g.names[0] + "'? options are not abbreviated)";
  std::string hint = " (options are not abbreviated; those beginning so:";
  for (const auto& n : g.names) hint += " --" + n;
  return hint + ")";
}

po::parsed_options parse_command_words(const std::vector<std::string>& args, const po::options_description& d,
                                       const po::positional_options_description& positional) {
  namespace style = po::command_line_style;
  try {
    if (positional.max_total_count() == 0) {
      // No positional word allowed: name the stray ones (boost says only "too many positional
      // options have been specified"; breaker s24 F8: `run --network fmnist_cnn 4`). A first
      // pass collects them into a hidden option; the result is parsed again with `d` alone
      // (parsed_options keep a pointer to their description).
      po::options_description with_stray;
      with_stray.add(d);
      with_stray.add_options()("cdma-vp-stray-words", po::value<std::vector<std::string>>());
      po::positional_options_description stray;
      stray.add("cdma-vp-stray-words", -1);
      const po::parsed_options first = po::command_line_parser(args)
                                           .options(with_stray)
                                           .positional(stray)
                                           .style(style::default_style & ~style::allow_guessing)
                                           .run();
      for (const auto& o : first.options)
        if (o.string_key == "cdma-vp-stray-words" && !o.value.empty()) {
          const std::string& w = o.value.front();
          refuse_typographic_dash(w, d);
          throw po::error("unexpected word '" + printable(w) +
                          "': not an option (options begin with --) nor the value of one (a value follows its option)");
        }
    }
    po::parsed_options parsed = po::command_line_parser(args)
                                    .options(d)
                                    .positional(positional)
                                    .style(style::default_style & ~style::allow_guessing)
                                    .run();
    // A positional word (config's output file) that begins with a typographic dash.
    for (const auto& o : parsed.options)
      if (o.position_key != -1)
        for (const std::string& v : o.value) refuse_typographic_dash(v, d);
    // A value that is one of the command's options is the value forgotten, not a file or a
    // number (breaker s24 F4: `run --json --no-verify` wrote a file named --no-verify and ran
    // verified; `run --json --batch --network x` ran at the default batch).
    for (const auto& o : parsed.options)
      for (const std::string& v : o.value) {
        // (Only a value given as the next word: --json=--x is meant.)
        if (o.original_tokens.size() < 2 || v.rfind("--", 0) != 0 || v.size() < 3) continue;
        if (d.find_nothrow(v.substr(2, v.find('=') == std::string::npos ? std::string::npos : v.find('=') - 2), false))
          throw po::error("--" + o.string_key + " '" + v + "': the value is missing (" + v +
                          " is an option of this command); a file or value that begins with -- is written ./" + v +
                          " or --" + o.string_key + "=" + v);
      }
    return parsed;
  } catch (const po::unknown_option& e) {
    std::string given = e.get_option_name();
    const auto eq = given.find('=');
    if (eq != std::string::npos) given.erase(eq);
    if (given.rfind("--", 0) != 0) {
      // `-batch 4`: a long option written with one '-' (breaker s24 F8). Named when the rest
      // is an option's full name (one letter options are not this command's form anyway).
      if (given.size() > 2 && given[0] == '-' && d.find_nothrow(given.substr(1), false))
        throw po::error("unrecognised option '" + printable(e.get_option_name()) + "' (did you mean '-" + given +
                        "'? long options begin with two '-')");
      throw;
    }
    // (The word printable: boost's message shows a newline or a zero-width space raw.)
    throw po::error("unrecognised option '" + printable(e.get_option_name()) + "'" +
                    option_hint(guess_option(given.substr(2), long_names(d))));
  }
}

// ---- interrupt cleanup -------------------------------------------------------------------
// The handler may run on any thread at any moment: it reads only lock-free atomics and
// fixed buffers filled before the entry was published, and calls only async-signal-safe
// functions (unlink, rmdir, kill, waitpid, nanosleep, write, signal, raise).
namespace {

constexpr int cleanup_slots = 64;
constexpr int child_slots = 256;
enum : int { slot_free = 0, slot_claimed = 1, slot_file = 2, slot_dir = 3 };
struct cleanup_slot {
  std::atomic<int> state{slot_free};
  char path[4096];
};
cleanup_slot g_slots[cleanup_slots];
std::atomic<int> g_children[child_slots];  // 0: free
char g_note[1024];                          // set before work starts

void write_stderr(const char* s) {
  std::size_t n = 0;
  while (s[n]) ++n;
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      return;
    }
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

extern "C" void on_interrupt(int sig) {
  const int saved = errno;
  for (auto& c : g_children)
    if (const int pid = c.load(std::memory_order_acquire); pid > 0) ::kill(pid, sig);
  // Wait (at most ~10 s) for those children to end, so no run is still writing into the
  // output directory when this process has returned (e.g. before a `sweep --merge`).
  for (int tries = 0; tries < 1000; ++tries) {
    bool running = false;
    for (auto& c : g_children)
      if (const int pid = c.load(std::memory_order_acquire); pid > 0)
        running |= ::waitpid(pid, nullptr, WNOHANG) == 0;
    if (!running) break;
    const struct timespec pause {0, 10'000'000};  // 10 ms
    ::nanosleep(&pause, nullptr);
  }
  // Files first, then the directories that held them.
  for (const int kind : {static_cast<int>(slot_file), static_cast<int>(slot_dir)})
    for (auto& s : g_slots)
      if (s.state.load(std::memory_order_acquire) == kind) {
        if (kind == slot_file) ::unlink(s.path);
        else ::rmdir(s.path);
      }
  const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
  write_stderr("\ncdma-vp: interrupted by ");
  write_stderr(name);
  write_stderr("; unfinished output files removed");
  if (g_note[0]) {
    write_stderr("; ");
    write_stderr(g_note);
  }
  write_stderr("\n");
  errno = saved;
  // The default action ends the process with this signal (exit status 128 + N in a shell).
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // blocked while the handler runs: delivered as it returns
}

/// Holds SIGINT, SIGTERM and SIGHUP in the calling thread while it lives (one that arrives
/// meanwhile is delivered when it ends): creating a file and registering it for cleanup is one
/// step, so an interrupt never finds a file created but not yet registered (seen as a leftover
/// relay directory under load). A thread started while it lives inherits the mask, so the
/// handler never runs on it.
class interrupts_held {
public:
  interrupts_held() {
    sigset_t s;
    sigemptyset(&s);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&s, sig);
    ::pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~interrupts_held() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  interrupts_held(const interrupts_held&) = delete;
  interrupts_held& operator=(const interrupts_held&) = delete;

private:
  sigset_t old_;
};

}  // namespace

void install_interrupt_cleanup() {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup, `cmd &`
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigfillset(&sa.sa_mask);  // no second signal runs the handler while it runs
    sa.sa_flags = 0;
    ::sigaction(sig, &sa, nullptr);
  }
}

void set_interrupt_note(const std::string& note) {
  const std::size_t n = std::min(note.size(), sizeof g_note - 1);
  note.copy(g_note, n);
  g_note[n] = 0;
}

interrupt_cleanup::interrupt_cleanup(const std::string& path, bool directory) {
  if (path.empty() || path.size() >= sizeof g_slots[0].path) return;
  for (int i = 0; i < cleanup_slots; ++i) {
    int expected = slot_free;
    if (!g_slots[i].state.compare_exchange_strong(expected, slot_claimed)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(directory ? slot_dir : slot_file, std::memory_order_release);
    slot_ = i;
    return;
  }
}

interrupt_cleanup& interrupt_cleanup::operator=(interrupt_cleanup&& o) noexcept {
  if (this != &o) {
    release();
    slot_ = o.slot_;
    o.slot_ = -1;
  }
  return *this;
}

void interrupt_cleanup::release() {
  if (slot_ >= 0) g_slots[slot_].state.store(slot_free, std::memory_order_release);
  slot_ = -1;
}

void forward_interrupt_to(int pid) {
  for (auto& c : g_children) {
    int expected = 0;
    if (c.compare_exchange_strong(expected, pid)) return;
  }
}

void forget_child(int pid) {
  for (auto& c : g_children) {
    int expected = pid;
    if (c.compare_exchange_strong(expected, 0)) return;
  }
}

int check_stdout(const std::string& note) {
  // A stream that failed already keeps the errno of its failed write, if nothing failed since
  // (callers check right after printing); else the flush below sets it.
  if (std::cout) errno = 0;
  std::cout.flush();
  if (std::cout) return 0;
  return stdout_write_failed(errno, note);
}

int stdout_write_failed(int e, const std::string& note) {
  // A reader that closed the pipe early (`cdma-vp config --list | head -1`) took what it
  // wanted: no message (tools killed by SIGPIPE are silent too), but still status 3.
  if (e != EPIPE)
    std::cerr << "cdma-vp: error: standard output: write failed" << (e ? std::string(": ") + std::strerror(e) : "")
              << (note.empty() ? "" : " (" + note + ")") << "\n";
  return 3;
}

namespace {
/// Length of the well-formed UTF-8 sequence of a non-ASCII lead byte at p[i] (RFC 3629: no
/// overlong forms, no surrogates, at most U+10FFFF) with its code point in `cp`; 0 if none.
std::size_t utf8_sequence(const unsigned char* p, std::size_t i, std::size_t n, std::uint32_t& cp) {
  const unsigned char c = p[i];
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  if (len == 0 || i + len > n) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const unsigned char t = p[i + k];
    if (k == 1 ? t < lo || t > hi : t < 0x80 || t > 0xBF) return 0;
    cp = cp << 6 | (t & 0x3F);
  }
  return len;
}

/// True iff `s` is well-formed UTF-8 (what a JSON output can hold).
bool valid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t len = utf8_sequence(p, i, s.size(), cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}
}  // namespace

void add_config_options(po::options_description& d, config_options& o, bool with_mode) {
  d.add_options()
      ("preset", po::value(&o.preset), "platform preset: titanx-gen3 (default), titanxp-gen3, "
                                        "v100-gen3, a100-gen4, h100-gen5")
      ("config", po::value(&o.config_file), "JSON configuration file (may name a \"preset\" to start from)")
      ("param", po::value(&o.params)->composing(),
       "override one parameter, name=value (repeatable; the last wins), e.g. pcie.lanes=8, "
       "pcie.latency=\"500 ns\"")
      ("network", po::value(&o.network), "network: inception_v3 (default), alexnet, overfeat, nin, vgg16, squeezenet, googlenet, resnet50, mobilenet_v2, fmnist_cnn, synthetic, or a layer file PATH.json (docs/workloads.md)")
      ("batch", po::value(&o.batch), "batch size >= 1 (default 32)")
      ("codec", po::value(&o.codec), "codec of the cDMA step: zvc (default) | rle | zlib | lz4 | zstd | none")
      ("activations", po::value(&o.activations)->composing(),
       "PATH: real activations, a .npz with one NCHW float32 member per layer output (or a .npy / a "
       "directory of .npy); repeated (--activations A --activations B): several sources holding the same "
       "tensors, their images concatenated along N in that order and repeated to fill the batch; or "
       "'synthetic': always synthetic data. Default (empty): the shipped chelsea.npz + coffee.npz for "
       "inception_v3 (2 distinct images), synthetic for other networks, and synthetic whenever a "
       "synthetic-data option (--density, --zero-run, --density-profile, --training-progress, --seed) "
       "is set away from its default. The resolved sources are recorded in the outputs (= --param "
       "activations=PATH, or a JSON array --param 'activations=[\"A.npz\",\"B.npz\"]')")
      ("density", po::value(&o.density), "nonzero fraction of synthetic activations, [0, 1] (default 0.5; -0 is read as 0)")
      ("policy", po::value(&o.policy), "vDNN policy: all (default) | conv (only tensors a convolution reads) | none (no transfers: the vDNN and cDMA steps equal the oracle)")
      ("no-verify", "skip comparing prefetched bytes with the offloaded ones")
      ("name-map", po::value<std::string>(), "FILE.json: path of a JSON object {\"name in file\": \"layer key\" or null, ...} renaming the tensors of --activations, null leaving one out (= --param name_map=)")
      ("missing-activations", po::value<std::string>(), "auto (default: dense for the embedded default's shipped sample, else error) | error | dense: offloaded tensors that --activations neither holds nor can compute (pool outputs are computed from their input) are an error, or dense synthetic data (= --param missing_activations=)")
      ("zero-run", po::value<std::string>(), "synthetic activations: mean zero-run length in elements (clustered zeros); 0 = independent")
      ("density-profile", po::value<std::string>(), "synthetic per-layer density over training from a CSV (iteration,epoch,layer,zero_fraction)")
      ("training-progress", po::value<std::string>(), "0..1: point of --density-profile to use (default: end of training)")
      ("seed", po::value<std::string>(), "seed of the synthetic activations")
      ("layer-times", po::value<std::string>(), "CSV layer,forward_ms,backward_ms overriding the roofline for the listed layers")
      ("steps", po::value<std::string>(), "training steps to simulate: a comma-separated subset of oracle,vdnn,cdma in that order (default all three; = --param steps=)")
      ("check-protocol", "protocol_checker on every initiator -> target connection; violations fail the run");
  if (with_mode)
    d.add_options()("mode", po::value<std::string>(),
                    "timing: lt (default, b_transport + quantum) | at (4-phase nb_transport) (= --param mode=)");
}

void config_options::resolve(const po::variables_map& vm) {
  if (!preset.empty() && !config_file.empty())
    throw config_error("--preset and --config both given; a config file names its preset with \"preset\"");
  config = !config_file.empty() ? load_config_file(config_file)
                                : cdma::platform::preset(vm.count("preset") ? preset : preset_names().front());
  given.clear();
  // A shortcut's value is checked like --param's and refused naming the option given.
  auto shortcut = [&](const char* key, const std::string& value, const char* opt) {
    apply_override(config, std::string(key) + "=" + value, false, opt);
    given.emplace_back(key, std::string(opt) + " " + value);
  };
  if (vm.count("network")) shortcut("network", network, "--network");
  if (vm.count("batch")) shortcut("batch", batch, "--batch");
  if (vm.count("codec")) shortcut("codec", codec, "--codec");
  if (vm.count("activations")) {
    apply_activations(config, activations, "--activations");
    given.emplace_back("activations", "--activations " + (activations.empty() ? std::string() : activations.front()));
  }
  if (vm.count("density")) shortcut("density", density, "--density");
  if (vm.count("policy")) shortcut("policy", policy, "--policy");
  if (vm.count("no-verify")) {
    config.verify = false;
    given.emplace_back("verify", "--no-verify");
  }
  for (const auto& [opt, key] : {std::pair<const char*, const char*>{"name-map", "name_map"}, {"missing-activations", "missing_activations"}, {"zero-run", "zero_run"},
                                 {"density-profile", "density_profile"}, {"training-progress", "training_progress"},
                                 {"seed", "seed"}, {"layer-times", "layer_times"}, {"steps", "steps"}, {"mode", "mode"}})
    if (vm.count(opt)) {
      const std::string o = std::string("--") + opt;
      shortcut(key, vm[opt].as<std::string>(), o.c_str());
    }
  if (vm.count("check-protocol")) {
    config.check_protocol = true;
    given.emplace_back("check_protocol", "--check-protocol");
  }
  // The --params in the order a configuration file's keys are applied (application_rank):
  // pcie.preset, pcie.gen, pcie.lanes, then the others as given (of one key the last wins).
  // On a measured-host preset pcie.gen / lanes re-derive pcie.pd_credits and pcie.cpl_bytes
  // when they hold the old link's calibration, so a value given for those was replaced when it
  // came first (`--param pcie.cpl_bytes=64B --param pcie.gen=5` ran 128 B; a sweep passes its
  // options before the grid values, so a passed one could never win: new-user trial s25 F2).
  std::vector<std::string> ordered = params;
  std::stable_sort(ordered.begin(), ordered.end(), [](const std::string& a, const std::string& b) {
    return application_rank(a.substr(0, a.find('='))) < application_rank(b.substr(0, b.find('=')));
  });
  for (const auto& p : ordered) {
    apply_override(config, p, false);  // (refuses a malformed or unknown one first)
    given.emplace_back(param_name(p.substr(0, p.find('=')), "--param"), "--param " + p);
  }
  // Every output records the configuration as JSON, which holds UTF-8 text only: a value with
  // other bytes (--param gpu.name=$'\xff', a Latin-1 file name) made the JSON outputs fail
  // after the run (exit 3) and `config --dump` end with an uncaught exception.
  for (const auto& p : describe_params(config)) {
    // A NUL byte ends a path for the system: the run would read another file than the one
    // recorded ("a.npz\0/../x" opens a.npz, the record says x).
    if (p.value.find('\0') != std::string::npos)
      throw config_error(p.name + " = \"" + printable(p.value) + "\": holds a NUL byte (\\x00); expected text "
                         "without NUL bytes (no path or name can hold one)");
    if (!valid_utf8(p.value))
      throw config_error(p.name + " = \"" + printable(p.value) + "\": not valid UTF-8 text; expected UTF-8 (the JSON "
                         "outputs and the effective configuration record it; rename a file whose name is not UTF-8)");
  }
  // The rules across parameters once, after every option: their order does not matter.
  validate(config);
}

namespace {
/// A value checker for an output option: an empty file name is an error (it silently wrote
/// nothing), before anything runs.
std::function<void(const std::string&)> not_empty(const char* option) {
  return [option](const std::string& v) {
    if (v.empty()) throw std::runtime_error(std::string(option) + " '': an empty file name; expected a path");
  };
}
}  // namespace

void add_output_options(po::options_description& d, output_options& o) {
  d.add_options()
      ("json", po::value(&o.json_path)->notifier(not_empty("--json")), "write results (with stats and the effective config) as JSON to FILE; "
                                         "the effective config also goes to FILE's stem + .config.json")
      ("csv", po::value(&o.csv_path)->notifier(not_empty("--csv")), "write one CSV row per layer to FILE")
      ("trace", po::value(&o.trace_path)->notifier(not_empty("--trace")), "write a Chrome trace event JSON (open in Perfetto / chrome://tracing)")
      ("vcd", po::value(&o.vcd_path)->notifier(not_empty("--vcd")), "write a VCD of irq, compute_busy, transfer_busy and link_busy_d2h/h2d (PCIe sampled once per quantum) to FILE (as named)")
      ("txn-trace", po::value(&o.txn_trace_path)->notifier(not_empty("--txn-trace")),
       "write one line per transaction event (TLM call, phase, return) on the platform's "
       "initiator -> target connections to FILE while the run goes: time (ns), connection, >> / <<, "
       "event, RD/WR, address, length, status (docs/user-guide.md); meant for short runs")
      ("txn-trace-only", po::value(&o.txn_trace_only)->notifier([](const std::string& v) {
         if (v.empty())
           throw std::runtime_error("--txn-trace-only '': no connection; expected a comma-separated list of "
                                    "connection names such as engine_pcie,pcie_host_mem");
       }),
       "trace only these connections (comma-separated): engine_gpu_mem, runtime_gpu_mem, "
       "kernels_gpu_mem, gpu_bus_gpu_mem, engine_pcie, pcie_host_mem, runtime_regs")
      ("quiet,q", po::bool_switch(&o.quiet), "no progress on stderr");
}

namespace {

bool special_file(const std::string& path);

/// FILE.config.json beside FILE.json; "" when FILE is a device, a FIFO or in /dev, /proc (e.g. /dev/stdout:
/// no file is created in /dev; the results JSON holds the configuration too).
std::string config_path_for(const std::string& json_path) {
  if (special_file(json_path)) return "";
  std::string stem = json_path;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
  return stem + ".config.json";
}

void probe(const std::string& path, const char* option) {
  if (!path.empty()) check_output_path(path, option);
}

std::string reason(int err) { return err ? std::string(": ") + std::strerror(err) : std::string(); }

/// Writes all of buf to fd; returns 0 or the errno of the failed write.
int write_all_fd(int fd, const char* buf, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, buf, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;
    buf += w;
    n -= static_cast<std::size_t>(w);
  }
  return 0;
}

/// `path` with its directory resolved (realpath) and its last component kept ("" when the
/// directory does not exist): /dev/./stdout -> /dev/stdout, /dev/fd/1 -> /proc/PID/fd/1.
std::string dir_resolved(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  char* r = ::realpath(dir.c_str(), nullptr);
  if (!r) return "";
  std::string d = r;
  std::free(r);
  return (d == "/" ? "" : d) + "/" + (slash == std::string::npos ? path : path.substr(slash + 1));
}

/// The descriptor of this process that `path` names, or -1: /dev/stdin, /dev/stdout,
/// /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N (any
/// spelling of the directory, and through symbolic links to them). Such a path is a magic
/// link to whatever the descriptor is, possibly a regular file the shell redirected into:
/// the output must go through the descriptor itself (its offset and O_APPEND), never be
/// renamed over or reopened with O_TRUNC (`--csv /dev/stdout >> log` replaced log, dropping
/// what was written to it before; re-breaker, session 12).
int descriptor_alias(const std::string& path) {
  const std::string pid = "/proc/" + std::to_string(::getpid()) + "/";
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    const std::string c = dir_resolved(p);
    if (c == "/dev/stdin") return 0;
    if (c == "/dev/stdout") return 1;
    if (c == "/dev/stderr") return 2;
    if (c.compare(0, pid.size(), pid) == 0) {  // /proc/PID/fd/N or /proc/PID/task/TID/fd/N
      const auto fd = c.rfind("/fd/");
      const std::string n = fd == std::string::npos ? "" : c.substr(fd + 4);
      const std::string mid = fd == std::string::npos ? "" : c.substr(pid.size(), fd + 1 - pid.size());
      const bool task = mid.compare(0, 5, "task/") == 0 && mid.size() > 6 &&
                        mid.find_first_not_of("0123456789", 5) == mid.size() - 1;
      if ((mid.empty() || task) && !n.empty() && n.size() < 9 &&
          n.find_first_not_of("0123456789") == std::string::npos)
        return std::stoi(n);
    }
    struct ::stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return -1;
    char to[4096];
    const ssize_t k = ::readlink(p.c_str(), to, sizeof to - 1);
    if (k <= 0) return -1;
    const std::string t(to, static_cast<std::size_t>(k));
    const auto slash = p.find_last_of('/');
    p = t[0] == '/' || slash == std::string::npos ? t : p.substr(0, slash + 1) + t;
  }
  return -1;
}

/// Written in place, never through a temporary file renamed over it: an existing path that is
/// not a regular file (a device, a FIFO), and a descriptor of this process (descriptor_alias;
/// written through that descriptor). A regular file anywhere else, /dev/shm included, is a
/// file like any other.
bool special_file(const std::string& path) {
  struct ::stat st {};
  return (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) || descriptor_alias(path) >= 0;
}

/// The file a write to `path` replaces: `path`, or the file a symbolic link points to (the
/// link stays a link), also when that file does not exist yet (a dangling link: the write
/// creates it). Links to links are followed (at most 40, as the kernel does).
std::string replaced_file(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct ::stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (char* real = ::realpath(p.c_str(), nullptr)) {  // the chain ends at an existing file
      std::string r = real;
      std::free(real);
      return r;
    }
    char to[4096];
    const ssize_t n = ::readlink(p.c_str(), to, sizeof to - 1);
    if (n <= 0) break;
    const std::string t(to, static_cast<std::size_t>(n));
    const auto slash = p.find_last_of('/');
    p = t[0] == '/' || slash == std::string::npos ? t : p.substr(0, slash + 1) + t;
  }
  return p;
}

/// Opens `target` itself (in place: tmp == target) or creates a new temporary file beside it,
/// named TARGET.tmp.XXXXXX (O_EXCL: never an existing file), with the mode of an existing
/// `target`. Sets `tmp` to the name; -1 with errno on failure.
int open_output(std::string& tmp, const std::string& target, bool in_place) {
  if (in_place) {
    tmp = target;
    // A descriptor of this process (descriptor_alias): duplicated, its offset and O_APPEND
    // kept (`>> log` stays an append; opening the path again with O_TRUNC emptied a file the
    // shell had redirected stdout into).
    const int alias = descriptor_alias(target);
    if (alias >= 0) return ::fcntl(alias, F_DUPFD_CLOEXEC, 0);
    return ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  }
  static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static std::mt19937_64 rng{std::random_device{}() ^ static_cast<std::uint64_t>(::getpid())};
  static std::atomic<unsigned> counter{0};
  int fd = -1;
  // TARGET.tmp.XXXXXX with TARGET's file name shortened when the whole would pass NAME_MAX
  // (255 bytes): a valid 250-byte file name failed with "File name too long" only after the
  // run, "results computed but not saved" (breaker s22 F6).
  const std::size_t slash = target.find_last_of('/');
  const std::size_t base_len = target.size() - (slash == std::string::npos ? 0 : slash + 1);
  constexpr std::size_t suffix_len = 11;  // ".tmp." + 6 characters
  const std::string stem =
      base_len + suffix_len > NAME_MAX ? target.substr(0, target.size() - (base_len + suffix_len - NAME_MAX)) : target;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::uint64_t r = rng() + counter++;
    std::string name = stem + ".tmp.";
    for (int k = 0; k < 6; ++k, r /= 62) name += chars[r % 62];
    fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // 0666 & ~umask
    if (fd >= 0) {
      tmp = name;
      break;
    }
    if (errno != EEXIST) {
      tmp = name;
      return -1;
    }
  }
  struct ::stat st {};
  if (fd >= 0 && ::stat(target.c_str(), &st) == 0) (void)::fchmod(fd, st.st_mode & 07777);
  return fd;
}

std::string failed(const std::string& option, const std::string& path, const char* what, int err,
                   const std::string& note) {
  return option + " " + path + ": " + what + reason(err) + (note.empty() ? "" : " (" + note + ")");
}

}  // namespace

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty()) throw std::runtime_error(option + ": empty file name; expected a path");
  // "-" wrote a file named "-" ("results written to -"), where the usual meaning is standard
  // output (as config --dump reads it; breaker s23).
  if (path == "-")
    throw std::runtime_error(option + " -: '-' is not standard output here; expected a file name (/dev/stdout "
                             "for standard output, ./- for a file named '-')");
  // An existing file is checked with access(): opening a FIFO would block until the other
  // end opens it (a reader for a write, a writer for a read).
  struct ::stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw std::runtime_error(option + " " + path + ": cannot open for writing: Is a directory");
    if (::access(path.c_str(), W_OK) != 0)
      throw std::runtime_error(option + " " + path + ": cannot open for writing" + reason(errno));
    return;
  }
  if (errno == ENOTDIR)  // "cfg.json/x" or "cfg.json/": a file used as a directory (said "Is a directory")
    throw std::runtime_error(option + " " + path + ": cannot open for writing" + reason(ENOTDIR) +
                             "; expected a file in an existing directory");
  if (path.back() == '/')  // "newdir/": a directory name (said "Is a directory")
    throw std::runtime_error(option + " " + path + ": ends with '/', a directory name; expected a file name");
  if (errno == ELOOP)  // links pointing at each other: no file to write (was replaced by one)
    throw std::runtime_error(option + " " + path + ": a loop of symbolic links" + reason(ELOOP) +
                             "; expected a file or a link to one");
  // A new file, or a symbolic link to a file that does not exist yet: the file the write will
  // create (the link itself stays), created and removed again.
  const std::string file = replaced_file(path);
  const std::string via = file == path ? "" : " (a symbolic link to " + file + ")";
  const interrupts_held hold;  // until the probe is registered for cleanup
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (errno == EEXIST) return;  // created meanwhile by someone else: theirs, left alone
    throw std::runtime_error(option + " " + path + ": cannot open for writing" + reason(errno) + via);
  }
  interrupt_cleanup on_signal(file);
  ::close(fd);
  ::unlink(file.c_str());
}

void write_output_file(const std::string& path, const std::string& content, const std::string& option,
                       const std::string& note) {
  bool in_place = special_file(path);
  const std::string file = in_place ? path : replaced_file(path);
  std::string target;
  // Interrupts held until the temporary file is registered (not for a special file written in
  // place, whose open may block until a reader comes and must stay interruptible).
  std::optional<interrupts_held> hold;
  if (!in_place) hold.emplace();
  int fd = open_output(target, file, in_place);
  if (fd < 0 && !in_place && (errno == EACCES || errno == EPERM || errno == EROFS) &&
      ::access(file.c_str(), W_OK) == 0) {
    // No temporary file possible beside an existing writable file (e.g. a read-only
    // directory): write the file in place, as before temporary files were used.
    in_place = true;
    target = file;
    fd = ::open(file.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  }
  if (fd < 0) {
    const int e = errno;
    throw output_error(failed(option, path, in_place ? "cannot open for writing" : ("cannot create " + target).c_str(),
                              e, note));
  }
  interrupt_cleanup on_signal(in_place ? std::string() : target);
  hold.reset();
  int e = write_all_fd(fd, content.data(), content.size());
  if (::close(fd) != 0 && e == 0) e = errno;
  if (e == 0 && !in_place && ::rename(target.c_str(), file.c_str()) != 0) {
    e = errno;
    ::unlink(target.c_str());
    throw output_error(failed(option, path, ("cannot rename " + target + " to it").c_str(), e, note));
  }
  if (e != 0) {
    if (!in_place) ::unlink(target.c_str());
    throw output_error(failed(option, path, "write failed", e, note));
  }
}

relayed_output::relayed_output(std::string path, std::string option, const std::string& suffix)
    : path_(std::move(path)), option_(std::move(option)) {
  // Every file below is registered as soon as it exists (interrupts held meanwhile; not while
  // opening the user's own special file, which may block until a reader comes: an interrupt
  // must still end that wait).
  std::optional<interrupts_held> hold(std::in_place);
  // The directory as the host-memory spill picks it ($TMPDIR, else /tmp), and like it refused
  // (before anything is simulated) naming where it came from when it is not usable: a TMPDIR
  // set by the user is not silently replaced by another directory.
  const char* tmpdir = std::getenv("TMPDIR");
  const bool from_env = tmpdir && *tmpdir;
  const std::string tdir = from_env ? tmpdir : "/tmp";
  std::string templ = tdir + "/cdma-vp-relay.XXXXXX";
  if (!::mkdtemp(templ.data())) {
    const int e = errno;
    throw output_error(option_ + " " + path_ + ": cannot create a temporary directory in " +
                       (from_env ? "$TMPDIR (" + tdir + ")" : tdir) + reason(e) +
                       " (" + (option_ == "--vcd" ? std::string("the VCD") : "the output") +
                       " is relayed through a FIFO there; expected " +
                       (from_env ? "TMPDIR to name a writable directory, or TMPDIR unset to use /tmp)"
                                 : "a writable /tmp, or TMPDIR naming a writable directory)"));
  }
  dir_ = templ;
  clean_dir_ = interrupt_cleanup(dir_, true);
  fifo_base_ = dir_ + "/out";
  fifo_ = fifo_base_ + suffix;
  auto fail = [this](const std::string& what) {
    const int e = errno;
    abandon();
    throw output_error(failed(option_, path_, what.c_str(), e, ""));
  };
  if (::mkfifo(fifo_.c_str(), 0600) != 0) fail("cannot create the FIFO " + fifo_);
  clean_fifo_ = interrupt_cleanup(fifo_);
  // The reader end first (non-blocking, so the open returns), then our own writer end, kept
  // open until finish(): reads block until data comes instead of seeing end-of-file before the
  // library opened its end, and end-of-file comes once both writers are closed.
  rfd_ = ::open(fifo_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (rfd_ < 0) fail("cannot open the FIFO " + fifo_);
  keep_wfd_ = ::open(fifo_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (keep_wfd_ < 0) fail("cannot open the FIFO " + fifo_);
  in_place_ = special_file(path_);
  file_ = in_place_ ? path_ : replaced_file(path_);
  if (in_place_) hold.reset();
  out_fd_ = open_output(tmp_, file_, in_place_);
  if (out_fd_ < 0) fail(in_place_ ? "cannot open for writing" : "cannot create " + tmp_);
  if (!in_place_) clean_tmp_ = interrupt_cleanup(tmp_);
  hold.reset();
  thread_ = start_worker_thread([this] { relay(); }, "cdma-out-relay");  // interrupts go to the simulation's thread
}

void relayed_output::relay() {
  std::vector<char> buf(1 << 16);
  for (;;) {
    pollfd p{rfd_, POLLIN, 0};
    const int r = ::poll(&p, 1, 100);
    if (r < 0 && errno != EINTR) {
      read_errno_ = errno;
      return;
    }
    if (r <= 0) {
      if (stop_) return;
      continue;
    }
    const ssize_t n = ::read(rfd_, buf.data(), buf.size());
    if (n == 0) return;  // every writer closed: the whole file has been relayed
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      read_errno_ = errno;
      return;
    }
    // After a failed write the rest is drained unwritten, so the library never blocks.
    if (write_errno_ == 0) write_errno_ = write_all_fd(out_fd_, buf.data(), static_cast<std::size_t>(n));
  }
}

std::string relayed_output::finish() {
  if (done_) return "";
  done_ = true;
  if (keep_wfd_ >= 0) ::close(keep_wfd_);
  keep_wfd_ = -1;
  if (thread_.joinable()) thread_.join();
  int e = write_errno_ ? write_errno_ : read_errno_;
  if (::close(out_fd_) != 0 && e == 0) e = errno;
  out_fd_ = -1;
  std::string err;
  if (e == 0 && !in_place_ && ::rename(tmp_.c_str(), file_.c_str()) != 0) {
    e = errno;
    err = failed(option_, path_, ("cannot rename " + tmp_ + " to it").c_str(), e, "results computed but not saved");
  } else if (e != 0) {
    err = failed(option_, path_, "write failed", e, "results computed but not saved");
  }
  if (e != 0 && !in_place_) ::unlink(tmp_.c_str());
  if (rfd_ >= 0) ::close(rfd_);
  rfd_ = -1;
  ::unlink(fifo_.c_str());
  ::rmdir(dir_.c_str());
  clean_tmp_.release();
  clean_fifo_.release();
  clean_dir_.release();
  return err;
}

void relayed_output::abandon() {
  done_ = true;
  stop_ = true;
  if (keep_wfd_ >= 0) ::close(keep_wfd_);
  keep_wfd_ = -1;
  if (thread_.joinable()) thread_.join();
  if (out_fd_ >= 0) {
    ::close(out_fd_);
    if (!in_place_) ::unlink(tmp_.c_str());
  }
  out_fd_ = -1;
  if (rfd_ >= 0) ::close(rfd_);
  rfd_ = -1;
  if (!fifo_.empty()) ::unlink(fifo_.c_str());
  if (!dir_.empty()) ::rmdir(dir_.c_str());
  clean_tmp_.release();
  clean_fifo_.release();
  clean_dir_.release();
}

relayed_output::~relayed_output() {
  if (!done_) abandon();
}

namespace {
/// The file `path` names, for comparing two output paths: symbolic links and "." / ".."
/// resolved (realpath of the file, or of its directory when the file does not exist yet).
std::string canonical_output(const std::string& path, int depth = 0) {
  if (char* r = ::realpath(path.c_str(), nullptr)) {
    std::string s = r;
    std::free(r);
    return s;
  }
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  // A link to a file that does not exist yet: the file it will create.
  char link[4096];
  const ssize_t n = depth < 8 ? ::readlink(path.c_str(), link, sizeof link - 1) : -1;
  if (n > 0) {
    const std::string to(link, static_cast<std::size_t>(n));
    return canonical_output(to[0] == '/' ? to : dir + "/" + to, depth + 1);
  }
  if (char* r = ::realpath(dir.c_str(), nullptr)) {
    std::string s = std::string(r) + "/" + base;
    std::free(r);
    return s;
  }
  return path;
}
}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct ::stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return canonical_output(a) == canonical_output(b);
}

std::vector<named_file> config_inputs(const platform_config& c, const std::string& config_file) {
  std::vector<named_file> in;
  auto add = [&in](const std::string& p, const char* option) {
    if (!p.empty()) in.push_back({p, option});
  };
  add(config_file, "--config");
  std::string lower = c.network;
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.size() >= 5 && lower.compare(lower.size() - 5, 5, ".json") == 0) add(c.network, "--network");
  add(c.layer_times, "--layer-times");
  add(c.density_profile, "--density-profile");
  add(c.name_map, "--name-map");
  std::vector<std::string> acts = c.activations;
  try {
    acts = resolve_activations(c);  // the sources the run reads (the shipped sample by default)
  } catch (const std::exception&) {  // refused elsewhere; the paths as given
  }
  if (synthetic_activations(acts)) acts.clear();
  for (const std::string& a : acts) {
    struct ::stat st {};
    if (::stat(a.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      // A folder: the .npy files the run reads (workloads/activations).
      try {
        for (const auto& f : workloads::npy_files_in(a)) add(a + "/" + f, "--activations");
      } catch (const std::exception&) {  // an unreadable folder: refused when the run reads it
      }
    } else {
      add(a, "--activations");
    }
  }
  return in;
}

void check_distinct_files(const std::vector<named_file>& outputs, const std::vector<named_file>& inputs,
                          bool compare_outputs) {
  // Two outputs must not share a file (one would silently overwrite the other), nor may an
  // output name an input (it was overwritten after the run, exit 0), however the paths are
  // spelled ("a.json", "./a.json", a symbolic or hard link); devices such as /dev/null may be
  // shared. Each path is looked at once (a sweep compares thousands of outputs).
  struct id {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    std::string canonical;
  };
  auto id_of = [](const std::string& p) {
    id r;
    struct ::stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      r.exists = true;
      r.dev = st.st_dev;
      r.ino = st.st_ino;
    }
    r.canonical = canonical_output(p);
    return r;
  };
  auto same = [](const id& a, const id& b) {
    return a.exists && b.exists ? a.dev == b.dev && a.ino == b.ino : a.canonical == b.canonical;
  };
  std::vector<id> out_ids, in_ids;
  std::vector<bool> special;
  for (const auto& o : outputs) {
    out_ids.push_back(o.path.empty() ? id{} : id_of(o.path));
    special.push_back(!o.path.empty() && special_file(o.path));
  }
  for (const auto& i : inputs) in_ids.push_back(id_of(i.path));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].path.empty() || special[i]) continue;
    for (std::size_t j = i + 1; compare_outputs && j < outputs.size(); ++j)
      if (!outputs[j].path.empty() && same(out_ids[i], out_ids[j]))
        throw std::runtime_error(outputs[i].option + " and " + outputs[j].option + " name the same file " +
                                 printable(outputs[i].path) + "; expected different files");
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (same(out_ids[i], in_ids[k]))
        throw std::runtime_error(outputs[i].option + " and " + inputs[k].option + " name the same file " +
                                 printable(outputs[i].path) +
                                 (outputs[i].path == inputs[k].path ? "" : " (" + printable(inputs[k].path) + ")") +
                                 ": the output would overwrite an input; expected another file for " +
                                 outputs[i].option);
  }
}


std::string printable(const std::string& s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  auto escape = [&out](unsigned char c) {
    char b[8];
    std::snprintf(b, sizeof b, "\\x%02X", c);
    out += b;
  };
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      if ((c >= 0x20 && c < 0x7F) || (keep_newlines && c == '\n')) out += static_cast<char>(c);
      else escape(c);
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t len = utf8_sequence(p, i, n, cp);
    const bool ok = len > 0;
    // Also escaped: C1 controls (U+0080..U+009F, which terminals may read as CSI), the
    // bidirectional overrides and isolates that reorder the text shown around them, and the
    // invisible format characters (soft hyphen U+00AD, combining grapheme joiner U+034F,
    // zero-width space / joiners / marks U+200B..U+200F, word joiner and invisible operators
    // U+2060..U+2064, byte-order mark U+FEFF) that would make a word look right that is not.
    if (ok && !(cp <= 0x9F || cp == 0xAD || cp == 0x34F || (cp >= 0x200B && cp <= 0x200F) ||
                (cp >= 0x202A && cp <= 0x202E) ||
                (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF)) {
      out.append(s, i, len);
      i += len;
    } else if (ok) {
      for (std::size_t k = 0; k < len; ++k) escape(p[i + k]);
      i += len;
    } else {
      escape(c);  // a byte that starts no well-formed sequence; what follows is looked at anew
      ++i;
    }
  }
  return out;
}

std::string csv_field(const std::string& v) {
  bool quote = !v.empty() && (v.front() == ' ' || v.back() == ' ');
  for (const char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    quote |= c == ',' || c == '"' || c < 0x20 || c == 0x7F;
  }
  if (!quote) return v;
  std::string o = "\"";
  for (char c : v) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

void output_options::check_writable(const std::vector<named_file>& inputs) const {
  check_distinct_files({{json_path, "--json"},
                        {json_path.empty() ? "" : config_path_for(json_path), "--json (effective config)"},
                        {csv_path, "--csv"},
                        {trace_path, "--trace"},
                        {vcd_path, "--vcd"},
                        {txn_trace_path, "--txn-trace"}},
                       inputs);
  probe(json_path, "--json");
  if (!json_path.empty() && !config_path_for(json_path).empty())
    probe(config_path_for(json_path), "--json (effective config)");
  probe(csv_path, "--csv");
  probe(trace_path, "--trace");
  probe(vcd_path, "--vcd");
  probe(txn_trace_path, "--txn-trace");
}

run_hooks output_options::hooks() const {
  run_hooks h;
  h.vcd_path = vcd_path;
  h.txn_trace_path = txn_trace_path;
  for (std::size_t a = 0; !txn_trace_only.empty() && a <= txn_trace_only.size();) {
    std::size_t b = txn_trace_only.find(',', a);
    if (b == std::string::npos) b = txn_trace_only.size();
    std::string name = txn_trace_only.substr(a, b - a);
    const auto l = name.find_first_not_of(" \t"), r = name.find_last_not_of(" \t");
    name = l == std::string::npos ? "" : name.substr(l, r - l + 1);
    if (name.empty())
      throw std::invalid_argument("--txn-trace-only \"" + txn_trace_only +
                                  "\": an empty connection name; expected a comma-separated list such as engine_pcie,pcie_host_mem");
    h.txn_trace_only.push_back(name);
    a = b + 1;
  }
  if (!quiet && isatty(STDERR_FILENO)) {
    auto start = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
    h.progress = [start](const std::string& step, bool fwd, std::size_t i, std::size_t n) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - *start).count();
      if (s < 2.0) return;
      std::fprintf(stderr, "\r%-6s %-8s layer %zu of %zu   ", step.c_str(), fwd ? "forward" : "backward",
                   fwd ? i + 1 : n - i, n);
      if (!fwd && i == 0) std::fprintf(stderr, "\r%40s\r", "");
      std::fflush(stderr);
    };
  }
  return h;
}

void output_options::write_all(const run_report& r, std::ostream& log) const {
  const std::string lost = "results computed but not saved";
  std::string errors;
  auto attempt = [&](auto&& write) {
    try {
      write();
    } catch (const output_error& e) {
      errors += (errors.empty() ? "" : "\n") + std::string(e.what());
    }
  };
  if (!json_path.empty()) {
    attempt([&] {
      write_json(json_path, r);
      log << "results written to " << printable(json_path) << "\n";
    });
    const std::string cp = config_path_for(json_path);
    if (!cp.empty()) attempt([&] {
      write_output_file(cp, to_json(with_absolute_paths(r.config)).dump(2) + "\n", "--json (effective config)", lost);
      log << "effective configuration written to " << printable(cp) << "\n";
    });
  }
  if (!csv_path.empty())
    attempt([&] {
      write_csv(csv_path, r);
      log << "per-layer CSV written to " << printable(csv_path) << "\n";
    });
  if (!trace_path.empty())
    attempt([&] {
      write_output_file(trace_path, chrome_trace(r).dump() + "\n", "--trace", lost);
      log << "trace written to " << printable(trace_path) << " (open it in https://ui.perfetto.dev)\n";
    });
  if (!vcd_path.empty()) {
    if (r.vcd_error.empty()) log << "VCD written to " << printable(vcd_path) << "\n";
    else errors += (errors.empty() ? "" : "\n") + r.vcd_error;
  }
  if (!txn_trace_path.empty()) {
    if (r.txn_trace_error.empty())
      log << "transaction trace written to " << printable(txn_trace_path) << " (" << r.txn_trace_lines << " lines)\n";
    else errors += (errors.empty() ? "" : "\n") + r.txn_trace_error;
  }
  if (!errors.empty()) throw output_error(errors);
}

void write_csv(const std::string& path, const run_report& r) {
  std::ostringstream f;
  f << "layer,offload_key,n,c,h,w,bytes,zero_fraction,compressed_bytes,ratio,forward_s,backward_s,"
       "vdnn_offload_s,vdnn_prefetch_s,vdnn_stall_s,cdma_offload_s,cdma_prefetch_s,cdma_stall_s,"
       "vdnn_dram_util_fwd,vdnn_dram_util_bwd,vdnn_read_GBps,cdma_dram_util_fwd,cdma_dram_util_bwd,"
       "cdma_read_GBps,cdma_kernel_bytes\n";
  // 15 significant digits: a time below 1000 s keeps every ps (a 1.234567890123 s kernel time
  // came back 3 ps off through --layer-times with 12; breaker s23), and a decimal of up to 15
  // digits prints as itself (no binary tail as with 17).
  f.precision(15);
  for (std::size_t i = 0; i < r.net.layers.size(); ++i) {
    const auto& l = r.net.layers[i];
    const auto& v = r.vdnn.result.layers[i];
    const auto& c = r.cdma.result.layers[i];
    // Size, zeros and kernel times from a step that was simulated (as in the report and the
    // JSON; they were 0 without the cDMA step); compressed size and ratio empty without it.
    const auto& lf = (r.cdma.simulated ? r.cdma.result : r.vdnn.simulated ? r.vdnn.result : r.oracle.result).layers[i];
    const std::uint64_t moved = c.moved_data_bytes + c.meta_bytes;
    f << csv_field(l.name) << "," << csv_field(l.offload_key) << "," << l.offload.n << "," << l.offload.c << ","
      << l.offload.h << "," << l.offload.w << "," << lf.bytes << ",";
    // Empty when unknown: the oracle moves no data, counts no zeros; a layer not offloaded.
    if (const double zf = zero_fraction(r, i); zf >= 0) f << zf;
    f << ",";
    // Empty for a layer the cDMA step did not offload (the resident last layer; policy conv).
    if (offloaded_in(r.cdma, i)) f << moved << "," << (moved ? static_cast<double>(c.bytes) / moved : 0.0);
    else f << ",";
    f << "," << ps_to_s(lf.forward) << "," << ps_to_s(lf.backward);
    // The transfer figures of a step that did not run are empty cells (as in the JSON: null).
    auto cells = [&f](bool ran, std::initializer_list<double> vs) {
      for (const double x : vs) {
        f << ",";
        if (ran) f << x;
      }
    };
    // Offload / prefetch times and the read bandwidth are empty for a layer not offloaded.
    cells(offloaded_in(r.vdnn, i), {ps_to_s(v.offload), ps_to_s(v.prefetch)});
    cells(r.vdnn.simulated, {ps_to_s(v.forward_stall + v.backward_stall)});
    cells(offloaded_in(r.cdma, i), {ps_to_s(c.offload), ps_to_s(c.prefetch)});
    cells(r.cdma.simulated, {ps_to_s(c.forward_stall + c.backward_stall)});
    for (const step_report* s : {&r.vdnn, &r.cdma}) {
      const layer_dram d = i < s->dram_layers.size() ? s->dram_layers[i] : layer_dram{};
      cells(s->simulated, {d.fwd_utilisation, d.bwd_utilisation});
      cells(offloaded_in(*s, i), {cdma_read_Bps(*s, i) / 1e9});
      if (s == &r.cdma) {  // an integer (a double would turn 1e12 bytes and up into 1.2e+12)
        f << ",";
        if (s->simulated) f << d.kernel_bytes();
      }
    }
    f << "\n";
  }
  write_output_file(path, f.str(), "--csv", "results computed but not saved");
}

nlohmann::json chrome_trace(const run_report& r) {
  using nlohmann::json;
  json ev = json::array();
  const double us = 1e6;
  int pid = 1;
  for (const step_report* s : {&r.oracle, &r.vdnn, &r.cdma}) {
    if (!s->simulated) continue;
    const auto& res = s->result;
    ev.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", res.config.label + " step"}}}});
    const char* threads[] = {"compute", "offload", "prefetch"};
    for (int t = 0; t < 3; ++t)
      ev.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", t + 1}, {"args", {{"name", threads[t]}}}});
    for (std::size_t i = 0; i < res.layers.size(); ++i) {
      const auto& l = res.layers[i];
      const std::string& name = r.net.layers[i].name;
      ev.push_back({{"ph", "X"}, {"name", name + " fwd"}, {"cat", "compute"}, {"pid", pid}, {"tid", 1},
                    {"ts", ps_to_s(l.forward_start) * us}, {"dur", ps_to_s(l.forward) * us}});
      ev.push_back({{"ph", "X"}, {"name", name + " bwd"}, {"cat", "compute"}, {"pid", pid}, {"tid", 1},
                    {"ts", ps_to_s(l.backward_start) * us}, {"dur", ps_to_s(l.backward) * us}});
      const double kernel_GBps = l.forward ? static_cast<double>(r.net.layers[i].forward_bytes) /
                                                 ps_to_s(l.forward) / 1e9 : 0.0;
      ev.push_back({{"ph", "C"}, {"name", "DRAM kernel GB/s"}, {"pid", pid}, {"ts", ps_to_s(l.forward_start) * us},
                    {"args", {{"GB/s", kernel_GBps}}}});
      if (l.offloaded) {
        const std::uint64_t moved = l.moved_data_bytes + l.meta_bytes;
        // X_i (the output of layer i - 1) moves during the forward pass of its first consumer
        // (offload_during: layer i on a chain). It is named after layer i when layer i reads it
        // (always on a chain: "conv5_3 offload" is conv5_3's input), else after its producer
        // ("inception_3a/5x5 output offload"); "tensor" gives its key ("" = the input image).
        const std::size_t f = l.offload_during < res.layers.size() ? l.offload_during : i;
        const auto& keys = r.net.layers[i].input_keys;
        const std::string& key = r.net.layers[i].offload_key;
        const std::string tensor = std::find(keys.begin(), keys.end(), key) != keys.end() ? name
                                   : key.empty() ? std::string("input image") : key + " output";
        ev.push_back({{"ph", "X"}, {"name", tensor + " offload"}, {"cat", "dma"}, {"pid", pid}, {"tid", 2},
                      {"ts", ps_to_s(l.offload_start) * us}, {"dur", ps_to_s(l.offload) * us},
                      {"args", {{"bytes", l.bytes}, {"moved_bytes", moved}, {"tensor", r.net.layers[i].offload_key},
                                {"during", r.net.layers[f].name + " fwd"}}}});
        ev.push_back({{"ph", "C"}, {"name", "PCIe d2h GB/s"}, {"pid", pid}, {"ts", ps_to_s(l.offload_start) * us},
                      {"args", {{"GB/s", l.offload ? moved / ps_to_s(l.offload) / 1e9 : 0.0}}}});
        ev.push_back({{"ph", "C"}, {"name", "PCIe d2h GB/s"}, {"pid", pid},
                      {"ts", ps_to_s(l.offload_start + l.offload) * us}, {"args", {{"GB/s", 0.0}}}});
        // X_i comes back when the runtime issued its fetch: a prefetch during the backward pass of
        // the layer it chose (vDNN rule: usually i+1 on a chain, but e.g. VGG-16 under `conv`
        // prefetches conv5_3's input during fc8's), or on demand before the backward kernel of
        // its last consumer (the layer it was fetched during).
        if (l.prefetch_during < res.layers.size() && l.prefetch) {
          const ps_t t0 = l.prefetch_start;
          const bool on_demand = l.on_demand;
          ev.push_back({{"ph", "X"}, {"name", tensor + (on_demand ? " on-demand fetch" : " prefetch")}, {"cat", "dma"},
                        {"pid", pid}, {"tid", 3}, {"ts", ps_to_s(t0) * us}, {"dur", ps_to_s(l.prefetch) * us},
                        {"args", {{"bytes", l.bytes}, {"moved_bytes", moved}, {"tensor", r.net.layers[i].offload_key},
                                  {"during", r.net.layers[l.prefetch_during].name + " bwd"}}}});
          ev.push_back({{"ph", "C"}, {"name", "PCIe h2d GB/s"}, {"pid", pid}, {"ts", ps_to_s(t0) * us},
                        {"args", {{"GB/s", moved / ps_to_s(l.prefetch) / 1e9}}}});
          ev.push_back({{"ph", "C"}, {"name", "PCIe h2d GB/s"}, {"pid", pid},
                        {"ts", ps_to_s(t0 + l.prefetch) * us}, {"args", {{"GB/s", 0.0}}}});
        }
      }
    }
    ++pid;
  }
  return json{{"traceEvents", ev}, {"displayTimeUnit", "ms"},
              {"otherData", {{"network", r.net.name}, {"batch", r.net.batch}, {"time", "simulated"}}}};
}

std::string run_program(const std::vector<std::string>& argv, bool quiet_stdout, bool quiet_stderr,
                        int* exit_status) {
  std::vector<char*> av;
  for (const std::string& x : argv) av.push_back(const_cast<char*>(x.c_str()));
  av.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet_stdout) posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (quiet_stderr) posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int e = ::posix_spawn(&pid, av[0], &fa, nullptr, av.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (e != 0) return std::string("cannot start: ") + std::strerror(e);
  forward_interrupt_to(pid);  // an interrupt of cdma-vp reaches the plotting too
  int status = 0;
  pid_t w;
  while ((w = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  forget_child(pid);
  if (w < 0) return std::string("waitpid failed: ") + std::strerror(errno);
  if (WIFEXITED(status) && exit_status) *exit_status = WEXITSTATUS(status);
  if (WIFEXITED(status)) return WEXITSTATUS(status) == 0 ? "" : "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}


}  // namespace cdma::platform
