// Sparse, paged byte store behind every memory model. Pure C++ (no SystemC).
//
// The address space [0, size) is cut into pages of `page_bytes`; a page is allocated (zeroed)
// the first time it is written or a pointer into it is requested, so host memory of 64 GiB
// costs only the pages a simulation touches. Reads of untouched pages return zeros.
//
// Two additions let a simulation move tens of GB through a memory without holding them:
//  * content regions: an address range whose bytes are supplied by a content_region object
//    instead of pages (e.g. activations produced on demand when read, and written data checked
//    against a checksum instead of stored). Regions are never handed out for DMI.
//  * file spill (spill_options): the pages live in an unlinked temporary file; at most
//    `cache_bytes` of them are kept in RAM (least recently used, written back when evicted).
//    The data is kept bit-exact; the process's resident memory stays bounded. No DMI.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace cdma::mem {

/// Raised by a content_region that cannot serve an access (e.g. a write into a read-only
/// region); memory targets turn it into TLM_GENERIC_ERROR_RESPONSE with a warning naming the
/// address and this message.
class region_error : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reading or writing the spill file failed (e.g. the disk is full). Not an access error of
/// the simulated system: memory targets let it propagate, so the simulation stops with it.
class store_io_error : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Supplies the bytes of a mapped address range. Offsets are relative to the region start;
/// an access never crosses the region's end (the store splits it).
class content_region {
public:
  virtual ~content_region() = default;
  /// Copies bytes [offset, offset + len) of the region to dst. Throws region_error.
  virtual void read(std::uint64_t offset, std::uint8_t* dst, std::size_t len) = 0;
  /// Accepts bytes [offset, offset + len) written to the region. Throws region_error.
  virtual void write(std::uint64_t offset, const std::uint8_t* src, std::size_t len) = 0;
};

/// A memory that can map content regions into its address space (memory_target,
/// gpu_memory_controller implement it and invalidate DMI over the range first).
class region_host {
public:
  virtual ~region_host() = default;
  /// Maps `region` over [addr, addr + len); see backing_store::map_region.
  virtual void map_region(std::uint64_t addr, std::uint64_t len, std::shared_ptr<content_region> region) = 0;
  /// Removes the region that starts at addr; see backing_store::unmap_region.
  virtual void unmap_region(std::uint64_t addr) = 0;
};

/// Keep the pages in a temporary file instead of RAM.
struct spill_options {
  /// Directory of the temporary file (created with mkstemp and unlinked at once, so it
  /// disappears with the process). Empty: $TMPDIR, else /tmp.
  std::string dir;
  /// Pages kept in RAM at most, bytes (least recently used evicted). Default 32 MiB (512
  /// pages of 64 KiB: room for read_ahead_pages + write_behind_pages and the pages in use).
  /// Was 256 MiB; every cached frame is new memory once (~1.85 s per GB of system time on
  /// the VMs measured), and with direct I/O a page read back costs little: VGG-16 b64 LT
  /// peak RSS 291 -> 70 MiB, system time -0.2 s (session 10).
  std::uint64_t cache_bytes = 32ull << 20;
  /// Do the file I/O on a helper thread: evicted dirty pages are written behind (at most
  /// `write_behind_pages` queued; their frames are kept until written, so a page read again
  /// meanwhile is taken back without I/O), and when a page is read from the file the next
  /// `read_ahead_pages` pages on the file are read ahead (a reader walking addresses upwards
  /// then finds them ready). The bytes are the same as without it; only the thread that
  /// spends the time changes. An I/O error of the helper is raised (store_io_error) by the
  /// next access of the store. Default on; false: every pread/pwrite in the caller's thread.
  bool io_thread = true;
  /// pages, default 128 (8 MiB of 64 KiB pages; refilled in runs of half of it once the
  /// reader has used half: with direct I/O the reads come from the disk, and a deeper window
  /// of larger requests keeps the backward pass from waiting for it; 64 until session 10.
  /// With 16, VGG-16 b64, load ~4 on 2 cores, the simulation thread did ~1/4 of the reads
  /// itself).
  std::size_t read_ahead_pages = 128;
  std::size_t write_behind_pages = 64;  ///< pages, default 64 (4 MiB of 64 KiB pages)
  /// Open the spill file for direct I/O (O_DIRECT: the bytes go between the page frames and
  /// the disk without passing through the kernel's page cache) when the page size is a
  /// multiple of 4096 bytes and the file system accepts it (else, or if the kernel later
  /// refuses a direct request with EINVAL, buffered I/O, the same bytes). Why: a page-cache
  /// page is new memory for the kernel, and on the VMs measured the first touch of new guest
  /// memory cost ~1.85 s per GB (dd of 2 GiB into /tmp: 3.8 s system time, 0.3 s when
  /// repeated at once): at VGG-16 b256 the ~6 GB spilled cost more CPU than the simulation
  /// thread's whole backward pass. Direct requests use frames the store already owns (no new
  /// memory); the helper thread (io_thread) joins consecutive queued pages into one request
  /// of up to kMaxIoPages pages (one 64 KiB request per page is ~2x slower on disk than
  /// 1 MiB ones). A disk slower than backing_store::kMinDirectWriteBps over the first
  /// kDirectProbeBytes of direct writes (helper thread) switches the file to buffered I/O.
  /// Default off (buffered I/O through the page cache): measured on the 2-core VM, quiet,
  /// VGG-16 LT cDMA step, direct vs buffered: b64 7.4-7.7 vs 6.1 s wall, b128 13.6-15.2 vs
  /// 13.5-14.0 s, b256 30.2 vs 30.7-31.0 s; system time b256 5.9 vs 12.2-12.9 s (session 10).
  /// Session 11 (produce_ahead 128-256, deferred holes, see punch()): b64 6.8-7.9 vs 6.0-6.4 s,
  /// b256 25.5-25.9 vs 22.2-26.1 s for the whole process, of which ~0.3 s per GB spilled
  /// is the file's blocks freed at exit (`rm` of a 2 GB file here: 0.5-0.7 s). The reads
  /// themselves are fast (b64: 2.07 GB in 0.31 s of preadv on the helper); the cores sit
  /// idle or in iowait instead (b64: 4.6 of 15 core-seconds). So direct I/O saves CPU (a
  /// shared, busy machine) and costs wall time on an idle one.
  bool direct_io = false;
};

