#include "analysis/timeline_comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "analysis/metrics.h"
#include "analysis/statistics.h"

namespace pipetwin {
namespace {

using SpanKey = std::tuple<int32_t, std::string, int32_t, int32_t, int32_t, int32_t>;

SpanKey key_of(const Span& s) {
  return {s.device, s.op, s.stage, s.range_lo, s.range_hi, s.iteration};
}

// Span indices per key, each list in start order (index order among equal starts).
struct KeyIndex {
  std::map<SpanKey, std::vector<size_t>> spans;
  int64_t duplicates = 0;
};

KeyIndex index_spans(const Timeline& t) {
  KeyIndex index;
  for (size_t i = 0; i < t.spans.size(); ++i) index.spans[key_of(t.spans[i])].push_back(i);
  for (auto& [key, list] : index.spans) {
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t x, size_t y) { return t.spans[x].start_s < t.spans[y].start_s; });
    index.duplicates += static_cast<int64_t>(list.size()) - 1;
  }
  return index;
}

int32_t iterations_of(const Timeline& t) {
  int32_t last = -1;
  for (const Span& s : t.spans) last = std::max(last, s.iteration);
  return last + 1;
}

std::string device_name(const Timeline& t, int32_t id) {
  for (const TimelineDevice& d : t.devices) {
    if (d.id == id) return d.name;
  }
  return "device" + std::to_string(id);
}

// |error| / reference, with 0/0 = 0 and x/0 = infinity.
double relative(double error, double reference) {
  error = std::abs(error);
  if (reference != 0) return error / std::abs(reference);
  return error == 0 ? 0 : std::numeric_limits<double>::infinity();
}

ErrorStats stats_of(std::vector<double> absolute, std::vector<double> rel) {
  std::sort(absolute.begin(), absolute.end());
  std::sort(rel.begin(), rel.end());
  ErrorStats s;
  s.median_s = percentile(absolute, 0.5);
  s.p90_s = percentile(absolute, 0.9);
  s.worst_s = absolute.empty() ? 0 : absolute.back();
  s.median_rel = percentile(rel, 0.5);
  s.p90_rel = percentile(rel, 0.9);
  s.worst_rel = rel.empty() ? 0 : rel.back();
  return s;
}

// The first kNamedSpans of `diffs` by decreasing |error(d)|; ties keep A's order.
template <typename Error>
std::vector<SpanDifference> worst_of(const std::vector<SpanDifference>& diffs, Error error) {
  std::vector<size_t> order(diffs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const size_t n = std::min(kNamedSpans, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [&](size_t x, size_t y) {
                      const double ex = std::abs(error(diffs[x]));
                      const double ey = std::abs(error(diffs[y]));
                      return ex != ey ? ex > ey : x < y;
                    });
  std::vector<SpanDifference> worst;
  for (size_t i = 0; i < n; ++i) worst.push_back(diffs[order[i]]);
  return worst;
}

// The program's own order of ops, then any other op alphabetically.
int op_rank(const std::string& op) {
  static const char* const kOrder[] = {"FWD",       "BWD",      "BWD_INPUT", "BWD_WEIGHT",
                                       "SEND_ACT",  "RECV_ACT", "SEND_GRAD", "RECV_GRAD",
                                       "ALLREDUCE", "OPTIM"};
  constexpr int kKnown = sizeof kOrder / sizeof kOrder[0];
  for (int i = 0; i < kKnown; ++i) {
    if (op == kOrder[i]) return i;
  }
  return kKnown;
}

std::vector<OpComparison> per_op_of(const std::vector<SpanDifference>& diffs) {
  struct Acc {
    std::vector<double> duration, duration_rel, start;
    double total_a = 0, total_b = 0;
  };
  std::map<std::string, Acc> by_op;
  for (const SpanDifference& d : diffs) {
    Acc& acc = by_op[d.op];
    acc.duration.push_back(std::abs(d.duration_error_s()));
    if (d.duration_a_s != 0) acc.duration_rel.push_back(d.duration_error_rel());
    acc.start.push_back(std::abs(d.start_error_s()));
    acc.total_a += d.duration_a_s;
    acc.total_b += d.duration_b_s;
  }
  std::vector<OpComparison> ops;
  for (auto& [op, acc] : by_op) {
    ops.push_back({op, static_cast<int64_t>(acc.duration.size()), median(acc.duration),
                   median(acc.duration_rel), median(acc.start), acc.total_a, acc.total_b});
  }
  std::stable_sort(ops.begin(), ops.end(), [](const OpComparison& x, const OpComparison& y) {
    return op_rank(x.op) < op_rank(y.op);
  });
  return ops;
}

UnmatchedSpan unmatched_of(const Timeline& t, size_t i) {
  const Span& s = t.spans[i];
  return {s.name, s.device, device_name(t, s.device), s.range_lo, s.range_hi, s.iteration};
}

}  // namespace

double SpanDifference::duration_error_rel() const {
  return relative(duration_error_s(), duration_a_s);
}

