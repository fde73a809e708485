// `import --map` files (analysis/kineto_trace.h, read_annotation_rules): the input is the map,
// one "REGEX = OP" rule per line; its rules then import a fixed profiler trace whose kernels
// sit under forward, backward and optimizer ranges, as `pipetwin import --map` does. Bad input
// is an InputError, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/kineto_trace.h"
#include "fuzz_support.h"

using namespace pipetwin;

namespace {

// One rank: three GPU ranges, a kernel under each and an NCCL kernel.
std::string one_rank() {
  std::string events;
  auto event = [&](const char* cat, const char* name, double ts, double dur) {
    if (!events.empty()) events += ",";
    events += "{\"ph\":\"X\",\"cat\":\"" + std::string(cat) + "\",\"name\":\"" + name +
              "\",\"pid\":0,\"tid\":7,\"ts\":" + std::to_string(ts) +
              ",\"dur\":" + std::to_string(dur) + ",\"args\":{\"stream\":7}}";
  };
  const char* ranges[] = {"## forward ##", "## backward ##", "Optimizer.step#Adam.step"};
  for (int k = 0; k < 3; ++k) {
    event("gpu_user_annotation", ranges[k], 100.0 * k, 90);
    event("kernel", "sm90_xmma_gemm_bf16", 100.0 * k + 5, 80);
  }
  event("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 400, 50);
  return "{\"schemaVersion\":1,\"distributedInfo\":{\"rank\":0},\"traceEvents\":[" + events + "]}";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile trace;
  static fuzz::MemoryFile map;
  static const bool written = [] {
    const std::string text = one_rank();
    trace.set(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    return true;
  }();
  (void)written;
  map.set(data, size);
  fuzz::expect_only_reported_errors(
      [&] { timeline_from_kineto({trace.path()}, read_annotation_rules(map.path())); });
  return 0;
}
