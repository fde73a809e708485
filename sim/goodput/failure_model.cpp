#include "sim/goodput/failure_model.h"

#include <limits>

namespace pipetwin {

FailureModel llama3_failure_model() {
  constexpr double kHours = 54 * 24;
  constexpr double kGpuHours = 16'384 * kHours;
  constexpr double kNodeHours = 2'048 * kHours;
  using Unit = FailureCause::Unit;
  struct Row {
    const char* name;
    Unit unit;
    int count;
  };
  constexpr Row kTable[] = {
      {"Faulty GPU", Unit::kGpu, 148},
      {"GPU HBM3 memory", Unit::kGpu, 72},
      {"Software bug", Unit::kNode, 54},
      {"Network switch/cable", Unit::kNode, 35},
      {"Host maintenance", Unit::kNode, 32},
      {"GPU SRAM memory", Unit::kGpu, 19},
      {"GPU system processor", Unit::kGpu, 17},
      {"NIC", Unit::kNode, 7},
      {"NCCL watchdog timeouts", Unit::kNode, 7},
      {"Silent data corruption", Unit::kGpu, 6},
      {"GPU thermal interface + sensor", Unit::kGpu, 6},
      {"SSD", Unit::kNode, 3},
      {"Power supply", Unit::kNode, 3},
      {"Server chassis", Unit::kNode, 2},
      {"IO expansion board", Unit::kNode, 2},
      {"Dependency", Unit::kNode, 2},
      {"CPU", Unit::kNode, 2},
      {"System memory", Unit::kNode, 2},
  };
  FailureModel model;
  for (const Row& row : kTable) {
    const double unit_hours = row.unit == Unit::kGpu ? kGpuHours : kNodeHours;
    model.causes.push_back({row.name, row.unit, row.count / unit_hours});
  }
  return model;
}

FailureModel node_failure_model(double per_1000_node_days) {
  return {{{"node", FailureCause::Unit::kNode, per_1000_node_days / (1000 * 24.0)}}};
}

double job_failures_per_hour(const FailureModel& model, int64_t gpus, int64_t nodes) {
  double rate = 0;
  for (const FailureCause& cause : model.causes) {
    const auto units = static_cast<double>(cause.unit == FailureCause::Unit::kGpu ? gpus : nodes);
    rate += cause.per_unit_hour * units;
  }
  return rate;
}

double job_mttf_hours(const FailureModel& model, int64_t gpus, int64_t nodes) {
  const double rate = job_failures_per_hour(model, gpus, nodes);
  return rate > 0 ? 1 / rate : std::numeric_limits<double>::infinity();
}

}  // namespace pipetwin
