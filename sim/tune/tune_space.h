// What `pipetwin tune` searches: the candidates of each choice (tensor, context, pipeline,
// data and expert parallelism, virtual stages, microbatch size, schedule, recomputation,
// ZeRO stage, offload), by default those the model and the cluster allow, narrowed by
// --fix FIELD=VALUE[,VALUE...].
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/spec/resolved_scenario.h"
#include "sim/tune/tune_config.h"

namespace pipetwin {

// A schedule and, for ZB_AUTO, its memory limit in multiples of the stage count (1: ZB-1p at
// 1F1B's memory, 2: ZB-2p), or an absolute limit in microbatches.
struct ScheduleChoice {
  proto::ScheduleKind kind = proto::ONE_F_ONE_B;
  double limit_per_stage = 0;     // 0: not ZB_AUTO, or the absolute limit below
  double limit_microbatches = 0;  // an absolute ZB_AUTO limit (pinned by --fix)
};

struct TuneSpace {
  std::vector<int32_t> tensor_parallel, context_parallel, stages, expert_parallel;
  std::vector<int32_t> virtual_stages;    // interleaved 1F1B's (other schedules take 1)
  std::vector<int32_t> microbatch_sizes;  // samples per microbatch
  std::vector<int32_t> data_parallel;     // empty: whatever the GPUs leave
  std::vector<int32_t> microbatches;      // empty: whatever the microbatch size gives
  std::vector<ScheduleChoice> schedules;
  std::vector<proto::Training::Recompute> recompute;
  std::vector<int32_t> zero_stages;
  std::vector<bool> offload;
};

// The candidates the model and the cluster allow: tensor parallelism up to a node's GPUs,
// context parallelism for sequences of 8K tokens or more (up to one GPU per 4K tokens, 16 at
// most), pipelines of powers of two up to the model's layers, expert parallelism over the
// experts' divisors, microbatches of 1 to 8 samples, the schedules with a fast model but
// GPipe (1F1B takes its time with less memory), DualPipe included, recomputation for transformers,
// every ZeRO stage, no offload. A scenario that offloads keeps its offload.
TuneSpace default_space(const ResolvedScenario& base);

// The --fix names, in the order --help lists them.
const std::vector<std::string>& tune_field_names();

// Narrows one choice to the listed values ("schedule.kind=ZB_H1,ZB_V", "training.zero_stage=1").
// Throws InputError naming the field (with a suggestion for a typo) or the value.
void fix_choice(TuneSpace& space, const std::string& assignment);

// Skipped combinations, by reason.
using SkipCounts = std::map<std::string, int64_t>;

// Every combination of the space on the base scenario's GPUs and global batch, less those
// that cannot run (counted in `skipped` by reason; the resolver judges the rest).
std::vector<TuneConfig> enumerate_configs(const TuneSpace& space, const ResolvedScenario& base,
                                          SkipCounts& skipped);

}  // namespace pipetwin
