// `pipetwin run --backend`: one vocabulary (torch, cuda), the old `gloo` spelling taken
// for torch with one note, and one line for a name that is no backend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "real_run_helpers.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;
using testing::run_pipetwin;

TEST(RunCommand, AnUnknownBackendIsOneLineAndBadInput) {
  SKIP_WITHOUT_TORCH();
  const auto r = run_pipetwin("run builtin:mlp-cpu-2rank --backend nccl");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--backend nccl: unknown backend"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(RunCommand, GlooMeansTorchWithOneNote) {
  SKIP_WITHOUT_TORCH();
  const auto r = run_pipetwin(
      "run builtin:mlp-cpu-2rank --backend gloo --set training.iterations=1 --warmup 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string note = "note: --backend gloo means torch";
  const size_t at = r.err.find(note);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(note, at + 1), std::string::npos) << "said twice:\n" << r.err;
  // The model ran: what only the torch backend reports is there.
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["losses"].size(), 1u);
  EXPECT_FALSE(j.contains("gpu"));
}

}  // namespace
}  // namespace pipetwin
