// Scenarios and profiles compiled into the binary (see scenarios/CMakeLists.txt).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pipetwin {

// Content of an embedded file by its path relative to scenarios/,
// e.g. "quickstart.textproto" or "profiles/vgg16.graph.txt".
std::optional<std::string> builtin_file(const std::string& relative_path);

std::vector<std::string> builtin_file_names();

}  // namespace pipetwin
