#include "tlm/codec/codec.h"

#include "tlm/codec/raw.h"
#include "tlm/codec/zvc.h"

namespace cdma::codec {

std::string to_string(codec_id id) {
  switch (id) {
    case codec_id::raw: return "raw";
    case codec_id::zvc: return "zvc";
  }
  return "codec_id(" + std::to_string(static_cast<unsigned>(id)) + ")";
}

codec_id codec_from_string(const std::string& s) {
  if (s == "raw" || s == "none") return codec_id::raw;
  if (s == "zvc") return codec_id::zvc;
  throw codec_error("unknown codec name '" + s + "'; expected one of: raw, none, zvc");
}

std::unique_ptr<codec> make_codec(codec_id id, unsigned element_width) {
  if (element_width != 1 && element_width != 2 && element_width != 4)
    throw codec_error("codec " + to_string(id) + ": element width " +
                      std::to_string(element_width) + " bytes is not supported; expected 1, 2 or 4");
  switch (id) {
    case codec_id::raw: return std::make_unique<raw_codec>(element_width);
    case codec_id::zvc: return std::make_unique<zvc_codec>(element_width);
  }
  throw codec_error("unknown codec id " + std::to_string(static_cast<unsigned>(id)) +
                    "; expected 0 (raw) or 1 (zvc)");
}

}  // namespace cdma::codec
