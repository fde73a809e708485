// Time as sets of intervals: what a lane covered, merged, and what one set leaves of another.
// The metrics and the time breakdown measure overlap with these, so they agree.
#pragma once

#include <utility>
#include <vector>

namespace pipetwin {

using Intervals = std::vector<std::pair<double, double>>;

// Sorts and merges intervals into disjoint ones, in increasing order; empty ones go.
Intervals merged(Intervals intervals);

double total_length(const Intervals& disjoint);

// The length of `a` not covered by `b` (both disjoint and sorted). Uncovered pieces are
// summed as they are, so that with no overlap at all the result equals total_length(a).
double uncovered_length(const Intervals& a, const Intervals& b);

// The pieces of `a` not covered by `b` (both disjoint and sorted), in order.
Intervals uncovered(const Intervals& a, const Intervals& b);

}  // namespace pipetwin
