// calendar_server (tlm/core/bandwidth_server.h): the data bus of memory_target when LT calls
// arrive out of time order. Expectations by hand (25.6 GB/s: 4096 B = 160 ns) and against
// bandwidth_server (calls in time order) and a brute-force earliest-fit scan (any order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "tlm/core/bandwidth_server.h"

using cdma::bandwidth_server;
using cdma::calendar_server;
using cdma::ps_t;

TEST(CalendarServer, AnEarlierArrivalCalledLaterStartsAtItsArrival) {
  // The new-user repro (session 16): a 4 KiB read arriving at 1 us is called first, one
  // arriving at 0 second. FIFO: 1160 ns and 1320 ns; earliest fit: 1160 ns and 160 ns.
  calendar_server cal(25.6e9);
  bandwidth_server fifo(25.6e9);
  EXPECT_EQ(cal.reserve(1000000, 4096), 1160000u);
  EXPECT_EQ(fifo.reserve(1000000, 4096), 1160000u);
  EXPECT_EQ(cal.reserve(0, 4096), 160000u);
  EXPECT_EQ(fifo.reserve(0, 4096), 1320000u);
  // A request that does not fit in the gap before [1000, 1160) ns goes after it: ready 900 ns,
  // 160 ns -> would end at 1060 > 1000: starts at 1160, ends at 1320.
  EXPECT_EQ(cal.reserve(900000, 4096), 1320000u);
  // One that fits exactly: [160, 1000) ns is free; ready 840 ns -> [840, 1000), merged with
  // [1000, 1320): two intervals left ([0, 160) and [840, 1320)).
  EXPECT_EQ(cal.reserve(840000, 4096), 1000000u);
  EXPECT_EQ(cal.intervals(), 2u);
  EXPECT_EQ(cal.busy_until(), 1320000u);
  EXPECT_EQ(cal.busy_ps(), 4u * 160000u);
  EXPECT_EQ(cal.bytes(), 4u * 4096u);
  EXPECT_EQ(cal.requests(), 4u);
  // A zero-length request arriving inside a busy stretch waits for its end (as in
  // bandwidth_server); in a gap it is served at once.
  EXPECT_EQ(cal.reserve(900000, 0), 1320000u);
  EXPECT_EQ(cal.reserve(500000, 0), 500000u);
}

TEST(CalendarServer, InTimeOrderItIsTheFifoServerToThePicosecond) {
  std::mt19937_64 rng(7);
  calendar_server cal(12.5e9);
  bandwidth_server fifo(12.5e9);
  ps_t ready = 0;
  for (int k = 0; k < 200000; ++k) {
    ready += rng() % 3 == 0 ? 0 : rng() % 400000;  // bursts of equal times, idle gaps
    const std::uint64_t bytes = rng() % 5 == 0 ? 0 : rng() % 8192;
    ASSERT_EQ(cal.reserve(ready, bytes), fifo.reserve(ready, bytes)) << k;
    ASSERT_EQ(cal.busy_until(), fifo.busy_until()) << k;
    if (k % 1000 == 0) cal.forget_before(ready);
  }
  EXPECT_EQ(cal.busy_ps(), fifo.busy_ps());
}

TEST(CalendarServer, AnyOrderGivesTheEarliestFreeIntervalWithoutOverlap) {
  // Reference: the booked intervals as a sorted list, scanned for the earliest fit.
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    calendar_server cal(0);
    std::vector<std::pair<ps_t, ps_t>> ref;
    for (int k = 0; k < 1500; ++k) {
      const ps_t ready = rng() % 2000000;
      const ps_t service = 1 + rng() % 3000;
      ps_t start = ready;
      for (const auto& [s, e] : ref)  // sorted by start
        if (start + service <= s) break;
        else start = std::max(start, e);
      ref.emplace_back(start, start + service);
      std::sort(ref.begin(), ref.end());
      ASSERT_EQ(cal.reserve(ready, 1, service), start + service) << trial << " " << k;
    }
    for (std::size_t i = 1; i < ref.size(); ++i) ASSERT_LE(ref[i - 1].second, ref[i].first);
  }
}

TEST(CalendarServer, ForgetAndFoldBoundTheIntervalsKept) {
  calendar_server cal(0);
  // Separated intervals (1 ns every 10 ns): one entry each.
  for (ps_t k = 0; k < 1000; ++k) cal.reserve(k * 10000, 1, 1000);
  EXPECT_EQ(cal.intervals(), 1000u);
  cal.forget_before(5000000);  // the first 500 end by 4991 ns
  EXPECT_EQ(cal.intervals(), 500u);
  // Beyond kMaxIntervals the oldest half is folded into a floor.
  for (ps_t k = 1000; k < 1000 + calendar_server::kMaxIntervals; ++k) cal.reserve(k * 10000, 1, 1000);
  EXPECT_LE(cal.intervals(), calendar_server::kMaxIntervals);
  EXPECT_GT(cal.intervals(), calendar_server::kMaxIntervals / 2 - 1);
  // A request ready long before the floor starts at the floor or later (the FIFO rule there).
  const ps_t done = cal.reserve(0, 1, 1000);
  EXPECT_GT(done, 5000000u);
}

