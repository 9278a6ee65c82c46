#include "tlm/memory/dram/dram_spec.h"

#include <cmath>
#include <stdexcept>

namespace cdma::dram {

ps_t dram_spec::burst_ps() const {
  return static_cast<ps_t>(std::llround(burst_length * 1e12 / data_rate_bps));
}

void dram_spec::validate() const {
  auto bad = [&](const char* field, const char* why) {
    throw std::invalid_argument("dram_spec '" + name + "'." + field + " " + why);
  };
  if (channels == 0) bad("channels", "must be >= 1");
  if (width_bits == 0 || width_bits % 8) bad("width_bits", "must be a positive multiple of 8");
  if (!(data_rate_bps > 0)) bad("data_rate_bps", "must be > 0");
  if (burst_length == 0) bad("burst_length", "must be >= 1");
  if (bank_groups == 0 || banks_per_group == 0) bad("bank_groups", "and banks_per_group must be >= 1");
  if (rows == 0) bad("rows", "must be >= 1");
  if (page_bytes == 0 || page_bytes % burst_bytes())
    bad("page_bytes", "must be a positive multiple of the burst size (width/8 x BL)");
  if (tCK_ps == 0) bad("tCK_ps", "must be > 0");
  if (t.tRC < t.tRAS) bad("t.tRC", "must be >= tRAS");
  if (t.tCCD_L < t.tCCD_S) bad("t.tCCD_L", "must be >= tCCD_S");
  if (t.tRRD_L < t.tRRD_S) bad("t.tRRD_L", "must be >= tRRD_S");
  if (t.tREFI != 0 && t.tRFC >= t.tREFI) bad("t.tRFC", "must be < tREFI");
  if (t.tCCD_S == 0) bad("t.tCCD_S", "must be >= 1");
}

namespace {

// ---- GDDR5, Titan X (Maxwell) -----------------------------------------------------------
// 12 x 32-bit channels (384-bit bus), 7 Gb/s/pin -> 12 x 4 B x 7e9 = 336 GB/s (NVIDIA spec).
// GDDR5 (JEDEC JESD212C): CK = data rate / 4 = 1.75 GHz -> tCK 571 ps; BL8 = 2 tCK = 32 B.
// 16 banks in 4 bank groups, 2 KiB page (x32 organisation, 64 columns of 32 B).
// Core timings in ns from 7 Gb/s GDDR5 datasheets (Hynix H5GQ / Samsung K4G class) as used
// by GPGPU-Sim / Ramulator GDDR5 configurations: tRCD = tRP = 12 ns, tRAS 28 ns, tRC 40 ns,
// tRRD 5.7 ns, tFAW 23 ns, tWR 12 ns, CL 20 tCK, WL 6 tCK; refresh 16k REF / 32 ms
// (tREFI 1.95 us), tRFC 110 ns (4 Gb die).
dram_spec gddr5_titanx() {
  dram_spec s;
  s.name = "gddr5_titanx";
  s.standard = "GDDR5 (JEDEC JESD212C)";
  s.speed_grade = "7.0 Gb/s/pin, tCK 571 ps (CK 1.75 GHz), BL8";
  s.source = "NVIDIA GeForce GTX TITAN X spec sheet (384-bit, 7 Gb/s, 336 GB/s, 12 GB); "
             "JESD212C timing set as in GPGPU-Sim/Ramulator GDDR5 configurations";
  s.channels = 12;
  s.width_bits = 32;
  s.data_rate_bps = 7e9;
  s.burst_length = 8;
  s.bank_groups = 4;
  s.banks_per_group = 4;
  s.page_bytes = 2048;
  s.rows = 32768;  // 1 GiB per channel = 16 banks x 32768 rows x 2 KiB
  s.tCK_ps = 571;
  s.t = {/*tRCD*/ 21, /*tRP*/ 21, /*tRAS*/ 49, /*tRC*/ 70, /*tCCD_S*/ 2, /*tCCD_L*/ 3,
         /*tRRD_S*/ 10, /*tRRD_L*/ 12, /*tFAW*/ 40, /*tWTR*/ 9, /*tRTW*/ 18, /*tCL*/ 20,
         /*tWL*/ 6, /*tRTP*/ 4, /*tWR*/ 21, /*tREFI*/ 3413, /*tRFC*/ 193};
  return s;
}

// ---- GDDR5X, Titan Xp -------------------------------------------------------------------
// 12 x 32-bit channels at 11.408 Gb/s/pin -> 547.6 GB/s (NVIDIA spec: 547.7 GB/s, 11.4 Gbps).
// GDDR5X (JEDEC JESD232A) QDR mode: CK = data rate / 8 = 1.426 GHz -> tCK 701 ps; BL16 =
// 2 tCK = 64 B. 16 banks / 4 bank groups, 2 KiB page. tRCD = tRP = 12.6 ns, tRAS 28 ns,
// tRC 40.7 ns, tFAW 23 ns, CL 20 tCK, tREFI 1.95 us, tRFC 160 ns (8 Gb die).
dram_spec gddr5x_titanxp() {
  dram_spec s;
  s.name = "gddr5x_titanxp";
  s.standard = "GDDR5X (JEDEC JESD232A)";
  s.speed_grade = "11.408 Gb/s/pin, QDR, tCK 701 ps (CK 1.426 GHz), BL16";
  s.source = "NVIDIA TITAN Xp spec sheet (384-bit, 11.4 Gb/s, 547.7 GB/s, 12 GB); "
             "JESD232A timing classes, Micron MT58K256M32 (GDDR5X) datasheet values";
  s.channels = 12;
  s.width_bits = 32;
  s.data_rate_bps = 11.408e9;
  s.burst_length = 16;
  s.bank_groups = 4;
  s.banks_per_group = 4;
  s.page_bytes = 2048;
  s.rows = 32768;
  s.tCK_ps = 701;
  s.t = {18, 18, 40, 58, 2, 3, 8, 9, 33, 8, 18, 20, 6, 4, 18, 2782, 228};
  return s;
}

// ---- HBM2 -------------------------------------------------------------------------------
// JEDEC JESD235A pseudo-channel mode: each 128-bit channel is two 64-bit pseudo-channels,
// BL4 = 32 B, CK = data rate / 2. 4 stacks x 8 channels x 2 = 64 pseudo-channels, 4096 bits.
// 16 banks / 4 bank groups per pseudo-channel, 1 KiB page; tRCD = tRP = 14 ns, tRAS 33 ns,
// tRC 47 ns, tRRD_S/L 4.2/5.6 ns, tFAW 16 ns, CL 14 ns, tREFI 3.9 us, tRFC 350 ns (8 Gb die),
// values of the JESD235-derived DRAMsim3 / Ramulator HBM configurations scaled to the clock.
dram_spec hbm2_common() {
  dram_spec s;
  s.standard = "HBM2 (JEDEC JESD235A), pseudo-channel mode";
  s.channels = 64;
  s.width_bits = 64;
  s.burst_length = 4;
  s.bank_groups = 4;
  s.banks_per_group = 4;
  s.page_bytes = 1024;
  s.dual_command_bus = true;
  s.rows = 16384;  // 16 GB / 64 pseudo-channels = 256 MiB = 16 banks x 16384 rows x 1 KiB
  return s;
}

dram_spec hbm2_p100() {
  dram_spec s = hbm2_common();
  s.name = "hbm2_p100";
  s.speed_grade = "1.43 Gb/s/pin, tCK 1399 ps (CK 715 MHz), BL4";
  s.source = "NVIDIA Tesla P100 SXM2 spec sheet (4096-bit HBM2, 732 GB/s, 16 GB); JESD235A";
  s.data_rate_bps = 732e9 / 512.0;  // 1.4297 Gb/s: 4096 bits / 8 = 512 B per beat
  s.tCK_ps = 1399;
  s.t = {10, 10, 24, 34, 2, 3, 3, 4, 12, 6, 10, 10, 4, 5, 11, 2788, 250};
  return s;
}

dram_spec hbm2_v100() {
  dram_spec s = hbm2_common();
  s.name = "hbm2_v100";
  s.speed_grade = "1.758 Gb/s/pin, tCK 1138 ps (CK 879 MHz), BL4";
  s.source = "NVIDIA Tesla V100 SXM2 spec sheet (4096-bit HBM2, 900 GB/s, 16 GB); JESD235A";
  s.data_rate_bps = 900e9 / 512.0;  // 1.7578 Gb/s
  s.tCK_ps = 1138;
  s.t = {13, 13, 29, 42, 2, 4, 4, 5, 14, 7, 13, 13, 4, 6, 14, 3427, 308};
  return s;
}

// A100 40 GB SXM4/PCIe: 5 active HBM2 stacks (5120 bits) at 2.43 Gb/s -> 1555 GB/s (NVIDIA
// A100 spec sheet); pseudo-channel mode: 5 x 8 x 2 = 80 pseudo-channels of 64 bits; 40 GB / 80 =
// 512 MiB each = 16 banks x 32768 rows x 1 KiB. CK = 1.215 GHz, tCK 823 ps. The ns values of
// hbm2_common() converted to cycles at this clock as for P100 / V100 (tRCD = tRP = CL = tRTW 14 ns
// -> 17; tRAS 33 -> 41; tRC 47 -> 58; tCCD_L ~4 ns -> 5; tRRD_S/L 4.2/5.6 -> 6/7; tFAW 16 -> 20;
// tWTR ~8 -> 10; WL 4 tCK; tRTP ~7 -> 9; tWR 15 -> 19; tREFI 3.9 us -> 4739; tRFC 350 ns -> 426).
dram_spec hbm2_a100() {
  dram_spec s = hbm2_common();
  s.name = "hbm2_a100";
  s.speed_grade = "2.43 Gb/s/pin, tCK 823 ps (CK 1.215 GHz), BL4";
  s.source = "NVIDIA A100 40 GB spec sheet (5120-bit HBM2, 1555 GB/s, 40 GB); JESD235A";
  s.channels = 80;
  s.rows = 32768;
  s.data_rate_bps = 1555e9 / 640.0;  // 2.4297 Gb/s: 5120 bits / 8 = 640 B per beat
  s.tCK_ps = 823;
  s.t = {17, 17, 41, 58, 2, 5, 6, 7, 20, 10, 17, 17, 4, 9, 19, 4739, 426};
  return s;
}

// ---- HBM3, H100 SXM ---------------------------------------------------------------------
// 5 active stacks x 16 channels x 2 pseudo-channels = 160 pseudo-channels of 32 bits (5120
// bits) at 5.234 Gb/s -> 3.35 TB/s (NVIDIA H100 SXM5 80 GB spec). JEDEC JESD238: CK = data
// rate / 4 -> tCK 764 ps, BL8 = 2 tCK = 32 B. 16 banks / 4 bank groups per pseudo-channel,
// 1 KiB page; tRCD = tRP = 14.5 ns, tRAS 33.6 ns, tRC 48 ns, tFAW 15.3 ns, CL 15.3 ns,
// tREFI 3.9 us, tRFC 350 ns (16 Gb die).
dram_spec hbm3_h100() {
  dram_spec s;
  s.name = "hbm3_h100";
  s.standard = "HBM3 (JEDEC JESD238)";
  s.speed_grade = "5.234 Gb/s/pin, tCK 764 ps (CK 1.309 GHz), BL8";
  s.source = "NVIDIA H100 SXM5 spec sheet (5120-bit HBM3, 3.35 TB/s, 80 GB); JESD238";
  s.channels = 160;
  s.width_bits = 32;
  s.data_rate_bps = 3350e9 / 640.0;  // 5.234 Gb/s: 5120 bits / 8 = 640 B per beat
  s.burst_length = 8;
  s.bank_groups = 4;
  s.banks_per_group = 4;
  s.page_bytes = 1024;
  s.dual_command_bus = true;
  s.rows = 32768;  // 80 GB / 160 = 512 MiB per pseudo-channel
  s.tCK_ps = 764;
  s.t = {19, 19, 44, 63, 2, 4, 3, 4, 20, 10, 16, 20, 8, 7, 21, 5105, 458};
  return s;
}

}  // namespace

std::vector<std::string> preset_names() {
  return {"gddr5_titanx", "gddr5x_titanxp", "hbm2_p100", "hbm2_v100", "hbm2_a100", "hbm3_h100"};
}

dram_spec preset(const std::string& name) {
  dram_spec s;
  if (name == "gddr5_titanx") s = gddr5_titanx();
  else if (name == "gddr5x_titanxp") s = gddr5x_titanxp();
  else if (name == "hbm2_p100") s = hbm2_p100();
  else if (name == "hbm2_v100") s = hbm2_v100();
  else if (name == "hbm2_a100") s = hbm2_a100();
  else if (name == "hbm3_h100") s = hbm3_h100();
  else {
    std::string known;
    for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown DRAM preset '" + name + "'; expected one of: " + known);
  }
  s.validate();
  return s;
}

}  // namespace cdma::dram
