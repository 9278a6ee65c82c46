// backing_store: content regions and the file spill mode (pure C++, no SystemC).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <random>
#include <string>
#include <thread>

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "tlm/memory/backing_store.h"

using cdma::mem::backing_store;
using cdma::mem::content_region;
using cdma::mem::region_error;
using cdma::mem::spill_options;
using cdma::mem::store_io_error;

namespace {
/// Byte k of the region is (k * 7 + 3) & 0xFF; writes are recorded.
struct pattern_region : content_region {
  std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> writes;
  bool read_only = false;
  void read(std::uint64_t off, std::uint8_t* dst, std::size_t len) override {
    for (std::size_t k = 0; k < len; ++k) dst[k] = static_cast<std::uint8_t>(((off + k) * 7 + 3) & 0xFF);
  }
  void write(std::uint64_t off, const std::uint8_t* src, std::size_t len) override {
    if (read_only) throw region_error("read-only");
    writes.emplace_back(off, std::vector<std::uint8_t>(src, src + len));
  }
};
}  // namespace

TEST(BackingStoreRegion, ReadsAndWritesSplitAtRegionBoundaries) {
  backing_store s(1 << 20, 4096);
  std::vector<std::uint8_t> ones(8192, 1);
  s.write(0, ones.data(), ones.size());  // pages 0 and 1 stored
  auto r = std::make_shared<pattern_region>();
  s.map_region(4096 + 100, 1000, r);     // inside page 1: its stored bytes are discarded
  EXPECT_TRUE(s.overlaps_region(4096, 200));
  EXPECT_FALSE(s.overlaps_region(0, 4096 + 100));
  EXPECT_FALSE(s.overlaps_region(4096 + 1100, 10));

  // A read from 4096 + 90 to 4096 + 1110: 10 stored bytes, 1000 region bytes, 10 stored
  // bytes (mapping discards only the region's own range; the rest of page 1 keeps its ones).
  std::vector<std::uint8_t> buf(1020);
  s.read(4096 + 90, buf.data(), buf.size());
  for (int k = 0; k < 10; ++k) EXPECT_EQ(buf[k], 1) << k;
  for (int k = 0; k < 1000; ++k) EXPECT_EQ(buf[10 + k], static_cast<std::uint8_t>((k * 7 + 3) & 0xFF)) << k;
  for (int k = 0; k < 10; ++k) EXPECT_EQ(buf[1010 + k], 1) << k;

  // A write across the region's end: the region gets its part (offset 990, 10 bytes), the
  // page the rest.
  std::vector<std::uint8_t> w(20, 9);
  s.write(4096 + 100 + 990, w.data(), w.size());
  ASSERT_EQ(r->writes.size(), 1u);
  EXPECT_EQ(r->writes[0].first, 990u);
  EXPECT_EQ(r->writes[0].second.size(), 10u);
  std::uint8_t b = 0;
  s.read(4096 + 1100, &b, 1);
  EXPECT_EQ(b, 9);

  // Unmapped: the range reads as zeros (its pages were discarded when it was mapped).
  s.unmap_region(4096 + 100);
  s.read(4096 + 100, buf.data(), 1000);
  EXPECT_TRUE(std::all_of(buf.begin(), buf.begin() + 1000, [](std::uint8_t v) { return v == 0; }));
}

TEST(BackingStoreRegion, OverlapsAndBadArgumentsAreRefused) {
  backing_store s(1 << 20, 4096);
  auto r = std::make_shared<pattern_region>();
  s.map_region(8192, 8192, r);
  EXPECT_THROW(s.map_region(12288, 100, r), std::invalid_argument);  // overlaps
  EXPECT_THROW(s.map_region(0, 8193, r), std::invalid_argument);     // overlaps by one byte
  EXPECT_NO_THROW(s.map_region(0, 8192, r));                         // adjacent is fine
  EXPECT_THROW(s.map_region(100000, 0, r), std::invalid_argument);   // empty
  EXPECT_THROW(s.map_region(100000, 10, nullptr), std::invalid_argument);
  EXPECT_THROW(s.map_region((1 << 20) - 4, 8, r), std::out_of_range);
  EXPECT_THROW(s.unmap_region(8193), std::invalid_argument);  // no region starts there
  // DMI never reaches into a region's pages.
  EXPECT_FALSE(s.direct_access(8192));
  EXPECT_FALSE(s.direct_access(16383));
  EXPECT_TRUE(s.direct_access(16384));
  EXPECT_THROW(s.page_pointer(8192), std::logic_error);
  // A region's error reaches the caller.
  r->read_only = true;
  std::uint8_t b = 0;
  EXPECT_THROW(s.write(9000, &b, 1), region_error);
}

