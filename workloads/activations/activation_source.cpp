#include "workloads/activations/activation_source.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace cdma::workloads {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t hash_key(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// Calls gen(element_index) -> uint32 bit pattern for every element overlapping
/// [offset, offset + len) and copies the wanted bytes (ranges need not be element aligned).
template <typename Gen>
void fill_elements(std::uint64_t offset, std::uint8_t* out, std::size_t len, Gen gen) {
  std::uint64_t pos = offset;
  const std::uint64_t end = offset + len;
  while (pos < end) {
    const std::uint64_t e = pos / 4;
    const std::uint32_t v = gen(e);
    std::uint8_t b[4];
    std::memcpy(b, &v, 4);  // little-endian host assumed (x86-64, ARM64)
    const std::size_t first = static_cast<std::size_t>(pos % 4);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(4 - first, end - pos));
    std::memcpy(out + (pos - offset), b + first, n);
    pos += n;
  }
}

std::uint32_t float_bits(float f) {
  std::uint32_t v;
  std::memcpy(&v, &f, 4);
  return v;
}

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::ostringstream o;
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? "x" : "") << s[i];
  return o.str();
}

}  // namespace

void fill_input_image(std::uint64_t seed, std::uint64_t offset, std::uint8_t* out, std::size_t len) {
  const std::uint64_t s = splitmix64(seed ^ 0x1A2B3C4Dull);
  fill_elements(offset, out, len, [s](std::uint64_t e) {
    const std::uint64_t h = splitmix64(s + e);
    // 8-bit pixel / 256 + 1/256: in [1/256, 1], never zero, like a normalised photo.
    return float_bits(static_cast<float>((h & 0xFF) + 1) / 256.0f);
  });
}

// ---- npz ---------------------------------------------------------------------------------

npz_activation_source::npz_activation_source(const std::string& path, std::uint64_t cache_limit)
    : path_(path), cache_limit_(cache_limit), archive_(std::make_unique<npz_archive>(path)) {
  if (archive_->keys().empty())
    throw activation_error(path + ": the archive holds no .npy members; expected one NCHW "
                                  "float32 tensor per layer output");
}

const npz_activation_source::tensor& npz_activation_source::load(const std::string& key) {
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  if (!archive_->contains(key))
    throw activation_error(path_ + ": no member '" + key + ".npy' for this layer");
  npy_array a = archive_->read(key);
  if (a.descr != "<f4" && a.descr != "=f4" && a.descr != ">f4")
    throw activation_error(path_ + ":" + key + ": dtype " + a.descr +
                           " is not supported; expected float32 ('<f4')");
  if (a.shape.size() != 4 && a.shape.size() != 2)
    throw activation_error(path_ + ":" + key + ": shape " + shape_str(a.shape) +
                           " is not NCHW; expected 4 dimensions (or N x C for fully connected)");
  if (cached_bytes_ + a.data.size() > cache_limit_) {
    cache_.clear();
    cached_bytes_ = 0;
  }
  cached_bytes_ += a.data.size();
  tensor t{a.shape, std::move(a.data)};
  return cache_.emplace(key, std::move(t)).first->second;
}

void npz_activation_source::validate(const network& net) const {
  auto* self = const_cast<npz_activation_source*>(this);
  for (const layer& l : net.layers) {
    if (l.offload_key.empty()) continue;
    if (!archive_->contains(l.offload_key))
      throw activation_error(path_ + ": layer '" + l.name + "' offloads tensor '" + l.offload_key +
                             "', which the archive does not hold");
    const tensor& t = self->load(l.offload_key);
    std::int64_t c = t.shape[1], h = 1, w = 1;
    if (t.shape.size() == 4) { h = t.shape[2]; w = t.shape[3]; }
    if (c != l.offload.c || h != l.offload.h || w != l.offload.w)
      throw activation_error(path_ + ": tensor '" + l.offload_key + "' has shape " +
                             shape_str(t.shape) + " but layer '" + l.name + "' expects N x " +
                             std::to_string(l.offload.c) + "x" + std::to_string(l.offload.h) +
                             "x" + std::to_string(l.offload.w));
    self->images_ = static_cast<int>(t.shape[0]);
  }
}

void npz_activation_source::fill(const std::string& key, const tensor_shape& shape,
                                 std::uint64_t offset, std::uint8_t* out, std::size_t len) {
  if (key.empty()) return fill_input_image(0, offset, out, len);
  const tensor& t = load(key);
  const std::uint64_t per_image = static_cast<std::uint64_t>(shape.c) * shape.h * shape.w * 4;
  const std::uint64_t images = static_cast<std::uint64_t>(t.shape[0]);
  if (per_image * images != t.data.size())
    throw activation_error(path_ + ":" + key + ": tensor holds " + std::to_string(t.data.size()) +
                           " bytes, expected " + std::to_string(images) + " images of " +
                           std::to_string(per_image) + " bytes (shape " + shape.str() + ")");
  std::uint64_t pos = offset;
  const std::uint64_t end = offset + len;
  while (pos < end) {
    const std::uint64_t img = (pos / per_image) % images;
    const std::uint64_t in = pos % per_image;
    const std::uint64_t n = std::min(per_image - in, end - pos);
    std::memcpy(out + (pos - offset), t.data.data() + img * per_image + in, n);
    pos += n;
  }
}

std::string npz_activation_source::describe(const network& net) const {
  std::ostringstream o;
  const auto slash = path_.find_last_of('/');
  o << "real: " << (slash == std::string::npos ? path_ : path_.substr(slash + 1)) << " ("
    << images_ << (images_ == 1 ? " image" : " images");
  if (net.batch > images_) o << " repeated to batch " << net.batch;
  o << "); the network input image is synthetic (dense)";
  return o.str();
}

// ---- synthetic --------------------------------------------------------------------------

synthetic_activation_source::synthetic_activation_source(double density, std::uint64_t seed)
    : density_(density), seed_(seed) {
  if (!(density >= 0.0 && density <= 1.0))
    throw activation_error("synthetic density " + std::to_string(density) +
                           " is out of range; expected a fraction of nonzero elements in [0, 1]");
}

void synthetic_activation_source::fill(const std::string& key, const tensor_shape&,
                                       std::uint64_t offset, std::uint8_t* out, std::size_t len) {
  if (key.empty()) return fill_input_image(seed_, offset, out, len);
  const std::uint64_t s = splitmix64(seed_ ^ hash_key(key));
  const auto threshold = static_cast<std::uint64_t>(density_ * 9007199254740992.0);  // 2^53
  fill_elements(offset, out, len, [s, threshold](std::uint64_t e) -> std::uint32_t {
    const std::uint64_t h = splitmix64(s + e);
    if ((h >> 11) >= threshold) return 0;
    return float_bits(static_cast<float>((h & 0xFFFF) + 1) / 8192.0f);  // (0, 8]
  });
}

std::string synthetic_activation_source::describe(const network&) const {
  std::ostringstream o;
  o << "synthetic: density " << density_ << " (uniform zeros), seed " << seed_;
  return o.str();
}

}  // namespace cdma::workloads
