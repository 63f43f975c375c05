// Replays the fuzz targets' seed corpus (fuzz/corpus/<target>/) and every input that once found
// a bug (fuzz/regressions/<target>/) through the same entry points libFuzzer calls
// (fuzz/fuzz_targets.h), in the normal build: each input must end in success or InputError,
// never in another exception, a FuzzFinding or a crash. One test per target.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <typeinfo>

#include "fuzz/fuzz_targets.h"

namespace clustersim::fuzz {
namespace {

const std::filesystem::path kFuzzDir = std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "fuzz";

std::vector<std::filesystem::path> Inputs(const std::string& target, const char* kind) {
  std::vector<std::filesystem::path> out;
  const auto dir = kFuzzDir / kind / target;
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class FuzzReplay : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzReplay, EveryCorpusAndRegressionInputEndsInSuccessOrInputError) {
  const FuzzTarget* target = FindFuzzTarget(GetParam());
  ASSERT_NE(target, nullptr);
  const auto seeds = Inputs(target->name, "corpus");
  EXPECT_FALSE(seeds.empty()) << "no seed corpus in fuzz/corpus/" << target->name;
  auto inputs = seeds;
  for (const auto& p : Inputs(target->name, "regressions")) inputs.push_back(p);
  for (const auto& path : inputs) {
    const std::string bytes = ReadBytes(path);
    try {
      target->run(bytes);
    } catch (const std::exception& e) {
      ADD_FAILURE() << path.string() << ": " << typeid(e).name() << ": " << e.what();
    }
  }
}

std::vector<std::string> TargetNames() {
  std::vector<std::string> names;
  for (const FuzzTarget& t : FuzzTargets()) names.push_back(t.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, ::testing::ValuesIn(TargetNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Every target has its seed folder and nothing else sits in fuzz/corpus or fuzz/regressions.
TEST(FuzzCorpus, FoldersMatchTheTargets) {
  for (const char* kind : {"corpus", "regressions"}) {
    const auto dir = kFuzzDir / kind;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      EXPECT_NE(FindFuzzTarget(entry.path().filename().string()), nullptr)
          << entry.path() << " is not named after a fuzz target";
    }
  }
}

}  // namespace
}  // namespace clustersim::fuzz