TEST(BackingStoreSpill, KeepsEveryByteWithBoundedResidentPages) {
  spill_options o;
  o.cache_bytes = 2 * 4096;  // two pages in RAM
  backing_store s(1 << 24, 4096, o);
  EXPECT_TRUE(s.spills());
  // 40 pages of a pattern, written in 1000-byte pieces (pages are written partially, evicted,
  // read back and completed).
  const std::size_t n = 40 * 4096;
  std::vector<std::uint8_t> data(n);
  for (std::size_t k = 0; k < n; ++k) data[k] = static_cast<std::uint8_t>((k * 131 + k / 4096) & 0xFF);
  for (std::size_t off = 0; off < n; off += 1000)
    s.write(4096 * 3 + off, data.data() + off, std::min<std::size_t>(1000, n - off));
  EXPECT_LE(s.resident_bytes(), 2u * 4096u);
  EXPECT_GE(s.spilled_bytes(), 38u * 4096u);
  std::vector<std::uint8_t> back(n);
  s.read(4096 * 3, back.data(), n);
  EXPECT_EQ(back, data);
  // Untouched pages read as zeros; a partial discard zeroes only its bytes.
  std::uint8_t z[16];
  s.read(0, z, sizeof z);
  EXPECT_TRUE(std::all_of(z, z + 16, [](std::uint8_t v) { return v == 0; }));
  s.discard(4096 * 3 + 10, 4096 * 2);  // bytes 10.. of page 3, all of page 4, 10 bytes of 5
  s.read(4096 * 3, back.data(), n);
  for (std::size_t k = 0; k < n; ++k) {
    const bool gone = k >= 10 && k < 10 + 2 * 4096;
    ASSERT_EQ(back[k], gone ? 0 : data[k]) << k;
  }
  EXPECT_FALSE(s.direct_access(0));  // no DMI into a spilled store
}

TEST(BackingStoreSpill, UnwritableDirectoryIsAnErrorNamingIt) {
  spill_options o;
  o.dir = "/nonexistent/cdma-vp-dir";
  try {
    backing_store s(1 << 20, 4096, o);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/cdma-vp-dir"), std::string::npos) << e.what();
  }
}

TEST(BackingStorePages, ARecycledPageFrameReadsAsZerosWhereNotWritten) {
  // Page frames of freed pages are reused (page pool): a new page must still start as zeros.
  backing_store s(1 << 20, 4096);
  std::vector<std::uint8_t> ff(4096, 0xFF);
  for (std::uint64_t p = 0; p < 8; ++p) s.write(p * 4096, ff.data(), ff.size());
  EXPECT_EQ(s.resident_bytes(), 8u * 4096u);
  s.discard(0, 8 * 4096);  // eight frames back to the pool
  EXPECT_EQ(s.resident_bytes(), 0u);
  const std::uint8_t one = 0x5A;
  for (std::uint64_t p = 16; p < 24; ++p) s.write(p * 4096 + 100, &one, 1);  // partial writes
  std::vector<std::uint8_t> back(8 * 4096);
  s.read(16 * 4096, back.data(), back.size());
  for (std::size_t k = 0; k < back.size(); ++k) ASSERT_EQ(back[k], k % 4096 == 100 ? 0x5A : 0) << k;
  // A whole-page write over a recycled frame keeps exactly the written bytes.
  s.discard(16 * 4096, 4096);
  s.write(40 * 4096, ff.data(), ff.size());
  s.read(40 * 4096, back.data(), 4096);
  EXPECT_TRUE(std::all_of(back.begin(), back.begin() + 4096, [](std::uint8_t v) { return v == 0xFF; }));
  // DMI pointers stay valid and see later writes.
  std::uint8_t* p = s.page_pointer(41 * 4096);
  EXPECT_EQ(p[7], 0);
  s.write(41 * 4096 + 7, &one, 1);
  EXPECT_EQ(p[7], 0x5A);
}

