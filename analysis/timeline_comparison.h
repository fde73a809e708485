// Span-by-span comparison of two timelines of the same program: a simulation against a
// measurement, one engine against another, or two what-ifs (`pipetwin compare`).
//
// Timeline A is the reference. Every error is B minus A, and every relative error divides by
// A: the makespan error is makespan_b / makespan_a - 1 (+0.1: B took 10% longer), a span's
// relative duration error divides by A's duration of that span, and a relative start error
// by A's makespan. Start times are taken from each timeline's own first span start, so a
// measured timeline on a steady clock that began long before compares with a simulated one
// that begins at 0.
//
// Spans match on (device, op, stage, range_lo, range_hi, iteration): the slice name is for
// people, the key is what the program means. The lowering gives every instruction its own
// key, so a key seen twice in one timeline means malformed input; the k-th occurrence in A
// (in start order) then pairs with the k-th in B, and the duplicates are counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/timeline.h"

namespace pipetwin {

// Statistics of absolute errors |B - A| over matched spans. Percentiles interpolate
// linearly between order statistics (numpy's default): the median of an even count is the
// mean of the two middle values. Relative figures skip spans whose reference value is 0.
struct ErrorStats {
  double median_s = 0;
  double p90_s = 0;
  double worst_s = 0;
  double median_rel = 0;
  double p90_rel = 0;
  double worst_rel = 0;
};

// One matched pair, named after A's span.
struct SpanDifference {
  std::string name;         // A's slice name, e.g. "2F0"
  int32_t device = 0;       // device id (the same on both sides: it is part of the key)
  std::string device_name;  // A's name for it, e.g. "gpu2"
  std::string op;
  int32_t stage = -1;
  int32_t iteration = 0;
  double start_a_s = 0;  // from A's first span start
  double start_b_s = 0;  // from B's first span start
  double duration_a_s = 0;
  double duration_b_s = 0;

  double duration_error_s() const { return duration_b_s - duration_a_s; }  // signed
  double start_error_s() const { return start_b_s - start_a_s; }           // signed
  // |error| / A's duration; 0 when both are 0, infinity when only A's is.
  double duration_error_rel() const;
};

// A span with no partner on the other side.
struct UnmatchedSpan {
  std::string name;
  int32_t device = 0;
  std::string device_name;
  int32_t range_lo = 0;  // the sample range, which the name may not show ("0F0")
  int32_t range_hi = 0;
  int32_t iteration = 0;
};

// One op kind ("FWD", "SEND_ACT", ...) over its matched spans.
struct OpComparison {
  std::string op;
  int64_t matched = 0;
  double median_duration_error_s = 0;    // median of |B - A|
  double median_duration_error_rel = 0;  // median of |B - A| / A, spans with A > 0
  double median_start_error_s = 0;       // median of |B - A| of the starts
  double total_a_s = 0;                  // summed durations
  double total_b_s = 0;
};

struct TimelineComparison {
  // Iterations are 1 + the largest span iteration; makespans and bubbles come from
  // compute_metrics (analysis/metrics.h) on each timeline.
  int32_t iterations_a = 0;
  int32_t iterations_b = 0;
  double makespan_a_s = 0;
  double makespan_b_s = 0;
  double makespan_error = 0;  // makespan_b / makespan_a - 1; 0 when both are 0
  double bubble_a = 0;
  double bubble_b = 0;
  // Peak of each device's memory counter (same device ids on both sides; a device that
  // only one side has counts 0 on the other).
  struct PeakMemory {
    int32_t device = 0;
    double a_bytes = 0;
    double b_bytes = 0;
  };
  std::vector<PeakMemory> peak_memory;

  int64_t spans_a = 0;
  int64_t spans_b = 0;
  int64_t matched = 0;
  int64_t unmatched_a = 0;  // spans of A with no partner in B
  int64_t unmatched_b = 0;
  std::vector<UnmatchedSpan> first_unmatched_a;  // at most kNamedSpans, in A's order
  std::vector<UnmatchedSpan> first_unmatched_b;
  int64_t duplicate_keys_a = 0;  // spans whose key an earlier span of A already had
  int64_t duplicate_keys_b = 0;

  ErrorStats duration_error;                   // over all matched spans
  ErrorStats start_error;                      // relative to makespan_a_s
  std::vector<SpanDifference> worst_duration;  // at most kNamedSpans, largest |error| first
  std::vector<SpanDifference> worst_start;
  std::vector<OpComparison> per_op;         // FWD, BWD, SEND_ACT, RECV_ACT, SEND_GRAD, RECV_GRAD,
                                            // ALLREDUCE, OPTIM, then any other op alphabetically
  std::vector<SpanDifference> differences;  // every matched pair, in A's span order
};

// How many unmatched and worst spans a comparison names.
inline constexpr size_t kNamedSpans = 5;

TimelineComparison compare_timelines(const Timeline& a, const Timeline& b);

}  // namespace pipetwin
