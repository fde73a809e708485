// Measured jobs' op timelines (analysis/op_trace.h): the input is the timeline, read beside a
// fixed meta file (DP 2, PP 2) as `pipetwin whatif` reads them, then the what-if analysis of
// what was read. Bad input is an InputError or RuntimeFailure (a trace whose ops contradict
// Megatron's schedule), nothing else.
#include <cstddef>
#include <cstdint>

#include "analysis/op_trace.h"
#include "analysis/whatif.h"
#include "fuzz_support.h"

using namespace pipetwin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile timeline;
  static fuzz::MemoryFile meta;
  static const bool meta_written = [] {
    const std::string text = "trial_name: fuzz\ndp_size: 2\npp_size: 2\ntp_size: 1\n";
    meta.set(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    return true;
  }();
  (void)meta_written;
  timeline.set(data, size);
  fuzz::expect_only_reported_errors(
      [&] { what_if(read_megatron_op_trace(timeline.path(), meta.path())); });
  return 0;
}
