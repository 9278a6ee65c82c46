// A small set of unique 64-bit keys kept in ascending order in a fixed-capacity array: the
// DRAM scheduler keeps, per candidate command type, the banks whose candidate has that type
// in age order (the key carries the age above the bank index, see channel.h), so a pick can
// walk them oldest first and stop at the first bank that can issue at the type's channel-wide
// bound. Insertion and erasure shift at most size() entries (size <= banks per channel, 16 in
// every preset). Pure C++.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace cdma::dram {

class key_order {
public:
  explicit key_order(std::size_t capacity = 0) : k_(capacity) {}

  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  std::size_t capacity() const { return k_.size(); }
  /// The i-th smallest key (i < size()).
  std::uint64_t operator[](std::size_t i) const { return k_[i]; }
  const std::uint64_t* begin() const { return k_.data(); }
  const std::uint64_t* end() const { return k_.data() + n_; }

  /// Inserts `key` (not present) at its place in the order. Throws std::logic_error when the
  /// set is full or the key is already present.
  void insert(std::uint64_t key) {
    if (n_ == k_.size()) throw std::logic_error("key_order::insert: full");
    std::size_t i = n_;
    while (i > 0 && k_[i - 1] > key) {
      k_[i] = k_[i - 1];
      --i;
    }
    if (i > 0 && k_[i - 1] == key) {  // undo the shift, refuse the duplicate
      for (std::size_t j = i; j < n_; ++j) k_[j] = k_[j + 1];
      throw std::logic_error("key_order::insert: key already present");
    }
    k_[i] = key;
    ++n_;
  }
  /// Removes `key`; false (and no change) when it is not present.
  bool erase(std::uint64_t key) {
    std::size_t i = 0;
    while (i < n_ && k_[i] != key) ++i;
    if (i == n_) return false;
    for (--n_; i < n_; ++i) k_[i] = k_[i + 1];
    return true;
  }
  void clear() { n_ = 0; }

private:
  std::vector<std::uint64_t> k_;
  std::size_t n_ = 0;
};

}  // namespace cdma::dram