TEST(BackingStorePages, RecycledFramesAndPartialWritesMatchAPlainByteArray) {
  // New pages take recycled frames without zero-filling them (only the written prefix of a
  // page is valid): random partial writes at gaps, discards (frames back to the pool), reads,
  // DMI pointers and evictions of partly written pages to the spill file must all show the
  // same bytes as a plain array where unwritten bytes are 0.
  const std::uint64_t size = 48 * 4096;
  spill_options o;
  o.cache_bytes = 3 * 4096;  // evicts partly written pages often
  o.io_thread = true;
  o.read_ahead_pages = 2;
  o.write_behind_pages = 1;
  backing_store ram(size, 4096), spill(size, 4096, o);
  std::vector<std::uint8_t> model(size, 0), buf(size), back(size);
  std::mt19937_64 rng(777);
  auto fill_junk = [&](std::uint64_t addr, std::size_t len) {  // makes recycled frames dirty
    std::vector<std::uint8_t> junk(len, 0xEE);
    ram.write(addr, junk.data(), len);
    spill.write(addr, junk.data(), len);
    std::fill(model.begin() + static_cast<std::ptrdiff_t>(addr),
              model.begin() + static_cast<std::ptrdiff_t>(addr + len), std::uint8_t{0xEE});
  };
  for (int op = 0; op < 4000; ++op) {
    const int kind = static_cast<int>(rng() % 12);
    const std::uint64_t page = rng() % 48;
    std::uint64_t addr = page * 4096 + rng() % 4096;
    std::size_t len = static_cast<std::size_t>(rng() % 700) + 1;
    len = static_cast<std::size_t>(std::min<std::uint64_t>(len, size - addr));
    if (kind < 4) {  // a write somewhere inside a page (often past a gap of unwritten bytes)
      for (std::size_t k = 0; k < len; ++k) buf[k] = static_cast<std::uint8_t>(rng() | 1);
      ram.write(addr, buf.data(), len);
      spill.write(addr, buf.data(), len);
      std::copy(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(len),
                model.begin() + static_cast<std::ptrdiff_t>(addr));
    } else if (kind == 4) {  // whole pages freed: their frames are reused dirty
      const std::uint64_t n = std::min<std::uint64_t>(1 + rng() % 4, 48 - page) * 4096;
      ram.discard(page * 4096, n);
      spill.discard(page * 4096, n);
      std::fill(model.begin() + static_cast<std::ptrdiff_t>(page * 4096),
                model.begin() + static_cast<std::ptrdiff_t>(page * 4096 + n), std::uint8_t{0});
    } else if (kind == 5) {  // part of a page zeroed
      ram.discard(addr, len);
      spill.discard(addr, len);
      std::fill(model.begin() + static_cast<std::ptrdiff_t>(addr),
                model.begin() + static_cast<std::ptrdiff_t>(addr + len), std::uint8_t{0});
    } else if (kind == 6) {
      fill_junk(page * 4096, 4096);
    } else if (kind == 7) {  // a DMI pointer (RAM store) sees the whole page
      const std::uint8_t* p = ram.page_pointer(page * 4096);
      ASSERT_EQ(0, std::memcmp(p, model.data() + page * 4096, 4096)) << "op " << op;
    } else {
      ram.read(addr, back.data(), len);
      ASSERT_EQ(0, std::memcmp(back.data(), model.data() + addr, len)) << "ram, op " << op;
      spill.read(addr, back.data(), len);
      ASSERT_EQ(0, std::memcmp(back.data(), model.data() + addr, len)) << "spill, op " << op;
    }
  }
  ram.read(0, back.data(), size);
  EXPECT_EQ(0, std::memcmp(back.data(), model.data(), size));
  spill.read(0, back.data(), size);
  EXPECT_EQ(0, std::memcmp(back.data(), model.data(), size));
  EXPECT_GT(spill.spilled_bytes(), 0u);
}

