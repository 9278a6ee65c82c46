// Unit tests of tlm/codec: ZVC and raw codecs (docs/ARCHITECTURE.md section 5) and the
// windowed DMA framing (tlm/codec/window.h).
//
// Hand-computed encodings: ZVC = per block of 32 elements a 4-byte little-endian mask (bit i set
// iff element i is nonzero, i.e. not all of its w bytes are 0x00), then the nonzero elements
// verbatim in ascending order; a partial final block of k elements still has a mask; the
// L mod w trailing bytes follow verbatim. Each expected stream below is derived by hand in its
// comment.
#include "tlm/codec/codec.h"
#include "tlm/codec/raw.h"
#include "tlm/codec/window.h"
#include "tlm/codec/zvc.h"
#include "workloads/io/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace cdma::codec;
using bytes = std::vector<std::uint8_t>;

namespace {

bytes encode(const codec& c, const bytes& in) {
  bytes out(c.max_compressed_size(in.size()) + 16, 0xEE);  // 16 canary bytes
  const std::size_t n = c.compress(in.data(), in.size(), out.data());
  EXPECT_LE(n, c.max_compressed_size(in.size()));
  for (std::size_t i = c.max_compressed_size(in.size()); i < out.size(); ++i)
    EXPECT_EQ(out[i], 0xEE) << "compress wrote past max_compressed_size at " << i;
  out.resize(n);
  return out;
}

bytes decode(const codec& c, const bytes& in, std::size_t out_n) {
  bytes out(out_n + 16, 0xEE);
  c.decompress(in.data(), in.size(), out.data(), out_n);
  for (std::size_t i = out_n; i < out.size(); ++i) EXPECT_EQ(out[i], 0xEE) << "wrote past out_n";
  out.resize(out_n);
  return out;
}

// Checks compress() == expected, compressed_size() agrees, and decompress() gives `in` back.
void expect_zvc(unsigned w, const bytes& in, const bytes& expected) {
  const auto c = make_codec(codec_id::zvc, w);
  EXPECT_EQ(encode(*c, in), expected) << "w=" << w << " n=" << in.size();
  EXPECT_EQ(c->compressed_size(in.data(), in.size()), expected.size()) << "w=" << w;
  EXPECT_EQ(decode(*c, expected, in.size()), in) << "w=" << w;
}

// Little-endian bytes of 32-bit words.
bytes le32(std::initializer_list<std::uint32_t> words) {
  bytes b;
  for (auto v : words)
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  return b;
}
bytes cat(bytes a, const bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Expects decompress to throw codec_error whose message contains `part` and "offset".
void expect_corrupt(const codec& c, const bytes& in, std::size_t out_n, const std::string& part) {
  bytes out(out_n);
  try {
    c.decompress(in.data(), in.size(), out.data(), out_n);
    ADD_FAILURE() << "accepted corrupt stream (w=" << c.element_width() << ", " << in.size()
                  << " -> " << out_n << "), expected '" << part << "'";
  } catch (const codec_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
    EXPECT_NE(msg.find("offset"), std::string::npos) << msg;
  }
}

}  // namespace

// ---- names and factory -----------------------------------------------------------------------

TEST(Codec, NamesAndFactory) {
  EXPECT_EQ(to_string(codec_id::raw), "raw");
  EXPECT_EQ(to_string(codec_id::zvc), "zvc");
  EXPECT_EQ(codec_from_string("raw"), codec_id::raw);
  EXPECT_EQ(codec_from_string("none"), codec_id::raw);
  EXPECT_EQ(codec_from_string("zvc"), codec_id::zvc);
  try {
    codec_from_string("lz5");
    ADD_FAILURE();
  } catch (const codec_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'lz5'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("raw, none, zvc"), std::string::npos) << msg;
  }
  for (unsigned w : {1u, 2u, 4u})
    for (codec_id id : {codec_id::raw, codec_id::zvc}) {
      const auto c = make_codec(id, w);
      EXPECT_EQ(c->id(), id);
      EXPECT_EQ(c->element_width(), w);
    }
  EXPECT_EQ(make_codec(codec_id::zvc)->element_width(), 4u);
  for (unsigned w : {0u, 3u, 8u}) {
    EXPECT_THROW(make_codec(codec_id::zvc, w), codec_error);
    EXPECT_THROW(make_codec(codec_id::raw, w), codec_error);
  }
  EXPECT_THROW(make_codec(static_cast<codec_id>(7)), codec_error);
}

