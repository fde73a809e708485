#include "sim/tune/tune_search.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>

#include "sim/driver/simulate.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"
#include "sim/sweep/fork_pool.h"
#include "sim/tune/fast_estimate.h"

namespace pipetwin {
namespace {

// "schedule.stages: 16 stages need 16 microbatches" -> "schedule.stages: N stages need N
// microbatches": reasons that differ only in their numbers count together.
std::string reason_of(const std::string& message) {
  std::string text = message.substr(0, message.find('\n'));
  // The resolver names where the field was written; the tune wrote it.
  if (const size_t at = text.find(": "); text.rfind("--set ", 0) == 0 && at != std::string::npos) {
    text = text.substr(at + 2);
  }
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool in_name =
        i > 0 && (std::isalpha(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_');
    if (std::isdigit(static_cast<unsigned char>(text[i])) && !in_name) {
      while (i + 1 < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '.')) {
        ++i;
      }
      out += 'N';
    } else {
      out += text[i];
    }
  }
  return out;
}

TunePoint point(const TuneConfig& config, const ResolvedScenario& setup, double seconds,
                int64_t peak, Evaluator evaluator) {
  TunePoint p;
  p.config = config;
  p.iteration_time_s = seconds;
  p.throughput_samples_per_s = seconds > 0 ? setup.training.global_batch / seconds : 0;
  p.peak_memory_bytes = peak;
  p.evaluator = evaluator;
  return p;
}

double smallest_gpu_memory(const ResolvedScenario& setup) {
  double least = std::numeric_limits<double>::infinity();
  for (const DeviceSpec& d : setup.cluster.devices) least = std::min(least, d.memory_bytes);
  return least;
}

// The fast evaluator's verdict on one configuration, as one line a worker process sends back:
// "ok SECONDS BYTES" or "skip REASON".
std::string evaluate_line(const LoadedScenario& loaded, const TuneConfig& config,
                          const ResourceLimits& limits) {
  std::string reason;
  try {
    const std::optional<ResolvedScenario> setup = apply_config(loaded, config, reason);
    if (!setup) return "skip " + reason;
    std::ostringstream out;
    out.precision(17);
    if (const std::optional<FastEstimate> fast = estimate_fast(*setup)) {
      out << "ok " << fast->iteration_time_s << ' ' << fast->peak_memory_bytes;
    } else {  // a schedule without a fast model: the engine times it
      if (!fits_engine(*setup, Evaluator::kAnalytic, limits)) {
        return std::string("skip ") + kTooLargeForTheEngine;
      }
      const TunePoint p = simulate_config(*setup, config, Evaluator::kAnalytic, limits);
      out << "engine " << p.iteration_time_s << ' ' << p.peak_memory_bytes;
    }
    return out.str();
  } catch (const std::exception& e) {
    return "skip failed to evaluate: " + reason_of(e.what());
  }
}

struct Verdict {
  bool ok = false;
  bool by_engine = false;
  double seconds = 0;
  int64_t bytes = 0;
  std::string reason;
};

Verdict parse_verdict(const std::string& line) {
  Verdict v;
  std::istringstream in(line);
  std::string tag;
  in >> tag;
  if (tag == "ok" || tag == "engine") {
    v.ok = true;
    v.by_engine = tag == "engine";
    in >> v.seconds >> v.bytes;
  } else {
    std::getline(in >> std::ws, v.reason);
  }
  return v;
}

// line_of(i) for every i < count, each handed to take(i, line) in this process: computed here
// when there is one worker, else by `workers` child processes, each taking every workers-th
// block of `block` consecutive indices (a failed child is a RuntimeFailure naming `what`).
void lines_in_workers(size_t count, int32_t workers, size_t block,
                      const std::function<std::string(size_t)>& line_of,
                      const std::function<void(size_t, const std::string&)>& take,
                      const std::string& what) {
  const size_t shares = std::max<size_t>(1, std::min<size_t>(workers, count));
  if (shares == 1) {
    for (size_t i = 0; i < count; ++i) take(i, line_of(i));
    return;
  }
  const auto for_each_of = [&](size_t share, const auto& visit) {
    for (size_t first = share * block; first < count; first += shares * block) {
      for (size_t i = first; i < std::min(count, first + block); ++i) visit(i);
    }
  };
  run_in_children(
      shares, static_cast<int>(shares),
      [&](size_t share) {
        std::string out;
        for_each_of(share, [&](size_t i) { out += line_of(i) + '\n'; });
        return out;
      },
      [&](size_t share, ChildExit exit) {
        if (!exit.exited_cleanly()) {
          throw RuntimeFailure("tune: " + what + " " + describe_child_exit(exit.wait_status));
        }
        std::istringstream in(exit.output);
        std::string line;
        for_each_of(share, [&](size_t i) {
          if (std::getline(in, line)) take(i, line);
        });
      });
}

// Each configuration's verdict, in blocks of 16 consecutive configurations per worker:
// consecutive ones differ only in the memory choices (recomputation, ZeRO stage, offload), and
// a worker that evaluates them together reuses their zero-bubble orders
// (sim/schedule/recent_memo.h).
std::vector<Verdict> evaluate_all(const LoadedScenario& loaded,
                                  const std::vector<TuneConfig>& configs, int32_t workers,
                                  const ResourceLimits& limits) {
  std::vector<Verdict> verdicts(configs.size());
  lines_in_workers(
      configs.size(), workers, 16,
      [&](size_t i) { return evaluate_line(loaded, configs[i], limits); },
      [&](size_t i, const std::string& line) { verdicts[i] = parse_verdict(line); }, "a worker");
  return verdicts;
}

std::vector<TunePoint> pareto_front(std::vector<TunePoint> points) {
  std::sort(points.begin(), points.end(), [](const TunePoint& a, const TunePoint& b) {
    return a.peak_memory_bytes != b.peak_memory_bytes ? a.peak_memory_bytes < b.peak_memory_bytes
                                                      : a.iteration_time_s < b.iteration_time_s;
  });
  std::vector<TunePoint> front;
  for (const TunePoint& p : points) {
    if (front.empty() || p.iteration_time_s < front.back().iteration_time_s) front.push_back(p);
  }
  return front;
}

}  // namespace

const char* evaluator_name(Evaluator evaluator) {
  switch (evaluator) {
    case Evaluator::kFast:
      return "fast";
    case Evaluator::kAnalytic:
      return "analytic";
    case Evaluator::kSimgrid:
      return "simgrid";
  }
  return "?";
}

std::optional<ResolvedScenario> apply_config(const LoadedScenario& loaded, const TuneConfig& config,
                                             std::string& reason) {
  LoadedScenario variant;
  variant.source_name = loaded.source_name;
  variant.base_dir = loaded.base_dir;
  variant.builtin = loaded.builtin;
  try {
    variant.scenario = with_config(loaded.scenario, config, &variant.overrides);
    variant.scenario.mutable_training()->set_iterations(1);
    return resolve_scenario(variant);
  } catch (const InputError& e) {
    reason = reason_of(e.what());
    return std::nullopt;
  }
}

bool fits_engine(const ResolvedScenario& setup, Evaluator evaluator, const ResourceLimits& limits) {
  const Engine engine = evaluator == Evaluator::kSimgrid ? Engine::kSimgrid : Engine::kAnalytic;
  return within_limits(estimate_program_size(setup, {engine, false}), limits);
}

TunePoint simulate_config(const ResolvedScenario& setup, const TuneConfig& config,
                          Evaluator evaluator, const ResourceLimits& limits) {
  SimulationOptions options;
  options.limits = limits;
  options.engine = evaluator == Evaluator::kSimgrid ? Engine::kSimgrid : Engine::kAnalytic;
  options.timeline = false;
  options.allow_oom = true;
  const SimulationResult result = simulate_setup(setup, options);
  double makespan = 0;
  for (double end : result.times.end_s) makespan = std::max(makespan, end);
  int64_t peak = 0;
  for (const MemoryPeak& p : result.memory.peaks) peak = std::max(peak, p.bytes);
  return point(config, setup, makespan / std::max(1, setup.training.iterations), peak, evaluator);
}

namespace {

// Each configuration simulated by `evaluator`, in `workers` child processes, which print
// each time and peak exactly (%a).
std::vector<TunePoint> simulate_configs(
    const std::vector<std::pair<TuneConfig, ResolvedScenario>>& configs, Evaluator evaluator,
    int32_t workers, const ResourceLimits& limits) {
  std::vector<TunePoint> points(configs.size());
  lines_in_workers(
      configs.size(), workers, 1,
      [&](size_t i) {
        const TunePoint p = simulate_config(configs[i].second, configs[i].first, evaluator, limits);
        char line[96];
        std::snprintf(line, sizeof line, "%a %lld", p.iteration_time_s,
                      static_cast<long long>(p.peak_memory_bytes));
        return std::string(line);
      },
      [&](size_t i, const std::string& line) {
        std::istringstream in(line);
        std::string seconds;
        long long peak = 0;
        if (!(in >> seconds >> peak)) throw RuntimeFailure("tune: a simulation said nothing");
        points[i] = point(configs[i].first, configs[i].second,
                          std::strtod(seconds.c_str(), nullptr), peak, evaluator);
      },
      "a simulation");
  return points;
}

}  // namespace

TuneResult tune(const LoadedScenario& loaded, const TuneOptions& options) {
  ResolvedScenario base = resolve_scenario(loaded);
  base.training.iterations = 1;
  TuneSpace space = default_space(base);
  for (const std::string& fix : options.fixes) fix_choice(space, fix);
  if (options.max_memory_bytes < 0) throw InputError("--max-memory: must be positive");
  if (options.refine < 1) throw InputError("--refine: must be at least 1");

  TuneResult result;
  result.memory_limit_bytes =
      options.max_memory_bytes > 0 ? options.max_memory_bytes : smallest_gpu_memory(base);
  const std::vector<TuneConfig> configs = enumerate_configs(space, base, result.skipped);
  const int32_t workers = options.workers > 0 ? options.workers : available_cpus();
  const std::vector<Verdict> verdicts = evaluate_all(loaded, configs, workers, options.limits);

  std::vector<TunePoint> within;
  for (size_t i = 0; i < configs.size(); ++i) {
    const Verdict& v = verdicts[i];
    if (!v.ok) {
      result.skipped[v.reason] += 1;
      continue;
    }
    result.evaluated += 1;
    TunePoint p = point(configs[i], base, v.seconds, v.bytes,
                        v.by_engine ? Evaluator::kAnalytic : Evaluator::kFast);
    if (static_cast<double>(p.peak_memory_bytes) > result.memory_limit_bytes) {
      result.skipped["over the memory limit"] += 1;
      continue;
    }
    within.push_back(p);
  }
  result.pareto = pareto_front(within);

  // The engine decides among the fast evaluator's best.
  std::stable_sort(within.begin(), within.end(), [](const TunePoint& a, const TunePoint& b) {
    return a.iteration_time_s < b.iteration_time_s;
  });
  // Configurations the fast evaluator cannot tell apart (a choice that changes nothing, such as
  // selective recomputation where attention keeps no scores) are simulated once, the first.
  std::vector<std::pair<TuneConfig, ResolvedScenario>> chosen;
  for (size_t i = 0; i < within.size() && chosen.size() < static_cast<size_t>(options.refine);
       ++i) {
    if (i > 0 && within[i].iteration_time_s == within[i - 1].iteration_time_s &&
        within[i].peak_memory_bytes == within[i - 1].peak_memory_bytes) {
      continue;
    }
    std::string reason;
    std::optional<ResolvedScenario> setup = apply_config(loaded, within[i].config, reason);
    if (!fits_engine(*setup, Evaluator::kAnalytic, options.limits)) {
      result.skipped[kTooLargeForTheEngine] += 1;
      continue;
    }
    chosen.emplace_back(within[i].config, std::move(*setup));
  }
  // The scenario's own configuration is always simulated too: the best is never slower.
  const TuneConfig own = config_of(base);
  chosen.emplace_back(own, base);
  std::vector<TunePoint> simulated =
      simulate_configs(chosen, Evaluator::kAnalytic, workers, options.limits);
  result.own = simulated.back();
  simulated.pop_back();
  result.refined = std::move(simulated);
  if (std::none_of(result.refined.begin(), result.refined.end(),
                   [&](const TunePoint& p) { return p.config == own; })) {
    result.refined.push_back(result.own);
  }
  std::vector<size_t> rank(result.refined.size());
  for (size_t i = 0; i < rank.size(); ++i) rank[i] = i;
  std::stable_sort(rank.begin(), rank.end(), [&](size_t a, size_t b) {
    return result.refined[a].iteration_time_s < result.refined[b].iteration_time_s;
  });
  std::vector<TunePoint> sorted;
  for (size_t i : rank) sorted.push_back(result.refined[i]);
  result.refined = sorted;
  for (size_t k = 0; k < rank.size(); ++k) {
    if (static_cast<double>(result.refined[k].peak_memory_bytes) <= result.memory_limit_bytes) {
      result.best = result.refined[k];
      result.best_fast_rank = static_cast<int32_t>(rank[k]) + 1;
      break;
    }
  }

  if (const std::optional<FastEstimate> fast = estimate_fast(base)) {
    result.own_fast =
        point(own, base, fast->iteration_time_s, fast->peak_memory_bytes, Evaluator::kFast);
  }
  return result;
}

}  // namespace pipetwin
