// The text of a field as written between separators: `--set` and `--vary` values, list items.
#pragma once

#include <string>

namespace pipetwin {

// `s` without the spaces and tabs at either end.
inline std::string trim_blanks(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

}  // namespace pipetwin
