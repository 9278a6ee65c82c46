// Command-line plumbing shared by the commands that run the platform: configuration options
// (--preset, --config, --param and shortcuts) and output options (--json, --csv, --trace,
// --vcd, progress), plus the writers for CSV and Chrome trace event JSON.
#pragma once
#include <atomic>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include "platform/platform.h"

namespace cdma::platform {

/// An output file could not be written (exit status 3 when it happens after a run: the results
/// were computed but are not saved). The message names the option, the path and the reason
/// (strerror), e.g. "--json out.json: write failed: No space left on device".
class output_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The options an unknown option word (without its "--") most likely meant, among `names`
/// (long option names): every one the word begins (an abbreviation), else the nearest within
/// two edits (edit_distance(); the first on a tie), else none.
struct option_guess {
  std::vector<std::string> names;
  bool abbreviated = false;  ///< names are the options the word begins
};
option_guess guess_option(const std::string& word, const std::vector<std::string>& names);
/// The guess as a message's tail: " (did you mean '--batch'? options are not abbreviated)",
/// " (options are not abbreviated; those beginning so: --config --codec)", " (did you mean
/// '--grid'?)", or "" for none.
std::string option_hint(const option_guess& g);

/// Parses a sub-command's words with `d` (boost's default style without abbreviations: `--bat 4`
/// was taken as --batch 4, so a script's short form would change meaning, or stop working, when
/// an option is added; `bench` and `analyze` never took them) and `positional` (default: none,
/// every stray word refused). Throws boost::program_options::error; an unknown option's message
/// ends in option_hint(guess_option()).
boost::program_options::parsed_options parse_command_words(
    const std::vector<std::string>& args, const boost::program_options::options_description& d,
    const boost::program_options::positional_options_description& positional = {});

/// Installs the handler of SIGINT, SIGTERM and SIGHUP (not for a signal the parent set to be
/// ignored, e.g. `nohup`): it removes every temporary file registered below (the unfinished
/// outputs, the VCD relay's FIFO and directory) with async-signal-safe calls only (unlink,
/// rmdir, kill, write), forwards the signal to registered child processes, prints
/// "cdma-vp: interrupted by SIGINT; unfinished output files removed" (+ the note set with
/// set_interrupt_note) on stderr and re-raises the signal with its default action, so the
/// process ends with that signal (a shell shows exit status 128 + N, e.g. 130 for SIGINT).
void install_interrupt_cleanup();
/// Text added to the interrupt message (e.g. where the finished results are); "" for none.
/// Call before work starts (not thread-safe with a concurrent signal).
void set_interrupt_note(const std::string& note);

/// A temporary path removed by the interrupt handler as long as this object lives and
/// release() was not called (a file with unlink, a directory with rmdir after every file).
/// Registering never throws: when the table (64 entries) is full the path is not registered.
class interrupt_cleanup {
public:
  interrupt_cleanup() = default;
  explicit interrupt_cleanup(const std::string& path, bool directory = false);
  ~interrupt_cleanup() { release(); }
  interrupt_cleanup(interrupt_cleanup&& o) noexcept : slot_(o.slot_) { o.slot_ = -1; }
  interrupt_cleanup& operator=(interrupt_cleanup&& o) noexcept;
  interrupt_cleanup(const interrupt_cleanup&) = delete;
  interrupt_cleanup& operator=(const interrupt_cleanup&) = delete;
  /// The path is no longer temporary (renamed into place or removed): keep it on a signal.
  void release();

private:
  int slot_ = -1;
};

/// A child process that gets the same signal when this process is interrupted (a sweep's runs,
/// which then remove their own temporary files). Unregistered with forget_child().
void forward_interrupt_to(int pid);
void forget_child(int pid);
/// Runs argv[0] with `argv` (no shell: any byte of an argument reaches the program as it is),
/// standard output to /dev/null when `quiet_stdout` and standard error too when `quiet_stderr`;
/// an interrupt of cdma-vp is passed to it (forward_interrupt_to) and it is waited for.
/// Returns "" or why it failed ("exited with status 1", "killed by signal 9", "cannot start:
/// No such file or directory"); `exit_status`, when given, receives its exit status if it
/// exited. (bench pcie's and sweep's plotting.)
std::string run_program(const std::vector<std::string>& argv, bool quiet_stdout, bool quiet_stderr,
                        int* exit_status = nullptr);

/// Flushes std::cout and returns 0, or prints "cdma-vp: error: standard output: write failed:
/// <strerror>[ (<note>)]" on stderr and returns 3 (e.g. `cdma-vp run > /dev/full`). Call it
/// right after printing (before other system calls), so that the reason of a write that failed
/// before the flush is still in errno.
int check_stdout(const std::string& note = "");
/// Reports a failed write to standard output with reason `e` (an errno value; 0: unknown)
/// and returns 3: "cdma-vp: error: standard output: write failed: <strerror>[ (<note>)]" on
/// stderr, except for EPIPE (the reader closed the pipe, e.g. `| head -1`), which is silent.
int stdout_write_failed(int e, const std::string& note = "");

/// Fails (std::runtime_error naming the option, the path and strerror) if `path` cannot be
/// opened for writing, leaving nothing behind: an existing file is checked with access()
/// (unchanged), a new one is created and removed again. A symbolic link is checked at the file
/// it points to (created there by the write, even if it does not exist yet; the link stays).
/// For checks before any run (exit 2).
void check_output_path(const std::string& path, const std::string& option);

/// Writes `content` to `path` so that a failed write never leaves a truncated file: the bytes
/// go to a new temporary file PATH.tmp.XXXXXX in the same directory (a unique name created
/// with O_EXCL: an existing file of the user, even one named PATH.tmp, is never touched), which
/// is renamed over PATH only after every write and the close succeeded; on any failure or an
/// interrupt (SIGINT / SIGTERM / SIGHUP) the temporary file is removed and PATH is left as it
/// was. A path that exists and is not a regular file (/dev/stdout, /dev/full, a FIFO) is written
/// in place. A symbolic link stays a link: the file it points to is written (replaced keeping
/// its mode, or created when the link dangles; the temporary file is beside that file).
/// Throws output_error "<option> <path>: write failed: <strerror>[ (<note>)]" (or "cannot
/// open for writing").
void write_output_file(const std::string& path, const std::string& content, const std::string& option,
                       const std::string& note = "");

/// A file that another library writes by name with unchecked stdio (SystemC's VCD trace file),
/// relayed to `path` with every write checked. The library writes to fifo_base() + suffix, a
/// FIFO in a private temporary directory; a thread copies what arrives to a temporary file
/// beside PATH (as write_output_file: in place for a non-regular PATH; a symbolic link is
/// written through) and finish() renames it into place. Destroyed without finish(), or
/// interrupted by a signal: the partial output, the FIFO and its directory are removed.
class relayed_output {
public:
  /// Throws output_error naming the option and the path if the FIFO or PATH.tmp cannot be made.
  relayed_output(std::string path, std::string option, const std::string& suffix);
  ~relayed_output();
  relayed_output(const relayed_output&) = delete;
  relayed_output& operator=(const relayed_output&) = delete;
  /// Name to give the library (without `suffix`, which the library appends).
  std::string fifo_base() const { return fifo_base_; }
  /// Call after the library closed its file: waits for the relay, closes and renames. Returns
  /// "" or the error message ("<option> <path>: write failed: <strerror> (...)").
  std::string finish();

private:
  void relay();
  void abandon();
  std::string path_, option_, file_, tmp_, dir_, fifo_base_, fifo_;
  interrupt_cleanup clean_dir_, clean_fifo_, clean_tmp_;
  int rfd_ = -1, keep_wfd_ = -1, out_fd_ = -1;
  bool in_place_ = false, done_ = false;
  std::atomic<bool> stop_{false};
  int write_errno_ = 0;  ///< first failed write to the output (set by the relay thread)
  int read_errno_ = 0;
  std::thread thread_;
};

/// A file a command reads or writes and the option that names it (for check_distinct_files).
struct named_file {
  std::string path;
  std::string option;
};

/// True iff `a` and `b` name the same file however they are spelled: the same device and inode
/// when both exist ("./a", a symbolic link, a hard link), else the same path once symbolic
/// links and "." / ".." are resolved (a file an output will create).
bool same_file(const std::string& a, const std::string& b);

/// The files a run of configuration `c` reads, each with the option that names it: the
/// configuration file (`config_file`, --config), a layer file (--network PATH.json),
/// --layer-times, --density-profile, --name-map and the activation source (--activations: a
/// .npz or .npy, or every .npy of a folder; also the shipped sample the default picks).
std::vector<named_file> config_inputs(const platform_config& c, const std::string& config_file);

/// Fails (std::runtime_error, for exit 2 before anything runs or is written) if two outputs
/// name the same file ("--json and --csv name the same file a.json; expected different
/// files"; devices such as /dev/null may be shared) or an output names an input ("--csv and
/// --config name the same file cfg.json: the output would overwrite an input; expected another
/// file for --csv"). Files compared with same_file(). `compare_outputs` false: only outputs
/// against inputs (outputs known to be distinct, e.g. a sweep's own files).
void check_distinct_files(const std::vector<named_file>& outputs, const std::vector<named_file>& inputs,
                          bool compare_outputs = true);

/// Text from the user (a name, a path, a message quoting them) made safe for a terminal and a
/// log: control characters (ESC, BEL, CR, tab, DEL, the C1 controls U+0080..U+009F), the
/// bidirectional overrides / isolates (U+202A..U+202E, U+2066..U+2069) and every byte that is
/// not part of well-formed UTF-8 are written as \xNN (one per byte, as workloads/io/csv.h
/// shows bytes of its input files); other text, UTF-8 included, is kept. `keep_newlines`:
/// the line breaks of a multi-line message stay. The one escaping function of the commands'
/// messages and of the report.
std::string printable(const std::string& s, bool keep_newlines = false);

/// One CSV cell as RFC 4180 writes it: quoted ("..." with a quote doubled) when it holds a
/// comma, a quote, a line break or another control character, or starts or ends with a space
/// (which a reader would trim); the bytes themselves are kept. Every CSV output uses it
/// (--csv, sweep.csv). A cell starting with = + - @ is not altered: the CSVs are data files,
/// and a spreadsheet that evaluates such a cell as a formula does so quoted or not
/// (docs/user-guide.md, Outputs).
std::string csv_field(const std::string& v);

/// Options that select and adjust the configuration.
struct config_options {
  std::string preset, config_file;
  std::vector<std::string> params;
  /// Shortcut values as typed: checked by the same parser as --param (message names the option).
  std::string network, codec, policy, batch, density;
  /// --activations, once per source (the option repeated appends: images concatenated in order).
  std::vector<std::string> activations;
  platform_config config;  ///< filled by resolve()
  /// The parameters the command line set (shortcut options and --param; not the preset or the
  /// config file), each with the option as given: (key, "--batch 4" / "--param batch=4").
  /// Filled by resolve(); a sweep refuses a grid axis over one of them (the grid value would
  /// silently replace it in every run).
  std::vector<std::pair<std::string, std::string>> given;
  /// Builds `config`: preset or config file, then shortcuts, then --param in order.
  /// Throws config_error naming the key / file.
  void resolve(const boost::program_options::variables_map& vm);
};
/// `with_mode` false leaves --mode out (compare runs both modes: it refuses --mode through an
/// option of its own that its help does not list).
void add_config_options(boost::program_options::options_description& d, config_options& o, bool with_mode = true);

/// Where results go.
struct output_options {
  std::string json_path, csv_path, trace_path, vcd_path;
  std::string txn_trace_path;  ///< --txn-trace FILE (run_hooks::txn_trace_path)
  std::string txn_trace_only;  ///< --txn-trace-only LIST (comma-separated connection names)
  bool quiet = false;
  /// Fails (std::runtime_error naming the path) before any simulation if a path is unwritable,
  /// two outputs name the same file or an output names one of `inputs` (check_distinct_files).
  void check_writable(const std::vector<named_file>& inputs = {}) const;
  /// Progress on stderr when it is a terminal and the run has lasted more than 2 s; the VCD and
  /// transaction-trace paths. Throws std::invalid_argument for an empty name in --txn-trace-only.
  run_hooks hooks() const;
  progress_fn progress_callback() const { return hooks().progress; }
  /// Writes every requested file (JSON results + effective config beside it, CSV, trace);
  /// names each on `log`. Every output is attempted; if any failed, throws output_error with
  /// one line per failed output (the others are written).
  void write_all(const run_report& r, std::ostream& log) const;
};
void add_output_options(boost::program_options::options_description& d, output_options& o);

/// Everything `cdma-vp run` takes.
struct run_options {
  config_options cfg;
  output_options out;
};

/// One row per layer: layer,offload_key,n,c,h,w,bytes,zero_fraction,compressed_bytes,ratio,
/// forward_s,backward_s,vdnn_offload_s,vdnn_prefetch_s,vdnn_stall_s,cdma_offload_s,
/// cdma_prefetch_s,cdma_stall_s, then GPU DRAM per layer (platform/contention.h):
/// vdnn_dram_util_fwd,vdnn_dram_util_bwd,vdnn_read_GBps,cdma_dram_util_fwd,cdma_dram_util_bwd,
/// cdma_read_GBps (engine's achieved DRAM read bandwidth while offloading),cdma_kernel_bytes.
/// Without the cDMA step (--steps) compressed_bytes and ratio are empty cells; with only the
/// oracle step zero_fraction too (no data moved, no zeros counted); every vdnn_* / cdma_* cell
/// of a step that did not run is empty.
void write_csv(const std::string& path, const run_report& r);

/// Chrome trace event JSON (Perfetto / chrome://tracing): one process per step (oracle, vdnn,
/// cdma) with threads "compute", "offload", "prefetch"; complete events ("ph":"X") per layer,
/// timestamps in microseconds of simulated time; counters "PCIe d2h GB/s", "PCIe h2d GB/s"
/// (achieved during each transfer) and "DRAM kernel GB/s".
nlohmann::json chrome_trace(const run_report& r);

}  // namespace cdma::platform
