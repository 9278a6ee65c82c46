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