TEST(Codec, RawIsIdentityAndExact) {
  const auto c = make_codec(codec_id::raw, 2);
  const bytes in = {1, 0, 0, 0, 5};
  EXPECT_EQ(c->max_compressed_size(5), 5u);
  EXPECT_EQ(c->compressed_size(in.data(), 5), 5u);
  EXPECT_EQ(encode(*c, in), in);
  EXPECT_EQ(decode(*c, in, 5), in);
  expect_corrupt(*c, {1, 0, 0, 0}, 5, "truncated");
  expect_corrupt(*c, {1, 0, 0, 0, 5, 6}, 5, "too long");
}

// ---- ZVC, w = 4 ------------------------------------------------------------------------------

TEST(Zvc4, EmptyAndTailOnly) {
  expect_zvc(4, {}, {});  // no elements, no blocks: 0 bytes
  // L = 3: E = 0 elements (no block, no mask), 3 trailing bytes verbatim.
  expect_zvc(4, {0x00, 0xAB, 0x00}, {0x00, 0xAB, 0x00});
}

TEST(Zvc4, OneElement) {
  // [0]: one partial block of k = 1: mask 0 -> 00 00 00 00, no data.
  expect_zvc(4, le32({0}), {0, 0, 0, 0});
  // [1.0f = 0x3F800000]: mask bit 0 -> 01 00 00 00, then the element LE 00 00 80 3F.
  expect_zvc(4, le32({0x3F800000}), {0x01, 0, 0, 0, 0x00, 0x00, 0x80, 0x3F});
  // [-0.0f = 0x80000000] is nonzero (only all-zero bytes count as zero).
  expect_zvc(4, le32({0x80000000}), {0x01, 0, 0, 0, 0x00, 0x00, 0x00, 0x80});
  // [NaN with payload 0x7FC12345]: kept bit-exact.
  expect_zvc(4, le32({0x7FC12345}), {0x01, 0, 0, 0, 0x45, 0x23, 0xC1, 0x7F});
}

TEST(Zvc4, Mixed) {
  // [0, 0x11223344, 0, -0.0, NaN 0x7FC12345]: nonzero at 1, 3, 4 -> mask 0b11010 = 0x1A.
  // Stream: 1A 00 00 00 | 44 33 22 11 | 00 00 00 80 | 45 23 C1 7F  (4 + 3*4 = 16 bytes).
  expect_zvc(4, le32({0, 0x11223344, 0, 0x80000000, 0x7FC12345}),
             {0x1A, 0, 0, 0, 0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0x80, 0x45, 0x23, 0xC1, 0x7F});
  // Same 5 elements + 2 trailing bytes (L = 22, L mod 4 = 2): the tail EF BE is appended verbatim.
  expect_zvc(4, cat(le32({0, 0x11223344, 0, 0x80000000, 0x7FC12345}), {0xEF, 0xBE}),
             {0x1A, 0, 0, 0, 0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0x80, 0x45, 0x23, 0xC1, 0x7F, 0xEF, 0xBE});
  // 7 bytes: one zero element (mask 00 00 00 00) + tail AB 00 CD -> 7 bytes, no gain.
  expect_zvc(4, {0, 0, 0, 0, 0xAB, 0x00, 0xCD}, {0, 0, 0, 0, 0xAB, 0x00, 0xCD});
}

