#include "tlm/memory/dram/address_mapping.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace cdma::dram {

const char* field_name(field f) {
  switch (f) {
    case field::channel: return "channel";
    case field::bank_group: return "bankgroup";
    case field::bank: return "bank";
    case field::row: return "row";
    case field::column: return "column";
  }
  return "?";
}

namespace {

std::uint64_t field_size(const dram_spec& s, field f) {
  switch (f) {
    case field::channel: return s.channels;
    case field::bank_group: return s.bank_groups;
    case field::bank: return s.banks_per_group;
    case field::row: return s.rows;
    case field::column: return s.columns();
  }
  return 1;
}

}  // namespace

std::string address_mapping::default_text(const dram_spec& spec) {
  return spec.columns() >= 2 ? "row bank column channel bankgroup column:2"
                             : "row bank column channel bankgroup";
}

address_mapping::address_mapping(const dram_spec& spec, const std::string& text)
    : burst_bytes_(spec.burst_bytes()), text_(text) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("address mapping '" + text + "': " + why);
  };
  struct tok { field f; std::uint64_t count; bool given; std::string s; };
  std::vector<tok> toks;
  std::istringstream is(text);
  std::string t;
  while (is >> t) {
    const auto colon = t.find(':');
    const std::string nm = t.substr(0, colon);
    tok k{field::row, 0, colon != std::string::npos, t};
    if (nm == "row") k.f = field::row;
    else if (nm == "bank") k.f = field::bank;
    else if (nm == "bankgroup") k.f = field::bank_group;
    else if (nm == "channel") k.f = field::channel;
    else if (nm == "column") k.f = field::column;
    else fail("unknown field '" + nm + "' in token '" + t +
              "'; expected row, bank, bankgroup, channel or column");
    if (k.given) {
      // Decimal digits only: std::stoull read "column:2abc" as 2 and "column:-1" as 2^64 - 1.
      const std::string c = t.substr(colon + 1);
      if (c.empty() || c.size() > 19 || c.find_first_not_of("0123456789") != std::string::npos)
        fail("token '" + t + "': count must be a positive integer (decimal digits, below 10^19)");
      k.count = std::stoull(c);
      if (k.count == 0) fail("token '" + t + "': count must be >= 1");
    }
    toks.push_back(k);
  }
  for (field f : {field::channel, field::bank_group, field::bank, field::row, field::column}) {
    const std::uint64_t size = field_size(spec, f);
    std::uint64_t given = 1;
    int open = 0, n = 0;
    for (const auto& k : toks)
      if (k.f == f) {
        ++n;
        if (k.given) given *= k.count; else ++open;
      }
    if (n == 0) {
      if (size > 1) fail(std::string("field '") + field_name(f) + "' (size " +
                         std::to_string(size) + ") is missing");
      continue;
    }
    if (open > 1) fail(std::string("field '") + field_name(f) +
                       "' is split without counts on all slices but one");
    if (size % given) fail(std::string("the counts of field '") + field_name(f) +
                           "' do not divide its size " + std::to_string(size));
    if (open == 0 && given != size)
      fail(std::string("the counts of field '") + field_name(f) + "' multiply to " +
           std::to_string(given) + ", not its size " + std::to_string(size));
    for (auto& k : toks)
      if (k.f == f && !k.given) k.count = size / given;
  }
  for (auto it = toks.rbegin(); it != toks.rend(); ++it)
    if (it->count > 1) slices_.push_back({it->f, it->count});
  if (slices_.size() > max_slices)  // cannot happen: counts >= 2 multiply to < 2^64
    fail("more than " + std::to_string(max_slices) + " slices");
  auto log2_exact = [](std::uint64_t v) {
    if (v == 0 || (v & (v - 1)) != 0) return -1;
    int k = 0;
    while ((std::uint64_t{1} << k) != v) ++k;
    return k;
  };
  std::uint64_t mul[5] = {1, 1, 1, 1, 1};
  unsigned row_slices = 0;
  for (const auto& s : slices_) {
    const auto i = static_cast<std::size_t>(s.f);
    step st{s.count, mul[i], 0, static_cast<std::int8_t>(log2_exact(s.count)), 0, s.f};
    mul[i] *= s.count;
    size_bursts_ *= s.count;
    if (s.f == field::row) ++row_slices;
    // Reciprocal of a count that is not a power of two (cursor): k = 40 + ceil(log2 d),
    // m = ceil(2^k / d); then floor(x m / 2^k) = floor(x / d) for every x < 2^40 (the
    // error x (m d - 2^k) / (d 2^k) < 2^(40 - k) <= 1 / d, and frac(x / d) <= (d - 1) / d).
    unsigned ceil_log2 = 0;
    while (ceil_log2 < 64 && (std::uint64_t{1} << ceil_log2) < s.count) ++ceil_log2;
    const unsigned k = 40 + ceil_log2;
    const unsigned __int128 two_k = static_cast<unsigned __int128>(1) << k;
    const unsigned __int128 m = (two_k + s.count - 1) / s.count;
    st.recip = static_cast<std::uint64_t>(m);  // m <= 2^41
    st.rshift = static_cast<std::uint8_t>(k);
    steps_.push_back(st);
  }
  burst_shift_ = log2_exact(burst_bytes_);
  row_on_top_ = row_slices == 1 && slices_.back().f == field::row;
  row_period_ = row_on_top_ ? size_bursts_ / slices_.back().count : 0;
  if (!slices_.empty() && slices_.front().f == field::column) low_col_shift_ = steps_.front().shift;
}

