// cdma-vp run: one training step of a network under vDNN, three times (oracle, vDNN, cDMA).
// Configuration: --preset NAME | --config FILE, then the shortcut options, then every
// --param name=value in order (the last one wins). Exit codes: 0 success, 1 the simulation
// ran but prefetched data did not match, 2 bad input (nothing is simulated or written), 3 an
// I/O error during the run (spill file) or while writing the outputs.
#include <fstream>
#include <iostream>
#include <boost/program_options.hpp>
#include "platform/command.h"
#include "platform/config.h"
#include "platform/outputs.h"
#include "platform/platform.h"
#include "platform/report.h"
#include "tlm/memory/backing_store.h"

namespace po = boost::program_options;

namespace cdma::platform {

namespace {

int run_command(const std::vector<std::string>& args) {
  run_options o;
  po::options_description opts("cdma-vp run options");
  add_config_options(opts, o.cfg);
  add_output_options(opts, o.out);
  opts.add_options()("help,h", "print this help");
  po::variables_map vm;
  try {
    const po::positional_options_description no_positional;  // stray words are errors
    po::store(parse_command_words(args, opts, no_positional), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "Usage: cdma-vp [run] [options]\n\nSimulates one DNN training step under vDNN "
                   "three times (oracle: no transfers; vDNN:\nuncompressed DMA; cDMA: compressing "
                   "DMA) and reports step times, compression and PCIe traffic.\nDefault: "
                   "InceptionV3, batch 32, real activations, preset titanx-gen3, policy all, ZVC.\n\n"
                << opts
                << "\nParameters (--param, config files): cdma-vp config --list\n"
                   "Exit status: 0 ok, 1 prefetched data did not match, 2 bad input, 3 an I/O\n"
                   "error during the run or while writing the outputs (e.g. a full disk; the summary is\n"
                   "printed, every other output is still written, and no partial file is left: outputs\n"
                   "are written to a temporary FILE.tmp.XXXXXX and renamed into place once complete; an\n"
                   "interrupt (SIGINT, SIGTERM, SIGHUP) removes it and ends the run with that signal).\n";
      return 0;
    }
    o.cfg.resolve(vm);
    // An output naming an input (run --config cfg.json --csv cfg.json) is refused like two
    // outputs naming one file: it overwrote the input after the run.
    o.out.check_writable(config_inputs(o.cfg.config, o.cfg.config_file));
  } catch (const po::error& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  run_report rep;
  try {
    rep = run(o.cfg.config, o.out.hooks());
  } catch (const mem::store_io_error& e) {  // not bad input: the machine failed the run
    std::cerr << "cdma-vp: error: " << printable(e.what(), true) << "\n";
    return 3;
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  // Input warnings that did not stop the run (e.g. density-profile names not in the network).
  for (const std::string& w : rep.warnings) std::cerr << "cdma-vp: warning: " << printable(w, true) << "\n";
  print_summary(std::cout, rep);
  // The summary itself (e.g. `cdma-vp run > /dev/full`): checked at once (the reason is in
  // errno); the output files below are written all the same.
  const bool files = !o.out.json_path.empty() || !o.out.csv_path.empty() || !o.out.trace_path.empty() ||
                     !o.out.vcd_path.empty() || !o.out.txn_trace_path.empty();
  int status = check_stdout(files ? "the summary is lost; the output files are still written"
                                  : "the summary is lost; --json FILE keeps the results");
  const bool stdout_ok = status == 0;
  try {
    o.out.write_all(rep, std::cout);
  } catch (const std::exception& e) {  // the run itself succeeded (summary above)
    std::string m = e.what();  // one line per output that failed
    for (std::size_t at = 0; (at = m.find('\n', at)) != std::string::npos; at += 16) m.insert(at + 1, "cdma-vp: error: ");
    std::cerr << "cdma-vp: error: " << printable(m, true) << "\n";
    status = 3;
  }
  if (stdout_ok && check_stdout("the lines naming the output files are lost; the files are written")) status = 3;
  if (!rep.io_error.empty()) {  // the steps completed before it are in the summary and outputs
    std::cerr << "cdma-vp: error: " << printable(rep.io_error, true) << " (the steps completed before it are reported)\n";
    status = 3;
  }
  if (status) return status;
  return rep.ok() || !rep.config.verify ? 0 : 1;
}

const command_registrar reg_run({"run", "simulate one training step: oracle, vDNN and cDMA (the default command)",
                                 run_command});

}  // namespace
}  // namespace cdma::platform
