// Pure PCIe link arithmetic (no SystemC): line rates, TLP and DLLP overheads, how a transfer
// is cut into TLPs, flow-control credit costs and the timing rules shared by the LT (analytic)
// and AT (TLP-level) paths of pcie_link. One rule, one place: pcie_link never re-derives any
// of these numbers.
//
// Spec sections cited are those of the PCI Express Base Specification (rev. 3.0 numbering
// unless a later revision is named):
//   §2.2.1-2.2.9  TLP formats: 3DW/4DW request headers, 3DW completion headers, ECRC (§2.7);
//   §2.2.7        a request must not cross a 4 KiB address boundary; MPS limits MWr payload,
//                 MRRS the size of one MRd (Device Control register, §7.8.4);
//   §2.3.1.1      completions: a completer may split at Read Completion Boundaries (RCB);
//   §2.6.1        flow control: credit types PH/PD/NPH/NPD/CplH/CplD, 1 data credit = 16 B;
//                 Root Complexes and Endpoints advertise infinite completion credits;
//   §3.4 / §3.5   DLLPs (Ack, UpdateFC) are 6 B + 2 B framing on the wire (SDP token in
//                 128b/130b, SDP/END symbols in 8b/10b); Ack coalescing (AckNak latency timer);
//   §4.2.1        8b/10b (Gen1 2.5 GT/s, Gen2 5 GT/s); §4.2.2 128b/130b (Gen3 8, Gen4 16,
//                 Gen5 32 GT/s); framing: Gen1/2 STP+END 2 B + 2 B sequence number, Gen3+
//                 4 B STP token carrying the sequence number: 4 B either way, + 4 B LCRC;
//   §4.2.7        SKP ordered sets: 8b/10b every 1180..1538 symbol times (4 symbols); 128b/130b
//                 every 370..375 blocks (one 16-symbol SKP OS per lane);
//   rev. 6.0 §4.2.3 (Flit Mode): 64 GT/s PAM4, 256 B flits = 236 B TLP bytes + 6 B DLP (DLLP
//                 payload, incl. Ack/UpdateFC) + 8 B CRC + 6 B FEC; no per-TLP framing, sequence
//                 number or LCRC in Flit Mode (they live in the flit).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tlm/core/bandwidth_server.h"
#include "tlm/core/units.h"

namespace cdma::pcie {

/// One PCIe link configuration (both directions are alike). Defaults: Gen3 x16, MPS 256,
/// MRRS 512, RCB 64, 64-bit addressing, 400 ns one-way latency (64 B read round trip about
/// 0.88 us with the default 80 ns host memory), ample credits and tags. The calibrated
/// "measured host" values are in preset("measured-host") (docs/pcie.md).
struct link_params {
  int gen = 3;                 ///< PCIe generation 1..6 (6 = Flit Mode)
  int lanes = 16;              ///< link width: 1, 2, 4, 8, 12, 16 or 32
  std::uint32_t mps = 256;     ///< Max Payload Size, bytes (power of two, 128..4096)
  std::uint32_t mrrs = 512;    ///< Max Read Request Size, bytes (power of two, 128..4096)
  std::uint32_t rcb = 64;      ///< Read Completion Boundary, bytes (64 or 128)
  bool header_4dw = true;      ///< 64-bit addressing: 16 B request header, else 12 B
  bool ecrc = false;           ///< end-to-end CRC: +4 B per TLP
  /// One-way latency of the link (PHY + data link layer of both ends + flight), ps, added to
  /// every TLP and DLLP after its last byte is serialised. Default 400 ns (with
  /// rc_latency_ps = 0 this lumps the root complex in, as the first model did).
  ps_t latency_ps = 400000;

