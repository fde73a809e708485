#include "traces/drawn_slices.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>

namespace pipetwin {
namespace {

// |t| below this many seconds keeps whole nanoseconds exact in a double (2^53 ns).
constexpr double kNanosecondRange = 9.0e6;

bool on_nanoseconds(const Span& s) {
  return std::isfinite(s.start_s) && std::isfinite(s.end_s) &&
         std::abs(s.start_s) < kNanosecondRange && std::abs(s.end_s) < kNanosecondRange;
}

// What a viewer reads: the printed microseconds parsed as a double.
double as_read(int64_t ns) { return std::strtod(nanoseconds_as_micros(ns).c_str(), nullptr); }

}  // namespace

std::string nanoseconds_as_micros(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string text = (negative ? "-" : "") + std::to_string(magnitude / 1000);
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
    if (!on_nanoseconds(spans[i])) {
      drawn[i].on_nanoseconds = false;
      continue;
    }
    drawn[i].ts_ns = std::llround(spans[i].start_s * 1e9);
    const int64_t end_ns = std::llround(spans[i].end_s * 1e9);
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
      // Overlapping measurements (clocks of two threads) are cut at the next start.
      slice.dur_ns = std::max<int64_t>(0, std::min(slice.dur_ns, next_ts - slice.ts_ns));
      const double next_read = as_read(next_ts);
      while (slice.dur_ns > 0 && as_read(slice.ts_ns) + as_read(slice.dur_ns) > next_read) {
        --slice.dur_ns;  // one nanosecond less, so the printed sum stays at or before next ts
      }
    }
  }
  return drawn;
}

}  // namespace pipetwin
