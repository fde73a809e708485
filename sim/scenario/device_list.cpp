#include "sim/scenario/device_list.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace pipetwin {
namespace {

std::string trimmed(const std::string& text) {
  size_t lo = 0, hi = text.size();
  while (lo < hi && std::isspace(static_cast<unsigned char>(text[lo]))) ++lo;
  while (hi > lo && std::isspace(static_cast<unsigned char>(text[hi - 1]))) --hi;
  return text.substr(lo, hi - lo);
}

// A whole non-negative decimal id, or nullopt.
std::optional<long long> id_of(const std::string& text) {
  const std::string t = trimmed(text);
  long long value = 0;
  const auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || error != std::errc() || end != t.data() + t.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<std::vector<int>> parse_id_list(const std::string& text, int count,
                                              std::string& problem) {
  std::vector<int> ids;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    const size_t dash = item.find('-');
    const std::optional<long long> lo = id_of(item.substr(0, dash));
    const std::optional<long long> hi =
        dash == std::string::npos ? lo : id_of(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) {
      // Appended: GCC 12 warns (-Wrestrict, falsely) on a literal prepended to a temporary.
      problem = trimmed(item);
      problem.insert(0, 1, '\'');
      problem += "' is not an id or a range a-b (write \"3,8-15\")";
      return std::nullopt;
    }
    if (*hi >= count) {
      problem = "no id " + std::to_string(*hi) + " among " + std::to_string(count) + " (0-" +
                std::to_string(count - 1) + ")";
      return std::nullopt;
    }
    for (long long id = *lo; id <= *hi; ++id) ids.push_back(static_cast<int>(id));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace pipetwin
