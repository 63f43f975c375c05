// The libFuzzer entry point of the fuzz targets (fuzz/fuzz_targets.h). One executable,
// clustersim_fuzz, holds every target; it runs the one named by the environment variable
// CLUSTERSIM_FUZZ_TARGET, or by its own file name fuzz_<target> (CMake makes one symlink per
// target, e.g. fuzz_native-csv). An InputError is the expected outcome and is swallowed inside
// the target; anything that escapes it is reported and aborts, which libFuzzer records as a crash
// with the input that caused it.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "fuzz/fuzz_targets.h"

namespace {

const clustersim::fuzz::FuzzTarget* g_target = nullptr;

void ListTargets() {
  std::fprintf(stderr, "targets:");
  for (const auto& t : clustersim::fuzz::FuzzTargets()) std::fprintf(stderr, " %s", t.name);
  std::fprintf(stderr, "\n");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  std::string name;
  if (const char* env = std::getenv("CLUSTERSIM_FUZZ_TARGET"); env && *env) {
    name = env;
  } else {
    const std::string self = (*argv)[0];
    const size_t slash = self.rfind('/');
    const std::string base = slash == std::string::npos ? self : self.substr(slash + 1);
    if (base.rfind("fuzz_", 0) == 0) name = base.substr(5);
  }
  g_target = clustersim::fuzz::FindFuzzTarget(name);
  if (!g_target) {
    std::fprintf(stderr,
                 "clustersim fuzz: unknown target \"%s\": set CLUSTERSIM_FUZZ_TARGET or run a "
                 "fuzz_<target> link\n",
                 name.c_str());
    ListTargets();
    std::exit(2);
  }
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    g_target->run(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clustersim fuzz finding (%s): %s: %s\n", g_target->name, typeid(e).name(),
                 e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "clustersim fuzz finding (%s): a non-standard exception\n",
                 g_target->name);
    std::abort();
  }
  return 0;
}