TEST(Zvc4, BlockBoundaries) {
  for (std::size_t e : {1u, 31u, 32u, 33u, 64u, 65u}) {
    // All zero: ceil(e/32) masks of 00 00 00 00, nothing else.
    const std::size_t blocks = (e + 31) / 32;
    expect_zvc(4, bytes(4 * e, 0), bytes(4 * blocks, 0));
    // All nonzero (element i = 0x01000000 + i, i.e. bytes i 00 00 01): masks are FF FF FF FF for
    // full blocks, (1 << k) - 1 for a final block of k; each mask followed by its k elements.
    bytes in, expect;
    for (std::size_t i = 0; i < e; ++i) in = cat(in, le32({0x01000000u + static_cast<std::uint32_t>(i)}));
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t k = std::min<std::size_t>(32, e - 32 * b);
      const std::uint32_t mask = k == 32 ? 0xFFFFFFFFu : (1u << k) - 1;
      expect = cat(expect, le32({mask}));
      expect.insert(expect.end(), in.begin() + 128 * b, in.begin() + 128 * b + 4 * k);
    }
    expect_zvc(4, in, expect);
  }
  // Written out: 31 nonzero -> 4 + 124 = 128 bytes starting FF FF FF 7F; 32 -> 132 bytes starting
  // FF FF FF FF; 33 -> 4 + 128 + 4 + 4 = 140 bytes, second mask 01 00 00 00 at offset 132.
  const auto c = make_codec(codec_id::zvc, 4);
  bytes in33;
  for (std::uint32_t i = 0; i < 33; ++i) in33 = cat(in33, le32({0x01000000u + i}));
  const bytes s31 = encode(*c, bytes(in33.begin(), in33.begin() + 124));
  ASSERT_EQ(s31.size(), 128u);
  EXPECT_EQ(bytes(s31.begin(), s31.begin() + 8), (bytes{0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x00, 0x01}));
  const bytes s32 = encode(*c, bytes(in33.begin(), in33.begin() + 128));
  ASSERT_EQ(s32.size(), 132u);
  EXPECT_EQ(bytes(s32.begin(), s32.begin() + 4), (bytes{0xFF, 0xFF, 0xFF, 0xFF}));
  const bytes s33 = encode(*c, in33);
  ASSERT_EQ(s33.size(), 140u);
  EXPECT_EQ(bytes(s33.begin() + 132, s33.end()), (bytes{0x01, 0, 0, 0, 0x20, 0x00, 0x00, 0x01}));
  // Alternating zero / nonzero over 32 elements: nonzero at odd i -> mask 0xAAAAAAAA = AA AA AA AA.
  bytes alt;
  for (std::uint32_t i = 0; i < 32; ++i) alt = cat(alt, le32({i % 2 ? i : 0u}));
  const bytes sa = encode(*c, alt);
  ASSERT_EQ(sa.size(), 4u + 16 * 4);
  EXPECT_EQ(bytes(sa.begin(), sa.begin() + 12), (bytes{0xAA, 0xAA, 0xAA, 0xAA, 1, 0, 0, 0, 3, 0, 0, 0}));
}

// ---- ZVC, w = 2 and w = 1 --------------------------------------------------------------------

TEST(Zvc2, HandEncodings) {
  expect_zvc(2, {}, {});
  expect_zvc(2, {0x00, 0x00}, {0, 0, 0, 0});              // [0] -> mask only
  expect_zvc(2, {0x00, 0x80}, {0x01, 0, 0, 0, 0x00, 0x80});  // [-0.0 fp16 = 0x8000] nonzero
  expect_zvc(2, {0x01, 0x7E}, {0x01, 0, 0, 0, 0x01, 0x7E});  // [NaN 0x7E01 with payload]
  expect_zvc(2, {0x5A}, {0x5A});                          // L = 1: E = 0, tail only
  // [0x0000, 0x8000, 0x0001, 0x0000, 0x7E01] + tail 5A (L = 11): nonzero at 1, 2, 4 -> mask 0x16.
  // Stream: 16 00 00 00 | 00 80 | 01 00 | 01 7E | 5A (11 bytes).
  expect_zvc(2, {0, 0, 0x00, 0x80, 0x01, 0x00, 0, 0, 0x01, 0x7E, 0x5A},
             {0x16, 0, 0, 0, 0x00, 0x80, 0x01, 0x00, 0x01, 0x7E, 0x5A});
  for (std::size_t e : {1u, 31u, 32u, 33u}) {
    const std::size_t blocks = (e + 31) / 32;
    expect_zvc(2, bytes(2 * e, 0), bytes(4 * blocks, 0));
    // All 0x0101: size = 4 * blocks + 2 * e (1 -> 6, 31 -> 66, 32 -> 68, 33 -> 74).
    const auto c = make_codec(codec_id::zvc, 2);
    const bytes in(2 * e, 0x01);
    const bytes s = encode(*c, in);
    EXPECT_EQ(s.size(), 4 * blocks + 2 * e);
    EXPECT_EQ(decode(*c, s, in.size()), in);
  }
  // 33 x 0x0101: FF FF FF FF + 64 bytes of 01, then 01 00 00 00 01 01.
  const auto c = make_codec(codec_id::zvc, 2);
  const bytes s = encode(*c, bytes(66, 0x01));
  bytes expect = {0xFF, 0xFF, 0xFF, 0xFF};
  expect.insert(expect.end(), 64, 0x01);
  expect = cat(expect, {0x01, 0, 0, 0, 0x01, 0x01});
  EXPECT_EQ(s, expect);
}

