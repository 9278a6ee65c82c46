// GoogleTest entry point for every test executable. SystemC needs no sc_main here: the
// kernel creates its context lazily, and tests/support/sc_fixture.h gives each test a fresh
// one. The copyright banner is disabled before SystemC is touched, so test discovery
// (--gtest_list_tests) output stays clean.
//
// Temporary files: every test process gets a directory of its own,
// $TEST_TMPDIR/cdma-test-XXXXXX (TEST_TMPDIR unset: /tmp), which ::testing::TempDir() then
// returns (GoogleTest reads TEST_TMPDIR at each call), with the mode of /tmp (1777), and which
// is removed with everything in
// it when the tests return. Without it each `make test` left ~1,100 files (the CLI tests'
// captured stdout / stderr, configs, reports) in /tmp. A process that crashes leaves its
// directory behind, for inspection.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  std::string tmpl = ::testing::TempDir() + "cdma-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  std::string dir;
  if (mkdtemp(buf.data()) != nullptr) {
    dir = buf.data();
    // The mode of /tmp (mkdtemp makes it 0700): tests run some commands as another user.
    std::error_code ec;
    std::filesystem::permissions(dir, std::filesystem::perms::all | std::filesystem::perms::sticky_bit, ec);
    setenv("TEST_TMPDIR", dir.c_str(), 1);
  }  // else: the tests write into TempDir() itself, as before
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return rc;
}

// libsystemc.so's own main() refers to sc_main; the tests never go through it.
extern "C" int sc_main(int, char**) { return 0; }
