// Where each span is drawn in a Chrome trace. Viewers (Perfetto, speedscope, chrome://tracing)
// nest the slices of a thread by time: a slice whose printed ts + dur lies a rounding error past
// the next slice's ts is drawn as that slice's parent, and a lane becomes a staircase. So
// slices are drawn on integer nanoseconds, and on every lane the printed numbers, parsed
// back as doubles (as every viewer does), satisfy ts + dur <= next ts exactly. The exact
// times travel in the event's args; these numbers are for display only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/timeline.h"

namespace pipetwin {

struct DrawnSlice {
  // False for times too large for nanoseconds in a double (beyond ~104 days) or not
  // finite: such a span is drawn from its exact times, without the guarantee.
  bool on_nanoseconds = true;
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