TEST(Zvc1, HandEncodings) {
  expect_zvc(1, {}, {});
  expect_zvc(1, {0x00}, {0, 0, 0, 0});
  expect_zvc(1, {0x80}, {0x01, 0, 0, 0, 0x80});
  // [0, 5, 0, 0, FF, 80]: nonzero at 1, 4, 5 -> mask 0b110010 = 0x32 -> 32 00 00 00 05 FF 80.
  expect_zvc(1, {0, 5, 0, 0, 0xFF, 0x80}, {0x32, 0, 0, 0, 0x05, 0xFF, 0x80});
  // 31 x 0x07: mask 0x7FFFFFFF = FF FF FF 7F, then 31 x 07 (35 bytes).
  bytes e31 = {0xFF, 0xFF, 0xFF, 0x7F};
  e31.insert(e31.end(), 31, 0x07);
  expect_zvc(1, bytes(31, 0x07), e31);
  // 32 x 0x07: FF FF FF FF + 32 x 07 (36 bytes).
  bytes e32 = {0xFF, 0xFF, 0xFF, 0xFF};
  e32.insert(e32.end(), 32, 0x07);
  expect_zvc(1, bytes(32, 0x07), e32);
  // 33 x 0x07: FF FF FF FF + 32 x 07, then 01 00 00 00 07 (41 bytes).
  expect_zvc(1, bytes(33, 0x07), cat(e32, {0x01, 0, 0, 0, 0x07}));
  // 33 zeros: two masks, 8 bytes of 00.
  expect_zvc(1, bytes(33, 0), bytes(8, 0));
  // 32 bytes, only the last (index 31) nonzero: mask 0x80000000 -> 00 00 00 80, then 2A.
  bytes last(32, 0);
  last[31] = 0x2A;
  expect_zvc(1, last, {0, 0, 0, 0x80, 0x2A});
}

TEST(Zvc, RandomRoundTripAllWidths) {
  std::mt19937 rng(12345);
  for (unsigned w : {1u, 2u, 4u}) {
    const auto c = make_codec(codec_id::zvc, w);
    for (int trial = 0; trial < 200; ++trial) {
      const std::size_t n = rng() % 700;
      bytes in(n);
      const unsigned density = rng() % 5;  // 0..4 quarters of bytes nonzero
      for (auto& b : in) b = (rng() % 4 < density) ? static_cast<std::uint8_t>(rng() % 255 + 1) : 0;
      const bytes s = encode(*c, in);
      EXPECT_EQ(s.size(), c->compressed_size(in.data(), n));
      EXPECT_EQ(decode(*c, s, n), in);
    }
  }
}

// ---- ZVC decoder validation ------------------------------------------------------------------

TEST(ZvcCorrupt, TruncatedTooLongAndMaskOverrunForEachWidth) {
  for (unsigned w : {1u, 2u, 4u}) {
    SCOPED_TRACE("w=" + std::to_string(w));
    const auto c = make_codec(codec_id::zvc, w);
    // 40 elements + 1 tail byte (for w > 1), every 3rd element nonzero.
    const std::size_t n = 40 * w + (w > 1 ? 1 : 0);
    bytes in(n, 0);
    for (std::size_t i = 0; i < 40; i += 3) in[i * w] = static_cast<std::uint8_t>(i + 1);
    if (w > 1) in[n - 1] = 0x77;
    const bytes s = encode(*c, in);
    ASSERT_EQ(decode(*c, s, n), in);
    // Every proper prefix is truncated.
    for (std::size_t cut = 0; cut < s.size(); ++cut)
      expect_corrupt(*c, bytes(s.begin(), s.begin() + cut), n, "truncated");
    // One extra byte: too long, at offset s.size().
    expect_corrupt(*c, cat(s, {0}), n, "too long: 1 extra bytes at offset " + std::to_string(s.size()));
    // Decoding for a shorter length (39 elements: final block k = 7, and element 39 = bit 7 of
    // its mask is nonzero) is refused by the mask check; for a longer length it is truncated.
    expect_corrupt(*c, s, n - w, "bits set at or above element 7");
    expect_corrupt(*c, s, n + 32 * w, "truncated");
    // Mask FF FF FF FF for one full block, only 3 data bytes present: mask implies 32 * w bytes.
    expect_corrupt(*c, {0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3}, 32 * w,
                   "implies " + std::to_string(32 * w) + " bytes of nonzero elements, only 3 bytes left");
    // Final block of k = 5 elements with mask bit 5 set (0x20): bits beyond the block.
    expect_corrupt(*c, cat({0x20, 0, 0, 0}, bytes(w, 1)), 5 * w, "bits set at or above element 5");
    // Mask says 2 nonzero, data for 1 in a 2-element block.
    expect_corrupt(*c, cat({0x03, 0, 0, 0}, bytes(w, 1)), 2 * w, "truncated at offset 4");
  }
}

