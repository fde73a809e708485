// Where each span is drawn in a Chrome trace. Viewers (Perfetto, speedscope, chrome://tracing)
// nest the slices of a thread by time: a slice whose end, as the viewer computes it, lies a
// rounding error past the next slice's start is drawn as that slice's parent, and a lane
// becomes a staircase. Each viewer computes differently: Perfetto rounds ts * 1000 to
// nanoseconds, speedscope subtracts the thread's first ts and then adds dur. So slices are
// drawn on a grid of 125 ns, an eighth of a microsecond: the finest grid whose points are
// binary fractions of a microsecond (exact doubles, so sums, differences and multiples stay
// exact) and also whole nanoseconds (short decimal text). Any such arithmetic then finds a
// slice's end exactly at or before the next slice's start on its lane. The exact times
// travel in the event's args; these numbers are for display only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/timeline.h"

namespace pipetwin {

// The spacing of the grid slices are drawn on.
inline constexpr int64_t kDrawnGridNs = 125;

struct DrawnSlice {
  // False for times too large for the grid to stay exact (beyond ~104 days) or not finite:
  // such a span is drawn from its exact times, without the guarantee.
  bool on_grid = true;
  // Nanoseconds, multiples of kDrawnGridNs.
  int64_t ts_ns = 0;
  // 0 when the span takes no time once drawn: the trace shows it as an instant event,
  // which no viewer can mistake for the parent of the slice that starts with it.
  int64_t dur_ns = 0;
};

// One DrawnSlice per span; `track[i]` says which thread of the trace span i is on.
std::vector<DrawnSlice> draw_slices(const std::vector<Span>& spans,
                                    const std::vector<int64_t>& track);

// Integer nanoseconds as microseconds in the shortest decimal text: 1234567 -> "1234.567",
// 100000000 -> "100000".
std::string nanoseconds_as_micros(int64_t ns);

}  // namespace pipetwin
