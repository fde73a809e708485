// What the tests of real LibTorch runs share: skipping without LibTorch, running `pipetwin
// run --json`, and comparing a pipeline's numbers with the single-process reference's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

#ifndef PIPETWIN_HAS_TORCH
#define SKIP_WITHOUT_TORCH() GTEST_SKIP() << "built without LibTorch"
#else
#define SKIP_WITHOUT_TORCH() (void)0
#endif

namespace pipetwin::testing {

// Entry by entry, relative to the larger of 1 and the expected value.
inline void expect_close(const nlohmann::json& actual, const nlohmann::json& expected,
                         double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double x = actual[i].get<double>(), y = expected[i].get<double>();
    EXPECT_NEAR(x, y, tolerance * std::max(1.0, std::abs(y))) << "entry " << i;
  }
}

// `pipetwin run ARGS --json`, parsed; empty, and a failure, when it does not exit 0.
inline nlohmann::json real_run_json(const std::string& args) {
  const CliResult r = run_pipetwin("run " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json{};
}

// `pipetwin run ARGS` for three iterations on its ranks and with --reference in one process:
// the same losses and trained weights, entry by entry, to 1e-5.
inline void expect_equals_reference(const std::string& args) {
  const std::string three = args + " --set training.iterations=3";
  const nlohmann::json ranks = real_run_json(three);
  const nlohmann::json reference = real_run_json(three + " --reference");
  ASSERT_FALSE(ranks.empty());
  expect_close(ranks["losses"], reference["losses"], 1e-5);
  expect_close(ranks["layer_weight_sums"], reference["layer_weight_sums"], 1e-5);
}

}  // namespace pipetwin::testing
