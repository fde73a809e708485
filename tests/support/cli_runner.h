// Runs the built `pipetwin` binary as a user would, for end-to-end tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace pipetwin::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// How many times `what` occurs in `text` (overlapping occurrences too).
inline size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A fresh directory per test, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "pipetwin-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& content) const {
    std::ofstream(path_ / name) << content;
    return path_ / name;
  }

 private:
  std::filesystem::path path_;
};

// Runs `binary` with `args` appended as shell words (quote paths with spaces yourself),
// stdin from /dev/null, and collects its exit code, stdout and stderr.
inline CliResult run_binary(const std::string& binary, const std::string& args) {
  TempDir dir;
  const auto out = dir.path() / "out", err = dir.path() / "err";
  const std::string command =
      binary + " " + args + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_all(out);
  result.err = read_all(err);
  return result;
}

// The built `pipetwin` binary.
inline CliResult run_pipetwin(const std::string& args) { return run_binary(PIPETWIN_BINARY, args); }

}  // namespace pipetwin::testing
