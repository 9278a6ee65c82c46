// tensor_record / tensor_source_region / tensor_sink_region: activation tensors produced on
// demand and prefetched copies verified by checksum (workloads/vdnn/tensor_check.h).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "workloads/activations/activation_source.h"
#include "workloads/vdnn/tensor_check.h"

using namespace cdma::workloads;

namespace {
// 2 x 8 x 33 x 41 fp32 = 21648 elements =
// 86592 bytes = 21 granules of 4096 + one of 576 bytes, and two 64 KiB production chunks.
const tensor_shape kShape{2, 8, 33, 41};
constexpr std::uint64_t kBytes = 2ull * 8 * 33 * 41 * 4;

std::vector<std::uint8_t> expected(activation_source& src) {
  std::vector<std::uint8_t> v(kBytes);
  src.fill("t", kShape, 0, v.data(), v.size());
  return v;
}
}  // namespace

TEST(TensorCheck, ProducesTheSourceBytesAndCountsZerosOnce) {
  synthetic_activation_source src(0.3, 7);
  const auto ref = expected(src);
  std::uint64_t zeros = 0;
  for (std::size_t k = 0; k < kBytes; k += 4) {
    std::uint32_t v;
    std::memcpy(&v, ref.data() + k, 4);
    zeros += v == 0;
  }
  auto rec = std::make_shared<tensor_record>(src, "t", kShape);
  EXPECT_EQ(rec->bytes(), kBytes);
  EXPECT_EQ(rec->granules(), 22u);  // ceil(86592 / 4096)
  tensor_source_region region(rec);
  // Read in odd pieces, twice: the bytes equal the source, zeros are counted once.
  std::vector<std::uint8_t> got(kBytes);
  for (int pass = 0; pass < 2; ++pass)
    for (std::uint64_t off = 0; off < kBytes; off += 1000)
      region.read(off, got.data() + off, static_cast<std::size_t>(std::min<std::uint64_t>(1000, kBytes - off)));
  EXPECT_EQ(got, ref);
  EXPECT_EQ(rec->zeros(), zeros);
  EXPECT_EQ(rec->produced_bytes(), kBytes);
  EXPECT_THROW(region.write(0, got.data(), 4), cdma::mem::region_error);
  EXPECT_THROW(region.read(kBytes - 4, got.data(), 8), cdma::mem::region_error);
}

TEST(TensorCheck, SinkAcceptsTheOffloadedBytesAndCountsEveryDifferingByte) {
  synthetic_activation_source src(0.5, 3);
  const auto ref = expected(src);
  auto rec = std::make_shared<tensor_record>(src, "t", kShape);
  tensor_source_region source(rec);
  std::vector<std::uint8_t> tmp(kBytes);
  source.read(0, tmp.data(), kBytes);  // the offload: checksums recorded
  tensor_sink_region sink(rec);
  EXPECT_EQ(rec->mismatched_bytes(), kBytes);  // nothing written yet
  EXPECT_EQ(rec->unwritten_bytes(), kBytes);

  // The prefetch: whole granules, except granule 3 written in three unaligned pieces and the
  // short last granule (576 bytes).
  std::vector<std::uint8_t> w = ref;
  w[5 * 4096 + 17] ^= 0x01;   // one byte wrong in granule 5
  w[9 * 4096 + 1] ^= 0xFF;    // two in granule 9
  w[9 * 4096 + 4095] ^= 0x80;
  for (std::uint64_t g = 0; g < 22; ++g) {
    const std::uint64_t off = g * 4096, len = std::min<std::uint64_t>(4096, kBytes - off);
    if (g == 3) {
      sink.write(off + 2000, w.data() + off + 2000, 2096);
      sink.write(off, w.data() + off, 1000);
      EXPECT_EQ(rec->unwritten_bytes(), kBytes - 3 * 4096);  // granule 3 still incomplete
      sink.write(off + 1000, w.data() + off + 1000, 1000);
    } else if (g != 12) {  // granule 12 is never written
      sink.write(off, w.data() + off, static_cast<std::size_t>(len));
    }
  }
  EXPECT_EQ(rec->unwritten_bytes(), 4096u);
  EXPECT_EQ(rec->mismatched_bytes(), 4096u + 1 + 2);

  // Rewriting the bad granules correctly and writing the missing one: all good.
  sink.write(5 * 4096, ref.data() + 5 * 4096, 4096);
  sink.write(9 * 4096, ref.data() + 9 * 4096, 4096);
  sink.write(12 * 4096, ref.data() + 12 * 4096, 4096);
  EXPECT_EQ(rec->mismatched_bytes(), 0u);
  // Reads of the sink return the expected tensor.
  std::vector<std::uint8_t> back(100);
  sink.read(21 * 4096, back.data(), 100);
  EXPECT_EQ(0, std::memcmp(back.data(), ref.data() + 21 * 4096, 100));
  EXPECT_THROW(sink.write(kBytes - 2, back.data(), 4), cdma::mem::region_error);
}

