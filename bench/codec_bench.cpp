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
//    "<data>@l2"). This measures the kernels, not the memory.
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

#include "tlm/codec/codec.h"
#include "tlm/codec/zvc.h"
#include "workloads/io/npy.h"

namespace {

using namespace cdma::codec;
constexpr std::size_t kWindow = 4096;
constexpr std::size_t kSynthBytes = 32u << 20;
constexpr std::size_t kL2Windows = 32;  // l2 regime: 128 KiB of source

struct dataset {
  std::string name;
  std::string path;       // .npz, or empty for synthetic
  double density = 0;     // synthetic
  dataset* l2_of = nullptr;  // l2 regime: sample of this (streaming) data set
  std::vector<std::uint8_t> data;
  bool loaded = false;
};

std::vector<std::unique_ptr<dataset>>& datasets() {
  static std::vector<std::unique_ptr<dataset>> d;
  return d;
}

const std::vector<std::uint8_t>& load(dataset& d) {
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
  // Experiment rows (decompress, stream regime only): output windows 64-byte aligned.
  bool experiment = false;
};

// Experiment (docs/codecs.md, "Non-temporal stores"): ZVC w = 4 with the decoder of a given
// AVX2 kernel table; compress and sizes from the normal AVX2 path (same bytes).
class zvc_table_codec final : public codec {
 public:
  explicit zvc_table_codec(const zvc_detail::zvc_kernels* k) : ref_(4, zvc_isa::avx2), k_(k) {}
  codec_id id() const override { return codec_id::zvc; }
  unsigned element_width() const override { return 4; }
  std::size_t max_compressed_size(std::size_t n) const override { return ref_.max_compressed_size(n); }
  std::size_t compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override {
    return ref_.compress(in, n, out);
  }
  void decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                  std::size_t out_n) const override {
    k_->decompress[2](in, in_n, out, out_n);
  }
  std::size_t compressed_size(const std::uint8_t* in, std::size_t n) const override {
    return ref_.compressed_size(in, n);
  }

 private:
  zvc_codec ref_;
  const zvc_detail::zvc_kernels* k_;
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
    // Non-temporal store experiment and its control (same aligned output, normal stores).
    v.push_back({"zvc-a64", [] { return std::make_unique<zvc_table_codec>(zvc_detail::avx2_kernels()); }, true});
    v.push_back({"zvc-nt", [] { return std::make_unique<zvc_table_codec>(zvc_detail::avx2_nt_kernels()); }, true});
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
    std::size_t k = 0;
    for (std::size_t off = 0; off < src.size(); off += kWindow, ++k)
      c->decompress(z.bytes.data() + z.offset[k], z.size[k], dst_ptr + off,
                    std::min(kWindow, src.size() - off));
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

// Prints, after the normal console output, a markdown table of GB/s and ratio to memcpy.
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      const std::string name = r.benchmark_name();  // data/codec/op
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
    for (const auto& data : order_) {
      const auto& r = rows_[data];
      const auto get = [](const std::map<std::string, double>& t, const std::string& k) {
        const auto i = t.find(k);
        return i == t.end() ? 0.0 : i->second;
      };
      const auto div = [](double a, double b) { return b > 0 ? a / b : 0.0; };
      const double mc = get(r, "memcpy/copy");
      if (mc > 0)
        std::printf("| %s | memcpy (alone) | 1.00 | %.2f | 1.00 | | %.2f | 1.00 | |\n",
                    data.c_str(), mc / 1e9, mc / 1e9);
      const double ms = get(r, "memset/fill");
      if (ms > 0)
        std::printf("| %s | memset (alone, write-only) | | | | | %.2f | %.2f | |\n", data.c_str(),
                    ms / 1e9, div(ms, mc));
      const auto& x = xrows_[data];
      const double zc = get(r, "zstd-1/compress"), zd = get(r, "zstd-1/decompress");
      for (const auto& cc : codec_cases()) {
        const double cv = get(r, cc.name + "/compress"), dv = get(r, cc.name + "/decompress");
        if (cv == 0 && dv == 0) continue;
        if (cc.experiment) {  // decompress only
          std::printf("| %s | %s | | | | | %.2f | %.2f | %.1f |\n", data.c_str(), cc.name.c_str(),
                      dv / 1e9, get(x, cc.name + "/decompress"), div(dv, zd));
          continue;
        }
        std::printf("| %s | %s | %.2f | %.2f | %.2f | %.1f | %.2f | %.2f | %.1f |\n",
                    data.c_str(), cc.name.c_str(), ratio_[data][cc.name], cv / 1e9,
                    get(x, cc.name + "/compress"), div(cv, zc), dv / 1e9,
                    get(x, cc.name + "/decompress"), div(dv, zd));
      }
    }
    std::fflush(stdout);
  }

 private:
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
  static const std::vector<codec_case> cases = codec_cases();
  for (auto& d : ds) {
    benchmark::RegisterBenchmark((d->name + "/memcpy/copy").c_str(), bm_memcpy, d.get());
    benchmark::RegisterBenchmark((d->name + "/memset/fill").c_str(), bm_memset, d.get());
    for (const auto& cc : cases) {
      if (cc.experiment) {  // decompress, stream regime only
        if (!d->l2_of)
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
