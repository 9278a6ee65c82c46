// GoogleTest entry point for every test executable. SystemC needs no sc_main here: the
// kernel creates its context lazily, and tests/support/sc_fixture.h gives each test a fresh
// one. The copyright banner is disabled before SystemC is touched, so test discovery
// (--gtest_list_tests) output stays clean.
#include <cstdlib>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// libsystemc.so's own main() refers to sc_main; the tests never go through it.
extern "C" int sc_main(int, char**) { return 0; }
