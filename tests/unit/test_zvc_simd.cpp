// The ZVC ISA paths (scalar, AVX2, AVX-512; tlm/codec/zvc.h) produce identical bytes, identical
// sizes and identical decoder verdicts. Every path the running CPU supports is tested against
// the scalar path (the reference, itself checked by hand in test_zvc.cpp); paths the CPU lacks
// are reported as skipped.
#include "tlm/codec/zvc.h"
#include "workloads/io/npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace cdma::codec;
using bytes = std::vector<std::uint8_t>;

namespace {

std::vector<zvc_isa> simd_isas() {
  std::vector<zvc_isa> v;
  for (zvc_isa isa : {zvc_isa::avx2, zvc_isa::avx512})
    if (zvc_isa_supported(isa)) v.push_back(isa);
  return v;
}

bytes enc(const zvc_codec& c, const bytes& in) {
  bytes out(c.max_compressed_size(in.size()) + 64, 0xEE);
  const std::size_t n = c.compress(in.data(), in.size(), out.data());
  for (std::size_t i = c.max_compressed_size(in.size()); i < out.size(); ++i)
    EXPECT_EQ(out[i], 0xEE) << to_string(c.isa()) << " wrote past max_compressed_size";
  out.resize(n);
  return out;
}

// Checks every SIMD path against scalar on `in` (compress, size, decompress of the scalar
// stream with exact-size and with slack input).
void check_same(unsigned w, const bytes& in) {
  const zvc_codec ref(w, zvc_isa::scalar);
  const bytes s = enc(ref, in);
  for (zvc_isa isa : simd_isas()) {
    const zvc_codec c(w, isa);
    ASSERT_EQ(enc(c, in), s) << to_string(isa) << " w=" << w << " n=" << in.size();
    ASSERT_EQ(c.compressed_size(in.data(), in.size()), s.size()) << to_string(isa);
    bytes back(in.size() + 64, 0xEE);
    c.decompress(s.data(), s.size(), back.data(), in.size());
    for (std::size_t i = in.size(); i < back.size(); ++i) ASSERT_EQ(back[i], 0xEE);
    back.resize(in.size());
    ASSERT_EQ(back, in) << to_string(isa);
  }
}

}  // namespace

TEST(ZvcIsa, BestIsSupportedAndScalarAlways) {
  EXPECT_TRUE(zvc_isa_supported(zvc_isa::scalar));
  EXPECT_TRUE(zvc_isa_supported(zvc_best_isa()));
  EXPECT_EQ(zvc_codec(4).isa(), zvc_best_isa());
  for (zvc_isa isa : {zvc_isa::avx2, zvc_isa::avx512})
    if (!zvc_isa_supported(isa)) {
      EXPECT_THROW(zvc_codec(4, isa), codec_error);
      std::cout << "[ note ] ZVC path " << to_string(isa) << " not supported by this CPU: not tested\n";
    }
  std::cout << "[ note ] ZVC best path: " << to_string(zvc_best_isa()) << "\n";
}

TEST(ZvcIsa, IdenticalBytesRandomAllWidthsDensitiesSizes) {
  if (simd_isas().empty()) GTEST_SKIP() << "no SIMD path on this CPU";
  std::mt19937 rng(2024);
  for (unsigned w : {1u, 2u, 4u})
    for (double density : {0.0, 0.05, 0.3, 0.5, 0.7, 0.97, 1.0})
      for (int trial = 0; trial < 40; ++trial) {
        const std::size_t n = trial < 20 ? rng() % 600 : rng() % 9000;
        bytes in(n, 0);
        for (std::size_t i = 0; i + w <= n; i += w)
          if (std::uniform_real_distribution<double>(0, 1)(rng) < density) {
            // A nonzero element, sometimes with only one nonzero byte (e.g. -0.0 = 0x80000000).
            for (unsigned b = 0; b < w; ++b) in[i + b] = static_cast<std::uint8_t>(rng());
            if (trial % 3 == 0) {
              for (unsigned b = 0; b < w; ++b) in[i + b] = 0;
              in[i + w - 1] = 0x80;
            }
            bool nz = false;
            for (unsigned b = 0; b < w; ++b) nz = nz || in[i + b];
            if (!nz) in[i] = 1;
          }
        for (std::size_t i = n - n % w; i < n; ++i) in[i] = static_cast<std::uint8_t>(rng());
        check_same(w, in);
      }
}

TEST(ZvcIsa, IdenticalBytesOnTheSample) {
  if (simd_isas().empty()) GTEST_SKIP() << "no SIMD path on this CPU";
  const cdma::workloads::npz_archive z(std::string(CDMA_WORKLOADS_DATA_DIR) +
                                       "/inception_v3/chelsea.npz");
  for (const auto& key : z.keys()) {
    SCOPED_TRACE(key);
    const auto a = z.read(key);
    for (unsigned w : {1u, 2u, 4u}) check_same(w, a.data);
  }
}

