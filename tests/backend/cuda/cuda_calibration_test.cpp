// backend/cuda without LibTorch. Built only where nvcc was found (PIPETWIN_HAS_CUDA). On a
// machine without a GPU the backend must say so on one line and fail cleanly; with a GPU
// it must measure positive, finite links. Each test skips the case this machine is not.
#if PIPETWIN_HAS_CUDA

#include "backend/cuda/cuda_calibration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

void expect_positive_finite(const LinkFit& fit, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_TRUE(std::isfinite(fit.latency_s));
  EXPECT_GE(fit.latency_s, 0);
  EXPECT_TRUE(std::isfinite(fit.bandwidth_bytes_per_s));
  EXPECT_GT(fit.bandwidth_bytes_per_s, 0);
}

TEST(CudaCalibration, RejectsBadArgumentsBeforeTouchingADevice) {
  EXPECT_THROW(calibrate_cuda({}, 3), std::invalid_argument);
  EXPECT_THROW(calibrate_cuda({4096, 0}, 3), std::invalid_argument);
  EXPECT_THROW(calibrate_cuda({4096}, 0), std::invalid_argument);
}

TEST(CudaCalibration, WithoutAGpuSaysWhyOnOneLine) {
  const std::string reason = cuda_unavailable();
  if (reason.empty()) GTEST_SKIP() << "a CUDA device is visible: MeasuresPositiveFiniteLinks";
  EXPECT_THAT(reason, HasSubstr("no CUDA device"));
  EXPECT_EQ(reason.find('\n'), std::string::npos);
  EXPECT_EQ(cuda_unavailable(), reason);  // asking again neither crashes nor changes
  try {
    calibrate_cuda({4096}, 1);
    ADD_FAILURE() << "calibrate_cuda ran without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), reason);
  }
}

TEST(CudaCalibration, ProbeWithoutAGpuExitsOneWithTheReason) {
  const std::string reason = cuda_unavailable();
  if (reason.empty()) GTEST_SKIP() << "a CUDA device is visible: ProbePrintsTheFitsAsJson";
  const auto result = testing::run_binary(PIPETWIN_CUDA_PROBE_BINARY, "");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "pipetwin-cuda-probe: " + reason + "\n");
}

TEST(CudaCalibration, MeasuresPositiveFiniteLinks) {
  const std::string reason = cuda_unavailable();
  if (!reason.empty()) GTEST_SKIP() << "needs a GPU; here: " << reason;
  const CudaCalibration c = calibrate_cuda({4096, 1 << 20, 16 << 20}, 3);
  EXPECT_GE(c.device_count, 1);
  EXPECT_FALSE(c.device_name.empty());
  EXPECT_EQ(c.h2d_samples.size(), 3u);
  EXPECT_EQ(c.d2h_samples.size(), 3u);
  for (const auto& [bytes, seconds] : c.h2d_samples) EXPECT_GT(seconds, 0) << bytes;
  expect_positive_finite(c.h2d, "h2d");
  expect_positive_finite(c.d2h, "d2h");
  if (c.device_count >= 2) {
    EXPECT_TRUE(c.nccl_p2p_measured);
    EXPECT_EQ(c.nccl_p2p_samples.size(), 3u);
    expect_positive_finite(c.nccl_p2p, "nccl_p2p");
  } else {
    EXPECT_FALSE(c.nccl_p2p_measured);
    EXPECT_TRUE(c.nccl_p2p_samples.empty());
    EXPECT_THAT(c.nccl_p2p_note, HasSubstr("2 GPUs"));
  }
}

TEST(CudaCalibration, ProbePrintsTheFitsAsJson) {
  const std::string reason = cuda_unavailable();
  if (!reason.empty()) GTEST_SKIP() << "needs a GPU; here: " << reason;
  const auto result =
      testing::run_binary(PIPETWIN_CUDA_PROBE_BINARY, "--sizes 4096,1048576 --repeats 2");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  for (const char* link : {"h2d", "d2h"}) {
    EXPECT_GT(json[link]["bandwidth_bytes_per_s"].get<double>(), 0) << link;
    EXPECT_GE(json[link]["latency_s"].get<double>(), 0) << link;
    EXPECT_EQ(json[link]["samples_bytes_seconds"].size(), 2u) << link;
  }
  if (json["device_count"].get<int>() >= 2) {
    EXPECT_GT(json["nccl_p2p"]["bandwidth_bytes_per_s"].get<double>(), 0);
  } else {
    EXPECT_TRUE(json["nccl_p2p"].is_null());
    EXPECT_THAT(json["nccl_p2p_note"].get<std::string>(), HasSubstr("2 GPUs"));
  }
}

// `pipetwin calibrate --backend cuda` (in pipetwin-real) without a GPU: says why once,
// then calibrates on LibTorch CPU ranks as without --backend (--alone: the link alone).
TEST(CudaCalibration, CalibrateWithoutAGpuFallsBackToTorchOnce) {
#ifndef PIPETWIN_HAS_TORCH
  GTEST_SKIP() << "`calibrate` needs pipetwin-real, and this build has no LibTorch";
#else
  const std::string reason = cuda_unavailable();
  if (reason.empty()) GTEST_SKIP() << "a CUDA device is visible: calibrate measures it instead";
  const auto result = testing::run_pipetwin(
      "calibrate builtin:mlp-cpu-2rank --backend cuda --sizes 4096,65536 --repeats 2 --alone");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string said =
      "pipetwin calibrate: " + reason + "; falling back to CPU ranks (--backend torch)\n";
  const size_t at = result.err.find(said);
  ASSERT_NE(at, std::string::npos) << result.err;
  EXPECT_EQ(result.err.find(said, at + 1), std::string::npos) << "said twice:\n" << result.err;
  EXPECT_THAT(result.err, HasSubstr("fit under load: "));
  EXPECT_THAT(result.out, HasSubstr("intra_node"));
  EXPECT_THAT(result.out, HasSubstr("Gloo point-to-point"));
#endif
}

}  // namespace
}  // namespace pipetwin

#endif  // PIPETWIN_HAS_CUDA
