#include "tlm/codec/stdlib_codecs.h"

#include <lz4.h>
#include <lz4hc.h>
#include <zlib.h>
#include <zstd.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

namespace cdma::codec {
namespace {

void check_width(const char* name, unsigned w) {
  if (w != 1 && w != 2 && w != 4)
    throw codec_error(std::string(name) + " codec: element width " + std::to_string(w) +
                      " bytes is not supported; expected 1, 2 or 4");
}

std::uint8_t* scratch(std::size_t n) {
  thread_local std::vector<std::uint8_t> buf;
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}

// ---- zlib: per-thread deflate / inflate streams, reset between calls ------------------------

struct deflater {
  z_stream s{};
  int level = -1;
  bool init = false;
  ~deflater() {
    if (init) deflateEnd(&s);
  }
  z_stream& get(int lvl) {
    if (init && level != lvl) {
      deflateEnd(&s);
      init = false;
    }
    if (!init) {
      s = z_stream{};
      if (deflateInit(&s, lvl) != Z_OK) throw codec_error("zlib: deflateInit failed (out of memory?)");
      init = true;
      level = lvl;
    } else {
      deflateReset(&s);
    }
    return s;
  }
};

struct inflater {
  z_stream s{};
  bool init = false;
  ~inflater() {
    if (init) inflateEnd(&s);
  }
  z_stream& get() {
    if (!init) {
      s = z_stream{};
      if (inflateInit(&s) != Z_OK) throw codec_error("zlib: inflateInit failed (out of memory?)");
      init = true;
    } else {
      inflateReset(&s);
    }
    return s;
  }
};

void check_uint(const char* name, std::size_t n) {
  if (n > UINT_MAX)
    throw codec_error(std::string(name) + ": buffer of " + std::to_string(n) +
                      " bytes is too large for one call; expected at most " +
                      std::to_string(UINT_MAX) + " bytes");
}

}  // namespace

// ---- zlib -----------------------------------------------------------------------------------

zlib_codec::zlib_codec(unsigned element_width, int level) : width_(element_width), level_(level) {
  check_width("zlib", width_);
  if (level < 0 || level > 9)
    throw codec_error("zlib codec: level " + std::to_string(level) + " is out of range; expected 0..9");
}

std::size_t zlib_codec::max_compressed_size(std::size_t n) const {
  // deflateBound's generic formula (zlib 1.2.13 deflate.c) for windowBits 15, memLevel 8:
  // n + (n + 7) / 8 + (n + 63) / 64 + 5 + 6 (zlib wrapper), plus the stored-block worst case
  // n + 5 * ceil(n / 16383) + 11 when that is larger (level 0). Take the max plus a margin.
  const std::size_t a = n + ((n + 7) >> 3) + ((n + 63) >> 6) + 11;
  const std::size_t b = n + 5 * (n / 16383 + 1) + 11;
  return (a > b ? a : b) + 16;
}

std::size_t zlib_codec::compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const {
  check_uint("zlib", n);
  thread_local deflater d;
  z_stream& s = d.get(level_);
  static const Bytef empty = 0;
  s.next_in = n ? const_cast<Bytef*>(in) : const_cast<Bytef*>(&empty);
  s.avail_in = static_cast<uInt>(n);
  const std::size_t cap = max_compressed_size(n);
  check_uint("zlib", cap);
  s.next_out = out;
  s.avail_out = static_cast<uInt>(cap);
  const int rc = deflate(&s, Z_FINISH);
  if (rc != Z_STREAM_END)
    throw codec_error("zlib: deflate of " + std::to_string(n) + " bytes failed (" +
                      std::to_string(rc) + ")");
  return static_cast<std::size_t>(s.total_out);
}

std::size_t zlib_codec::compressed_size(const std::uint8_t* in, std::size_t n) const {
  return compress(in, n, scratch(max_compressed_size(n)));
}

void zlib_codec::decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                            std::size_t out_n) const {
  check_uint("zlib", in_n);
  check_uint("zlib", out_n);
  thread_local inflater f;
  z_stream& s = f.get();
  std::uint8_t dummy = 0;
  s.next_in = const_cast<Bytef*>(in_n ? in : &dummy);
  s.avail_in = static_cast<uInt>(in_n);
  s.next_out = out_n ? out : &dummy;
  s.avail_out = static_cast<uInt>(out_n);
  const int rc = inflate(&s, Z_FINISH);
  const std::size_t consumed = in_n - s.avail_in;
  const std::size_t produced = out_n - (out_n ? s.avail_out : 0);
  if (rc == Z_STREAM_END) {
    if (produced != out_n)
      throw codec_error("zlib stream ends at offset " + std::to_string(consumed) + " after " +
                        std::to_string(produced) + " decoded bytes; expected " +
                        std::to_string(out_n));
    if (consumed != in_n)
      throw codec_error("zlib stream too long: " + std::to_string(in_n - consumed) +
                        " extra bytes at offset " + std::to_string(consumed) +
                        "; expected the stream to end there");
    return;
  }
  if (rc == Z_BUF_ERROR && s.avail_in == 0)
    throw codec_error("zlib stream truncated at offset " + std::to_string(consumed) + " after " +
                      std::to_string(produced) + " of " + std::to_string(out_n) +
                      " decoded bytes; expected the end of the deflate stream");
  if (rc == Z_BUF_ERROR || (rc == Z_OK && s.avail_out == 0))
    throw codec_error("zlib stream decodes to more than the expected " + std::to_string(out_n) +
                      " bytes (stopped at input offset " + std::to_string(consumed) + ")");
  throw codec_error("zlib stream corrupt at offset " + std::to_string(consumed) + " (" +
                    (s.msg ? s.msg : "inflate error " + std::to_string(rc)) +
                    "); expected a valid RFC 1950 stream of " + std::to_string(out_n) + " bytes");
}

