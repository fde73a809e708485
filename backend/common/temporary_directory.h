// A directory of our own under the system's temporary directory, removed with all it
// holds however the scope is left.
#pragma once

#include <filesystem>
#include <string>

namespace pipetwin {

class TemporaryDirectory {
 public:
  // Throws RuntimeFailure when it cannot be created. `prefix` starts its name.
  explicit TemporaryDirectory(const std::string& prefix = "pipetwin-");
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace pipetwin
