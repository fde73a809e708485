// pipetwin.sweep, pipetwin.plan, pipetwin.tune, pipetwin.compare, pipetwin.goodput,
// pipetwin.straggler and pipetwin.whatif: the studies built on simulate (whatif: on a measured
// job), each returning what its command prints with --json.
#include <pybind11/stl.h>

#include <optional>

#include "analysis/op_trace.h"
#include "app/compare_run.h"
#include "app/goodput_run.h"
#include "app/measured_timeline.h"
#include "app/straggler_run.h"
#include "app/sweep_run.h"
#include "app/sweep_summary.h"
#include "app/tune_run.h"
#include "app/tune_summary.h"
#include "app/umpipe_plan_run.h"
#include "app/whatif_run.h"
#include "python/bindings.h"
#include "sim/spec/errors.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin::python {
namespace {

// {path: [v1, v2, ...]} -> the --vary texts "path=v1,v2"; a value holding a comma makes
// ';' the separator, as --vary reads it.
std::vector<std::string> vary_texts(const py::dict& vary) {
  std::vector<std::string> texts;
  for (const auto& [path, values] : vary) {
    std::vector<std::string> items;
    if (py::isinstance<py::str>(values)) {
      items.push_back(values.cast<std::string>());
    } else {
      for (const py::handle& value : values) items.push_back(value_text(value));
    }
    bool comma = false;
    for (const std::string& item : items) comma = comma || item.find(',') != std::string::npos;
    std::string text = py::str(path).cast<std::string>() + "=";
    for (size_t i = 0; i < items.size(); ++i) text += (i ? (comma ? ";" : ",") : "") + items[i];
    texts.push_back(text);
  }
  return texts;
}

py::object sweep(const Scenario& scenario, const py::dict& vary, int jobs,
                 const std::string& engine, bool allow_oom) {
  SweepRequest request{.scenario = scenario.source,
                       .vary = vary_texts(vary),
                       .overrides = scenario.overrides,
                       .engine = engine,
                       .jobs = jobs,
                       .allow_oom = allow_oom,
                       .shard = Shard{},
                       .limits = ResourceLimits{},
                       .progress = false};
  nlohmann::json rows;
  {
    py::gil_scoped_release release;  // the points run in forked children
    rows = sweep_json(run_sweep_grid(request).rows);
  }
  return to_python(rows);
}

py::object plan(const Scenario& scenario, const std::string& search, int32_t population,
                int32_t generations, uint64_t seed, int threads, int32_t max_microbatches,
                double min_gain) {
  if (search != "umpipe") {
    throw InputError("search " + search + ": unknown search for pipetwin.plan (available: umpipe)");
  }
  const UmpipePlanRequest request{.population = population,
                                  .generations = generations,
                                  .seed = seed,
                                  .threads = threads,
                                  .max_microbatches = max_microbatches,
                                  .min_gain = min_gain,
                                  .limits = ResourceLimits{},
                                  .progress = false};
  nlohmann::json j;
  {
    py::gil_scoped_release release;
    j = run_umpipe_plan(*scenario.loaded, request).json();
  }
  return to_python(j);
}

py::object tune(const Scenario& scenario, const std::vector<std::string>& fix,
                double max_memory_gib, int32_t refine, int32_t simgrid, int32_t jobs,
                const std::string& write_scenario) {
  TuneRunOptions options;
  options.search.fixes = fix;
  options.search.max_memory_bytes = max_memory_gib * 1024.0 * 1024.0 * 1024.0;
  options.search.refine = refine;
  options.search.workers = jobs;
  options.simgrid = simgrid;
  nlohmann::json j;
  {
    py::gil_scoped_release release;  // the fast evaluation runs in forked workers
    const TuneRun run = run_tune(*scenario.loaded, options);
    if (!write_scenario.empty()) write_best_scenario(*scenario.loaded, run, write_scenario);
    j = tune_json(run);
  }
  return to_python(j);
}

// A Result's timeline, or the timeline file at a path.
std::shared_ptr<const Timeline> timeline_of(const py::object& run, std::string& name,
                                            const std::string& label) {
  if (py::isinstance<Result>(run)) {
    name = label;
    return run.cast<const Result&>().timeline;
  }
  name = py::str(run).cast<std::string>();
  return std::make_shared<const Timeline>(read_any_timeline(name));
}

py::object compare(const py::object& a, const py::object& b,
                   const std::pair<std::string, std::string>& labels) {
  if (labels.first.empty() || labels.second.empty() || labels.first == labels.second) {
    throw InputError("labels: the two labels must be non-empty and different");
  }
  std::string name_a, name_b;
  const std::shared_ptr<const Timeline> ta = timeline_of(a, name_a, labels.first);
  const std::shared_ptr<const Timeline> tb = timeline_of(b, name_b, labels.second);
  nlohmann::json j;
  {
    py::gil_scoped_release release;
    const TimelineComparison c = compare_or_fail(*ta, name_a, *tb, name_b);
    j = comparison_json(c, name_a, name_b, labels, *ta, *tb);
  }
  return to_python(j);
}

py::object goodput(const Scenario& scenario, std::optional<double> tokens,
                   std::optional<int64_t> steps, std::optional<double> gpu_hour_cost,
                   int32_t monte_carlo, uint64_t seed, const std::string& engine, bool curves) {
  GoodputRequest request;
  request.scenario = scenario.source;
  request.overrides = scenario.overrides;
  request.tokens = tokens;
  request.steps = steps;
  request.gpu_hour_cost = gpu_hour_cost;
  request.monte_carlo_runs = monte_carlo;
  request.seed = seed;
  request.engine = parse_engine(engine);
  request.curves = curves;
  nlohmann::json j;
  {
    py::gil_scoped_release release;
    j = run_goodput(request).json();
  }
  return to_python(j);
}

py::object straggler(const Scenario& scenario, const std::vector<double>& factors,
                     const std::string& devices, bool links, const std::string& engine, int jobs) {
  StragglerRequest request;
  request.scenario = scenario.source;
  request.overrides = scenario.overrides;
  request.factors = factors;
  request.devices = devices;
  request.links = links;
  request.engine = engine;
  request.jobs = jobs;
  nlohmann::json j;
  {
    py::gil_scoped_release release;  // the points run in forked children
    j = run_straggler(request).json();
  }
  return to_python(j);
}

py::object whatif(const std::string& trace, const std::string& meta) {
  nlohmann::json j;
  {
    py::gil_scoped_release release;
    j = whatif_json(what_if(read_megatron_op_trace(trace, meta)));
  }
  return to_python(j);
}

}  // namespace