TEST(TensorCheck, GranulesNeverProducedAreCheckedAgainstRegeneratedBytes) {
  // The offload failed before reading the second half: those granules have no checksum and
  // are compared byte by byte with the regenerated data.
  synthetic_activation_source src(0.5, 11);
  const auto ref = expected(src);
  auto rec = std::make_shared<tensor_record>(src, "t", kShape);
  std::vector<std::uint8_t> tmp(40960);
  tensor_source_region(rec).read(0, tmp.data(), tmp.size());
  EXPECT_EQ(rec->produced_bytes(), 65536u);  // one whole production chunk
  std::vector<std::uint8_t> w = ref;
  w[80000] ^= 0x10;
  tensor_sink_region(rec).write(0, w.data(), kBytes);
  EXPECT_EQ(rec->mismatched_bytes(), 1u);
}

namespace {
/// Synthetic bytes, but chunk 1 of tensor "bad" cannot be produced.
struct failing_source : synthetic_activation_source {
  failing_source() : synthetic_activation_source(0.5, 5) {}
  void fill(const std::string& key, const tensor_shape& shape, std::uint64_t offset, std::uint8_t* out,
            std::size_t len) override {
    if (key == "bad" && offset >= 65536) throw activation_error("tensor 'bad': no data beyond 64 KiB");
    synthetic_activation_source::fill(key, shape, offset, out, len);
  }
};
}  // namespace

TEST(TensorCheck, ProducingAheadGivesTheSameBytesChecksumsAndZerosAsOnDemand) {
  // Two tensors read in turn (as offloads of consecutive layers overlap), once front to back
  // in 4 KiB windows and once backwards: the worker's chunks equal on-demand production.
  synthetic_activation_source src(0.4, 9);
  const tensor_shape other{1, 3, 50, 70};  // 42000 bytes: one partial chunk
  // (lookahead, worker threads): no thread, one, and several producing at once (the
  // synthetic source allows concurrent fill() calls).
  const std::pair<std::size_t, unsigned> configs[] = {{0, 1}, {1, 1}, {8, 1}, {8, 2}, {3, 3}};
  for (const auto& [ahead, threads] : configs) {
    SCOPED_TRACE(std::to_string(ahead) + " ahead, " + std::to_string(threads) + " threads");
    auto producer = std::make_shared<chunk_producer>(src, ahead, true, threads);
    EXPECT_EQ(producer->threads(), ahead == 0 ? 0u : threads);
    auto on_demand_a = std::make_shared<tensor_record>(src, "t", kShape);
    auto on_demand_b = std::make_shared<tensor_record>(src, "u", other);
    auto a = std::make_shared<tensor_record>(producer, "t", kShape);
    auto b = std::make_shared<tensor_record>(producer, "u", other);
    std::vector<std::uint8_t> ra(kBytes), rb(other.elements() * 4), ea(ra.size()), eb(rb.size());
    for (std::uint64_t off = 0; off < kBytes; off += 4096) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(4096, kBytes - off));
      tensor_source_region(a).read(off, ra.data() + off, n);
      tensor_source_region(on_demand_a).read(off, ea.data() + off, n);
      if (off < rb.size()) {
        const std::size_t m = std::min<std::size_t>(4096, rb.size() - off);
        tensor_source_region(b).read(off, rb.data() + off, m);
        tensor_source_region(on_demand_b).read(off, eb.data() + off, m);
      }
    }
    EXPECT_EQ(ra, expected(src));
    EXPECT_EQ(ra, ea);
    EXPECT_EQ(rb, eb);
    EXPECT_EQ(a->zeros(), on_demand_a->zeros());
    EXPECT_EQ(b->zeros(), on_demand_b->zeros());
    EXPECT_EQ(a->produced_bytes(), kBytes);
    const auto st = producer->stats();  // 2 + 1 chunks taken, wherever they came from
    EXPECT_EQ(st.ready + st.waited + st.by_reader, 3u);
    if (ahead == 0) {
      EXPECT_EQ(st.by_reader, 3u);
    }
    // Backwards (chunks already passed are produced again): same bytes.
    std::vector<std::uint8_t> back(kBytes);
    for (std::uint64_t off = kBytes; off > 0;) {
      const std::uint64_t start = off >= 4096 ? off - 4096 : 0;
      tensor_source_region(a).read(start, back.data() + start, static_cast<std::size_t>(off - start));
      off = start;
    }
    EXPECT_EQ(back, ra);
    // The recorded checksums accept the right bytes and catch a wrong one.
    std::vector<std::uint8_t> w = ra;
    w[70000] ^= 0x04;
    tensor_sink_region(a).write(0, w.data(), w.size());
    EXPECT_EQ(a->mismatched_bytes(), 1u);
    tensor_sink_region(b).write(0, rb.data(), rb.size());
    EXPECT_EQ(b->mismatched_bytes(), 0u);
  }
}

