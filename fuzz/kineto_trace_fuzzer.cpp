// PyTorch profiler (Kineto) traces (analysis/kineto_trace.h): the input is one rank's trace,
// imported with the default annotation rules as `pipetwin import` does. Bad input is an
// InputError, nothing else.
#include <cstddef>
#include <cstdint>

#include "analysis/kineto_trace.h"
#include "fuzz_support.h"

using namespace pipetwin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile trace;
  static const std::vector<AnnotationRule> rules = default_annotation_rules();
  trace.set(data, size);
  fuzz::expect_only_reported_errors([&] { timeline_from_kineto({trace.path()}, rules); });
  return 0;
}
