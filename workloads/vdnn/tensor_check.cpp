#include "workloads/vdnn/tensor_check.h"
#include "tlm/core/prefetch.h"
#include "tlm/core/worker_thread.h"

// xxh_x86dispatch.h maps XXH3_64bits to XXH3_64bits_dispatch: the same hash, computed with the
// widest vector unit the CPU has (AVX2 here) instead of the library's baseline SSE2/scalar
// build (Debian libxxhash: 5 GB/s -> 17 GB/s on 4 KiB granules; every offloaded and every
// prefetched granule is hashed once).
#if defined(__x86_64__) || defined(__i386__)
#include <xxh_x86dispatch.h>
#else
#include <xxhash.h>
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CDMA_ZERO_COUNT_X86 1
#include <immintrin.h>
#else
#define CDMA_ZERO_COUNT_X86 0
#endif

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace cdma::workloads {

namespace {
std::uint64_t checksum(const std::uint8_t* p, std::size_t n) {
  const std::uint64_t h = XXH3_64bits(p, n);
  return h ? h : 1;  // 0 marks "not recorded"
}

// ---- zero-word count (count_zero_words) -----------------------------------------------------

std::uint32_t count_scalar(const std::uint8_t* p, std::size_t n) {
  // A 32-bit counter and a word-indexed loop let the compiler vectorise it with the baseline
  // ISA (SSE2: one compare and one subtract per 4 words).
  std::uint32_t z = 0;
  const std::size_t words = n / 4;
  for (std::size_t k = 0; k < words; ++k) {
    std::uint32_t v;
    std::memcpy(&v, p + 4 * k, 4);
    z += (v == 0);
  }
  return z;
}

#if CDMA_ZERO_COUNT_X86
// Compiled for AVX2 / AVX-512 in these functions only (target attributes): the build stays
// portable, zero_count_best() picks a path the running CPU has.
__attribute__((target("avx2"))) std::uint32_t count_avx2(const std::uint8_t* p, std::size_t n) {
  const std::size_t words = n / 4;
  const __m256i zero = _mm256_setzero_si256();
  __m256i a0 = zero, a1 = zero, a2 = zero, a3 = zero;  // per lane: -(zero words seen)
  std::size_t k = 0;
  for (; k + 32 <= words; k += 32) {  // 128 bytes per iteration, 4 independent sums
    const auto* q = reinterpret_cast<const __m256i*>(p + 4 * k);
    a0 = _mm256_add_epi32(a0, _mm256_cmpeq_epi32(_mm256_loadu_si256(q + 0), zero));
    a1 = _mm256_add_epi32(a1, _mm256_cmpeq_epi32(_mm256_loadu_si256(q + 1), zero));
    a2 = _mm256_add_epi32(a2, _mm256_cmpeq_epi32(_mm256_loadu_si256(q + 2), zero));
    a3 = _mm256_add_epi32(a3, _mm256_cmpeq_epi32(_mm256_loadu_si256(q + 3), zero));
  }
  const __m256i s = _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3));
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
  // Each matching lane added -1 (all ones): the count is the negated sum (mod 2^32).
  const std::uint32_t z = 0u - static_cast<std::uint32_t>(_mm_cvtsi128_si32(h));
  return z + count_scalar(p + 4 * k, n - 4 * k);
}

__attribute__((target("avx512f"))) std::uint32_t count_avx512(const std::uint8_t* p, std::size_t n) {
  const std::size_t words = n / 4;
  const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
  __m512i a0 = zero, a1 = zero;  // per lane: zero words seen
  std::size_t k = 0;
  for (; k + 32 <= words; k += 32) {  // 128 bytes per iteration, 2 independent sums
    const __m512i v0 = _mm512_loadu_si512(p + 4 * k), v1 = _mm512_loadu_si512(p + 4 * k + 64);
    a0 = _mm512_mask_add_epi32(a0, _mm512_cmpeq_epi32_mask(v0, zero), a0, one);
    a1 = _mm512_mask_add_epi32(a1, _mm512_cmpeq_epi32_mask(v1, zero), a1, one);
  }
  // (Not _mm512_reduce_add_epi32: GCC 12 warns about its undefined upper halves.)
  std::uint32_t lanes[16];
  _mm512_storeu_si512(lanes, _mm512_add_epi32(a0, a1));
  std::uint32_t z = 0;
  for (const std::uint32_t l : lanes) z += l;
  return z + count_scalar(p + 4 * k, n - 4 * k);
}
#endif

