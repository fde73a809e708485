// The pipetwin command line (README, "Command line"). Exit codes: 0 success, 2 bad input
// (the message names the file, line and field), 1 runtime failure.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace pipetwin {

int run_cli(int argc, char** argv);

// Each subcommand registers its options and a callback that does the work.
void add_simulate_command(CLI::App& app);
void add_trace_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_goodput_command(CLI::App& app);
void add_straggler_command(CLI::App& app);
void add_whatif_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_report_command(CLI::App& app);
// `argv` is the whole command line: the local launcher runs it again as each rank.
// The commands that run on real devices (run, profile, calibrate) are built into
// `pipetwin-real`; in `pipetwin` they hand the command line over to it (run_forwarding.cpp).
void add_run_command(CLI::App& app, const std::vector<std::string>& argv);

}  // namespace pipetwin
