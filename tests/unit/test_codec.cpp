// Every codec behind the one interface (tlm/codec/codec.h): names and ids, empty input, round
// trips (all widths; every layer of the shipped sample, whole-tensor and 4 KiB windowed),
// the raw fallback bound of the windowed framing, and robustness of every decoder against
// mutated streams (errors, never a crash: run under `make test PRESET=asan` for UB checks).
#include "tlm/codec/codec.h"
#include "tlm/codec/window.h"
#include "workloads/io/npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace cdma::codec;
using bytes = std::vector<std::uint8_t>;

namespace {

bytes enc(const codec& c, const bytes& in) {
  bytes out(c.max_compressed_size(in.size()) + 16, 0xEE);
  const std::size_t n = c.compress(in.data(), in.size(), out.data());
  EXPECT_LE(n, c.max_compressed_size(in.size()));
  out.resize(n);
  return out;
}

bytes dec(const codec& c, const bytes& s, std::size_t n) {
  bytes out(n + 16, 0xEE);
  c.decompress(s.data(), s.size(), out.data(), n);
  for (std::size_t i = n; i < out.size(); ++i) EXPECT_EQ(out[i], 0xEE) << "wrote past out_n";
  out.resize(n);
  return out;
}

// Windowed framing of `in` as the engine does it; returns total bytes moved (data + entries)
// after checking the round trip.
std::size_t windowed_round_trip(const codec& c, const bytes& in, std::size_t W,
                                std::size_t* raw_windows = nullptr) {
  bytes framed(in.size());
  std::vector<window_entry> entries;
  std::size_t pos = 0;
  for (std::size_t off = 0; off < in.size(); off += W) {
    const std::size_t n = std::min(W, in.size() - off);
    const window_entry e = compress_window(c, in.data() + off, n, framed.data() + pos);
    const window_entry e2 = window_size(c, in.data() + off, n);
    EXPECT_EQ(e.bytes, e2.bytes);
    EXPECT_EQ(e.raw, e2.raw);
    EXPECT_LE(e.bytes, n);
    if (raw_windows && e.raw) ++*raw_windows;
    entries.push_back(e);
    pos += e.bytes;
  }
  bytes back(in.size(), 0xEE);
  std::size_t rd = 0;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const std::size_t off = k * W, n = std::min(W, in.size() - off);
    decompress_window(c, entries[k], framed.data() + rd, pos - rd, back.data() + off, n);
    rd += entries[k].bytes;
  }
  EXPECT_TRUE(back == in) << to_string(c.id()) << " windowed round trip";
  return pos + entries.size() * window_entry_bytes;
}

}  // namespace

TEST(CodecIds, FixedValuesNamesAndDescriptorField) {
  EXPECT_EQ(static_cast<unsigned>(codec_id::raw), 0u);
  EXPECT_EQ(static_cast<unsigned>(codec_id::zvc), 1u);
  const char* names[] = {"raw", "zvc", "rle", "zlib", "lz4", "zstd"};
  unsigned i = 0;
  for (codec_id id : all_codec_ids) {
    EXPECT_LT(static_cast<unsigned>(id), 16u);  // 4-bit descriptor field
    EXPECT_EQ(static_cast<unsigned>(id), i);
    EXPECT_EQ(to_string(id), names[i]);
    EXPECT_EQ(codec_from_string(names[i]), id);
    for (unsigned w : {1u, 2u, 4u}) {
      const auto c = make_codec(id, w);
      EXPECT_EQ(c->id(), id);
      EXPECT_EQ(c->element_width(), w);
    }
    ++i;
  }
  EXPECT_EQ(codec_from_string("none"), codec_id::raw);
  EXPECT_THROW(codec_from_string("ZLIB"), codec_error);
  EXPECT_THROW(make_codec(static_cast<codec_id>(6)), codec_error);
  EXPECT_THROW(make_codec(codec_id::zstd, 8), codec_error);
}

