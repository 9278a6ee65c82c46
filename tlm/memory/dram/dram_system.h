// The DRAM core of gpu_memory_controller, without SystemC: address decoder, one `channel`
// (bank machines + scheduler + timing checker + refresh) per channel for the AT path, and the
// LT estimate, which uses the same decoder and the timing functions of timing.h. Pure C++.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tlm/memory/dram/address_mapping.h"
#include "tlm/memory/dram/channel.h"
#include "tlm/memory/dram/dram_spec.h"
#include "tlm/memory/dram/timing.h"

namespace cdma::dram {

class dram_system {
public:
  /// `mapping`: address_mapping text; empty means address_mapping::default_text(spec).
  dram_system(const dram_spec& spec, const std::string& mapping = "",
              page_policy pp = page_policy::open, scheduler sch = scheduler::frfcfs);

  /// Cuts [addr, addr+len) into channel requests (runs of bursts in one row of one bank) and
  /// calls f(channel index, request) for each; `tag`, `arrival`, `write` are copied into them.
  /// A request smaller than a burst still moves (and costs) one whole burst.
  template <class F>
  void split(std::uint64_t addr, std::uint64_t len, bool write, std::uint64_t tag, ps_t arrival,
             F&& f) const {
    if (len == 0) len = 1;
    const std::uint64_t bb = map_.burst_bytes();
    std::uint64_t b = addr / bb;
    const std::uint64_t end = (addr + len + bb - 1) / bb;
    unsigned ch = 0;
    request r;
    bool have = false;
    address_mapping::cursor cur(map_, b * bb);  // incremental decode: no division per burst
    for (; b < end; ++b, cur.next()) {
      const location& l = cur.loc();
      if (have && l.channel == ch && l.bank_group == r.bank_group && l.bank == r.bank &&
          l.row == r.row) {
        ++r.bursts;
        continue;
      }
      if (have) f(ch, r);
      ch = l.channel;
      r = request{tag, arrival, write, l.bank_group, l.bank, l.row, 1};
      have = true;
    }
    if (have) f(ch, r);
  }

  /// LT estimate: time (ps) the last burst of the access ends when it is ready at `ready`.
  /// Per channel: bursts and row activations (tracked per bank, by policy) -> service_ps();
  /// channels serve their parts in parallel, each after its previous LT work (as a
  /// bandwidth_server); the result is the later of ready + access latency (isolated access)
  /// and the end of the service + CL/WL (stream).
  ps_t lt_access(std::uint64_t addr, std::uint64_t len, bool write, ps_t ready);

  const dram_spec& spec() const { return spec_; }
  const address_mapping& mapping() const { return map_; }
  std::vector<channel>& channels() { return ch_; }
  const std::vector<channel>& channels() const { return ch_; }
  page_policy policy() const { return policy_; }

  /// LT statistics: data-bus busy time summed over channels (ps), ACTs, bursts.
  ps_t lt_busy_ps() const { return lt_busy_; }
  std::uint64_t lt_acts() const { return lt_acts_; }
  std::uint64_t lt_bursts() const { return lt_bursts_; }

private:
  dram_spec spec_;
  address_mapping map_;
  page_policy policy_;
  std::vector<channel> ch_;
  // LT state.
  struct lt_chan { ps_t busy_until = 0; std::vector<std::uint64_t> open_row; };
  struct lt_acc { std::uint64_t bursts = 0, acts = 0; std::vector<std::uint64_t> per_group; bool used = false; };
  std::vector<lt_chan> lt_;
  std::vector<lt_acc> acc_;
  std::vector<unsigned> touched_;
  ps_t lt_busy_ = 0;
  std::uint64_t lt_acts_ = 0, lt_bursts_ = 0;
};

}  // namespace cdma::dram
