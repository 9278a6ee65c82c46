// Network zoo: Keras graph loader with shape inference, synthetic chains, lookup by name.
#include "workloads/network/network.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>
#include "workloads/io/input_file.h"

namespace cdma::workloads {

using json = nlohmann::json;

std::uint64_t tensor_shape::elements() const {
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0) return 0;
  return static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(c) *
         static_cast<std::uint64_t>(h) * static_cast<std::uint64_t>(w);
}

std::string tensor_shape::str() const {
  std::ostringstream os;
  os << n << 'x' << c << 'x' << h << 'x' << w;
  return os.str();
}

std::string to_string(layer_kind k) {
  switch (k) {
    case layer_kind::conv: return "conv";
    case layer_kind::pool: return "pool";
    case layer_kind::fc: return "fc";
    case layer_kind::eltwise: return "eltwise";
  }
  return "unknown";
}

std::uint64_t network::offload_bytes_total() const {
  std::uint64_t total = 0;
  for (const auto& l : layers) total += l.offload.bytes();
  return total;
}

namespace {

/// "window 3", or with a dilation d > 1 "window 3 with dilation 2 (effective window d (k - 1) + 1 = 5)":
/// the size that must fit the input.
std::string window_text(std::int64_t k, std::int64_t d) {
  std::string s = "window " + std::to_string(k);
  if (d > 1) {
    const __int128 eff = static_cast<__int128>(d) * (k - 1) + 1;
    std::string e;
    for (__int128 v = eff; v > 0 || e.empty(); v /= 10) e.insert(e.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    s += " with dilation " + std::to_string(d) + " (effective window d (k - 1) + 1 = " + e + ")";
  }
  return s;
}

// ---- size limits: no count of elements, bytes or FLOPs wraps ------------------------------
// A hyper-parameter or a shape of 2^63 (e.g. "filters": 4611686018427387904, "stride":
// 9223372036854775807 with "same") wrapped int64 / uint64 products: a tensor of 2^64 elements
// counted 0 bytes, a padding of 2^62 gave an output of -2^63 rows, and the run went on with
// 0.000 ms (breaker s22 F1). Every integer of a network file and every tensor is bounded below,
// so the byte counts of up to 2^10 full-size tensors still add up in 64 bits.

/// Largest hyper-parameter (kernel, stride, pad, dilation, filters, units, groups, depth
/// multiplier, padding) and largest image dimension: 2^48, far beyond any real network.
constexpr std::int64_t max_hyper = std::int64_t{1} << 48;
/// Largest tensor or weight array, elements: 2^48 fp32 = 2^50 B = 1 PiB (a thousand times the
/// largest GPU memory of the presets, 80 GiB).
constexpr std::uint64_t max_array_elements = std::uint64_t{1} << 48;

/// a * b for a, b >= 0, or max_array_elements + 1 when the product is larger (never wraps).
std::uint64_t mul_capped(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > max_array_elements / a) return max_array_elements + 1;
  return a * b;
}

/// "" when `dims` (each >= 1, each at most max_hyper, their product at most
/// max_array_elements) describe an array that fits; else the problem, naming `what` (e.g.
/// "output 1x4611686018427387904x32x32") and the limit.
std::string size_problem(const std::string& what, std::initializer_list<std::int64_t> dims) {
  std::string text;
  std::uint64_t n = 1;
  bool bad = false;
  for (std::int64_t d : dims) {
    text += (text.empty() ? "" : "x") + std::to_string(d);
    if (d < 1 || d > max_hyper) bad = true;
    else n = mul_capped(n, static_cast<std::uint64_t>(d));
  }
  if (!bad && n <= max_array_elements) return "";
  return what + " " + text + " has " +
         (bad ? std::string("a dimension outside 1 .. 2^48") : std::string("more than 2^48 elements")) +
         "; expected at most 2^48 = 281474976710656 elements (1 PiB of fp32), each dimension 1 .. 2^48";
}

/// "" when the tensors that `net`'s layers offload add up to at most 2^60 B (1 EiB, the largest
/// gpu_mem.size and host_mem.size): the platform's sums of them (host layout, spill decision)
/// stay in 64 bits. Else the problem.
std::string total_problem(const network& net) {
  unsigned __int128 total = 0;  // each tensor <= 2^50 B (size_problem): no wrap below 2^78 layers
  for (const auto& l : net.layers) total += l.offload.bytes();
  if (total <= (static_cast<unsigned __int128>(1) << 60)) return "";
  return "the " + std::to_string(net.layers.size()) +
         " offloaded tensors add up to more than 2^60 bytes (1 EiB); expected at most 2^60 (the largest gpu_mem.size "
         "and host_mem.size)";
}

void check_batch(int batch, const std::string& what) {
  if (batch < 1)
    throw network_error(what + ": batch must be an integer >= 1, got " + std::to_string(batch));
}

// Per-image (N = 1) shape of a graph tensor, channels_last semantics kept as C/H/W.
struct chw {
  std::int64_t c = 0, h = 0, w = 0;
};

// ---- costs of a vDNN layer: one code path for layer files and Keras graphs -----------------
// (docs/workloads.md: FLOPs of the forward pass for the whole batch, a multiply-add counting 2;
// bytes = input + output + weights, fp32.)
struct layer_cost {
  double flops = 0;
  std::uint64_t params = 0;
};

/// Convolution: 2 kh kw (cin / groups) per output (+ 1 with a bias); kh kw (cin / groups) cout
/// (+ cout) parameters. `outputs` = N * cout * hout * wout.
layer_cost conv_cost(std::int64_t kh, std::int64_t kw, std::int64_t cin_per_group, std::int64_t cout,
                     double outputs, bool bias) {
  return {2.0 * static_cast<double>(kh * kw * cin_per_group) * outputs + (bias ? outputs : 0.0),
          static_cast<std::uint64_t>(kh * kw * cin_per_group * cout + (bias ? cout : 0))};
}

/// Pooling: one FLOP per window element per output (`window` = kh kw; global: H W).
layer_cost pool_cost(std::int64_t window, double outputs) { return {static_cast<double>(window) * outputs, 0}; }

/// Fully connected: N (2 in units (+ units)); in units (+ units) parameters.
layer_cost fc_cost(std::int64_t in, std::int64_t units, std::int64_t batch, bool bias) {
  return {static_cast<double>(batch) *
              (2.0 * static_cast<double>(in) * static_cast<double>(units) + (bias ? static_cast<double>(units) : 0.0)),
          static_cast<std::uint64_t>(in * units + (bias ? units : 0))};
}

/// Element-wise add of `inputs` tensors: inputs - 1 FLOPs per output.
layer_cost add_cost(std::size_t inputs, double outputs) {
  return {static_cast<double>(inputs - 1) * outputs, 0};
}

/// Sets forward_flops, weight_bytes and forward_bytes (input + output + weights) of `l`, whose
/// input and output shapes are set.
void set_cost(layer& l, const layer_cost& c) {
  l.forward_flops = c.flops;
  l.weight_bytes = c.params * bytes_per_element;
  l.forward_bytes = l.input.bytes() + l.output.bytes() + l.weight_bytes;
}

/// pool_window::derivable for a window (kh, kw, sh, sw, ph, pw, max, global, exclude_padding
/// set) from input `x` to output `y` (per image).
void set_derivable(layer::pool_window& p, const chw& x, const chw& y) {
  // A window that starts beyond the input (ceil mode without padding, stride > kernel: the
  // Caffe output rule keeps it) holds no input element: not derivable.
  const bool windows_start_inside = (y.h - 1) * p.sh - p.ph < x.h && (y.w - 1) * p.sw - p.pw < x.w;
  p.derivable = (windows_start_inside && p.ph < p.kh && p.pw < p.kw && (p.max || p.global || p.exclude_padding)) ||
                (p.ph == 0 && p.pw == 0 && (y.h - 1) * p.sh + p.kh <= x.h && (y.w - 1) * p.sw + p.kw <= x.w);
}

struct graph_node {
  std::string name, type;
  json config;
  std::vector<std::string> inputs;
  std::size_t file_index = 0;
};

class graph_loader {
 public:
  graph_loader(std::string path, int batch) : path_(std::move(path)), batch_(batch) {}

