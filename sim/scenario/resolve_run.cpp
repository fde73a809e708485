#include "sim/scenario/resolve_run.h"

#include <cmath>
#include <string>

namespace pipetwin {
namespace {

// Finite and not negative: rates, times and prices of a run.
void finite_non_negative(const ScenarioChecker& check, double value, const std::string& path) {
  if (!(value >= 0 && std::isfinite(value))) {
    check.fail(path, "must be a finite number of at least 0, got " + number_text(value));
  }
}

void finite_positive(const ScenarioChecker& check, double value, const std::string& path) {
  if (!(value > 0 && std::isfinite(value))) {
    check.fail(path, "must be a finite number above 0, got " + number_text(value));
  }
}

FailureModel resolve_failures(const ScenarioChecker& check, const proto::Failures& f) {
  if (f.has_per_1000_node_days() && f.causes_size() > 0) {
    check.fail("run.failures.causes",
               "either per_1000_node_days over all causes, or causes of their own, not both");
  }
  if (f.has_per_1000_node_days()) {
    finite_non_negative(check, f.per_1000_node_days(), "run.failures.per_1000_node_days");
    return node_failure_model(f.per_1000_node_days());
  }
  FailureModel model;
  for (int i = 0; i < f.causes_size(); ++i) {
    const proto::FailureCause& c = f.causes(i);
    const std::string path = "run.failures.causes[" + std::to_string(i) + "]";
    if (c.has_per_1000_gpu_days() == c.has_per_1000_node_days()) {
      check.fail(path, "needs one rate: per_1000_gpu_days or per_1000_node_days");
    }
    const bool per_gpu = c.has_per_1000_gpu_days();
    const double rate = per_gpu ? c.per_1000_gpu_days() : c.per_1000_node_days();
    finite_non_negative(check, rate,
                        path + (per_gpu ? ".per_1000_gpu_days" : ".per_1000_node_days"));
    model.causes.push_back({c.has_name() ? c.name() : "cause " + std::to_string(i),
                            per_gpu ? FailureCause::Unit::kGpu : FailureCause::Unit::kNode,
                            rate / (1000 * 24.0)});
  }
  return model;
}

}  // namespace

RunSpec resolve_run(const ScenarioChecker& check, const proto::Scenario& scenario) {
  const proto::Run& r = scenario.run();
  RunSpec spec;
  if (r.has_tokens() && r.has_steps()) {
    check.fail("run.steps", "give the run's length once: run.tokens or run.steps");
  }
  if (r.has_tokens()) {
    finite_positive(check, r.tokens(), "run.tokens");
    spec.tokens = r.tokens();
  }
  if (r.has_steps()) {
    finite_positive(check, static_cast<double>(r.steps()), "run.steps");
    spec.steps = r.steps();
  }
  spec.default_failures = !r.has_failures();
  spec.failures = r.has_failures() ? resolve_failures(check, r.failures()) : llama3_failure_model();

  const proto::Checkpoint& c = r.checkpoint();
  finite_non_negative(check, static_cast<double>(c.interval_steps()),
                      "run.checkpoint.interval_steps");
  spec.checkpoint.interval_steps = c.interval_steps();
  spec.checkpoint.asynchronous = c.asynchronous();
  for (const auto& [value, field] :
       {std::pair{c.node_gbytes_per_s(), "node_gbytes_per_s"},
        std::pair{c.storage_write_gbytes_per_s(), "storage_write_gbytes_per_s"},
        std::pair{c.storage_read_gbytes_per_s(), "storage_read_gbytes_per_s"}}) {
    finite_positive(check, value, std::string("run.checkpoint.") + field);
  }
  spec.checkpoint.node_bytes_per_s = c.node_gbytes_per_s() * 1e9;
  spec.checkpoint.storage_write_bytes_per_s = c.storage_write_gbytes_per_s() * 1e9;
  spec.checkpoint.storage_read_bytes_per_s = c.storage_read_gbytes_per_s() * 1e9;
  if (c.asynchronous() && !scenario.cluster().has_host_link()) {
    check.fail("run.checkpoint.asynchronous",
               "snapshots to host memory over cluster.host_link, which is missing");
  }

  const proto::Restart& s = r.restart();
  for (const auto& [value, field] :
       {std::pair{s.detect_s(), "detect_s"}, std::pair{s.reschedule_s(), "reschedule_s"},
        std::pair{s.replace_node_s(), "replace_node_s"}, std::pair{s.warmup_s(), "warmup_s"}}) {
    finite_non_negative(check, value, std::string("run.restart.") + field);
  }
  spec.restart = {s.detect_s(), s.reschedule_s(), s.hot_spares(), s.replace_node_s(), s.warmup_s()};
  finite_non_negative(check, r.gpu_hour_cost(), "run.gpu_hour_cost");
  spec.gpu_hour_cost = r.gpu_hour_cost();
  return spec;
}

}  // namespace pipetwin
