// zlib, lz4 and zstd codecs (tlm/codec/stdlib_codecs.h). Interoperability of zlib with an
// independent implementation: Python's zlib module (Debian's /usr/bin/python3) decodes our
// stream, and a stream made by Python decodes with ours.
#include "tlm/codec/codec.h"
#include "tlm/codec/stdlib_codecs.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace cdma::codec;
using bytes = std::vector<std::uint8_t>;

namespace {

void write_file(const std::string& path, const bytes& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}
bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
int run_python(const std::string& code) {
  const std::string cmd = std::string(CDMA_PYTHON) + " -c \"" + code + "\"";
  return std::system(cmd.c_str());
}
// Sparse fp32-like test data: element i (LE u32) = 0 unless i % 5 < 2, then 0x3F800000 + i.
bytes pattern(std::size_t elements) {
  bytes b(4 * elements, 0);
  for (std::size_t i = 0; i < elements; ++i)
    if (i % 5 < 2) {
      const std::uint32_t v = 0x3F800000u + static_cast<std::uint32_t>(i);
      for (int k = 0; k < 4; ++k) b[4 * i + k] = static_cast<std::uint8_t>(v >> (8 * k));
    }
  return b;
}

}  // namespace

TEST(Zlib, OurStreamDecodesWithPython) {
  const std::string dir = testing::TempDir();
  for (int level : {0, 1, 6, 9}) {
    SCOPED_TRACE("level " + std::to_string(level));
    const zlib_codec c(4, level);
    const bytes in = pattern(10000);
    bytes s(c.max_compressed_size(in.size()));
    s.resize(c.compress(in.data(), in.size(), s.data()));
    EXPECT_EQ(s.size(), c.compressed_size(in.data(), in.size()));
    // RFC 1950 header: CMF 0x78 (deflate, 32 KiB window); (CMF * 256 + FLG) % 31 == 0.
    ASSERT_GE(s.size(), 6u);
    EXPECT_EQ(s[0], 0x78);
    EXPECT_EQ((s[0] * 256 + s[1]) % 31, 0);
    const std::string zin = dir + "cdma_zlib_ours.z", zout = dir + "cdma_zlib_ours.out";
    write_file(zin, s);
    std::remove(zout.c_str());
    ASSERT_EQ(run_python("import zlib,sys; d=open('" + zin + "','rb').read(); "
                         "open('" + zout + "','wb').write(zlib.decompress(d))"),
              0);
    EXPECT_TRUE(read_file(zout) == in);
  }
}

TEST(Zlib, PythonStreamDecodesWithOurs) {
  const std::string dir = testing::TempDir();
  const std::string zfile = dir + "cdma_zlib_py.z";
  std::remove(zfile.c_str());
  // Python builds the same pattern as pattern(10000) and compresses it at level 9.
  ASSERT_EQ(run_python("import zlib,struct; "
                       "b=b''.join(struct.pack('<I', 0x3F800000+i if i%5<2 else 0) for i in range(10000)); "
                       "open('" + zfile + "','wb').write(zlib.compress(b, 9))"),
            0);
  const bytes s = read_file(zfile);
  ASSERT_FALSE(s.empty());
  const bytes expect = pattern(10000);
  bytes out(expect.size());
  zlib_codec(4).decompress(s.data(), s.size(), out.data(), out.size());
  EXPECT_TRUE(out == expect);
  // Decoding for a wrong size is refused.
  bytes big(expect.size() + 4);
  EXPECT_THROW(zlib_codec(4).decompress(s.data(), s.size(), big.data(), big.size()), codec_error);
  EXPECT_THROW(zlib_codec(4).decompress(s.data(), s.size(), out.data(), out.size() - 4), codec_error);
}

TEST(StdlibCodecs, ParametersValidated) {
  EXPECT_THROW(zlib_codec(4, 10), codec_error);
  EXPECT_THROW(zlib_codec(4, -1), codec_error);
  EXPECT_THROW(lz4_codec(4, 13), codec_error);
  EXPECT_THROW(zstd_codec(4, 23), codec_error);
  EXPECT_THROW(zstd_codec(3, 1), codec_error);
  codec_params p;
  p.zlib_level = 9;
  p.lz4_level = 9;
  p.zstd_level = 19;
  EXPECT_EQ(dynamic_cast<const zlib_codec&>(*make_codec(codec_id::zlib, 4, p)).level(), 9);
  EXPECT_EQ(dynamic_cast<const lz4_codec&>(*make_codec(codec_id::lz4, 4, p)).level(), 9);
  EXPECT_EQ(dynamic_cast<const zstd_codec&>(*make_codec(codec_id::zstd, 4, p)).level(), 19);
  EXPECT_EQ(dynamic_cast<const zlib_codec&>(*make_codec(codec_id::zlib)).level(), 6);
}

TEST(StdlibCodecs, DecodersRejectTruncatedTooLongAndWrongSize) {
  const bytes in = pattern(3000);
  codec_params hc;
  hc.lz4_level = 9;
  for (codec_id id : {codec_id::zlib, codec_id::lz4, codec_id::zstd}) {
    for (const codec_params& p : {codec_params{}, hc}) {
      SCOPED_TRACE(to_string(id));
      const auto c = make_codec(id, 4, p);
      bytes s(c->max_compressed_size(in.size()));
      s.resize(c->compress(in.data(), in.size(), s.data()));
      bytes out(in.size());
      c->decompress(s.data(), s.size(), out.data(), out.size());
      ASSERT_TRUE(out == in);
      for (std::size_t cut = 0; cut < s.size(); ++cut)
        EXPECT_THROW(c->decompress(s.data(), cut, out.data(), out.size()), codec_error) << "cut " << cut;
      bytes longer = s;
      longer.push_back(0);
      EXPECT_THROW(c->decompress(longer.data(), longer.size(), out.data(), out.size()), codec_error);
      EXPECT_THROW(c->decompress(s.data(), s.size(), out.data(), out.size() - 1), codec_error);
      bytes big(in.size() + 1);
      EXPECT_THROW(c->decompress(s.data(), s.size(), big.data(), big.size()), codec_error);
    }
  }
}
