// Benchmarks of `cdma-vp bench NAME`. Each lives in platform/bench_<name>.cpp, linked into
// the executable, and registers itself with a static `bench_registrar`. Benchmarks print
// figures measured side by side in one run (ratios), never pass/fail on wall time.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace cdma::platform {

struct bench {
  std::string name;
  std::string summary;
  std::function<int(const std::vector<std::string>& args)> run;  ///< args after the bench name
};

std::vector<bench>& benches();

struct bench_registrar {
  explicit bench_registrar(bench b) { benches().push_back(std::move(b)); }
};

}  // namespace cdma::platform
