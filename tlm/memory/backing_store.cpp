#include "tlm/memory/backing_store.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>
#include <stdexcept>

namespace cdma::mem {

backing_store::backing_store(std::uint64_t size_bytes, std::size_t page_bytes)
    : size_(size_bytes), page_bytes_(page_bytes) {
  if (page_bytes == 0) throw std::invalid_argument("backing_store: page_bytes must be > 0");
}

backing_store::backing_store(std::uint64_t size_bytes, std::size_t page_bytes,
                             const spill_options& spill)
    : backing_store(size_bytes, page_bytes) {
  std::string dir = spill.dir;
  if (dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    dir = (t && *t) ? t : "/tmp";
  }
  std::string path = dir + "/cdma-vp-store-XXXXXX";
  std::vector<char> buf(path.begin(), path.end());
  buf.push_back('\0');
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0)
    throw std::runtime_error("backing_store: cannot create a spill file in directory '" + dir +
                             "': " + std::strerror(errno) +
                             " (expected a writable directory; set host_mem.spill_dir)");
  spill_path_ = buf.data();
  ::unlink(buf.data());  // the file lives as long as the descriptor
  cache_pages_ = static_cast<std::size_t>(std::max<std::uint64_t>(1, spill.cache_bytes / page_bytes_));
  on_file_.assign(static_cast<std::size_t>((size_ + page_bytes_ - 1) / page_bytes_), false);
}

backing_store::~backing_store() {
  if (fd_ >= 0) ::close(fd_);
}

void backing_store::check_range(const char* what, std::uint64_t addr, std::uint64_t len) const {
  if (contains(addr, len)) return;
  std::ostringstream os;
  os << "backing_store::" << what << ": range [0x" << std::hex << addr << ", +0x" << len
     << ") exceeds the store size 0x" << size_ << std::dec << " (" << size_ << " bytes)";
  throw std::out_of_range(os.str());
}

// ---- pages ------------------------------------------------------------------------------------

detail::page_pool::~page_pool() {
  for (const auto& [addr, len] : arenas_) ::munmap(addr, len);
}

std::uint8_t* detail::page_pool::get(bool zeroed) {
  if (!free_.empty()) {
    std::uint8_t* p = free_.back();
    free_.pop_back();
    if (zeroed) std::memset(p, 0, page_bytes_);
    return p;
  }
  if (fresh_ == 0) {
    const std::size_t frames = std::max<std::size_t>(1, next_arena_bytes_ / page_bytes_);
    const std::size_t bytes = frames * page_bytes_;
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    arenas_.emplace_back(m, bytes);
    next_ = static_cast<std::uint8_t*>(m);
    fresh_ = frames;
    next_arena_bytes_ = std::min<std::size_t>(next_arena_bytes_ * 2, 64u << 20);
  }
  std::uint8_t* p = next_;  // fresh anonymous memory reads as zeros
  next_ += page_bytes_;
  --fresh_;
  return p;
}

