#include "app/plan_pipedream.h"

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/pipedream_plan_file.h"
#include "report/html_page.h"
#include "report/plan_page.h"
#include "report/text_units.h"
#include "sim/planner/pipedream_planner.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

std::string devices_text(const ResolvedScenario& setup, const std::vector<int>& devices) {
  std::string text;
  for (int d : devices) text += (text.empty() ? "" : ",") + setup.cluster.devices[d].name;
  return text;
}

// What limits the plan: the slowest stage or cut.
std::string bottleneck_text(const PipedreamPlan& plan) {
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const PlannedStageCost& c = plan.stages[s].cost;
    if (c.time_s == plan.bottleneck_s) return "stage " + std::to_string(s);
    if (c.cut_s == plan.bottleneck_s) {
      return "cut " + std::to_string(s) + "->" + std::to_string(s + 1);
    }
  }
  return "";
}

nlohmann::json plan_json(const ResolvedScenario& setup, const PipedreamPlan& plan,
                         const PipedreamPlanArgs& args, double wall_s) {
  nlohmann::json stages = nlohmann::json::array();
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const PlannedStage& stage = plan.stages[s];
    nlohmann::json devices = nlohmann::json::array();
    for (int d : stage.devices) devices.push_back(setup.cluster.devices[d].name);
    stages.push_back({{"stage", s},
                      {"layers", stage.layers},
                      {"replicas", stage.devices.size()},
                      {"devices", devices},
                      {"time_s", stage.cost.time_s},
                      {"compute_s", stage.cost.compute_s},
                      {"allreduce_s", stage.cost.allreduce_s},
                      {"cut_s", stage.cost.cut_s},
                      {"memory_bytes", stage.cost.memory_bytes},
                      {"memory_limit_bytes", stage.cost.memory_limit_bytes},
                      {"in_flight_microbatches", stage.cost.in_flight}});
  }
  return {{"scenario", setup.name},
          {"search", "pipedream"},
          {"straight", args.straight},
          {"levels", plan.levels},
          {"antichain_states", plan.states},
          {"devices", setup.cluster.devices.size()},
          {"devices_used", plan.devices_used},
          {"microbatches", setup.training.microbatches},
          {"stages", stages},
          {"contiguous", plan.contiguous},
          {"bottleneck_s", plan.bottleneck_s},
          {"objective_s", plan.objective_s},
          {"search_wall_s", wall_s}};
}

void print_plan(std::ostream& out, const ResolvedScenario& setup, const PipedreamPlan& plan,
                const PipedreamPlanArgs& args, double wall_s) {
  const ClusterSpec& cluster = setup.cluster;
  out << setup.name << ": PipeDream planner" << (args.straight ? " (straight)" : "") << ", "
      << cluster.devices.size() << " devices (" << cluster.nodes << " x " << cluster.gpus_per_node
      << "), " << plan.levels << " bandwidth level" << (plan.levels > 1 ? "s" : "") << ", "
      << plan.states << " antichain states, " << setup.training.microbatches << " microbatches of "
      << format_number(
             "%g", static_cast<double>(setup.training.global_batch) / setup.training.microbatches)
      << " samples\n\n";
  std::vector<std::string> layers;
  size_t width = 8, device_width = 9;
  for (const PlannedStage& stage : plan.stages) {
    layers.push_back(layer_ranges_text(stage.layers));
    width = std::max(width, layers.back().size() + 2);
    device_width = std::max(device_width, devices_text(setup, stage.devices).size() + 2);
  }
  out << pad("stage", 7) << pad("layers", width) << pad("replicas", 10)
      << pad("devices", device_width) << pad("time", 13) << pad("all-reduce", 13)
      << pad("memory (GiB)", 17) << "cut to next\n";
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const PlannedStage& stage = plan.stages[s];
    out << pad(std::to_string(s), 7) << pad(layers[s], width)
        << pad(std::to_string(stage.devices.size()), 10)
        << pad(devices_text(setup, stage.devices), device_width)
        << pad(format_seconds(stage.cost.time_s), 13)
        << pad(format_seconds(stage.cost.allreduce_s), 13)
        << pad(format_gib(stage.cost.memory_bytes) + " / " +
                   format_gib(stage.cost.memory_limit_bytes),
               17)
        << (s + 1 < plan.stages.size() ? format_seconds(stage.cost.cut_s) : "-") << "\n";
  }
  out << "\n"
      << pad("bottleneck", 16) << format_seconds(plan.bottleneck_s) << " per microbatch ("
      << bottleneck_text(plan) << ")\n"
      << pad("devices used", 16) << plan.devices_used << " of " << cluster.devices.size() << "\n"
      << pad("planned in", 16) << format_seconds(wall_s) << "\n";
}

}  // namespace

void run_pipedream_plan(const PipedreamPlanArgs& args) {
  if (!args.report_path.empty()) check_report_path(args.report_path);
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  PlannerProblem problem = planner_problem(setup);
  problem.straight = args.straight;
  problem.memory_source = loaded.where("cluster.gpu.memory_gib");

  const auto start = std::chrono::steady_clock::now();
  const PipedreamPlan plan = plan_pipedream(problem);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (!args.write_plan.empty()) write_pipedream_plan(args, loaded, problem, plan);
  if (!args.report_path.empty()) {
    HtmlPage page(setup.name + ": PipeDream plan",
                  setup.name + ": PipeDream planner" + (args.straight ? " (straight)" : "") + ", " +
                      std::to_string(setup.cluster.devices.size()) + " devices, " +
                      std::to_string(setup.training.microbatches) + " microbatches");
    page.add_section("Headline numbers",
                     headline_html({{"bottleneck", format_seconds(plan.bottleneck_s)},
                                    {"stages", std::to_string(plan.stages.size())},
                                    {"devices used", std::to_string(plan.devices_used)}}));
    add_pipedream_sections(page, setup, plan);
    write_html_report(args.report_path, page);
  }
  if (args.json) {
    std::cout << plan_json(setup, plan, args, wall_s).dump(2) << "\n";
  } else {
    print_plan(std::cout, setup, plan, args, wall_s);
    if (!args.write_plan.empty()) {
      std::cout << "\nplan written to " << args.write_plan << " (run it with: pipetwin simulate "
                << args.write_plan << ")\n";
    }
    if (!args.report_path.empty()) {
      std::cout << "\nreport written to " << args.report_path << " (open it in a browser)\n";
    }
  }
}

}  // namespace pipetwin
