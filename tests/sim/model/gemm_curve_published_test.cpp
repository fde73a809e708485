// The GEMM curve against published kernel throughput it was not fitted on: DeepGEMM's FP8 GEMMs
// with 1x128 and 128x128 block scaling on the H800 (deepseek-ai/DeepGEMM, README as first
// published, February 2025: dense GEMMs and the grouped GEMMs of MoE layers, contiguous
// layout), the shapes of DeepSeek-V3's layers. pipetwin's H800 curve (hgx-h800: 132
// multiprocessors, 128 x 128 tiles, the H100's peak fraction fitted on cuBLAS BF16 GEMMs) at
// the FP8 peak and FP8 operands. docs/models.md states the table and what it shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "sim/model/gemm_curve.h"
#include "sim/model/number_format.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

struct PublishedGemm {
  int groups, m, n, k;
  double tflops;  // DeepGEMM's measured
};

// Its "Normal GEMMs for dense models" table (M of 4096; the M 64 and 128 rows are inference
// decoding's) and its "Grouped GEMMs for MoE models (contiguous layout)" table.
const std::vector<PublishedGemm> kDense = {
    {1, 4096, 2112, 7168, 1058},  {1, 4096, 24576, 1536, 990}, {1, 4096, 32768, 512, 590},
    {1, 4096, 7168, 16384, 1358}, {1, 4096, 4096, 7168, 1304}, {1, 4096, 7168, 2048, 1025},
};
const std::vector<PublishedGemm> kGrouped = {
    {4, 8192, 4096, 7168, 1297},
    {4, 8192, 7168, 2048, 1099},
    {8, 4096, 4096, 7168, 1288},
    {8, 4096, 7168, 2048, 1093},
};

// The H800's curve as a scenario in FP8 with block scaling times its linear layers.
GemmCurve h800_fp8_blockwise() {
  const ResolvedScenario setup = resolve_scenario(parse_scenario(
      R"(cluster { preset: "hgx-h800" nodes: 1 }
         model { zoo { name: "transformer" layers: 1 hidden: 512 heads: 8 ffn_hidden: 1024
                       seq_len: 256 vocab: 1000 } }
         training { global_batch: 8 microbatches: 1 precision: FP8_BLOCKWISE }
         schedule { kind: GPIPE stages: 1 })",
      "h800.textproto", "", false, {}));
  GemmCurve curve = *setup.cluster.gemm_curve;
  curve.peak_flops = setup.training.format_peak_flops;
  curve.operand_bytes =
      number_format(setup.training.precision, setup.training.fp8_scaling).element_bytes;
  return curve;
}

struct Errors {
  double mean = 0, largest = 0;
};

// Each row's error, printed as the table docs/models.md carries.
Errors errors(const std::vector<PublishedGemm>& rows, const GemmCurve& curve) {
  Errors e;
  for (const PublishedGemm& g : rows) {
    const double flops = 2.0 * g.m * g.n * g.k * g.groups;
    const double tflops = flops / gemm_seconds(curve, g.m, g.n, g.k, g.groups) / 1e12;
    const double error = tflops / g.tflops - 1;
    std::printf("| %d | %d | %d | %d | %.0f | %.0f | %+.1f%% |\n", g.groups, g.m, g.n, g.k,
                g.tflops, tflops, 100 * error);
    e.mean += std::abs(error) / static_cast<double>(rows.size());
    e.largest = std::max(e.largest, std::abs(error));
  }
  return e;
}

// Within 6% on average, grouped or not; the largest error is the shortest reduction's (k 512),
// whose tiles are mostly epilogue.
TEST(GemmCurvePublished, DeepGemmOnTheH800) {
  const GemmCurve curve = h800_fp8_blockwise();
  EXPECT_DOUBLE_EQ(curve.peak_flops, 1979e12);
  EXPECT_DOUBLE_EQ(curve.operand_bytes, 1 + 1.0 / 32);  // the per-128 scales ride along
  const Errors dense = errors(kDense, curve), grouped = errors(kGrouped, curve);
  EXPECT_LT(dense.mean, 0.07);
  EXPECT_LT(dense.largest, 0.20);
  EXPECT_LT(grouped.mean, 0.06);
  EXPECT_LT(grouped.largest, 0.06);
}

}  // namespace
}  // namespace pipetwin
