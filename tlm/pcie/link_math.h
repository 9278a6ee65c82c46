// Pure PCIe link arithmetic (no SystemC): raw rates, TLP overheads and how a transfer is cut
// into TLPs. Used by pcie_link for both LT (analytic) and AT timing.
//
// Sources: PCI Express Base Specification (rev. 3.0 onwards), §2.2 (TLP formats, 3DW/4DW
// headers, ECRC), §2.2.7/§2.2.9 (request/completion rules: MPS, MRRS, RCB, 4 KiB boundary),
// §4.2 (8b/10b and 128b/130b encodings); per-TLP overhead as in ARCHITECTURE §9.
#pragma once
#include <cstdint>

#include "tlm/core/units.h"

namespace cdma::pcie {

/// One PCIe link configuration.
struct link_params {
  int gen = 3;                 ///< PCIe generation 1..5
  int lanes = 16;              ///< link width: 1, 2, 4, 8, 12, 16 or 32
  std::uint32_t mps = 256;     ///< Max Payload Size, bytes (power of two, 128..4096)
  std::uint32_t mrrs = 512;    ///< Max Read Request Size, bytes (power of two, 128..4096)
  std::uint32_t rcb = 64;      ///< Read Completion Boundary, bytes (64 or 128)
  bool header_4dw = true;      ///< 64-bit addressing: 16 B request header, else 12 B
  bool ecrc = false;           ///< end-to-end CRC: +4 B per TLP
  /// One-way latency (link + root complex), ps. Default 400 ns: a 64 B read round trip is
  /// then about 0.85 us as measured (ARCHITECTURE §9).
  ps_t latency_ps = 400000;

  /// Throws std::invalid_argument naming the field if a value is out of range.
  void validate() const;
};

/// Raw data rate of one direction, B/s, after line encoding:
/// Gen1 2.5 GT/s and Gen2 5 GT/s with 8b/10b; Gen3 8, Gen4 16, Gen5 32 GT/s with 128b/130b.
/// rate = GT/s x lanes x encoding efficiency / 8 bits. Gen3 x16 = 15.7538e9 B/s (~15.75 GB/s).
/// Throws std::invalid_argument for another generation or a lane count < 1.
double raw_rate_Bps(int gen, int lanes);

/// Bytes added to a memory request TLP (MWr, MRd): 2 framing + 2 sequence number +
/// 16 (4DW) or 12 (3DW) header + 4 LCRC (+ 4 ECRC) (ARCHITECTURE §9). 24 B by default.
std::uint32_t tlp_overhead_bytes(const link_params& p);
/// Bytes added to a completion TLP (CplD): completion headers are always 3DW (PCIe base spec
/// §2.2.9), so 2 + 2 + 12 + 4 (+ 4 ECRC) = 20 B by default.
std::uint32_t cpl_overhead_bytes(const link_params& p);

/// TLPs of one transfer: count, data bytes carried, bytes on the wire (payload + overhead).
struct tlp_split {
  std::uint64_t tlps = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t wire_bytes = 0;
};

/// Memory write TLPs for [addr, addr+len): each TLP carries min(remaining, MPS, bytes to the
/// next 4 KiB boundary) (a request must not cross 4 KiB, §2.2.7). len 0 gives no TLP.
tlp_split mwr_split(std::uint64_t addr, std::uint64_t len, const link_params& p);

/// Memory read request TLPs for [addr, addr+len): header-only TLPs (payload_bytes = 0), each
/// requesting min(remaining, MRRS, bytes to the next 4 KiB boundary). len 0 gives no TLP.
tlp_split mrd_split(std::uint64_t addr, std::uint64_t len, const link_params& p);

/// Completion-with-data TLPs returning [addr, addr+len). Rule used (a legal completer choice,
/// §2.2.9): the read is cut into requests exactly as mrd_split does, and each request is
/// answered separately: if the request does not start on an RCB boundary, its first
/// completion ends at the next RCB boundary (or the request's end); the rest is returned in
/// pieces of min(remaining, MPS) (these then start RCB-aligned since MPS is a multiple of
/// RCB). Overhead per TLP is cpl_overhead_bytes(). len 0 gives no TLP.
tlp_split cpld_split(std::uint64_t addr, std::uint64_t len, const link_params& p);

}  // namespace cdma::pcie
