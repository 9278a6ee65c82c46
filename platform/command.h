// Sub-commands of cdma-vp. Each lives in its own platform/cmd_<name>.cpp, linked straight
// into the executable, and registers itself with a static `command_registrar`.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace cdma::platform {

/// A sub-command: `run(args)` gets the arguments after the command name and returns the exit
/// status (0 ok, 1 the job ran but failed its checks, 2 bad input).
struct command {
  std::string name;
  std::string summary;  ///< one line for `cdma-vp --help`
  std::function<int(const std::vector<std::string>& args)> run;
};

std::vector<command>& commands();

struct command_registrar {
  explicit command_registrar(command c) { commands().push_back(std::move(c)); }
};

/// Prints "cdma-vp: <msg>" and a hint to stderr; returns 2.
int usage_error(const std::string& msg);

}  // namespace cdma::platform
