// Helpers of the tests that run the cdma-vp command line (tests/system): run it through bash,
// read a file back, list a directory. One copy for every such test file (they each had their
// own). CDMA_VP_EXE is the cdma-vp binary (tests/CMakeLists.txt).
#pragma once
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace cdma::test {

/// The whole content of file `path` (bytes as they are; "" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// The names in directory `dir` (without . and ..), sorted; empty when it cannot be read.
inline std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Runs `cdma-vp args` through bash (so `args` may hold bash quoting such as $'\e' and
/// redirections); `prefix` runs first in the same shell (e.g. "trap '' XFSZ; ulimit -f 0;").
/// Standard output and error are captured in files of ::testing::TempDir() and returned in
/// *out / *err when given. Returns the exit status (-1 when it did not exit normally).
/// `timeout_s` > 0: cdma-vp is sent SIGTERM after that many seconds (timeout(1)), so a hang
/// fails the test (exit status 124) instead of blocking it.
inline int cli(const std::string& args, std::string* out = nullptr, std::string* err = nullptr,
               const std::string& prefix = "", int timeout_s = 0) {
  const std::string base = std::string(::testing::TempDir()) + "cli_" + std::to_string(::getpid());
  const std::string o = base + "_stdout", e = base + "_stderr";
  const std::string limit = timeout_s > 0 ? "timeout " + std::to_string(timeout_s) + " " : "";
  const std::string script = prefix + " exec " + limit + std::string(CDMA_VP_EXE) + " " + args;
  const std::string cmd = "bash -c \"" + script + "\" >" + o + " 2>" + e;
  const int rc = std::system(cmd.c_str());
  if (out) *out = slurp(o);
  if (err) *err = slurp(e);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace cdma::test
