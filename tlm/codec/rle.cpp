#include "tlm/codec/rle.h"

#include <cstring>
#include <string>

namespace cdma::codec {
namespace {

template <typename T>
inline bool nonzero(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v != 0;
}

inline void put_count(std::uint8_t* p, std::uint64_t v, unsigned c) {
  for (unsigned i = 0; i < c; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline std::uint64_t get_count(const std::uint8_t* p, unsigned c) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < c; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

// Walks the tokens of the encoding; `emit(count, literal_or_null)` is called once per token
// (literal == nullptr for a zero literal of a continuation token is signalled by `zero_lit`).
// Sink: struct with token(count, lit ptr or nullptr = zero element) and last(count).
template <typename T, typename Sink>
void encode(const std::uint8_t* in, std::size_t e, std::uint64_t max, Sink& sink) {
  std::uint64_t z = 0;
  for (std::size_t i = 0; i < e; ++i) {
    const std::uint8_t* p = in + i * sizeof(T);
    if (!nonzero<T>(p)) {
      ++z;
      continue;
    }
    while (z > max) {
      sink.token(max, nullptr);
      z -= max + 1;
    }
    sink.token(z, p);
    z = 0;
  }
  while (z > max) {
    sink.token(max, nullptr);
    z -= max + 1;
  }
  if (z > 0) sink.last(z);
}

struct size_sink {
  std::size_t c, w, size = 0;
  void token(std::uint64_t, const std::uint8_t*) { size += c + w; }
  void last(std::uint64_t) { size += c; }
};

struct write_sink {
  unsigned c, w;
  std::uint8_t* p;
  void token(std::uint64_t count, const std::uint8_t* lit) {
    put_count(p, count, c);
    p += c;
    if (lit) std::memcpy(p, lit, w);
    else std::memset(p, 0, w);
    p += w;
  }
  void last(std::uint64_t count) {
    put_count(p, count, c);
    p += c;
  }
};

}  // namespace

rle_codec::rle_codec(unsigned element_width, unsigned count_bits)
    : width_(element_width), count_bytes_(count_bits / 8) {
  if (width_ != 1 && width_ != 2 && width_ != 4)
    throw codec_error("rle codec: element width " + std::to_string(width_) +
                      " bytes is not supported; expected 1, 2 or 4");
  if (count_bits != 8 && count_bits != 16 && count_bits != 24 && count_bits != 32)
    throw codec_error("rle codec: count field width " + std::to_string(count_bits) +
                      " bits is not supported; expected 8, 16, 24 or 32");
}

std::size_t rle_codec::max_compressed_size(std::size_t n) const {
  return (n / width_) * (count_bytes_ + width_) + n % width_;
}

std::size_t rle_codec::compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const {
  const std::size_t e = n / width_;
  const std::uint64_t max = (std::uint64_t(1) << (8 * count_bytes_)) - 1;
  write_sink s{count_bytes_, width_, out};
  switch (width_) {
    case 4: encode<std::uint32_t>(in, e, max, s); break;
    case 2: encode<std::uint16_t>(in, e, max, s); break;
    default: encode<std::uint8_t>(in, e, max, s); break;
  }
  const std::size_t tail = n % width_;
  if (tail) std::memcpy(s.p, in + e * width_, tail);
  return static_cast<std::size_t>(s.p - out) + tail;
}

std::size_t rle_codec::compressed_size(const std::uint8_t* in, std::size_t n) const {
  const std::size_t e = n / width_;
  const std::uint64_t max = (std::uint64_t(1) << (8 * count_bytes_)) - 1;
  size_sink s{count_bytes_, width_};
  switch (width_) {
    case 4: encode<std::uint32_t>(in, e, max, s); break;
    case 2: encode<std::uint16_t>(in, e, max, s); break;
    default: encode<std::uint8_t>(in, e, max, s); break;
  }
  return s.size + n % width_;
}

void rle_codec::decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                           std::size_t out_n) const {
  const std::size_t w = width_, c = count_bytes_;
  const std::size_t e = out_n / w;
  const std::size_t tail = out_n % w;
  std::size_t pos = 0, i = 0;  // stream offset, decoded elements
  while (i < e) {
    if (in_n - pos < c)
      throw codec_error("rle stream truncated at offset " + std::to_string(pos) + ": expected a " +
                        std::to_string(c) + "-byte run count (element " + std::to_string(i) +
                        " of " + std::to_string(e) + "), only " + std::to_string(in_n - pos) +
                        " bytes left");
    const std::uint64_t count = get_count(in + pos, static_cast<unsigned>(c));
    if (count > e - i)
      throw codec_error("rle run of " + std::to_string(count) + " zeros at offset " +
                        std::to_string(pos) + " overflows the output: only " +
                        std::to_string(e - i) + " of " + std::to_string(e) +
                        " elements left; expected a count <= " + std::to_string(e - i));
    pos += c;
    std::memset(out + i * w, 0, static_cast<std::size_t>(count) * w);
    i += static_cast<std::size_t>(count);
    if (i == e) break;  // run reaches the end: count-only token
    if (in_n - pos < w)
      throw codec_error("rle stream truncated at offset " + std::to_string(pos) + ": expected a " +
                        std::to_string(w) + "-byte literal (element " + std::to_string(i) +
                        "), only " + std::to_string(in_n - pos) + " bytes left");
    std::memcpy(out + i * w, in + pos, w);
    pos += w;
    ++i;
  }
  if (in_n - pos < tail)
    throw codec_error("rle stream truncated at offset " + std::to_string(pos) + ": expected " +
                      std::to_string(tail) + " verbatim trailing bytes, only " +
                      std::to_string(in_n - pos) + " left");
  if (tail) std::memcpy(out + e * w, in + pos, tail);
  pos += tail;
  if (pos != in_n)
    throw codec_error("rle stream too long: " + std::to_string(in_n - pos) +
                      " extra bytes at offset " + std::to_string(pos) +
                      "; expected the stream of " + std::to_string(out_n) +
                      " decoded bytes to end there");
}

}  // namespace cdma::codec
