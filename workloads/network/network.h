// Network zoo: the per-layer shapes, FLOPs and bytes that the vDNN runtime model and the GPU
// compute model work on. Pure C++ (no SystemC).
//
// A network here is the *vDNN view* of a DNN: its layers (conv, pool, fc, element-wise add) in
// execution order, each of which produces one stored activation tensor; X_i, the output of
// layer i - 1 (X_0: the input image), is the tensor vDNN may offload, during the forward pass of
// its first consumer (tensor_use_layers()). Shapes are NCHW with N = batch. Every tensor is
// fp32 (4 bytes per element).
#pragma once

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace cdma::workloads {

/// Bytes per element of every activation and weight tensor (fp32).
constexpr std::uint64_t bytes_per_element = 4;

/// An NCHW tensor shape. A fully connected output is stored as N x C x 1 x 1.
struct tensor_shape {
  std::int64_t n = 0, c = 0, h = 0, w = 0;
  /// n * c * h * w (0 if any dimension is <= 0).
  std::uint64_t elements() const;
  /// fp32 size: elements() * 4 bytes.
  std::uint64_t bytes() const { return elements() * bytes_per_element; }
  /// "NxCxHxW", e.g. "32x64x147x147".
  std::string str() const;
  bool operator==(const tensor_shape& o) const { return n == o.n && c == o.c && h == o.h && w == o.w; }
  bool operator!=(const tensor_shape& o) const { return !(*this == o); }
};

/// conv (incl. depthwise / grouped), pool (max / avg / global), fc (fully connected), eltwise
/// (element-wise add of branches, e.g. a ResNet shortcut).
enum class layer_kind { conv, pool, fc, eltwise };
/// "conv", "pool", "fc", "eltwise".
std::string to_string(layer_kind);

/// One vDNN layer: a conv (for a Keras graph a fused Conv2D + BatchNorm + ReLU block), a pool, a
/// fully connected layer or an element-wise add; its output is one stored activation tensor.
struct layer {
  std::string name;            ///< the layer's name in the graph / layer file, e.g. "conv2d_1", "max_pooling2d_1"
  layer_kind kind = layer_kind::conv;
  /// True when the layer's output is a ReLU (or ReLU6) output: fused Activation('relu') /
  /// ReLU in a Keras graph, `"relu": true` (or a following `relu` entry) in a layer file.
  bool relu = false;
  std::string output_key;      ///< activation key of the output, e.g. "activation_1" (npz member)
  /// The layer's true input shape (shape inference through the graph), N = batch; a
  /// concatenation's full channel count; an add: its inputs' channels summed (each is read).
  tensor_shape input;
  tensor_shape output;         ///< output shape, N = batch
  /// X_i, the stored tensor indexed by this layer: layer i-1's output (key = previous
  /// output_key, shape = previous output); layer 0's is the network input image (offload_key =
  /// "", shape = input image N x 3 x 299 x 299 for InceptionV3). Every tensor vDNN may offload
  /// is exactly one X_i. When it moves: tensor_use_layers() (offloaded during its first
  /// consumer's forward pass, back before its last consumer's backward pass; on a chain both
  /// are layer i). Which of them a policy moves: vdnn_runtime (policy conv: those in
  /// conv_input_keys()).
  std::string offload_key;
  tensor_shape offload;
  /// FLOPs of the forward pass for the whole batch, a multiply-add counting 2. For a conv:
  /// 2 * kh * kw * (cin / groups) * cout * hout * wout * N (+ N * cout * hout * wout with a bias).
  /// The fused BatchNorm / ReLU element-wise work is not counted (it is memory-bound and hidden
  /// in forward_bytes' output term in a fused kernel).
  double forward_flops = 0;
  /// DRAM bytes the forward kernels move, whole batch, fp32:
  /// input.bytes() + output.bytes() + weight_bytes (each tensor read or written once).
  std::uint64_t forward_bytes = 0;
  /// fp32 parameter bytes of the layer: conv kernel kh * kw * (cin / groups) * cout (+ cout bias)
  /// times 4. BatchNorm parameters (a few per channel) are not counted.
  std::uint64_t weight_bytes = 0;
  /// Pooling window of a pool layer (kind == pool; layer file or Keras graph): output element
  /// (y, x) of a channel covers input rows y * sh - ph .. y * sh - ph + kh - 1 and the columns
  /// likewise, clipped to the input (padding never wins a max; see `derivable`). Lets a
  /// real-activation source compute a pool output that its file does not hold from the pool's
  /// stored input.
  struct pool_window {
    bool max = true;      ///< max pooling; false: average
    bool global = false;  ///< one window over the whole H x W
    /// Kernel, stride and padding (top / left side) in elements of H and W, from the layer
    /// file's "kernel", "stride", "pad" (global: the whole input, stride 1, no padding). Keras
    /// 'same' pooling: TensorFlow's padding, total max((out - 1) s + k - in, 0), of which
    /// floor(total / 2) on the top / left (ph, pw) and the rest on the bottom / right (clipped).
    std::int64_t kh = 0, kw = 0, sh = 1, sw = 1, ph = 0, pw = 0;
    /// Average pooling divides by the number of input elements inside the clipped window
    /// (TensorFlow / Keras 'same' average pooling never counts padded elements); false: by
    /// kh * kw (only computed without padding, where the two agree).
    bool exclude_padding = false;
    /// True when the pooled values follow from the input alone: for max (and global) pooling
    /// when every window starts inside the input and the padding is smaller than the kernel;
    /// for average pooling with exclude_padding (the framework's convention is known: Keras)
    /// when every window holds an input element; otherwise only without padding and with every
    /// window inside the input (frameworks differ on counting padded elements).
    bool derivable = false;
  };
  pool_window pool;
  /// output_key of the layer whose output this layer reads, when it reads exactly one layer's
  /// output ("" = the network input, a concatenation, or several inputs).
  std::string input_key;
  /// Every stored tensor this layer reads, as output keys of the layers that produced them
  /// ("" = the network input image), in input order; a concatenation is replaced by its parts
  /// in channel order (branches write into one buffer), an in-place layer (ReLU, BN, dropout,
  /// flatten, zero padding) by its input. Used by policy conv and to compute pool outputs (the
  /// loaders and synthetic_chain set it; a network built by hand must too, or policy conv
  /// offloads nothing).
  std::vector<std::string> input_keys;
  /// Names of the in-place entries of a layer file (bn, relu, lrn, dropout) fused into this
  /// layer (they follow it, directly or through other in-place entries), in file order: they
  /// are no layers, and messages that meet such a name point to this layer (fused_into()).
  std::vector<std::string> fused;
};

struct network {
  std::string name;
  std::string source;          ///< where the definition came from (file path and reference)
  int batch = 1;
  std::vector<layer> layers;
  /// Sum of every layer's offloaded tensor in bytes (fp32): what vDNN policy `all` moves to the
  /// host in one forward pass, uncompressed.
  std::uint64_t offload_bytes_total() const;
};

/// Any failure building a network: unreadable or malformed graph file, unknown layer reference,
/// unsupported layer configuration, unknown network name, bad batch. The message names the file
/// (and layer / key) and the expected form.
class network_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Output keys ("" = the network input image) of the tensors that at least one conv layer
/// reads (layer::input_keys of the conv layers: a concatenation's parts are read by the
/// concatenation's consumers). vDNN policy `conv` offloads exactly these (docs/workloads.md).
std::set<std::string> conv_input_keys(const network& net);

/// The layers that read X_i (layer::offload_key of layer i) in execution order: vDNN on a
/// branched network (Rhu et al., MICRO 2016, §III) offloads a layer's input tensors while the
/// layer, their first consumer, computes its forward pass, and needs them back in GPU memory
/// before the backward pass of their last consumer (the first of them to run backward).
struct tensor_uses {
  std::size_t first = 0;  ///< index of the first layer whose input_keys hold X_i
  std::size_t last = 0;   ///< index of the last such layer (>= first)
};

/// For every i (X_i), its first and last consumers: the layers whose input_keys name
/// layers[i].offload_key (a concatenation's parts are read by the concatenation's consumers).
/// On a chain first = last = i. A tensor that no layer lists (a network built by hand without
/// input_keys, a dangling output) gets first = last = i. Same size as net.layers.
std::vector<tensor_uses> tensor_use_layers(const network& net);

/// Builds the vDNN layers of a Keras graph file such as
/// workloads/data/inception_v3/inception_v3.keras-graph.json (the format of the project's
/// topology files: {"input_layers", "output_layers", "layers": [{"name", "type", "config",
/// "inputs": [names]}]}).
///
/// * Shapes: exact shape inference through the whole graph (channels_last configs) for
///   InputLayer, Conv2D (padding valid/same, strides, dilation, groups), DepthwiseConv2D
///   (depth_multiplier), ZeroPadding2D, BatchNormalization, Activation,
///   ReLU, Dropout, MaxPooling2D / AveragePooling2D (valid/same), GlobalAveragePooling2D /
///   GlobalMaxPooling2D, Concatenate (channel axis), Add, Flatten, Dense. Keras rules:
///   valid -> floor((in - dilation * (k - 1) - 1) / stride) + 1, same -> ceil(in / stride).
///   The input size comes from the InputLayer's batch_input_shape (299x299x3 for InceptionV3).
/// * Layers (the vDNN view, as load_layer_file builds it): every Conv2D / DepthwiseConv2D is a
///   conv layer, fused with the chain of sole consumers [BatchNormalization] -> [Activation /
///   ReLU] that follows it; its output_key is the last layer of that chain (for InceptionV3 the
///   Activation('relu') "activation_k"; a conv without ReLU, like MobileNetV2's linear
///   projections, ends at its BatchNormalization). MaxPooling2D / AveragePooling2D /
///   GlobalAveragePooling2D / GlobalMaxPooling2D are pool layers (pool window set; Keras
///   'same' average pooling excludes padding: pool_window::exclude_padding), Dense is fc (relu
///   when its activation is "relu"), Add is eltwise; their output_key is the Keras layer name
///   ("max_pooling2d_1", "block_2_add", "dense_1"). ZeroPadding2D is folded into the next
///   conv (the conv reads the unpadded tensor; FLOPs from the padded geometry), Flatten,
///   Dropout, BatchNormalization and Activation / ReLU elsewhere are in place, Concatenate is
///   free. FLOPs and bytes as load_layer_file computes them (one code path). InceptionV3: 94
///   conv + 14 pool + 3 fc = 111 layers; MobileNetV2: 52 conv + 1 pool + 3 fc + 10 add = 66.
/// * Order: execution order = post-order walk of the graph from output_layers visiting each
///   layer's inputs in listed order (the order of the shipped .npz files; for InceptionV3 the
///   convs are activation_1 ... activation_94). Note: this is *not* the order of the layers
///   array, which for InceptionV3 lists some branches out of order (conv2d_9 before conv2d_6).
/// Throws network_error naming the file and layer. `batch` must be >= 1.
network load_keras_graph(const std::string& path, int batch);

/// InceptionV3 at the given batch from the shipped graph
/// (CDMA_WORKLOADS_DATA_DIR "/inception_v3/inception_v3.keras-graph.json"; the macro
/// CDMA_WORKLOADS_DATA_DIR is defined by the build as the path of workloads/data).
/// 111 vDNN layers (94 conv blocks, 14 pools, 3 fc); at batch 1 the 94 conv outputs total
/// 8,967,488 elements and the convs 11,422,336,192 forward FLOPs (tests/unit/inception_flops.py);
/// all layers 11,447,982,405 FLOPs (tests/unit/vdnn_tensors.py).
network inception_v3(int batch);

/// A small synthetic conv chain for tests: `layers` 3x3 same-padding convs (stride 1, no bias)
/// on an N x in_channels x hw x hw input, channels doubling every layer starting from `c0`
/// (layer k, 1-based, outputs c0 * 2^(k-1) channels); names "syn_conv_1", ...; output keys
/// "syn_1", "syn_2", ...; same offload rule as above. All arguments must be >= 1.
network synthetic_chain(int batch, int layers, int c0 = 16, int hw = 32, int in_channels = 3);

/// Builds a network from a cdma-vp layer file (JSON; format in docs/workloads.md):
///   {"name": "vgg16", "input": [C, H, W], "layers": [
///      {"name": "conv1_1", "type": "conv", "filters": 64, "kernel": 3, "stride": 1, "pad": 1,
///       "relu": true}, {"name": "pool1", "type": "pool", "op": "max", "kernel": 2, ...}, ...]}
/// Types: conv (filters, kernel, stride=1, pad=0 | "same" | "valid", dilation=1, groups=1,
/// bias=true, relu=false), pool (op max|avg, kernel, stride=kernel, pad=0, ceil=false,
/// global=false), fc (units, bias=true, relu=false), add (relu=false), concat (channel axis),
/// and the in-place types relu, lrn, bn, dropout. "inputs" lists input names (default: the
/// previous entry; "input" is the network input); "key" overrides the activation key (npz
/// member name, default: name). vDNN layers: conv, pool, fc, add (in file order, which must be
/// an execution order); concat is free (branches write into one buffer) and the in-place types
/// are fused into the layer that produced their input (listed in its layer::fused). Offload
/// rule: layer::offload_key.
/// Throws network_error naming the file, the entry and the expected form.
network load_layer_file(const std::string& path, int batch);

/// The layer of `net` into which the in-place entry `name` of its layer file is fused
/// (layer::fused), or nullptr when no layer fused such an entry.
const layer* fused_into(const network& net, const std::string& name);

/// Directory of the shipped layer files (workloads/networks).
std::string networks_dir();

/// Total elements, at the network's batch, of the outputs of layers with relu == true.
std::uint64_t relu_output_elements(const network& net);

/// Lookup by name (case-insensitive). Zoo: alexnet, overfeat, nin, vgg16, squeezenet,
/// googlenet, resnet50, fmnist_cnn (layer files in networks_dir()), inception_v3,
/// mobilenet_v2 (Keras graphs in workloads/data), synthetic (4 layers, c0 16, hw 32); a
/// path ending in ".json" loads a user layer file (or a Keras graph when the file has no
/// top-level "input"). network_error listing the known names otherwise.
network make_network(const std::string& name, int batch);

/// MobileNetV2 (alpha 1.0, 224x224) from workloads/data/mobilenet_v2/mobilenet_v2.keras-graph.json:
/// 66 vDNN layers: 52 conv blocks (35 of them ending in ReLU6: 6,105,792 ReLU6 output elements
/// at batch 1), 10 adds, 1 pool, 3 fc (dense_1 and dense_2 ReLU).
network mobilenet_v2(int batch);

/// Names make_network() accepts (canonical names, then aliases).
std::vector<std::string> known_networks();

}  // namespace cdma::workloads
