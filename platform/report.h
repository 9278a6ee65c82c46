// Human-readable summary and JSON results of a platform run.
#pragma once
#include <fstream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>
#include "platform/platform.h"

namespace cdma::platform {

/// Closes an output file and throws output_error (a std::runtime_error) naming the option, the path and the
/// reason (e.g. "No space left on device") if anything failed to be written.
void close_checked(std::ofstream& f, const std::string& path, const char* option);

/// The engine's achieved GPU-DRAM read bandwidth while step `s` offloaded layer i's X_i, B/s:
/// bytes it read during the forward interval of the layer that offloaded X_i
/// (layer_result::offload_during; i on a chain) / the time until the last tensor offloaded in
/// that layer completed; 0 where X_i was not offloaded (callers show "-" / null / an empty cell
/// there: offloaded_in()).
double cdma_read_Bps(const step_report& s, std::size_t i);
/// True iff step `s` ran and offloaded layer i (not the resident last layer, not a layer its
/// policy keeps): the rule for which per-layer transfer figures the text, JSON and CSV show.
bool offloaded_in(const step_report& s, std::size_t i);

/// Zero fraction of layer i's X_i (zero 4-byte words x 4 / bytes, 0..1) as counted by the
/// step whose per-layer facts the outputs show (cDMA, else vDNN), or a negative value when no
/// step counted it: only the oracle ran (it moves no data), or the layer was not offloaded
/// (the resident last layer; under policy conv a tensor no convolution reads). The text shows
/// "-", the JSON null and the CSV an empty cell there.
double zero_fraction(const run_report& r, std::size_t i);

/// What bounds a step's transfers (new-user trial s21 F2), per direction: the activation bytes
/// moved per second of transfer time (the layers' own offload / prefetch times summed), the
/// bytes crossing PCIe per second (compressed data + metadata), and each resource's share of
/// its peak over that time, 0..: the compression (decompression) units (units x one unit's
/// rate for the run's codec x clock, in activation bytes; `units`: the cDMA step), the link
/// (pcie::mwr_payload_rate_Bps d2h / cpld_payload_rate_Bps h2d), host memory
/// (host_mem.bandwidth), the GPU DRAM (the activation bytes the engine reads / writes plus the
/// compute kernels' DRAM traffic during the transfers, over gpu_mem.peak_bandwidth; new-user
/// trial s25 F1), and when cdma.xbar_bandwidth is set the GPU crossbar (activation bytes,
/// or with placement memory_controller the cDMA step's compressed data, over xbar_bandwidth);
/// `bound` names the largest share. An average over the step (latency,
/// small tensors, window slots and flow control keep every share below 1).
struct transfer_bounds {
  struct direction {
    bool moved = false;  ///< false: the step did not run or moved nothing this way
    double activation_Bps = 0, pcie_Bps = 0;
    std::vector<std::pair<std::string, double>> shares;  ///< (resource, share of its peak)
    std::string bound;
  };
  direction offload, prefetch;
};
transfer_bounds bounds_of(const platform_config& c, const step_report& s, bool units);

/// Per-layer table, the three baselines, compression ratio, PCIe bytes and the verification line.
/// A figure of a step that did not run (--steps, or an I/O error) is "-", never 0.
void print_summary(std::ostream& os, const run_report& r);
/// The summary's WARNING line (with its newline) when the compute kernels' DRAM traffic fell
/// behind the kernels in a step by 1 % of its kernel bytes or more (every step, LT and AT;
/// docs/memory.md "Traffic behind schedule"); "" otherwise.
std::string late_kernel_traffic_warning(const run_report& r);
/// The report's setup lines (platform, runtime, activations, kernels), as print_summary
/// starts; `with_mode` false leaves LT / AT out of the runtime line (compare runs both).
void print_setup(std::ostream& os, const run_report& r, bool with_mode);

/// One named statistic with its unit ("s", "B", "GB/s", "ratio").
struct stat {
  std::string name;
  double value;
  std::string unit;
};
/// Every statistic of a run: step/forward/backward/stall times per step, PCIe bytes, efficiency
/// (payload / wire), mean bandwidth and utilisation per direction, speed-up, compression ratio
/// (total and per layer), per-layer stalls, verified bytes, peak RSS, wall time.
std::vector<stat> collect_stats(const run_report& r);
/// Histograms (Boost.Histogram, log-spaced 1 us .. 1 s) of per-layer offload and prefetch
/// times of the vDNN and cDMA steps.
nlohmann::json transfer_histograms(const run_report& r);

/// Results as JSON. Keys (times in seconds, sizes in bytes): network, batch, activations,
/// step_time_s.{oracle,vdnn,cdma}, speedup_cdma_over_vdnn, transfer_bounds.{vdnn,cdma}.{offload,
/// prefetch} (bounds_of(): activation_GBps, pcie_GBps, share_of_peak, bound; null when the step
/// did not run or moved nothing), compression_ratio, verified_bytes,
/// mismatched_bytes, pcie.{vdnn,cdma}.{d2h,h2d}.{payload_bytes,wire_bytes}, errors, and
/// layers[] with name, offload_key, shape [N,C,H,W], bytes, zero_fraction (null for a layer
/// not offloaded), offloaded, offload_during / prefetch_during (layer names), compressed_bytes,
/// ratio, forward_s, backward_s, offload_s, prefetch_s, stall_s (cDMA step) and vdnn.{offload_s,
/// prefetch_s, stall_s}. A step not simulated (--steps) has a null step time; without the cDMA
/// step compression_ratio and layers[].{compressed_bytes, ratio} are null (the keys stay) and
/// stats has no compression_ratio (as it has no step_time of a step not simulated); with only
/// the oracle step layers[].zero_fraction is null too (no data moved, no zeros counted). Every
/// figure of a step that did not run is null (keys kept): layers[].offload_s / prefetch_s /
/// stall_s (cDMA), layers[].vdnn.*, layers[].dram.STEP.*, pcie.STEP.*; stats and histograms
/// have no key of it; verified is null without a vDNN or cDMA step (nothing to verify) and when
/// nothing was compared (no layer offloaded: verified_bytes 0), and compression_ratio is null
/// (stats without it) when the cDMA step compressed nothing.
nlohmann::json to_json(const run_report& r);

/// Writes to_json(r) to `path` (via PATH.tmp, platform/outputs.h write_output_file); throws
/// output_error naming the path and the reason if it cannot.
void write_json(const std::string& path, const run_report& r);

}  // namespace cdma::platform
