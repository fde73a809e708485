#include "backend/common/temporary_directory.h"

#include <stdlib.h>

#include "sim/spec/errors.h"

namespace pipetwin {

TemporaryDirectory::TemporaryDirectory(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw RuntimeFailure("cannot create a temporary directory in " +
                         std::filesystem::temp_directory_path().string());
  }
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace pipetwin
