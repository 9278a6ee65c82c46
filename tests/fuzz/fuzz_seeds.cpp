// Writes the seed corpus of the fuzz targets into DIR/<target>/ (run by ctest before them):
// valid streams of every codec for a few sparse patterns (with the fuzz header of
// fuzz_common.h), and valid .npy / .npz images.
#include <zip.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tlm/codec/codec.h"
#include "tlm/codec/rle.h"
#include "tlm/codec/stdlib_codecs.h"
#include "tlm/codec/zvc.h"

namespace fs = std::filesystem;
using bytes = std::vector<std::uint8_t>;

namespace {

void write(const fs::path& p, const bytes& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

bytes pattern(std::size_t n, unsigned every, unsigned seed) {
  bytes b(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    if ((i / 4) % every == 0) b[i] = static_cast<std::uint8_t>(i * 31 + seed) | 1;
  return b;
}

bytes npy_image(const bytes& data, std::size_t elements) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(elements) + ",), }";
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(h.size()),
             static_cast<std::uint8_t>(h.size() >> 8)};
  b.insert(b.end(), h.begin(), h.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  using namespace cdma::codec;
  struct target {
    const char* name;
    codec_id id;
  } targets[] = {{"zvc", codec_id::zvc},   {"rle", codec_id::rle}, {"zlib", codec_id::zlib},
                 {"lz4", codec_id::lz4},   {"zstd", codec_id::zstd}};
  for (const auto& t : targets) {
    fs::create_directories(dir / t.name);
    int k = 0;
    for (unsigned wi : {0u, 1u, 2u}) {
      const unsigned w = wi == 0 ? 1 : wi == 1 ? 2 : 4;
      const auto c = make_codec(t.id, w);
      for (std::size_t n : {0u, 5u, 128u, 1000u, 4096u})
        for (unsigned every : {1u, 3u, 50u}) {
          const bytes in = pattern(n, every, k);
          bytes s(c->max_compressed_size(n));
          s.resize(c->compress(in.data(), n, s.data()));
          bytes f = {static_cast<std::uint8_t>(wi), static_cast<std::uint8_t>(n),
                     static_cast<std::uint8_t>(n >> 8)};
          f.insert(f.end(), s.begin(), s.end());
          write(dir / t.name / ("seed" + std::to_string(k++)), f);
        }
    }
  }
  fs::create_directories(dir / "npy");
  fs::create_directories(dir / "npz");
  const bytes a = pattern(64, 3, 1), b = pattern(400, 5, 2);
  write(dir / "npy" / "a.npy", npy_image(a, 16));
  write(dir / "npy" / "b.npy", npy_image(b, 100));
  // A two-member .npz, one member stored and one deflated (as numpy.savez[_compressed]).
  const fs::path npz = dir / "npz" / "ab.npz";
  fs::remove(npz);
  int err = 0;
  zip_t* z = zip_open(npz.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) return 1;
  static const bytes ia = npy_image(a, 16), ib = npy_image(b, 100);
  zip_source_t* sa = zip_source_buffer(z, ia.data(), ia.size(), 0);
  zip_source_t* sb = zip_source_buffer(z, ib.data(), ib.size(), 0);
  const zip_int64_t xa = zip_file_add(z, "a.npy", sa, 0);
  const zip_int64_t xb = zip_file_add(z, "b.npy", sb, 0);
  zip_set_file_compression(z, static_cast<zip_uint64_t>(xa), ZIP_CM_STORE, 0);
  zip_set_file_compression(z, static_cast<zip_uint64_t>(xb), ZIP_CM_DEFLATE, 6);
  if (zip_close(z) != 0) return 1;
  return 0;
}
