// Codec throughput benchmark (Google Benchmark), docs/codecs.md "Speed".
//
// Every codec compresses and decompresses in independent 4 KiB windows, as the cDMA engine does,
// in two cache regimes; the reference memcpy copies the same 4 KiB windows of the same buffer in
// the same regime, in the same run:
//  * stream: the whole data set (32 MiB synthetic, or a whole .npz of real activations
//    concatenated and repeated whole up to at least 32 MiB), each window once per pass:
//    source and destination are far beyond L2/L3, so every run is bound by DRAM bandwidth (data set name "<data>").
//  * l2: 32 windows (128 KiB) sampled evenly across the whole data set and copied into one
//    contiguous buffer, processed over and over: source and destination stay in L2 (512 KiB),
//    as in the engine, which stages each window in a 4 KiB buffer (data set name
//    "<data>@l2"). This measures the kernels, not the memory (only roughly: the memcpy and codec
//    passes together touch about 400 KiB of a 512 KiB L2 shared with the SMT sibling).
//  * engine: the regime of tlm/cdma/cdma_engine.cpp, on the whole data set: per window, the TLM
//    read copies the input (compressed window for prefetch, uncompressed for offload) into the
//    engine's resident in_buf_, compress_window / decompress_window runs in_buf_ -> out_buf_
//    (framing and raw fallback included), and the TLM write copies out_buf_ into the destination
//    store (data set name "<data>@engine"; see bm_engine_decompress). Reported in a second
//    table: the codec call alone and the whole per-window loop, each against memcpy and zstd-1
//    measured the same way.
// Decompression in the stream and l2 regimes decodes each pass with one
// codec::decompress_windows call (window by window, as a whole tensor is decoded; only
// zvc-nt, zvc_store::streaming, uses it to issue one store fence per pass instead of one per
// window); the row zvc-nt1 is zvc-nt called once per window (one fence per window).
// Throughput is uncompressed bytes per CPU second; at the end a table gives each codec's
// throughput as a ratio to that memcpy, per data set and regime, using the MEDIAN of the
// repetitions (--benchmark_repetitions=N; the machine may be shared).
//
// Data sets: synthetic fp32 with i.i.d. zeros at densities 0.05, 0.3, 0.5, 0.7, 1.0 (nonzero
// values uniform in [0.5, 2)); the shipped sample workloads/data/inception_v3/chelsea.npz; the
// real activation files in ../shared/data (skipped when absent).
//
// Usage: codec_bench [--benchmark_filter=REGEX] [--benchmark_min_time=0.1]
//                    [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <time.h>

#include <x86intrin.h>

#include "tlm/codec/codec.h"
#include "tlm/codec/window.h"
#include "tlm/codec/zvc.h"
#include "workloads/io/npy.h"

namespace {

using namespace cdma::codec;
constexpr std::size_t kWindow = 4096;
constexpr std::size_t kSynthBytes = 32u << 20;
constexpr std::size_t kL2Windows = 32;  // l2 regime: 128 KiB of source
constexpr int kEnginePasses = 5;        // engine regime: passes per repetition

struct dataset {
  std::string name;
  std::string path;       // .npz, or empty for synthetic
  double density = 0;     // synthetic
  dataset* l2_of = nullptr;  // l2 regime: sample of this (streaming) data set
  dataset* engine_of = nullptr;  // engine regime: the same bytes as this (streaming) data set
  std::vector<std::uint8_t> data;
  bool loaded = false;
};

std::vector<std::unique_ptr<dataset>>& datasets() {
  static std::vector<std::unique_ptr<dataset>> d;
  return d;
}

const std::vector<std::uint8_t>& load(dataset& d) {
  if (d.engine_of) return load(*d.engine_of);  // same bytes, not copied
  if (d.loaded) return d.data;
  d.loaded = true;
  if (d.l2_of) {
    const auto& all = load(*d.l2_of);
    const std::size_t nwin = all.size() / kWindow;
    d.data.resize(kL2Windows * kWindow);
    for (std::size_t k = 0; k < kL2Windows; ++k)
      std::memcpy(&d.data[k * kWindow], &all[(k * nwin / kL2Windows) * kWindow], kWindow);
  } else if (d.path.empty()) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(0, 1), val(0.5f, 2.0f);
    const std::size_t e = kSynthBytes / 4;
    d.data.resize(kSynthBytes);
    for (std::size_t i = 0; i < e; ++i) {
      const float f = u(rng) < d.density ? val(rng) : 0.0f;
      std::memcpy(&d.data[4 * i], &f, 4);
    }
  } else {
    const cdma::workloads::npz_archive z(d.path);
    for (const auto& k : z.keys()) {
      const auto a = z.read(k);
      d.data.insert(d.data.end(), a.data.begin(), a.data.end());
    }
    // Stream regime must be beyond L3 (32 MiB on the development machine) for memcpy and codec
    // alike: a smaller set (fmnist: 8.5 MiB, mobilenet_v2: 23 MiB) is repeated whole until it
    // is at least kSynthBytes, as the synthetic sets are. Otherwise source and destination of
    // the paired passes partly stay in L3 and the ratio depends on which pass evicts whom.
    const std::size_t one = d.data.size();
    while (one > 0 && d.data.size() < kSynthBytes)
      d.data.insert(d.data.end(), d.data.begin(), d.data.begin() + static_cast<std::ptrdiff_t>(one));
  }
  return d.data;
}