TEST(ZvcIsa, SameVerdictOnCorruptStreams) {
  if (simd_isas().empty()) GTEST_SKIP() << "no SIMD path on this CPU";
  std::mt19937 rng(5);
  for (unsigned w : {1u, 2u, 4u}) {
    const zvc_codec ref(w, zvc_isa::scalar);
    bytes in(300 * w + 1, 0);
    for (std::size_t i = 0; i < in.size(); i += 3) in[i] = static_cast<std::uint8_t>(rng() | 1);
    const bytes s = enc(ref, in);
    for (int trial = 0; trial < 3000; ++trial) {
      bytes m = s;
      switch (trial % 3) {
        case 0: m[rng() % m.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
        case 1: m.resize(rng() % m.size()); break;
        default: m.push_back(static_cast<std::uint8_t>(rng())); break;
      }
      const std::size_t out_n = trial % 7 == 0 ? in.size() + (rng() % 9) - 4 : in.size();
      std::string want;
      bytes want_out(out_n);
      try {
        ref.decompress(m.data(), m.size(), want_out.data(), out_n);
      } catch (const codec_error& e) {
        want = e.what();
      }
      for (zvc_isa isa : simd_isas()) {
        const zvc_codec c(w, isa);
        std::string got;
        bytes got_out(out_n);
        try {
          c.decompress(m.data(), m.size(), got_out.data(), out_n);
        } catch (const codec_error& e) {
          got = e.what();
        }
        ASSERT_EQ(got, want) << to_string(isa) << " trial " << trial;
        if (want.empty()) {
          ASSERT_EQ(got_out, want_out);
        }
      }
    }
  }
}

// The AVX2 decoder's stream end: the last full blocks of a stream are followed by fewer than
// the kernel's 32 bytes of read slack and are decoded from a zero-padded copy of the stream's
// rest. Exact-size input buffers (so ASan sees any read past the stream) and guard bytes after
// the output, at densities where 0 to many blocks take that path, and every window length
// around block multiples.
TEST(ZvcIsa, StreamEndBlocksExactBuffers) {
  if (simd_isas().empty()) GTEST_SKIP() << "no SIMD path on this CPU";
  std::mt19937 rng(77);
  for (unsigned w : {1u, 2u, 4u}) {
    const zvc_codec ref(w, zvc_isa::scalar);
    for (double density : {0.0, 0.02, 0.05, 0.2, 1.0})
      for (std::size_t blocks : {1u, 2u, 3u, 8u, 32u})
        for (std::size_t extra : {0u, 1u, 5u, 31u}) {
          const std::size_t n = (blocks * 32 + extra) * w + (extra % w);
          bytes in(n, 0);
          for (std::size_t i = 0; i + w <= n; i += w)
            if (std::uniform_real_distribution<double>(0, 1)(rng) < density) in[i] = 1 + rng() % 255;
          const bytes s = enc(ref, in);
          for (zvc_isa isa : simd_isas()) {
            const zvc_codec c(w, isa);
            auto exact = std::make_unique<std::uint8_t[]>(s.size() ? s.size() : 1);
            std::copy(s.begin(), s.end(), exact.get());
            bytes back(n + 64, 0xEE);
            c.decompress(exact.get(), s.size(), back.data(), n);
            for (std::size_t i = n; i < back.size(); ++i) ASSERT_EQ(back[i], 0xEE);
            back.resize(n);
            ASSERT_EQ(back, in) << to_string(isa) << " w=" << w << " d=" << density << " n=" << n;
          }
        }
  }
}

// zvc_store::streaming (non-temporal stores on the AVX2 w = 4 path when the output is 32-byte
// aligned; cached stores elsewhere): the same bytes and the same error verdicts as the scalar
// path, for every width, at low and high density, on aligned and unaligned outputs, with
// exact-size streams (the last blocks are decoded with masked loads) and mutated / truncated
// ones; nothing is written outside the output.
TEST(ZvcIsa, StreamingStoresSameBytesAndVerdicts) {
  if (!zvc_isa_supported(zvc_isa::avx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  ASSERT_NE(zvc_detail::avx2_nt_kernels(), nullptr);
  std::mt19937 rng(11);
  for (unsigned w : {1u, 2u, 4u}) {
    const zvc_codec ref(w, zvc_isa::scalar);
    const zvc_codec nt(w, zvc_isa::avx2, zvc_store::streaming);
    ASSERT_EQ(nt.store(), zvc_store::streaming);
    ASSERT_EQ(to_string(nt.store()), "streaming");
    for (int trial = 0; trial < 300; ++trial) {
      const std::size_t n = trial % 7 == 0 ? 4096 : rng() % 9000;
      const unsigned one_in = trial % 3 == 0 ? 20 : 3;  // density about 0.05 or 0.33
      bytes in(n, 0);
      for (std::size_t i = 0; i + w <= n; i += w)
        if (rng() % one_in == 0) in[i + rng() % w] = static_cast<std::uint8_t>(1 + rng() % 255);
      bytes s = enc(ref, in);
      if (trial % 4 == 3 && !s.empty()) s[rng() % s.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      if (trial % 5 == 4) s.resize(rng() % (s.size() + 1));
      std::string want, got;
      bytes want_out(n);
      try {
        ref.decompress(s.data(), s.size(), want_out.data(), n);
      } catch (const codec_error& e) {
        want = e.what();
      }
      std::vector<std::uint8_t> buf(n + 128, 0xEE);
      const std::size_t shift = (64 - reinterpret_cast<std::uintptr_t>(buf.data()) % 64) % 64 + (trial % 2) * 4;
      const bytes exact(s);  // exactly sized: nothing readable past the stream
      try {
        nt.decompress(exact.data(), exact.size(), buf.data() + shift, n);
      } catch (const codec_error& e) {
        got = e.what();
      }
      ASSERT_EQ(got, want) << "w=" << w << " trial " << trial;
      if (want.empty()) {
        ASSERT_TRUE(std::equal(want_out.begin(), want_out.end(), buf.begin() + static_cast<std::ptrdiff_t>(shift)))
            << "w=" << w << " trial " << trial;
        for (std::size_t i = 0; i < shift; ++i) ASSERT_EQ(buf[i], 0xEE);
        for (std::size_t i = shift + n; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xEE);
      }
    }
  }
}

// zvc_store::streaming through decompress_windows (one store fence per batch): the windows
// decode to the same bytes as the scalar path window by window, for window sizes that keep
// every window's output 64-byte aligned (4096, 128) or not (1000, 96, 4093), odd total lengths
// (a short last window, a length not a multiple of w), aligned and unaligned outputs; a mutated
// window gives the scalar path's error for that window; nothing is written outside the output.
TEST(ZvcIsa, StreamingStoresDecompressWindowsSameBytesAndVerdicts) {
  if (!zvc_isa_supported(zvc_isa::avx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(23);
  for (unsigned w : {1u, 2u, 4u}) {
    const zvc_codec ref(w, zvc_isa::scalar);
    const zvc_codec nt(w, zvc_isa::avx2, zvc_store::streaming);
    for (int trial = 0; trial < 60; ++trial) {
      const std::size_t W = std::vector<std::size_t>{4096, 128, 1000, 96, 4093}[trial % 5];
      const std::size_t n = rng() % (6 * W) + 1;
      bytes in(n, 0);
      const unsigned one_in = trial % 2 ? 20 : 3;
      for (std::size_t i = 0; i + w <= n; i += w)
        if (rng() % one_in == 0) in[i + rng() % w] = static_cast<std::uint8_t>(1 + rng() % 255);
      bytes stream;
      std::vector<std::size_t> off, size;
      for (std::size_t first = 0; first < n; first += W) {
        const bytes one(in.begin() + static_cast<std::ptrdiff_t>(first),
                        in.begin() + static_cast<std::ptrdiff_t>(std::min(n, first + W)));
        const bytes s = enc(ref, one);
        off.push_back(stream.size());
        size.push_back(s.size());
        stream.insert(stream.end(), s.begin(), s.end());
      }
      const std::size_t bad = trial % 4 == 3 ? rng() % off.size() : off.size();  // mutated window
      if (bad < off.size() && size[bad] > 0)
        stream[off[bad] + rng() % size[bad]] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      // Reference: the scalar path window by window, stopping at the first error.
      bytes want(n, 0xEE);
      std::string want_err;
      for (std::size_t k = 0; k < off.size() && want_err.empty(); ++k) {
        const std::size_t first = k * W, m = std::min(W, n - first);
        try {
          ref.decompress(stream.data() + off[k], size[k], want.data() + first, m);
        } catch (const codec_error& e) {
          want_err = e.what();
        }
      }
      bytes buf(n + 192, 0xEE);
      const std::size_t shift =
          (64 - reinterpret_cast<std::uintptr_t>(buf.data()) % 64) % 64 + (trial % 3 == 1 ? 4 : 0);
      std::string got_err;
      try {
        nt.decompress_windows(stream.data(), off.data(), size.data(), off.size(),
                              buf.data() + shift, W, n);
      } catch (const codec_error& e) {
        got_err = e.what();
      }
      ASSERT_EQ(got_err, want_err) << "w=" << w << " trial " << trial;
      for (std::size_t i = 0; i < shift; ++i) ASSERT_EQ(buf[i], 0xEE);
      for (std::size_t i = shift + n; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xEE);
      if (want_err.empty()) {  // a mutated data byte decodes: compare with the scalar output
        if (bad == off.size()) {
          ASSERT_EQ(want, in);
        }
        ASSERT_TRUE(std::equal(want.begin(), want.end(), buf.begin() + static_cast<std::ptrdiff_t>(shift)))
            << "w=" << w << " trial " << trial;
      }
    }
  }
}