TEST(TensorCheck, TheSourcesErrorReachesTheReaderWithOrWithoutLookahead) {
  failing_source src;
  for (std::size_t ahead : {0u, 4u}) {
    SCOPED_TRACE(ahead);
    auto producer = std::make_shared<chunk_producer>(src, ahead, true, 2);
    auto rec = std::make_shared<tensor_record>(producer, "bad", kShape);
    std::vector<std::uint8_t> buf(4096);
    tensor_source_region region(rec);
    region.read(0, buf.data(), buf.size());  // chunk 0 is fine
    try {
      region.read(65536, buf.data(), 16);
      FAIL() << "expected activation_error";
    } catch (const activation_error& e) {
      EXPECT_NE(std::string(e.what()).find("tensor 'bad'"), std::string::npos) << e.what();
    }
    EXPECT_THROW(producer->take(12345, 0), std::out_of_range);  // unknown tensor id
  }
}

namespace {
// A source that does not allow concurrent fill() calls (like a real activations file with its
// tensor cache) and records whether two calls ever overlapped.
class serial_source : public synthetic_activation_source {
public:
  serial_source() : synthetic_activation_source(0.5, 3) {}
  bool concurrent_fill() const override { return false; }
  void fill(const std::string& key, const tensor_shape& shape, std::uint64_t offset,
            std::uint8_t* out, std::size_t len) override {
    if (inside_.exchange(true)) overlapped_ = true;
    synthetic_activation_source::fill(key, shape, offset, out, len);
    inside_ = false;
  }
  bool overlapped() const { return overlapped_; }

private:
  std::atomic<bool> inside_{false}, overlapped_{false};
};
}  // namespace

TEST(TensorCheck, ASourceWithoutConcurrentFillGetsOneWorkerAndNeverOverlappingCalls) {
  serial_source src;
  synthetic_activation_source same(0.5, 3);
  auto producer = std::make_shared<chunk_producer>(src, 8, true, 4);
  EXPECT_EQ(producer->threads(), 1u);  // 4 asked, 1 started: more would only wait for the lock
  const tensor_shape big{2, 16, 56, 56};  // 401408 bytes: 7 chunks
  auto rec = std::make_shared<tensor_record>(producer, "big", big);
  std::vector<std::uint8_t> got(big.elements() * 4), want(got.size());
  for (std::uint64_t off = 0; off < got.size(); off += 4096)
    tensor_source_region(rec).read(off, got.data() + off, 4096);
  same.fill("big", big, 0, want.data(), want.size());
  EXPECT_EQ(got, want);
  EXPECT_FALSE(src.overlapped());
  EXPECT_EQ(chunk_producer(same, 8, true, 3).threads(), 3u);  // synthetic: concurrent
  EXPECT_THROW(chunk_producer(same, 8, true, 0), std::invalid_argument);
}

TEST(TensorCheck, AProducerStopsCleanlyWithWorkQueuedAndStillServesReadsAfterStop) {
  synthetic_activation_source src(0.5, 2);
  const tensor_shape big{4, 64, 56, 56};  // 3.2 MB: 49 chunks
  {
    chunk_producer p(src, 64, true, 2);
    const std::uint64_t id = p.open("big", big);  // 49 chunks queued
    p.close(id);
    p.open("big", big);
  }  // destroyed with work queued: joins without producing it all, no hang
  auto producer = std::make_shared<chunk_producer>(src, 8);
  auto rec = std::make_shared<tensor_record>(producer, "t", kShape);
  producer->stop();
  producer->stop();  // idempotent
  std::vector<std::uint8_t> got(kBytes);
  tensor_source_region(rec).read(0, got.data(), got.size());
  EXPECT_EQ(got, expected(src));
}

namespace {
// A concurrent source whose fill() of chunk 0 (offset 0) waits until another chunk has been
// filled: a reader that wants chunk 0 while a worker produces it must produce other queued
// chunks meanwhile. Without that nobody fills another chunk: after 10 s the wait gives up
// and records it (the test then fails instead of hanging).
class gated_source : public synthetic_activation_source {
public:
  gated_source() : synthetic_activation_source(0.5, 9) {}
  void fill(const std::string& key, const tensor_shape& shape, std::uint64_t offset,
            std::uint8_t* out, std::size_t len) override {
    if (offset == 0) {
      first_started_ = true;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!other_filled_ && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!other_filled_) gave_up_ = true;
    } else {
      other_filled_ = true;
    }
    synthetic_activation_source::fill(key, shape, offset, out, len);
  }
  std::atomic<bool> first_started_{false}, other_filled_{false}, gave_up_{false};
};
}  // namespace