bool supported(zero_count_isa isa) {
  switch (isa) {
    case zero_count_isa::scalar: return true;
#if CDMA_ZERO_COUNT_X86
    case zero_count_isa::avx2: return __builtin_cpu_supports("avx2");
    case zero_count_isa::avx512: return __builtin_cpu_supports("avx512f");
#else
    case zero_count_isa::avx2:
    case zero_count_isa::avx512: return false;
#endif
  }
  return false;
}

}  // namespace

bool zero_count_supported(zero_count_isa isa) { return supported(isa); }

zero_count_isa zero_count_best() {
  static const zero_count_isa best = zero_count_supported(zero_count_isa::avx512) ? zero_count_isa::avx512
                                     : zero_count_supported(zero_count_isa::avx2) ? zero_count_isa::avx2
                                                                                  : zero_count_isa::scalar;
  return best;
}

std::uint32_t count_zero_words(const std::uint8_t* p, std::size_t n, zero_count_isa isa) {
  if (!zero_count_supported(isa))
    throw std::invalid_argument("count_zero_words: this CPU or build has no such instruction-set path");
  switch (isa) {
#if CDMA_ZERO_COUNT_X86
    case zero_count_isa::avx2: return count_avx2(p, n);
    case zero_count_isa::avx512: return count_avx512(p, n);
#endif
    default: return count_scalar(p, n);
  }
}

std::uint32_t count_zero_words(const std::uint8_t* p, std::size_t n) {
  using fn = std::uint32_t (*)(const std::uint8_t*, std::size_t);
  static const fn best = [] {
#if CDMA_ZERO_COUNT_X86
    switch (zero_count_best()) {
      case zero_count_isa::avx512: return fn(count_avx512);
      case zero_count_isa::avx2: return fn(count_avx2);
      default: break;
    }
#endif
    return fn(count_scalar);
  }();
  return best(p, n);
}

// ---- chunk_producer ------------------------------------------------------------------------

static_assert(chunk_producer::granule_bytes == tensor_record::granule_bytes);
static_assert(chunk_producer::chunk_bytes % chunk_producer::granule_bytes == 0);

chunk_producer::chunk_producer(activation_source& source, std::size_t lookahead, bool digest,
                               unsigned threads)
    : source_(source), lookahead_(lookahead), digest_(digest), concurrent_(source.concurrent_fill()) {
  if (threads == 0) throw std::invalid_argument("chunk_producer: threads must be >= 1");
  if (lookahead_ == 0) return;
  const unsigned n = concurrent_ ? threads : 1;
  for (unsigned k = 0; k < n; ++k) threads_.push_back(start_worker_thread([this] { worker(); }, "cdma-produce"));
}

chunk_producer::~chunk_producer() { stop(); }

