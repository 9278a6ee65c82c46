// Address decoder: byte address -> channel / bank group / bank / row / column (burst index).
// Pure C++.
//
// The mapping is a list of fields from the least significant end of the burst index
// (address / burst_bytes): each slice takes `count` values of one field. With power-of-two
// counts this is exactly a bit-field mapping (DRAMSys / Ramulator style); other counts (the
// 12 channels of a 384-bit GDDR5 bus) give the mixed-radix interleave GPUs use. A field may be
// split into several slices (e.g. low column bits below the channel bits).
//
// Written as text, MSB first, e.g. the default for the Titan X:
//   "row bank column channel bankgroup column:2"
// A token is `field` or `field:count`; fields are row, bank, bankgroup, channel, column. A
// field named once takes its full size; a field named several times must give counts for all
// slices but one, which takes the rest. The product of all counts is the memory size in
// bursts; addresses wrap modulo that size (the row slice takes the remaining bits).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tlm/memory/dram/dram_spec.h"

namespace cdma::dram {

enum class field : std::uint8_t { channel, bank_group, bank, row, column };
const char* field_name(field f);

/// Decoded location of one burst.
struct location {
  unsigned channel = 0;
  unsigned bank_group = 0;
  unsigned bank = 0;       ///< bank within its group
  std::uint64_t row = 0;
  unsigned column = 0;     ///< burst index within the row
  /// Flat bank index in the channel: bank_group x banks_per_group + bank.
  unsigned flat_bank(const dram_spec& s) const { return bank_group * s.banks_per_group + bank; }
};

class address_mapping {
public:
  struct slice { field f; std::uint64_t count; };

  /// Parses `text` (see above) for `spec`; throws std::invalid_argument naming the token.
  address_mapping(const dram_spec& spec, const std::string& text);
  /// The default GPU mapping: "row bank column channel bankgroup column:2" (64-B chunks of
  /// GDDR5/HBM bursts rotate over bank groups, then channels; a row is shared by the
  /// consecutive chunks of one bank).
  static std::string default_text(const dram_spec& spec);

  location decode(std::uint64_t addr) const;
  /// decode() of burst index `burst` (= address / burst_bytes()) without a division: mask and
  /// shift per power-of-two slice, a multiplication by a reciprocal otherwise (exact; tested
  /// against decode()). (Inline: one per 64-B AT request.)
  location locate(std::uint64_t burst) const { return locate(burst, nullptr); }
  /// Byte address of the first byte of a burst at `loc` (inverse of decode).
  std::uint64_t encode(const location& loc) const;

  /// Every slice has a count >= 2 and their product is the memory size in bursts (< 2^64),
  /// so a mapping has at most 64 slices (the cursor keeps its digits in a fixed array).
  static constexpr std::size_t max_slices = 64;

  /// Walks consecutive bursts without dividing: decode(addr) once, then next() increments the
  /// mixed-radix burst index digit by digit (carry), keeping the location up to date. Gives
  /// exactly decode(addr + k x burst_bytes()) after k calls of next(). No heap allocation.
  class cursor {
  public:
    /// (Inline: a single decode, e.g. the one of a 64-B request, then keeps only loc().)
    cursor(const address_mapping& m, std::uint64_t addr);
    const location& loc() const { return loc_; }
    void next();

  private:
    const address_mapping& m_;
    std::array<std::uint64_t, max_slices> digit_;  ///< per slice: current digit
    location loc_;
  };

  unsigned burst_bytes() const { return burst_bytes_; }
  /// addr / burst_bytes() (a shift when burst_bytes() is a power of two, as in every preset).
  std::uint64_t burst_index(std::uint64_t addr) const {
    return burst_shift_ >= 0 ? addr >> burst_shift_ : addr / burst_bytes_;
  }
  const std::vector<slice>& slices() const { return slices_; }  ///< LSB first
  const std::string& text() const { return text_; }