struct codec_case {
  std::string name;
  std::function<std::unique_ptr<codec>()> make;
  // Experiment rows (decompress only, every regime): output windows 64-byte aligned (the
  // engine regime's out_buf is 64-byte aligned for every row).
  bool experiment = false;
  // Stream and l2 rows decode a pass with one codec::decompress_windows call (the whole data
  // set, window by window; for zvc-nt one store fence per pass). per_call: one decompress()
  // call per window instead (zvc-nt1: one fence per window).
  bool per_call = false;
};

std::vector<codec_case> codec_cases() {
  std::vector<codec_case> v;
  v.push_back({"zvc", [] { return std::make_unique<zvc_codec>(4); }});
  v.push_back({"zvc-scalar", [] { return std::make_unique<zvc_codec>(4, zvc_isa::scalar); }});
  if (zvc_isa_supported(zvc_isa::avx2))
    v.push_back({"zvc-avx2", [] { return std::make_unique<zvc_codec>(4, zvc_isa::avx2); }});
  if (zvc_isa_supported(zvc_isa::avx512))
    v.push_back({"zvc-avx512", [] { return std::make_unique<zvc_codec>(4, zvc_isa::avx512); }});
  if (zvc_isa_supported(zvc_isa::avx2)) {
    // zvc_store::streaming (non-temporal stores) and its control (the same 64-byte aligned
    // output, cached stores), both on the AVX2 path (streaming is implemented there only).
    v.push_back({"zvc-a64", [] { return std::make_unique<zvc_codec>(4, zvc_isa::avx2); }, true});
    v.push_back({"zvc-nt", [] {
                   return std::make_unique<zvc_codec>(4, zvc_isa::avx2, zvc_store::streaming);
                 }, true});
    v.push_back({"zvc-nt1", [] {
                   return std::make_unique<zvc_codec>(4, zvc_isa::avx2, zvc_store::streaming);
                 }, true, true});
  }
  v.push_back({"rle", [] { return make_codec(codec_id::rle, 4); }});
  v.push_back({"lz4", [] { return make_codec(codec_id::lz4, 4); }});
  v.push_back({"zstd-1", [] { return make_codec(codec_id::zstd, 4); }});
  v.push_back({"zlib-1", [] {
                 codec_params p;
                 p.zlib_level = 1;
                 return make_codec(codec_id::zlib, 4, p);
               }});
  v.push_back({"zlib-6", [] { return make_codec(codec_id::zlib, 4); }});
  return v;
}

double thread_cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// One memcpy pass over the same 4 KiB windows (the paired reference of every codec run).
void memcpy_pass(const std::vector<std::uint8_t>& src, std::vector<std::uint8_t>& dst) {
  for (std::size_t off = 0; off < src.size(); off += kWindow)
    std::memcpy(dst.data() + off, src.data() + off, std::min(kWindow, src.size() - off));
  benchmark::DoNotOptimize(dst.data());
  benchmark::ClobberMemory();
}

// Every iteration of a codec benchmark runs one memcpy pass and one codec pass, each timed in
// thread CPU time: "x_memcpy" is the ratio of the two sums, so slow drifts of the shared
// machine's load hit both sides alike. The reported time covers both passes; bytes_per_second
// and "codec_Bps" / "memcpy_Bps" are computed from the timed passes alone.
struct paired_clock {
  double codec = 0, copy = 0;
  void report(benchmark::State& st, std::size_t bytes) const {
    const double b = double(st.iterations()) * double(bytes);
    st.counters["codec_Bps"] = codec > 0 ? b / codec : 0;
    st.counters["memcpy_Bps"] = copy > 0 ? b / copy : 0;
    st.counters["x_memcpy"] = codec > 0 ? copy / codec : 0;
  }
};

void bm_memcpy(benchmark::State& st, dataset* d) {
  const auto& src = load(*d);
  std::vector<std::uint8_t> dst(src.size());
  for (auto _ : st) {
    for (std::size_t off = 0; off < src.size(); off += kWindow)
      std::memcpy(dst.data() + off, src.data() + off, std::min(kWindow, src.size() - off));
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * src.size()));
}

