#include "tlm/codec/zvc.h"

#include "tlm/codec/zvc_impl.h"

namespace cdma::codec {

namespace zvc_detail {
const zvc_kernels& scalar_kernels() {
  static const zvc_kernels t = make_table<scalar_kernel>();
  return t;
}
}  // namespace zvc_detail

std::string to_string(zvc_isa isa) {
  switch (isa) {
    case zvc_isa::scalar: return "scalar";
    case zvc_isa::avx2: return "avx2";
    case zvc_isa::avx512: return "avx512";
  }
  return "zvc_isa(" + std::to_string(static_cast<int>(isa)) + ")";
}

bool zvc_isa_supported(zvc_isa isa) {
  switch (isa) {
    case zvc_isa::scalar: return true;
    case zvc_isa::avx2:
#if defined(__x86_64__) || defined(__i386__)
      // CPU check first: the kernel table itself is built by AVX2 code.
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("popcnt") && zvc_detail::avx2_kernels();
#else
      return false;
#endif
    case zvc_isa::avx512:
#if defined(__x86_64__) || defined(__i386__)
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi2") &&
             __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi") &&
             zvc_detail::avx512_kernels();
#else
      return false;
#endif
  }
  return false;
}

std::string to_string(zvc_store s) {
  switch (s) {
    case zvc_store::cached: return "cached";
    case zvc_store::streaming: return "streaming";
  }
  return "zvc_store(" + std::to_string(static_cast<int>(s)) + ")";
}

zvc_isa zvc_best_isa() {
  static const zvc_isa best = zvc_isa_supported(zvc_isa::avx512) ? zvc_isa::avx512
                              : zvc_isa_supported(zvc_isa::avx2) ? zvc_isa::avx2
                                                                  : zvc_isa::scalar;
  return best;
}

zvc_codec::zvc_codec(unsigned element_width, zvc_isa isa, zvc_store store)
    : width_(element_width), isa_(isa), store_(store) {
  if (width_ != 1 && width_ != 2 && width_ != 4)
    throw codec_error("zvc codec: element width " + std::to_string(width_) +
                      " bytes is not supported; expected 1, 2 or 4");
  if (!zvc_isa_supported(isa))
    throw codec_error("zvc codec: ISA path '" + to_string(isa) +
                      "' is not supported by this CPU or build; expected one of scalar" +
                      (zvc_isa_supported(zvc_isa::avx2) ? ", avx2" : "") +
                      (zvc_isa_supported(zvc_isa::avx512) ? ", avx512" : ""));
  switch (isa) {
    case zvc_isa::avx2:
      k_ = store == zvc_store::streaming ? zvc_detail::avx2_nt_kernels() : zvc_detail::avx2_kernels();
      break;
    case zvc_isa::avx512: k_ = zvc_detail::avx512_kernels(); break;
    default: k_ = &zvc_detail::scalar_kernels(); break;
  }
  wi_ = width_ == 1 ? 0 : width_ == 2 ? 1 : 2;
}

std::size_t zvc_codec::max_compressed_size(std::size_t n) const {
  return zvc_mask_bytes * zvc_detail::blocks_for(n / width_) + n;
}

std::size_t zvc_codec::compress(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const {
  return k_->compress[wi_](in, n, out);
}

std::size_t zvc_codec::compressed_size(const std::uint8_t* in, std::size_t n) const {
  return k_->size[wi_](in, n);
}

namespace {
// Issues the kernel table's store fence (if any) when it goes out of scope, also on an error.
struct fence_at_exit {
  void (*fence)();
  ~fence_at_exit() {
    if (fence) fence();
  }
};
}  // namespace

void zvc_codec::decompress(const std::uint8_t* in, std::size_t in_n, std::uint8_t* out,
                           std::size_t out_n) const {
  const fence_at_exit f{k_->fence[wi_]};
  k_->decompress[wi_](in, in_n, out, out_n);
}

void zvc_codec::decompress_windows(const std::uint8_t* in, const std::size_t* offset,
                                   const std::size_t* size, std::size_t count, std::uint8_t* out,
                                   std::size_t window, std::size_t out_n) const {
  check_windows(count, window, out_n);
  const fence_at_exit f{k_->fence[wi_]};  // once, after the last window
  const auto dec = k_->decompress[wi_];
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t first = k * window;
    const std::size_t n = out_n - first < window ? out_n - first : window;
    dec(in + offset[k], size[k], out + first, n);
  }
}

}  // namespace cdma::codec
