// cdma-vp run: one training step of a network under vDNN, three times (oracle, vDNN, cDMA).
//   cdma-vp [run] [--network NAME] [--batch N] [--codec zvc|none] [--activations PATH]
//                 [--density D] [--policy all|conv] [--json FILE] [--no-verify]
// Exit codes: 0 success, 1 simulation ran but verification failed, 2 bad input.
#include <fstream>
#include <iostream>
#include <boost/program_options.hpp>
#include "platform/command.h"
#include "platform/platform.h"
#include "platform/report.h"

namespace po = boost::program_options;

namespace {

using cdma::platform::usage_error;

int run_command(const std::vector<std::string>& args) {
  cdma::platform::platform_config cfg;
  std::string json_path;
  po::options_description opts("cdma-vp run options");
  opts.add_options()
      ("help,h", "print this help")
      ("network", po::value(&cfg.network)->default_value(cfg.network),
       "network: inception_v3 | synthetic")
      ("batch", po::value(&cfg.batch)->default_value(cfg.batch), "batch size (>= 1)")
      ("codec", po::value(&cfg.codec)->default_value(cfg.codec),
       "codec of the cDMA step: zvc | none")
      ("activations", po::value(&cfg.activations),
       "real activations: .npz with one NCHW float32 member per layer output "
       "(default for inception_v3: the shipped chelsea.npz; other networks: synthetic)")
      ("density", po::value(&cfg.synthetic_density)->default_value(cfg.synthetic_density),
       "nonzero fraction of synthetic activations, in [0, 1]")
      ("policy", po::value(&cfg.policy)->default_value(cfg.policy), "vDNN policy: all | conv")
      ("json", po::value(&json_path), "also write the results as JSON to FILE")
      ("no-verify", "skip comparing prefetched bytes with the offloaded ones");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(e.what());
  }
  if (vm.count("help")) {
    std::cout << "Usage: cdma-vp [run] [options]\n\nSimulates one DNN training step under vDNN "
                 "three times (oracle, vDNN, cDMA) on a\nTitan X (Maxwell) + PCIe Gen3 x16 "
                 "platform and reports the step times.\n\n"
              << opts << "\nExit status: 0 ok, 1 prefetched data did not match, 2 bad input.\n";
    return 0;
  }
  cfg.verify = vm.count("no-verify") == 0;
  if (cfg.policy == "none") return usage_error("--policy none is the oracle, which is always reported; use all or conv");
  // Fail on an unwritable --json before spending time on the simulation.
  if (!json_path.empty()) {
    std::ofstream probe(json_path, std::ios::app);
    if (!probe) return usage_error("--json " + json_path + ": cannot open for writing");
  }
  cdma::platform::run_report rep;
  try {
    rep = cdma::platform::run(cfg);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  cdma::platform::print_summary(std::cout, rep);
  if (!json_path.empty()) {
    try {
      cdma::platform::write_json(json_path, rep);
      std::cout << "results written to " << json_path << "\n";
    } catch (const std::exception& e) {
      std::cerr << "cdma-vp: " << e.what() << "\n";
      return 2;
    }
  }
  return rep.ok() || !cfg.verify ? 0 : 1;
}

const cdma::platform::command_registrar reg_run({"run", "simulate one training step: oracle, vDNN and cDMA (the default command)", run_command});

}  // namespace

