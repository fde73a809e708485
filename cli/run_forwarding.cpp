// `pipetwin run ...` in the binary without the real backends: hands the whole command
// line over to `pipetwin-real` next to this executable, which has them (LibTorch, the CUDA
// replay). Keeping torch out of `pipetwin` keeps every other command starting in
// milliseconds.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/cli_app.h"
#include "sim/spec/errors.h"

namespace pipetwin {

namespace {

void add_forwarded(CLI::App& app, const std::string& name, const std::string& description,
                   const std::vector<std::string>& argv) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->prefix_command();  // every argument belongs to pipetwin-real
  cmd->set_help_flag();   // --help too
  cmd->callback([argv] {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    const std::filesystem::path torch_binary = self.parent_path() / "pipetwin-real";
    if (error || !std::filesystem::exists(torch_binary)) {
      throw RuntimeFailure(
          "this pipetwin was built without LibTorch and without CUDA, so it cannot run on real "
          "devices: install libtorch-dev (make deps) and rebuild to get " +
          torch_binary.string());
    }
    std::vector<std::string> args = argv;
    args[0] = torch_binary.string();
    std::vector<char*> raw;
    for (std::string& a : args) raw.push_back(a.data());
    raw.push_back(nullptr);
    ::execv(torch_binary.c_str(), raw.data());
    throw RuntimeFailure("cannot start " + torch_binary.string() + ": " + std::strerror(errno));
  });
}

}  // namespace

void add_run_command(CLI::App& app, const std::vector<std::string>& argv) {
  add_forwarded(app, "run", "run a scenario on real LibTorch ranks", argv);
  add_forwarded(app, "profile", "measure per-layer costs with LibTorch", argv);
  add_forwarded(app, "calibrate", "measure the links between ranks", argv);
}

}  // namespace pipetwin