namespace detail {
/// Page frames carved from large anonymous mappings and recycled through a free list when
/// pages are freed or evicted. A frame's bytes are undefined (a recycled frame holds an old
/// page; backing_store tracks which bytes of a page are valid instead of zero-filling).
/// Transparent huge pages are not requested: on the VMs measured, their first touch cost
/// more than the 4 KiB faults they replace.
class page_pool {
public:
  explicit page_pool(std::size_t page_bytes) : page_bytes_(page_bytes) {}
  ~page_pool();
  page_pool(const page_pool&) = delete;
  page_pool& operator=(const page_pool&) = delete;
  /// A frame of page_bytes, contents undefined. Throws std::bad_alloc.
  std::uint8_t* get();
  void put(std::uint8_t* p) { free_.push_back(p); }

private:
  std::size_t page_bytes_;
  std::size_t next_arena_bytes_ = 1u << 20;  ///< doubles per arena up to 64 MiB
  std::vector<std::pair<void*, std::size_t>> arenas_;  ///< mappings (munmap on destruction)
  std::uint8_t* next_ = nullptr;  ///< next fresh frame of the newest arena
  std::size_t fresh_ = 0;         ///< fresh frames left there
  std::vector<std::uint8_t*> free_;
};
struct page_release {
  page_pool* pool = nullptr;
  void operator()(std::uint8_t* p) const { if (p) pool->put(p); }
};
}  // namespace detail

class backing_store {
public:
  /// Direct I/O is given up (the file switched to buffered I/O, the page cache then absorbing
  /// the writes) when the helper's first kDirectProbeBytes of direct writes ran slower than
  /// this, B/s (public: the run report quotes both when direct I/O was given up). The backward pass of VGG-16 b256 reads its ~6 GB spilled back in ~8 s of
  /// simulation, ~0.8 GB/s; the disks measured wrote 0.9 GB/s (1 MiB direct requests, idle
  /// VM) but once ~0.08 GB/s (session 8) and 0.44-0.48 GB/s under load (session 9).
  static constexpr double kMinDirectWriteBps = 0.4e9;
  static constexpr std::uint64_t kDirectProbeBytes = 64ull << 20;
  /// Largest page accepted, 1 GiB (16384 x the 64 KiB default): a page is allocated whole on
  /// its first write or DMI request, and a 2^40-byte page ended the simulation with
  /// std::bad_alloc at the first DMI request (breaker s18).
  static constexpr std::size_t kMaxPageBytes = std::size_t{1} << 30;
  /// The page-size rule of every memory that keeps a backing_store (one check, one message):
  /// throws std::invalid_argument "<field> = <v>: expected 1 .. 1073741824 bytes (1 GiB;
  /// default 65536)" unless 1 <= page_bytes <= kMaxPageBytes.
  static void check_page_bytes(const std::string& field, std::size_t page_bytes);
  /// `size_bytes`: addressable bytes; `page_bytes`: allocation granule in bytes, 1 ..
  /// kMaxPageBytes. Throws std::invalid_argument naming page_bytes otherwise.
  explicit backing_store(std::uint64_t size_bytes, std::size_t page_bytes = 64 * 1024);
  /// File-backed store. Throws std::runtime_error naming the directory if the temporary
  /// file cannot be created, std::invalid_argument if page_bytes is out of range.
  backing_store(std::uint64_t size_bytes, std::size_t page_bytes, const spill_options& spill);
  ~backing_store();
  backing_store(const backing_store&) = delete;
  backing_store& operator=(const backing_store&) = delete;

