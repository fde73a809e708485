// fit_link, the link model fit every backend's calibration uses (backend/common).
#include "backend/common/link_fit.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace pipetwin {
namespace {

std::vector<std::pair<double, double>> noiseless(double latency_s, double bandwidth,
                                                 const std::vector<double>& sizes) {
  std::vector<std::pair<double, double>> samples;
  for (double bytes : sizes) samples.emplace_back(bytes, latency_s + bytes / bandwidth);
  return samples;
}

TEST(LinkFit, RecoversLatencyAndBandwidthFromNoiselessSamples) {
  for (const auto& [latency, bandwidth] : std::vector<std::pair<double, double>>{
           {5e-6, 12e9}, {30e-6, 1.25e9}, {1e-3, 100e6}, {2e-6, 450e9}}) {
    const LinkFit fit =
        fit_link(noiseless(latency, bandwidth, {4096, 65536, 262144, 1048576, 16777216}));
    EXPECT_NEAR(fit.latency_s, latency, latency * 1e-9);
    EXPECT_NEAR(fit.bandwidth_bytes_per_s, bandwidth, bandwidth * 1e-9);
  }
}

TEST(LinkFit, SampleOrderDoesNotMatter) {
  const LinkFit fit = fit_link(noiseless(7e-6, 3e9, {16777216, 4096, 1048576, 65536}));
  EXPECT_NEAR(fit.latency_s, 7e-6, 7e-15);
  EXPECT_NEAR(fit.bandwidth_bytes_per_s, 3e9, 3e9 * 1e-9);
}

TEST(LinkFit, NonPositiveSlopeFallsBackToLargestAndSmallestMessage) {
  // Noise made the large message no slower than the small one: slope <= 0.
  const LinkFit fit = fit_link({{1000, 2e-3}, {1e6, 1e-3}, {1e5, 1.5e-3}});
  EXPECT_DOUBLE_EQ(fit.bandwidth_bytes_per_s, 1e6 / 1e-3);                   // the largest message
  EXPECT_DOUBLE_EQ(fit.latency_s, 2e-3 - 1000 / fit.bandwidth_bytes_per_s);  // the smallest
}

TEST(LinkFit, OneSizeFallsBackToItsOwnRate) {
  const LinkFit fit = fit_link({{4096, 1e-5}});
  EXPECT_DOUBLE_EQ(fit.bandwidth_bytes_per_s, 4096 / 1e-5);
  EXPECT_DOUBLE_EQ(fit.latency_s, 0);
}

TEST(LinkFit, LatencyIsNeverNegative) {
  // A line whose intercept is below zero (a measurement artefact) gives latency 0.
  const LinkFit fit = fit_link(noiseless(-1e-6, 1e9, {1e5, 1e6, 1e7}));
  EXPECT_EQ(fit.latency_s, 0);
  EXPECT_NEAR(fit.bandwidth_bytes_per_s, 1e9, 1e9 * 1e-9);
}

TEST(LinkFit, RejectsNoSamplesAndNonPositiveTimes) {
  EXPECT_THROW(fit_link({}), std::invalid_argument);
  EXPECT_THROW(fit_link({{4096, 0}}), std::invalid_argument);
  EXPECT_THROW(fit_link({{0, 1e-6}, {4096, 2e-6}}), std::invalid_argument);
}

}  // namespace
}  // namespace pipetwin