  network load() {
    check_batch(batch_, "load_keras_graph(\"" + path_ + "\")");
    json doc = read_json();
    try {
      parse_nodes(doc);
      // Shapes of every node (also the ones outside the conv chain, to validate the whole graph).
      for (const auto& nd : nodes_) shape_of(nd.name);
      std::vector<std::string> order = execution_order(doc);
      return build_chain(order);
    } catch (const json::exception& e) {
      // A config value of the wrong JSON type (e.g. "padding": 5).
      if (current_) fail_layer(*current_, std::string("config value of the wrong type (") + e.what() + ")");
      fail(std::string("value of the wrong type (") + e.what() + ")");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw network_error("keras graph " + path_ + ": " + msg);
  }
  [[noreturn]] void fail_layer(const graph_node& nd, const std::string& msg) const {
    fail("layer \"" + nd.name + "\" (" + nd.type + "): " + msg);
  }

  json read_json() const {
    std::ifstream in;
    if (const io::input_problem p = io::open_input(in, path_)) fail(p.text() + " (expected a Keras graph JSON file)");
    try {
      return io::strict_json(in);
    } catch (const io::duplicate_key& e) {
      fail(e.what());
    } catch (const json::exception& e) {
      fail(std::string("malformed JSON (") + e.what() + ")");
    } catch (const std::ios_base::failure& e) {
      fail(std::string("read error (") + e.what() + ")");
    }
  }

  void parse_nodes(const json& doc) {
    if (!doc.is_object() || !doc.contains("layers") || !doc["layers"].is_array())
      fail("expected a JSON object with a \"layers\" array");
    std::size_t i = 0;
    for (const auto& jl : doc["layers"]) {
      const std::string where = "layers[" + std::to_string(i) + "]";
      if (!jl.is_object() || !jl.contains("name") || !jl["name"].is_string() ||
          !jl.contains("type") || !jl["type"].is_string())
        fail(where + ": expected an object with string \"name\" and \"type\"");
      graph_node nd;
      nd.name = jl["name"].get<std::string>();
      nd.type = jl["type"].get<std::string>();
      nd.config = jl.value("config", json::object());
      nd.file_index = i;
      if (jl.contains("inputs")) {
        if (!jl["inputs"].is_array()) fail_layer(nd, "\"inputs\" must be an array of layer names");
        for (const auto& in : jl["inputs"]) {
          if (!in.is_string()) fail_layer(nd, "\"inputs\" must be an array of layer names");
          nd.inputs.push_back(in.get<std::string>());
        }
      }
      if (index_.count(nd.name)) fail_layer(nd, "duplicate layer name");
      index_[nd.name] = nodes_.size();
      nodes_.push_back(std::move(nd));
      ++i;
    }
    for (const auto& nd : nodes_)
      for (const auto& in : nd.inputs)
        if (!index_.count(in)) fail_layer(nd, "unknown input layer \"" + in + "\"");
  }

  const graph_node& node(const std::string& name) const { return nodes_.at(index_.at(name)); }

  // ---- config accessors --------------------------------------------------------------------
  std::int64_t cfg_int(const graph_node& nd, const char* key) const {
    if (!nd.config.contains(key) || !nd.config[key].is_number_integer())
      fail_layer(nd, std::string("config.") + key + " must be an integer");
    return capped(nd, key, nd.config[key].get<std::int64_t>());
  }
  /// `v` of config.`key`, refused above max_hyper (2^48).
  std::int64_t capped(const graph_node& nd, const std::string& key, std::int64_t v) const {
    if (v > max_hyper)
      fail_layer(nd, "config." + key + " = " + std::to_string(v) + " is more than 2^48; expected at most 2^48 = " +
                         std::to_string(max_hyper));
    return v;
  }
  /// Integer config.`key` (`dflt` when absent), at most 2^48.
  std::int64_t cfg_int_or(const graph_node& nd, const char* key, std::int64_t dflt) const {
    return capped(nd, key, nd.config.value(key, dflt));
  }
  /// `cap`: refuse values above max_hyper (not for a dilation: its window is computed in 128
  /// bits and only compared with the input).
  std::pair<std::int64_t, std::int64_t> cfg_pair(const graph_node& nd, const char* key,
                                                 std::int64_t dflt, bool required, bool cap = true) const {
    auto bound = [&](std::int64_t v) { return cap ? capped(nd, key, v) : v; };
    if (!nd.config.contains(key) || nd.config[key].is_null()) {
      if (required) fail_layer(nd, std::string("config.") + key + " is missing (expected [h, w])");
      return {dflt, dflt};
    }
    const json& v = nd.config[key];
    // (The single-integer form was taken without the >= 1 check: "strides": 0 divided by zero,
    // SIGFPE, and "kernel_size": -3 made an output larger than its input; breaker s22 F3.)
    if (v.is_number_integer() && v.get<std::int64_t>() >= 1)
      return {bound(v.get<std::int64_t>()), v.get<std::int64_t>()};
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer() ||
        v[0].get<std::int64_t>() < 1 || v[1].get<std::int64_t>() < 1)
      fail_layer(nd, std::string("config.") + key + " must be a positive integer or [h, w] of positive integers");
    return {bound(v[0].get<std::int64_t>()), bound(v[1].get<std::int64_t>())};
  }
  std::string cfg_padding(const graph_node& nd) const {
    std::string p = nd.config.value("padding", std::string("valid"));
    if (p != "valid" && p != "same")
      fail_layer(nd, "config.padding must be \"valid\" or \"same\", got \"" + p + "\"");
    return p;
  }
  void check_channels_last(const graph_node& nd) const {
    if (nd.config.contains("data_format") && nd.config["data_format"].is_string() &&
        nd.config["data_format"].get<std::string>() != "channels_last")
      fail_layer(nd, "config.data_format must be \"channels_last\"");
  }
  std::int64_t out_len(const graph_node& nd, std::int64_t in, std::int64_t k, std::int64_t s,
                       std::int64_t d, const std::string& pad) const {
    std::int64_t out = 0;
    if (pad == "same") {
      out = (in + s - 1) / s;
    } else {
      const __int128 eff = static_cast<__int128>(d) * (k - 1) + 1;  // 128 bits: a huge dilation cannot wrap
      out = in >= eff ? static_cast<std::int64_t>((in - eff) / s + 1) : 0;
    }
    if (out < 1)
      fail_layer(nd, window_text(k, d) + " does not fit input length " + std::to_string(in));
    return out;
  }

