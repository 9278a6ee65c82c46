#include "tlm/memory/backing_store.h"
#include "tlm/core/prefetch.h"
#include "tlm/core/worker_thread.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>
#include <stdexcept>

namespace cdma::mem {

void backing_store::check_page_bytes(const std::string& field, std::size_t page_bytes) {
  if (page_bytes == 0 || page_bytes > kMaxPageBytes)
    throw std::invalid_argument(field + " = " + std::to_string(page_bytes) + ": expected 1 .. " +
                                std::to_string(kMaxPageBytes) + " bytes (1 GiB; default 65536)");
}

backing_store::backing_store(std::uint64_t size_bytes, std::size_t page_bytes)
    : size_(size_bytes), page_bytes_(page_bytes) {
  check_page_bytes("backing_store: page_bytes", page_bytes);
  if ((page_bytes & (page_bytes - 1)) == 0)
    for (page_shift_ = 0; (std::size_t{1} << page_shift_) < page_bytes;) ++page_shift_;
}

backing_store::backing_store(std::uint64_t size_bytes, std::size_t page_bytes,
                             const spill_options& spill)
    : backing_store(size_bytes, page_bytes) {
  std::string dir = spill.dir;
  std::string from;  // where the directory came from, for the message
  if (dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    dir = (t && *t) ? t : "/tmp";
    from = (t && *t) ? " ($TMPDIR)" : " (TMPDIR unset)";
  }
  std::string path = dir + "/cdma-vp-store-XXXXXX";
  std::vector<char> buf(path.begin(), path.end());
  buf.push_back('\0');
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0) {
    const int e = errno;
    throw std::runtime_error("backing_store: cannot create a spill file in directory '" + dir + "'" + from +
                             ": " + std::strerror(e) +
                             " (expected a writable directory; set host_mem.spill_dir" +
                             (from.empty() ? ")" : " or TMPDIR)"));
  }
  spill_path_ = buf.data();
  ::unlink(buf.data());  // the file lives as long as the descriptor
  if (spill.direct_io && page_bytes_ % 4096 == 0) {  // frames and offsets are then aligned
    const int fl = ::fcntl(fd_, F_GETFL);
    direct_ = fl >= 0 && ::fcntl(fd_, F_SETFL, fl | O_DIRECT) == 0;  // e.g. tmpfs refuses it
  }
  cache_pages_ = static_cast<std::size_t>(std::max<std::uint64_t>(1, spill.cache_bytes / page_bytes_));
  // on_file_ grows with the highest page written to the file (a size of 1 PiB would need a
  // 2 GB bitmap up front).
  if (spill.io_thread) {
    read_ahead_ = spill.read_ahead_pages;
    write_behind_ = std::max<std::size_t>(1, spill.write_behind_pages);
    io_thread_ = start_worker_thread([this] { io_worker(); }, "cdma-spill-io");
  }
}

