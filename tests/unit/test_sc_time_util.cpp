// tlm/core/sc_time_util.h: the fast conversions (inline time stamp, sc_time built by the
// inline operator*= on a one-picosecond sc_time below 2^52 ticks) must give exactly what
// the SystemC library gives: to_sc(t) == sc_time::from_value(t x ticks per ps), now_ps(d) ==
// value of sc_time_stamp() + d (at 1 ps resolution), sc_now() is sc_time_stamp(). Checked on
// many random values, on the 2^52 boundary of the multiply path (odd values just above it
// would round there: the path must switch to from_value), at 1 ps and at 1 fs resolution, and
// before the simulation runs (the double path).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <systemc>

#include "tests/support/sc_fixture.h"
#include "tlm/core/sc_time_util.h"

using namespace cdma;

namespace {

std::vector<ps_t> sample_values(std::uint64_t limit) {
  std::vector<ps_t> v = {0, 1, 2, 3, 999, 1000, 1001, 123456789};
  const std::uint64_t b = std::uint64_t{1} << 52;
  for (std::uint64_t c : {b, b / 1000, b / 1000 + 1, b / 1000 - 1, (b - 1) / 1000,
                          (b - 1) / 1000 + 1})
    for (std::int64_t d = -3; d <= 3; ++d) v.push_back(c + static_cast<std::uint64_t>(d));
  v.push_back((std::uint64_t{1} << 53) + 1);
  v.push_back((std::uint64_t{1} << 60) + 12345);
  std::mt19937_64 rng(12);
  for (int i = 0; i < 20000; ++i) {
    const unsigned bits = 1 + static_cast<unsigned>(rng() % 63);
    v.push_back(rng() >> (64 - bits));
  }
  std::vector<ps_t> out;
  for (ps_t t : v)
    if (t <= limit) out.push_back(t);
  return out;
}

struct checker : sc_core::sc_module {
  std::uint64_t k;  // ticks per ps
  std::vector<std::string> errors;
  unsigned checked = 0;
  checker(sc_core::sc_module_name n, std::uint64_t ticks) : sc_module(n), k(ticks) {
    SC_HAS_PROCESS(checker);
    SC_THREAD(run);
  }
  void fail(const std::string& what) {
    if (errors.size() < 20) errors.push_back(what);
  }
  void run() {
    wait(sc_core::sc_time::from_value(7777777));  // a time stamp that is not zero
    for (ps_t t : sample_values(~std::uint64_t{0} / k)) {
      const sc_core::sc_time a = to_sc(t), b = sc_core::sc_time::from_value(t * k);
      if (a != b)
        fail("to_sc(" + std::to_string(t) + ") = " + std::to_string(a.value()) + " ticks, expected " +
             std::to_string(b.value()));
      if (to_ps(b) != t) fail("to_ps(from_value(" + std::to_string(t) + " x k)) != t");
      ++checked;
    }
    std::mt19937_64 rng(5);
    for (int i = 0; i < 2000; ++i) {
      const sc_core::sc_time off = sc_core::sc_time::from_value((rng() >> 24) * k);
      const ps_t expect = to_ps(sc_core::sc_time_stamp() + off);
      if (k == 1 && expect != (sc_core::sc_time_stamp() + off).value()) fail("to_ps at 1 ps");
      if (now_ps(off) != expect) fail("now_ps(" + std::to_string(off.value()) + " ticks)");
      if (&sc_now() != &sc_core::sc_time_stamp()) fail("sc_now() is not sc_time_stamp()");
      wait(sc_core::sc_time::from_value((1 + rng() % 1000) * k));
    }
  }
};

class ScTimeUtil : public cdma::test::sc_fixture {};

}  // namespace

TEST_F(ScTimeUtil, ConversionsEqualTheLibraryAtOnePicosecond) {
  // Not running yet: the exact double path.
  EXPECT_EQ(to_sc(5), sc_core::sc_time(5.0, sc_core::SC_PS));
  EXPECT_EQ(to_sc(123456789), sc_core::sc_time(123456789.0, sc_core::SC_PS));
  checker c("c", 1);
  sc_core::sc_start();
  for (const std::string& e : c.errors) ADD_FAILURE() << e;
  EXPECT_GT(c.checked, 19000u);
}

TEST_F(ScTimeUtil, ConversionsEqualTheLibraryAtOneFemtosecond) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  checker c("c", 1000);
  sc_core::sc_start();
  for (const std::string& e : c.errors) ADD_FAILURE() << e;
  EXPECT_GT(c.checked, 10000u);
}