// ---- the shipped sample ------------------------------------------------------------------------

namespace {
struct layer_ref {
  const char* key;
  std::uint64_t elements, nnz, zvc_bytes;
};
// Whole-tensor ZVC size (w = 4) of each layer of workloads/data/inception_v3/chelsea.npz,
// computed independently with NumPy by tests/unit/zvc_sizes.py (run with /usr/bin/python3,
// NumPy 1.24):  size = sum over 32-element blocks (4 + 4 * nnz_block) + (L mod 4)
//                    = 4 * ceil(E / 32) + 4 * nnz, nnz = count of float32 bit patterns != 0.
const layer_ref k_layers[] = {
    {"activation_1", 710432, 300871, 1292288},
    {"activation_2", 691488, 308738, 1321388},
    {"activation_3", 1382976, 974724, 4071768},
    {"activation_4", 426320, 245150, 1033892},
    {"activation_5", 967872, 584810, 2460224},
    {"activation_6", 78400, 57779, 240916},
    {"activation_7", 58800, 39121, 163836},
    {"activation_8", 78400, 35826, 153104},
    {"activation_9", 78400, 38555, 164020},
    {"activation_10", 117600, 46490, 200660},
    {"activation_11", 117600, 40905, 178320},
    {"activation_12", 39200, 10834, 48236},
    {"activation_13", 78400, 54287, 226948},
    {"activation_14", 58800, 28591, 121716},
    {"activation_15", 78400, 33474, 143696},
    {"activation_16", 78400, 35065, 150060},
    {"activation_17", 117600, 41223, 179592},
    {"activation_18", 117600, 40815, 177960},
    {"activation_19", 78400, 22314, 99056},
    {"activation_20", 78400, 43107, 182228},
    {"activation_21", 58800, 30067, 127620},
    {"activation_22", 78400, 33059, 142036},
    {"activation_23", 78400, 39309, 167036},
    {"activation_24", 117600, 42720, 185580},
    {"activation_25", 117600, 44067, 190968},
    {"activation_26", 78400, 29084, 126136},
    {"activation_27", 110976, 29999, 133868},
    {"activation_28", 78400, 28856, 125224},
    {"activation_29", 117600, 20705, 97520},
    {"activation_30", 27744, 13796, 58652},
    {"activation_31", 55488, 23560, 101176},
    {"activation_32", 36992, 10727, 47532},
    {"activation_33", 36992, 15204, 65440},
    {"activation_34", 55488, 15731, 69860},
    {"activation_35", 36992, 12863, 56076},
    {"activation_36", 36992, 13862, 60072},
    {"activation_37", 36992, 14038, 60776},
    {"activation_38", 36992, 16131, 69148},
    {"activation_39", 55488, 14378, 64448},
    {"activation_40", 55488, 13996, 62920},
    {"activation_41", 55488, 24226, 103840},
    {"activation_42", 46240, 14347, 63168},
    {"activation_43", 46240, 17748, 76772},
    {"activation_44", 55488, 17231, 75860},
    {"activation_45", 46240, 14041, 61944},
    {"activation_46", 46240, 14375, 63280},
    {"activation_47", 46240, 15220, 66660},
    {"activation_48", 46240, 19058, 82012},
    {"activation_49", 55488, 10160, 47576},
    {"activation_50", 55488, 13979, 62852},
    {"activation_51", 55488, 21036, 91080},
    {"activation_52", 46240, 12607, 56208},
    {"activation_53", 46240, 13924, 61476},
    {"activation_54", 55488, 14924, 66632},
    {"activation_55", 46240, 12344, 55156},
    {"activation_56", 46240, 14159, 62416},
    {"activation_57", 46240, 11163, 50432},
    {"activation_58", 46240, 16392, 71348},
    {"activation_59", 55488, 10521, 49020},
    {"activation_60", 55488, 11812, 54184},
    {"activation_61", 55488, 9323, 44228},
    {"activation_62", 55488, 9035, 43076},
    {"activation_63", 55488, 17998, 78928},
    {"activation_64", 55488, 8096, 39320},
    {"activation_65", 55488, 12621, 57420},
    {"activation_66", 55488, 12273, 56028},
    {"activation_67", 55488, 10852, 50344},
    {"activation_68", 55488, 17911, 78580},
    {"activation_69", 55488, 5564, 29192},
    {"activation_70", 55488, 5336, 28280},
    {"activation_71", 55488, 9668, 45608},
    {"activation_72", 20480, 2378, 12072},
    {"activation_73", 55488, 14893, 66508},
    {"activation_74", 55488, 18013, 78988},
    {"activation_75", 55488, 12711, 57780},
    {"activation_76", 12288, 3863, 16988},
    {"activation_77", 20480, 2679, 13276},
    {"activation_78", 24576, 4894, 22648},
    {"activation_79", 24576, 1641, 9636},
    {"activation_80", 24576, 2070, 11352},
    {"activation_81", 28672, 5482, 25512},
    {"activation_82", 24576, 6343, 28444},
    {"activation_83", 24576, 1143, 7644},
    {"activation_84", 24576, 1604, 9488},
    {"activation_85", 12288, 2198, 10328},
    {"activation_86", 20480, 5244, 23536},
    {"activation_87", 24576, 286, 4216},
    {"activation_88", 24576, 996, 7056},
    {"activation_89", 24576, 1850, 10472},
    {"activation_90", 28672, 1738, 10536},
    {"activation_91", 24576, 2371, 12556},
    {"activation_92", 24576, 2021, 11156},
    {"activation_93", 24576, 3472, 16960},
    {"activation_94", 12288, 3282, 14664},
};
}  // namespace

