// A GoogleTest fixture that gives each test a fresh SystemC simulation context, so
// modules can be elaborated and sc_start() called again in the next test of the same
// process (as DRAMSys' tests do). ctest already runs each test in its own process; this
// keeps the executables usable when run directly.
#pragma once
#include <gtest/gtest.h>
#include <systemc>

namespace cdma::test {

inline void reset_systemc_context() {
  // The old context is leaked on purpose: deleting it would run destructors of modules
  // the test still owns. One context per test is small.
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
}

class sc_fixture : public ::testing::Test {
protected:
  sc_fixture() { reset_systemc_context(); }
};

}  // namespace cdma::test