  // ---- shape inference ---------------------------------------------------------------------
  const chw& shape_of(const std::string& root) {
    if (auto it = shapes_.find(root); it != shapes_.end()) return it->second;
    // Depth-first with an explicit stack: recursion overflowed the stack on a chain of 200000
    // layers listed output first (SIGSEGV, breaker s22 F2).
    std::vector<std::pair<const graph_node*, std::size_t>> stack;  // node, next input to visit
    auto enter = [&](const std::string& name) {
      const graph_node& nd = node(name);
      if (visiting_.count(name)) fail_layer(nd, "cycle in the layer graph");
      visiting_.insert({name, true});
      stack.emplace_back(&nd, 0);
    };
    enter(root);
    while (!stack.empty()) {
      const graph_node& nd = *stack.back().first;
      if (std::size_t& next = stack.back().second; next < nd.inputs.size()) {
        const std::string& in = nd.inputs[next++];
        if (!shapes_.count(in)) enter(in);
        continue;
      }
      std::vector<chw> ins;
      for (const auto& in : nd.inputs) ins.push_back(shapes_.at(in));
      current_ = &nd;
      const chw r = infer(nd, ins);
      if (const std::string bad = size_problem("output N x C x H x W", {batch_, r.c, r.h, r.w}); !bad.empty())
        fail_layer(nd, bad);
      visiting_.erase(nd.name);
      shapes_.emplace(nd.name, r);
      stack.pop_back();
    }
    return shapes_.at(root);
  }

  void need_inputs(const graph_node& nd, const std::vector<chw>& ins, std::size_t count) const {
    if (ins.size() != count)
      fail_layer(nd, "expected " + std::to_string(count) + " input(s), got " + std::to_string(ins.size()));
  }

  chw infer(const graph_node& nd, const std::vector<chw>& ins) const {
    const std::string& t = nd.type;
    if (t == "InputLayer") {
      const json& s = nd.config.contains("batch_input_shape") ? nd.config["batch_input_shape"] : json();
      if (!s.is_array() || s.size() != 4 || !s[1].is_number_integer() || !s[2].is_number_integer() ||
          !s[3].is_number_integer())
        fail_layer(nd, "config.batch_input_shape must be [null, H, W, C] (channels_last)");
      chw r{s[3].get<std::int64_t>(), s[1].get<std::int64_t>(), s[2].get<std::int64_t>()};
      if (r.c < 1 || r.h < 1 || r.w < 1) fail_layer(nd, "config.batch_input_shape must be positive");
      if (const std::string bad = size_problem("config.batch_input_shape (C x H x W)", {r.c, r.h, r.w}); !bad.empty())
        fail_layer(nd, bad);
      return r;
    }
    if (t == "Conv2D") {
      need_inputs(nd, ins, 1);
      check_channels_last(nd);
      const auto k = cfg_pair(nd, "kernel_size", 1, true);
      const auto s = cfg_pair(nd, "strides", 1, false);
      const auto d = cfg_pair(nd, "dilation_rate", 1, false, false);
      const std::string pad = cfg_padding(nd);
      const std::int64_t filters = cfg_int(nd, "filters");
      if (filters < 1) fail_layer(nd, "config.filters must be >= 1");
      const std::int64_t groups = cfg_int_or(nd, "groups", 1);
      if (groups < 1 || ins[0].c % groups != 0 || filters % groups != 0)
        fail_layer(nd, "config.groups must divide the input channels and filters");
      return chw{filters, out_len(nd, ins[0].h, k.first, s.first, d.first, pad),
                 out_len(nd, ins[0].w, k.second, s.second, d.second, pad)};
    }
    if (t == "DepthwiseConv2D") {
      need_inputs(nd, ins, 1);
      check_channels_last(nd);
      const auto k = cfg_pair(nd, "kernel_size", 1, true);
      const auto s = cfg_pair(nd, "strides", 1, false);
      const auto d = cfg_pair(nd, "dilation_rate", 1, false, false);
      const std::string pad = cfg_padding(nd);
      const std::int64_t dm = cfg_int_or(nd, "depth_multiplier", 1);
      if (dm < 1) fail_layer(nd, "config.depth_multiplier must be >= 1");
      return chw{static_cast<std::int64_t>(mul_capped(static_cast<std::uint64_t>(ins[0].c), static_cast<std::uint64_t>(dm))), out_len(nd, ins[0].h, k.first, s.first, d.first, pad),
                 out_len(nd, ins[0].w, k.second, s.second, d.second, pad)};
    }
    if (t == "ZeroPadding2D") {
      need_inputs(nd, ins, 1);
      check_channels_last(nd);
      // Keras forms: int p, [ph, pw], or [[top, bottom], [left, right]].
      const json& p = nd.config.contains("padding") ? nd.config["padding"] : json(1);
      std::int64_t top = 0, bottom = 0, left = 0, right = 0;
      auto bad = [&] { fail_layer(nd, "config.padding must be p, [ph, pw] or [[top, bottom], [left, right]]"); };
      if (p.is_number_integer()) {
        top = bottom = left = right = p.get<std::int64_t>();
      } else if (p.is_array() && p.size() == 2 && p[0].is_number_integer() && p[1].is_number_integer()) {
        top = bottom = p[0].get<std::int64_t>();
        left = right = p[1].get<std::int64_t>();
      } else if (p.is_array() && p.size() == 2 && p[0].is_array() && p[1].is_array() && p[0].size() == 2 &&
                 p[1].size() == 2 && p[0][0].is_number_integer() && p[0][1].is_number_integer() &&
                 p[1][0].is_number_integer() && p[1][1].is_number_integer()) {
        top = p[0][0].get<std::int64_t>();
        bottom = p[0][1].get<std::int64_t>();
        left = p[1][0].get<std::int64_t>();
        right = p[1][1].get<std::int64_t>();
      } else {
        bad();
      }
      if (top < 0 || bottom < 0 || left < 0 || right < 0) bad();
      for (const std::int64_t v : {top, bottom, left, right}) capped(nd, "padding", v);
      return chw{ins[0].c, ins[0].h + top + bottom, ins[0].w + left + right};
    }
    if (t == "MaxPooling2D" || t == "AveragePooling2D") {
      need_inputs(nd, ins, 1);
      check_channels_last(nd);
      const auto k = cfg_pair(nd, "pool_size", 2, false);
      const auto s = nd.config.contains("strides") && !nd.config["strides"].is_null()
                         ? cfg_pair(nd, "strides", 1, true)
                         : k;  // Keras: strides default to pool_size
      const std::string pad = cfg_padding(nd);
      return chw{ins[0].c, out_len(nd, ins[0].h, k.first, s.first, 1, pad),
                 out_len(nd, ins[0].w, k.second, s.second, 1, pad)};
    }
    if (t == "GlobalAveragePooling2D" || t == "GlobalMaxPooling2D") {
      need_inputs(nd, ins, 1);
      return chw{ins[0].c, 1, 1};
    }
    if (t == "BatchNormalization" || t == "Activation" || t == "ReLU" || t == "Dropout") {
      need_inputs(nd, ins, 1);
      return ins[0];
    }
    if (t == "Concatenate") {
      if (ins.empty()) fail_layer(nd, "expected at least one input");
      const std::int64_t axis = nd.config.value("axis", std::int64_t{-1});
      if (axis != 3 && axis != -1) fail_layer(nd, "config.axis must be 3 or -1 (channel axis, channels_last)");
      chw r{0, ins[0].h, ins[0].w};
      for (std::size_t i = 0; i < ins.size(); ++i) {
        if (ins[i].h != r.h || ins[i].w != r.w)
          fail_layer(nd, "input \"" + nd.inputs[i] + "\" is " + std::to_string(ins[i].h) + "x" +
                             std::to_string(ins[i].w) + ", expected " + std::to_string(r.h) + "x" +
                             std::to_string(r.w) + " like the first input");
        r.c += ins[i].c;
        if (r.c > max_hyper)  // each input's C <= 2^48: the sum cannot wrap before this
          fail_layer(nd, "the inputs have more than 2^48 channels together; expected at most 2^48");
      }
      return r;
    }
    if (t == "Add") {
      if (ins.empty()) fail_layer(nd, "expected at least one input");
      for (std::size_t i = 1; i < ins.size(); ++i)
        if (ins[i].c != ins[0].c || ins[i].h != ins[0].h || ins[i].w != ins[0].w)
          fail_layer(nd, "input \"" + nd.inputs[i] + "\" differs in shape from \"" + nd.inputs[0] + "\"");
      return ins[0];
    }
    if (t == "Flatten") {
      need_inputs(nd, ins, 1);
      return chw{ins[0].c * ins[0].h * ins[0].w, 1, 1};
    }
    if (t == "Dense") {
      need_inputs(nd, ins, 1);
      const std::int64_t units = cfg_int(nd, "units");
      if (units < 1) fail_layer(nd, "config.units must be >= 1");
      if (ins[0].h != 1 || ins[0].w != 1) fail_layer(nd, "input must be flat (H = W = 1)");
      return chw{units, 1, 1};
    }
    fail_layer(nd, "unsupported layer type (supported: InputLayer, Conv2D, DepthwiseConv2D, ZeroPadding2D, "
                   "BatchNormalization, "
                   "Activation, ReLU, Dropout, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, "
                   "GlobalMaxPooling2D, Concatenate, Add, Flatten, Dense)");
  }