void backing_store::page_io(bool write, std::uint64_t index, std::uint8_t* data) {
  const off_t off = static_cast<off_t>(index * page_bytes_);
  std::size_t done = 0;
  while (done < page_bytes_) {
    const ssize_t n = write ? ::pwrite(fd_, data + done, page_bytes_ - done, off + static_cast<off_t>(done))
                            : ::pread(fd_, data + done, page_bytes_ - done, off + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (write && n == 0)) {
      std::ostringstream os;
      os << "backing_store: " << (write ? "writing" : "reading") << " page 0x" << std::hex
         << index * page_bytes_ << " of the spill file " << spill_path_ << " (deleted) failed: "
         << std::strerror(errno)
         << " (the spill directory needs room for the offloaded bytes; set host_mem.spill_dir)";
      io_error_ = os.str();  // kept: SystemC wraps exceptions thrown in processes
      throw store_io_error(io_error_);
    }
    if (n == 0) {  // beyond the end of the file: zeros
      std::memset(data + done, 0, page_bytes_ - done);
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

backing_store::page* backing_store::find_page(std::uint64_t index) {
  auto it = pages_.find(index);
  if (it == pages_.end()) return nullptr;
  if (fd_ >= 0 && it->second.lru != lru_.begin()) lru_.splice(lru_.begin(), lru_, it->second.lru);
  return &it->second;
}

void backing_store::evict_if_full() {
  while (fd_ >= 0 && pages_.size() >= cache_pages_ && !lru_.empty()) {
    const std::uint64_t victim = lru_.back();
    auto it = pages_.find(victim);
    if (it->second.dirty) {
      page_io(true, victim, it->second.data.get());
      if (!on_file_[victim]) {
        on_file_[victim] = true;
        ++spilled_pages_;
      }
    }
    lru_.pop_back();
    pages_.erase(it);
  }
}

backing_store::page& backing_store::load_page(std::uint64_t index, bool whole_overwrite) {
  if (page* p = find_page(index)) return *p;
  evict_if_full();
  page pg;
  pg.data = std::unique_ptr<std::uint8_t[], detail::page_release>(nullptr, detail::page_release{&pool_});
  if (fd_ >= 0 && on_file_[index] && !whole_overwrite) {
    pg.data.reset(pool_.get(false));
    page_io(false, index, pg.data.get());
  } else {
    pg.data.reset(pool_.get(!whole_overwrite));  // zeros unless every byte is written next
  }
  if (fd_ >= 0) {
    lru_.push_front(index);
    pg.lru = lru_.begin();
  }
  return pages_.emplace(index, std::move(pg)).first->second;
}

void backing_store::read_pages(std::uint64_t addr, std::uint8_t* dst, std::size_t len) {
  while (len > 0) {
    const std::uint64_t index = addr / page_bytes_;
    const std::size_t offset = static_cast<std::size_t>(addr % page_bytes_);
    const std::size_t n = std::min(len, page_bytes_ - offset);
    if (const page* p = find_page(index))
      std::memcpy(dst, p->data.get() + offset, n);
    else if (fd_ >= 0 && on_file_[index])
      std::memcpy(dst, load_page(index, false).data.get() + offset, n);
    else
      std::memset(dst, 0, n);  // never written: zeros, nothing allocated
    addr += n;
    dst += n;
    len -= n;
  }
}

void backing_store::write_pages(std::uint64_t addr, const std::uint8_t* src, std::size_t len) {
  while (len > 0) {
    const std::uint64_t index = addr / page_bytes_;
    const std::size_t offset = static_cast<std::size_t>(addr % page_bytes_);
    const std::size_t n = std::min(len, page_bytes_ - offset);
    page& p = load_page(index, n == page_bytes_);
    std::memcpy(p.data.get() + offset, src, n);
    p.dirty = true;
    addr += n;
    src += n;
    len -= n;
  }
}

void backing_store::discard_pages(std::uint64_t addr, std::uint64_t len) {
  while (len > 0) {
    const std::uint64_t index = addr / page_bytes_;
    const std::uint64_t offset = addr % page_bytes_;
    const std::uint64_t n = std::min<std::uint64_t>(len, page_bytes_ - offset);
    if (n == page_bytes_) {
      auto it = pages_.find(index);
      if (it != pages_.end()) {
        if (fd_ >= 0) lru_.erase(it->second.lru);
        pages_.erase(it);
      }
      if (fd_ >= 0 && on_file_[index]) {
        // Give the disk blocks back; reads of a hole return zeros.
        (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                          static_cast<off_t>(index * page_bytes_), static_cast<off_t>(page_bytes_));
        on_file_[index] = false;
        --spilled_pages_;
      }
    } else if (find_page(index) || (fd_ >= 0 && on_file_[index])) {
      page& p = load_page(index, false);
      std::memset(p.data.get() + offset, 0, static_cast<std::size_t>(n));
      p.dirty = true;
    }
    addr += n;
    len -= n;
  }
}

// ---- regions ----------------------------------------------------------------------------------

template <typename OnRegion, typename OnPages>
void backing_store::segments(std::uint64_t addr, std::size_t len, OnRegion on_region, OnPages on_pages) {
  std::size_t done = 0;
  while (done < len) {
    const std::size_t left = len - done;
    auto it = regions_.upper_bound(addr);  // first region starting after addr
    if (it != regions_.begin()) {
      auto prev = std::prev(it);
      if (addr < prev->first + prev->second.len) {  // inside prev
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, prev->first + prev->second.len - addr));
        on_region(*prev->second.region, addr - prev->first, done, n);
        addr += n;
        done += n;
        continue;
      }
    }
    const std::size_t n = it == regions_.end()
                              ? left
                              : static_cast<std::size_t>(std::min<std::uint64_t>(left, it->first - addr));
    on_pages(addr, done, n);
    addr += n;
    done += n;
  }
}

void backing_store::read(std::uint64_t addr, std::uint8_t* dst, std::size_t len) {
  check_range("read", addr, len);
  if (regions_.empty()) return read_pages(addr, dst, len);
  segments(
      addr, len, [&](content_region& r, std::uint64_t off, std::size_t at, std::size_t n) { r.read(off, dst + at, n); },
      [&](std::uint64_t a, std::size_t at, std::size_t n) { read_pages(a, dst + at, n); });
}

void backing_store::write(std::uint64_t addr, const std::uint8_t* src, std::size_t len) {
  check_range("write", addr, len);
  if (regions_.empty()) return write_pages(addr, src, len);
  segments(
      addr, len, [&](content_region& r, std::uint64_t off, std::size_t at, std::size_t n) { r.write(off, src + at, n); },
      [&](std::uint64_t a, std::size_t at, std::size_t n) { write_pages(a, src + at, n); });
}

void backing_store::discard(std::uint64_t addr, std::uint64_t len) {
  check_range("discard", addr, len);
  discard_pages(addr, len);
}

bool backing_store::overlaps_region(std::uint64_t addr, std::uint64_t len) const {
  if (regions_.empty() || len == 0) return false;
  auto it = regions_.lower_bound(addr + len);  // first region starting at or after the end
  if (it == regions_.begin()) return false;
  --it;
  return it->first + it->second.len > addr;
}

void backing_store::map_region(std::uint64_t addr, std::uint64_t len,
                               std::shared_ptr<content_region> region) {
  check_range("map_region", addr, len);
  if (!region || len == 0)
    throw std::invalid_argument("backing_store::map_region: a region needs content and len > 0");
  if (overlaps_region(addr, len)) {
    std::ostringstream os;
    os << "backing_store::map_region: [0x" << std::hex << addr << ", +0x" << len
       << ") overlaps a region already mapped";
    throw std::invalid_argument(os.str());
  }
  discard_pages(addr, len);
  regions_.emplace(addr, region_entry{len, std::move(region)});
}

void backing_store::unmap_region(std::uint64_t addr) {
  auto it = regions_.find(addr);
  if (it == regions_.end()) {
    std::ostringstream os;
    os << "backing_store::unmap_region: no region starts at 0x" << std::hex << addr;
    throw std::invalid_argument(os.str());
  }
  regions_.erase(it);
}

bool backing_store::direct_access(std::uint64_t addr) const {
  if (fd_ >= 0 || addr >= size_) return false;
  const std::uint64_t start = addr - addr % page_bytes_;
  return !overlaps_region(start, page_bytes_);
}

std::uint8_t* backing_store::page_pointer(std::uint64_t addr) {
  if (addr >= size_) check_range("page_pointer", addr, 1);
  if (!direct_access(addr)) {
    std::ostringstream os;
    os << "backing_store::page_pointer: page of 0x" << std::hex << addr
       << " is not directly accessible (spill file or content region)";
    throw std::logic_error(os.str());
  }
  return load_page(addr / page_bytes_, false).data.get();
}

}  // namespace cdma::mem
