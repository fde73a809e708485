#include "app/freeze_summary.h"

#include <cmath>
#include <string>

#include "report/text_units.h"

namespace pipetwin {
namespace {

std::string plan_text(const PhasePlan& plan) {
  std::string text;
  for (int32_t count : plan.partition) {
    if (!text.empty()) text += ',';
    text += std::to_string(count);
  }
  return text;
}

}  // namespace

nlohmann::json freeze_run_json(const std::vector<TrainingPhase>& phases,
                               const std::vector<Migration>& migrations) {
  nlohmann::json phase_list = nlohmann::json::array(), events = nlohmann::json::array();
  for (size_t k = 0; k < phases.size(); ++k) {
    const TrainingPhase& p = phases[k];
    phase_list.push_back({{"first_iteration", p.first_iteration},
                          {"iterations", p.iterations},
                          {"frozen_layers", p.plan.frozen_layers},
                          {"cached_layers", p.plan.cached_layers},
                          {"stages", p.plan.stages},
                          {"data_parallel", p.plan.data_parallel},
                          {"partition", p.plan.partition},
                          {"iteration_time_s", p.iteration_time_s}});
    if (k == 0) continue;
    const Migration& m = migrations[k - 1];
    events.push_back({{"iteration", p.first_iteration},
                      {"frozen_layers", p.plan.frozen_layers},
                      {"stages", p.plan.stages},
                      {"data_parallel", p.plan.data_parallel},
                      {"iteration_time_before_s", phases[k - 1].iteration_time_s},
                      {"iteration_time_after_s", p.iteration_time_s},
                      {"migration_bytes", m.bytes},
                      {"migration_s", m.seconds}});
  }
  return {{"phases", phase_list}, {"freeze_events", events}};
}

void print_freeze_phases(std::ostream& out, const std::vector<TrainingPhase>& phases,
                         const std::vector<Migration>& migrations) {
  out << "iterations     frozen  cached  stages x replicas  partition        iteration   "
         "migration\n";
  for (size_t k = 0; k < phases.size(); ++k) {
    const TrainingPhase& p = phases[k];
    const std::string range = std::to_string(p.first_iteration) + "-" +
                              std::to_string(p.first_iteration + p.iterations - 1);
    const std::string shape =
        std::to_string(p.plan.stages) + " x " + std::to_string(p.plan.data_parallel);
    std::string moved = "-";
    if (k > 0) {
      const Migration& m = migrations[k - 1];
      moved = format_bytes(static_cast<double>(m.bytes)) + " in " + format_seconds(m.seconds);
    }
    out << pad(range, 15) << pad(std::to_string(p.plan.frozen_layers), 8)
        << pad(std::to_string(p.plan.cached_layers), 8) << pad(shape, 19)
        << pad(plan_text(p.plan), 17) << pad(format_seconds(p.iteration_time_s), 12) << moved
        << "\n";
  }
}

}  // namespace pipetwin

namespace pipetwin {

nlohmann::json autocache_json(const ResolvedScenario& setup, const TrainingRun& run) {
  nlohmann::json caches = nlohmann::json::array();
  for (const CacheEvent& c : run.caches) {
    caches.push_back({{"iteration", c.iteration},
                      {"cached_layers", c.cached_layers},
                      {"cache_bytes", c.bytes},
                      {"used", c.used},
                      {"read_bytes_per_iteration", c.read_bytes_per_iteration}});
  }
  return {{"epoch_iterations", setup.freeze.cache_epoch_iterations}, {"caches", caches}};
}

void print_autocache(std::ostream& out, const ResolvedScenario& setup, const TrainingRun& run) {
  if (run.caches.empty()) {
    out << "AutoCache      no frozen prefix stayed frozen for an epoch ("
        << setup.freeze.cache_epoch_iterations
        << " iterations) before the run's end with a cache that fits in host memory\n";
    return;
  }
  for (const CacheEvent& c : run.caches) {
    out << "AutoCache      from iteration " << c.iteration << ": " << c.cached_layers
        << " layers from a " << format_bytes(static_cast<double>(c.bytes))
        << " cache in host memory, "
        << format_bytes(static_cast<double>(c.read_bytes_per_iteration)) << " per iteration"
        << (c.used ? "" : "; not used, running them is no slower") << "\n";
  }
}

}  // namespace pipetwin
