// GEMM efficiency by shape (sim/model/gemm_curve.h): time never falls as a GEMM grows, no
// shape beats the peak fraction and a whole wave of whole tiles reaches it but for each tile's
// epilogue (its result written out), a flat curve is
// the flat `efficiency` model, and on the cuBLAS GEMMs measured on an H100 (bench/data) the
// H100 preset's curve is closer than any flat efficiency.
#include "sim/model/gemm_curve.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

// The dgx-h100 preset's curve, as a scenario on it resolves it.
GemmCurve h100() {
  return *resolve_scenario(load_scenario("builtin:gpt-8gpu-1f1b", {})).cluster.gemm_curve;
}

TEST(GemmCurve, TimeNeverFallsAsAnyDimensionGrows) {
  const GemmCurve curve = h100();
  const std::vector<double> sizes = {1, 64, 100, 128, 129, 1000, 1536, 4096, 4097, 16384, 70000};
  for (double m : sizes) {
    for (double n : sizes) {
      for (double k : sizes) {
        const double t = gemm_seconds(curve, m, n, k);
        EXPECT_LE(t, gemm_seconds(curve, m + 37, n, k)) << m << " " << n << " " << k;
        EXPECT_LE(t, gemm_seconds(curve, m, n + 37, k)) << m << " " << n << " " << k;
        EXPECT_LE(t, gemm_seconds(curve, m, n, k + 37)) << m << " " << n << " " << k;
        EXPECT_LE(t, gemm_seconds(curve, m, n, k, 2)) << m << " " << n << " " << k;
      }
    }
  }
}

TEST(GemmCurve, TopsAtThePeakFractionInAWholeWaveOfWholeTiles) {
  const GemmCurve curve = h100();
  for (double m = 64; m <= 32768; m *= 2) {
    for (double n = 64; n <= 32768; n *= 2) {
      EXPECT_LE(gemm_efficiency(curve, m, n, 8192), curve.peak_fraction * (1 + 1e-12));
    }
  }
  // 12 x 11 tiles of 128 x 128 are the 132 multiprocessors' one wave: each tile's main loop over
  // k at the peak fraction of its multiprocessor's share, then its 32 KiB result written at its
  // share of 80% of 3,350 GB/s.
  const double k = 16384;
  const double main_loop = 2 * 128 * 128 * k / (curve.peak_fraction * curve.peak_flops / 132);
  const double epilogue = 2 * 128 * 128 / (0.8 * 3350e9 / 132);
  const double whole_wave = curve.peak_fraction * main_loop / (main_loop + epilogue);
  EXPECT_NEAR(gemm_efficiency(curve, 12 * 128, 11 * 128, k), whole_wave, 1e-12);
  EXPECT_GT(whole_wave, 0.97 * curve.peak_fraction);  // a long k hides most of it
  // One tile more takes a second wave: almost half the efficiency.
  EXPECT_NEAR(gemm_efficiency(curve, 12 * 128 + 1, 11 * 128, k),
              whole_wave * (12 * 128 + 1) / (2 * 12 * 128), 1e-12);
  // A thin GEMM is bound by its memory traffic: its 125 waves of 128 x 128 tiles each spend
  // most of their time writing the result, more than its operands and result moved at 80% of
  // 3,350 GB/s alone.
  const double m = 16384, n = 16384, thin = 16;
  const double waves = std::ceil(128.0 * 128.0 / 132);
  const double thin_tile = 2 * 128 * 128 * thin / (curve.peak_fraction * curve.peak_flops / 132);
  EXPECT_NEAR(gemm_seconds(curve, m, n, thin), waves * (thin_tile + epilogue), 1e-15);
  EXPECT_GT(gemm_seconds(curve, m, n, thin), 2 * (m * thin + thin * n + m * n) / (0.8 * 3350e9));
}

TEST(GemmCurve, AFlatCurveIsTheFlatEfficiency) {
  GemmCurve flat;
  flat.peak_flops = 312e12;
  flat.peak_fraction = 0.7;
  flat.sm_count = 0;
  flat.memory_bytes_per_s = 0;
  ASSERT_TRUE(flat.flat());
  for (double m : {1.0, 77.0, 2048.0}) {
    for (double k : {3.0, 4096.0}) {
      EXPECT_DOUBLE_EQ(gemm_seconds(flat, m, 1000, k), 2 * m * 1000 * k / (312e12 * 0.7));
    }
  }
}

struct Measured {
  double m, n, k, seconds;
};

// The two runs' median times of each shape, averaged.
std::vector<Measured> h100_measurements() {
  std::map<std::tuple<double, double, double>, std::vector<double>> times;
  const std::filesystem::path data = std::filesystem::path(PIPETWIN_SOURCE_DIR) / "bench" / "data";
  for (const char* file : {"gemm-bf16-h100-run1.csv", "gemm-bf16-h100-run2.csv"}) {
    std::ifstream in(data / file);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#' || line.rfind("grid", 0) == 0) continue;
      std::stringstream fields(line);
      std::string grid, m, n, k, median;
      std::getline(fields, grid, ',');
      std::getline(fields, m, ',');
      std::getline(fields, n, ',');
      std::getline(fields, k, ',');
      std::getline(fields, median, ',');
      times[{std::stod(m), std::stod(n), std::stod(k)}].push_back(std::stod(median));
    }
  }
  std::vector<Measured> rows;
  for (const auto& [shape, runs] : times) {
    const auto& [m, n, k] = shape;
    rows.push_back({m, n, k, std::accumulate(runs.begin(), runs.end(), 0.0) / runs.size()});
  }
  return rows;
}

// Mean |predicted / measured - 1| over the GEMMs of at least 50 us (below, the launch that the
// benchmark times with each lone GEMM dominates; in training, launches overlap).
template <typename Predict>
double mean_error(const std::vector<Measured>& rows, Predict predict) {
  double sum = 0;
  int count = 0;
  for (const Measured& r : rows) {
    if (r.seconds < 50e-6) continue;
    sum += std::abs(predict(r) / r.seconds - 1);
    ++count;
  }
  return sum / count;
}

TEST(GemmCurve, PredictsTheMeasuredH100GemmsBetterThanAnyFlatEfficiency) {
  const std::vector<Measured> rows = h100_measurements();
  ASSERT_EQ(rows.size(), 178u);  // 184 rows per run, 6 shapes in both grids
  const GemmCurve curve = h100();
  const double shaped =
      mean_error(rows, [&](const Measured& r) { return gemm_seconds(curve, r.m, r.n, r.k); });
  double best_flat = 1e9;
  for (double e = 0.3; e <= 1.0; e += 0.01) {
    best_flat = std::min(best_flat, mean_error(rows, [&](const Measured& r) {
                           return 2 * r.m * r.n * r.k / (curve.peak_flops * e);
                         }));
  }
  std::printf("mean |error| over the GEMMs of 50 us or more: curve %.4f, best flat %.4f\n", shaped,
              best_flat);
  EXPECT_LT(shaped, 0.11);
  EXPECT_LT(shaped, best_flat - 0.03) << "flat " << best_flat;
}

}  // namespace
}  // namespace pipetwin
