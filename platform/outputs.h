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

/// Fails (std::runtime_error naming the option, the path and strerror) if `path` cannot be
/// opened for writing, leaving nothing behind: an existing file is opened for appending
/// (unchanged), a new one is created and removed again. For checks before any run (exit 2).
void check_output_path(const std::string& path, const std::string& option);

/// Writes `content` to `path` so that a failed write never leaves a truncated file: the bytes
/// go to PATH.tmp in the same directory, which is renamed over PATH only after every write and
/// the close succeeded; on any failure PATH.tmp is removed and PATH is left as it was. A path
/// that exists and is not a regular file (/dev/stdout, /dev/full, a FIFO) is written in place;
/// a symbolic link stays a link (the file it points to is replaced, keeping its mode).
/// Throws output_error "<option> <path>: write failed: <strerror>[ (<note>)]" (or "cannot
/// open for writing").
void write_output_file(const std::string& path, const std::string& content, const std::string& option,
                       const std::string& note = "");

/// A file that another library writes by name with unchecked stdio (SystemC's VCD trace file),
/// relayed to `path` with every write checked. The library writes to fifo_base() + suffix, a
/// FIFO in a private temporary directory; a thread copies what arrives to PATH.tmp (as
/// write_output_file: in place for a non-regular PATH) and finish() renames it into place.
/// Destroyed without finish(): the partial output is removed.
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
  int rfd_ = -1, keep_wfd_ = -1, out_fd_ = -1;
  bool in_place_ = false, done_ = false;
  std::atomic<bool> stop_{false};
  int write_errno_ = 0;  ///< first failed write to the output (set by the relay thread)
  int read_errno_ = 0;
  std::thread thread_;
};

/// Options that select and adjust the configuration.
struct config_options {
  std::string preset, config_file;
  std::vector<std::string> params;
  std::string network, codec, activations, policy;
  int batch = 0;
  double density = -1;
  platform_config config;  ///< filled by resolve()
  /// Builds `config`: preset or config file, then shortcuts, then --param in order.
  /// Throws config_error naming the key / file.
  void resolve(const boost::program_options::variables_map& vm);
};
void add_config_options(boost::program_options::options_description& d, config_options& o);

/// Where results go.
struct output_options {
  std::string json_path, csv_path, trace_path, vcd_path;
  bool quiet = false;
  /// Fails (std::runtime_error naming the path) before any simulation if a path is unwritable.
  void check_writable() const;
  /// Progress on stderr when it is a terminal and the run has lasted more than 2 s.
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
void write_csv(const std::string& path, const run_report& r);

/// Chrome trace event JSON (Perfetto / chrome://tracing): one process per step (oracle, vdnn,
/// cdma) with threads "compute", "offload", "prefetch"; complete events ("ph":"X") per layer,
/// timestamps in microseconds of simulated time; counters "PCIe d2h GB/s", "PCIe h2d GB/s"
/// (achieved during each transfer) and "DRAM kernel GB/s".
nlohmann::json chrome_trace(const run_report& r);

}  // namespace cdma::platform
