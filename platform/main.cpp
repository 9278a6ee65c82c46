// cdma-vp: the command-line front end of the platform. Dispatches to the sub-commands
// registered in platform/cmd_*.cpp; with no command (or only options) it runs `run`.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <unistd.h>
#include <systemc>
#include "platform/command.h"
#include "platform/outputs.h"

namespace cdma::platform {

std::vector<command>& commands() {
  static std::vector<command> all;
  return all;
}

namespace {
/// The sub-command running ("" before one is chosen): its --help is the one to point at
/// (new-user trial s23 F8: a bad `compare` option pointed at `cdma-vp --help`, which lists
/// the commands only).
std::string running_command;
}  // namespace

int usage_error(const std::string& msg) {
  // Messages quote names, values and paths as given (a layer name, --param gpu.name=...):
  // control characters and other bytes outside printable ASCII are shown as \xNN, never sent
  // raw to the terminal (an ESC sequence, a bell, a broken UTF-8 byte).
  std::cerr << "cdma-vp: " << printable(msg, true) << "\n(see cdma-vp "
            << (running_command.empty() ? "" : running_command + " ") << "--help)\n";
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
    if (c.name == name) {
      running_command = name;
      const int rc = c.run(args);
      // Standard output of every sub-command (--help included; compare prints with printf):
      // a write that failed (a full disk, /dev/full, a closed pipe) is exit 3, never a silent
      // 0, with a message naming it (except a closed pipe: `| head -1` is not an error to show). A command that reported it already (3) or refused its input (2) keeps its
      // status.
      if (rc == 0 || rc == 1) {
        errno = 0;
        const bool c_stdio_failed = std::fflush(stdout) != 0 || std::ferror(stdout);
        const int e = errno;
        if (c_stdio_failed) return stdout_write_failed(e);
        if (check_stdout()) return 3;
      }
      return rc;
    }
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
  // Standard output not a terminal: buffered in one block of 1 MiB, so a write error (e.g.
  // /dev/full) is mostly found by the flush after the command, with its reason in errno (a
  // 4 KiB buffer failed in the middle of longer output, and the reason was lost by then).
  // Output a command flushes itself (progress, table rows, std::endl) is still written at once.
  if (!isatty(STDOUT_FILENO)) std::setvbuf(stdout, nullptr, _IOFBF, 1 << 20);
  std::signal(SIGPIPE, SIG_IGN);
  // SIGINT / SIGTERM / SIGHUP remove the unfinished temporary files, then end the process with
  // the signal and a message (platform/outputs.h).
  cdma::platform::install_interrupt_cleanup();
  return sc_core::sc_elab_and_sim(argc, argv);
}