TEST(BackingStorePages, InPageFastPathMatchesTheRegionSplitPathAndAByteArray) {
  // read()/write() of a RAM store without content regions take an inline path (one page
  // looked up directly; session 11). A store with a region mapped far above the addresses used
  // takes the general path (range check, region split) for the same accesses: both must show
  // the bytes of a plain array, for a power-of-two page (shift) and another size (division),
  // reads inside one page, across pages, of pages never written and partly written.
  for (const std::size_t page : {std::size_t{4096}, std::size_t{3000}}) {
    const std::uint64_t used = 24 * page, size = used + 8 * page + 123;  // last page partial
    backing_store fast(size, page), general(size, page);
    general.map_region(used + page, 2 * page, std::make_shared<pattern_region>());
    std::vector<std::uint8_t> model(used, 0), buf(2 * page), a(2 * page), b(2 * page);
    std::mt19937_64 rng(4242);
    for (int op = 0; op < 6000; ++op) {
      const int kind = static_cast<int>(rng() % 10);
      const std::uint64_t addr = rng() % used;
      std::size_t len = static_cast<std::size_t>(rng() % (kind == 9 ? 2 * page : 200)) + 1;
      len = static_cast<std::size_t>(std::min<std::uint64_t>(len, used - addr));
      if (kind < 3) {
        for (std::size_t k = 0; k < len; ++k) buf[k] = static_cast<std::uint8_t>(rng() | 1);
        fast.write(addr, buf.data(), len);
        general.write(addr, buf.data(), len);
        std::copy(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(len),
                  model.begin() + static_cast<std::ptrdiff_t>(addr));
      } else if (kind == 3) {
        fast.discard(addr, len);
        general.discard(addr, len);
        std::fill(model.begin() + static_cast<std::ptrdiff_t>(addr),
                  model.begin() + static_cast<std::ptrdiff_t>(addr + len), std::uint8_t{0});
      } else {
        fast.read(addr, a.data(), len);
        general.read(addr, b.data(), len);
        ASSERT_EQ(0, std::memcmp(a.data(), model.data() + addr, len)) << "fast, page " << page << ", op " << op;
        ASSERT_EQ(0, std::memcmp(b.data(), model.data() + addr, len)) << "general, page " << page << ", op " << op;
      }
    }
    // The last (partial) page: inside the store it reads as zeros, beyond it is an error.
    std::vector<std::uint8_t> tail(123, 0xAB);
    fast.read(size - 123, tail.data(), 123);
    EXPECT_TRUE(std::all_of(tail.begin(), tail.end(), [](std::uint8_t v) { return v == 0; }));
    EXPECT_THROW(fast.read(size - 10, tail.data(), 11), std::out_of_range);
    EXPECT_THROW(fast.write(size, tail.data(), 1), std::out_of_range);
    // A region mapped later takes the accesses (and DMI) away from the pages; unmapped, the
    // range reads as zeros (the pages under it were discarded) and is directly accessible.
    const std::uint64_t at = 3 * page;
    std::uint8_t x[16];
    EXPECT_TRUE(fast.direct_access(at + 5));
    fast.map_region(at, page, std::make_shared<pattern_region>());
    EXPECT_FALSE(fast.direct_access(at + 5));
    fast.read(at + 5, x, 16);
    for (std::size_t k = 0; k < 16; ++k) EXPECT_EQ(x[k], ((5 + k) * 7 + 3) & 0xFF) << k;
    fast.unmap_region(at);
    EXPECT_TRUE(fast.direct_access(at + 5));
    fast.read(at + 5, x, 16);
    EXPECT_TRUE(std::all_of(x, x + 16, [](std::uint8_t v) { return v == 0; }));
    EXPECT_FALSE(fast.direct_access(size));
  }
}

