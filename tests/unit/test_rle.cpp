// Unit tests of the RLE codec (tlm/codec/rle.h, docs/codecs.md). Token = count (C bytes LE,
// C = count_bits / 8) then one literal element (w bytes); the literal is omitted only when the
// run reaches the end of the elements; a run Z > M = 2^count_bits - 1 is continued by tokens
// (M, zero element) of M + 1 zeros each. Every expected stream is derived by hand in its comment.
#include "tlm/codec/codec.h"
#include "tlm/codec/rle.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace cdma::codec;
using bytes = std::vector<std::uint8_t>;

namespace {

bytes le32(std::initializer_list<std::uint32_t> words) {
  bytes b;
  for (auto v : words)
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  return b;
}

void expect_rle(unsigned w, unsigned bits, const bytes& in, const bytes& expected) {
  const rle_codec c(w, bits);
  bytes out(c.max_compressed_size(in.size()) + 8, 0xEE);
  const std::size_t n = c.compress(in.data(), in.size(), out.data());
  for (std::size_t i = c.max_compressed_size(in.size()); i < out.size(); ++i)
    ASSERT_EQ(out[i], 0xEE) << "wrote past max_compressed_size";
  out.resize(n);
  EXPECT_EQ(out, expected) << "w=" << w << " bits=" << bits << " n=" << in.size();
  EXPECT_EQ(c.compressed_size(in.data(), in.size()), expected.size());
  bytes back(in.size() + 8, 0xEE);
  c.decompress(expected.data(), expected.size(), back.data(), in.size());
  for (std::size_t i = in.size(); i < back.size(); ++i) ASSERT_EQ(back[i], 0xEE);
  back.resize(in.size());
  EXPECT_EQ(back, in);
}

void expect_corrupt(const rle_codec& c, const bytes& s, std::size_t out_n, const std::string& part) {
  bytes out(out_n + 1);
  try {
    c.decompress(s.data(), s.size(), out.data(), out_n);
    ADD_FAILURE() << "accepted corrupt stream, expected '" << part << "'";
  } catch (const codec_error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Rle, HandEncodingsW4Count8) {
  expect_rle(4, 8, {}, {});                                      // no elements, no tokens
  expect_rle(4, 8, le32({5}), {0x00, 0x05, 0, 0, 0});           // (0, 5)
  expect_rle(4, 8, le32({0}), {0x01});                          // run to the end: count only
  // [0, 0, 7, 0] -> (2, 07 00 00 00), (1) = 02 07 00 00 00 01.
  expect_rle(4, 8, le32({0, 0, 7, 0}), {0x02, 0x07, 0, 0, 0, 0x01});
  // Buffer ending in zeros: [1, 0, 0] -> (0, 01 00 00 00), (2) = 00 01 00 00 00 02.
  expect_rle(4, 8, le32({1, 0, 0}), {0x00, 0x01, 0, 0, 0, 0x02});
  // -0.0 (0x80000000) and a NaN payload are literals, bit-exact.
  expect_rle(4, 8, le32({0x80000000, 0x7FC12345}),
             {0x00, 0, 0, 0, 0x80, 0x00, 0x45, 0x23, 0xC1, 0x7F});
  // Trailing L mod 4 bytes verbatim: [0, 0x11223344] + AB -> 01 44 33 22 11 AB.
  bytes t = le32({0, 0x11223344});
  t.push_back(0xAB);
  expect_rle(4, 8, t, {0x01, 0x44, 0x33, 0x22, 0x11, 0xAB});
  expect_rle(4, 8, {0x00, 0x00, 0x01}, {0x00, 0x00, 0x01});     // E = 0: tail only
}

TEST(Rle, RunsLongerThanTheCountField) {
  // 255 zeros = M: one count-only token FF.
  expect_rle(4, 8, bytes(4 * 255, 0), {0xFF});
  // 256 zeros: (255, zero element) covers all 256 -> FF 00 00 00 00 (5 bytes).
  expect_rle(4, 8, bytes(4 * 256, 0), {0xFF, 0, 0, 0, 0});
  // 300 zeros: (255, 0) = 256 zeros, then 44 = 0x2C count-only -> FF 00 00 00 00 2C.
  expect_rle(4, 8, bytes(4 * 300, 0), {0xFF, 0, 0, 0, 0, 0x2C});
  // 257 zeros then 1.0f: (255, 0) = 256 zeros, (1, 00 00 80 3F).
  bytes in(4 * 257, 0);
  const bytes one = le32({0x3F800000});
  in.insert(in.end(), one.begin(), one.end());
  expect_rle(4, 8, in, {0xFF, 0, 0, 0, 0, 0x01, 0x00, 0x00, 0x80, 0x3F});
  // 512 zeros then 9: two (255, 0) tokens = 512 zeros, then (0, 09 00 00 00).
  bytes in2(4 * 512, 0);
  const bytes nine = le32({9});
  in2.insert(in2.end(), nine.begin(), nine.end());
  expect_rle(4, 8, in2, {0xFF, 0, 0, 0, 0, 0xFF, 0, 0, 0, 0, 0x00, 0x09, 0, 0, 0});
  // 16-bit count, w = 2: 70000 zeros: (65535, 00 00) = 65536, then 4464 = 0x1170 count-only
  // -> FF FF 00 00 70 11.
  expect_rle(2, 16, bytes(2 * 70000, 0), {0xFF, 0xFF, 0x00, 0x00, 0x70, 0x11});
  // 24-bit count, w = 1: [0 x 300, 7] -> count 300 = 2C 01 00, literal 07.
  bytes in3(300, 0);
  in3.push_back(7);
  expect_rle(1, 24, in3, {0x2C, 0x01, 0x00, 0x07});
}

TEST(Rle, WidthsOneAndTwo) {
  // w = 1: [0, 0, 0, 9, 0] -> (3, 09), (1) = 03 09 01.
  expect_rle(1, 8, {0, 0, 0, 9, 0}, {0x03, 0x09, 0x01});
  // w = 2: [0x8000 (-0.0 fp16), 0, 0] -> (0, 00 80), (2) = 00 00 80 02.
  expect_rle(2, 8, {0x00, 0x80, 0, 0, 0, 0}, {0x00, 0x00, 0x80, 0x02});
  // w = 2 with one trailing byte: [0] + 5A -> 01 5A.
  expect_rle(2, 8, {0, 0, 0x5A}, {0x01, 0x5A});
}

TEST(Rle, ParametersValidated) {
  EXPECT_THROW(rle_codec(4, 4), codec_error);
  EXPECT_THROW(rle_codec(4, 12), codec_error);
  EXPECT_THROW(rle_codec(3, 8), codec_error);
  EXPECT_EQ(rle_codec(4, 32).count_bits(), 32u);
  codec_params p;
  p.rle_count_bits = 16;
  const auto c = make_codec(codec_id::rle, 2, p);
  EXPECT_EQ(dynamic_cast<const rle_codec&>(*c).count_bits(), 16u);
  EXPECT_EQ(make_codec(codec_id::rle)->max_compressed_size(40), 10u * 5);  // E (C + w)
}

TEST(Rle, DecoderRejectsCorruptStreams) {
  const rle_codec c(4, 8);
  // Valid: [0, 0, 7, 0] -> 02 07 00 00 00 01 (6 bytes, 16 decoded).
  const bytes s = {0x02, 0x07, 0, 0, 0, 0x01};
  for (std::size_t cut = 0; cut < s.size(); ++cut)
    expect_corrupt(c, bytes(s.begin(), s.begin() + cut), 16, "truncated");
  bytes longer = s;
  longer.push_back(0);
  expect_corrupt(c, longer, 16, "too long: 1 extra bytes at offset 6");
  // Run overflowing the output: count 5 with only 3 elements to decode.
  expect_corrupt(c, {0x05}, 12, "overflows the output");
  // Count 2 then literal, for an output of 2 elements: the literal has no room -> the literal
  // position is past the end: count 2 fills it, so the literal bytes are "too long".
  expect_corrupt(c, {0x02, 0x07, 0, 0, 0}, 8, "too long");
  // Tail expected (out_n = 5: one element + 1 byte) but missing.
  expect_corrupt(c, {0x01}, 5, "trailing");
  // Empty output accepts only the empty stream.
  expect_corrupt(c, {0x00}, 0, "too long");
}

TEST(Rle, RandomRoundTripAllWidthsAndCountWidths) {
  std::mt19937 rng(99);
  for (unsigned w : {1u, 2u, 4u})
    for (unsigned bits : {8u, 16u, 24u, 32u}) {
      const rle_codec c(w, bits);
      for (int trial = 0; trial < 60; ++trial) {
        const std::size_t n = rng() % 3000;
        bytes in(n, 0);
        // Clustered zeros: long zero runs (up to 600 elements) between short literal bursts.
        std::size_t i = 0;
        while (i < n) {
          i += rng() % 600 * w;
          for (std::size_t k = rng() % 20; k > 0 && i < n; --k, ++i) in[i] = static_cast<std::uint8_t>(rng());
        }
        bytes s(c.max_compressed_size(n));
        s.resize(c.compress(in.data(), n, s.data()));
        EXPECT_EQ(s.size(), c.compressed_size(in.data(), n));
        bytes back(n);
        c.decompress(s.data(), s.size(), back.data(), n);
        ASSERT_EQ(back, in) << "w=" << w << " bits=" << bits << " n=" << n;
      }
    }
}
