// A measured job's parallel sizes (analysis/op_trace.h, the YAML `--meta` file): the input is
// the meta file, read beside a fixed one-step op timeline of the straggler study's shape (DP
// 2, PP 2) as `pipetwin whatif` and `import --meta` read them, then imported as a timeline.
// Bad input is an InputError or RuntimeFailure (sizes the trace's ranks contradict), nothing
// else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/op_trace.h"
#include "analysis/op_trace_timeline.h"
#include "fuzz_support.h"

using namespace pipetwin;

namespace {

// One step of two data-parallel ranks and two stages: a forward and a backward each, a
// transfer each way.
std::string one_step() {
  std::string events;
  auto event = [&](int pid, int tid, const char* name, double ts, double dur, int mb) {
    if (!events.empty()) events += ",";
    events += "{\"name\":\"" + std::string(name) + "\",\"ph\":\"X\",\"pid\":" +
              std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
              ",\"ts\":" + std::to_string(ts) + ",\"dur\":" + std::to_string(dur) +
              ",\"args\":{\"step\":1,\"model_chunk\":" + (mb >= 0 ? "0" : "-1") +
              ",\"mb_id\":" + std::to_string(mb) + ",\"seq_id\":0}}";
  };
  for (int dp = 0; dp < 2; ++dp) {
    const int stage0 = dp * 10, stage1 = dp * 10 + 5;
    event(dp, stage0, "forward-compute", 0, 10, 0);
    event(dp, stage0 + 1, "forward-send", 10, 1, -1);
    event(dp, stage1 + 1, "forward-recv", 10, 1, -1);
    event(dp, stage1, "forward-compute", 11, 10, 0);
    event(dp, stage1, "backward-compute", 21, 20, 0);
    event(dp, stage1 + 1, "backward-send", 41, 1, -1);
    event(dp, stage0 + 1, "backward-recv", 41, 1, -1);
    event(dp, stage0, "backward-compute", 42, 20, 0);
  }
  return "[" + events + "]";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile timeline;
  static fuzz::MemoryFile meta;
  static const bool written = [] {
    const std::string text = one_step();
    timeline.set(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    return true;
  }();
  (void)written;
  meta.set(data, size);
  fuzz::expect_only_reported_errors(
      [&] { timeline_from_op_trace(read_megatron_op_trace(timeline.path(), meta.path())); });
  return 0;
}