// gap_server (tlm/core/bandwidth_server.h): the LT GPU DRAM servers (session 19; session 25:
// a reservation's service is split over the earliest free gaps at or after `ready`, the rest
// after the latest reservation; up to kGaps gaps, the earliest kept). Services in ps.
TEST(GapServer, AnEarlierArrivalCalledLaterFillsTheGapsBeforeALaterReservation) {
  // The calendar case above with 160 000-ps services.
  cdma::gap_server g;
  EXPECT_EQ(g.reserve(1000000, 160000), 1160000u);  // leaves the gap [0, 1 000 000)
  EXPECT_EQ(g.reserve(0, 160000), 160000u);         // FIFO: 1 320 000
  // 100 000 in [900 000, 1 000 000), the other 60 000 after the latest end 1 160 000
  // (calendar_server, whole: 1 320 000).
  EXPECT_EQ(g.reserve(900000, 160000), 1220000u);
  // Left: [160 000, 900 000). 60 000 in [840 000, 900 000), 100 000 after 1 220 000.
  EXPECT_EQ(g.reserve(840000, 160000), 1320000u);
  EXPECT_EQ(g.busy_until(), 1320000u);
  EXPECT_EQ(g.gaps(), 1u);  // [160 000, 840 000)
  EXPECT_EQ(g.reserve(0, 680000), 840000u);  // exactly that gap
  EXPECT_EQ(g.gaps(), 0u);
}

TEST(GapServer, AReservationIsSplitOverTheEarliestGapsAfterItsReadyTime) {
  // 10-ps reservations at 100 and 200 leave the gaps [0, 100) and [110, 200).
  cdma::gap_server g;
  EXPECT_EQ(g.reserve(100, 10), 110u);
  EXPECT_EQ(g.reserve(200, 10), 210u);
  EXPECT_EQ(g.gaps(), 2u);
  // 100 ready at 50: [50, 100) and [110, 160); [0, 50) and [160, 200) stay free.
  EXPECT_EQ(g.reserve(50, 100), 160u);
  EXPECT_EQ(g.gaps(), 2u);
  // 100 ready at 0: [0, 50), [160, 200), the last 10 after the latest end: [210, 220).
  EXPECT_EQ(g.reserve(0, 100), 220u);
  EXPECT_EQ(g.gaps(), 0u);
  EXPECT_EQ(g.busy_until(), 220u);
  // A reservation inside one gap splits it in two: [220, 400) left by one at 400, then 20 at
  // 330 leaves [220, 330) and [350, 400); 60 ready at 310 takes [310, 330) and [350, 390).
  EXPECT_EQ(g.reserve(400, 10), 410u);
  EXPECT_EQ(g.reserve(330, 20), 350u);
  EXPECT_EQ(g.gaps(), 2u);  // the gap [220, 400) split in two: [220, 330), [350, 400)
  EXPECT_EQ(g.reserve(310, 60), 390u);
  // Left: [220, 310) and [390, 400). 100 ready at 0: 90 + 10, ending at the gap's end.
  EXPECT_EQ(g.reserve(0, 100), 400u);
  EXPECT_EQ(g.gaps(), 0u);
}

TEST(GapServer, AGapShorterThanTheShortestServiceIsNotKept) {
  cdma::gap_server g;
  EXPECT_EQ(g.reserve(100, 10), 110u);  // the gap [0, 100)
  // 10 at 5: [5, 15); the left part [0, 5) is shorter than 10 ps and dropped, [15, 100) kept.
  EXPECT_EQ(g.reserve(5, 10), 15u);
  EXPECT_EQ(g.gaps(), 1u);
  // 10 ready at 0: [15, 25) (exact free-time fill: [0, 5) and [15, 20), ending at 20).
  EXPECT_EQ(g.reserve(0, 10), 25u);
  // The in-order gap [110, 115) is shorter than 10 ps: not kept, a 3-ps reservation ready at
  // 111 queues after the latest end.
  EXPECT_EQ(g.reserve(115, 10), 125u);
  EXPECT_EQ(g.reserve(111, 3), 128u);
  EXPECT_EQ(g.gaps(), 1u);  // [25, 100)
}

