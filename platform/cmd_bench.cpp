// cdma-vp bench NAME [options]: runs one of the registered benchmarks (platform/bench_*.cpp).
#include <iostream>
#include "platform/bench.h"
#include "platform/command.h"

namespace cdma::platform {

std::vector<bench>& benches() {
  static std::vector<bench> all;
  return all;
}

namespace {

int bench_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << "Usage: cdma-vp bench NAME [options]\n\nBenchmarks:\n";
    for (const auto& b : benches()) std::cout << "  " << b.name << "  " << b.summary << "\n";
    return args.empty() ? 2 : 0;
  }
  for (const auto& b : benches())
    if (b.name == args[0]) return b.run(std::vector<std::string>(args.begin() + 1, args.end()));
  std::string known;
  for (const auto& b : benches()) known += (known.empty() ? "" : ", ") + b.name;
  return usage_error("unknown benchmark '" + args[0] + "'; expected one of: " +
                     (known.empty() ? std::string("(none yet)") : known));
}

const command_registrar reg({"bench", "run a benchmark: cdma-vp bench NAME (see cdma-vp bench --help)",
                             bench_command});

}  // namespace
}  // namespace cdma::platform
