// cdma-vp config: shows the effective configuration (--dump), the parameter table (--list)
// or the presets (--presets). Takes the same --preset / --config / --param options as run.
#include <iomanip>
#include <iostream>
#include <boost/program_options.hpp>
#include "platform/command.h"
#include "platform/config.h"
#include "platform/outputs.h"

namespace po = boost::program_options;

namespace cdma::platform {
namespace {

int config_command(const std::vector<std::string>& args) {
  config_options o;
  po::options_description opts("cdma-vp config options");
  opts.add_options()("help,h", "print this help")("dump", "print the effective configuration as JSON (default)")
      ("list", "list every parameter with its kind, value and meaning")("presets", "list the presets");
  add_config_options(opts, o);
  po::variables_map vm;
  try {
    const po::positional_options_description no_positional;  // stray words are errors
    po::store(po::command_line_parser(args).options(opts).positional(no_positional).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "Usage: cdma-vp config [--dump | --list | --presets] [--preset NAME | --config FILE] "
                   "[--param name=value ...]\n\n" << opts;
      return 0;
    }
    if (vm.count("presets")) {
      for (const auto& n : preset_names())
        std::cout << std::left << std::setw(14) << n << preset_json(n).value("description", "") << "\n";
      return 0;
    }
    o.resolve(vm);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  if (vm.count("list")) {
    std::cout << std::left << std::setw(30) << "parameter" << std::setw(10) << "kind" << std::setw(22)
              << "value" << "meaning\n";
    for (const auto& p : describe_params(o.config))
      std::cout << std::setw(30) << p.name << std::setw(10) << p.kind << std::setw(22) << p.value << p.doc << "\n";
    return 0;
  }
  std::cout << to_json(o.config).dump(2) << "\n";
  return 0;
}

const command_registrar reg({"config", "show the effective configuration (--dump), parameters (--list), presets",
                             config_command});

}  // namespace
}  // namespace cdma::platform