  /// Addressable size in bytes.
  std::uint64_t size() const { return size_; }
  /// Allocation granule in bytes.
  std::size_t page_bytes() const { return page_bytes_; }
  /// True if the pages live in a temporary file (spill_options).
  bool spills() const { return fd_ >= 0; }
  /// Spill file I/O is direct (spill_options::direct_io took effect and was not given up).
  bool direct_io() const { return direct_.load(std::memory_order_relaxed); }
  /// Read / write requests the helper I/O thread made to the spill file, and the pages they
  /// moved (pages / requests > 1: consecutive queued pages were joined, see kMaxIoPages).
  std::uint64_t helper_io_requests() const { return helper_requests_.load(std::memory_order_relaxed); }
  std::uint64_t helper_io_pages() const { return helper_pages_.load(std::memory_order_relaxed); }

  /// True iff [addr, addr+len) lies inside [0, size()) (no overflow).
  bool contains(std::uint64_t addr, std::uint64_t len) const {
    return addr <= size_ && len <= size_ - addr;
  }

  /// Copies `len` bytes at `addr` into `dst`; untouched bytes read as 0, bytes of a content
  /// region come from the region. Throws std::out_of_range naming the address if the range
  /// exceeds size(); region_error from a region; std::runtime_error on a spill-file I/O error.
  ///
  /// Inline fast path for the common case of a memory target's transaction (a RAM store
  /// without content regions, the range inside the store and inside one page): the page is
  /// looked up here, without the out-of-line range check and region split (same bytes, same
  /// sequential-stream bookkeeping as the general path; session 11: with check_access() and
  /// perform() inlined too, the functional part of a 64-byte read in the AT DRAM bench fell
  /// from ~266 to ~104 instructions). Everything else goes to read_general().
  void read(std::uint64_t addr, std::uint8_t* dst, std::size_t len) {
    if (fd_ < 0 && regions_.empty() && len > 0 && contains(addr, len)) {
      const std::uint64_t index = page_index(addr);
      const std::size_t offset = static_cast<std::size_t>(addr - index * page_bytes_);
      if (len <= page_bytes_ - offset) return read_in_page(addr, index, offset, dst, len);
      return read_pages(addr, dst, len);
    }
    read_general(addr, dst, len);
  }
  /// Copies `len` bytes from `src` to `addr`, allocating pages as needed (bytes inside a
  /// content region go to the region). Errors as read(). Inline fast path (RAM store, no
  /// content region, range inside the store) as read().
  void write(std::uint64_t addr, const std::uint8_t* src, std::size_t len) {
    if (fd_ < 0 && regions_.empty() && contains(addr, len)) return write_pages(addr, src, len);
    write_general(addr, src, len);
  }
  /// Forgets [addr, addr+len): pages wholly inside are freed, the parts of partially covered
  /// pages are zeroed. Reads of the range return zeros afterwards. Throws std::out_of_range.
  void discard(std::uint64_t addr, std::uint64_t len);

  /// Maps `region` over [addr, addr + len) (len > 0): accesses to the range go to the region,
  /// stored pages under it are discarded. Throws std::out_of_range outside the store,
  /// std::invalid_argument if the range overlaps another region or region is null.
  void map_region(std::uint64_t addr, std::uint64_t len, std::shared_ptr<content_region> region);
  /// Removes the region starting at `addr` (the range then reads as zeros). Throws
  /// std::invalid_argument naming the address if no region starts there.
  void unmap_region(std::uint64_t addr);
  /// True iff [addr, addr + len) overlaps a content region.
  bool overlaps_region(std::uint64_t addr, std::uint64_t len) const;

