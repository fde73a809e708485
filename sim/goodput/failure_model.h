// Failure rates of a training job: a list of causes, each with its rate per GPU or per node
// and hour, so a rate measured on one cluster scales to a job of any size. A job on G GPUs
// over N nodes sees the sum over causes of rate * G or rate * N interruptions per hour, and
// its mean time to failure is the inverse: the reason large jobs fail every few hours.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pipetwin {

// A cause of job interruptions, with its rate per unit (a GPU or a node) and hour.
struct FailureCause {
  std::string name;
  enum class Unit { kGpu, kNode } unit = Unit::kNode;
  double per_unit_hour = 0;
};

struct FailureModel {
  std::vector<FailureCause> causes;
};

// Llama 3's table 5 ("The Llama 3 Herd of Models", arXiv 2407.21783): 419 unexpected
// interruptions in a 54-day snapshot of 405B pre-training on 16,384 H100s (2,048 nodes of 8).
// The GPU-side causes (faulty GPU, HBM3, SRAM, GPU system processor, silent data corruption,
// thermal interface and sensor) are per GPU, count / (16,384 * 54 * 24) per GPU-hour; the
// others per node, count / (2,048 * 54 * 24) per node-hour.
FailureModel llama3_failure_model();

// One cause, per node: `per_1000_node_days` interruptions per 1,000 node-days (Meta's research
// clusters measured 6.50, arXiv 2410.21680).
FailureModel node_failure_model(double per_1000_node_days);

// Interruptions per hour of a job on `gpus` GPUs over `nodes` nodes.
double job_failures_per_hour(const FailureModel& model, int64_t gpus, int64_t nodes);

// 1 / job_failures_per_hour; +infinity when the job never fails.
double job_mttf_hours(const FailureModel& model, int64_t gpus, int64_t nodes);

}  // namespace pipetwin
