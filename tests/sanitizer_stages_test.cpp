// The house's sanitizer stages (Makefile, docs/reliability.md) keep covering the real ranks:
// `make tsan` compiles only the test files TSAN_TEST_FILES names, so a new file of real-rank
// tests would otherwise be left out of ThreadSanitizer without anyone noticing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = PIPETWIN_SOURCE_DIR;

std::string read_all(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The regex the Makefile hands CMake as PIPETWIN_TEST_FILES for the ThreadSanitizer build.
std::string tsan_test_files() {
  std::istringstream makefile(read_all(kRoot / "Makefile"));
  const std::string key = "TSAN_TEST_FILES = ";
  for (std::string line; std::getline(makefile, line);) {
    if (line.rfind(key, 0) != 0) continue;
    std::string pattern = line.substr(key.size());
    const auto doubled = pattern.find("$$");  // make's escape of '$'
    if (doubled != std::string::npos) pattern.erase(doubled, 1);
    return pattern;
  }
  return "";
}

// A test that needs LibTorch's ranks says so with SKIP_WITHOUT_TORCH (real_run_helpers.h).
TEST(SanitizerStages, ThreadSanitizerCompilesEveryFileOfRealRankTests) {
  const std::string pattern = tsan_test_files();
  ASSERT_FALSE(pattern.empty()) << "no TSAN_TEST_FILES line in the Makefile";
  const std::regex compiled(pattern);
  int real_rank_files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / "tests")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    if (entry.path().filename() == "sanitizer_stages_test.cpp") continue;
    if (read_all(entry.path()).find("SKIP_WITHOUT_TORCH()") == std::string::npos) continue;
    ++real_rank_files;
    EXPECT_TRUE(std::regex_search(entry.path().generic_string(), compiled))
        << entry.path().generic_string() << " has real-rank tests that `make tsan` leaves out";
  }
  EXPECT_GE(real_rank_files, 9);
}

}  // namespace