  /// True iff page_pointer() may be used for the page containing addr: a RAM store and no
  /// content region on the page (memory targets grant DMI only then).
  bool direct_access(std::uint64_t addr) const {
    if (fd_ >= 0 || addr >= size_) return false;
    return regions_.empty() || !overlaps_region(addr - addr % page_bytes_, page_bytes_);
  }

  /// Bytes allocated in RAM: pages resident x page_bytes().
  std::uint64_t resident_bytes() const {
    return static_cast<std::uint64_t>(pages_.size()) * page_bytes_;
  }
  /// The message of the last spill-file I/O error (store_io_error), empty if none. Lets a
  /// platform recover the cause after SystemC has wrapped the exception of a process.
  const std::string& io_error() const { return io_error_; }
  /// Bytes of pages on the spill file now (written and not discarded; 0 for a RAM store).
  std::uint64_t spilled_bytes() const { return spilled_pages_ * page_bytes_; }
  /// The largest spilled_bytes() so far, bytes (the disk room the run needed).
  std::uint64_t peak_spilled_bytes() const { return peak_spilled_pages_ * page_bytes_; }

  /// Pointer to the first byte of the page containing `addr`, allocating the page (for DMI).
  /// The pointer stays valid until the page is freed by discard() or the store is destroyed.
  /// The page always has page_bytes() bytes, even the last one of a size that is not a
  /// multiple of the page size. Throws std::out_of_range if addr >= size(), std::logic_error
  /// if !direct_access(addr).
  std::uint8_t* page_pointer(std::uint64_t addr);

private:
  struct page {
    std::unique_ptr<std::uint8_t[], detail::page_release> data;
    std::list<std::uint64_t>::iterator lru;  ///< spill mode only
    bool dirty = false;                      ///< spill mode: differs from the file
    /// Bytes [0, valid) hold the page's data; [valid, page_bytes) read as zeros but the frame
    /// may still hold a recycled page's bytes there (see load_page; zero_tail completes it).
    std::size_t valid = 0;
  };
  void zero_tail(page& p);  ///< zero-fills [valid, page_bytes) and makes the whole page valid
  page* find_page(std::uint64_t index);          ///< resident page or nullptr (touches LRU)
  page& load_page(std::uint64_t index, bool whole_overwrite);  ///< resident, allocating / reading
  void evict_if_full();
  void page_io(bool write, std::uint64_t index, std::uint8_t* data);
  /// pread/pwrite of one page; returns the error message ("" on success). Any thread.
  std::string page_io_nothrow(bool write, std::uint64_t index, std::uint8_t* data);
  /// preadv/pwritev of the n consecutive pages first .. first + n - 1 from / into frames[k]
  /// (one request, split only where the kernel transfers less); a read beyond the end of the
  /// file gives zeros. A direct request refused with EINVAL switches the file to buffered I/O
  /// and is retried. Returns the error message ("" on success). Any thread.
  std::string pages_io_nothrow(bool write, std::uint64_t first, std::uint8_t* const* frames, std::size_t n);
  /// Pages the helper joins into one request at most (2 MiB of 64 KiB pages; dd on the VMs
  /// measured: direct reads 0.6 GB/s in 64 KiB requests, 1.3-1.4 GB/s in 1-8 MiB ones).
  static constexpr std::size_t kMaxIoPages = 32;
  /// Called by the helper after each direct write request of `bytes` that took `took`.
  void direct_probe(std::uint64_t bytes, std::chrono::steady_clock::duration took);
  std::uint64_t direct_probe_left_ = kDirectProbeBytes;  ///< helper thread only
  std::uint64_t probe_bytes_ = 0;
  std::chrono::steady_clock::duration probe_time_{};
  // Helper I/O thread (spill_options::io_thread). All io_job fields but state/error are
  // written by the simulation (owner) thread only; state/error under io_lock_.
  struct io_job {
    bool write = false;
    std::uint64_t index = 0;
    std::uint64_t punch_pages = 0;  ///< > 0: punch a hole over pages [index, index + n) instead
    std::uint8_t* frame = nullptr;  ///< owned by the job until taken back or reaped
    enum class state { queued, running, done, cancelled } st = state::queued;
    std::string error;
  };
  void io_worker();
  void io_submit(bool write, std::uint64_t index, std::uint8_t* frame, std::uint64_t punch_pages = 0,
                 std::size_t wake_at = 1);
  /// Evicted pages (writes) queued before an idle helper is woken for them (a wake-up costs
  /// a futex call and a context switch; VGG-16 b64 spills ~32 K pages and reads them back:
  /// one wake-up per read-ahead page was ~0.14 s of the simulation thread's 2.3 s backward
  /// pass). Read-ahead queues a run of pages and wakes the helper once for it
  /// (io_read_ahead); io_wait() wakes it for a page needed now.
  static constexpr std::size_t kWakeBatch = 8;
  /// Wakes an idle helper if jobs wait (held back by io_submit's wake_at).
  void io_kick();
  /// Gives the disk blocks of pages [first, first + n) back (fallocate PUNCH_HOLE; best
  /// effort, errors ignored): on the helper thread if there is one. With direct I/O the
  /// punch is deferred (io_punch_): the helper does it when it has no read or write to do,
  /// kPunchPieceBytes at a time. Why: on the VMs measured (ext4 mounted with `discard`) a
  /// hole over blocks on the disk costs ~0.3 ms per MiB (fallocate -p of 64 MiB: 20 ms,
  /// 256 MiB: 70-80 ms; `rm` of a 2 GB file: 0.5-0.7 s) and holds the file's inode lock
  /// meanwhile: VGG-16 b64 direct, 31 punches took 0.72 s in the backward pass, the
  /// read-ahead queued behind them and the simulation thread's own reads blocked on the
  /// lock (0.72 s in 52 reads). Through the page cache a hole over pages not written back
  /// yet is cheap (16 punches, 0.09 s): punched at once, in order with the other jobs.
  void punch(std::uint64_t first, std::uint64_t n);
  /// Deferred punch piece, bytes: 4 MiB, ~1.2 ms at the rate above, so a read that arrives
  /// meanwhile waits about that long at most.
  static constexpr std::uint64_t kPunchPieceBytes = 4ull << 20;
  /// Removes pages [first, first + n) (about to be written by the helper) from the deferred
  /// punches (under io_lock_): a hole punched after the write would lose its bytes.
  void trim_punches(std::uint64_t first, std::uint64_t n);
  /// Waits for job j; throws store_io_error (and stops the store's I/O) if it failed.
  void io_wait(const std::shared_ptr<io_job>& j);
  /// Frees the frames of finished write jobs (oldest first); with `block`, waits for the
  /// oldest write until at most write_behind_pages are outstanding. Raises a helper's error.
  void io_reap(bool block);
  /// Takes back the pending job of page `index`: its frame (nullptr if none), waiting for a
  /// job the helper has started; a job not started is cancelled (a read is done here; a
  /// write leaves the page dirty: `dirty` set).
  std::uint8_t* io_take(std::uint64_t index, bool& dirty);
  void io_read_ahead(std::uint64_t from);
  void io_raise();  ///< throws store_io_error if a helper I/O failed
  void read_pages(std::uint64_t addr, std::uint8_t* dst, std::size_t len);
  /// read() / write() past their inline fast path: range check, spill-file errors, regions.
  void read_general(std::uint64_t addr, std::uint8_t* dst, std::size_t len);
  void write_general(std::uint64_t addr, const std::uint8_t* src, std::size_t len);
  /// Index of the page containing addr (a shift when page_bytes_ is a power of two).
  std::uint64_t page_index(std::uint64_t addr) const {
    return page_shift_ >= 0 ? addr >> page_shift_ : addr / page_bytes_;
  }
  /// Copies bytes [offset, offset + n) of page p to dst (zeros past its written prefix:
  /// p.valid); returns the page's data.
  static const std::uint8_t* copy_out(const page& p, std::size_t offset, std::uint8_t* dst, std::size_t n) {
    const std::uint8_t* d = p.data.get();
    const std::size_t have = p.valid > offset ? std::min(n, p.valid - offset) : 0;
    std::memcpy(dst, d + offset, have);
    if (have < n) std::memset(dst + have, 0, n - have);  // not written yet: zeros
    return d;
  }
  /// read_pages() of a RAM store for 0 < len <= page_bytes_ - offset (one page): the same
  /// bytes and the same sequential-stream bookkeeping (seq_read_end_, prefetch_after).
  void read_in_page(std::uint64_t addr, std::uint64_t index, std::size_t offset, std::uint8_t* dst,
                    std::size_t len) {
    const bool sequential = addr == seq_read_end_;
    const std::uint8_t* last = nullptr;
    if (!pages_.empty()) {  // (a store never written has no page to look up)
      auto it = pages_.find(index);
      if (it != pages_.end()) last = copy_out(it->second, offset, dst, len);
    }
    if (!last) std::memset(dst, 0, len);  // never written: zeros, nothing allocated
    seq_read_end_ = addr + len;
    if (sequential && last) prefetch_after(addr + len, last, offset + len, false);
  }
  /// Bytes after the end of an access that continues the previous one (sequential) that are
  /// requested into the cache (prefetch_after): one 4 KiB window of a DMA stream.
  static constexpr std::size_t kSequentialPrefetchBytes = 4096;
  /// The access ended at end_addr, byte `from` of the page at page_data.
  void prefetch_after(std::uint64_t end_addr, const std::uint8_t* page_data, std::size_t from, bool write);
  void write_pages(std::uint64_t addr, const std::uint8_t* src, std::size_t len);
  void discard_pages(std::uint64_t addr, std::uint64_t len);
  /// Splits [addr, addr + len) at region edges: on_region(region, offset in it, offset in the
  /// access, n) for parts inside a region, on_pages(addr, offset in the access, n) otherwise.
  template <typename OnRegion, typename OnPages>
  void segments(std::uint64_t addr, std::size_t len, OnRegion on_region, OnPages on_pages);
  void check_range(const char* what, std::uint64_t addr, std::uint64_t len) const;