// Write-only ceiling of the same regime: memset of every 4 KiB window of a destination as large
// as the data set (no source read). A decoder has to write every output byte, so its speed is
// bounded by this (reported for reference, e.g. for the ZVC-vs-zstd decompress target at low
// density, where the output write is nearly all the work).
void bm_memset(benchmark::State& st, dataset* d) {
  const auto& src = load(*d);
  std::vector<std::uint8_t> dst(src.size());
  for (auto _ : st) {
    for (std::size_t off = 0; off < dst.size(); off += kWindow)
      std::memset(dst.data() + off, 0, std::min(kWindow, dst.size() - off));
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * src.size()));
}

// Compressed stream of every window (compressed form kept even when larger: the codec itself
// is measured, not the raw fallback).
struct compressed {
  std::vector<std::uint8_t> bytes;
  std::vector<std::size_t> offset, size;
};

compressed compress_all(const codec& c, const std::vector<std::uint8_t>& src) {
  compressed z;
  z.bytes.resize(src.size() / kWindow * c.max_compressed_size(kWindow) +
                 c.max_compressed_size(kWindow));
  std::size_t pos = 0;
  for (std::size_t off = 0; off < src.size(); off += kWindow) {
    const std::size_t n = std::min(kWindow, src.size() - off);
    const std::size_t s = c.compress(src.data() + off, n, z.bytes.data() + pos);
    z.offset.push_back(pos);
    z.size.push_back(s);
    pos += s;
  }
  z.bytes.resize(pos);
  return z;
}

void bm_compress(benchmark::State& st, dataset* d, const codec_case* cc) {
  const auto& src = load(*d);
  const auto c = cc->make();
  std::vector<std::uint8_t> dst(src.size() / kWindow * c->max_compressed_size(kWindow) +
                                c->max_compressed_size(kWindow));
  std::vector<std::uint8_t> copy(src.size());
  std::size_t total = 0;
  paired_clock pc;
  for (auto _ : st) {
    double t0 = thread_cpu_seconds();
    memcpy_pass(src, copy);
    double t1 = thread_cpu_seconds();
    std::size_t pos = 0;
    for (std::size_t off = 0; off < src.size(); off += kWindow)
      pos += c->compress(src.data() + off, std::min(kWindow, src.size() - off), dst.data() + pos);
    total = pos;
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
    const double t2 = thread_cpu_seconds();
    pc.copy += t1 - t0;
    pc.codec += t2 - t1;
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * src.size()));
  pc.report(st, src.size());
  st.counters["ratio"] = double(src.size()) / double(total);
}

void bm_decompress(benchmark::State& st, dataset* d, const codec_case* cc) {
  const auto& src = load(*d);
  const auto c = cc->make();
  const compressed z = compress_all(*c, src);
  std::vector<std::uint8_t> dst_buf(src.size() + 64), copy(src.size());
  // Experiment rows write to a 64-byte aligned output (so every 32-byte store of the NT
  // decoder may stream); the other rows keep the vector's own alignment (16 bytes on glibc).
  std::uint8_t* const dst_ptr =
      cc->experiment ? dst_buf.data() + (64 - reinterpret_cast<std::uintptr_t>(dst_buf.data()) % 64) % 64
                     : dst_buf.data();
  paired_clock pc;
  for (auto _ : st) {
    const double t0 = thread_cpu_seconds();
    memcpy_pass(src, copy);
    const double t1 = thread_cpu_seconds();
    if (cc->per_call) {
      std::size_t k = 0;
      for (std::size_t off = 0; off < src.size(); off += kWindow, ++k)
        c->decompress(z.bytes.data() + z.offset[k], z.size[k], dst_ptr + off,
                      std::min(kWindow, src.size() - off));
    } else {
      c->decompress_windows(z.bytes.data(), z.offset.data(), z.size.data(), z.offset.size(),
                            dst_ptr, kWindow, src.size());
    }
    benchmark::DoNotOptimize(dst_ptr);
    benchmark::ClobberMemory();
    const double t2 = thread_cpu_seconds();
    pc.copy += t1 - t0;
    pc.codec += t2 - t1;
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * src.size()));
  pc.report(st, src.size());
  if (std::memcmp(dst_ptr, src.data(), src.size()) != 0) st.SkipWithError("round trip mismatch");
}