// ---- lz4 ------------------------------------------------------------------------------------

lz4_codec::lz4_codec(unsigned element_width, int level) : width_(element_width), level_(level) {
  check_width("lz4", width_);
  if (level > LZ4HC_CLEVEL_MAX || level < -65536)
    throw codec_error("lz4 codec: level " + std::to_string(level) +
                      " is out of range; expected -65536..12 (1 = default, 2..12 = HC)");
}

std::size_t lz4_codec::max_compressed_size(std::size_t n) const {
  if (n > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
    throw codec_error("lz4: buffer of " + std::to_string(n) + " bytes exceeds LZ4_MAX_INPUT_SIZE (" +
                      std::to_string(LZ4_MAX_INPUT_SIZE) + ")");
  return static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(n)));
}

std::size_t lz4_codec::compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const {
  const int cap = static_cast<int>(max_compressed_size(n));
  const char* src = reinterpret_cast<const char*>(in);
  char* dst = reinterpret_cast<char*>(out);
  int r;
  if (level_ >= 2) {
    thread_local std::vector<char> hc_state(static_cast<std::size_t>(LZ4_sizeofStateHC()));
    r = LZ4_compress_HC_extStateHC(hc_state.data(), src, dst, static_cast<int>(n), cap, level_);
  } else {
    thread_local std::vector<char> state(static_cast<std::size_t>(LZ4_sizeofState()));
    const int accel = level_ == 1 ? 1 : 1 - level_;
    r = LZ4_compress_fast_extState(state.data(), src, dst, static_cast<int>(n), cap, accel);
  }
  if (r <= 0) throw codec_error("lz4: compression of " + std::to_string(n) + " bytes failed");
  return static_cast<std::size_t>(r);
}

std::size_t lz4_codec::compressed_size(const std::uint8_t* in, std::size_t n) const {
  return compress(in, n, scratch(max_compressed_size(n)));
}

