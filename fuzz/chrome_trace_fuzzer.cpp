// Chrome/Perfetto trace JSON through read_chrome_trace (traces/chrome_trace.h), and what it
// read back through the writer: a trace that reads must write again, or be refused with
// std::invalid_argument.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "traces/chrome_trace.h"

using namespace pipetwin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_only_reader_errors([&] {
    const Timeline timeline =
        read_chrome_trace(std::string(reinterpret_cast<const char*>(data), size));
    (void)chrome_trace_json(timeline);
  });
  return 0;
}