  // ---- order and blocks --------------------------------------------------------------------
  std::vector<std::string> execution_order(const json& doc) const {
    std::vector<std::string> roots;
    if (doc.contains("output_layers") && doc["output_layers"].is_array()) {
      for (const auto& o : doc["output_layers"]) {
        // Keras form: ["name", node_index, tensor_index]; a bare name is accepted too.
        std::string name;
        if (o.is_string()) name = o.get<std::string>();
        else if (o.is_array() && !o.empty() && o[0].is_string()) name = o[0].get<std::string>();
        else fail("output_layers entries must be [\"layer_name\", 0, 0]");
        if (!index_.count(name)) fail("output_layers names unknown layer \"" + name + "\"");
        roots.push_back(name);
      }
    }
    for (const auto& nd : nodes_) roots.push_back(nd.name);  // unreachable layers last
    std::vector<std::string> order;
    std::map<std::string, bool> seen;
    // Iterative post-order DFS, inputs in listed order (recursion depth could be large).
    for (const auto& root : roots) {
      if (seen.count(root)) continue;
      std::vector<std::pair<std::string, std::size_t>> stack{{root, 0}};
      seen[root] = true;
      while (!stack.empty()) {
        auto& [name, next] = stack.back();
        const graph_node& nd = node(name);
        if (next < nd.inputs.size()) {
          const std::string in = nd.inputs[next++];
          if (!seen.count(in)) {
            seen[in] = true;
            stack.emplace_back(in, 0);
          }
        } else {
          order.push_back(name);
          stack.pop_back();
        }
      }
    }
    return order;
  }

