// Suggestions for typos in names a user writes (fields, enum values, presets, engines):
// the known name nearest by edit distance, when it is near enough to be what was meant.
#pragma once

#include <string>
#include <vector>

namespace pipetwin {

// The candidate nearest to `typo` (case-insensitive Levenshtein distance), if that distance
// is at most max(1, typo's length / 3) and no other candidate is as near; else empty.
std::string nearest_name(const std::string& typo, const std::vector<std::string>& candidates);

// "; did you mean 'NAME'?" for the nearest name, or "" when none is near.
std::string did_you_mean(const std::string& typo, const std::vector<std::string>& candidates);

}  // namespace pipetwin
