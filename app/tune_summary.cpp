#include "app/tune_summary.h"

#include "report/text_units.h"

namespace pipetwin {
namespace {

nlohmann::json point_json(const TunePoint& p) {
  return {{"set", config_overrides(p.config)},
          {"name", config_name(p.config)},
          {"iteration_time_s", p.iteration_time_s},
          {"throughput_samples_per_s", p.throughput_samples_per_s},
          {"peak_memory_bytes", p.peak_memory_bytes},
          {"evaluator", evaluator_name(p.evaluator)}};
}

nlohmann::json points_json(const std::vector<TunePoint>& points) {
  nlohmann::json list = nlohmann::json::array();
  for (const TunePoint& p : points) list.push_back(point_json(p));
  return list;
}

void print_point(std::ostream& out, const char* label, const TunePoint& p) {
  out << label << config_name(p.config) << "\n"
      << "    " << format_seconds(p.iteration_time_s) << " per iteration, "
      << format_number("%.2f", p.throughput_samples_per_s) << " samples/s, "
      << format_gib(static_cast<double>(p.peak_memory_bytes)) << " GiB peak ("
      << evaluator_name(p.evaluator) << ")\n";
}

}  // namespace

nlohmann::json tune_json(const TuneRun& run) {
  const TuneResult& r = run.result;
  nlohmann::json skipped = nlohmann::json::object();
  for (const auto& [reason, count] : r.skipped) skipped[reason] = count;
  nlohmann::json j = {{"scenario", run.scenario},
                      {"best", r.best ? point_json(*r.best) : nlohmann::json(nullptr)},
                      {"own", point_json(r.own)},
                      {"own_fast", r.own_fast ? point_json(*r.own_fast) : nlohmann::json(nullptr)},
                      {"pareto", points_json(r.pareto)},
                      {"refined", points_json(r.refined)},
                      {"simgrid", points_json(run.simgrid)},
                      {"evaluated", r.evaluated},
                      {"skipped", skipped},
                      {"memory_limit_bytes", r.memory_limit_bytes},
                      {"best_fast_rank", r.best_fast_rank},
                      {"wall_s", run.wall_s}};
  j["speedup_over_own"] =
      r.best ? nlohmann::json(r.own.iteration_time_s / r.best->iteration_time_s) : nullptr;
  return j;
}

void print_tune_summary(std::ostream& out, const TuneRun& run) {
  const TuneResult& r = run.result;
  int64_t skipped = 0;
  for (const auto& [reason, count] : r.skipped) skipped += count;
  out << "tune " << run.scenario << ": " << r.evaluated << " configurations evaluated, " << skipped
      << " skipped, in " << format_seconds(run.wall_s) << " (memory limit "
      << format_gib(r.memory_limit_bytes) << " GiB)\n\n";
  if (r.best) {
    print_point(out, "best:  ", *r.best);
  } else {
    out << "best:  none fits the memory limit\n";
  }
  print_point(out, "own:   ", r.own);
  if (r.best) {
    out << "       the best is "
        << format_number("%.3f", r.own.iteration_time_s / r.best->iteration_time_s)
        << "x the own configuration's throughput\n";
  }
  if (!run.simgrid.empty()) {
    out << "\nSimGrid on the engine's best " << run.simgrid.size() << ":\n";
    for (const TunePoint& p : run.simgrid) print_point(out, "  ", p);
  }
  out << "\nPareto front (fast evaluator: throughput against peak memory):\n";
  for (const TunePoint& p : r.pareto) {
    out << "  " << format_gib(static_cast<double>(p.peak_memory_bytes)) << " GiB  "
        << format_seconds(p.iteration_time_s) << "  " << config_name(p.config) << "\n";
  }
  if (!r.skipped.empty()) {
    out << "\nskipped:\n";
    for (const auto& [reason, count] : r.skipped) out << "  " << count << "  " << reason << "\n";
  }
}

}  // namespace pipetwin