  network build_chain(const std::vector<std::string>& order) const {
    std::map<std::string, std::vector<std::string>> consumers;
    for (const auto& nd : nodes_)
      for (const auto& in : nd.inputs) consumers[in].push_back(nd.name);
    auto sole_consumer = [&](const std::string& name) -> const graph_node* {
      auto it = consumers.find(name);
      if (it == consumers.end() || it->second.size() != 1) return nullptr;
      return &node(it->second.front());
    };

    network net;
    net.batch = batch_;
    {
      // Name: file stem without ".keras-graph.json" / ".json".
      std::string stem = path_.substr(path_.find_last_of("/\\") + 1);
      for (const char* suffix : {".keras-graph.json", ".json"}) {
        const std::string s(suffix);
        if (stem.size() > s.size() && stem.compare(stem.size() - s.size(), s.size(), s) == 0) {
          stem.resize(stem.size() - s.size());
          break;
        }
      }
      net.name = stem;
      net.source = path_;
    }
    const graph_node* input_node = nullptr;
    for (const auto& name : order)
      if (node(name).type == "InputLayer") { input_node = &node(name); break; }
    if (!input_node) fail("no InputLayer (expected one with config.batch_input_shape)");

    const std::int64_t N = batch_;
    auto nchw = [N](const chw& s) { return tensor_shape{N, s.c, s.h, s.w}; };

    // What each graph layer's output is in the vDNN view: the stored tensors it consists of
    // (output keys; "" = the input image; a concatenation's parts in channel order), their
    // shape as stored (a ZeroPadding2D's input, unpadded), and the vDNN layer that produced
    // it when it is one layer's output.
    struct tensor_ref {
      std::vector<std::string> parts;
      chw stored;
      int layer = -1;
      bool padded = false;  // a ZeroPadding2D output: only a convolution may read it
    };
    std::map<std::string, tensor_ref> refs;
    auto add_layer = [&](layer l, const graph_node& nd, const std::vector<std::string>& in_parts, const chw& out) {
      l.input_keys = in_parts;
      if (in_parts.size() == 1 && !in_parts.front().empty() && nd.inputs.size() == 1) l.input_key = in_parts.front();
      refs[nd.name] = tensor_ref{{l.output_key}, out, static_cast<int>(net.layers.size()), false};
      net.layers.push_back(std::move(l));
    };

    for (const auto& name : order) {
      const graph_node& nd = node(name);
      current_ = &nd;
      const std::string& t = nd.type;
      if (t == "InputLayer") {
        refs[name] = tensor_ref{{""}, shapes_.at(name), -1, false};
        continue;
      }
      if (nd.inputs.empty()) fail_layer(nd, "expected at least one input");
      const tensor_ref& x = refs.at(nd.inputs.front());
      const chw& out = shapes_.at(name);
      if (x.padded && t != "Conv2D" && t != "DepthwiseConv2D")
        fail_layer(nd, "reads the ZeroPadding2D layer \"" + nd.inputs.front() +
                           "\"; zero padding is supported only in front of a Conv2D / DepthwiseConv2D (folded "
                           "into its padding)");
      layer l;
      l.name = nd.name;
      l.output_key = nd.name;
      if (t == "Conv2D" || t == "DepthwiseConv2D") {
        l.kind = layer_kind::conv;
        const chw& in = shapes_.at(nd.inputs.front());  // padded geometry (same channels)
        // Fuse [BatchNormalization] -> [Activation | ReLU] sole consumers.
        std::string key = nd.name;
        const graph_node* next = sole_consumer(key);
        if (next && next->type == "BatchNormalization") {
          key = next->name;
          next = sole_consumer(key);
        }
        if (next && (next->type == "Activation" || next->type == "ReLU")) {
          key = next->name;
          l.relu = next->type == "ReLU" || next->config.value("activation", std::string()) == "relu";
        }
        l.output_key = key;
        l.input = nchw(x.stored);  // a ZeroPadding2D in front is folded into the padding
        l.output = nchw(out);
        const auto k = cfg_pair(nd, "kernel_size", 1, true);
        // Depthwise: every input channel is its own group (cout = cin * depth_multiplier).
        const std::int64_t groups =
            t == "DepthwiseConv2D" ? in.c : nd.config.value("groups", std::int64_t{1});
        if (const std::string bad = size_problem("weights kh x kw x (cin / groups) x cout", {k.first, k.second, in.c / groups, out.c});
            !bad.empty())
          fail_layer(nd, bad);
        const bool bias = nd.config.value("use_bias", true);
        set_cost(l, conv_cost(k.first, k.second, in.c / groups, out.c, static_cast<double>(l.output.elements()), bias));
        add_layer(std::move(l), nd, x.parts, out);
      } else if (t == "MaxPooling2D" || t == "AveragePooling2D" || t == "GlobalAveragePooling2D" ||
                 t == "GlobalMaxPooling2D") {
        l.kind = layer_kind::pool;
        const chw& in = x.stored;
        l.input = nchw(in);
        l.output = nchw(out);
        layer::pool_window& p = l.pool;
        p.max = t == "MaxPooling2D" || t == "GlobalMaxPooling2D";
        p.global = t == "GlobalAveragePooling2D" || t == "GlobalMaxPooling2D";
        // Keras / TensorFlow: average pooling divides by the elements inside the input.
        p.exclude_padding = !p.max;
        if (p.global) {
          p.kh = in.h;
          p.kw = in.w;
        } else {
          const auto k = cfg_pair(nd, "pool_size", 2, false);
          const auto st = nd.config.contains("strides") && !nd.config["strides"].is_null()
                              ? cfg_pair(nd, "strides", 1, true)
                              : k;
          p.kh = k.first;
          p.kw = k.second;
          p.sh = st.first;
          p.sw = st.second;
          if (cfg_padding(nd) == "same") {
            // TensorFlow 'same': total padding max((out - 1) s + k - in, 0), the smaller half first.
            p.ph = std::max<std::int64_t>((out.h - 1) * p.sh + p.kh - in.h, 0) / 2;
            p.pw = std::max<std::int64_t>((out.w - 1) * p.sw + p.kw - in.w, 0) / 2;
          }
        }
        set_derivable(p, in, out);
        if (const std::string bad = size_problem("pooling window kh x kw", {p.kh, p.kw}); !bad.empty()) fail_layer(nd, bad);
        set_cost(l, pool_cost(p.kh * p.kw, static_cast<double>(l.output.elements())));
        add_layer(std::move(l), nd, x.parts, out);
      } else if (t == "Dense") {
        l.kind = layer_kind::fc;
        l.input = nchw(x.stored);
        l.output = nchw(out);
        l.relu = nd.config.value("activation", std::string()) == "relu";
        const bool bias = nd.config.value("use_bias", true);
        if (const std::string bad = size_problem("weights in x units", {x.stored.c * x.stored.h * x.stored.w, out.c});
            !bad.empty())
          fail_layer(nd, bad);
        set_cost(l, fc_cost(x.stored.c * x.stored.h * x.stored.w, out.c, N, bias));
        add_layer(std::move(l), nd, x.parts, out);
      } else if (t == "Add") {
        l.kind = layer_kind::eltwise;
        std::vector<std::string> parts;
        for (const auto& in : nd.inputs) {
          const tensor_ref& r = refs.at(in);
          if (r.padded) fail_layer(nd, "reads the ZeroPadding2D layer \"" + in + "\"; expected a computed tensor");
          parts.insert(parts.end(), r.parts.begin(), r.parts.end());
        }
        // Every input is read once.
        const auto all_c = static_cast<std::int64_t>(mul_capped(static_cast<std::uint64_t>(out.c), nd.inputs.size()));
        if (const std::string bad = size_problem("inputs together N x C x H x W", {N, all_c, out.h, out.w}); !bad.empty())
          fail_layer(nd, bad);
        l.input = tensor_shape{N, all_c, out.h, out.w};
        l.output = nchw(out);
        set_cost(l, add_cost(nd.inputs.size(), static_cast<double>(l.output.elements())));
        add_layer(std::move(l), nd, parts, out);
      } else if (t == "Concatenate") {
        tensor_ref r{{}, out, -1, false};
        for (const auto& in : nd.inputs) {
          const tensor_ref& p = refs.at(in);
          if (p.padded) fail_layer(nd, "reads the ZeroPadding2D layer \"" + in + "\"; expected a computed tensor");
          r.parts.insert(r.parts.end(), p.parts.begin(), p.parts.end());
        }
        refs[name] = std::move(r);
      } else if (t == "ZeroPadding2D") {
        tensor_ref r = x;
        r.padded = true;
        refs[name] = std::move(r);
      } else {
        // In place (BatchNormalization, Activation, ReLU, Dropout) or a view (Flatten): the
        // input's tensor. A ReLU on a pool / fc / add output marks that layer (a conv's own
        // BN -> ReLU chain is fused above).
        tensor_ref r = x;
        if ((t == "ReLU" || (t == "Activation" && nd.config.value("activation", std::string()) == "relu")) &&
            r.layer >= 0 && net.layers[static_cast<std::size_t>(r.layer)].kind != layer_kind::conv)
          net.layers[static_cast<std::size_t>(r.layer)].relu = true;
        refs[name] = std::move(r);
      }
    }
    if (net.layers.empty()) fail("no Conv2D, pooling, Dense or Add layers (expected a CNN graph)");
    const tensor_shape image = nchw(shapes_.at(input_node->name));
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
      if (i == 0) {
        net.layers[i].offload_key = "";
        net.layers[i].offload = image;
      } else {
        net.layers[i].offload_key = net.layers[i - 1].output_key;
        net.layers[i].offload = net.layers[i - 1].output;
      }
    }
    if (const std::string bad = total_problem(net); !bad.empty()) fail(bad);
    return net;
  }

  std::string path_;
  int batch_;
  std::vector<graph_node> nodes_;
  std::map<std::string, std::size_t> index_;
  std::map<std::string, chw> shapes_;
  std::map<std::string, bool> visiting_;
  mutable const graph_node* current_ = nullptr;  // layer being processed, for error messages
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

}  // namespace

network load_keras_graph(const std::string& path, int batch) {
  return graph_loader(path, batch).load();
}

network inception_v3(int batch) {
  network net = load_keras_graph(CDMA_WORKLOADS_DATA_DIR "/inception_v3/inception_v3.keras-graph.json", batch);
  net.name = "inception_v3";
  return net;
}

network synthetic_chain(int batch, int layers, int c0, int hw, int in_channels) {
  check_batch(batch, "synthetic_chain");
  if (layers < 1 || c0 < 1 || hw < 1 || in_channels < 1)
    throw network_error("synthetic_chain: layers, c0, hw and in_channels must be >= 1 (got layers=" +
                        std::to_string(layers) + ", c0=" + std::to_string(c0) + ", hw=" + std::to_string(hw) +
                        ", in_channels=" + std::to_string(in_channels) + ")");
  if (layers > 40) throw network_error("synthetic_chain: layers must be <= 40 (channels double every layer)");
  network net;
  net.name = "synthetic";
  net.batch = batch;
  const std::int64_t N = batch;
  tensor_shape prev{N, in_channels, hw, hw};
  std::string prev_key;
  std::int64_t c = c0;
  for (int k = 1; k <= layers; ++k, c *= 2) {
    layer l;
    l.name = "syn_conv_" + std::to_string(k);
    l.kind = layer_kind::conv;
    l.output_key = "syn_" + std::to_string(k);
    l.input = prev;
    l.output = tensor_shape{N, c, hw, hw};
    l.offload_key = prev_key;
    l.offload = prev;
    l.input_keys = {prev_key};
    l.input_key = prev_key;
    set_cost(l, conv_cost(3, 3, prev.c, c, static_cast<double>(l.output.elements()), false));
    prev = l.output;
    prev_key = l.output_key;
    net.layers.push_back(std::move(l));
  }
  return net;
}

namespace {

// ---- cdma-vp layer files ------------------------------------------------------------------
class layer_file_loader {
 public:
  layer_file_loader(std::string path, int batch) : path_(std::move(path)), batch_(batch) {}