TEST(GapServer, KeepsTheEarliestGapsAndDropsThoseEndingBeforeTheHorizon) {
  // Seventy 10-ps reservations at 100, 200, ..., 7000 leave seventy gaps [0, 100), [110, 200),
  // ..., [6910, 7000); the 64 earliest are kept (up to [6310, 6400)).
  static_assert(cdma::gap_server::kGaps == 64);
  cdma::gap_server g;
  for (ps_t k = 1; k <= 70; ++k) EXPECT_EQ(g.reserve(100 * k, 10), 100 * k + 10);
  EXPECT_EQ(g.gaps(), 64u);
  EXPECT_EQ(g.reserve(0, 10), 10u);  // in [0, 100), as calendar_server
  // In the latest kept gap [6310, 6400): its right part [6360, 6400) would be the 65th gap and
  // the latest: not kept ([6310, 6350) is).
  EXPECT_EQ(g.reserve(6350, 10), 6360u);
  EXPECT_EQ(g.gaps(), 64u);
  EXPECT_EQ(g.reserve(6370, 10), 7020u);  // [6360, 6400) was dropped: after the end 7010
  EXPECT_EQ(g.reserve(6450, 10), 7030u);  // [6410, 6500) was never kept
  // The promise that no later reservation is ready before 1000 lets the gaps ending by then
  // make room: [10, 100), [110, 200), ..., [910, 1000) (ten) are dropped for the new gap
  // [7030, 8000): 64 - 10 + 1 = 55 kept.
  g.forget_before(1000);
  EXPECT_EQ(g.reserve(8000, 10), 8010u);
  EXPECT_EQ(g.gaps(), 55u);
  EXPECT_EQ(g.reserve(7500, 10), 7510u);   // the new gap was kept
  EXPECT_EQ(g.reserve(1000, 100), 1120u);  // 90 in [1010, 1100), 10 in [1110, 1120)
}

// Below kGaps gaps and with a 1-ps reservation first (every gap kept), the ends are those of
// a brute-force fill of the free picoseconds at or after `ready`, in any call order.
TEST(GapServer, MatchesAPicosecondByPicosecondFillInAnyOrder) {
  for (unsigned seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    cdma::gap_server g;
    std::vector<char> busy(5000, 0);
    ps_t end = 1;
    busy[0] = 1;
    ASSERT_EQ(g.reserve(0, 1), 1u);
    for (int k = 0; k < 40; ++k) {  // at most 41 gaps
      const ps_t ready = rng() % 3000, svc = rng() % 5 == 0 ? 0 : 1 + rng() % 60;
      ps_t e = ready;
      if (svc == 0) {
        while (e < end && busy[e]) ++e;
      } else {
        for (ps_t t = ready, rest = svc; rest != 0; ++t)
          if (!busy[t]) {
            busy[t] = 1;
            --rest;
            e = t + 1;
          }
        end = std::max(end, e);
      }
      ASSERT_EQ(g.reserve(ready, svc), e) << "seed " << seed << " call " << k;
    }
  }
}

// 200 000 random reservations in non-decreasing ready order (bursts of equal times, idle
// gaps), one in `zero_every` of service 0 (0: none): gap_server's ends are the FIFO server's.
namespace {
void expect_fifo_in_time_order(unsigned seed, unsigned zero_every) {
  std::mt19937_64 rng(seed);
  cdma::gap_server g;
  bandwidth_server fifo(0.0);
  ps_t ready = 0;
  for (int k = 0; k < 200000; ++k) {
    ready += rng() % 3 == 0 ? 0 : rng() % 4000;
    const ps_t service = zero_every != 0 && rng() % zero_every == 0 ? 0 : 1 + rng() % 3000;
    ASSERT_EQ(g.reserve(ready, service), fifo.reserve(ready, 0, service)) << k;
    ASSERT_EQ(g.busy_until(), fifo.busy_until()) << k;
  }
}
}  // namespace

TEST(GapServer, InTimeOrderItIsTheFifoServerToThePicosecond) { expect_fifo_in_time_order(11, 0); }

// Breaker s19: a zero-length reservation ready inside a busy stretch waits for its end, as
// with bandwidth_server (gap_server returned `ready` through an empty gap slot: reserve(0, 0)
// after reserve(0, 100) gave 0, the FIFO server 100); it may land strictly inside a kept gap
// and occupies nothing there. Hand values.
TEST(GapServer, AZeroLengthReservationWaitsBehindTheBusyStretchItArrivesIn) {
  cdma::gap_server g;
  EXPECT_EQ(g.reserve(0, 100), 100u);
  EXPECT_EQ(g.reserve(0, 0), 100u);    // busy [0, 100): at its end
  EXPECT_EQ(g.reserve(50, 0), 100u);
  EXPECT_EQ(g.reserve(1000, 10), 1010u);  // leaves the gap [100, 1000)
  EXPECT_EQ(g.reserve(500, 0), 500u);     // strictly inside the gap
  EXPECT_EQ(g.reserve(1000, 0), 1010u);   // at the gap's end the server is busy: after it
  EXPECT_EQ(g.reserve(100, 900), 1000u);  // the whole gap is still free: fits exactly
  EXPECT_EQ(g.busy_until(), 1010u);
}

TEST(GapServer, InTimeOrderWithZeroLengthReservationsItIsTheFifoServer) { expect_fifo_in_time_order(12, 4); }
