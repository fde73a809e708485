// `profile` and `calibrate` in a `pipetwin-real` built without LibTorch: they measure with
// LibTorch, so each says what to install. Compiled only then.
#include "cli/cli_app.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

void add_unavailable(CLI::App& app, const std::string& name, const std::string& description) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->allow_extras();
  cmd->callback([name] {
    throw RuntimeFailure("`pipetwin " + name +
                         "` measures with LibTorch, and this pipetwin was built without it: "
                         "install libtorch-dev (make deps) and rebuild");
  });
}

}  // namespace

void add_profile_command(CLI::App& app) {
  add_unavailable(app, "profile", "measure per-layer costs with LibTorch (not built)");
}
void add_calibrate_command(CLI::App& app, const std::vector<std::string>&) {
  add_unavailable(app, "calibrate", "measure the links between ranks (not built)");
}

}  // namespace pipetwin
