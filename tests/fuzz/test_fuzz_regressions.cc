// Every input in tests/fuzz/corpus/<target>/ (the seeds and every input a
// fuzzer ever crashed Loom with) is read by its target without a crash or
// an exception other than LoomError. Under the sanitizer build
// (scripts/test.sh --sanitize) also without memory errors or undefined
// behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/fuzz/targets/fuzz_targets.h"

namespace loom::fuzz {

// gtest prints the parameter in test listings: the target's name.
void PrintTo(const FuzzTarget& t, std::ostream* os) { *os << t.name; }

namespace {

namespace fs = std::filesystem;

fs::path corpus_dir() {
  const char* src = std::getenv("LOOM_SOURCE_DIR");
  fs::path root = src ? fs::path(src) : fs::absolute(fs::path(__FILE__)).parent_path().parent_path().parent_path();
  return root / "tests" / "fuzz" / "corpus";
}

std::vector<fs::path> inputs_of(const std::string& target) {
  std::vector<fs::path> out;
  const fs::path dir = corpus_dir() / target;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

class FuzzRegressions : public ::testing::TestWithParam<FuzzTarget> {};

TEST_P(FuzzRegressions, EveryCorpusInputIsReadOrRefusedWithALoomError) {
  const FuzzTarget& t = GetParam();
  const std::vector<fs::path> inputs = inputs_of(t.name);
  ASSERT_FALSE(inputs.empty()) << "no inputs in " << (corpus_dir() / t.name);
  for (const fs::path& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      t.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      ADD_FAILURE() << p << ": " << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzRegressions, ::testing::ValuesIn(fuzz_targets()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(FuzzCorpus, EveryFolderBelongsToATarget) {
  for (const auto& e : fs::directory_iterator(corpus_dir()))
    EXPECT_NE(find_fuzz_target(e.path().filename().string()), nullptr) << e.path() << " names no fuzz target";
}

}  // namespace
}  // namespace loom::fuzz