  /// True when the row field is exactly one slice and it is the most significant one (the
  /// default mapping): then every field but the row depends only on the burst index modulo
  /// row_period(), and row = (burst index / row_period()) mod rows.
  bool row_on_top() const { return row_on_top_; }
  /// Product of the counts of every slice below the row slice (bursts), when row_on_top().
  std::uint64_t row_period() const { return row_period_; }
  /// Size of the memory in bursts (product of all counts).
  std::uint64_t size_bursts() const { return size_bursts_; }
  /// True when the bursts [first, last] (burst indices, first <= last) lie in one block of
  /// the least significant slice and that slice is a column slice with a power-of-two count
  /// (e.g. `column:2` of the default mapping): they then differ only in the column, i.e. have
  /// the same channel, bank group, bank and row. Also true for a single burst (first == last).
  /// (A block never straddles the wrap-around: the memory size is a multiple of its count.)
  bool one_low_column_block(std::uint64_t first, std::uint64_t last) const {
    return first == last || (low_col_shift_ > 0 && ((first ^ last) >> low_col_shift_) == 0);
  }

private:
  std::vector<slice> slices_;
  /// Per slice (LSB first), packed so that a decode reads one array: the slice's count and
  /// field, the weight of its digit within its field, log2(count) when a power of two (else
  /// -1: then a reciprocal m and shift k with floor(x m / 2^k) = floor(x / count) for
  /// x < kRecipLimit, e.g. for the 12 GDDR5 channels or the 160 HBM3 pseudo-channels, so
  /// that no decode needs a 64-bit division).
  struct step {
    std::uint64_t count;
    std::uint64_t weight;
    std::uint64_t recip;
    std::int8_t shift;
    std::uint8_t rshift;
    field f;
  };
  std::vector<step> steps_;
  /// locate(), also storing each slice's digit in digits[k] when `digits` is not null (cursor).
  location locate(std::uint64_t burst, std::uint64_t* digits) const;
  /// The location of per-field values v[field] (decode(), locate()).
  static location to_location(const std::uint64_t (&v)[5]);
  static constexpr std::uint64_t kRecipLimit = std::uint64_t{1} << 40;
  /// Splits burst index x into its slice digits, LSB first: calls f(k, step, digit) per
  /// slice k (the mixed-radix digits decode() computes with divisions).
  template <class F>
  void for_each_digit(std::uint64_t x, F&& f) const {
    for (std::size_t k = 0; k < steps_.size(); ++k) {
      const step& s = steps_[k];
      std::uint64_t d;
      if (s.shift >= 0) {
        d = x & (s.count - 1);
        x >>= s.shift;
      } else {
        // __extension__: no -Wpedantic warning for __int128 in users' builds (same code).
        const std::uint64_t q =
            x < kRecipLimit
                ? static_cast<std::uint64_t>(
                      __extension__(static_cast<unsigned __int128>(x) * s.recip) >> s.rshift)
                : x / s.count;
        d = x - q * s.count;
        x = q;
      }
      f(k, s, d);
    }
  }
  int burst_shift_ = -1;    ///< log2(burst_bytes_) when a power of two, else -1
  unsigned burst_bytes_;
  std::string text_;
  bool row_on_top_ = false;
  std::uint64_t row_period_ = 0, size_bursts_ = 1;
  /// log2(count) of the least significant slice when it is a column slice with a
  /// power-of-two count, else -1 (one_low_column_block()).
  int low_col_shift_ = -1;
};

inline location address_mapping::to_location(const std::uint64_t (&v)[5]) {
  location l;
  l.channel = static_cast<unsigned>(v[static_cast<std::size_t>(field::channel)]);
  l.bank_group = static_cast<unsigned>(v[static_cast<std::size_t>(field::bank_group)]);
  l.bank = static_cast<unsigned>(v[static_cast<std::size_t>(field::bank)]);
  l.row = v[static_cast<std::size_t>(field::row)];
  l.column = static_cast<unsigned>(v[static_cast<std::size_t>(field::column)]);
  return l;
}

inline location address_mapping::locate(std::uint64_t burst, std::uint64_t* digits) const {
  std::uint64_t v[5] = {0, 0, 0, 0, 0};
  for_each_digit(burst, [&](std::size_t k, const step& s, std::uint64_t d) {
    if (digits) digits[k] = d;
    v[static_cast<std::size_t>(s.f)] += d * s.weight;
  });
  return to_location(v);
}

inline address_mapping::cursor::cursor(const address_mapping& m, std::uint64_t addr)
    : m_(m), loc_(m.locate(m.burst_index(addr), digit_.data())) {}

}  // namespace cdma::dram