  // ---- added with the TLP-level model (issue 4) ----
  /// Root-complex traversal latency, ps, each way (MRd/MWr from the link to host memory and
  /// the completion from host memory back to the link). Default 0.
  ps_t rc_latency_ps = 0;
  /// Payload the completer puts in one CplD, bytes (multiple of RCB, <= MPS); 0 = MPS.
  /// Intel root complexes return 64 B completions (cache-line granularity).
  std::uint32_t cpl_bytes = 0;
  /// Read tags of the requester (outstanding MRd at once; a tag is freed by the last CplD of
  /// its request, §2.2.6.2). 32 without Extended Tag, 256 with 8-bit tags, up to 768 with
  /// 10-bit tags (rev. 4.0). Default 256.
  std::uint32_t tags = 256;
  /// Received TLPs acknowledged by one Ack DLLP (Ack coalescing, §3.5.3.1). Default 4.
  std::uint32_t ack_every = 4;
  /// Released TLPs of one credit type per UpdateFC DLLP (§2.6.1.2). Default 4.
  std::uint32_t updatefc_every = 4;
  /// Credits advertised by the receiver (0 = infinite, no UpdateFC for that type). Posted and
  /// non-posted: the root port (D2H); completions: the endpoint (§2.6.1: Endpoints and Root
  /// Complexes advertise infinite completion credits). Data credits are 16 B.
  std::uint32_t ph_credits = 0;    ///< posted header credits (1 per MWr)
  std::uint32_t pd_credits = 0;    ///< posted data credits (ceil(payload / 16) per MWr)
  std::uint32_t nph_credits = 0;   ///< non-posted header credits (1 per MRd)
  std::uint32_t cplh_credits = 0;  ///< completion header credits (1 per CplD)
  std::uint32_t cpld_credits = 0;  ///< completion data credits (ceil(payload / 16) per CplD)
  /// Time a receiver holds a TLP's credits after receiving it before it schedules their
  /// release (UpdateFC), ps. Default 0.
  ps_t fc_release_ps = 0;