// ---- engine regime ("<data>@engine") ----------------------------------------------------------
// What tlm/cdma/cdma_engine.cpp (LT) does per 4 KiB window, on the whole data set (>= 32 MiB,
// far beyond L2/L3):
//   prefetch: TLM read of the window's compressed bytes from the host store into the engine's
//             resident in_buf_ (a memcpy in the memory target), codec::decompress_window(in_buf_
//             -> resident out_buf_), TLM write of out_buf_ into the GPU store (a memcpy);
//   offload:  TLM read of the window from the GPU store into in_buf_, codec::compress_window
//             (in_buf_ -> out_buf_, raw fallback included), TLM write of the stored bytes to
//             the host store, packed.
// (The AT path, cdma_engine_at.cpp, does the same per window with a per-window buffer.)
// The codec therefore always reads and writes cache-resident 4 KiB buffers; the memory streams
// are the two copies around it. Each iteration runs the same loop with memcpy(out_buf, in_buf)
// as the "codec" (the reference) and then with the codec, both timed in thread CPU time
// ("loop" throughput: the whole per-window work of the engine), and the codec call alone is
// timed with the TSC ("slot" throughput: the codec in the cache state the engine gives it).
// Throughput is uncompressed bytes per second in both.

// TSC: plain rdtsc (about 70 ticks = 29 ns each under this KVM; fenced reads cost 2-5x more
// and would distort the loop); frequency calibrated once against CLOCK_MONOTONIC, and the
// median cost of an empty start/stop pair is subtracted from every timed call. The call
// column is therefore approximate (a 4 KiB ZVC call is 150-400 ns); the loop column is not.
inline std::uint64_t tsc() { return __rdtsc(); }
struct tsc_calibration {
  double hz = 0;
  double pair_overhead = 0;  // TSC ticks of an empty start/stop pair (median)
  tsc_calibration() {
    timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    const std::uint64_t t0 = tsc();
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 1e8);
    const std::uint64_t t1 = tsc();
    hz = double(t1 - t0) / ((b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec));
    std::vector<std::uint64_t> d(4001);
    for (auto& x : d) {
      const std::uint64_t s = tsc();
      x = tsc() - s;
    }
    std::nth_element(d.begin(), d.begin() + 2000, d.end());
    pair_overhead = double(d[2000]);
  }
};
const tsc_calibration& tsc_cal() {
  static const tsc_calibration c;
  return c;
}

// loop: thread CPU seconds of all passes. Call: TSC ticks of every codec call, per pass; the
// call time of a pass is the sum over windows of each window's MEDIAN over the passes (wall
// time: a call hit by a preemption of the shared machine is an outlier there and dropped),
// minus the empty-pair overhead per call.
struct engine_clock {
  double loop = 0;
  std::vector<std::vector<std::uint32_t>> passes;
  std::vector<std::uint32_t>* cur = nullptr;
  void begin_pass(std::size_t windows) {
    passes.emplace_back();
    passes.back().reserve(windows);
    cur = &passes.back();
  }
  void add_slot(std::uint64_t ticks) { cur->push_back(static_cast<std::uint32_t>(ticks)); }
  double slot_seconds_per_pass() const {
    if (passes.empty()) return 0;
    double sum = 0;
    std::vector<std::uint32_t> v(passes.size());
    for (std::size_t k = 0; k < passes[0].size(); ++k) {
      for (std::size_t i = 0; i < passes.size(); ++i) v[i] = passes[i][k];
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      sum += std::max(0.0, double(v[v.size() / 2]) - tsc_cal().pair_overhead);
    }
    return sum / tsc_cal().hz;
  }
};

// The engine's two window buffers, 64-byte aligned, in one allocation with out_buf 2 KiB off
// in_buf modulo 4 KiB. Placement matters on this CPU (Zen 3): with out_buf - in_buf = 16 mod
// 4096 (what two consecutive 4 KiB std::vector allocations give) a 4 KiB memcpy(out_buf,
// in_buf) runs 3x slower (14 vs 45 GB/s) and compress_window's raw fallback at density 1.0
// (codec into scratch, then that memcpy) 5-10x slower (1.1-2 vs 9-11 GB/s), 4K aliasing of
// the loads and stores; see docs/codecs.md "Engine regime".
struct engine_buffers {
  std::vector<std::uint8_t> mem;
  std::uint8_t* in = nullptr;
  std::uint8_t* out = nullptr;
  engine_buffers(std::size_t in_cap, std::size_t out_cap) : mem(in_cap + out_cap + 8192 + 64) {
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(mem.data());
    in = mem.data() + (64 - a % 64) % 64;
    const std::size_t in_span = (in_cap + 4095) / 4096 * 4096;
    out = in + in_span + 2048;
  }
};

