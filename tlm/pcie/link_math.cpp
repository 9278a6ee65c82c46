#include "tlm/pcie/link_math.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cdma::pcie {

namespace {

constexpr std::uint64_t boundary_4k = 4096;  // requests never cross 4 KiB (§2.2.7)

bool is_pow2_in(std::uint32_t v, std::uint32_t lo, std::uint32_t hi) {
  return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

std::uint64_t to_next(std::uint64_t addr, std::uint64_t boundary) {
  return boundary - addr % boundary;
}

// Calls f(request_addr, request_len) for each read request of [addr, addr+len).
template <class F>
void for_each_read_request(std::uint64_t addr, std::uint64_t len, const link_params& p, F f) {
  while (len > 0) {
    const std::uint64_t n =
        std::min<std::uint64_t>({len, p.mrrs, to_next(addr, boundary_4k)});
    f(addr, n);
    addr += n;
    len -= n;
  }
}

}  // namespace

void link_params::validate() const {
  if (gen < 1 || gen > 5) throw std::invalid_argument("link_params.gen must be 1..5");
  if (!(lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 12 || lanes == 16 ||
        lanes == 32))
    throw std::invalid_argument("link_params.lanes must be 1, 2, 4, 8, 12, 16 or 32");
  if (!is_pow2_in(mps, 128, 4096))
    throw std::invalid_argument("link_params.mps must be a power of two in 128..4096");
  if (!is_pow2_in(mrrs, 128, 4096))
    throw std::invalid_argument("link_params.mrrs must be a power of two in 128..4096");
  if (rcb != 64 && rcb != 128) throw std::invalid_argument("link_params.rcb must be 64 or 128");
}

double raw_rate_Bps(int gen, int lanes) {
  if (lanes < 1) throw std::invalid_argument("raw_rate_Bps: lanes must be >= 1");
  double gt_per_s = 0.0;
  double encoding = 0.0;  // payload bits / line bits
  switch (gen) {
    case 1: gt_per_s = 2.5e9; encoding = 8.0 / 10.0; break;
    case 2: gt_per_s = 5e9; encoding = 8.0 / 10.0; break;
    case 3: gt_per_s = 8e9; encoding = 128.0 / 130.0; break;
    case 4: gt_per_s = 16e9; encoding = 128.0 / 130.0; break;
    case 5: gt_per_s = 32e9; encoding = 128.0 / 130.0; break;
    default:
      throw std::invalid_argument("raw_rate_Bps: unsupported PCIe generation " +
                                  std::to_string(gen));
  }
  return gt_per_s * lanes * encoding / 8.0;
}

std::uint32_t tlp_overhead_bytes(const link_params& p) {
  return 2 + 2 + (p.header_4dw ? 16 : 12) + 4 + (p.ecrc ? 4 : 0);
}

std::uint32_t cpl_overhead_bytes(const link_params& p) {
  return 2 + 2 + 12 + 4 + (p.ecrc ? 4 : 0);
}

tlp_split mwr_split(std::uint64_t addr, std::uint64_t len, const link_params& p) {
  tlp_split s;
  const std::uint64_t ovh = tlp_overhead_bytes(p);
  while (len > 0) {
    const std::uint64_t n = std::min<std::uint64_t>({len, p.mps, to_next(addr, boundary_4k)});
    ++s.tlps;
    s.payload_bytes += n;
    s.wire_bytes += n + ovh;
    addr += n;
    len -= n;
  }
  return s;
}

tlp_split mrd_split(std::uint64_t addr, std::uint64_t len, const link_params& p) {
  tlp_split s;
  const std::uint64_t ovh = tlp_overhead_bytes(p);
  for_each_read_request(addr, len, p, [&](std::uint64_t, std::uint64_t) {
    ++s.tlps;
    s.wire_bytes += ovh;
  });
  return s;
}

tlp_split cpld_split(std::uint64_t addr, std::uint64_t len, const link_params& p) {
  tlp_split s;
  const std::uint64_t ovh = cpl_overhead_bytes(p);
  for_each_read_request(addr, len, p, [&](std::uint64_t a, std::uint64_t n) {
    while (n > 0) {
      const std::uint64_t piece = (a % p.rcb != 0)
                                      ? std::min<std::uint64_t>(n, to_next(a, p.rcb))
                                      : std::min<std::uint64_t>(n, p.mps);
      ++s.tlps;
      s.payload_bytes += piece;
      s.wire_bytes += piece + ovh;
      a += piece;
      n -= piece;
    }
  });
  return s;
}

}  // namespace cdma::pcie
