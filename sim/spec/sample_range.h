// A half-open range of the minibatch's samples: what a microbatch, a transfer or an
// UMPIPE cut covers.
#pragma once

#include <cstdint>

namespace pipetwin {

// A half-open range [lo, hi) of samples of the minibatch.
struct SampleRange {
  int32_t lo = 0;
  int32_t hi = 0;

  int32_t size() const { return hi - lo; }
  bool overlaps(const SampleRange& other) const { return lo < other.hi && other.lo < hi; }
  SampleRange intersect(const SampleRange& other) const {
    return {lo > other.lo ? lo : other.lo, hi < other.hi ? hi : other.hi};
  }
  bool operator==(const SampleRange&) const = default;
};

}  // namespace pipetwin