backing_store::~backing_store() {
  if (io_thread_.joinable()) {
    {
      std::lock_guard<std::mutex> g(io_lock_);
      io_stop_ = true;
    }
    io_work_cv_.notify_all();
    io_thread_.join();  // jobs not started are dropped (the file goes with the descriptor)
  }
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

std::uint8_t* detail::page_pool::get() {
  if (!free_.empty()) {
    std::uint8_t* p = free_.back();
    free_.pop_back();
    return p;
  }
  if (fresh_ == 0) {
    const std::size_t frames = std::max<std::size_t>(1, next_arena_bytes_ / page_bytes_);
    const std::size_t bytes = frames * page_bytes_;
    // An arena of at least one huge page (2 MiB on x86-64) is mapped on a huge-page boundary
    // and marked MADV_HUGEPAGE: with transparent huge pages in `madvise` mode (Debian's
    // default) its first touch is one page fault per 2 MiB instead of one per 4 KiB (the
    // default job's LT run took ~430 000 faults for its 1.7 GB of pages, ~4 s of system time
    // on this VM, as long as its user time). A hint only: without THP the kernel ignores it.
    constexpr std::size_t huge = std::size_t{2} << 20;
    const bool use_huge = bytes >= huge;
    const std::size_t map_bytes = use_huge ? bytes + huge : bytes;  // room to align
    void* m = ::mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    arenas_.emplace_back(m, map_bytes);
    auto* base = static_cast<std::uint8_t*>(m);
    if (use_huge) {
      base += (huge - reinterpret_cast<std::uintptr_t>(base) % huge) % huge;
      (void)::madvise(base, bytes, MADV_HUGEPAGE);
    }
    next_ = base;
    fresh_ = frames;
    next_arena_bytes_ = std::min<std::size_t>(next_arena_bytes_ * 2, 64u << 20);
  }
  std::uint8_t* p = next_;  // fresh anonymous memory reads as zeros
  next_ += page_bytes_;
  --fresh_;
  return p;
}

std::string backing_store::page_io_nothrow(bool write, std::uint64_t index, std::uint8_t* data) {
  return pages_io_nothrow(write, index, &data, 1);
}

std::string backing_store::pages_io_nothrow(bool write, std::uint64_t first, std::uint8_t* const* frames,
                                            std::size_t n) {
  iovec iov[kMaxIoPages];
  std::size_t done_pages = 0;  // requests of at most kMaxIoPages pages
  while (done_pages < n) {
    const std::size_t cnt = std::min(kMaxIoPages, n - done_pages);
    for (std::size_t k = 0; k < cnt; ++k) iov[k] = {frames[done_pages + k], page_bytes_};
    const std::size_t total = cnt * page_bytes_;
    const off_t off = static_cast<off_t>((first + done_pages) * page_bytes_);
    std::size_t done = 0, k0 = 0;  // bytes transferred; first iovec not yet complete
    while (done < total) {
      const ssize_t r = write ? ::pwritev(fd_, iov + k0, static_cast<int>(cnt - k0), off + static_cast<off_t>(done))
                              : ::preadv(fd_, iov + k0, static_cast<int>(cnt - k0), off + static_cast<off_t>(done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && errno == EINVAL && direct_.load(std::memory_order_relaxed)) {
        // The kernel refused a direct request (alignment rules of this file system): the
        // same bytes through the page cache from now on.
        const int fl = ::fcntl(fd_, F_GETFL);
        if (fl >= 0 && ::fcntl(fd_, F_SETFL, fl & ~O_DIRECT) == 0) {
          direct_ = false;
          continue;
        }
      }
      if (r < 0 || (write && r == 0)) {
        const int err = r < 0 ? errno : ENOSPC;
        std::ostringstream os;
        os << "backing_store: " << (write ? "writing" : "reading") << " page 0x" << std::hex
           << (first + done_pages + done / page_bytes_) * page_bytes_ << " of the spill file " << spill_path_
           << " (deleted) failed: " << std::strerror(err)
           << " (the spill directory needs room for the offloaded bytes; set host_mem.spill_dir)";
        return os.str();
      }
      if (r == 0) {  // beyond the end of the file: zeros
        for (std::size_t k = k0; k < cnt; ++k) {
          const std::size_t at = done > k * page_bytes_ ? done - k * page_bytes_ : 0;
          std::memset(frames[done_pages + k] + at, 0, page_bytes_ - at);
        }
        break;
      }
      done += static_cast<std::size_t>(r);
      // Skip the iovecs transferred whole; trim the one transferred in part.
      while (k0 < cnt && done >= (k0 + 1) * page_bytes_) ++k0;
      if (k0 < cnt) {
        const std::size_t in = done - k0 * page_bytes_;
        iov[k0] = {frames[done_pages + k0] + in, page_bytes_ - in};
      }
    }
    done_pages += cnt;
  }
  return {};
}

void backing_store::page_io(bool write, std::uint64_t index, std::uint8_t* data) {
  std::string err = page_io_nothrow(write, index, data);
  if (err.empty()) return;
  io_error_ = std::move(err);  // kept: SystemC wraps exceptions thrown in processes
  throw store_io_error(io_error_);
}

// ---- helper I/O thread ------------------------------------------------------------------------

void backing_store::io_worker() {
  std::unique_lock<std::mutex> g(io_lock_);
  for (;;) {
    io_idle_ = true;
    io_work_cv_.wait(g, [this] { return io_stop_ || !io_queue_.empty() || !io_punch_.empty(); });
    io_idle_ = false;
    if (io_stop_) return;
    if (io_queue_.empty()) {  // nothing to read or write: one piece of a deferred punch
      auto& [first, n] = io_punch_.front();
      const std::uint64_t piece = std::min<std::uint64_t>(n, std::max<std::uint64_t>(1, kPunchPieceBytes / page_bytes_));
      const std::uint64_t at = first;
      first += piece;
      n -= piece;
      if (n == 0) io_punch_.pop_front();
      g.unlock();
      (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at * page_bytes_),
                        static_cast<off_t>(piece * page_bytes_));
      g.lock();
      continue;
    }
    std::shared_ptr<io_job> j = std::move(io_queue_.front());
    io_queue_.pop_front();
    if (j->st != io_job::state::queued) continue;  // cancelled: taken back by the owner
    j->st = io_job::state::running;
    // The queued jobs that continue this one (same direction, the next pages) join it: one
    // request of up to kMaxIoPages pages (evicted pages and read-ahead come in address order).
    std::shared_ptr<io_job> batch[kMaxIoPages];
    std::uint8_t* frames[kMaxIoPages];
    std::size_t n = 0;
    batch[n] = j;
    frames[n++] = j->frame;
    if (!j->punch_pages)
      while (n < kMaxIoPages && !io_queue_.empty()) {
        io_job& x = *io_queue_.front();
        if (x.st != io_job::state::queued || x.punch_pages || x.write != j->write || x.index != j->index + n) break;
        x.st = io_job::state::running;
        frames[n] = x.frame;
        batch[n++] = std::move(io_queue_.front());
        io_queue_.pop_front();
      }
    if (j->write && !io_punch_.empty()) trim_punches(j->index, n);
    g.unlock();
    std::string err;
    if (j->punch_pages)
      (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(j->index * page_bytes_),
                        static_cast<off_t>(j->punch_pages * page_bytes_));
    else {
      const bool timed = j->write && direct_.load(std::memory_order_relaxed) && direct_probe_left_ > 0;
      const auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      err = pages_io_nothrow(j->write, j->index, frames, n);
      helper_requests_.fetch_add(1, std::memory_order_relaxed);
      helper_pages_.fetch_add(n, std::memory_order_relaxed);
      if (timed && err.empty()) direct_probe(n * page_bytes_, std::chrono::steady_clock::now() - t0);
    }
    g.lock();
    for (std::size_t k = 0; k < n; ++k) {
      batch[k]->st = io_job::state::done;
      if (!err.empty()) batch[k]->error = err;
    }
    if (!err.empty()) {
      if (!io_failed_) io_failure_ = err;
      io_failed_ = true;
    }
    if (io_waiting_) io_done_cv_.notify_all();
  }
}

void backing_store::direct_probe(std::uint64_t bytes, std::chrono::steady_clock::duration took) {
  probe_bytes_ += bytes;
  probe_time_ += took;
  direct_probe_left_ = bytes >= direct_probe_left_ ? 0 : direct_probe_left_ - bytes;
  if (direct_probe_left_ > 0) return;
  const double s = std::chrono::duration<double>(probe_time_).count();
  if (s > 0 && static_cast<double>(probe_bytes_) / s < kMinDirectWriteBps) {
    const int fl = ::fcntl(fd_, F_GETFL);  // a slow disk: let the page cache absorb the writes
    if (fl >= 0 && ::fcntl(fd_, F_SETFL, fl & ~O_DIRECT) == 0) direct_ = false;
  }
}

void backing_store::io_raise() {
  if (!io_failed_.load(std::memory_order_acquire)) return;
  {
    std::lock_guard<std::mutex> g(io_lock_);
    io_error_ = io_failure_;
  }
  throw store_io_error(io_error_);
}

void backing_store::io_submit(bool write, std::uint64_t index, std::uint8_t* frame, std::uint64_t punch_pages,
                              std::size_t wake_at) {
  auto j = std::make_shared<io_job>();
  j->write = write;
  j->index = index;
  j->frame = frame;
  j->punch_pages = punch_pages;
  if (!punch_pages) io_pending_[index] = j;
  if (write) io_writes_.push_back(j);
  bool wake;
  {
    std::lock_guard<std::mutex> g(io_lock_);
    io_queue_.push_back(std::move(j));
    // No futex call while the helper works or has been woken already; an idle helper is
    // woken once `wake_at` jobs wait (io_wait() wakes it for fewer).
    wake = io_idle_ && io_queue_.size() >= wake_at;
    if (wake) io_idle_ = false;
  }
  if (wake) io_work_cv_.notify_one();
}

void backing_store::punch(std::uint64_t first, std::uint64_t n) {
  if (n == 0) return;
  if (io_thread_.joinable()) {
    if (!direct_.load(std::memory_order_relaxed)) return io_submit(false, first, nullptr, n);  // after earlier jobs
    bool wake;
    {
      std::lock_guard<std::mutex> g(io_lock_);
      io_punch_.emplace_back(first, n);
      wake = io_idle_;
      if (wake) io_idle_ = false;
    }
    if (wake) io_work_cv_.notify_one();
    return;
  }
  (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(first * page_bytes_),
                    static_cast<off_t>(n * page_bytes_));
}

void backing_store::trim_punches(std::uint64_t first, std::uint64_t n) {
  const std::uint64_t end = first + n;
  for (std::size_t i = 0; i < io_punch_.size();) {
    auto [f, m] = io_punch_[i];
    if (f >= end || f + m <= first) {
      ++i;
      continue;
    }
    // Keep the parts before and after [first, end).
    const std::uint64_t tail_at = std::max(end, f), tail = f + m > end ? f + m - tail_at : 0;
    if (f < first) {
      io_punch_[i++].second = first - f;
      if (tail) io_punch_.insert(io_punch_.begin() + static_cast<std::ptrdiff_t>(i++), {tail_at, tail});
    } else if (tail) {
      io_punch_[i++] = {tail_at, tail};
    } else {
      io_punch_.erase(io_punch_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

void backing_store::io_kick() {
  bool wake;
  {
    std::lock_guard<std::mutex> g(io_lock_);
    wake = io_idle_ && !io_queue_.empty();
    if (wake) io_idle_ = false;
  }
  if (wake) io_work_cv_.notify_one();
}

void backing_store::io_wait(const std::shared_ptr<io_job>& j) {
  std::unique_lock<std::mutex> g(io_lock_);
  if (io_idle_ && !io_queue_.empty()) {  // jobs held back by io_submit's wake_at
    io_idle_ = false;
    io_work_cv_.notify_one();
  }
  ++io_waiting_;
  io_done_cv_.wait(g, [&] { return j->st == io_job::state::done || j->st == io_job::state::cancelled; });
  --io_waiting_;
  if (!j->error.empty()) {
    io_error_ = j->error;
    throw store_io_error(io_error_);
  }
}

void backing_store::io_reap(bool block) {
  while (!io_writes_.empty()) {
    const std::shared_ptr<io_job> j = io_writes_.front();
    bool finished;
    {
      std::lock_guard<std::mutex> g(io_lock_);
      finished = j->st == io_job::state::done || j->st == io_job::state::cancelled;
    }
    if (!finished) {
      if (!block || io_writes_.size() <= write_behind_) break;
      io_wait(j);
    } else if (!j->error.empty()) {
      io_error_ = j->error;
      throw store_io_error(io_error_);
    }
    if (j->frame) {  // written and not taken back: the frame is free again
      auto it = io_pending_.find(j->index);
      if (it != io_pending_.end() && it->second == j) io_pending_.erase(it);
      pool_.put(j->frame);
      j->frame = nullptr;
    }
    io_writes_.pop_front();
  }
}

std::uint8_t* backing_store::io_take(std::uint64_t index, bool& dirty) {
  auto it = io_pending_.find(index);
  if (it == io_pending_.end()) return nullptr;
  const std::shared_ptr<io_job> j = std::move(it->second);
  io_pending_.erase(it);
  bool cancelled = false;
  {
    std::lock_guard<std::mutex> g(io_lock_);
    if (j->st == io_job::state::queued) {
      j->st = io_job::state::cancelled;
      cancelled = true;
    }
  }
  std::uint8_t* f = j->frame;
  if (!cancelled) io_wait(j);
  j->frame = nullptr;  // the caller owns it now (io_reap skips the job)
  if (cancelled) {
    if (j->write) dirty = true;         // never written: still differs from the file
    else page_io(false, index, f);      // read here instead
  }
  return f;
}

void backing_store::io_read_ahead(std::uint64_t from) {
  const std::uint64_t end = std::min<std::uint64_t>(from + read_ahead_, on_file_.size());
  // A reader walking upwards calls this once per page (from = previous from + 1): continue
  // where the previous call stopped instead of looking at the whole window again, and only
  // once the lead has fallen to half the window: the pages then go out as one run of
  // read_ahead_ / 2 pages that the helper joins into requests of up to kMaxIoPages (topping
  // the window up page by page gave the helper one- or two-page requests, 64-128 KiB: ~3x
  // slower per byte with direct I/O). Any other call scans its window from the start.
  const bool onward = from == ra_from_ + 1 && ra_next_ > from && ra_next_ <= end;
  if (onward && ra_next_ - from >= std::max<std::size_t>(1, read_ahead_ / 2)) {
    ra_from_ = from;
    return;
  }
  std::uint64_t i = onward ? ra_next_ : from;
  bool submitted = false;
  for (; i < end; ++i) {
    if (!on_file(i)) break;  // the written data ends here
    if (pages_.count(i) || io_pending_.count(i)) continue;
    io_submit(false, i, pool_.get(), 0, ~std::size_t{0});  // no wake-up per page: the kick below
    submitted = true;
  }
  if (submitted) io_kick();  // one wake-up for the run
  ra_from_ = from;
  ra_next_ = i;
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
      zero_tail(it->second);  // the file gets the page's real bytes
      if (io_thread_.joinable())
        // Written behind (frame kept until then), the helper woken per batch of pages.
        io_submit(true, victim, it->second.data.release(), 0, kWakeBatch);
      else
        page_io(true, victim, it->second.data.get());
      if (!on_file(victim)) {
        if (victim >= on_file_.size()) on_file_.resize(static_cast<std::size_t>(victim) + 1, false);
        on_file_[victim] = true;
        peak_spilled_pages_ = std::max(peak_spilled_pages_, ++spilled_pages_);
      }
    }
    lru_.pop_back();
    pages_.erase(it);
  }
  if (io_thread_.joinable()) io_reap(true);
}

void backing_store::zero_tail(page& p) {
  if (p.valid < page_bytes_) std::memset(p.data.get() + p.valid, 0, page_bytes_ - p.valid);
  p.valid = page_bytes_;
}

backing_store::page& backing_store::load_page(std::uint64_t index, bool whole_overwrite) {
  if (page* p = find_page(index)) return *p;
  evict_if_full();
  page pg;
  pg.data = std::unique_ptr<std::uint8_t[], detail::page_release>(nullptr, detail::page_release{&pool_});
  std::uint8_t* taken = io_thread_.joinable() ? io_take(index, pg.dirty) : nullptr;
  if (taken) {  // read ahead, or written behind and not freed yet: the page's current bytes
    pg.data.reset(taken);
    pg.valid = page_bytes_;
    if (!whole_overwrite) io_read_ahead(index + 1);
  } else if (fd_ >= 0 && on_file(index) && !whole_overwrite) {
    pg.data.reset(pool_.get());
    pg.valid = page_bytes_;
    page_io(false, index, pg.data.get());
    if (io_thread_.joinable()) io_read_ahead(index + 1);
  } else {
    // A new page: its bytes are zeros, but a recycled frame holds old data; rather than
    // zero-filling it here, only [0, valid) is taken from the frame (reads beyond valid give
    // zeros, writes beyond it zero the gap first, zero_tail() completes it before the page
    // leaves the store's hands). A DMA engine writing a page from its start then never zeroes it.
    pg.data.reset(pool_.get());
    pg.valid = whole_overwrite ? page_bytes_ : 0;
  }
  if (fd_ >= 0) {
    lru_.push_front(index);
    pg.lru = lru_.begin();
  }
  return pages_.emplace(index, std::move(pg)).first->second;
}

void backing_store::read_pages(std::uint64_t addr, std::uint8_t* dst, std::size_t len) {
  const bool sequential = addr == seq_read_end_;
  const std::uint8_t* last = nullptr;  // the page data the access ended in
  std::size_t last_end = 0;
  while (len > 0) {
    const std::uint64_t index = addr / page_bytes_;
    const std::size_t offset = static_cast<std::size_t>(addr % page_bytes_);
    const std::size_t n = std::min(len, page_bytes_ - offset);
    last = nullptr;
    if (const page* p = find_page(index)) last = copy_out(*p, offset, dst, n);
    else if (fd_ >= 0 && on_file(index))
      std::memcpy(dst, (last = load_page(index, false).data.get()) + offset, n);
    else
      std::memset(dst, 0, n);  // never written: zeros, nothing allocated
    last_end = offset + n;
    addr += n;
    dst += n;
    len -= n;
  }
  seq_read_end_ = addr;
  if (sequential && last) prefetch_after(addr, last, last_end, false);
}

void backing_store::prefetch_after(std::uint64_t end_addr, const std::uint8_t* page_data, std::size_t from,
                                   bool write) {
  // A stream of accesses walking upwards (a DMA engine reading or writing window after
  // window) then finds its next bytes in cache (prefetch_range). Inside this page only, and
  // only the lines the previous call did not request already.
  std::uint64_t& done = write ? seq_write_prefetched_ : seq_read_prefetched_;
  const std::size_t start = done > end_addr && done - end_addr < page_bytes_ - from
                                ? from + static_cast<std::size_t>(done - end_addr)
                                : from;
  const std::size_t stop = std::min(page_bytes_, from + kSequentialPrefetchBytes);
  if (start < stop) {
    prefetch_range(page_data + start, stop - start, write);
    done = end_addr + (stop - from);
  }
}

void backing_store::write_pages(std::uint64_t addr, const std::uint8_t* src, std::size_t len) {
  const bool sequential = addr == seq_write_end_;
  std::uint8_t* last = nullptr;
  std::size_t last_end = 0;
  while (len > 0) {
    const std::uint64_t index = addr / page_bytes_;
    const std::size_t offset = static_cast<std::size_t>(addr % page_bytes_);
    const std::size_t n = std::min(len, page_bytes_ - offset);
    page& p = load_page(index, n == page_bytes_);
    last = p.data.get();
    if (offset > p.valid) std::memset(last + p.valid, 0, offset - p.valid);
    std::memcpy(last + offset, src, n);
    p.valid = std::max(p.valid, offset + n);
    p.dirty = true;
    last_end = offset + n;
    addr += n;
    src += n;
    len -= n;
  }
  seq_write_end_ = addr;
  if (sequential && last) prefetch_after(addr, last, last_end, true);
}

void backing_store::discard_pages(std::uint64_t addr, std::uint64_t len) {
  std::uint64_t punch_first = 0, punch_n = 0;  // a run of consecutive pages to punch out
  while (len > 0) {
    const std::uint64_t index = addr / page_bytes_;
    const std::uint64_t offset = addr % page_bytes_;
    const std::uint64_t n = std::min<std::uint64_t>(len, page_bytes_ - offset);
    if (n == page_bytes_) {
      if (io_thread_.joinable()) {
        bool dirty = false;
        if (std::uint8_t* f = io_take(index, dirty)) pool_.put(f);  // before punching the hole
      }
      auto it = pages_.find(index);
      if (it != pages_.end()) {
        if (fd_ >= 0) lru_.erase(it->second.lru);
        pages_.erase(it);
      }
      if (fd_ >= 0 && on_file(index)) {
        // Give the disk blocks back (one call per run of pages); reads return zeros anyway.
        if (punch_n && punch_first + punch_n != index) {
          punch(punch_first, punch_n);
          punch_n = 0;
        }
        if (!punch_n) punch_first = index;
        ++punch_n;
        on_file_[index] = false;
        --spilled_pages_;
      }
    } else if (find_page(index) || (fd_ >= 0 && on_file(index))) {
      page& p = load_page(index, false);
      if (offset < p.valid)
        std::memset(p.data.get() + offset, 0, std::min(static_cast<std::size_t>(n), p.valid - offset));
      p.dirty = true;
    }
    addr += n;
    len -= n;
  }
  if (fd_ >= 0) punch(punch_first, punch_n);
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

void backing_store::read_general(std::uint64_t addr, std::uint8_t* dst, std::size_t len) {
  check_range("read", addr, len);
  if (fd_ >= 0) io_raise();
  if (regions_.empty()) return read_pages(addr, dst, len);
  segments(
      addr, len, [&](content_region& r, std::uint64_t off, std::size_t at, std::size_t n) { r.read(off, dst + at, n); },
      [&](std::uint64_t a, std::size_t at, std::size_t n) { read_pages(a, dst + at, n); });
}

void backing_store::write_general(std::uint64_t addr, const std::uint8_t* src, std::size_t len) {
  check_range("write", addr, len);
  if (fd_ >= 0) io_raise();
  if (regions_.empty()) return write_pages(addr, src, len);
  segments(
      addr, len, [&](content_region& r, std::uint64_t off, std::size_t at, std::size_t n) { r.write(off, src + at, n); },
      [&](std::uint64_t a, std::size_t at, std::size_t n) { write_pages(a, src + at, n); });
}

void backing_store::discard(std::uint64_t addr, std::uint64_t len) {
  check_range("discard", addr, len);
  if (fd_ >= 0) io_raise();
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

std::uint8_t* backing_store::page_pointer(std::uint64_t addr) {
  if (addr >= size_) check_range("page_pointer", addr, 1);
  if (!direct_access(addr)) {
    std::ostringstream os;
    os << "backing_store::page_pointer: page of 0x" << std::hex << addr
       << " is not directly accessible (spill file or content region)";
    throw std::logic_error(os.str());
  }
  page& p = load_page(addr / page_bytes_, false);
  zero_tail(p);  // the pointer sees every byte
  return p.data.get();
}

}  // namespace cdma::mem