// One pass of the engine loop over `bytes` in kWindow windows (window k at offset off, n
// bytes): read(k, off, n) is the TLM read into in_buf_, slot(k, off, n) the codec (timed with
// rdtsc into ck's slot), write(k, off, n) the TLM write from out_buf_; the whole loop's thread
// CPU time goes to ck.loop. `keep`: the written data, kept from being optimised away.
template <typename Read, typename Slot, typename Write>
void engine_pass(std::size_t bytes, engine_clock& ck, const std::uint8_t* keep, Read read, Slot slot,
                 Write write) {
  ck.begin_pass(bytes / kWindow + 1);
  const double t0 = thread_cpu_seconds();
  std::size_t k = 0;
  for (std::size_t off = 0; off < bytes; off += kWindow, ++k) {
    const std::size_t n = std::min(kWindow, bytes - off);
    read(k, off, n);
    benchmark::ClobberMemory();
    const std::uint64_t s = tsc();
    slot(k, off, n);
    benchmark::ClobberMemory();
    ck.add_slot(tsc() - s);
    write(k, off, n);
  }
  benchmark::DoNotOptimize(keep);
  benchmark::ClobberMemory();
  ck.loop += thread_cpu_seconds() - t0;
}

// One pass of the engine loop with memcpy(out_buf, in_buf, n) in the codec's slot.
void engine_memcpy_pass(const std::vector<std::uint8_t>& src, std::uint8_t* in_buf,
                        std::uint8_t* out_buf, std::vector<std::uint8_t>& dst, engine_clock& ck) {
  engine_pass(
      src.size(), ck, dst.data(), [&](std::size_t, std::size_t off, std::size_t n) { std::memcpy(in_buf, src.data() + off, n); },
      [&](std::size_t, std::size_t, std::size_t n) { std::memcpy(out_buf, in_buf, n); },
      [&](std::size_t, std::size_t off, std::size_t n) { std::memcpy(dst.data() + off, out_buf, n); });
}

void engine_report(benchmark::State& st, std::size_t bytes, const engine_clock& codec,
                   const engine_clock& copy) {
  const double b = double(st.iterations()) * double(bytes);
  st.counters["codec_Bps"] = codec.loop > 0 ? b / codec.loop : 0;
  st.counters["memcpy_Bps"] = copy.loop > 0 ? b / copy.loop : 0;
  st.counters["x_memcpy"] = codec.loop > 0 ? copy.loop / codec.loop : 0;
  const double cs = codec.slot_seconds_per_pass(), ms = copy.slot_seconds_per_pass();
  st.counters["slot_Bps"] = cs > 0 ? double(bytes) / cs : 0;
  st.counters["slot_memcpy_Bps"] = ms > 0 ? double(bytes) / ms : 0;
  st.counters["x_memcpy_slot"] = cs > 0 ? ms / cs : 0;
}

// Reference row of the engine regime: the memcpy loop alone.
void bm_engine_memcpy(benchmark::State& st, dataset* d) {
  const auto& src = load(*d);
  engine_buffers eb(kWindow, kWindow);
  std::vector<std::uint8_t> dst(src.size());
  engine_clock ck;
  for (auto _ : st) engine_memcpy_pass(src, eb.in, eb.out, dst, ck);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * src.size()));
  engine_report(st, src.size(), ck, ck);
}

void bm_engine_compress(benchmark::State& st, dataset* d, const codec_case* cc) {
  const auto& src = load(*d);
  const auto c = cc->make();
  // Engine buffers (cdma_engine::offload: in_buf_ of W bytes, out_buf_ of max(W, worst case)).
  engine_buffers eb(kWindow, std::max(kWindow, c->max_compressed_size(kWindow)));
  std::uint8_t* const in_buf = eb.in;
  std::uint8_t* const out_buf = eb.out;
  std::vector<std::uint8_t> stream(src.size()), copy(src.size());
  std::size_t total = 0, windows = 0;
  engine_clock ck, ref;
  for (auto _ : st) {
    engine_memcpy_pass(src, in_buf, out_buf, copy, ref);
    std::size_t pos = 0;
    window_entry e{};
    engine_pass(
        src.size(), ck, stream.data(),
        [&](std::size_t, std::size_t off, std::size_t n) { std::memcpy(in_buf, src.data() + off, n); },
        [&](std::size_t, std::size_t, std::size_t n) { e = compress_window(*c, in_buf, n, out_buf); },
        [&](std::size_t, std::size_t, std::size_t) {  // TLM write, packed
          std::memcpy(stream.data() + pos, out_buf, e.bytes);
          pos += e.bytes;
        });
    total = pos;
    windows = (src.size() + kWindow - 1) / kWindow;
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * src.size()));
  engine_report(st, src.size(), ck, ref);
  st.counters["ratio"] = double(src.size()) / double(total + windows * window_entry_bytes);
}

