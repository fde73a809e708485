// Timeline files (the binary timeline proto, proto/timeline.proto) as `pipetwin trace` and
// `pipetwin compare` read them: read_timeline_file, then the Chrome trace writer, the
// span-by-span comparison, the stacked trace of the two and the run metrics.
#include <cstddef>
#include <cstdint>

#include "analysis/metrics.h"
#include "analysis/stacked_timeline.h"
#include "analysis/timeline_comparison.h"
#include "fuzz_support.h"
#include "traces/chrome_trace.h"
#include "traces/timeline_proto_io.h"

using namespace pipetwin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile file;
  file.set(data, size);
  Timeline timeline;
  try {
    timeline = read_timeline_file(file.path());
  } catch (const std::runtime_error&) {
    return 0;  // not a timeline: `pipetwin trace` says so (exit code 2)
  }
  fuzz::expect_only_reader_errors([&] { (void)chrome_trace_json(timeline); });
  fuzz::expect_only_reported_errors([&] {
    (void)compare_timelines(timeline, timeline);
    (void)compute_metrics(timeline, 1, 1);
  });
  fuzz::expect_only_reader_errors(
      [&] { (void)chrome_trace_json(stack_timelines(timeline, "A", timeline, "B")); });
  return 0;
}