  std::uint64_t size_;
  std::size_t page_bytes_;
  int page_shift_ = -1;  ///< log2(page_bytes_) when it is a power of two, else -1
  detail::page_pool pool_{page_bytes_};  ///< declared before pages_: outlives them
  std::unordered_map<std::uint64_t, page> pages_;
  std::uint64_t seq_read_end_ = ~0ull, seq_write_end_ = ~0ull;  ///< end of the last read / write
  std::uint64_t seq_read_prefetched_ = 0, seq_write_prefetched_ = 0;  ///< prefetch_after() requested up to
  struct region_entry { std::uint64_t len; std::shared_ptr<content_region> region; };
  std::map<std::uint64_t, region_entry> regions_;  ///< by start address
  // spill mode
  int fd_ = -1;
  std::atomic<bool> direct_{false};          ///< fd_ has O_DIRECT (cleared if the kernel refuses it)
  std::atomic<std::uint64_t> helper_requests_{0}, helper_pages_{0};  ///< helper_io_requests / _pages
  std::string spill_path_;                   ///< for messages (the file itself is unlinked)
  std::size_t cache_pages_ = 0;
  std::list<std::uint64_t> lru_;             ///< front = most recently used
  std::vector<bool> on_file_;                ///< page has been written to the file (grown on demand)
  bool on_file(std::uint64_t index) const { return index < on_file_.size() && on_file_[index]; }
  std::uint64_t spilled_pages_ = 0;
  std::uint64_t peak_spilled_pages_ = 0;  ///< peak_spilled_bytes() / page_bytes_
  std::string io_error_;
  // helper I/O thread (spill mode with spill_options::io_thread)
  std::size_t read_ahead_ = 0, write_behind_ = 0;
  std::uint64_t ra_from_ = ~0ull;  ///< `from` of the last io_read_ahead()
  std::uint64_t ra_next_ = 0;      ///< first page that call did not look at
  std::unordered_map<std::uint64_t, std::shared_ptr<io_job>> io_pending_;  ///< by page index
  std::deque<std::shared_ptr<io_job>> io_writes_;  ///< write jobs not reaped yet, oldest first
  std::mutex io_lock_;
  std::condition_variable io_work_cv_, io_done_cv_;
  std::deque<std::shared_ptr<io_job>> io_queue_;   ///< not started yet (helper takes the front)
  /// Deferred punches (direct I/O; see punch()): page runs (first, n), done when io_queue_
  /// is empty.
  std::deque<std::pair<std::uint64_t, std::uint64_t>> io_punch_;
  bool io_stop_ = false;
  bool io_idle_ = false;   ///< the helper waits for work (notify only then)
  int io_waiting_ = 0;     ///< owner calls waiting on io_done_cv_
  std::atomic<bool> io_failed_{false};
  std::string io_failure_;  ///< message of the helper's first error (under io_lock_)
  std::thread io_thread_;
};

}  // namespace cdma::mem