  network load() {
    check_batch(batch_, "load_layer_file(\"" + path_ + "\")");
    std::ifstream in;
    if (const io::input_problem p = io::open_input(in, path_))
      fail(p.text() + " (expected a cdma-vp layer file, docs/workloads.md)");
    json doc;
    try {
      doc = io::strict_json(in);
    } catch (const io::duplicate_key& e) {
      fail(e.what());
    } catch (const json::exception& e) {
      fail(std::string("malformed JSON (") + e.what() + ")");
    } catch (const std::ios_base::failure& e) {
      fail(std::string("read error (") + e.what() + ")");
    }
    if (!doc.is_object() || !doc.contains("input") || !doc.contains("layers") || !doc["layers"].is_array())
      fail("expected {\"name\", \"input\": [C, H, W], \"layers\": [...]}");
    for (auto kv = doc.begin(); kv != doc.end(); ++kv) {
      static const char* const top[] = {"name", "input", "layers", "source", "comment"};
      if (std::find(std::begin(top), std::end(top), kv.key()) == std::end(top))
        fail("unknown top-level key \"" + kv.key() + "\" (expected name, input, layers, source or comment)");
    }
    if (doc.contains("name") && !doc["name"].is_string()) fail("\"name\" must be a string");
    if (doc.contains("source") && !doc["source"].is_string()) fail("\"source\" must be a string");
    const json& ji = doc["input"];
    if (!ji.is_array() || ji.size() != 3 || !ji[0].is_number_integer() || !ji[1].is_number_integer() ||
        !ji[2].is_number_integer() || ji[0].get<std::int64_t>() < 1 || ji[1].get<std::int64_t>() < 1 ||
        ji[2].get<std::int64_t>() < 1)
      fail("\"input\" must be [C, H, W] of positive integers");
    if (const std::string bad = size_problem("\"input\" at batch " + std::to_string(batch_) + ", N x C x H x W",
                                             {batch_, ji[0].get<std::int64_t>(), ji[1].get<std::int64_t>(),
                                              ji[2].get<std::int64_t>()});
        !bad.empty())
      fail(bad);
    network net;
    net.batch = batch_;
    net.name = doc.value("name", std::string());
    if (net.name.empty()) {
      net.name = path_.substr(path_.find_last_of("/\\") + 1);
      if (net.name.size() > 5 && net.name.compare(net.name.size() - 5, 5, ".json") == 0) net.name.resize(net.name.size() - 5);
    }
    net.source = path_ + (doc.contains("source") && doc["source"].is_string()
                              ? " (" + doc["source"].get<std::string>() + ")" : std::string());
    const std::int64_t N = batch_;
    const chw image{ji[0].get<std::int64_t>(), ji[1].get<std::int64_t>(), ji[2].get<std::int64_t>()};
    tensors_["input"] = {image, -1, {""}};
    std::string prev = "input";
    std::size_t idx = 0;
    for (const json& jl : doc["layers"]) {
      where_ = "layers[" + std::to_string(idx++) + "]";
      if (!jl.is_object() || !jl.contains("name") || !jl["name"].is_string() || !jl.contains("type") ||
          !jl["type"].is_string())
        fail(where_ + ": expected an object with string \"name\" and \"type\"");
      const std::string name = jl["name"].get<std::string>();
      const std::string type = jl["type"].get<std::string>();
      where_ += " \"" + name + "\" (" + type + ")";
      if (name.empty()) fail(where_ + ": \"name\" is empty; expected a unique non-empty name");
      if (tensors_.count(name)) fail(where_ + ": duplicate name");
      std::vector<std::string> inputs;
      if (jl.contains("inputs")) {
        if (!jl["inputs"].is_array() || jl["inputs"].empty()) fail(where_ + ": \"inputs\" must be a non-empty array of names");
        for (const auto& x : jl["inputs"]) {
          if (!x.is_string()) fail(where_ + ": \"inputs\" must be a non-empty array of names");
          const std::string in_name = x.get<std::string>();
          if (!tensors_.count(in_name))
            fail(where_ + ": unknown input \"" + in_name + "\" (inputs must name earlier entries or \"input\")");
          inputs.push_back(in_name);
        }
      } else {
        inputs.push_back(prev);
      }
      check_keys(jl, type);
      const tensor_ref& x = tensors_.at(inputs[0]);
      if (type != "concat" && type != "add" && inputs.size() != 1)
        fail(where_ + ": expected exactly one input");
      layer l;
      l.name = name;
      l.output_key = name;
      if (jl.contains("key")) {
        if (!jl["key"].is_string()) fail(where_ + ": \"key\" must be a string");
        l.output_key = jl["key"].get<std::string>();
        if (l.output_key.empty()) fail(where_ + ": \"key\" is empty; expected a non-empty activation key");
      }
      l.input = tensor_shape{N, x.s.c, x.s.h, x.s.w};
      if (inputs.size() == 1 && x.layer >= 0) l.input_key = net.layers[static_cast<std::size_t>(x.layer)].output_key;
      l.relu = get_bool(jl, "relu", false);
      chw y;
      bool is_layer = true;
      layer_cost cost;
      if (type == "conv") {
        l.kind = layer_kind::conv;
        const auto k = get_pair(jl, "kernel", 0, true);
        const auto s = get_pair(jl, "stride", 1, false);
        const auto d = get_pair(jl, "dilation", 1, false, false, std::numeric_limits<std::int64_t>::max());
        const std::int64_t f = get_int(jl, "filters", 0, true);
        const std::int64_t g = get_int(jl, "groups", 1, false);
        if (f < 1) fail(where_ + ": \"filters\" must be >= 1");
        if (g < 1 || x.s.c % g != 0 || f % g != 0)
          fail(where_ + ": \"groups\" must divide the input channels (" + std::to_string(x.s.c) + ") and filters");
        std::pair<std::int64_t, std::int64_t> p{0, 0};
        bool same = false;
        if (jl.contains("pad") && jl["pad"].is_string()) {
          const std::string ps = jl["pad"].get<std::string>();
          if (ps == "same") same = true;
          else if (ps != "valid") fail(where_ + ": \"pad\" must be an integer, [ph, pw], \"same\" or \"valid\"");
        } else {
          p = get_pair(jl, "pad", 0, false, true);
        }
        if (const std::string bad = size_problem("weights kh x kw x (cin / groups) x cout", {k.first, k.second, x.s.c / g, f});
            !bad.empty())
          fail(where_ + ": " + bad);
        y.c = f;
        y.h = same ? (x.s.h + s.first - 1) / s.first : window_out(x.s.h, k.first, s.first, p.first, d.first, false);
        y.w = same ? (x.s.w + s.second - 1) / s.second : window_out(x.s.w, k.second, s.second, p.second, d.second, false);
        const bool bias = get_bool(jl, "bias", true);
        cost = conv_cost(k.first, k.second, x.s.c / g, f, static_cast<double>(N) * static_cast<double>(y.c * y.h * y.w),
                         bias);
      } else if (type == "pool") {
        l.kind = layer_kind::pool;
        const std::string op = jl.value("op", std::string("max"));
        if (op != "max" && op != "avg") fail(where_ + ": \"op\" must be \"max\" or \"avg\"");
        y.c = x.s.c;
        std::int64_t window = 0;
        if (get_bool(jl, "global", false)) {
          y.h = y.w = 1;
          window = x.s.h * x.s.w;
        } else {
          const auto k = get_pair(jl, "kernel", 0, true);
          const auto s = jl.contains("stride") ? get_pair(jl, "stride", 1, true) : k;
          const auto p = get_pair(jl, "pad", 0, false, true);
          const bool ceil = get_bool(jl, "ceil", false);
          y.h = window_out(x.s.h, k.first, s.first, p.first, 1, ceil);
          y.w = window_out(x.s.w, k.second, s.second, p.second, 1, ceil);
          if (const std::string bad = size_problem("pooling window kh x kw", {k.first, k.second}); !bad.empty())
            fail(where_ + ": " + bad);
          window = k.first * k.second;
          l.pool.kh = k.first;
          l.pool.kw = k.second;
          l.pool.sh = s.first;
          l.pool.sw = s.second;
          l.pool.ph = p.first;
          l.pool.pw = p.second;
        }
        l.pool.max = op == "max";
        l.pool.global = get_bool(jl, "global", false);
        if (l.pool.global) {
          l.pool.kh = x.s.h;
          l.pool.kw = x.s.w;
        }
        set_derivable(l.pool, x.s, y);
        cost = pool_cost(window, static_cast<double>(N) * static_cast<double>(y.c * y.h * y.w));
      } else if (type == "fc") {
        l.kind = layer_kind::fc;
        const std::int64_t units = get_int(jl, "units", 0, true);
        if (units < 1) fail(where_ + ": \"units\" must be >= 1");
        const bool bias = get_bool(jl, "bias", true);
        const std::int64_t in = x.s.c * x.s.h * x.s.w;  // <= 2^48: every tensor is checked
        if (const std::string bad = size_problem("weights in x units", {in, units}); !bad.empty()) fail(where_ + ": " + bad);
        y = chw{units, 1, 1};
        cost = fc_cost(in, units, N, bias);
      } else if (type == "add") {
        l.kind = layer_kind::eltwise;
        y = x.s;
        for (std::size_t i = 1; i < inputs.size(); ++i) {
          const chw& o = tensors_.at(inputs[i]).s;
          if (o.c != y.c || o.h != y.h || o.w != y.w)
            fail(where_ + ": input \"" + inputs[i] + "\" is " + chw_str(o) + ", expected " + chw_str(y) +
                 " like \"" + inputs[0] + "\"");
        }
        cost = add_cost(inputs.size(), static_cast<double>(N) * static_cast<double>(y.c * y.h * y.w));
        // Every input is read once.
        const auto all_c = static_cast<std::int64_t>(mul_capped(static_cast<std::uint64_t>(x.s.c), inputs.size()));
        if (const std::string bad = size_problem("inputs together N x C x H x W", {N, all_c, x.s.h, x.s.w}); !bad.empty())
          fail(where_ + ": " + bad);
        l.input = tensor_shape{N, all_c, x.s.h, x.s.w};
      } else if (type == "concat") {
        is_layer = false;
        y = chw{0, x.s.h, x.s.w};
        for (const auto& in : inputs) {
          const chw& o = tensors_.at(in).s;
          if (o.h != y.h || o.w != y.w)
            fail(where_ + ": input \"" + in + "\" is " + chw_str(o) + ", expected spatial size " +
                 std::to_string(y.h) + "x" + std::to_string(y.w) + " like \"" + inputs[0] + "\"");
          y.c += o.c;
          if (y.c > max_hyper)  // each input's C <= 2^48: the sum cannot wrap before this
            fail(where_ + ": the inputs have more than 2^48 channels together; expected at most 2^48");
        }
      } else if (type == "relu" || type == "lrn" || type == "bn" || type == "dropout") {
        is_layer = false;
        y = x.s;
        if (type == "relu") {
          if (x.layer < 0) fail(where_ + ": a relu entry must follow a conv, pool, fc or add layer");
          net.layers[static_cast<std::size_t>(x.layer)].relu = true;
        }
        if (x.layer >= 0) net.layers[static_cast<std::size_t>(x.layer)].fused.push_back(name);
        tensors_[name] = {y, x.layer, x.parts};
        prev = name;
        continue;
      } else {
        fail(where_ + ": unknown type (expected conv, pool, fc, add, concat, relu, lrn, bn or dropout)");
      }
      if (const std::string bad = size_problem("output N x C x H x W", {N, y.c, y.h, y.w}); !bad.empty())
        fail(where_ + ": " + bad);
      if (!is_layer) {  // concat: its inputs' parts, in channel order
        std::vector<std::string> parts;
        for (const auto& in : inputs) {
          const auto& p = tensors_.at(in).parts;
          parts.insert(parts.end(), p.begin(), p.end());
        }
        tensors_[name] = {y, -1, std::move(parts)};
        prev = name;
        continue;
      }
      l.output = tensor_shape{N, y.c, y.h, y.w};
      set_cost(l, cost);
      for (const auto& in : inputs) {
        const auto& parts = tensors_.at(in).parts;
        l.input_keys.insert(l.input_keys.end(), parts.begin(), parts.end());
      }
      // Two layers with one activation key would share one tensor of a real .npz (and one
      // density of a profile): the second layer's data would be the first's.
      if (auto k = keys_.emplace(l.output_key, where_); !k.second)
        fail(where_ + ": activation key \"" + l.output_key + "\" is already the key of " + k.first->second +
             "; expected each layer's key (\"key\", default its name) once");
      tensors_[name] = {y, static_cast<int>(net.layers.size()), {l.output_key}};
      net.layers.push_back(std::move(l));
      prev = name;
    }
    if (net.layers.empty()) fail("no conv, pool, fc or add layers");
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
      if (i == 0) {
        net.layers[i].offload_key = "";
        net.layers[i].offload = tensor_shape{N, image.c, image.h, image.w};
      } else {
        net.layers[i].offload_key = net.layers[i - 1].output_key;
        net.layers[i].offload = net.layers[i - 1].output;
      }
    }
    if (const std::string bad = total_problem(net); !bad.empty()) fail(bad);
    return net;
  }

