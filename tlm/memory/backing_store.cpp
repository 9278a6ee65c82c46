#include "tlm/memory/backing_store.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace cdma::mem {

backing_store::backing_store(std::uint64_t size_bytes, std::size_t page_bytes)
    : size_(size_bytes), page_bytes_(page_bytes) {
  if (page_bytes == 0) throw std::invalid_argument("backing_store: page_bytes must be > 0");
}

void backing_store::check_range(const char* what, std::uint64_t addr, std::uint64_t len) const {
  if (contains(addr, len)) return;
  std::ostringstream os;
  os << "backing_store::" << what << ": range [0x" << std::hex << addr << ", +0x" << len
     << ") exceeds the store size 0x" << size_ << std::dec << " (" << size_ << " bytes)";
  throw std::out_of_range(os.str());
}

std::uint8_t* backing_store::page_for_write(std::uint64_t page_index) {
  auto& p = pages_[page_index];
  if (!p) p.reset(new std::uint8_t[page_bytes_]());  // value-initialised: zeros
  return p.get();
}

void backing_store::read(std::uint64_t addr, std::uint8_t* dst, std::size_t len) const {
  check_range("read", addr, len);
  while (len > 0) {
    const std::uint64_t index = addr / page_bytes_;
    const std::size_t offset = static_cast<std::size_t>(addr % page_bytes_);
    const std::size_t n = std::min(len, page_bytes_ - offset);
    auto it = pages_.find(index);
    if (it == pages_.end())
      std::memset(dst, 0, n);
    else
      std::memcpy(dst, it->second.get() + offset, n);
    addr += n;
    dst += n;
    len -= n;
  }
}

void backing_store::write(std::uint64_t addr, const std::uint8_t* src, std::size_t len) {
  check_range("write", addr, len);
  while (len > 0) {
    const std::size_t offset = static_cast<std::size_t>(addr % page_bytes_);
    const std::size_t n = std::min(len, page_bytes_ - offset);
    std::memcpy(page_for_write(addr / page_bytes_) + offset, src, n);
    addr += n;
    src += n;
    len -= n;
  }
}

void backing_store::discard(std::uint64_t addr, std::uint64_t len) {
  check_range("discard", addr, len);
  while (len > 0) {
    const std::uint64_t index = addr / page_bytes_;
    const std::uint64_t offset = addr % page_bytes_;
    const std::uint64_t n = std::min<std::uint64_t>(len, page_bytes_ - offset);
    auto it = pages_.find(index);
    if (it != pages_.end()) {
      if (n == page_bytes_)
        pages_.erase(it);
      else
        std::memset(it->second.get() + offset, 0, static_cast<std::size_t>(n));
    }
    addr += n;
    len -= n;
  }
}

std::uint8_t* backing_store::page_pointer(std::uint64_t addr) {
  if (addr >= size_) check_range("page_pointer", addr, 1);
  return page_for_write(addr / page_bytes_);
}

}  // namespace cdma::mem