TEST(Codec, EmptyInputEveryCodec) {
  for (codec_id id : all_codec_ids)
    for (unsigned w : {1u, 2u, 4u}) {
      SCOPED_TRACE(to_string(id) + " w=" + std::to_string(w));
      const auto c = make_codec(id, w);
      const bytes s = enc(*c, {});
      EXPECT_EQ(c->compressed_size(nullptr, 0), s.size());
      EXPECT_TRUE(dec(*c, s, 0).empty());
      // A window of 0 bytes is stored raw with 0 bytes (nothing to shrink).
      std::uint8_t out[1] = {0xEE};
      const window_entry e = compress_window(*c, nullptr, 0, out);
      EXPECT_TRUE(e.raw);
      EXPECT_EQ(e.bytes, 0u);
      EXPECT_EQ(out[0], 0xEE);
      decompress_window(*c, e, out, 0, out, 0);
    }
}

TEST(Codec, RandomRoundTripEveryCodecAndWidth) {
  std::mt19937 rng(77);
  for (codec_id id : all_codec_ids)
    for (unsigned w : {1u, 2u, 4u}) {
      SCOPED_TRACE(to_string(id) + " w=" + std::to_string(w));
      const auto c = make_codec(id, w);
      for (int trial = 0; trial < 30; ++trial) {
        const std::size_t n = rng() % 5000;
        bytes in(n, 0);
        const unsigned density = rng() % 5;
        for (auto& b : in) b = rng() % 4 < density ? static_cast<std::uint8_t>(rng()) : 0;
        const bytes s = enc(*c, in);
        EXPECT_EQ(s.size(), c->compressed_size(in.data(), n));
        EXPECT_EQ(dec(*c, s, n), in);
      }
    }
}

TEST(Codec, EveryCodecRoundTripsEveryLayerOfTheSample) {
  const cdma::workloads::npz_archive z(std::string(CDMA_WORKLOADS_DATA_DIR) +
                                       "/inception_v3/chelsea.npz");
  std::vector<std::unique_ptr<codec>> codecs;
  for (codec_id id : all_codec_ids) codecs.push_back(make_codec(id, 4));
  std::vector<std::uint64_t> whole(codecs.size()), windowed(codecs.size());
  std::uint64_t total = 0;
  for (const auto& key : z.keys()) {
    SCOPED_TRACE(key);
    const auto a = z.read(key);
    total += a.data.size();
    for (std::size_t k = 0; k < codecs.size(); ++k) {
      const codec& c = *codecs[k];
      const bytes s = enc(c, a.data);
      whole[k] += s.size();
      ASSERT_TRUE(dec(c, s, a.data.size()) == a.data) << to_string(c.id());
      windowed[k] += windowed_round_trip(c, a.data, 4096);
    }
  }
  // Sanity of the totals (whole file, 35,869,952 bytes of fp32): raw is exact; every real codec
  // compresses the 55.8 %-zero activations; windowed never worse than raw + 8 B per window.
  EXPECT_EQ(total, 4u * 8967488u);
  EXPECT_EQ(whole[0], total);
  for (std::size_t k = 1; k < codecs.size(); ++k) {
    EXPECT_LT(whole[k], total) << to_string(codecs[k]->id());
    EXPECT_LT(windowed[k], total) << to_string(codecs[k]->id());
  }
}

