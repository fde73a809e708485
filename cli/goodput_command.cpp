// `pipetwin goodput [SCENARIO] (--tokens N | --steps N) [--gpu-hour-cost C] [--monte-carlo N]
//                   [--seed S] [--engine analytic|simgrid] [--set PATH=VALUE]... [--json]
//                   [--report FILE.html]`
//
// A whole training run: days, GPU-hours, effective training time ratio and cost under
// failures, checkpoints and restarts (docs/goodput.md).
#include <iostream>
#include <memory>
#include <sstream>

#include "app/goodput_run.h"
#include "cli/cli_app.h"
#include "cli/resource_options.h"
#include "report/goodput_page.h"
#include "report/html_page.h"

namespace pipetwin {
namespace {

struct GoodputArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  double tokens = 0;
  int64_t steps = 0;
  double gpu_hour_cost = -1;
  int32_t monte_carlo = 10000;
  uint64_t seed = 1;
  std::string engine = "analytic";
  std::string report_path;
  bool json = false;
  ResourceOptions resources;
};

void run_goodput(const GoodputArgs& args) {
  if (!args.report_path.empty()) check_report_path(args.report_path);
  GoodputRequest request;
  request.scenario = args.scenario;
  request.overrides = args.overrides;
  if (args.tokens > 0) request.tokens = args.tokens;
  if (args.steps > 0) request.steps = args.steps;
  if (args.gpu_hour_cost >= 0) request.gpu_hour_cost = args.gpu_hour_cost;
  request.monte_carlo_runs = args.monte_carlo;
  request.seed = args.seed;
  request.engine = parse_engine(args.engine);
  request.limits = args.resources.limits();
  request.curves = !args.report_path.empty();
  const GoodputRun result = run_goodput(request);
  if (!args.report_path.empty()) {
    HtmlPage page("pipetwin goodput: " + result.name,
                  std::to_string(result.plan.steps) + " steps on " + std::to_string(result.gpus) +
                      " GPUs, engine " + result.engine);
    std::ostringstream table;
    print_goodput(table, result);
    page.add_section("The run", "<pre>" + table.str() + "</pre>");
    add_goodput_sections(
        page, {result.ettr_by_interval_s,
               static_cast<double>(result.estimate.interval_steps) * result.step_s,
               result.ettr_by_gpus, result.days_by_gpus, static_cast<double>(result.gpus)});
    write_html_report(args.report_path, page);
  }
  if (args.json) {
    std::cout << result.json().dump(2) << "\n";
  } else {
    print_goodput(std::cout, result);
    if (!args.report_path.empty()) std::cout << "\nreport written to " << args.report_path << "\n";
  }
}

}  // namespace

void add_goodput_command(CLI::App& app) {
  auto args = std::make_shared<GoodputArgs>();
  CLI::App* cmd = app.add_subcommand(
      "goodput", "a whole training run: days, GPU-hours, ETTR and cost under failures");
  cmd->add_option("scenario", args->scenario,
                  "scenario .textproto, or builtin:NAME (default: the built-in quickstart)");
  cmd->add_option("--tokens", args->tokens, "tokens to train on (steps of global_batch x seq_len)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--steps", args->steps, "or steps to train")->check(CLI::PositiveNumber);
  cmd->add_option("--gpu-hour-cost", args->gpu_hour_cost, "price of a GPU-hour, for the cost")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--monte-carlo", args->monte_carlo, "runs over failure arrivals (0: none)")
      ->default_val(args->monte_carlo)
      ->check(CLI::Range(0, 10'000'000));
  cmd->add_option("--seed", args->seed, "of the Monte Carlo runs")->default_val(args->seed);
  cmd->add_option("--engine", args->engine, "executor of the step: analytic or simgrid")
      ->default_val("analytic");
  cmd->add_option("--set", args->overrides, "override a field: PATH=VALUE (repeatable)")
      ->allow_extra_args(false);
  add_resource_options(cmd, &args->resources);
  cmd->add_option("--report", args->report_path,
                  "write a self-contained HTML report: ETTR by interval and by cluster size, "
                  "days by GPUs");
  cmd->add_flag("--json", args->json, "print a JSON object instead of the table");
  cmd->callback([args] { run_goodput(*args); });
}

}  // namespace pipetwin