TEST(ZvcSample, EveryInceptionLayerSizeAndRoundTrip) {
  const std::string path = std::string(CDMA_WORKLOADS_DATA_DIR) + "/inception_v3/chelsea.npz";
  const cdma::workloads::npz_archive z(path);
  ASSERT_EQ(z.keys().size(), std::size(k_layers));
  const auto c4 = make_codec(codec_id::zvc, 4);
  const auto c2 = make_codec(codec_id::zvc, 2);
  const auto c1 = make_codec(codec_id::zvc, 1);
  std::uint64_t total_in = 0, total_out = 0;
  for (std::size_t i = 0; i < std::size(k_layers); ++i) {
    const layer_ref& ref = k_layers[i];
    SCOPED_TRACE(ref.key);
    ASSERT_EQ(z.keys()[i], ref.key);
    const cdma::workloads::npy_array a = z.read(ref.key);
    ASSERT_EQ(a.elements(), ref.elements);
    const bytes& in = a.data;
    EXPECT_EQ(c4->compressed_size(in.data(), in.size()), ref.zvc_bytes);
    bytes s(c4->max_compressed_size(in.size()));
    s.resize(c4->compress(in.data(), in.size(), s.data()));
    EXPECT_EQ(s.size(), ref.zvc_bytes);
    bytes back(in.size());
    c4->decompress(s.data(), s.size(), back.data(), back.size());
    EXPECT_TRUE(back == in);
    total_in += in.size();
    total_out += s.size();
    // Widths 2 and 1 on the same bytes round-trip too (sizes only checked for consistency).
    for (const codec* c : {c2.get(), c1.get()}) {
      bytes s2(c->max_compressed_size(in.size()));
      s2.resize(c->compress(in.data(), in.size(), s2.data()));
      EXPECT_EQ(s2.size(), c->compressed_size(in.data(), in.size()));
      bytes back2(in.size());
      c->decompress(s2.data(), s2.size(), back2.data(), back2.size());
      EXPECT_TRUE(back2 == in) << "w=" << c->element_width();
    }
    // Windowed (4 KiB) framing round trip, and size-only path agrees with compress_window.
    bytes framed(in.size());
    std::vector<window_entry> entries;
    std::size_t pos = 0;
    for (std::size_t off = 0; off < in.size(); off += 4096) {
      const std::size_t n = std::min<std::size_t>(4096, in.size() - off);
      const window_entry e = compress_window(*c4, in.data() + off, n, framed.data() + pos);
      const window_entry e2 = window_size(*c4, in.data() + off, n);
      EXPECT_EQ(e.bytes, e2.bytes);
      EXPECT_EQ(e.raw, e2.raw);
      entries.push_back(e);
      pos += e.bytes;
    }
    ASSERT_EQ(entries.size(), window_count(in.size(), 4096));
    bytes unframed(in.size());
    std::size_t rd = 0;
    for (std::size_t wi = 0; wi < entries.size(); ++wi) {
      const std::size_t off = wi * 4096;
      const std::size_t n = std::min<std::size_t>(4096, in.size() - off);
      decompress_window(*c4, entries[wi], framed.data() + rd, pos - rd, unframed.data() + off, n);
      rd += entries[wi].bytes;
    }
    EXPECT_EQ(rd, pos);
    EXPECT_TRUE(unframed == in);
  }
  // Sum of the table: cross-check of the whole file against the manifest's zero count
  // (zeros_total 5003541 of 8967488 elements -> nnz 3963947).
  std::uint64_t nnz = 0;
  for (const auto& l : k_layers) nnz += l.nnz;
  EXPECT_EQ(nnz, 8967488u - 5003541u);
  EXPECT_EQ(total_in, 4u * 8967488u);
  EXPECT_GT(total_out, 0u);
}