location address_mapping::decode(std::uint64_t addr) const {
  std::uint64_t x = addr / burst_bytes_;
  std::uint64_t v[5] = {0, 0, 0, 0, 0};
  std::uint64_t m[5] = {1, 1, 1, 1, 1};
  for (const auto& s : slices_) {
    const auto i = static_cast<std::size_t>(s.f);
    v[i] += (x % s.count) * m[i];
    m[i] *= s.count;
    x /= s.count;
  }
  return to_location(v);
}

void address_mapping::cursor::next() {
  for (std::size_t k = 0; k < m_.steps_.size(); ++k) {
    const step& s = m_.steps_[k];
    const std::uint64_t w = s.weight;
    auto add = [&](std::int64_t delta) {
      switch (s.f) {
        case field::channel: loc_.channel = static_cast<unsigned>(static_cast<std::int64_t>(loc_.channel) + delta); break;
        case field::bank_group: loc_.bank_group = static_cast<unsigned>(static_cast<std::int64_t>(loc_.bank_group) + delta); break;
        case field::bank: loc_.bank = static_cast<unsigned>(static_cast<std::int64_t>(loc_.bank) + delta); break;
        case field::row: loc_.row = static_cast<std::uint64_t>(static_cast<std::int64_t>(loc_.row) + delta); break;
        case field::column: loc_.column = static_cast<unsigned>(static_cast<std::int64_t>(loc_.column) + delta); break;
      }
    };
    if (digit_[k] + 1 < s.count) {
      ++digit_[k];
      add(static_cast<std::int64_t>(w));
      return;
    }
    add(-static_cast<std::int64_t>((s.count - 1) * w));  // wrap to 0, carry on
    digit_[k] = 0;
  }
  // Past the top slice every digit is 0 again: addresses wrap modulo the memory size, as in
  // decode().
}

std::uint64_t address_mapping::encode(const location& loc) const {
  std::uint64_t v[5] = {loc.channel, loc.bank_group, loc.bank, loc.row, loc.column};
  std::uint64_t x = 0, mul = 1;
  for (const auto& s : slices_) {
    const auto i = static_cast<std::size_t>(s.f);
    x += (v[i] % s.count) * mul;
    v[i] /= s.count;
    mul *= s.count;
  }
  return x * burst_bytes_;
}

}  // namespace cdma::dram
