// dma_pipeline's window slots (the LT engine's rule, the AT engine's count): at most
// max_outstanding windows between read issue and write completion; a slot frees when any
// window in flight is written, so writes completing out of window order (one window's GPU
// DRAM write waiting for a refresh) do not hold up the windows behind it.
#include <gtest/gtest.h>

#include "tlm/cdma/dma_pipeline.h"

using namespace cdma;

TEST(DmaPipeline, ASlotFreesAtTheFirstWriteToCompleteNotTheOldestWindow) {
  // max_outstanding = 2, no units or link (units 1 at rate 0: unit() is not used here).
  dma_pipeline p(1, 0.0, 0, 2);
  p.start(100);
  // Windows 0 and 1 issue at once (two slots); window 0's write waits for a refresh and ends
  // at 1000, window 1's at 400.
  EXPECT_EQ(p.next_issue(), 100u);
  p.complete(1000);
  EXPECT_EQ(p.next_issue(), 100u);
  p.complete(400);
  // Window 2: both slots taken until window 1 is written at 400 (the AT engine issues the
  // read when a window retires; before session 17 LT waited for window 0, 1000).
  EXPECT_EQ(p.next_issue(), 400u);
  p.complete(900);
  // Window 3: in flight 0 (1000) and 2 (900): the first of them at 900.
  EXPECT_EQ(p.next_issue(), 900u);
  p.complete(1200);
  // Window 4: in flight 0 (1000) and 3 (1200): 1000.
  EXPECT_EQ(p.next_issue(), 1000u);
  EXPECT_EQ(p.last_done(), 1200u);
}

TEST(DmaPipeline, InOrderCompletionsKeepTheWindowMaxOutstandingEarlier) {
  // Writes complete in window order: window k issues when window k - 3 is written.
  dma_pipeline p(1, 0.0, 0, 3);
  p.start(0);
  const ps_t done[] = {50, 60, 70, 80, 90, 100};
  const ps_t issue[] = {0, 0, 0, 50, 60, 70};
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(p.next_issue(), issue[k]) << "window " << k;
    p.complete(done[k]);
  }
  // One slot: every window waits for the previous one's write; issue never goes back.
  dma_pipeline q(1, 0.0, 0, 1);
  q.start(10);
  EXPECT_EQ(q.next_issue(), 10u);
  q.complete(30);
  EXPECT_EQ(q.next_issue(), 30u);
  q.complete(25);  // (cannot happen with one slot; the issue time stays monotone)
  EXPECT_EQ(q.next_issue(), 30u);
}
