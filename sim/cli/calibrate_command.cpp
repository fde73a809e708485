// `pipetwin calibrate SCENARIO [--nproc 2] [--sizes ...] [-o FILE]`: measures the link
// between two ranks (Gloo point-to-point) and writes the scenario again with that
// intra_node bandwidth and latency, so that the simulators predict this machine.
// Built into `pipetwin-torch` only.
#include <google/protobuf/text_format.h>

#include <iostream>
#include <memory>

#include "backend/torch/link_calibration.h"
#include "backend/torch/local_launcher.h"
#include "sim/cli/cli_app.h"
#include "sim/errors.h"
#include "sim/scenario/loaded_scenario.h"
#include "traces/atomic_file.h"

namespace pipetwin {
namespace {

struct CalibrateArgs {
  std::string scenario;
  int nproc = 2;
  std::vector<int64_t> sizes = {4096, 65536, 262144, 1048576, 4194304, 16777216};
  int repeats = 9;
  double timeout_s = 60;
  std::string output;
};

void run_calibrate(const CalibrateArgs& args, const std::vector<std::string>& argv) {
  LoadedScenario loaded = load_scenario(args.scenario, {});
  for (int64_t s : args.sizes) {
    if (s < 4) throw InputError("--sizes: each message needs at least 4 bytes");
  }
  if (!launched_as_rank()) {
    launch_local_ranks_or_throw(argv, args.nproc, args.timeout_s);
    return;
  }
  const RankEnvironment env = rank_environment();
  const LinkCalibration link = calibrate_link(env, args.sizes, args.repeats, args.timeout_s);
  if (env.rank != 0) return;
  std::cerr << "bytes        one-way time\n";
  for (const auto& [bytes, seconds] : link.samples) {
    std::cerr << bytes << "  " << seconds * 1e6 << " us\n";
  }
  std::cerr << "fit: latency " << link.latency_s * 1e6 << " us, bandwidth "
            << link.bandwidth_bytes_per_s / 1e9 << " GB/s\n";
  proto::Link* intra = loaded.scenario.mutable_cluster()->mutable_intra_node();
  intra->set_bandwidth_gbytes_per_s(link.bandwidth_bytes_per_s / 1e9);
  intra->set_latency_us(link.latency_s * 1e6);
  std::string text;
  google::protobuf::TextFormat::PrintToString(loaded.scenario, &text);
  text = "# intra_node measured by `pipetwin calibrate` (Gloo point-to-point, " +
         std::to_string(args.nproc) + " ranks).\n" + text;
  if (args.output.empty()) {
    std::cout << text;
  } else {
    write_file_atomically(args.output, [&](std::ostream& out) { out << text; });
    std::cerr << "calibrated scenario written to " << args.output << "\n";
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand("calibrate", "measure the links between ranks");
  cmd->add_option("scenario", args->scenario, "scenario whose cluster to calibrate")->required();
  cmd->add_option("--nproc", args->nproc, "ranks to spawn locally")->default_val(2);
  cmd->add_option("--sizes", args->sizes, "message sizes in bytes")->delimiter(',');
  cmd->add_option("--repeats", args->repeats, "exchanges per size (median)")->default_val(9);
  cmd->add_option("--timeout", args->timeout_s, "seconds any wait may take")->default_val(60);
  cmd->add_option("-o,--output", args->output, "scenario to write (default: stdout)");
  cmd->callback([args, argv] { run_calibrate(*args, argv); });
}

}  // namespace pipetwin