TEST(BackingStoreSpill, HelperIoThreadGivesTheSameBytesAsSyncIoAndRam) {
  // Random writes, reads and discards (and sequential scans, which trigger read-ahead) on a
  // RAM store, a spilled store doing its I/O in the caller's thread and one with the helper
  // I/O thread and tiny queues (pages taken back while queued, being written or read ahead):
  // every read returns the same bytes from all three.
  spill_options sync_o;
  sync_o.cache_bytes = 4 * 4096;
  sync_o.io_thread = false;
  spill_options async_o = sync_o;
  async_o.io_thread = true;
  async_o.read_ahead_pages = 3;
  async_o.write_behind_pages = 2;
  const std::uint64_t size = 64 * 4096;
  backing_store ram(size, 4096), sync_s(size, 4096, sync_o), async_s(size, 4096, async_o);
  ASSERT_TRUE(async_s.spills());
  std::mt19937_64 rng(12345);
  std::vector<std::uint8_t> buf(size), a(size), b(size), c(size);
  for (int op = 0; op < 3000; ++op) {
    const int kind = static_cast<int>(rng() % 10);
    std::uint64_t addr = rng() % size;
    std::size_t len = static_cast<std::size_t>(rng() % (3 * 4096)) + 1;
    if (kind == 9) {  // a sequential scan of the whole store
      addr = 0;
      len = static_cast<std::size_t>(size);
    }
    len = static_cast<std::size_t>(std::min<std::uint64_t>(len, size - addr));
    if (kind < 4) {
      for (std::size_t k = 0; k < len; ++k) buf[k] = static_cast<std::uint8_t>(rng());
      ram.write(addr, buf.data(), len);
      sync_s.write(addr, buf.data(), len);
      async_s.write(addr, buf.data(), len);
    } else if (kind == 4) {
      ram.discard(addr, len);
      sync_s.discard(addr, len);
      async_s.discard(addr, len);
    } else {
      ram.read(addr, a.data(), len);
      sync_s.read(addr, b.data(), len);
      async_s.read(addr, c.data(), len);
      ASSERT_EQ(0, std::memcmp(a.data(), b.data(), len)) << "op " << op;
      ASSERT_EQ(0, std::memcmp(a.data(), c.data(), len)) << "op " << op;
    }
  }
  EXPECT_GT(async_s.spilled_bytes(), 0u);
  EXPECT_EQ(async_s.spilled_bytes(), sync_s.spilled_bytes());
  EXPECT_LE(async_s.resident_bytes(), 4u * 4096u);
}

namespace {
/// Spill options with the helper I/O thread: RAM cache, read-ahead and write-behind depths.
spill_options helper_thread_spill(std::uint64_t cache_bytes, std::size_t read_ahead, std::size_t write_behind,
                                  bool direct) {
  spill_options o;
  o.cache_bytes = cache_bytes;
  o.io_thread = true;
  o.read_ahead_pages = read_ahead;
  o.write_behind_pages = write_behind;
  o.direct_io = direct;
  return o;
}
}  // namespace

