#include "sim/cli/options.h"

#include <spdlog/spdlog.h>

#include <iostream>

#include "sim/util/error.h"

namespace po = boost::program_options;

namespace clustersim {

bool ParseOptions(int argc, char** argv, const po::options_description& desc,
                  po::variables_map* vm, const po::positional_options_description* positional) {
  po::command_line_parser parser(argc, argv);
  parser.options(desc);
  if (positional) parser.positional(*positional);
  po::store(parser.run(), *vm);
  if (vm->count("help")) {
    std::cout << desc << "\n";
    return false;
  }
  po::notify(*vm);
  return true;
}

void SetLogLevel(const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    throw InputError("--log-level " + level +
                     ": expected trace, debug, info, warn, error, critical or off");
  }
  spdlog::set_level(parsed);
}

}  // namespace clustersim