void bind_studies(py::module_& m) {
  m.def("whatif", &whatif, py::arg("trace"), py::arg("meta"),
        "A measured Megatron job's op timeline (`trace`, gzipped or not, with its parallel "
        "sizes in `meta`) replayed without its stragglers, as `pipetwin whatif --json`: step_s, "
        "replayed_step_s, no_delay_step_s, ideal_step_s, slowdown, by_stage, by_dp_rank, by_op.");
  m.def("goodput", &goodput, py::arg("scenario"), py::arg("tokens") = py::none(),
        py::arg("steps") = py::none(), py::arg("gpu_hour_cost") = py::none(),
        py::arg("monte_carlo") = 10000, py::arg("seed") = 1, py::arg("engine") = "analytic",
        py::arg("curves") = false,
        "Prices the whole training run (`tokens` or `steps`; else the scenario's run section) "
        "under failures, checkpoints and restarts as `pipetwin goodput --json` does, and returns "
        "its object: step_s, steps, mttf_h, checkpoint_interval_s, checkpoint_write_s, ettr, "
        "days, gpu_hours, cost, monte_carlo; with `curves`, the report's curves too.");
  m.def("straggler", &straggler, py::arg("scenario"), py::arg("factors"), py::arg("devices") = "",
        py::arg("links") = false, py::arg("engine") = "analytic", py::arg("jobs") = 0,
        "One slow device at each position (`devices`, default every GPU of replica 0) and "
        "speed factor, as `pipetwin straggler --json`: points, by_stage, by_dp_rank, "
        "by_tp_rank, by_op.");
  m.def("sweep", &sweep, py::arg("scenario"), py::arg("vary"), py::arg("jobs") = 0,
        py::arg("engine") = "analytic", py::arg("allow_oom") = false,
        "Simulates every point of the grid {path: [values]} over the scenario (its overrides "
        "hold at every point), each in its own process, `jobs` at once (0: one per CPU). "
        "Returns the rows of `pipetwin sweep --json`, fastest first.");
  m.def("plan", &plan, py::arg("scenario"), py::arg("search") = "umpipe",
        py::arg("population") = 256, py::arg("generations") = 100, py::arg("seed") = 1,
        py::arg("threads") = 0, py::arg("max_microbatches") = 0, py::arg("min_gain") = 0.05,
        "Searches a plan of unequal microbatches (UMPIPE) as `pipetwin plan --search umpipe "
        "--json` does, and returns its object.");
  m.def("tune", &tune, py::arg("scenario"), py::arg("fix") = std::vector<std::string>{},
        py::arg("max_memory_gib") = 0.0, py::arg("refine") = 10, py::arg("simgrid") = 2,
        py::arg("jobs") = 0, py::arg("write_scenario") = "",
        "Searches the fastest configuration within the memory limit (0: the GPU's) as "
        "`pipetwin tune --json` does, `fix` pinning choices (['schedule.kind=ZB_H1', ...]), and "
        "returns its object: best, own, pareto, evaluated, skipped, wall_s.");
  m.def("compare", &compare, py::arg("a"), py::arg("b"),
        py::arg("labels") = std::pair<std::string, std::string>("A", "B"),
        "Compares two runs span by span (Results, or timeline files written by "
        "simulate --timeline); A is the reference. Returns `pipetwin compare --json`'s object.");
}

}  // namespace pipetwin::python
