#include "cli/cli_app.h"

#include <google/protobuf/stubs/common.h>

#include <iostream>

#include "sim/spec/errors.h"

namespace pipetwin {

int run_cli(int argc, char** argv) {
  CLI::App app{"pipetwin: a digital twin for pipeline-parallel DNN training"};
  app.require_subcommand(1);
  add_simulate_command(app);
  add_trace_command(app);
  add_sweep_command(app);
  add_plan_command(app);
  add_tune_command(app);
  add_goodput_command(app);
  add_straggler_command(app);
  add_whatif_command(app);
  add_import_command(app);
  add_compare_command(app);
  add_export_command(app);
  add_report_command(app);
  add_run_command(app, std::vector<std::string>(argv, argv + argc));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const RuntimeFailure& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace pipetwin