void bm_engine_decompress(benchmark::State& st, dataset* d, const codec_case* cc) {
  const auto& src = load(*d);
  const auto c = cc->make();
  // The framed stream as the engine writes it (compress_window per window, raw fallback).
  std::vector<std::uint8_t> stream(src.size());
  std::vector<window_entry> ents;
  std::vector<std::size_t> offs;
  {
    std::vector<std::uint8_t> out(std::max(kWindow, c->max_compressed_size(kWindow)));
    std::size_t pos = 0;
    for (std::size_t off = 0; off < src.size(); off += kWindow) {
      const std::size_t n = std::min(kWindow, src.size() - off);
      const window_entry e = compress_window(*c, src.data() + off, n, out.data());
      std::memcpy(stream.data() + pos, out.data(), e.bytes);
      ents.push_back(e);
      offs.push_back(pos);
      pos += e.bytes;
    }
    stream.resize(pos);
  }
  // cdma_engine::prefetch: in_buf_ of max(W, worst case), out_buf_ of W bytes.
  engine_buffers eb(std::max(kWindow, c->max_compressed_size(kWindow)), kWindow);
  std::uint8_t* const in_buf = eb.in;
  std::uint8_t* const out_buf = eb.out;
  std::vector<std::uint8_t> dst(src.size()), copy(src.size());
  engine_clock ck, ref;
  for (auto _ : st) {
    engine_memcpy_pass(src, in_buf, out_buf, copy, ref);
    engine_pass(
        src.size(), ck, dst.data(),
        [&](std::size_t k, std::size_t, std::size_t) { std::memcpy(in_buf, stream.data() + offs[k], ents[k].bytes); },
        [&](std::size_t k, std::size_t, std::size_t n) { decompress_window(*c, ents[k], in_buf, ents[k].bytes, out_buf, n); },
        [&](std::size_t, std::size_t off, std::size_t n) { std::memcpy(dst.data() + off, out_buf, n); });
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * src.size()));
  engine_report(st, src.size(), ck, ref);
  if (std::memcmp(dst.data(), src.data(), src.size()) != 0) st.SkipWithError("round trip mismatch");
}