// ---- window framing ----------------------------------------------------------------------------

TEST(Window, EntryEncodeDecode) {
  std::uint8_t b[8];
  encode_entry(window_entry{0x12345678, true}, b);
  // u32 LE bytes, then flags = 1 (raw) LE.
  EXPECT_EQ(bytes(b, b + 8), (bytes{0x78, 0x56, 0x34, 0x12, 0x01, 0x00, 0x00, 0x00}));
  window_entry e = decode_entry(b);
  EXPECT_EQ(e.bytes, 0x12345678u);
  EXPECT_TRUE(e.raw);
  encode_entry(window_entry{512, false}, b);
  EXPECT_EQ(bytes(b, b + 8), (bytes{0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}));
  e = decode_entry(b);
  EXPECT_EQ(e.bytes, 512u);
  EXPECT_FALSE(e.raw);
  const std::uint8_t bad[8] = {0x10, 0, 0, 0, 0x03, 0, 0, 0};  // flag bit 1 is reserved
  try {
    decode_entry(bad);
    ADD_FAILURE();
  } catch (const codec_error& err) {
    EXPECT_NE(std::string(err.what()).find("0x00000003"), std::string::npos) << err.what();
  }
  const std::uint8_t bad2[8] = {0, 0, 0, 0, 0, 0, 0, 0x80};  // bit 31
  EXPECT_THROW(decode_entry(bad2), codec_error);
}

TEST(Window, Count) {
  EXPECT_EQ(window_count(0, 4096), 0u);
  EXPECT_EQ(window_count(1, 4096), 1u);
  EXPECT_EQ(window_count(4096, 4096), 1u);
  EXPECT_EQ(window_count(4097, 4096), 2u);
  EXPECT_EQ(window_count(10ull << 30, 4096), 2621440u);  // 10 GiB / 4 KiB
  EXPECT_THROW(window_count(1, 0), codec_error);
}

TEST(Window, RawFallbackOnIncompressibleData) {
  const auto c = make_codec(codec_id::zvc, 4);
  // 4096 bytes = 1024 elements, all nonzero: ZVC would take 32 masks * 4 + 4096 = 4224 > 4096
  // -> stored raw.
  std::mt19937 rng(7);
  bytes in(4096);
  for (auto& b : in) b = static_cast<std::uint8_t>(rng() % 255 + 1);
  bytes out(4096 + 16, 0xEE);
  const window_entry e = compress_window(*c, in.data(), in.size(), out.data());
  EXPECT_TRUE(e.raw);
  EXPECT_EQ(e.bytes, 4096u);
  EXPECT_TRUE(bytes(out.begin(), out.begin() + 4096) == in);
  for (std::size_t i = 4096; i < out.size(); ++i) ASSERT_EQ(out[i], 0xEE) << "wrote past n";
  const window_entry s = window_size(*c, in.data(), in.size());
  EXPECT_TRUE(s.raw);
  EXPECT_EQ(s.bytes, 4096u);
  bytes back(4096);
  decompress_window(*c, e, out.data(), 4096, back.data(), 4096);
  EXPECT_TRUE(back == in);

  // All zero: 1024 elements = 32 blocks -> 32 masks of 4 bytes = 128 bytes, compressed.
  const bytes zeros(4096, 0);
  const window_entry z = compress_window(*c, zeros.data(), zeros.size(), out.data());
  EXPECT_FALSE(z.raw);
  EXPECT_EQ(z.bytes, 128u);
  EXPECT_TRUE(bytes(out.begin(), out.begin() + 128) == bytes(128, 0));

  // Break-even: 32 elements (128 bytes) with 31 nonzero -> 4 + 124 = 128, not smaller -> raw;
  // with 30 nonzero -> 4 + 120 = 124 < 128 -> compressed.
  bytes w31(128, 0x11), w30(128, 0x11);
  std::memset(&w31[0], 0, 4);
  std::memset(&w30[0], 0, 8);
  bytes o(128 + 8, 0xEE);
  const window_entry e31 = compress_window(*c, w31.data(), 128, o.data());
  EXPECT_TRUE(e31.raw);
  EXPECT_EQ(e31.bytes, 128u);
  const window_entry e30 = compress_window(*c, w30.data(), 128, o.data());
  EXPECT_FALSE(e30.raw);
  EXPECT_EQ(e30.bytes, 124u);
  for (std::size_t i = 128; i < o.size(); ++i) ASSERT_EQ(o[i], 0xEE) << "wrote past n";
  // Mask of w30: elements 0 and 1 zero -> 0xFFFFFFFC = FC FF FF FF.
  EXPECT_EQ(bytes(o.begin(), o.begin() + 4), (bytes{0xFC, 0xFF, 0xFF, 0xFF}));
  EXPECT_EQ(window_size(*c, w31.data(), 128).raw, true);
  EXPECT_EQ(window_size(*c, w30.data(), 128).bytes, 124u);
}

