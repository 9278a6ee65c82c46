#include "workloads/vdnn/tensor_check.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace cdma::workloads {

namespace {
std::uint64_t checksum(const std::uint8_t* p, std::size_t n) {
  const std::uint64_t h = XXH3_64bits(p, n);
  return h ? h : 1;  // 0 marks "not recorded"
}

std::uint64_t count_zero_words(const std::uint8_t* p, std::size_t n) {
  std::uint64_t z = 0;
  for (std::size_t k = 0; k + 4 <= n; k += 4) {
    std::uint32_t v;
    std::memcpy(&v, p + k, 4);
    z += (v == 0);
  }
  return z;
}
}  // namespace

tensor_record::tensor_record(activation_source& source, std::string key, tensor_shape shape)
    : source_(source), key_(std::move(key)), shape_(shape), bytes_(shape.elements() * 4) {
  const std::uint64_t n = (bytes_ + granule_bytes - 1) / granule_bytes;
  hash_.assign(static_cast<std::size_t>(n), 0);
  written_.assign(static_cast<std::size_t>(n), false);
}

void tensor_record::check_range(const char* what, std::uint64_t offset, std::size_t len) const {
  if (offset <= bytes_ && len <= bytes_ - offset) return;
  std::ostringstream m;
  m << what << " of " << len << " bytes at offset " << offset << " is outside activation tensor '" << key_
    << "' (" << bytes_ << " bytes)";
  throw mem::region_error(m.str());
}

std::uint64_t tensor_record::granule_len(std::uint64_t g) const {
  return std::min<std::uint64_t>(granule_bytes, bytes_ - g * granule_bytes);
}

void tensor_record::load_chunk(std::uint64_t c) {
  const std::uint64_t off = c * chunk_bytes_;
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes_, bytes_ - off));
  chunk_.resize(chunk_bytes_);
  source_.fill(key_, shape_, off, chunk_.data(), n);
  for (std::size_t k = 0; k < n; k += granule_bytes) {
    const std::uint64_t g = (off + k) / granule_bytes;
    if (hash_[g]) continue;
    const std::size_t len = std::min(granule_bytes, n - k);
    hash_[g] = checksum(chunk_.data() + k, len);
    zeros_ += count_zero_words(chunk_.data() + k, len);
    produced_bytes_ += len;
  }
  chunk_index_ = c;
}

void tensor_record::produce(std::uint64_t offset, std::uint8_t* dst, std::size_t len) {
  check_range("read", offset, len);
  while (len > 0) {
    const std::uint64_t c = offset / chunk_bytes_;
    if (c != chunk_index_) load_chunk(c);
    const std::size_t in = static_cast<std::size_t>(offset % chunk_bytes_);
    const std::size_t n = std::min<std::size_t>(len, std::min<std::uint64_t>(chunk_bytes_ - in, bytes_ - offset));
    std::memcpy(dst, chunk_.data() + in, n);
    offset += n;
    dst += n;
    len -= n;
  }
}

void tensor_record::regenerate(std::uint64_t g, std::uint8_t* out) {
  source_.fill(key_, shape_, g * granule_bytes, out, static_cast<std::size_t>(granule_len(g)));
}

void tensor_record::check_granule(std::uint64_t g, const std::uint8_t* data) {
  const std::size_t len = static_cast<std::size_t>(granule_len(g));
  written_[g] = true;
  std::uint64_t expected = hash_[g];
  const bool recorded = expected != 0;
  if (!recorded || checksum(data, len) != expected) {
    // Never produced (e.g. the offload failed before reaching it) or a checksum mismatch:
    // compare byte by byte with the regenerated granule.
    scratch_.resize(granule_bytes);
    regenerate(g, scratch_.data());
    std::uint64_t diff = 0;
    if (std::memcmp(scratch_.data(), data, len) != 0)
      for (std::size_t k = 0; k < len; ++k) diff += (scratch_[k] != data[k]);
    if (diff) {
      bad_[g] = diff;
      return;
    }
  }
  bad_.erase(g);
}

void tensor_record::check(std::uint64_t offset, const std::uint8_t* src, std::size_t len) {
  check_range("write", offset, len);
  while (len > 0) {
    const std::uint64_t g = offset / granule_bytes;
    const std::size_t in = static_cast<std::size_t>(offset % granule_bytes);
    const std::size_t glen = static_cast<std::size_t>(granule_len(g));
    const std::size_t n = std::min(len, glen - in);
    if (in == 0 && n == glen && !partial_.count(g)) {
      check_granule(g, src);  // the common case: one write per window
    } else {
      partial& p = partial_[g];
      if (p.data.empty()) {
        p.data.assign(glen, 0);
        p.have.assign(glen, false);
      }
      std::memcpy(p.data.data() + in, src, n);
      for (std::size_t k = in; k < in + n; ++k)
        if (!p.have[k]) {
          p.have[k] = true;
          ++p.count;
        }
      if (p.count == glen) {
        check_granule(g, p.data.data());
        partial_.erase(g);
      }
    }
    offset += n;
    src += n;
    len -= n;
  }
}

std::uint64_t tensor_record::unwritten_bytes() const {
  std::uint64_t n = 0;
  for (std::uint64_t g = 0; g < written_.size(); ++g)
    if (!written_[g]) n += granule_len(g);
  return n;
}

std::uint64_t tensor_record::mismatched_bytes() const {
  std::uint64_t n = unwritten_bytes();
  for (const auto& [g, d] : bad_) n += d;
  // Bytes of incomplete partial granules that were written still count as unwritten (the
  // granule as a whole was never completed).
  return n;
}

void tensor_source_region::write(std::uint64_t offset, const std::uint8_t*, std::size_t len) {
  std::ostringstream m;
  m << "write of " << len << " bytes at offset " << offset << " into activation tensor '"
    << r_->key() << "', which is read-only while it is being offloaded";
  throw mem::region_error(m.str());
}

}  // namespace cdma::workloads
