// The house's rules, checked on the source tree (docs/architecture.md draws them): every
// #include runs down the layers proto -> traces -> sim -> analysis -> report -> backend -> app
// -> the consumers (cli, python, bench, fuzz, none of which includes another), and inside sim from the shared vocabulary (sim/spec) up to
// the methods; SimGrid, LibTorch and CUDA each stay in their one folder; tests mirror the source
// tree; code cites only files of the repository.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = PIPETWIN_SOURCE_DIR;

// Folder -> layer. A file may include its own folder and any folder of a lower layer;
// folders of the same layer are peers and include neither each other.
const std::map<std::string, int>& layers() {
  static const std::map<std::string, int> table = {
      {"proto", 0},
      {"scenarios", 0},
      {"traces", 1},
      {"sim/spec", 10},
      {"sim/program", 11},
      {"sim/cluster", 12},
      {"sim/model", 12},
      {"sim/partition", 12},
      {"sim/goodput", 12},
      {"sim/sweep", 12},
      {"sim/chakra", 12},
      {"sim/network", 13},
      {"sim/scenario", 14},
      {"sim/exec", 14},
      {"sim/schedule", 15},
      {"sim/simgrid", 16},
      {"sim/planner", 16},
      {"sim/driver", 17},
      {"sim/freeze", 18},
      {"sim/umpipe", 18},
      {"sim/tune", 18},
      {"sim/fit", 19},
      {"analysis", 20},
      {"report", 25},
      {"backend/common", 30},
      {"backend/replay", 31},
      {"backend/torch", 32},
      {"backend/cuda", 32},
      {"backend/run", 35},
      {"app", 35},
      // The consumers at the top are peers: the command line and the Python module both call
      // app/, benchmarks and fuzz harnesses the libraries; none includes another.
      {"cli", 40},
      {"python", 40},
      {"bench", 40},
      {"fuzz", 40},
  };
  return table;
}

bool is_source(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".h" || ext == ".cpp" || ext == ".cu" || ext == ".cuh";
}

std::string folder_of(const fs::path& relative) { return relative.parent_path().generic_string(); }

std::vector<fs::path> sources_under(const std::string& top) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / top)) {
    if (entry.is_regular_file() && is_source(entry.path())) {
      files.push_back(fs::relative(entry.path(), kRoot));
    }
  }
  return files;
}

std::vector<fs::path> product_sources() {
  std::vector<fs::path> files;
  for (const char* top : {"proto", "traces", "sim", "analysis", "report", "backend", "app", "cli",
                          "python", "bench", "fuzz"}) {
    for (fs::path& file : sources_under(top)) files.push_back(std::move(file));
  }
  return files;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(kRoot / path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// (line number, included path) of every quoted include.
std::vector<std::pair<int, std::string>> quoted_includes(const fs::path& file) {
  static const std::regex include(R"(^\s*#\s*include\s+"([^"]+)\")");
  std::vector<std::pair<int, std::string>> found;
  std::istringstream lines(read_all(file));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::smatch match;
    if (std::regex_search(line, match, include)) found.emplace_back(number, match[1]);
  }
  return found;
}

std::optional<int> layer_of(const std::string& folder) {
  const auto it = layers().find(folder);
  if (it == layers().end()) return std::nullopt;
  return it->second;
}

TEST(Layering, EveryProductFolderHasALayer) {
  for (const fs::path& file : product_sources()) {
    EXPECT_TRUE(layer_of(folder_of(file)).has_value())
        << file << ": its folder has no layer; add it to docs/architecture.md and this table";
  }
}

TEST(Layering, IncludesRunDownTheLayers) {
  for (const fs::path& file : product_sources()) {
    const std::string folder = folder_of(file);
    const std::optional<int> own = layer_of(folder);
    if (!own) continue;
    for (const auto& [line, included] : quoted_includes(file)) {
      // Generated protobuf headers (scenario.pb.h) belong to proto, the ground.
      if (included.find('/') == std::string::npos) continue;
      const std::string target = fs::path(included).parent_path().generic_string();
      if (target == folder) continue;
      const std::optional<int> theirs = layer_of(target);
      ASSERT_TRUE(theirs.has_value()) << file << ":" << line << " includes " << included;
      EXPECT_LT(*theirs, *own) << file << ":" << line << " includes " << included
                               << ", which is not below " << folder;
    }
  }
}

// The heavy third-party libraries each have one folder.
TEST(Layering, ThirdPartyEnginesStayInTheirFolder) {
  const std::vector<std::pair<std::regex, std::string>> owners = {
      {std::regex(R"(#\s*include\s+<(simgrid|xbt)/)"), "sim/simgrid"},
      {std::regex(R"(#\s*include\s+<(torch|c10|ATen|gloo)/)"), "backend/torch"},
      {std::regex(R"(#\s*include\s+<(cuda|cublas|nccl|cuda_runtime)[^>]*>)"), "backend/cuda"},
  };
  for (const fs::path& file : product_sources()) {
    const std::string text = read_all(file);
    for (const auto& [pattern, owner] : owners) {
      if (std::regex_search(text, pattern)) {
        EXPECT_EQ(folder_of(file), owner)
            << file << " includes a library that only " << owner << " may include";
      }
    }
  }
}

// A newcomer finds the test of sim/schedule/lowering.cpp in tests/sim/schedule/.
TEST(Layering, TestFoldersMirrorTheSourceTree) {
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / "tests")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    const fs::path relative = fs::relative(entry.path(), kRoot / "tests");
    const std::string folder = folder_of(relative);
    if (folder.empty()) continue;  // the tests of the house itself, like this one
    EXPECT_TRUE(fs::is_directory(kRoot / folder))
        << "tests/" << relative.generic_string() << ": no source folder " << folder;
  }
}

// Code cites what a reader can open: files of the repository, never a design document
// outside it or the tracker's numbers.
TEST(Layering, CodeCitesOnlyTheRepository) {
  const std::regex outside(R"(DESIGN\.md|\.\./shared/|\b[Ii]ssue #?[0-9]+)");
  std::vector<fs::path> files = product_sources();
  for (const char* top : {"tests"}) {
    for (fs::path& file : sources_under(top)) files.push_back(std::move(file));
  }
  for (const fs::path& file : files) {
    if (file.filename() == "layering_test.cpp") continue;
    std::istringstream lines(read_all(file));
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      EXPECT_FALSE(std::regex_search(line, outside)) << file << ":" << number << ": " << line;
    }
  }
}

}  // namespace