void lz4_codec::decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                           std::size_t out_n) const {
  if (in_n > static_cast<std::size_t>(INT_MAX) || out_n > static_cast<std::size_t>(INT_MAX))
    throw codec_error("lz4: stream of " + std::to_string(in_n) + " -> " + std::to_string(out_n) +
                      " bytes is too large; expected at most 2^31 - 1 bytes each");
  if (in_n == 0)
    throw codec_error("lz4 stream truncated at offset 0: empty; expected at least the 1-byte "
                      "token of a block");
  std::uint8_t dummy = 0;
  const int r = LZ4_decompress_safe(reinterpret_cast<const char*>(in),
                                    reinterpret_cast<char*>(out_n ? out : &dummy),
                                    static_cast<int>(in_n), static_cast<int>(out_n));
  if (r < 0)
    throw codec_error("lz4 stream corrupt, truncated or too long (LZ4_decompress_safe error at "
                      "offset " + std::to_string(-r - 1) + " of " + std::to_string(in_n) +
                      "); expected one block of exactly " + std::to_string(out_n) + " bytes");
  if (static_cast<std::size_t>(r) != out_n)
    throw codec_error("lz4 block at offset 0 decodes to " + std::to_string(r) +
                      " bytes; expected " + std::to_string(out_n));
}

// ---- zstd -----------------------------------------------------------------------------------

namespace {
struct zstd_ctx {
  ZSTD_CCtx* c = nullptr;
  ZSTD_DCtx* d = nullptr;
  ~zstd_ctx() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
};
zstd_ctx& zctx() {
  thread_local zstd_ctx z;
  return z;
}
}  // namespace

zstd_codec::zstd_codec(unsigned element_width, int level) : width_(element_width), level_(level) {
  check_width("zstd", width_);
  if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel())
    throw codec_error("zstd codec: level " + std::to_string(level) + " is out of range; expected " +
                      std::to_string(ZSTD_minCLevel()) + ".." + std::to_string(ZSTD_maxCLevel()));
}

std::size_t zstd_codec::max_compressed_size(std::size_t n) const { return ZSTD_compressBound(n); }

std::size_t zstd_codec::compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const {
  zstd_ctx& z = zctx();
  if (!z.c) z.c = ZSTD_createCCtx();
  if (!z.c) throw codec_error("zstd: cannot create a compression context (out of memory?)");
  static const std::uint8_t empty = 0;
  const std::size_t r =
      ZSTD_compressCCtx(z.c, out, max_compressed_size(n), n ? in : &empty, n, level_);
  if (ZSTD_isError(r))
    throw codec_error(std::string("zstd: compression failed (") + ZSTD_getErrorName(r) + ")");
  return r;
}

std::size_t zstd_codec::compressed_size(const std::uint8_t* in, std::size_t n) const {
  return compress(in, n, scratch(max_compressed_size(n)));
}

void zstd_codec::decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                            std::size_t out_n) const {
  // Exactly one frame, ending at in_n: find its size first (rejects truncation and tells
  // where extra bytes start).
  const std::size_t frame = ZSTD_findFrameCompressedSize(in, in_n);
  if (ZSTD_isError(frame))
    throw codec_error(std::string("zstd stream corrupt or truncated at offset 0 (") +
                      ZSTD_getErrorName(frame) + "); expected one zstd frame of " +
                      std::to_string(in_n) + " bytes");
  if (frame != in_n)
    throw codec_error("zstd stream too long: " + std::to_string(in_n - frame) +
                      " extra bytes at offset " + std::to_string(frame) +
                      "; expected the frame to end there");
  zstd_ctx& z = zctx();
  if (!z.d) z.d = ZSTD_createDCtx();
  if (!z.d) throw codec_error("zstd: cannot create a decompression context (out of memory?)");
  std::uint8_t dummy = 0;
  const std::size_t r = ZSTD_decompressDCtx(z.d, out_n ? out : &dummy, out_n, in, in_n);
  if (ZSTD_isError(r))
    throw codec_error(std::string("zstd stream corrupt at offset 0 (") + ZSTD_getErrorName(r) +
                      "); expected a frame of exactly " + std::to_string(out_n) + " bytes");
  if (r != out_n)
    throw codec_error("zstd frame at offset 0 decodes to " + std::to_string(r) +
                      " bytes; expected " + std::to_string(out_n));
}

}  // namespace cdma::codec