TEST(BackingStoreSpill, DirectAndBufferedIoWithJoinedRequestsGiveTheSameBytesAsRam) {
  // Direct I/O (O_DIRECT, spill_options::direct_io) and buffered I/O (default), each with the helper thread and queues
  // long enough that it joins consecutive pages into one request (up to kMaxIoPages), and a
  // page size direct I/O cannot use (1000 bytes: not a multiple of 4096, so buffered): long
  // sequential writes and scans (evicted pages written behind and read ahead in runs) mixed
  // with random writes, reads and discards; every read returns the RAM store's bytes.
  auto opts = [](bool direct) { return helper_thread_spill(8 * 4096, 48, 48, direct); };
  const std::uint64_t size = 256 * 4096;
  backing_store ram(size, 4096), direct(size, 4096, opts(true)), buffered(size, 4096, opts(false));
  backing_store odd_ram(size, 1000), odd(size, 1000, opts(true));
  EXPECT_FALSE(buffered.direct_io());
  EXPECT_FALSE(odd.direct_io());  // 1000-byte pages: buffered whatever the option says
  // Direct I/O is used where the file system takes it (a probe file opened with O_DIRECT in
  // the same directory tells).
  const char* t = std::getenv("TMPDIR");
  std::string probe = std::string(t && *t ? t : "/tmp") + "/cdma-vp-test-XXXXXX";
  const int fd = ::mkstemp(probe.data());
  ASSERT_GE(fd, 0);
  ::unlink(probe.c_str());
  const int fl = ::fcntl(fd, F_GETFL);
  const bool fs_direct = fl >= 0 && ::fcntl(fd, F_SETFL, fl | O_DIRECT) == 0;
  ::close(fd);
  EXPECT_EQ(direct.direct_io(), fs_direct);
  std::mt19937_64 rng(777);
  std::vector<std::uint8_t> buf(size), want(size), got(size);
  std::vector<backing_store*> spilled{&direct, &buffered};
  for (int op = 0; op < 600; ++op) {
    const int kind = static_cast<int>(rng() % 10);
    std::uint64_t addr = rng() % size;
    std::size_t len = static_cast<std::size_t>(rng() % (5 * 4096)) + 1;
    if (kind >= 7) {  // sequential: the whole store, written (kind 7) or read (8, 9)
      addr = 0;
      len = static_cast<std::size_t>(size);
    }
    len = static_cast<std::size_t>(std::min<std::uint64_t>(len, size - addr));
    if (kind < 3 || kind == 7) {
      for (std::size_t k = 0; k < len; ++k) buf[k] = static_cast<std::uint8_t>(rng());
      for (backing_store* s : {&ram, &direct, &buffered, &odd_ram, &odd}) s->write(addr, buf.data(), len);
    } else if (kind == 3) {
      for (backing_store* s : {&ram, &direct, &buffered, &odd_ram, &odd}) s->discard(addr, len);
    } else {
      ram.read(addr, want.data(), len);
      for (backing_store* s : spilled) {
        s->read(addr, got.data(), len);
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), len)) << "op " << op << (s == &direct ? " direct" : " buffered");
      }
      odd_ram.read(addr, want.data(), len);
      odd.read(addr, got.data(), len);
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), len)) << "op " << op << " 1000-byte pages";
    }
  }
  EXPECT_GT(direct.spilled_bytes(), 100u * 4096u);
  EXPECT_EQ(direct.spilled_bytes(), buffered.spilled_bytes());
  EXPECT_EQ(direct.direct_io(), fs_direct);  // no request was refused
  // Whole-store writes and scans queue runs of consecutive pages: the helper joined them
  // (one request per page would give pages == requests).
  for (backing_store* s : spilled) {
    EXPECT_GT(s->helper_io_requests(), 0u);
    EXPECT_GT(s->helper_io_pages(), 2 * s->helper_io_requests());
  }
}

TEST(BackingStoreSpill, DirectIoDeferredHolesNeverEraseBytesWrittenAfterTheDiscard) {
  // With direct I/O a discarded run of pages on the file is punched out later, when the
  // helper has nothing to read or write (backing_store::punch). Pages written again after
  // the discard must keep their new bytes: the helper writes them before it gets to the
  // deferred hole, which must then leave them out. Each round: the whole store is written
  // (the helper is kept busy by ~60 pages written behind), its first half discarded and
  // written again at once with other bytes, then everything is read back; peak_spilled_bytes
  // is the most pages on the file at once.
  const spill_options o = helper_thread_spill(4 * 4096, 16, 64, true);
  const std::uint64_t pages = 64, size = pages * 4096;
  backing_store s(size, 4096, o);
  std::vector<std::uint8_t> buf(size), got(size);
  for (int round = 0; round < 20; ++round) {
    for (std::size_t k = 0; k < size; ++k) buf[k] = static_cast<std::uint8_t>(k * 7 + round);
    s.write(0, buf.data(), size);
    s.discard(0, size / 2);
    for (std::size_t k = 0; k < size / 2; ++k) buf[k] = static_cast<std::uint8_t>(k * 13 + round + 1);
    s.write(0, buf.data(), size / 2);
    s.read(0, got.data(), size);
    ASSERT_EQ(0, std::memcmp(buf.data(), got.data(), size)) << "round " << round;
    // The hole of the first half can reach the file after it was written again: read once
    // more after the helper had time for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    s.write(size / 2, buf.data() + size / 2, 4096);  // evicts: the first half goes to the file again
    s.read(0, got.data(), size);
    ASSERT_EQ(0, std::memcmp(buf.data(), got.data(), size)) << "round " << round << " (later)";
  }
  EXPECT_GE(s.peak_spilled_bytes(), size - o.cache_bytes);
  EXPECT_LE(s.peak_spilled_bytes(), size);
  EXPECT_LE(s.spilled_bytes(), s.peak_spilled_bytes());
}