TEST(Window, WouldGrowIsStoredRawAndRatioBoundedByMetadata) {
  // Incompressible (uniform random, no zero elements) data: every codec's window would grow,
  // so each is stored raw, and the ratio L / (L + 8 * windows) is exactly the metadata bound
  // 1 / (1 + 8 / W) for whole windows.
  std::mt19937 rng(3);
  const std::size_t W = 4096, L = 16 * W + 1000;  // 16 full windows + one of 1000 bytes
  bytes in(L);
  for (auto& b : in) b = static_cast<std::uint8_t>(rng() % 255 + 1);
  const std::size_t windows = 17;
  for (codec_id id : all_codec_ids) {
    SCOPED_TRACE(to_string(id));
    const auto c = make_codec(id, 4);
    std::size_t raw = 0;
    const std::size_t moved = windowed_round_trip(*c, in, W, &raw);
    EXPECT_EQ(raw, windows);
    EXPECT_EQ(moved, L + windows * window_entry_bytes);
    const double ratio = double(L) / double(moved);
    EXPECT_GE(ratio, 1.0 - double(windows * window_entry_bytes) / double(L));
  }
  // On real data the bound holds window by window: data bytes never exceed the input.
  const cdma::workloads::npz_archive z(std::string(CDMA_WORKLOADS_DATA_DIR) +
                                       "/inception_v3/chelsea.npz");
  const auto a = z.read("activation_6");  // densest layer (74 % nonzero)
  for (codec_id id : all_codec_ids) {
    const auto c = make_codec(id, 4);
    const std::size_t moved = windowed_round_trip(*c, a.data, W);
    const std::size_t nwin = window_count(a.data.size(), W);
    EXPECT_LE(moved, a.data.size() + nwin * window_entry_bytes) << to_string(id);
  }
}