// Prints, after the normal console output, a markdown table of GB/s and ratio to memcpy.
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      std::string name = r.benchmark_name();  // data/codec/op[/iterations:N]
      if (const auto it_pos = name.find("/iterations:"); it_pos != std::string::npos)
        name.erase(it_pos);
      // Codec runs: the timed codec passes and the paired memcpy ratio; memcpy runs: bytes/s.
      auto it = r.counters.find("codec_Bps");
      if (it == r.counters.end()) it = r.counters.find("bytes_per_second");
      if (it == r.counters.end()) continue;
      const auto a = name.find('/'), b = name.rfind('/');
      const std::string data = name.substr(0, a);
      // Median of the repetitions (--benchmark_repetitions=N): the machine may be shared.
      samples_[data][name.substr(a + 1)].push_back(it->second.value);
      const auto xm = r.counters.find("x_memcpy");
      if (xm != r.counters.end()) xsamples_[data][name.substr(a + 1)].push_back(xm->second.value);
      for (const char* extra : {"slot_Bps", "x_memcpy_slot"}) {
        const auto ex = r.counters.find(extra);
        if (ex != r.counters.end()) esamples_[extra][data][name.substr(a + 1)].push_back(ex->second.value);
      }
      const auto rt = r.counters.find("ratio");
      if (rt != r.counters.end()) ratio_[data][name.substr(a + 1, b - a - 1)] = rt->second.value;
      if (std::find(order_.begin(), order_.end(), data) == order_.end()) order_.push_back(data);
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    // x memcpy: median of the paired per-run ratios (codec pass vs the memcpy pass of the same
    // iteration). x zstd-1: ratio of the median throughputs.
    std::printf("\n| data | codec | ratio | compress GB/s | x memcpy | x zstd-1 | decompress GB/s "
                "| x memcpy | x zstd-1 |\n|---|---|---|---|---|---|---|---|---|\n");
    const auto median = [](std::vector<double>& v) {
      std::sort(v.begin(), v.end());
      const std::size_t h = v.size() / 2;
      return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
    };
    for (auto& [data, ops] : samples_)
      for (auto& [op, v] : ops) rows_[data][op] = median(v);
    for (auto& [data, ops] : xsamples_)
      for (auto& [op, v] : ops) xrows_[data][op] = median(v);
    for (auto& [ctr, datas] : esamples_)
      for (auto& [data, ops] : datas)
        for (auto& [op, v] : ops) erows_[ctr][data][op] = median(v);
    const auto is_engine = [](const std::string& data) {
      return data.size() > 7 && data.compare(data.size() - 7, 7, "@engine") == 0;
    };
    for (const auto& data : order_) {
      if (is_engine(data)) continue;
      const auto& r = rows_[data];
      const auto get = [](const std::map<std::string, double>& t, const std::string& k) {
        const auto i = t.find(k);
        return i == t.end() ? 0.0 : i->second;
      };
      // a / b as a table cell with `prec` decimals; blank when b is not measured (e.g. zstd-1
      // left out by --benchmark_filter: it printed 0.0, a ratio never measured).
      const auto div = [](double a, double b, int prec) {
        char buf[32] = "";
        if (b > 0) std::snprintf(buf, sizeof buf, "%.*f", prec, a / b);
        return std::string(buf);
      };
      const double mc = get(r, "memcpy/copy");
      if (mc > 0)
        std::printf("| %s | memcpy (alone) | 1.00 | %.2f | 1.00 | | %.2f | 1.00 | |\n",
                    data.c_str(), mc / 1e9, mc / 1e9);
      const double ms = get(r, "memset/fill");
      if (ms > 0)
        std::printf("| %s | memset (alone, write-only) | | | | | %.2f | %s | |\n", data.c_str(),
                    ms / 1e9, div(ms, mc, 2).c_str());
      const auto& x = xrows_[data];
      const double zc = get(r, "zstd-1/compress"), zd = get(r, "zstd-1/decompress");
      for (const auto& cc : codec_cases()) {
        const double cv = get(r, cc.name + "/compress"), dv = get(r, cc.name + "/decompress");
        if (cv == 0 && dv == 0) continue;
        if (cc.experiment) {  // decompress only
          std::printf("| %s | %s | | | | | %.2f | %.2f | %s |\n", data.c_str(), cc.name.c_str(),
                      dv / 1e9, get(x, cc.name + "/decompress"), div(dv, zd, 1).c_str());
          continue;
        }
        std::printf("| %s | %s | %.2f | %.2f | %.2f | %s | %.2f | %.2f | %s |\n",
                    data.c_str(), cc.name.c_str(), ratio_[data][cc.name], cv / 1e9,
                    get(x, cc.name + "/compress"), div(cv, zc, 1).c_str(), dv / 1e9,
                    get(x, cc.name + "/decompress"), div(dv, zd, 1).c_str());
      }
    }
    // Engine regime: the codec call alone ("call", TSC-timed, paired with memcpy(out_buf,
    // in_buf) in the same slot) and the engine's whole per-window loop ("loop": TLM read copy +
    // codec + TLM write copy, paired with the same loop around a memcpy).
    bool header = false;
    for (const auto& data : order_) {
      if (!is_engine(data)) continue;
      if (!header) {
        std::printf("\n| data | codec | ratio (framed) | compress call GB/s | x memcpy | x zstd-1 "
                    "| compress loop GB/s | x memcpy | x zstd-1 | decompress call GB/s | x memcpy "
                    "| x zstd-1 | decompress loop GB/s | x memcpy | x zstd-1 |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        header = true;
      }
      const auto get = [](const std::map<std::string, double>& t, const std::string& k) {
        const auto i = t.find(k);
        return i == t.end() ? 0.0 : i->second;
      };
      // a / b as a table cell with `prec` decimals; blank when b is not measured (e.g. zstd-1
      // left out by --benchmark_filter: it printed 0.0, a ratio never measured).
      const auto div = [](double a, double b, int prec) {
        char buf[32] = "";
        if (b > 0) std::snprintf(buf, sizeof buf, "%.*f", prec, a / b);
        return std::string(buf);
      };
      const auto& loop = rows_[data];
      const auto& xloop = xrows_[data];
      const auto& call = erows_["slot_Bps"][data];
      const auto& xcall = erows_["x_memcpy_slot"][data];
      const double ml = get(loop, "memcpy/copy"), mc = get(call, "memcpy/copy");
      if (ml > 0)
        std::printf("| %s | memcpy (alone) | 1.00 | %.2f | 1.00 | | %.2f | 1.00 | | %.2f | 1.00 | "
                    "| %.2f | 1.00 | |\n", data.c_str(), mc / 1e9, ml / 1e9, mc / 1e9, ml / 1e9);
      const double zcc = get(call, "zstd-1/compress"), zcl = get(loop, "zstd-1/compress");
      const double zdc = get(call, "zstd-1/decompress"), zdl = get(loop, "zstd-1/decompress");
      for (const auto& cc : codec_cases()) {
        const std::string c = cc.name + "/compress", dd = cc.name + "/decompress";
        if (get(loop, c) == 0 && get(loop, dd) == 0) continue;
        if (cc.experiment) {  // decompress only
          std::printf("| %s | %s | | | | | | | | %.2f | %.2f | %s | %.2f | %.2f | %s |\n",
                      data.c_str(), cc.name.c_str(), get(call, dd) / 1e9, get(xcall, dd),
                      div(get(call, dd), zdc, 1).c_str(), get(loop, dd) / 1e9, get(xloop, dd),
                      div(get(loop, dd), zdl, 1).c_str());
          continue;
        }
        std::printf("| %s | %s | %.2f | %.2f | %.2f | %s | %.2f | %.2f | %s | %.2f | %.2f | "
                    "%s | %.2f | %.2f | %s |\n",
                    data.c_str(), cc.name.c_str(), ratio_[data][cc.name], get(call, c) / 1e9,
                    get(xcall, c), div(get(call, c), zcc, 1).c_str(), get(loop, c) / 1e9, get(xloop, c),
                    div(get(loop, c), zcl, 1).c_str(), get(call, dd) / 1e9, get(xcall, dd),
                    div(get(call, dd), zdc, 1).c_str(), get(loop, dd) / 1e9, get(xloop, dd),
                    div(get(loop, dd), zdl, 1).c_str());
      }
    }
    std::fflush(stdout);
  }

 private:
  std::map<std::string, std::map<std::string, std::map<std::string, std::vector<double>>>> esamples_;
  std::map<std::string, std::map<std::string, std::map<std::string, double>>> erows_;
  std::map<std::string, std::map<std::string, std::vector<double>>> samples_;
  std::map<std::string, std::map<std::string, std::vector<double>>> xsamples_;
  std::map<std::string, std::map<std::string, double>> rows_, xrows_;
  std::map<std::string, std::map<std::string, double>> ratio_;
  std::vector<std::string> order_;
};

}  // namespace