  /// Throws std::invalid_argument naming the field if a value is out of range.
  void validate() const;
};

/// Named presets: "gen{1..6}x{1,2,4,8,12,16,32}" (spec-ideal host: default link_params at
/// that generation and width) and "measured-host" (Gen3 x16) / "measured-host-gen{3,4,5,6}x{W}"
/// (MPS 256, RCB 64, 64 B completions, 256 tags, finite posted credits, root-complex latency;
/// calibrated against published bandwidthTest / nvbandwidth runs, docs/pcie.md).
/// Throws std::invalid_argument listing the accepted forms for an unknown name.
link_params preset(const std::string& name);

/// The measured-host calibration's rate-dependent values, for a link of `gen` (1..6) x `lanes`
/// (>= 1), as preset("measured-host-genGxW") sets them (docs/pcie.md "Measured-host preset"):
/// posted data credits (16 B each) = 192 x raw_rate_Bps(gen, lanes) / raw_rate_Bps(3, 16),
/// rounded, at least one UpdateFC batch of 256-B MWr (`updatefc_every` x 16); 192 is the
/// calibration to the 12.89 GB/s device-to-host writes of a Gen3 x16 P100 (bandwidthTest), the
/// scaling keeps the root port's buffer at the same credit-loop time. Throws as raw_rate_Bps.
std::uint32_t measured_host_pd_credits(int gen, int lanes, std::uint32_t updatefc_every);
/// Completion size of the measured host, bytes: 64 (cache-line completions of Intel root
/// complexes) up to Gen4, 128 from Gen5 (Sapphire Rapids / Genoa root complexes; calibration
/// to the 53-57 GB/s Gen5 x16 host-to-device figure, docs/pcie.md).
std::uint32_t measured_host_cpl_bytes(int gen);

/// Line rate of one direction after line encoding, B/s: GT/s x lanes x efficiency / 8.
/// Gen1 2.5 and Gen2 5 GT/s with 8b/10b; Gen3 8, Gen4 16, Gen5 32 GT/s with 128b/130b;
/// Gen6 64 GT/s PAM4 (Flit Mode: no line code; flit overhead is in tlp_rate_Bps).
/// Gen3 x16 = 15.7538e9 B/s. Throws std::invalid_argument for another generation or lanes < 1.
double raw_rate_Bps(int gen, int lanes);

/// Fraction of the line taken by SKP ordered sets: 8b/10b 4 symbols per 1180 symbol times
/// (the shortest interval of §4.2.7) = 4/1184; 128b/130b one SKP block per 370 blocks
/// = 1/371; Flit Mode: approximated with the 128b/130b figure.
double skp_fraction(int gen);

/// Rate at which TLP bytes (payload + per-TLP overhead) and DLLP bytes cross one direction,
/// B/s: raw_rate x (1 - skp_fraction), x 236/256 in Flit Mode (Gen6).
/// Gen3 x16: 15.7538e9 x 370/371 = 15.7113e9 B/s.
double tlp_rate_Bps(const link_params& p);

/// Bytes added to a memory request TLP (MWr, MRd): 4 framing + sequence (Gen1/2: STP, END,
/// 2 B sequence; Gen3-5: 4 B STP token) + 16 (4DW) or 12 (3DW) header + 4 LCRC (+ 4 ECRC):
/// 24 B by default. Flit Mode (Gen6): header (+ ECRC) only.
std::uint32_t tlp_overhead_bytes(const link_params& p);
/// Payload rate of a stream of full-size MWr TLPs in one direction, B/s: tlp_rate_Bps x MPS /
/// (MPS + tlp_overhead_bytes), DLLPs and credits left out (an upper bound of what the link
/// moves). Gen3 x16, MPS 256 B, 4DW header: 15.7113e9 x 256 / 280 = 14.364e9 B/s.
double mwr_payload_rate_Bps(const link_params& p);
/// Bytes added to a completion TLP (CplD): 3DW header always (§2.2.9): 20 B, Gen6 12 B.
std::uint32_t cpl_overhead_bytes(const link_params& p);
/// Bytes one DLLP (Ack, UpdateFC) takes on the wire: 6 B + 2 B framing = 8 B for Gen1-5;
/// 0 in Flit Mode (carried in the DLP bytes every flit has).
std::uint32_t dllp_wire_bytes(const link_params& p);

/// Payload of one CplD: cpl_bytes, or MPS when cpl_bytes is 0.
std::uint32_t completion_payload(const link_params& p);
/// Payload rate of a stream of full-size CplD TLPs in one direction (the read data of a DMA
/// read), B/s: tlp_rate_Bps x completion_payload / (completion_payload + cpl_overhead_bytes),
/// DLLPs, MRd and credits left out (an upper bound). Gen3 x16, 256-B completions: 15.7113e9 x
/// 256 / 276 = 14.573e9 B/s.
double cpld_payload_rate_Bps(const link_params& p);

/// TLPs of one transfer: count, data bytes carried, bytes on the wire (payload + overhead).
struct tlp_split {
  std::uint64_t tlps = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t wire_bytes = 0;
};

/// Calls f(addr, n) for each MWr of [addr, addr+len): n = min(remaining, MPS, bytes to the
/// next 4 KiB boundary) (§2.2.7). len 0: no call.
template <class F>
void for_each_mwr(std::uint64_t addr, std::uint64_t len, const link_params& p, F f);
/// Calls f(addr, n) for each MRd of [addr, addr+len): n = min(remaining, MRRS, bytes to the
/// next 4 KiB boundary). len 0: no call.
template <class F>
void for_each_mrd(std::uint64_t addr, std::uint64_t len, const link_params& p, F f);
/// Calls f(addr, n) for each CplD answering ONE read request [addr, addr+len): if the request
/// does not start on an RCB boundary, the first completion ends at the next RCB boundary (or
/// the request's end); the rest comes in pieces of min(remaining, completion_payload()),
/// which are RCB-aligned (a legal completer choice, §2.3.1.1).
template <class F>
void for_each_cpld(std::uint64_t addr, std::uint64_t len, const link_params& p, F f);
/// for_each_cpld's completions in runs of equal size: f(addr, n, count) for `count`
/// consecutive CplDs of n bytes from addr: at most three runs (the piece up to the RCB
/// boundary, the full pieces, the last shorter piece); same TLPs in the same order (test
/// PcieMath.CpldRunsAreTheSplittersTlps). LT's request-by-request read path uses it.
template <class F>
void for_each_cpld_run(std::uint64_t addr, std::uint64_t len, const link_params& p, F f);

/// The TLPs of for_each_mwr / for_each_mrd in runs of equal size: calls f(addr, n, count)
/// for `count` consecutive TLPs of n bytes each, the first at addr (the others follow
/// back to back), same TLPs in the same order. Within each 4 KiB page the pieces are
/// max-size (MPS / MRRS, which divide 4096) from the page's first byte of the range, then
/// one shorter piece: at most two runs per page (test PcieMath.RunsAreTheSplittersTlps).
template <class F>
void for_each_mwr_run(std::uint64_t addr, std::uint64_t len, const link_params& p, F f);
template <class F>
void for_each_mrd_run(std::uint64_t addr, std::uint64_t len, const link_params& p, F f);

/// Memory write TLPs for [addr, addr+len) (for_each_mwr). len 0 gives no TLP.
tlp_split mwr_split(std::uint64_t addr, std::uint64_t len, const link_params& p);
/// Memory read request TLPs (header only, payload_bytes = 0) for [addr, addr+len).
tlp_split mrd_split(std::uint64_t addr, std::uint64_t len, const link_params& p);
/// Completion-with-data TLPs returning [addr, addr+len): every request of mrd_split answered
/// with for_each_cpld. Overhead per TLP is cpl_overhead_bytes(). len 0 gives no TLP.
tlp_split cpld_split(std::uint64_t addr, std::uint64_t len, const link_params& p);

/// CplD TLPs answering ONE read request [addr, addr+len) (len <= MRRS, not crossing 4 KiB):
/// for_each_cpld's pieces counted in closed form. An unaligned start gives one piece up to
/// the next RCB boundary (completion_payload() is a multiple of the RCB, so that piece is
/// shorter than it), the rest is aligned and goes in pieces of completion_payload().
/// cpld_split() sums this over the requests of mrd_split().
inline std::uint64_t cpld_count(std::uint64_t addr, std::uint64_t len, std::uint64_t rcb,
                                std::uint64_t piece_max) {
  const std::uint64_t head =
      addr % rcb != 0 ? std::min(std::min(len, rcb - addr % rcb), piece_max) : 0;
  return (head != 0 ? 1 : 0) + (len - head + piece_max - 1) / piece_max;
}

/// Data credits (16 B each, §2.6.1) of a payload: ceil(bytes / 16).
inline std::uint64_t data_credits(std::uint64_t bytes) { return (bytes + 15) / 16; }

// ---- timing rules shared by LT and AT ------------------------------------------------------

/// Serialisation time of `bytes` (TLP or DLLP wire bytes) on one direction, ps
/// (= transfer_ps(bytes, tlp_rate_Bps(p)); the bandwidth_server of each direction runs at
/// tlp_rate_Bps so AT reservations and LT estimates are the same rule).
ps_t ser_ps(const link_params& p, std::uint64_t bytes);

/// DLLPs a receiver sends, one per `every` TLPs counted over the whole stream, when `tlps`
/// more are counted: floor((count + tlps) / every) - floor(count / every); advances `count`.
/// The rule of Acks (every = ack_every, all TLPs received in one direction) and of UpdateFC
/// (every = updatefc_every, TLPs of one credit type released, when that type's credits are
/// finite: with infinite credits no UpdateFC is ever needed). AT counts TLP by TLP, LT per
/// transaction with the same counters, so a stream of 1-MRd transactions costs one Ack per
/// ack_every MRd in LT as in AT (before session 17 LT rounded up per transaction: one Ack
/// per MRd, 4x AT's).
std::uint64_t dllps_due(std::uint64_t& count, std::uint64_t tlps, std::uint32_t every);

/// The credit loop of one TLP, ps: the transmitter spends the credits when the TLP starts,
/// and gets them back when the UpdateFC arrives: ser(tlp) + latency + fc_release +
/// ser(UpdateFC) + latency.
ps_t credit_loop_ps(const link_params& p, std::uint64_t tlp_wire_bytes);

/// Shortest time (ps) from the start of the first TLP to the start of the last one of a
/// stream of `tlps` TLPs needing `hdr_per_tlp` header and `data_per_tlp` data credits each,
/// when the receiver advertised `hdr_credits` / `data_credits` (0 = infinite): once the
/// window is spent, each further window waits one credit loop. The window is what is
/// released in whole UpdateFC batches: credits - (updatefc_every - 1) TLPs' worth.
/// 0 when credits never run out.
ps_t credit_paced_ps(const link_params& p, std::uint64_t tlps, std::uint64_t hdr_per_tlp,
                     std::uint64_t data_per_tlp, std::uint32_t hdr_credits,
                     std::uint32_t data_credits_adv, std::uint64_t tlp_wire_bytes);

/// Flow-control credits of one type (posted or non-posted) as the transmitter of one
/// direction sees them over the whole stream of TLPs, across transactions (the LT path's
/// rule; the AT path gets the same behaviour from its UpdateFC events). The receiver
/// advertised `hdr_credits` / `data_credits_adv` (0 = infinite); a TLP takes its credits when
/// its first byte starts; the receiver releases them in UpdateFC batches of updatefc_every
/// TLPs, which reach the transmitter one credit loop (credit_loop_ps of the batch's last TLP)
/// after that TLP started. So TLP i of a stream cannot start before the batch holding the
/// credits it needs has come back: a stream of 4 KiB writes on the measured-host preset
/// (192 data credits = 12 MWr of 256 B per 238 ns loop) runs at 12.9 GB/s, not at the 14.4 GB/s
/// of the link (credit_paced_ps applies the same loop within one transaction only).
class credit_stream {
public:
  credit_stream() = default;
  credit_stream(const link_params& p, std::uint32_t hdr_credits, std::uint32_t data_credits_adv);
  /// True when neither header nor data credits can run out (then ready(t) == t always).
  bool infinite() const { return hdr_inf_ && data_inf_; }
  /// Earliest time >= t at which a TLP needing `hdr` header and `data` data credits may start.
  ps_t ready(ps_t t, std::uint64_t hdr, std::uint64_t data);
  /// The TLP started at or after ready() and its last byte left at `end` (ends never
  /// decrease): takes its credits and schedules their return with its UpdateFC batch, at
  /// end + credit_loop_ps(p, 0) (= start + credit_loop_ps(p, wire bytes)).
  void take(ps_t end, std::uint64_t hdr, std::uint64_t data);
  /// `n` equal TLPs (`wire` bytes, `hdr` / `data` credits each), all ready at `at`, sent one
  /// after the other on the FIFO `srv`: exactly n times
  ///   t = ready(max(at, srv.busy_until()), hdr, data); end = srv.reserve(t, wire); take(end, hdr, data);
  /// with the service time `ser` = transfer_ps(wire, srv.rate()) computed once by the caller
  /// (test PcieCreditStream.SendIsTheTlpByTlpLoop). Returns the ends of the first and the
  /// last TLP (n >= 1).
  struct ends {
    ps_t first = 0, last = 0;
  };
  ends send(bandwidth_server& srv, ps_t at, std::uint64_t n, std::uint64_t wire, ps_t ser,
            std::uint64_t hdr, std::uint64_t data);
  /// Credits in the transmitter's hands now (for tests).
  std::uint64_t hdr_available() const { return hdr_avail_; }
  std::uint64_t data_available() const { return data_avail_; }

private:
  struct batch {
    ps_t at;
    std::uint64_t hdr, data;
  };
  void push(const batch& b) {
    if (count_ == ring_.size()) grow();
    ring_[(head_ + count_) & (ring_.size() - 1)] = b;
    ++count_;
  }
  void grow();
  /// UpdateFC batches in flight, in time order: a ring of power-of-two size, count_ of them
  /// from head_. Each carries credits still out, so when every TLP needs credits of a finite
  /// type (LT's MWr and MRd do) their number is bounded by the advertised credits.
  std::vector<batch> ring_;
  std::size_t head_ = 0, count_ = 0;
  std::uint64_t hdr_avail_ = 0, data_avail_ = 0;
  bool hdr_inf_ = true, data_inf_ = true;
  std::uint32_t every_ = 1;
  ps_t loop_fixed_ = 0;          ///< credit loop without the TLP's own serialisation
  std::uint64_t pend_tlps_ = 0, pend_hdr_ = 0, pend_data_ = 0;  ///< batch not yet released
};

/// Shortest time (ps) from the issue of the first MRd to the issue of the last one of
/// `requests` requests when `tags` may be outstanding and each takes `rtt_ps` from issue to
/// the arrival of its last completion: (requests - tags) x rtt / tags (0 if requests <= tags).
ps_t tag_paced_ps(std::uint64_t requests, std::uint32_t tags, ps_t rtt_ps);

/// The requester's read tags over the whole stream of MRd, across transactions (the LT path's
/// rule; the AT path frees a tag when the last CplD of its request arrives, §2.2.6.2). It
/// holds the release time of every tag that has been used (the arrival of the last
/// completion of the request that took it last); a tag never used is free from time 0.
/// A request takes the tag released earliest, so it cannot issue before that release: with
/// `tags` tags, requests after the first `tags` wait for the earliest release among the
/// requests still holding one. Requests are taken in call order (LT's order). Example: 32
/// tags, 3136 requests of 64 B each holding its tag about 10.3 us: the last issues about
/// 3136 / 32 x 10.3 us after the first, whether they come as one transaction or as 3136.
/// The releases are kept as runs: release_run(first, last, n) stands for n tags released
/// at times spread evenly from `first` to `last` (a read's requests, whose completions follow
/// each other), so recording a read costs O(1), not O(requests); runs are kept sorted by
/// their next release and taken from the earliest; a release inside a run's span splits the
/// run there (a run released over a span holding other runs' releases is taken whole first:
/// an approximation for reads whose completions overlap, which LT's FIFO link makes rare).
/// Cost: O(1) per call when the releases come in time order (the usual case), else release
/// moves the later runs up by one.
class tag_scoreboard {
public:
  explicit tag_scoreboard(std::uint32_t tags = 256) : unused_(tags), ring_(pow2_at_least(tags)) {}
  /// Tags free at time `t` (never used, or released at or before t), counting up to `want`.
  std::uint64_t free_at(ps_t t, std::uint64_t want) const {
    std::uint64_t n = unused_;
    for (std::size_t i = 0; n < want && i < count_; ++i) {
      const run& r = at(i);
      for (std::uint64_t j = r.taken; n < want && j < r.n; ++j) {
        if (time_of(r, j) > t) return n;
        ++n;
      }
    }
    return n;
  }
  /// If `want` tags are free at `t` (free_at(t, want) == want), takes them (as `want` take()
  /// calls, each returning a time <= t) and returns true; else changes nothing and returns
  /// false. The releases are sorted, so only the want-th earliest is compared.
  bool take_if_free(ps_t t, std::uint64_t want) {
    if (unused_ >= want) {
      unused_ -= want;
      return true;
    }
    std::uint64_t need = want - unused_;
    // Find the run holding the need-th earliest release.
    std::size_t i = 0;
    std::uint64_t left = need;
    for (; i < count_; ++i) {
      const run& r = at(i);
      const std::uint64_t avail = r.n - r.taken;
      if (left <= avail) break;
      left -= avail;
    }
    if (i == count_ || time_of(at(i), at(i).taken + left - 1) > t) return false;
    unused_ = 0;
    for (std::size_t k = 0; k < i; ++k) pop_front();
    at(0).taken += left;
    if (at(0).taken == at(0).n) pop_front();
    return true;
  }
  /// Takes the tag released earliest; returns its release time (0 for a tag never used).
  /// Each take() is followed by one release (in any order, before the next free_at()).
  ps_t take() {
    if (unused_ != 0) {
      --unused_;
      return 0;
    }
    run& r = at(0);
    const ps_t t = time_of(r, r.taken);
    if (++r.taken == r.n) pop_front();
    return t;
  }
  /// A taken tag is released at `t` (its request's last completion arrives at `t`).
  void release(ps_t t) { release_run(t, t, 1); }
  /// `n` taken tags are released at times spread evenly from `first` to `last` (>= first).
  void release_run(ps_t first, ps_t last, std::uint64_t n) {
    if (n == 0) return;
    // The run whose next release is the latest at or before `first` may go on releasing after
    // it: its later part is split off, so `first` is taken before it.
    std::size_t i = count_;
    while (i > 0 && next_of(at(i - 1)) > first) --i;
    if (i > 0 && at(i - 1).last > first) {
      run& r = at(i - 1);
      std::uint64_t j = r.taken + 1;  // next_of(r) <= first: the split is after r.taken
      while (time_of(r, j) <= first) ++j;
      const run later{time_of(r, j), r.last, r.n - j, 0};
      r.last = time_of(r, j - 1);
      r.n = j;
      insert(later);
    }
    insert(run{first, std::max(first, last), n, 0});
  }
  /// Tags used and not taken again since (for tests); tags - used() are unused.
  std::uint64_t used() const {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < count_; ++i) n += at(i).n - at(i).taken;
    return n;
  }

private:
  struct run {
    ps_t first, last;
    std::uint64_t n, taken;  ///< tags in the run, tags of it taken again
  };
  static std::size_t pow2_at_least(std::uint32_t n) {
    std::size_t s = 1;
    while (s < n) s <<= 1;
    return s;
  }
  /// Release time of the j-th tag of a run.
  static ps_t time_of(const run& r, std::uint64_t j) {
    if (r.n <= 1 || r.last == r.first) return r.first;
    return r.first + static_cast<ps_t>(static_cast<double>(r.last - r.first) * static_cast<double>(j) /
                                       static_cast<double>(r.n - 1) + 0.5);
  }
  run& at(std::size_t i) { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  const run& at(std::size_t i) const { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  /// Release time of the next tag of a run to be taken.
  static ps_t next_of(const run& r) { return time_of(r, r.taken); }
  /// Inserts `x` keeping the runs sorted by their next release (moves later ones up by one).
  void insert(const run& x) {
    const std::size_t mask = ring_.size() - 1;
    std::size_t i = count_;
    while (i > 0 && next_of(at(i - 1)) > x.first) {
      ring_[(head_ + i) & mask] = at(i - 1);
      --i;
    }
    ring_[(head_ + i) & mask] = x;
    ++count_;
  }
  void pop_front() {
    head_ = (head_ + 1) & (ring_.size() - 1);
    --count_;
  }
  std::uint64_t unused_;
  std::vector<run> ring_;  ///< runs of release times, sorted by next release, count_ from head_
  std::size_t head_ = 0, count_ = 0;
};

// ---- templates ------------------------------------------------------------------------------

namespace detail {
constexpr std::uint64_t boundary_4k = 4096;  // requests never cross 4 KiB (§2.2.7)
inline std::uint64_t to_next(std::uint64_t addr, std::uint64_t b) { return b - addr % b; }
inline std::uint64_t min3(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return a < b ? (a < c ? a : c) : (b < c ? b : c);
}
}  // namespace detail

template <class F>
void for_each_mwr(std::uint64_t addr, std::uint64_t len, const link_params& p, F f) {
  while (len > 0) {
    const std::uint64_t n = detail::min3(len, p.mps, detail::to_next(addr, detail::boundary_4k));
    f(addr, n);
    addr += n;
    len -= n;
  }
}

template <class F>
void for_each_mrd(std::uint64_t addr, std::uint64_t len, const link_params& p, F f) {
  while (len > 0) {
    const std::uint64_t n = detail::min3(len, p.mrrs, detail::to_next(addr, detail::boundary_4k));
    f(addr, n);
    addr += n;
    len -= n;
  }
}

namespace detail {
/// `max` (MPS or MRRS) is a power of two (link_params::validate).
template <class F>
void for_each_run(std::uint64_t addr, std::uint64_t len, std::uint64_t max, F& f) {
  const int shift = __builtin_ctzll(max);
  while (len > 0) {
    const std::uint64_t page = std::min(len, to_next(addr, boundary_4k));
    const std::uint64_t k = page >> shift, rest = page & (max - 1);
    if (k > 0) f(addr, max, k);
    if (rest > 0) f(addr + k * max, rest, std::uint64_t{1});
    addr += page;
    len -= page;
  }
}
}  // namespace detail

template <class F>
void for_each_mwr_run(std::uint64_t addr, std::uint64_t len, const link_params& p, F f) {
  detail::for_each_run(addr, len, p.mps, f);
}

template <class F>
void for_each_mrd_run(std::uint64_t addr, std::uint64_t len, const link_params& p, F f) {
  detail::for_each_run(addr, len, p.mrrs, f);
}

template <class F>
void for_each_cpld(std::uint64_t addr, std::uint64_t len, const link_params& p, F f) {
  const std::uint64_t piece_max = completion_payload(p);
  while (len > 0) {
    const std::uint64_t piece =
        (addr % p.rcb != 0) ? detail::min3(len, detail::to_next(addr, p.rcb), piece_max)
                            : (len < piece_max ? len : piece_max);
    f(addr, piece);
    addr += piece;
    len -= piece;
  }
}

template <class F>
void for_each_cpld_run(std::uint64_t addr, std::uint64_t len, const link_params& p, F f) {
  if (len == 0) return;
  const std::uint64_t piece_max = completion_payload(p);  // a multiple of the RCB
  // The head up to the next RCB boundary is shorter than an RCB, so shorter than piece_max:
  // for_each_cpld's min3 reduces to min(len, to_next).
  const std::uint64_t head = addr % p.rcb != 0 ? (len < detail::to_next(addr, p.rcb) ? len
                                                                                  : detail::to_next(addr, p.rcb))
                                               : 0;
  const std::uint64_t full = (len - head) / piece_max, tail = (len - head) % piece_max;
  if (head != 0) f(addr, head, std::uint64_t{1});
  if (full != 0) f(addr + head, piece_max, full);
  if (tail != 0) f(addr + head + full * piece_max, tail, std::uint64_t{1});
}

// credit_stream: inline. ready()/take() state the per-TLP rule (tests check it by hand);
// LT sends through send(), the same rule for a run of equal TLPs
// (test PcieCreditStream.SendIsTheTlpByTlpLoop keeps the two equal).
inline ps_t credit_stream::ready(ps_t t, std::uint64_t hdr, std::uint64_t data) {
  while ((!hdr_inf_ && hdr_avail_ < hdr) || (!data_inf_ && data_avail_ < data)) {
    if (count_ == 0) break;  // nothing in flight (link_params::validate prevents it)
    const batch& b = ring_[head_];
    head_ = (head_ + 1) & (ring_.size() - 1);
    --count_;
    t = std::max(t, b.at);
    hdr_avail_ += b.hdr;
    data_avail_ += b.data;
  }
  return t;
}

inline void credit_stream::take(ps_t end, std::uint64_t hdr, std::uint64_t data) {
  if (infinite()) return;
  hdr_avail_ -= hdr_inf_ ? 0 : std::min(hdr, hdr_avail_);
  data_avail_ -= data_inf_ ? 0 : std::min(data, data_avail_);
  pend_hdr_ += hdr_inf_ ? 0 : hdr;
  pend_data_ += data_inf_ ? 0 : data;
  if (++pend_tlps_ < every_) return;
  push({end + loop_fixed_, pend_hdr_, pend_data_});
  pend_tlps_ = pend_hdr_ = pend_data_ = 0;
}

// Inlined at each call (LT runs it once per run of equal TLPs: ~1 M times a step).
[[gnu::always_inline]] inline credit_stream::ends credit_stream::send(bandwidth_server& srv, ps_t at, std::uint64_t n,
                                               std::uint64_t wire, ps_t ser, std::uint64_t hdr,
                                               std::uint64_t data) {
  // ready() and take() of each TLP with the infinite-type tests hoisted (an infinite type
  // needs 0 credits: its available count stays 0 and its batches carry 0) and the state in
  // locals, written back at the end (and around grow()). The server's state too: each
  // reservation starts at t >= busy (t = max(at, busy, returned batches)), so it ends at
  // t + ser; the n reservations are made on `srv` after the loop with the same effect.
  ends e;
  if (n == 0) return e;
  const std::uint64_t h = hdr_inf_ ? 0 : hdr, d = data_inf_ ? 0 : data;
  const bool inf = infinite();
  std::uint64_t ha = hdr_avail_, da = data_avail_;
  std::uint64_t pt = pend_tlps_, ph = pend_hdr_, pd = pend_data_;
  std::size_t head = head_, cnt = count_, cap = ring_.size(), mask = cap - 1;
  batch* ring = ring_.data();
  const std::uint32_t every = every_;
  const ps_t loop_fixed = loop_fixed_;
  ps_t busy = srv.busy_until();
  for (std::uint64_t i = 0; i < n; ++i) {
    ps_t t = std::max(at, busy);
    while ((ha < h || da < d) && cnt != 0) {  // ready(): the oldest batches come back first
      const batch& b = ring[head];
      head = (head + 1) & mask;
      --cnt;
      t = std::max(t, b.at);
      ha += b.hdr;
      da += b.data;
    }
    busy = t + ser;  // srv.reserve(t, wire, ser)
    if (i == 0) e.first = busy;
    if (inf) continue;
    ha -= std::min(h, ha);  // take()
    da -= std::min(d, da);
    ph += h;
    pd += d;
    if (++pt < every) continue;
    if (cnt == cap) {
      head_ = head;
      count_ = cnt;
      grow();
      head = head_;
      cap = ring_.size();
      mask = cap - 1;
      ring = ring_.data();
    }
    ring[(head + cnt) & mask] = batch{busy + loop_fixed, ph, pd};
    ++cnt;
    pt = ph = pd = 0;
  }
  e.last = busy;
  // The n reservations: the first ends n - 1 services before `busy` (it starts at or after
  // the server's previous end, as busy >= that end + n x ser), the others follow back to back.
  srv.reserve(busy - n * ser, wire, ser);
  for (std::uint64_t i = 1; i < n; ++i) srv.reserve(0, wire, ser);
  hdr_avail_ = ha;
  data_avail_ = da;
  pend_tlps_ = pt;
  pend_hdr_ = ph;
  pend_data_ = pd;
  head_ = head;
  count_ = cnt;
  return e;
}

}  // namespace cdma::pcie
