#include "sim/scenario/did_you_mean.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace pipetwin {
namespace {

int edit_distance(const std::string& a, const std::string& b) {
  std::vector<int> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      const int next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string nearest_name(const std::string& typo, const std::vector<std::string>& candidates) {
  const int limit = std::max<int>(1, static_cast<int>(typo.size()) / 3);
  int best = limit + 1;
  std::string nearest;
  bool tied = false;
  for (const std::string& candidate : candidates) {
    const int distance = edit_distance(typo, candidate);
    if (distance < best) {
      best = distance;
      nearest = candidate;
      tied = false;
    } else if (distance == best) {
      tied = true;
    }
  }
  return tied ? "" : nearest;
}

std::string did_you_mean(const std::string& typo, const std::vector<std::string>& candidates) {
  const std::string nearest = nearest_name(typo, candidates);
  return nearest.empty() ? "" : "; did you mean '" + nearest + "'?";
}

}  // namespace pipetwin
