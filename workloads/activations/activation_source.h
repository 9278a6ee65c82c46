// Activation sources: where the bytes of each offloaded tensor come from. Data is produced
// on demand for any byte range, so a tensor never has to be held whole (full paper batch sizes
// are streamed) and the bytes a prefetch brings back can be regenerated and compared.
//
// Tensors are fp32, NCHW, little-endian. The network's input image (offload key "") is
// always synthetic: dense values in [1/256, 1] like a normalised photo.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include "workloads/io/npy.h"
#include "workloads/network/network.h"

namespace cdma::workloads {

class activation_error : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

class activation_source {
public:
  virtual ~activation_source() = default;
  /// Writes bytes [offset, offset + len) of tensor `key` (shape `shape`, fp32 NCHW, N = batch)
  /// to out. Throws activation_error naming the key if it is unknown.
  virtual void fill(const std::string& key, const tensor_shape& shape, std::uint64_t offset,
                    std::uint8_t* out, std::size_t len) = 0;
  /// Checks that every offloaded tensor of `net` can be produced (keys present, shapes
  /// match); throws activation_error naming the layer, the key and both shapes otherwise.
  virtual void validate(const network& net) const = 0;
  /// One line for reports, e.g. "real: chelsea.npz + coffee.npz (2 distinct images, repeated to
  /// batch 32)".
  virtual std::string describe(const network& net) const = 0;
  /// Distinct images behind each batch (0 for synthetic data).
  virtual int distinct_images() const = 0;
  /// True if fill() may run in several threads at once (the source keeps no mutable state,
  /// e.g. synthetic data). Default false: callers serialise every fill() of one source.
  virtual bool concurrent_fill() const { return false; }
  /// Warnings about the data found by validate() that do not stop a run (the report lists
  /// them), each naming the file; none by default.
  virtual std::vector<std::string> warnings() const { return {}; }
};

/// Deterministic dense synthetic image bytes (input of layer 0): element e of the tensor is
/// a float in [1/256, 1] derived from a hash of (seed, e). Shared by all sources.
void fill_input_image(std::uint64_t seed, std::uint64_t offset, std::uint8_t* out, std::size_t len);

/// Options of the real-activation source.
struct real_activation_options {
  /// Tensor name in the file(s) -> layer output key. Names not in the map are used as they are;
  /// a name mapped to "" (null in a name-map file) is left out: never read nor matched.
  std::map<std::string, std::string> name_map;
  /// Decoded tensors kept in memory at most (bytes); the cache is emptied when it would grow
  /// beyond. A tensor holds only the images in the file, never the batch.
  std::uint64_t cache_limit_bytes = 1ull << 30;
  /// What to do with an offloaded tensor that the file does not hold and that cannot be
  /// computed from one it holds (a pool output is computed from its stored input):
  /// `error` (validate() throws, naming every such tensor) or `dense`: the tensor is produced as
  /// dense synthetic data, every element nonzero (e.g. MobileNetV2's linear bottleneck outputs,
  /// which are not ReLU outputs and hold practically no zeros), and describe() says how many
  /// tensors and bytes are synthetic.
  enum class missing_policy { error, dense };
  missing_policy missing = missing_policy::error;
  /// The tensors (layer output keys) the run offloads, as its vDNN policy chooses them (policy
  /// conv: conv_input_keys(); none: empty); unset: every X_i but the resident last layer's
  /// (policy all). Only these can be missing, and describe()'s share of dense synthetic bytes
  /// is a share of their bytes; a tensor the files hold is checked against its layer either way.
  std::optional<std::set<std::string>> offload_keys;
};

/// "error" / "dense" -> missing_policy; throws activation_error naming the value otherwise.
real_activation_options::missing_policy missing_policy_from_string(const std::string& s);

/// The names of the .npy files in directory `dir` (every entry whose name ends in ".npy"),
/// sorted: the tensors a real activation source given that directory reads. Throws
/// activation_error when the directory cannot be read.
std::vector<std::string> npy_files_in(const std::string& dir);

/// Reads a name map: a JSON object {"name in file": "layer key" or null, ...}; null leaves the
/// tensor out (stored as ""). Throws activation_error naming the file (and the key whose value
/// is neither a non-empty string nor null).
std::map<std::string, std::string> load_name_map(const std::string& path);

/// Real activations matched to layers by name, from one or several sources, each a .npz
/// archive (numpy.savez[_compressed]), a directory of <name>.npy files, or one <name>.npy file.
/// Each tensor is [images, C, H, W] (or [images, C]) float32. Every name must match a layer's
/// output key (after the name map); names matching no layer are an error naming the file, every
/// such name (in the file's order) and the network. Several sources: every source must hold the same tensor names (after
/// the name map) with the same C, H, W (a mismatch is an error naming both files, the tensor
/// and both shapes); N may differ. Their images are concatenated along N in the order given
/// (the images of source 0, then of source 1, ...; a source's image count is the smallest N
/// over its tensors), T images in all. A batch of N is assembled from them: image n of the
/// batch is image n mod T (repeated when there are fewer images than N);
/// distinct_images() = min(T, N).
///
/// An offloaded tensor the files do not hold: if it is the output of a pool layer
/// (layer::pool.derivable) whose input tensors the files hold (or can themselves compute; a
/// concatenation's parts each), it is computed from them, per image and channel: max pooling
/// exactly; average pooling summed in double and rounded to float (zeros exact; values within
/// 1 ulp of a framework's), divided by the window's elements inside the input for Keras
/// (TensorFlow 'same': layer::pool_window::exclude_padding).
/// (This makes every offloaded tensor of the Fashion-MNIST CNN real: its files hold the conv
/// and fc outputs, not pool1..pool3.) Otherwise see real_activation_options::missing.
///
/// Only the images a batch uses are read (validate() sets the batch): a tensor of 4000 images
/// in a compressed .npz costs one image of memory at batch 1, and a source whose images all
/// lie beyond the batch is read for its shapes only. Tensors are decoded when first used and
/// kept in a bounded cache (real_activation_options::cache_limit_bytes).
class npz_activation_source : public activation_source {
public:
  /// Throws npy_error / activation_error (unreadable, empty, not a zip) naming the path.
  explicit npz_activation_source(const std::string& path, std::uint64_t cache_limit_bytes = 1ull << 30);
  npz_activation_source(const std::string& path, const real_activation_options& opt);
  /// Several sources, images concatenated in this order. Throws activation_error for an empty
  /// list, and naming both files when two sources hold different tensor names (after the name
  /// map); as the one-path constructor for each path.
  npz_activation_source(const std::vector<std::string>& paths, const real_activation_options& opt);
  ~npz_activation_source() override;
  void fill(const std::string& key, const tensor_shape& shape, std::uint64_t offset,
            std::uint8_t* out, std::size_t len) override;
  void validate(const network& net) const override;
  /// "real: A.npz + B.npz (K distinct images, repeated to batch N); ..." (file names without
  /// their folders; the paths as given when two sources share a file name).
  std::string describe(const network& net) const override;
  int distinct_images() const override { return distinct_; }
  /// Images the sources hold, as validate() found them: one source, the smallest N over its
  /// tensors used; several, the sum of their image counts (each the smallest N over its tensors).
  int images_in_file() const { return images_; }
  /// Offloaded tensors of the validated network that the files neither hold nor can compute,
  /// produced as dense synthetic data (missing_activations = dense).
  std::size_t dense_tensors() const { return dense_.size(); }
  /// Share of a held tensor's elements (the images the batch uses) that are -0.0 (bit pattern
  /// 0x80000000) from which validate() warns: ZVC compresses only +0.0 words (bit-exact), so
  /// negative zeros, e.g. of a ReLU computed as x * (x > 0), are sent as nonzeros.
  static constexpr double negative_zero_warn_share = 0.01;
  /// After validate(): the input warnings, each naming the file(s). Tensors used whose image
  /// counts (N) differ: one warning per source naming each count and its tensors (the batch
  /// uses the smallest count). Negative zeros: one warning naming every tensor the run
  /// offloads whose elements are at least negative_zero_warn_share -0.0, with its share and the
  /// fix (np.maximum(x, 0) or x + 0.0 when saving); counted once per tensor when validate()
  /// checks its shape (the tensor is in memory then).
  std::vector<std::string> warnings() const override;

private:
  /// A tensor as loaded: shape[0] images (at most the batch: rows_in_file may be more), the
  /// images of the sources concatenated in order.
  struct tensor {
    std::vector<std::int64_t> shape;
    std::vector<std::uint8_t> data;
    std::uint64_t rows_in_file = 0;  ///< images of the tensor over all sources
  };
  /// A tensor computed from a held one by a pool layer.
  /// `from`: the pool's input tensors (layer::input_keys: a concatenation's parts, channel
  /// order) with their channel counts `part_c`.
  struct derived_pool {
    std::vector<std::string> from;
    std::vector<std::int64_t> part_c;
    layer::pool_window pool;
    tensor_shape in, out;
  };
  /// One source: a .npz, a directory of .npy or one .npy.
  struct source_file {
    std::string path;
    std::unique_ptr<npz_archive> archive;     ///< set for a .npz
    std::map<std::string, std::string> where; ///< layer key -> member name (npz) or .npy path
    std::set<std::string> names;              ///< the tensor names in the file (before the name map)
    std::vector<std::string> keys;            ///< layer keys (the name map applied) in the file's order
    /// Images of this source (the smallest N over its tensors); known after validate() when
    /// there are several sources (-1 before).
    std::int64_t images = -1;
  };
  /// Opens `path` and maps its tensor names to layer keys (the name map applied).
  source_file open_source(const std::string& path) const;
  /// Several sources, once: reads every held tensor of every source (the rows the batch takes
  /// from it, images_needed_, and the header; an .npz member is decompressed to its end, its
  /// CRC checked), sets each source's image count, checks that all sources agree on C, H, W,
  /// and caches the concatenated tensors while they fit in the cache (so each member is
  /// decompressed once).
  void scan_sources();
  /// Tensor `key` holding at least min(images over all sources, `images`) images.
  const tensor& load(const std::string& key, std::uint64_t images);
  /// Tensor `key` of source `f` with at most `max_rows` images, dtype and shape checked.
  npy_array read_checked(const source_file& f, const std::string& key, std::uint64_t max_rows) const;
  tensor compute_pool(const derived_pool& d, std::uint64_t images);
  /// The sources' file names for messages: "A.npz", "A.npz + B.npz" (full paths).
  std::string paths_text() const;
  /// "the file" or "the files".
  const char* the_files() const { return sources_.size() == 1 ? "the file" : "the files"; }
  std::vector<source_file> sources_;
  std::string path_;  ///< paths_text()
  real_activation_options opt_;
  std::uint64_t cached_bytes_ = 0;
  int images_ = 1;
  /// Images a tensor is loaded with (the batch of the validated network; all before): a file
  /// holding 4000 images of a layer needs only the first N of them for a batch of N.
  std::uint64_t images_needed_ = all_rows;
  int distinct_ = 1;
  std::set<std::string> held_;  ///< layer keys the sources hold (each source holds all of them)
  std::map<std::string, tensor> cache_;
  std::map<std::string, derived_pool> derived_;  ///< pool outputs computed from held tensors
  std::map<std::string, std::uint64_t> dense_;   ///< missing tensors produced dense -> bytes per batch
  std::uint64_t offloaded_bytes_ = 0;            ///< every offloaded tensor of the validated network
  /// Held tensors checked by validate() -> (-0.0 elements, elements) of the images used.
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> negative_zeros_;
  /// After validate() of one source: the warning of unequal image counts over the tensors
  /// used ("" when equal). Several sources: source_warnings_, one per source (scan_sources()).
  std::string images_warning_;
  std::vector<std::string> source_warnings_;
  /// The warning for tensors of `file` holding different numbers of images (key -> count),
  /// or "" when the counts agree.
  std::string unequal_images_warning(const std::string& file, const std::map<std::string, std::int64_t>& counts) const;
  std::string negative_zero_warning() const;  ///< warnings()'s -0.0 part ("" for none)
};

/// Synthetic activations.
struct synthetic_params {
  /// Fraction of nonzero elements of every tensor, in [0, 1].
  double density = 0.5;
  /// Per-tensor density by layer output key (overrides `density`).
  std::map<std::string, double> layer_density;
  /// Clustering: mean length of a run of zero elements (in elements). 0 = independent zeros:
  /// every `cluster_segment` elements (a segment, generated alone from its own seed) hold
  /// exactly floor(d b) - floor(d a) nonzeros (a, b its ends) at uniformly random positions
  /// (Bernoulli(d) elements conditioned on their count: a zero run has mean length 1 / d, its
  /// length geometric); any window of n elements holds d n nonzeros within 1 element plus the
  /// hypergeometric deviations of its two partial segments (sd <= sqrt(S d (1 - d)) / 2 each):
  /// measured within 0.5 % of d n for n = 10^6 at d >= 0.01 (docs/workloads.md). Otherwise
  /// zeros and nonzeros alternate in runs of geometric length, mean L = mean_zero_run for
  /// zeros and L d / (1 - d) for nonzeros (a two-state Markov chain; needs
  /// L >= max(1, (1 - d) / d)), each run's mean steered by the running surplus of nonzeros so
  /// that the count tracks d x elements: every
  /// `cluster_segment` elements (a segment, generated alone from its own seed so any byte
  /// range can be regenerated) hold exactly floor(d b) - floor(d a) nonzeros (a, b its ends),
  /// and within a segment the surplus stays within B = max(1, 4000 d) elements. Any window of
  /// n elements so holds d n nonzeros within 2 B + 1 (0.8 % of d n + 1 element for n = 10^6,
  /// at every L). The mean zero run stays within 10 % of L while runs are short against the
  /// band and the segment (measured: L up to ~1000 at d 0.4; runs of both kinds at most
  /// ~2300 elements); longer runs are cut (L = 10^9 gives runs of at most a segment).
  double mean_zero_run = 0;
  /// Segment length S (elements) of both generators, in 1..max_cluster_segment. A byte range
  /// is generated from the starts of its segments: 16384 elements = the 64 KiB chunks the
  /// platform produces (chunk_producer), so those cost one segment each.
  std::uint64_t cluster_segment = 16384;
  /// Largest cluster_segment: a byte range that covers part of a segment of independent
  /// zeros is cut from the whole segment made in scratch memory (4 S bytes, 64 MiB at most).
  static constexpr std::uint64_t max_cluster_segment = 1ull << 24;
  std::uint64_t seed = 1;
  /// Where layer_density came from, for describe() (appended after "; "), e.g.
  /// density_profile_match::summary(); "" for none. (Last: aggregate initialisations keep
  /// their order.)
  std::string layer_density_origin;
};

/// Synthetic activations: every byte depends only on (seed, key, element index), so the same
/// seed gives the same bytes and any window can be regenerated without the rest (from the
/// starts of its segments, synthetic_params::cluster_segment).
class synthetic_activation_source : public activation_source {
public:
  /// density in [0, 1]: fraction of nonzero elements (uniform zeros). Throws activation_error.
  explicit synthetic_activation_source(double density, std::uint64_t seed = 1);
  /// Throws activation_error naming the bad value.
  explicit synthetic_activation_source(const synthetic_params& p);
  void fill(const std::string& key, const tensor_shape& shape, std::uint64_t offset,
            std::uint8_t* out, std::size_t len) override;
  /// Checks that mean_zero_run is feasible for every offloaded tensor's density.
  void validate(const network& net) const override;
  std::string describe(const network& net) const override;
  int distinct_images() const override { return 0; }
  /// fill() only reads the parameters fixed at construction: safe from several threads.
  bool concurrent_fill() const override { return true; }
  /// Density used for tensor `key`.
  double density_of(const std::string& key) const;

private:
  synthetic_params p_;
};

/// How training_profile_densities() matched a profile's layers to a network: for the report
/// (which layers took another layer's curve) and a warning (profile names that are no layer).
struct density_profile_match {
  std::string path;                      ///< the profile file, as given
  double progress = 1.0;                 ///< the point of training used, 0..1
  /// The profile iteration asked for (progress x the profile's last iteration) and the one
  /// used: the profile's first iteration when that is later (the curves are clamped to their
  /// first row before it; a profile's last iteration is progress 1).
  double iteration = 0, iteration_used = 0;
  std::size_t layers = 0;                ///< layers of the network (each has an output key)
  std::size_t named = 0;                 ///< of them, those whose output key the profile names
  /// The other layers in network order, each as (its output key, the profile layer whose curve
  /// it took: the one at the same relative depth).
  std::vector<std::pair<std::string, std::string>> borrowed;
  /// Of `borrowed`, the output keys that no vDNN policy offloads (the last layer's input,
  /// which stays on the GPU, and the network output), in network order: their density is
  /// never used, so they are not "borrowed" in summary().
  std::vector<std::string> never_offloaded;
  /// Profile layer names that are no layer output key of the network, in file order.
  std::vector<std::string> unknown;
  /// Of `unknown`, the in-place entries of a layer file (relu1) fused into a layer (conv1):
  /// the name, the layer, the layer's output key (which the profile should use); warning() says so.
  struct fused_name {
    std::string name, layer, key;
  };
  std::vector<fused_name> fused;
  /// One short line for the report: "density profile P.csv at progress 1 (iteration 5000): 6 of
  /// 11 layers named, 3 borrowed (pool1 <- conv2a, conv4 <- conv3, pool2 <- res), 2 not named
  /// but never offloaded (gap, fc)" (the file's name without its folder; at most 5 borrowings
  /// listed, else the first 4 and how many more; "iteration 0, before the profile's first
  /// iteration 100: clamped to it" when clamped), with ", N profile names not in the network"
  /// when there are such names.
  std::string summary() const;
  /// The warning for `unknown` ("" when empty), naming the file, every such name and the
  /// network: they take part only by their position among the profile's layers.
  std::string warning(const std::string& network_name) const;
};

/// Density-over-training profile from a CSV with the columns iteration,epoch,layer,
/// zero_fraction[,...] (such as ../shared/data/density/fmnist_training.csv). Returns the
/// density (1 - zero_fraction) of every layer output key of `net` at `progress` in [0, 1] of
/// the profiled run (iteration = progress x last iteration; linear interpolation between
/// checkpoints; an iteration before the profile's first is clamped to the first). A key that is a profile layer name takes that layer's curve; the other
/// layers take the curve of the profile layer at the same relative depth (layer k of n ->
/// profile layer round(k (m - 1) / (n - 1)) of m, in profile order). Profile order: the
/// network's layer order when every profile layer is a layer of `net` (the order of the rows
/// does not matter then), else the order in which the layers first appear in the file (a
/// profile of another network: list its layers from input to output). Fills `match` (if
/// given) with how the layers were matched. Throws activation_error naming the file and line,
/// or the bad progress value.
std::map<std::string, double> training_profile_densities(const std::string& csv_path, double progress,
                                                         const network& net, density_profile_match* match = nullptr);

}  // namespace cdma::workloads
