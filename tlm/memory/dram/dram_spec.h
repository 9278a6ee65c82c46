// DRAM device/channel description and the presets of the GPU memories the platform models.
// Pure C++ (no SystemC). All timings are integer picoseconds, derived from clock cycles at
// the command clock tCK (the unit JEDEC datasheets and simulator configurations use).
//
// A "channel" here is the unit with its own command bus, banks and data bus: a 32-bit GDDR5 /
// GDDR5X channel, or an HBM pseudo-channel (HBM2: 64-bit, HBM3: 32-bit).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tlm/core/units.h"

namespace cdma::dram {

/// Timing parameters in command-clock cycles (tCK). Names follow JEDEC.
struct timing_cycles {
  unsigned tRCD = 0;    ///< ACT -> RD/WR, same bank
  unsigned tRP = 0;     ///< PRE -> ACT, same bank
  unsigned tRAS = 0;    ///< ACT -> PRE, same bank
  unsigned tRC = 0;     ///< ACT -> ACT, same bank
  unsigned tCCD_S = 0;  ///< column -> column, different bank group
  unsigned tCCD_L = 0;  ///< column -> column, same bank group
  unsigned tRRD_S = 0;  ///< ACT -> ACT, different bank group
  unsigned tRRD_L = 0;  ///< ACT -> ACT, same bank group
  unsigned tFAW = 0;    ///< window holding at most four ACTs
  unsigned tWTR = 0;    ///< end of write data -> RD
  unsigned tRTW = 0;    ///< RD -> WR (bus turnaround)
  unsigned tCL = 0;     ///< RD -> first read data
  unsigned tWL = 0;     ///< WR -> first write data
  unsigned tRTP = 0;    ///< RD -> PRE, same bank
  unsigned tWR = 0;     ///< end of write data -> PRE, same bank
  unsigned tREFI = 0;   ///< average refresh interval (all-bank REF)
  unsigned tRFC = 0;    ///< REF -> next command (all banks blocked)
};

/// One channel's organisation and timing, plus how many channels the memory has.
struct dram_spec {
  std::string name;        ///< preset name, e.g. "gddr5_titanx"
  std::string standard;    ///< e.g. "GDDR5 (JESD212C)"
  std::string speed_grade; ///< e.g. "7 Gb/s/pin, tCK 571 ps"
  std::string source;      ///< where the values come from
  unsigned channels = 1;        ///< channels (HBM: pseudo-channels) in the whole memory
  unsigned width_bits = 32;     ///< data bits per channel
  double data_rate_bps = 0;     ///< per-pin data rate, bit/s
  unsigned burst_length = 8;    ///< beats per column access (BL)
  unsigned bank_groups = 4;
  unsigned banks_per_group = 4;
  std::uint64_t rows = 16384;   ///< rows per bank
  unsigned page_bytes = 2048;   ///< row (page) size per bank in bytes, per channel
  ps_t tCK_ps = 1000;           ///< command clock period, ps
  /// Separate row (ACT/PRE/REF) and column (RD/WR) command buses (HBM); else one command
  /// per tCK on a shared bus (GDDR5/GDDR5X).
  bool dual_command_bus = false;
  timing_cycles t;              ///< timings in tCK

  /// Bytes moved by one column access: width/8 x BL.
  unsigned burst_bytes() const { return width_bits / 8 * burst_length; }
  /// Data-bus time of one burst, ps (BL beats at data_rate_bps), rounded to the nearest ps.
  ps_t burst_ps() const;
  unsigned banks() const { return bank_groups * banks_per_group; }
  unsigned columns() const { return page_bytes / burst_bytes(); }  ///< bursts per row
  std::uint64_t channel_bytes() const {
    return static_cast<std::uint64_t>(banks()) * rows * page_bytes;
  }
  /// Peak bandwidth of the whole memory, B/s = channels x width/8 x data rate.
  double peak_bandwidth_Bps() const {
    return static_cast<double>(channels) * width_bits / 8.0 * data_rate_bps;
  }
  /// `cycles` of tCK in ps.
  ps_t ps(unsigned cycles) const { return static_cast<ps_t>(cycles) * tCK_ps; }
  /// Throws std::invalid_argument naming the field if the spec is inconsistent.
  void validate() const;
};

/// The presets: gddr5_titanx, gddr5x_titanxp, hbm2_p100, hbm2_v100, hbm3_h100.
std::vector<std::string> preset_names();
/// Returns the preset called `name`; throws std::invalid_argument listing the known names.
dram_spec preset(const std::string& name);

}  // namespace cdma::dram