TEST(Window, DecompressValidatesEntry) {
  const auto c = make_codec(codec_id::zvc, 4);
  const bytes in = le32({0, 0, 7, 0});  // 16 bytes -> mask 04 00 00 00 + 07 00 00 00 = 8 bytes
  bytes framed(16);
  const window_entry e = compress_window(*c, in.data(), 16, framed.data());
  ASSERT_FALSE(e.raw);
  ASSERT_EQ(e.bytes, 8u);
  EXPECT_EQ(bytes(framed.begin(), framed.begin() + 8), (bytes{0x04, 0, 0, 0, 0x07, 0, 0, 0}));
  bytes out(16);
  // Fine with extra bytes available after the window (only e.bytes are read).
  decompress_window(*c, e, framed.data(), 16, out.data(), 16);
  EXPECT_EQ(out, in);

  auto expect_bad = [&](const window_entry& we, std::size_t in_n, std::size_t out_n, const std::string& part) {
    try {
      decompress_window(*c, we, framed.data(), in_n, out.data(), out_n);
      ADD_FAILURE() << "accepted: " << part;
    } catch (const codec_error& err) {
      EXPECT_NE(std::string(err.what()).find(part), std::string::npos) << err.what();
    }
  };
  expect_bad(window_entry{8, false}, 7, 16, "only 7 are available");            // bytes > in_n
  expect_bad(window_entry{12, true}, 16, 16, "expected exactly the window size 16");  // raw, wrong size
  expect_bad(window_entry{16, false}, 16, 16, "stored raw");                    // compressed >= out_n
  expect_bad(window_entry{7, false}, 16, 16, "truncated");                      // codec rejects
  expect_bad(window_entry{7, false}, 16, 16, "window (zvc, 7 -> 16 bytes)");
  framed[0] = 0x05;  // mask now implies 2 elements, 1 present
  expect_bad(window_entry{8, false}, 16, 16, "implies 8 bytes");
}

// The metadata-table rule both engine prefetch paths apply (codec::decode_table).
TEST(WindowTable, ValidatesEveryEntryAndNamesTheBadOne) {
  using namespace cdma::codec;
  const auto zvc = make_codec(codec_id::zvc, 4);
  // 2 full 4 KiB windows + a 100-byte tail: 3 entries. ZVC worst case of a 4096-byte window at
  // w=4 is 32 blocks x (4 B mask + 32 x 4 B) = 4224 B.
  const std::uint64_t len = 2 * 4096 + 100;
  std::vector<std::uint8_t> t(3 * window_entry_bytes);
  encode_entry({4224, false}, t.data());
  encode_entry({4096, true}, t.data() + 8);
  encode_entry({100, true}, t.data() + 16);
  const auto e = decode_table(*zvc, t.data(), len, 4096, 0x1000);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].bytes, 4224u);
  EXPECT_TRUE(e[2].raw);
  // One byte over the worst case in entry 0, a raw entry of the wrong size in entry 2.
  encode_entry({4225, false}, t.data());
  try {
    decode_table(*zvc, t.data(), len, 4096, 0x1000);
    FAIL();
  } catch (const table_error& x) {
    EXPECT_EQ(x.index, 0u);
    EXPECT_NE(std::string(x.what()).find("0x1000"), std::string::npos) << x.what();
  }
  encode_entry({4224, false}, t.data());
  encode_entry({99, true}, t.data() + 16);
  try {
    decode_table(*zvc, t.data(), len, 4096, 0x1000);
    FAIL();
  } catch (const table_error& x) {
    EXPECT_EQ(x.index, 2u);
    EXPECT_NE(std::string(x.what()).find("0x1010"), std::string::npos) << x.what();
  }
}
