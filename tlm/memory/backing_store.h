// Sparse, paged byte store behind every memory model. Pure C++ (no SystemC).
//
// The address space [0, size) is cut into pages of `page_bytes`; a page is allocated (zeroed)
// the first time it is written or a pointer into it is requested, so host memory of 64 GiB
// costs only the pages a simulation touches. Reads of untouched pages return zeros.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace cdma::mem {

class backing_store {
public:
  /// `size_bytes`: addressable bytes; `page_bytes`: allocation granule in bytes (> 0).
  /// Throws std::invalid_argument if page_bytes is 0.
  explicit backing_store(std::uint64_t size_bytes, std::size_t page_bytes = 64 * 1024);

  /// Addressable size in bytes.
  std::uint64_t size() const { return size_; }
  /// Allocation granule in bytes.
  std::size_t page_bytes() const { return page_bytes_; }

  /// True iff [addr, addr+len) lies inside [0, size()) (no overflow).
  bool contains(std::uint64_t addr, std::uint64_t len) const {
    return addr <= size_ && len <= size_ - addr;
  }

  /// Copies `len` bytes at `addr` into `dst`; untouched bytes read as 0.
  /// Throws std::out_of_range naming the address if the range exceeds size().
  void read(std::uint64_t addr, std::uint8_t* dst, std::size_t len) const;
  /// Copies `len` bytes from `src` to `addr`, allocating pages as needed.
  /// Throws std::out_of_range naming the address if the range exceeds size().
  void write(std::uint64_t addr, const std::uint8_t* src, std::size_t len);
  /// Forgets [addr, addr+len): pages wholly inside are freed, the parts of partially covered
  /// pages are zeroed. Reads of the range return zeros afterwards. Throws std::out_of_range.
  void discard(std::uint64_t addr, std::uint64_t len);

  /// Bytes allocated: pages resident x page_bytes().
  std::uint64_t resident_bytes() const {
    return static_cast<std::uint64_t>(pages_.size()) * page_bytes_;
  }

  /// Pointer to the first byte of the page containing `addr`, allocating the page (for DMI).
  /// The pointer stays valid until the page is freed by discard() or the store is destroyed.
  /// The page always has page_bytes() bytes, even the last one of a size that is not a
  /// multiple of the page size. Throws std::out_of_range if addr >= size().
  std::uint8_t* page_pointer(std::uint64_t addr);

private:
  std::uint8_t* page_for_write(std::uint64_t page_index);
  void check_range(const char* what, std::uint64_t addr, std::uint64_t len) const;

  std::uint64_t size_;
  std::size_t page_bytes_;
  std::unordered_map<std::uint64_t, std::unique_ptr<std::uint8_t[]>> pages_;
};

}  // namespace cdma::mem
