#include "tlm/codec/codec.h"

#include "tlm/codec/raw.h"
#include "tlm/codec/rle.h"
#include "tlm/codec/stdlib_codecs.h"
#include "tlm/codec/zvc.h"

namespace cdma::codec {

std::string to_string(codec_id id) {
  switch (id) {
    case codec_id::raw: return "raw";
    case codec_id::zvc: return "zvc";
    case codec_id::rle: return "rle";
    case codec_id::zlib: return "zlib";
    case codec_id::lz4: return "lz4";
    case codec_id::zstd: return "zstd";
  }
  return "codec_id(" + std::to_string(static_cast<unsigned>(id)) + ")";
}

codec_id codec_from_string(const std::string& s) {
  if (s == "none") return codec_id::raw;
  for (codec_id id : all_codec_ids)
    if (s == to_string(id)) return id;
  throw codec_error("unknown codec name '" + s +
                    "'; expected one of: raw, none, zvc, rle, zlib, lz4, zstd");
}

void check_windows(std::size_t count, std::size_t window, std::size_t out_n) {
  if (window == 0)
    throw codec_error("decompress_windows: window size 0 bytes; expected > 0");
  const std::size_t need = out_n / window + (out_n % window != 0);
  if (count != need)
    throw codec_error("decompress_windows: " + std::to_string(count) + " windows for " +
                      std::to_string(out_n) + " output bytes in windows of " +
                      std::to_string(window) + "; expected ceil(out_n / window) = " +
                      std::to_string(need));
}

void codec::decompress_windows(const std::uint8_t* in, const std::size_t* offset,
                               const std::size_t* size, std::size_t count, std::uint8_t* out,
                               std::size_t window, std::size_t out_n) const {
  check_windows(count, window, out_n);
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t first = k * window;
    const std::size_t n = out_n - first < window ? out_n - first : window;
    decompress(in + offset[k], size[k], out + first, n);
  }
}

std::unique_ptr<codec> make_codec(codec_id id, unsigned element_width, const codec_params& p) {
  if (element_width != 1 && element_width != 2 && element_width != 4)
    throw codec_error("codec " + to_string(id) + ": element width " +
                      std::to_string(element_width) + " bytes is not supported; expected 1, 2 or 4");
  switch (id) {
    case codec_id::raw: return std::make_unique<raw_codec>(element_width);
    case codec_id::zvc: return std::make_unique<zvc_codec>(element_width);
    case codec_id::rle: return std::make_unique<rle_codec>(element_width, p.rle_count_bits);
    case codec_id::zlib: return std::make_unique<zlib_codec>(element_width, p.zlib_level);
    case codec_id::lz4: return std::make_unique<lz4_codec>(element_width, p.lz4_level);
    case codec_id::zstd: return std::make_unique<zstd_codec>(element_width, p.zstd_level);
  }
  throw codec_error("unknown codec id " + std::to_string(static_cast<unsigned>(id)) +
                    "; expected 0 (raw), 1 (zvc), 2 (rle), 3 (zlib), 4 (lz4) or 5 (zstd)");
}

}  // namespace cdma::codec