 private:
  struct tensor_ref {
    chw s;
    int layer = -1;  // index of the vDNN layer that produced it, -1: none
    std::vector<std::string> parts;  // the stored tensors it is (layer::input_keys)
  };

  [[noreturn]] void fail(const std::string& msg) const {
    throw network_error("layer file " + path_ + ": " + msg);
  }
  static std::string chw_str(const chw& s) {
    return std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w);
  }
  void check_keys(const json& jl, const std::string& type) const {
    static const std::map<std::string, std::vector<std::string>> allowed = {
        {"conv", {"filters", "kernel", "stride", "pad", "dilation", "groups", "bias", "relu"}},
        {"pool", {"op", "kernel", "stride", "pad", "ceil", "global", "relu"}},
        {"fc", {"units", "bias", "relu"}},
        {"add", {"relu"}},
        {"concat", {"axis"}},
        {"relu", {}}, {"lrn", {"size", "alpha", "beta", "k"}}, {"bn", {}}, {"dropout", {"rate"}}};
    auto it = allowed.find(type);
    if (it == allowed.end()) return;  // reported by the caller
    for (auto kv = jl.begin(); kv != jl.end(); ++kv) {
      const std::string& k = kv.key();
      if (k == "name" || k == "type" || k == "inputs" || k == "key" || k == "comment") continue;
      if (std::find(it->second.begin(), it->second.end(), k) == it->second.end())
        fail(where_ + ": unknown key \"" + k + "\" for type " + type);
    }
    if (type == "concat" && jl.contains("axis") && !(jl["axis"] == 1))
      fail(where_ + ": \"axis\" must be 1 (channels, NCHW)");
  }
  bool get_bool(const json& jl, const char* key, bool dflt) const {
    if (!jl.contains(key)) return dflt;
    if (!jl[key].is_boolean()) fail(where_ + ": \"" + key + "\" must be true or false");
    return jl[key].get<bool>();
  }
  std::int64_t get_int(const json& jl, const char* key, std::int64_t dflt, bool required) const {
    if (!jl.contains(key)) {
      if (required) fail(where_ + ": \"" + key + "\" is missing");
      return dflt;
    }
    if (!jl[key].is_number_integer()) fail(where_ + ": \"" + key + "\" must be an integer");
    if (jl[key].get<std::int64_t>() > max_hyper)
      fail(where_ + ": \"" + key + "\" = " + std::to_string(jl[key].get<std::int64_t>()) +
           " is more than 2^48; expected at most 2^48 = " + std::to_string(max_hyper));
    return jl[key].get<std::int64_t>();
  }
  /// `hi`: the largest value (max_hyper; a dilation may be larger: its window is computed in
  /// 128 bits and only compared with the input).
  std::pair<std::int64_t, std::int64_t> get_pair(const json& jl, const char* key, std::int64_t dflt, bool required,
                                                 bool zero_ok = false, std::int64_t hi = max_hyper) const {
    if (!jl.contains(key)) {
      if (required) fail(where_ + ": \"" + key + "\" is missing (expected n or [h, w])");
      return {dflt, dflt};
    }
    const json& v = jl[key];
    const std::int64_t lo = zero_ok ? 0 : 1;
    auto ok = [lo, hi](const json& e) {
      return e.is_number_integer() && e.get<std::int64_t>() >= lo && e.get<std::int64_t>() <= hi;
    };
    if (ok(v)) return {v.get<std::int64_t>(), v.get<std::int64_t>()};
    if (v.is_array() && v.size() == 2 && ok(v[0]) && ok(v[1])) return {v[0].get<std::int64_t>(), v[1].get<std::int64_t>()};
    fail(where_ + ": \"" + key + "\" must be n or [h, w] of integers " + std::to_string(lo) + " .. " +
         (hi == max_hyper ? "2^48 (" + std::to_string(max_hyper) + ")" : std::to_string(hi)));
  }
  /// Caffe / PyTorch rule: floor((in + 2p - d(k-1) - 1) / s) + 1; with ceil, ceil(...) + 1 and
  /// the last window must start inside the input or left padding.
  std::int64_t window_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d,
                          bool ceil) const {
    const __int128 span128 = static_cast<__int128>(in) + 2 * static_cast<__int128>(p) -
                             static_cast<__int128>(d) * (k - 1) - 1;  // 128 bits: a huge dilation cannot wrap
    if (span128 < 0)
      fail(where_ + ": " + window_text(k, d) + " does not fit input length " + std::to_string(in) +
           " with padding " + std::to_string(p));
    const std::int64_t span = static_cast<std::int64_t>(span128);
    std::int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
    if (ceil && p > 0 && (out - 1) * s >= in + p) --out;
    return out;
  }

  std::string path_;
  int batch_;
  std::string where_;
  std::map<std::string, tensor_ref> tensors_;
  std::map<std::string, std::string> keys_;  // activation key -> the entry that has it
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

