#include "app/umpipe_plan_files.h"

#include "report/html_page.h"
#include "report/plan_page.h"
#include "report/text_units.h"
#include "sim/scenario/scenario_writer.h"

namespace pipetwin {

proto::Scenario scenario_with_plan(const LoadedScenario& loaded, const UmpipeSearchResult& result) {
  proto::Scenario scenario = loaded.scenario;
  proto::Schedule* schedule = scenario.mutable_schedule();
  schedule->set_kind(proto::UMPIPE);
  schedule->set_stages(static_cast<int32_t>(result.best.stages.size()));
  schedule->clear_virtual_stages();
  schedule->clear_partition();
  for (int32_t layers : result.partition) schedule->add_partition(layers);
  schedule->clear_stage_plans();
  for (const StagePlan& stage : result.best.stages) {
    proto::StagePlan* plan = schedule->add_stage_plans();
    for (int32_t size : stage.forward_sizes) plan->add_forward_sizes(size);
    for (int32_t size : stage.backward_sizes) plan->add_backward_sizes(size);
  }
  return scenario;
}

void write_umpipe_plan_file(const std::string& path, const LoadedScenario& loaded,
                            const UmpipeSearchResult& result, const UmpipePlanRequest& request,
                            const std::vector<std::string>& overrides) {
  std::string set_options;
  for (const std::string& assignment : overrides) set_options += " --set " + assignment;
  const std::string header =
      "# UMPIPE plan (the fastest of the search and its baselines, simulated) found by "
      "`pipetwin plan " +
      loaded.source_name + " --search umpipe --population " + std::to_string(request.population) +
      " --generations " + std::to_string(request.generations) + " --seed " +
      std::to_string(request.seed) + set_options + "`: one iteration takes " +
      format_number("%.17g", result.best_s) + " s\n";
  write_scenario(scenario_with_plan(loaded, result), loaded, header, path);
}

void write_umpipe_report(const std::string& path, const ResolvedScenario& setup,
                         const UmpipePlanRequest& request, const UmpipeSearchResult& result) {
  HtmlPage page(setup.name + ": UMPIPE plan",
                setup.name + ": UMPIPE search, " + std::to_string(setup.schedule.stages) +
                    " stages, batch " + std::to_string(setup.training.global_batch) +
                    ", population " + std::to_string(request.population) + ", " +
                    std::to_string(request.generations) + " generations, seed " +
                    std::to_string(request.seed));
  page.add_section("Headline numbers",
                   headline_html({{"iteration time", format_seconds(result.best_s)},
                                  {"plans evaluated", std::to_string(result.dgap.evaluations)}}));
  add_umpipe_sections(page, result, setup.training.microbatches);
  write_html_report(path, page);
}

}  // namespace pipetwin
