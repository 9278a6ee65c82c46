// Command-line plumbing shared by the commands that run the platform: configuration options
// (--preset, --config, --param and shortcuts) and output options (--json, --csv, --trace,
// --vcd, progress), plus the writers for CSV and Chrome trace event JSON.
#pragma once
#include <ostream>
#include <string>
#include <vector>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include "platform/platform.h"

namespace cdma::platform {

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
  /// names each on `log`.
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