network load_layer_file(const std::string& path, int batch) { return layer_file_loader(path, batch).load(); }

std::string networks_dir() { return std::string(CDMA_WORKLOADS_DATA_DIR) + "/../networks"; }

std::set<std::string> conv_input_keys(const network& net) {
  std::set<std::string> keys;
  for (const auto& l : net.layers)
    if (l.kind == layer_kind::conv) keys.insert(l.input_keys.begin(), l.input_keys.end());
  return keys;
}

std::vector<tensor_uses> tensor_use_layers(const network& net) {
  const std::size_t n = net.layers.size();
  std::vector<tensor_uses> u(n);
  std::map<std::string, std::size_t> tensor_of;  // offload_key -> i (X_i)
  for (std::size_t i = 0; i < n; ++i) {
    u[i].first = u[i].last = i;  // no consumer listed: the layer after the producer
    tensor_of.emplace(net.layers[i].offload_key, i);
  }
  std::vector<bool> seen(n, false);
  for (std::size_t j = 0; j < n; ++j)
    for (const std::string& key : net.layers[j].input_keys) {
      const auto it = tensor_of.find(key);
      if (it == tensor_of.end()) continue;
      tensor_uses& t = u[it->second];
      if (!seen[it->second]) t.first = t.last = j;
      seen[it->second] = true;
      t.first = std::min(t.first, j);
      t.last = std::max(t.last, j);
    }
  return u;
}

const layer* fused_into(const network& net, const std::string& name) {
  for (const layer& l : net.layers)
    if (std::find(l.fused.begin(), l.fused.end(), name) != l.fused.end()) return &l;
  return nullptr;
}

std::uint64_t relu_output_elements(const network& net) {
  std::uint64_t n = 0;
  for (const auto& l : net.layers)
    if (l.relu) n += l.output.elements();
  return n;
}

network mobilenet_v2(int batch) {
  network net = load_keras_graph(CDMA_WORKLOADS_DATA_DIR "/mobilenet_v2/mobilenet_v2.keras-graph.json", batch);
  net.name = "mobilenet_v2";
  return net;
}

std::vector<std::string> known_networks() {
  return {"alexnet", "overfeat", "nin", "vgg16", "squeezenet", "googlenet", "resnet50", "mobilenet_v2",
          "inception_v3", "fmnist_cnn", "synthetic", "vgg-16", "vgg", "squeezenet1_0", "resnet-50",
          "mobilenetv2", "inceptionv3", "PATH.json"};
}

network make_network(const std::string& name, int batch) {
  const std::string n = lower(name);
  if (ends_with(n, ".json")) {
    std::ifstream in;
    if (const io::input_problem p = io::open_input(in, name))
      throw network_error("network file " + name + ": " + p.text() +
                          " (expected a cdma-vp layer file or a Keras graph JSON file)");
    json head;
    try {
      head = io::strict_json(in);
    } catch (const io::duplicate_key& e) {
      throw network_error("network file " + name + ": " + e.what());
    } catch (const json::exception& e) {
      throw network_error("network file " + name + ": malformed JSON (" + e.what() + ")");
    } catch (const std::ios_base::failure& e) {
      throw network_error("network file " + name + ": read error (" + e.what() + ")");
    }
    return head.is_object() && head.contains("input") ? load_layer_file(name, batch) : load_keras_graph(name, batch);
  }
  if (n == "inception_v3" || n == "inceptionv3") return inception_v3(batch);
  if (n == "mobilenet_v2" || n == "mobilenetv2") return mobilenet_v2(batch);
  if (n == "synthetic") return synthetic_chain(batch, 4, 16, 32);
  static const std::map<std::string, std::string> zoo = {
      {"alexnet", "alexnet"}, {"overfeat", "overfeat"}, {"nin", "nin"}, {"vgg16", "vgg16"},
      {"vgg-16", "vgg16"}, {"vgg", "vgg16"}, {"squeezenet", "squeezenet"}, {"squeezenet1_0", "squeezenet"},
      {"googlenet", "googlenet"}, {"resnet50", "resnet50"}, {"resnet-50", "resnet50"},
      {"fmnist_cnn", "fmnist_cnn"}, {"fmnist", "fmnist_cnn"}};
  auto it = zoo.find(n);
  if (it != zoo.end()) return load_layer_file(networks_dir() + "/" + it->second + ".json", batch);
  std::string list;
  for (const auto& k : known_networks()) list += (list.empty() ? "" : ", ") + k;
  throw network_error("unknown network \"" + name + "\" (known: " + list + ")");
}

}  // namespace cdma::workloads