TEST(Codec, DecodersSurviveMutatedStreams) {
  // Mutations of valid streams (bit flips, truncation, extra bytes, wrong expected size) are
  // either rejected with codec_error or decode to some buffer of the expected size; never a
  // crash or an out-of-bounds access (canaries around the output; ASan in the asan preset).
  std::mt19937 rng(11);
  bytes in(3000, 0);
  for (std::size_t i = 0; i < in.size(); i += 7) in[i] = static_cast<std::uint8_t>(rng() | 1);
  for (codec_id id : all_codec_ids)
    for (unsigned w : {1u, 4u}) {
      SCOPED_TRACE(to_string(id) + " w=" + std::to_string(w));
      const auto c = make_codec(id, w);
      const bytes s = enc(*c, in);
      int rejected = 0;
      for (int trial = 0; trial < 1500; ++trial) {
        bytes m = s;
        switch (trial % 4) {
          case 0: m[rng() % m.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
          case 1: m.resize(rng() % m.size()); break;
          case 2: m.push_back(static_cast<std::uint8_t>(rng())); break;
          default: m[rng() % m.size()] = static_cast<std::uint8_t>(rng()); break;
        }
        const std::size_t out_n = trial % 5 == 0 ? rng() % 4000 : in.size();
        bytes out(out_n + 32, 0xEE);
        try {
          c->decompress(m.data(), m.size(), out.data(), out_n);
        } catch (const codec_error&) {
          ++rejected;
        }
        for (std::size_t i = out_n; i < out.size(); ++i) ASSERT_EQ(out[i], 0xEE);
      }
      EXPECT_GT(rejected, 0);
    }
}

namespace {
// Every window of `in` compressed on its own (c.compress, no raw fallback) and packed into one
// stream; offset / size per window.
struct packed_windows {
  bytes stream;
  std::vector<std::size_t> offset, size;
};
packed_windows pack_windows(const codec& c, const bytes& in, std::size_t W) {
  packed_windows p;
  for (std::size_t first = 0; first < in.size(); first += W) {
    const bytes one(in.begin() + static_cast<std::ptrdiff_t>(first),
                    in.begin() + static_cast<std::ptrdiff_t>(std::min(in.size(), first + W)));
    const bytes s = enc(c, one);
    p.offset.push_back(p.stream.size());
    p.size.push_back(s.size());
    p.stream.insert(p.stream.end(), s.begin(), s.end());
  }
  return p;
}
}  // namespace

// codec::decompress_windows (a batch of independent windows into one contiguous output, the
// default loop and zvc's override) gives back the input, for every codec and width, with a
// short last window and a length that is not a multiple of the width (the expectation is the
// input itself), at two output alignments; nothing is written outside the output.
TEST(Codec, DecompressWindowsRoundTripsEveryCodec) {
  std::mt19937 rng(5);
  bytes in(3 * 4096 + 1237, 0);  // 4 windows of 4 KiB, the last of 1237 bytes (1237 mod 4 = 1)
  for (auto& b : in)
    if (rng() % 10 == 0) b = static_cast<std::uint8_t>(1 + rng() % 255);
  for (codec_id id : all_codec_ids)
    for (unsigned w : {1u, 2u, 4u})
      for (std::size_t W : {std::size_t{4096}, std::size_t{1000}}) {
        SCOPED_TRACE(to_string(id) + " w=" + std::to_string(w) + " W=" + std::to_string(W));
        const auto c = make_codec(id, w);
        const packed_windows p = pack_windows(*c, in, W);
        for (std::size_t shift : {0u, 4u}) {
          bytes out(in.size() + 64 + 16, 0xEE);
          c->decompress_windows(p.stream.data(), p.offset.data(), p.size.data(), p.offset.size(),
                                out.data() + shift, W, in.size());
          ASSERT_TRUE(std::equal(in.begin(), in.end(), out.begin() + static_cast<std::ptrdiff_t>(shift)));
          for (std::size_t i = 0; i < shift; ++i) ASSERT_EQ(out[i], 0xEE);
          for (std::size_t i = shift + in.size(); i < out.size(); ++i) ASSERT_EQ(out[i], 0xEE);
        }
      }
}

// decompress_windows: argument checks, an empty batch, and a corrupt window: the error is the
// one decompress() gives for that window alone, the windows before it are decoded, the ones
// after it are not touched.
TEST(Codec, DecompressWindowsChecksAndStopsAtTheFailingWindow) {
  const auto c = make_codec(codec_id::zvc, 4);
  bytes in(4 * 256, 0);
  for (std::size_t i = 0; i < in.size(); i += 12) in[i] = 7;
  const packed_windows p = pack_windows(*c, in, 256);  // 4 windows of 256 bytes
  bytes out(in.size(), 0xEE);
  // ceil(1024 / 256) = 4 windows: 3 or 5 are refused, and so is a window of 0 bytes.
  EXPECT_THROW(c->decompress_windows(p.stream.data(), p.offset.data(), p.size.data(), 3,
                                     out.data(), 256, in.size()), codec_error);
  EXPECT_THROW(c->decompress_windows(p.stream.data(), p.offset.data(), p.size.data(), 4,
                                     out.data(), 0, in.size()), codec_error);
  EXPECT_THROW(c->decompress_windows(p.stream.data(), p.offset.data(), p.size.data(), 5,
                                     out.data(), 256, in.size()), codec_error);
  c->decompress_windows(nullptr, nullptr, nullptr, 0, out.data(), 256, 0);  // nothing to do
  for (auto b : out) ASSERT_EQ(b, 0xEE);
  // Window 2 truncated by one byte (its size says one byte less).
  std::vector<std::size_t> size = p.size;
  size[2] -= 1;
  std::string alone, batch;
  bytes one(256);
  try {
    c->decompress(p.stream.data() + p.offset[2], size[2], one.data(), 256);
  } catch (const codec_error& e) {
    alone = e.what();
  }
  ASSERT_FALSE(alone.empty());
  try {
    c->decompress_windows(p.stream.data(), p.offset.data(), size.data(), 4, out.data(), 256,
                          in.size());
  } catch (const codec_error& e) {
    batch = e.what();
  }
  EXPECT_EQ(batch, alone);
  EXPECT_TRUE(std::equal(in.begin(), in.begin() + 512, out.begin()));  // windows 0 and 1
  for (std::size_t i = 768; i < out.size(); ++i) ASSERT_EQ(out[i], 0xEE);  // window 3
}
