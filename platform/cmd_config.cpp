// cdma-vp config: shows the effective configuration (--dump), the parameter table (--list)
// or the presets (--presets). Takes the same --preset / --config / --param options as run.
#include <algorithm>
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
  std::string dump_file;
  // How messages name the dump's file: as the user gave it, --output FILE or the positional
  // FILE of `config --dump FILE`.
  std::string output_option = "config --dump";
  opts.add_options()("help,h", "print this help")("dump", "print the effective configuration as JSON (default); "
                                                   "the activation source is resolved (a path or synthetic) so that "
                                                   "--config with the dump reproduces the run")
      ("output", po::value(&dump_file), "FILE: write the dump there instead of standard output (also as the "
                                         "one positional argument: cdma-vp config --dump FILE; - is standard output)")
      ("list", "list every parameter with its kind, value and meaning")("presets", "list the presets");
  add_config_options(opts, o);
  po::variables_map vm;
  try {
    po::positional_options_description positional;  // one word: the dump's output file
    positional.add("output", 1);
    const po::parsed_options parsed = parse_command_words(args, opts, positional);
    for (const auto& op : parsed.options)
      if (op.string_key == "output" && op.position_key < 0) output_option = "--output";
    po::store(parsed, vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "Usage: cdma-vp config [--dump [FILE] | --list | --presets] [--preset NAME | --config FILE] "
                   "[--param name=value ...]\n\n" << opts
                << "\nExit status: 0 ok, 2 bad input (or FILE cannot be opened), 3 the dump could not be written\n"
                   "(e.g. a full disk; nothing is left behind).\n";
      return 0;
    }
    // One action at a time: the others were silently ignored (config --list --dump printed the
    // list; config --presets --preset bogus listed the presets, exit 0).
    {
      const int actions = int(vm.count("dump") > 0) + int(vm.count("list") > 0) + int(vm.count("presets") > 0);
      if (actions > 1)
        throw std::runtime_error("--dump, --list and --presets each choose what config prints; expected one of them");
    }
    if (vm.count("presets")) {
      // The shipped presets, whatever the configuration: an option that configures is ignored.
      for (const auto& opt : vm)
        if (opt.first != "presets" && !opt.second.defaulted())
          throw std::runtime_error("--presets lists the shipped presets and takes no other option (got --" + opt.first +
                                   "); expected cdma-vp config --presets alone, or --list / --dump with --" + opt.first);
      for (const auto& n : preset_names())
        std::cout << std::left << std::setw(14) << n << preset_json(n).value("description", "") << "\n";
      return check_stdout();
    }
    if (vm.count("output") && dump_file.empty())  // was standard output, silently
      throw std::runtime_error(output_option + " '': an empty file name; expected a path, or - for standard output");
    if (dump_file == "-") dump_file.clear();  // the usual name of standard output
    o.resolve(vm);
    if (!dump_file.empty()) {
      if (vm.count("list")) throw std::runtime_error("--list prints to standard output; FILE is for --dump");
      // Not a file the configuration reads (config --config a.json --dump a.json replaced it).
      check_distinct_files({{dump_file, output_option}}, config_inputs(o.config, o.config_file));
      check_output_path(dump_file, output_option);
    }
    // What a run would use: the path of the shipped sample, or synthetic.
    o.config.missing_activations = resolve_missing_activations(o.config);
    o.config.activations = resolve_activations(o.config);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  // Write errors (a full disk, /dev/full, a closed pipe) are exit 3 naming the file.
  if (vm.count("list")) {
    const auto params = describe_params(o.config);
    // The name column fits the longest name (cdma.codec_bytes_per_cycle.zstd shifted its row:
    // new-user trial s21), at least 29 characters.
    std::size_t w = 29;
    for (const auto& p : params) w = std::max(w, p.name.size());
    std::cout << std::left << std::setw(static_cast<int>(w) + 1) << "parameter" << std::setw(10) << "kind"
              << std::setw(22) << "value" << "meaning\n";
    for (const auto& p : params)
      // A value wider than its column (a path) is still followed by a space before the meaning.
      std::cout << std::setw(static_cast<int>(w)) << p.name << " " << std::setw(9) << p.kind << " " << std::setw(21)
                << printable(p.value) << " " << p.doc << "\n";
    return check_stdout();
  }
  // Paths absolute (relative to this directory): the dump reproduces the run from anywhere.
  const std::string text = to_json(with_absolute_paths(o.config)).dump(2) + "\n";
  if (!dump_file.empty()) {
    try {
      write_output_file(dump_file, text, output_option);
    } catch (const output_error& e) {
      std::cerr << "cdma-vp: error: " << printable(e.what(), true) << "\n";
      return 3;
    }
    return 0;
  }
  std::cout << text;
  return check_stdout();
}

const command_registrar reg({"config", "show the effective configuration (--dump), parameters (--list), presets",
                             config_command});

}  // namespace
}  // namespace cdma::platform
