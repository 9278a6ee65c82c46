// cdma-vp: the command-line front end of the platform. Dispatches to the sub-commands
// registered in platform/cmd_*.cpp; with no command (or only options) it runs `run`.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <systemc>
#include "platform/command.h"
#include "platform/outputs.h"

namespace cdma::platform {

std::vector<command>& commands() {
  static std::vector<command> all;
  return all;
}

int usage_error(const std::string& msg) {
  std::cerr << "cdma-vp: " << msg << "\n(see cdma-vp --help)\n";
  return 2;
}

}  // namespace cdma::platform

int sc_main(int argc, char** argv) {
  using namespace cdma::platform;
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string name = "run";
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    std::cout << "Usage: cdma-vp [COMMAND] [options]   (COMMAND defaults to run)\n\nCommands:\n";
    for (const auto& c : commands()) std::cout << "  " << c.name << std::string(c.name.size() < 10 ? 10 - c.name.size() : 1, ' ') << c.summary << "\n";
    std::cout << "\n`cdma-vp COMMAND --help` describes one command.\n";
    return check_stdout();
  }
  if (!args.empty() && args[0].rfind("-", 0) != 0) {
    name = args[0];
    args.erase(args.begin());
  }
  for (const auto& c : commands())
    if (c.name == name) return c.run(args);
  std::string known;
  for (const auto& c : commands()) known += (known.empty() ? "" : ", ") + c.name;
  return usage_error("unknown command '" + name + "'; expected one of: " + known);
}

// Our own entry point so the SystemC banner is off unless the user asks for it
// (SYSTEMC_DISABLE_COPYRIGHT_MESSAGE already set in the environment wins).
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  // A file size limit (ulimit -f) or a closed pipe makes the write fail (EFBIG / EPIPE) instead
  // of killing the process: the outputs report it (exit 3) and the others are still written.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  // SIGINT / SIGTERM / SIGHUP remove the unfinished temporary files, then end the process with
  // the signal and a message (platform/outputs.h).
  cdma::platform::install_interrupt_cleanup();
  return sc_core::sc_elab_and_sim(argc, argv);
}
