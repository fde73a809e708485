#include "traces/drawn_slices.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace pipetwin {
namespace {

// |t| below this many seconds keeps a viewer's arithmetic exact: the time in nanoseconds
// (Perfetto's unit) stays below 2^53, and in grid steps far below.
constexpr double kGridRange = 9.0e6;

bool on_grid(const Span& s) {
  return std::isfinite(s.start_s) && std::isfinite(s.end_s) && std::abs(s.start_s) < kGridRange &&
         std::abs(s.end_s) < kGridRange;
}

int64_t to_grid_ns(double seconds) {
  return std::llround(seconds * (1e9 / kDrawnGridNs)) * kDrawnGridNs;
}

}  // namespace

std::string nanoseconds_as_micros(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string text = negative ? "-" : "";
  text += std::to_string(magnitude / 1000);
  const uint64_t fraction = magnitude % 1000;
  if (fraction != 0) {
    char digits[4];
    digits[0] = static_cast<char>('0' + fraction / 100);
    digits[1] = static_cast<char>('0' + fraction / 10 % 10);
    digits[2] = static_cast<char>('0' + fraction % 10);
    int length = 3;
    while (digits[length - 1] == '0') --length;
    text += '.';
    text.append(digits, static_cast<size_t>(length));
  }
  return text;
}

std::vector<DrawnSlice> draw_slices(const std::vector<Span>& spans,
                                    const std::vector<int64_t>& track) {
  std::vector<DrawnSlice> drawn(spans.size());
  std::map<int64_t, std::vector<size_t>> lanes;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (!on_grid(spans[i])) {
      drawn[i].on_grid = false;
      continue;
    }
    drawn[i].ts_ns = to_grid_ns(spans[i].start_s);
    const int64_t end_ns = to_grid_ns(spans[i].end_s);
    drawn[i].dur_ns = std::max<int64_t>(0, end_ns - drawn[i].ts_ns);
    lanes[track[i]].push_back(i);
  }
  for (auto& [lane, order] : lanes) {
    // By start, empty slices first: an instant at t comes before the slice that starts at t.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (drawn[a].ts_ns != drawn[b].ts_ns) return drawn[a].ts_ns < drawn[b].ts_ns;
      return drawn[a].dur_ns < drawn[b].dur_ns;
    });
    for (size_t k = 0; k + 1 < order.size(); ++k) {
      DrawnSlice& slice = drawn[order[k]];
      if (slice.dur_ns == 0) continue;
      // The next slice that is drawn as a slice; instants do not take part in nesting.
      size_t next = k + 1;
      while (next < order.size() && drawn[order[next]].dur_ns == 0) ++next;
      if (next == order.size()) break;
      const int64_t next_ts = drawn[order[next]].ts_ns;
      // Overlapping measurements (clocks of two threads) are cut at the next start. On the
      // grid the end is then exactly at or before it, whatever arithmetic a viewer does.
      slice.dur_ns = std::max<int64_t>(0, std::min(slice.dur_ns, next_ts - slice.ts_ns));
    }
  }
  return drawn;
}

}  // namespace pipetwin