int main(int argc, char** argv) {
  auto& ds = datasets();
  for (double d : {0.05, 0.3, 0.5, 0.7, 1.0}) {
    auto x = std::make_unique<dataset>();
    char buf[32];
    std::snprintf(buf, sizeof buf, "synth-d%.2f", d);
    x->name = buf;
    x->density = d;
    ds.push_back(std::move(x));
  }
  {
    auto x = std::make_unique<dataset>();
    x->name = "sample-inception_v3-chelsea";
    x->path = std::string(CDMA_WORKLOADS_DATA_DIR) + "/inception_v3/chelsea.npz";
    ds.push_back(std::move(x));
  }
  const std::string shared = CDMA_SHARED_DATA_DIR;
  if (std::filesystem::is_directory(shared + "/activations")) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(shared + "/activations"))
      if (e.path().extension() == ".npz") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto x = std::make_unique<dataset>();
      x->name = "shared-" + f.parent_path().filename().string() + "-" + f.stem().string();
      x->path = f.string();
      ds.push_back(std::move(x));
    }
  } else {
    std::fprintf(stderr, "codec_bench: no shared data at %s; real-data sets skipped\n", shared.c_str());
  }
  const std::size_t nstream = ds.size();
  for (std::size_t i = 0; i < nstream; ++i) {
    auto x = std::make_unique<dataset>();
    x->name = ds[i]->name + "@l2";
    x->l2_of = ds[i].get();
    ds.push_back(std::move(x));
  }
  for (std::size_t i = 0; i < nstream; ++i) {
    auto x = std::make_unique<dataset>();
    x->name = ds[i]->name + "@engine";
    x->engine_of = ds[i].get();
    ds.push_back(std::move(x));
  }
  static const std::vector<codec_case> cases = codec_cases();
  for (auto& d : ds) {
    if (d->engine_of) {
      // Fixed pass count: the call column needs several passes for its per-window median.
      benchmark::RegisterBenchmark((d->name + "/memcpy/copy").c_str(), bm_engine_memcpy, d.get())
          ->Iterations(kEnginePasses);
      for (const auto& cc : cases) {
        if (!cc.experiment)
          benchmark::RegisterBenchmark((d->name + "/" + cc.name + "/compress").c_str(),
                                       bm_engine_compress, d.get(), &cc)
              ->Iterations(kEnginePasses);
        benchmark::RegisterBenchmark((d->name + "/" + cc.name + "/decompress").c_str(),
                                     bm_engine_decompress, d.get(), &cc)
            ->Iterations(kEnginePasses);
      }
      continue;
    }
    benchmark::RegisterBenchmark((d->name + "/memcpy/copy").c_str(), bm_memcpy, d.get());
    benchmark::RegisterBenchmark((d->name + "/memset/fill").c_str(), bm_memset, d.get());
    for (const auto& cc : cases) {
      if (cc.experiment) {  // decompress only
        benchmark::RegisterBenchmark((d->name + "/" + cc.name + "/decompress").c_str(),
                                     bm_decompress, d.get(), &cc);
        continue;
      }
      benchmark::RegisterBenchmark((d->name + "/" + cc.name + "/compress").c_str(), bm_compress,
                                   d.get(), &cc);
      benchmark::RegisterBenchmark((d->name + "/" + cc.name + "/decompress").c_str(),
                                   bm_decompress, d.get(), &cc);
    }
  }
  benchmark::Initialize(&argc, argv);
  ratio_reporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();
  return 0;
}

// libsystemc.so (linked through cdma::tlm) has its own main() that refers to sc_main; this
// benchmark never goes through it, but the symbol must exist (non-as-needed links, e.g. the
// asan preset).
extern "C" int sc_main(int, char**) { return 0; }
