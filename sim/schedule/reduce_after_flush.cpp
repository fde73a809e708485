#include "sim/schedule/reduce_after_flush.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "sim/program/dependency_edges.h"

namespace pipetwin {

void reduce_after_flush(Program& program) {
  // The last weight-gradient pass of each device and iteration, in compute-lane order.
  std::map<std::pair<int32_t, int32_t>, int32_t> flush;
  for (int32_t device = 0; device < program.num_devices; ++device) {
    const int32_t lane = device * kLaneCount + static_cast<int>(Lane::kCompute);
    for (int32_t i = program.lane_begin[lane]; i < program.lane_begin[lane + 1]; ++i) {
      const Instruction& c = program.instructions[i];
      if (computes_weight_gradient(c.op)) flush[{device, c.iteration}] = i;
    }
  }
  // Each reduction's extra dependency, where it lacks it. Appended, it comes last in its
  // row (the tables keep each row's edges in list order).
  DependencyEdges added;
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& r = program.instructions[i];
    if (r.lane() != Lane::kDataParallel || (r.op != Op::kAllreduce && r.op != Op::kReduceScatter)) {
      continue;
    }
    const auto last = flush.find({r.device, r.iteration});
    if (last == flush.end()) continue;
    const auto deps = program.deps_of(i);
    if (std::find(deps.begin(), deps.end(), last->second) == deps.end()) {
      added.emplace_back(i, last->second);
    }
  }
  if (added.empty()) return;
  DependencyEdges edges = dependency_edges(program);
  edges.insert(edges.end(), added.begin(), added.end());
  set_dependencies(program, edges);
}

}  // namespace pipetwin