void chunk_producer::stop() {
  {
    std::lock_guard<std::mutex> g(lock_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

std::uint64_t chunk_producer::open(const std::string& key, const tensor_shape& shape) {
  std::lock_guard<std::mutex> g(lock_);
  const std::uint64_t id = next_id_++;
  tensor& t = tensors_[id];
  t.key = key;
  t.shape = shape;
  t.chunks = (shape.elements() * 4 + chunk_bytes - 1) / chunk_bytes;
  queue_upto(id, t, lookahead_);
  return id;
}

void chunk_producer::close(std::uint64_t id) {
  std::lock_guard<std::mutex> g(lock_);
  auto it = tensors_.find(id);
  if (it == tensors_.end()) return;
  for (auto& [c, j] : it->second.jobs)
    if (j->state == job_state::queued) j->state = job_state::dropped;
  tensors_.erase(it);
}

void chunk_producer::queue_upto(std::uint64_t id, tensor& t, std::uint64_t end) {
  if (lookahead_ == 0) return;
  end = std::min(end, t.chunks);
  std::size_t queued = 0;
  for (; t.next_queue < end; ++t.next_queue) {
    auto j = std::make_shared<job>();
    j->tensor = id;
    j->index = t.next_queue;
    t.jobs.emplace(t.next_queue, j);
    queue_.push_back(std::move(j));
    ++queued;
  }
  // Wake as many idle workers as there are new jobs, counting those woken already that have
  // not run yet (a futex call each; none while they all work).
  const std::size_t asleep = workers_idle_ - std::min(workers_idle_, wakes_pending_);
  for (std::size_t k = std::min(queued, asleep); k > 0; --k) {
    ++wakes_pending_;
    work_cv_.notify_one();
  }
}

void chunk_producer::produce(job& j, const std::string& key, const tensor_shape& shape,
                             std::uint64_t chunks) {
  try {
    if (j.index >= chunks) throw std::out_of_range("chunk index past the tensor's end");
    std::unique_ptr<chunk> ch;
    {
      std::lock_guard<std::mutex> g(lock_);
      if (!spare_.empty()) {
        ch = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    if (!ch) ch = std::make_unique<chunk>();
    const std::uint64_t bytes = shape.elements() * 4, off = j.index * chunk_bytes;
    ch->len = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, bytes - off));
    ch->data.resize(chunk_bytes);
    if (concurrent_) {
      source_.fill(key, shape, off, ch->data.data(), ch->len);
    } else {
      std::lock_guard<std::mutex> g(fill_lock_);
      source_.fill(key, shape, off, ch->data.data(), ch->len);
    }
    ch->hash.clear();
    ch->zeros.clear();
    if (digest_)
      for (std::size_t k = 0; k < ch->len; k += granule_bytes) {
        const std::size_t len = std::min(granule_bytes, ch->len - k);
        ch->hash.push_back(checksum(ch->data.data() + k, len));
        ch->zeros.push_back(count_zero_words(ch->data.data() + k, len));
      }
    j.result = std::move(ch);
  } catch (...) {
    j.error = std::current_exception();
  }
}

void chunk_producer::worker() {
  std::unique_lock<std::mutex> g(lock_);
  for (;;) {
    ++workers_idle_;
    work_cv_.wait(g, [this] { return stop_ || !queue_.empty(); });
    --workers_idle_;
    if (wakes_pending_) --wakes_pending_;
    if (stop_) return;
    run_queued(g);
  }
}

bool chunk_producer::run_queued(std::unique_lock<std::mutex>& g) {
  while (!queue_.empty()) {
    std::shared_ptr<job> j = std::move(queue_.front());
    queue_.pop_front();
    if (j->state != job_state::queued) continue;  // taken or dropped
    auto t = tensors_.find(j->tensor);
    if (t == tensors_.end()) continue;
    j->state = job_state::running;
    const std::string key = t->second.key;
    const tensor_shape shape = t->second.shape;
    const std::uint64_t chunks = t->second.chunks;
    g.unlock();
    produce(*j, key, shape, chunks);
    g.lock();
    j->state = job_state::done;
    if (takers_waiting_) done_cv_.notify_all();
    return true;
  }
  return false;
}

std::unique_ptr<chunk_producer::chunk> chunk_producer::take(std::uint64_t id, std::uint64_t c) {
  std::unique_lock<std::mutex> g(lock_);
  auto it = tensors_.find(id);
  if (it == tensors_.end()) throw std::out_of_range("chunk_producer: unknown tensor id " + std::to_string(id));
  tensor& t = it->second;
  if (c >= t.chunks)
    throw std::out_of_range("chunk_producer: chunk " + std::to_string(c) + " of tensor '" + t.key + "' (" +
                            std::to_string(t.chunks) + " chunks)");
  std::shared_ptr<job> j;
  if (auto f = t.jobs.find(c); f != t.jobs.end()) {
    j = f->second;
    t.jobs.erase(f);
  }
  // Chunks before c were skipped by a reader moving forward: drop them (a later read of one
  // produces it again). Keep the worker `lookahead` chunks ahead of the reader.
  for (auto f = t.jobs.begin(); f != t.jobs.end() && f->first < c;) {
    if (f->second->state == job_state::queued) f->second->state = job_state::dropped;
    f = t.jobs.erase(f);
  }
  // Keep the workers up to `lookahead` chunks ahead of the reader, queued in batches: once
  // the lead falls to half of it (not after every chunk: each refill may wake a worker, a
  // futex call and a context switch each, ~4 per 64 KiB chunk on the VMs measured).
  if (t.next_queue < c + 1 + (lookahead_ + 1) / 2) queue_upto(id, t, c + 1 + lookahead_);
  if (j && j->state == job_state::queued) j->state = job_state::dropped;  // not started: produce here
  if (j && j->state == job_state::done) ++stats_.ready;
  if (j && j->state == job_state::running) {
    ++stats_.waited;
    // A worker is producing chunk c: rather than sleep until it is done (a futex wait and a
    // wake-up each, ~1/3 of the chunks at VGG-16 b64 on 2 busy cores), produce the oldest
    // queued chunks here meanwhile (the workers skip a job once it is not queued; take()
    // later finds it done). Only with a concurrent_fill() source: otherwise the worker
    // holds the source's lock and producing here would wait for it anyway.
    while (concurrent_ && j->state == job_state::running && run_queued(g)) ++stats_.stolen;
    if (j->state == job_state::running) {
      ++takers_waiting_;
      done_cv_.wait(g, [&] { return j->state == job_state::done; });
      --takers_waiting_;
    }
  }
  if (!j || j->state != job_state::done) {
    ++stats_.by_reader;
    const std::string key = t.key;
    const tensor_shape shape = t.shape;
    const std::uint64_t chunks = t.chunks;
    g.unlock();
    j = std::make_shared<job>();
    j->index = c;
    produce(*j, key, shape, chunks);
  } else {
    g.unlock();
  }
  if (j->error) std::rethrow_exception(j->error);
  return std::move(j->result);
}

void chunk_producer::recycle(std::unique_ptr<chunk> ch) {
  if (!ch) return;
  std::lock_guard<std::mutex> g(lock_);
  if (spare_.size() < 2 * lookahead_ + 2) spare_.push_back(std::move(ch));
}

void chunk_producer::fill(const std::string& key, const tensor_shape& shape, std::uint64_t offset,
                          std::uint8_t* out, std::size_t len) {
  if (concurrent_) return source_.fill(key, shape, offset, out, len);
  std::lock_guard<std::mutex> g(fill_lock_);
  source_.fill(key, shape, offset, out, len);
}

// ---- tensor_record -------------------------------------------------------------------------

tensor_record::tensor_record(activation_source& source, std::string key, tensor_shape shape)
    : tensor_record(std::make_shared<chunk_producer>(source, 0), std::move(key), shape) {}

tensor_record::tensor_record(std::shared_ptr<chunk_producer> producer, std::string key, tensor_shape shape)
    : producer_(std::move(producer)), key_(std::move(key)), shape_(shape), bytes_(shape.elements() * 4) {
  const std::uint64_t n = (bytes_ + granule_bytes - 1) / granule_bytes;
  hash_.assign(static_cast<std::size_t>(n), 0);
  written_.assign(static_cast<std::size_t>(n), false);
  id_ = producer_->open(key_, shape_);
}

tensor_record::~tensor_record() {
  producer_->close(id_);
  producer_->recycle(std::move(chunk_));
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
  producer_->recycle(std::move(chunk_));
  chunk_index_ = ~0ull;
  chunk_ = producer_->take(id_, c);
  const std::uint64_t off = c * chunk_bytes_;
  const std::size_t n = chunk_->len;
  for (std::size_t k = 0, i = 0; k < n; k += granule_bytes, ++i) {
    const std::uint64_t g = (off + k) / granule_bytes;
    if (hash_[g]) continue;
    hash_[g] = chunk_->hash[i];
    zeros_ += chunk_->zeros[i];
    produced_bytes_ += std::min(granule_bytes, n - k);
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
    std::memcpy(dst, chunk_->data.data() + in, n);
    offset += n;
    dst += n;
    len -= n;
  }
  // The engine reads a tensor window after window: its next window is requested into the
  // cache now (the chunk was written by a producer thread on another core).
  // Only the lines an earlier call did not request, inside the loaded chunk.
  const std::size_t next = static_cast<std::size_t>(offset % chunk_bytes_);
  if (next != 0 && offset < bytes_) {
    const std::uint64_t stop = std::min<std::uint64_t>({offset + 4096, offset - next + chunk_bytes_, bytes_});
    const std::uint64_t start = prefetched_ > offset && prefetched_ <= stop ? prefetched_ : offset;
    if (start < stop) {
      prefetch_range(chunk_->data.data() + (start - (offset - next)), static_cast<std::size_t>(stop - start), false);
      prefetched_ = stop;
    }
  }
}

void tensor_record::regenerate(std::uint64_t g, std::uint8_t* out) {
  producer_->fill(key_, shape_, g * granule_bytes, out, static_cast<std::size_t>(granule_len(g)));
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
