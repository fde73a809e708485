#include "sim/schedule/lowering_context.h"

#include <algorithm>

namespace pipetwin {

LoweringContext::LoweringContext(const PipelineLayout& layout, bool run_wide)
    : layout_(layout),
      num_stages_(static_cast<int32_t>(layout.stage_device.size())),
      replica_batch_(layout.global_batch / layout.replicas),
      stage_replicas_(StageReplicas::of(layout.stage_replicas, num_stages_)),
      run_wide_(run_wide) {}

int32_t LoweringContext::stage_replica(int32_t stage, int32_t it, int32_t m) const {
  if (stage_replicas_.replicas(stage) == 1) return 0;
  const int64_t j = run_wide_ ? static_cast<int64_t>(it) * count(Op::kFwd, stage) + m : m;
  return stage_replicas_.replica_of(stage, j);
}

int32_t LoweringContext::update_iteration(int32_t stage, int32_t it, int32_t m,
                                          bool update_every_microbatch) const {
  const int32_t r = stage_replicas_.replicas(stage);
  if (r == 1 || !update_every_microbatch) return it;
  const int32_t per_iteration = count(Op::kBwd, stage);
  const int64_t j = static_cast<int64_t>(it) * per_iteration + m;
  return static_cast<int32_t>(j / r * r / per_iteration);
}

int32_t LoweringContext::copies(int32_t s) const {
  if (layout_.model_stage.empty()) return 1;
  return static_cast<int32_t>(
      std::count(layout_.model_stage.begin(), layout_.model_stage.end(), model_stage(s)));
}

}  // namespace pipetwin
