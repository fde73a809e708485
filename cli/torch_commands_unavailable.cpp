// `profile` in a `pipetwin-real` built without LibTorch: it measures with LibTorch, so it
// says what to install. Compiled only then.
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

}  // namespace pipetwin
