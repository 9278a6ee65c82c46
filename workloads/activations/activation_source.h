// Activation sources: where the bytes of each offloaded tensor come from. Data is produced
// on demand for any byte range, so a tensor never has to be held whole and the bytes a
// prefetch brings back can be regenerated and compared.
//
// Tensors are fp32, NCHW, little-endian. The network's input image (offload key "") is
// always synthetic: dense values in [0, 1) like a normalised photo.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
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
  /// One line for reports, e.g. "real: chelsea.npz (1 image repeated to batch 32)".
  virtual std::string describe(const network& net) const = 0;
  /// Distinct images behind each batch (1 for a single-photo .npz).
  virtual int distinct_images() const = 0;
};

/// Deterministic dense synthetic image bytes (input of layer 0): element e of the tensor is
/// a float in [1/256, 1) derived from a hash of (seed, e). Shared by all sources.
void fill_input_image(std::uint64_t seed, std::uint64_t offset, std::uint8_t* out, std::size_t len);

/// Real activations from a .npz archive (numpy.savez[_compressed]) whose members are named
/// after the layers' output keys, each [images, C, H, W] float32. A batch of N is formed by
/// repeating the images (image n of the batch is image n mod images).
class npz_activation_source : public activation_source {
public:
  /// Throws npy_error (file unreadable / not a zip) naming the path.
  explicit npz_activation_source(const std::string& path, std::uint64_t cache_limit_bytes = 1ull << 30);
  void fill(const std::string& key, const tensor_shape& shape, std::uint64_t offset,
            std::uint8_t* out, std::size_t len) override;
  void validate(const network& net) const override;
  std::string describe(const network& net) const override;
  int distinct_images() const override { return images_; }

private:
  struct tensor { std::vector<std::int64_t> shape; std::vector<std::uint8_t> data; };
  const tensor& load(const std::string& key);
  std::string path_;
  std::uint64_t cache_limit_;
  std::uint64_t cached_bytes_ = 0;
  int images_ = 1;
  std::unique_ptr<npz_archive> archive_;
  std::map<std::string, tensor> cache_;
};

/// Synthetic activations: every element is zero with probability 1 - density, independently
/// (uniform zeros), else a positive float. Bytes depend only on (seed, key, element index).
class synthetic_activation_source : public activation_source {
public:
  /// density in [0, 1]: fraction of nonzero elements. Throws activation_error otherwise.
  explicit synthetic_activation_source(double density, std::uint64_t seed = 1);
  void fill(const std::string& key, const tensor_shape& shape, std::uint64_t offset,
            std::uint8_t* out, std::size_t len) override;
  void validate(const network&) const override {}
  std::string describe(const network& net) const override;
  int distinct_images() const override { return 0; }

private:
  double density_;
  std::uint64_t seed_;
};

}  // namespace cdma::workloads