TEST(BackingStoreSpill, AnErrorOfTheHelperThreadIsRaisedByALaterAccessNamingTheFile) {
  // The spill file may not grow beyond 64 KiB (RLIMIT_FSIZE, SIGXFSZ ignored: pwrite fails
  // with EFBIG on the helper thread). A later access of the store raises it.
  struct limit_guard {
    rlimit old{};
    void (*old_handler)(int) = nullptr;
    limit_guard() {
      getrlimit(RLIMIT_FSIZE, &old);
      old_handler = std::signal(SIGXFSZ, SIG_IGN);
      rlimit lim = old;
      lim.rlim_cur = 64 * 1024;
      setrlimit(RLIMIT_FSIZE, &lim);
    }
    ~limit_guard() {
      setrlimit(RLIMIT_FSIZE, &old);
      std::signal(SIGXFSZ, old_handler);
    }
  };
  spill_options o;
  o.cache_bytes = 2 * 4096;
  o.io_thread = true;
  backing_store s(1 << 24, 4096, o);
  std::vector<std::uint8_t> page(4096, 7), back(4096);
  std::string msg;
  {
    limit_guard g;
    try {
      for (std::uint64_t i = 0; i < 256; ++i) s.write(i * 4096, page.data(), page.size());
      for (std::uint64_t i = 0; i < 256; ++i) s.read(i * 4096, back.data(), back.size());
    } catch (const store_io_error& e) {
      msg = e.what();
    }
  }
  EXPECT_NE(msg.find("spill file"), std::string::npos) << msg;
  EXPECT_EQ(s.io_error(), msg);
  EXPECT_THROW(s.read(0, back.data(), back.size()), store_io_error);  // stays failed
}

TEST(BackingStorePages, ASpillingStoreOfAPebibyteCostsMemoryOnlyForThePagesWritten) {
  // Breaker (session 9): host_mem.size = 1024 TiB with spill on took 2.1 GB (a bit per 64 KiB
  // page of the whole size, 2^34 bits), 65536 TiB ended in std::bad_alloc. The per-page
  // "on the file" bits now cover only up to the highest page written to the file.
  struct rusage before {};
  ::getrusage(RUSAGE_SELF, &before);
  const std::uint64_t size = 1ull << 50, page = 64 * 1024;  // 1 PiB, 2^34 pages
  spill_options o;
  o.cache_bytes = page;  // one page in RAM: the second write evicts the first to the file
  o.io_thread = false;
  backing_store s(size, page, o);
  std::vector<std::uint8_t> a(page, 0xA1), b(page, 0xB2), back(page);
  // A page at 4 TiB (ext4 files end at 16 TiB; the file is sparse): its bit makes the bitmap
  // 2^26 bits = 8 MiB, where a bitmap of the whole size is 2 GiB.
  const std::uint64_t top = 4ull << 40, low = 3 * page;
  s.write(top, a.data(), page);
  s.write(low, b.data(), page);  // evicts the top page to the file
  s.read(top, back.data(), page);  // back from the file
  EXPECT_EQ(back, a);
  s.read(low, back.data(), page);
  EXPECT_EQ(back, b);
  s.read(size / 2, back.data(), page);  // never written: zeros
  EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](std::uint8_t v) { return v == 0; }));
  struct rusage after {};
  ::getrusage(RUSAGE_SELF, &after);
  // A bitmap of the whole size would be 2 GiB; allow 256 MiB for everything else.
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256 * 1024) << "peak RSS grew by " << after.ru_maxrss - before.ru_maxrss << " KiB";
}
