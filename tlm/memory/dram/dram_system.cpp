#include "tlm/memory/dram/dram_system.h"

#include <algorithm>

namespace cdma::dram {

namespace {
constexpr std::uint64_t closed_row = ~0ull;
}

dram_system::dram_system(const dram_spec& spec, const std::string& mapping, page_policy pp,
                         scheduler sch)
    : spec_(spec),
      map_(spec_, mapping.empty() ? address_mapping::default_text(spec_) : mapping),
      policy_(pp) {
  spec_.validate();
  ch_.reserve(spec_.channels);
  const ps_t refi = spec_.ps(spec_.t.tREFI);
  for (unsigned c = 0; c < spec_.channels; ++c)
    // Refreshes of the channels are staggered evenly over one tREFI.
    ch_.emplace_back(spec_, pp, sch, refi ? refi * (c + 1) / spec_.channels : 0);
  lt_.resize(spec_.channels);
  for (auto& l : lt_) l.open_row.assign(spec_.banks(), closed_row);
  acc_.resize(spec_.channels);
  for (auto& a : acc_) a.per_group.assign(spec_.bank_groups, 0);
}

ps_t dram_system::lt_access(std::uint64_t addr, std::uint64_t len, bool write, ps_t ready) {
  bool first = true, first_pre = false, first_act = false;
  split(addr, len, write, 0, ready, [&](unsigned c, const request& r) {
    lt_acc& a = acc_[c];
    if (!a.used) {
      a.used = true;
      touched_.push_back(c);
    }
    std::uint64_t& open = lt_[c].open_row[r.bank_group * spec_.banks_per_group + r.bank];
    const bool miss = policy_ == page_policy::closed || open != r.row;
    if (first) {
      first_pre = miss && policy_ == page_policy::open && open != closed_row;
      first_act = miss;
      first = false;
    }
    if (miss) ++a.acts;
    open = r.row;
    a.bursts += r.bursts;
    a.per_group[r.bank_group] += r.bursts;
  });
  ps_t end = ready;
  for (unsigned c : touched_) {
    lt_acc& a = acc_[c];
    const std::uint64_t maxg = *std::max_element(a.per_group.begin(), a.per_group.end());
    const ps_t svc = service_ps(spec_, a.bursts, maxg, a.acts);
    lt_chan& l = lt_[c];
    l.busy_until = std::max(l.busy_until, ready) + svc;
    end = std::max(end, l.busy_until);
    lt_busy_ += a.bursts * spec_.burst_ps();
    lt_acts_ += a.acts;
    lt_bursts_ += a.bursts;
    a.bursts = a.acts = 0;
    std::fill(a.per_group.begin(), a.per_group.end(), 0);
    a.used = false;
  }
  touched_.clear();
  // An isolated access takes its access latency (row close/open, CL/WL, one burst); in a
  // stream the channels' service times dominate, and the last burst's data follows its
  // column command (whose slot ends the service time) by CL/WL.
  const ps_t isolated = ready + access_latency_ps(spec_, write, first_pre, first_act);
  const ps_t stream = end + spec_.ps(write ? spec_.t.tWL : spec_.t.tCL) + spec_.burst_ps() -
                      column_interval_ps(spec_, false);
  return std::max(isolated, stream);
}

}  // namespace cdma::dram