TEST(TensorCheck, AReaderWaitingForAChunkBeingProducedProducesQueuedChunksMeanwhile) {
  gated_source src;
  synthetic_activation_source same(0.5, 9);
  chunk_producer p(src, 4, true, 1);  // one worker: chunks 0..3 queued, the worker takes 0
  const tensor_shape big{2, 16, 56, 56};  // 401408 bytes: 7 chunks
  const std::uint64_t id = p.open("big", big);
  while (!src.first_started_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<std::uint8_t> want(big.elements() * 4);
  same.fill("big", big, 0, want.data(), want.size());
  for (std::uint64_t c = 0; c < 7; ++c) {
    const auto ch = p.take(id, c);
    const std::size_t off = static_cast<std::size_t>(c * chunk_producer::chunk_bytes);
    ASSERT_EQ(ch->len, std::min<std::size_t>(chunk_producer::chunk_bytes, want.size() - off));
    EXPECT_EQ(0, std::memcmp(ch->data.data(), want.data() + off, ch->len)) << "chunk " << c;
  }
  EXPECT_FALSE(src.gave_up_) << "chunk 0 waited 10 s: the reader did not produce other chunks meanwhile";
  const chunk_producer::counts n = p.stats();
  EXPECT_GE(n.waited, 1u);      // chunk 0 (at least): being produced by the worker when taken
  EXPECT_GE(n.stolen, 1u);      // chunk 1 (at least) produced by the reader meanwhile
  EXPECT_EQ(n.ready + n.waited + n.by_reader, 7u);
}

TEST(TensorCheck, ZeroWordCountIsTheSameOnEveryPathForEveryLengthAndAlignment) {
  // Words that are zero and words that only look like it: -0.0f (0x80000000), and words with
  // one to three zero bytes (each position), mixed with pseudo-random words and zero runs.
  const std::uint32_t near_zero[] = {0x80000000u, 0x00000001u, 0x00000100u, 0x00010000u, 0x01000000u,
                                     0x00FF0000u, 0xFF000000u, 0x000000FFu, 0x00800000u};
  std::vector<std::uint8_t> buf(3 * 4096 + 64);
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (std::size_t k = 0; k + 4 <= buf.size(); k += 4) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    std::uint32_t v = static_cast<std::uint32_t>(x >> 32);
    const unsigned pick = static_cast<unsigned>(x & 15);
    if (pick < 6 || (k / 4) % 97 < 40) v = 0;  // ~40 % isolated zeros, and runs of 40 words
    else if (pick < 9) v = near_zero[(x >> 8) % (sizeof near_zero / sizeof near_zero[0])];
    std::memcpy(buf.data() + k, &v, 4);
  }
  // Independent count: 4-byte groups from p whose bytes are all 0x00.
  auto plain = [](const std::uint8_t* p, std::size_t n) {
    std::uint32_t z = 0;
    for (std::size_t k = 0; k + 4 <= n; k += 4) z += p[k] == 0 && p[k + 1] == 0 && p[k + 2] == 0 && p[k + 3] == 0;
    return z;
  };
  std::vector<zero_count_isa> paths{zero_count_isa::scalar};
  for (zero_count_isa isa : {zero_count_isa::avx2, zero_count_isa::avx512})
    if (zero_count_supported(isa)) paths.push_back(isa);
  EXPECT_TRUE(zero_count_supported(zero_count_best()));
  std::uint64_t total_zero = 0, checked = 0;
  for (std::size_t align = 0; align < 4; ++align)
    for (std::size_t n = 0; n <= 2 * 4096 + 7; n += (n < 600 ? 1 : 37)) {
      const std::uint8_t* p = buf.data() + align;
      const std::uint32_t want = plain(p, n);
      total_zero += want;
      ++checked;
      EXPECT_EQ(count_zero_words(p, n), want) << "n " << n << " align " << align;
      for (zero_count_isa isa : paths) EXPECT_EQ(count_zero_words(p, n, isa), want) << "n " << n << " align " << align;
    }
  EXPECT_GT(total_zero, checked);  // the pattern does hold zeros (and the lengths reach them)
  // A whole granule of zeros, and of -0.0f.
  std::vector<std::uint8_t> zeros(4096, 0), minus_zero(4096);
  for (std::size_t k = 0; k < 4096; k += 4) minus_zero[k + 3] = 0x80;
  for (zero_count_isa isa : paths) {
    EXPECT_EQ(count_zero_words(zeros.data(), 4096, isa), 1024u);
    EXPECT_EQ(count_zero_words(minus_zero.data(), 4096, isa), 0u);
  }
}