TimelineComparison compare_timelines(const Timeline& a, const Timeline& b) {
  TimelineComparison c;
  c.iterations_a = iterations_of(a);
  c.iterations_b = iterations_of(b);
  // Bubbles need no sample count; iterations only divide the makespan.
  const RunMetrics ma = compute_metrics(a, std::max(1, c.iterations_a), 0);
  const RunMetrics mb = compute_metrics(b, std::max(1, c.iterations_b), 0);
  c.makespan_a_s = ma.makespan_s;
  c.makespan_b_s = mb.makespan_s;
  c.makespan_error = c.makespan_a_s != 0 ? c.makespan_b_s / c.makespan_a_s - 1
                                         : relative(c.makespan_b_s, c.makespan_a_s);
  c.bubble_a = ma.bubble_ratio;
  c.bubble_b = mb.bubble_ratio;
  std::map<int32_t, TimelineComparison::PeakMemory> peaks;
  for (const DeviceMetrics& d : ma.devices) {
    peaks[d.id].device = d.id;
    peaks[d.id].a_bytes = d.peak_memory_bytes;
  }
  for (const DeviceMetrics& d : mb.devices) {
    peaks[d.id].device = d.id;
    peaks[d.id].b_bytes = d.peak_memory_bytes;
  }
  for (const auto& [id, peak] : peaks) c.peak_memory.push_back(peak);
  c.spans_a = static_cast<int64_t>(a.spans.size());
  c.spans_b = static_cast<int64_t>(b.spans.size());

  const KeyIndex index_a = index_spans(a);
  const KeyIndex index_b = index_spans(b);
  c.duplicate_keys_a = index_a.duplicates;
  c.duplicate_keys_b = index_b.duplicates;

  // Pairs (A index, B index), and the spans of each side left alone.
  std::vector<std::pair<size_t, size_t>> pairs;
  std::vector<size_t> alone_a, alone_b;
  for (const auto& [key, list_a] : index_a.spans) {
    auto it = index_b.spans.find(key);
    const size_t n_b = it == index_b.spans.end() ? 0 : it->second.size();
    for (size_t k = 0; k < list_a.size(); ++k) {
      if (k < n_b) {
        pairs.emplace_back(list_a[k], it->second[k]);
      } else {
        alone_a.push_back(list_a[k]);
      }
    }
  }
  for (const auto& [key, list_b] : index_b.spans) {
    auto it = index_a.spans.find(key);
    const size_t n_a = it == index_a.spans.end() ? 0 : it->second.size();
    for (size_t k = n_a; k < list_b.size(); ++k) alone_b.push_back(list_b[k]);
  }
  std::sort(pairs.begin(), pairs.end());
  std::sort(alone_a.begin(), alone_a.end());
  std::sort(alone_b.begin(), alone_b.end());
  c.matched = static_cast<int64_t>(pairs.size());
  c.unmatched_a = static_cast<int64_t>(alone_a.size());
  c.unmatched_b = static_cast<int64_t>(alone_b.size());
  for (size_t i = 0; i < std::min(kNamedSpans, alone_a.size()); ++i) {
    c.first_unmatched_a.push_back(unmatched_of(a, alone_a[i]));
  }
  for (size_t i = 0; i < std::min(kNamedSpans, alone_b.size()); ++i) {
    c.first_unmatched_b.push_back(unmatched_of(b, alone_b[i]));
  }

  const double origin_a = first_span_start(a);
  const double origin_b = first_span_start(b);
  std::vector<SpanDifference> diffs;
  diffs.reserve(pairs.size());
  std::map<int32_t, std::string> names;
  for (const TimelineDevice& d : a.devices) names.emplace(d.id, d.name);
  for (const auto& [i, j] : pairs) {
    const Span& sa = a.spans[i];
    const Span& sb = b.spans[j];
    SpanDifference d;
    d.name = sa.name;
    d.device = sa.device;
    auto name = names.find(sa.device);
    d.device_name = name != names.end() ? name->second : device_name(a, sa.device);
    d.op = sa.op;
    d.stage = sa.stage;
    d.iteration = sa.iteration;
    d.start_a_s = sa.start_s - origin_a;
    d.start_b_s = sb.start_s - origin_b;
    d.duration_a_s = sa.duration_s();
    d.duration_b_s = sb.duration_s();
    diffs.push_back(std::move(d));
  }

  std::vector<double> duration_abs, duration_rel, start_abs, start_rel;
  for (const SpanDifference& d : diffs) {
    duration_abs.push_back(std::abs(d.duration_error_s()));
    if (d.duration_a_s != 0) duration_rel.push_back(d.duration_error_rel());
    start_abs.push_back(std::abs(d.start_error_s()));
    if (c.makespan_a_s != 0) start_rel.push_back(relative(d.start_error_s(), c.makespan_a_s));
  }
  c.duration_error = stats_of(std::move(duration_abs), std::move(duration_rel));
  c.start_error = stats_of(std::move(start_abs), std::move(start_rel));
  c.worst_duration = worst_of(diffs, [](const SpanDifference& d) { return d.duration_error_s(); });
  c.worst_start = worst_of(diffs, [](const SpanDifference& d) { return d.start_error_s(); });
  c.per_op = per_op_of(diffs);
  c.differences = std::move(diffs);
  return c;
}

}  // namespace pipetwin
