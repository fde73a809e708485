// GEMM efficiency by shape as a lowering (sim/model/shape_efficiency.h): a zoo model's GEMMs
// are all its FLOPs; each pass then takes what its GEMMs take on the curve as one GPU runs
// them (tensor parallelism's splits, the microbatch's rows); an explicit model.zoo.efficiency
// keeps the flat model; and a flat curve simulates exactly as the flat efficiency does.
#include "sim/model/shape_efficiency.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/model/gemm_curve.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/driver/simulate.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

ResolvedScenario resolve(const std::string& scenario, const std::vector<std::string>& overrides) {
  return resolve_scenario(load_scenario(scenario, overrides));
}

// The scenario with its flat efficiency taken out, as a user who wants the curve writes it.
LoadedScenario without_flat_efficiency(const std::string& scenario,
                                       const std::vector<std::string>& overrides) {
  LoadedScenario loaded = load_scenario(scenario, overrides);
  loaded.scenario.mutable_model()->mutable_zoo()->clear_efficiency();
  return loaded;
}

TEST(ShapeEfficiency, TheGemmsOfEveryZooTransformerAreAllItsFlops) {
  for (const char* scenario : {"builtin:gpt-8gpu-1f1b", "builtin:llama3-70b-1024gpu",
                               "builtin:mixtral-8x7b-64gpu", "builtin:deepseek-v3-2048gpu"}) {
    const ResolvedScenario setup = resolve(scenario, {});
    for (const ModelLayer& layer : setup.model.layers) {
      if (layer.gemms.empty()) {
        EXPECT_EQ(layer.fwd.flops_per_sample, 0) << scenario << " " << layer.name;
        continue;
      }
      double flops = 0;
      for (const LayerGemm& g : layer.gemms) flops += g.flops_per_sample();
      // Expert parallelism adds the hottest GPU's extra tokens on top (deepseek: EP 64).
      const double extra = layer.moe.experts > 0 && setup.training.expert_parallel > 1
                               ? layer.fwd.flops_per_sample - flops
                               : 0;
      EXPECT_GE(extra, 0) << scenario << " " << layer.name;
      EXPECT_NEAR(flops + extra, layer.fwd.flops_per_sample, 1e-9 * flops)
          << scenario << " " << layer.name;
    }
  }
}

TEST(ShapeEfficiency, EachPassTakesItsGemmsTimeOnTheCurveAsOneGpuRunsThem) {
  // GPT blocks, TP 2, microbatches of 2 sequences: the forward of a block on one GPU is the
  // sum of its six GEMMs' times at their per-GPU shapes (no other FLOPs in a GPT block).
  const std::vector<std::string> overrides = {"training.tensor_parallel=2", "schedule.stages=4",
                                              "training.global_batch=16", "training.microbatches=8",
                                              "model.zoo.memory_efficiency=0"};
  LoadedScenario loaded = without_flat_efficiency("builtin:gpt-8gpu-1f1b", overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  ASSERT_TRUE(setup.cluster.gemm_curve);
  const GemmCurve& curve = *setup.cluster.gemm_curve;
  EXPECT_EQ(setup.model.efficiency, 1);
  const ResolvedScenario flat = resolve("builtin:gpt-8gpu-1f1b", overrides);
  const ModelLayer& block = setup.model.layers[1];
  const ModelLayer& counted = flat.model.layers[1];
  const ShapeParallelism tp2{2, 1, 1};
  double fwd = 0, dx = 0, dw = 0, core_dw = 0;
  for (const LayerGemm& g : counted.gemms) {
    const GemmOnGpu s = gemm_on_gpu(g, 2, tp2);
    fwd += gemm_seconds(curve, s.m, s.n, s.k, s.count);
    dx += gemm_seconds(curve, s.m, s.k, s.n, s.count);
    const double w = gemm_seconds(curve, s.k, s.n, s.m, s.count);
    (g.part == LayerGemm::Part::kAttentionCore ? core_dw : dw) += w;
  }
  const double peak = curve.peak_flops;
  EXPECT_NEAR(block.fwd.curve(peak, 2).seconds(2), fwd, 1e-12 * fwd);
  EXPECT_NEAR(block.bwd.curve(peak, 2).seconds(2), dx + dw + core_dw, 1e-12 * fwd);
  EXPECT_NEAR(block.bwd_weight->curve(peak, 2).seconds(2), dw, 1e-12 * fwd);
  // Column-parallel GEMMs split n, row-parallel ones k, the attention core its heads.
  const GemmOnGpu qkv = gemm_on_gpu(counted.gemms[0], 2, tp2);
  EXPECT_EQ(qkv.n, counted.gemms[0].n / 2);
  EXPECT_EQ(qkv.m, 2 * counted.gemms[0].rows_per_sample);
  EXPECT_EQ(gemm_on_gpu(counted.gemms[1], 2, tp2).k, counted.gemms[1].k / 2);
  EXPECT_EQ(gemm_on_gpu(counted.gemms[4], 2, tp2).count, counted.gemms[4].count / 2);
}

TEST(ShapeEfficiency, AnExpertsRowsGrowWithExpertParallelism) {
  const LayerGemm expert{512, 1024, 256, 8, LayerGemm::Split::kN, LayerGemm::Part::kExpert};
  const GemmOnGpu s = gemm_on_gpu(expert, 4, {2, 1, 4});
  EXPECT_EQ(s.m, 512 * 4 * 4);  // tokens gathered from the 4 GPUs of the group
  EXPECT_EQ(s.count, 2);        // 8 experts over 4 GPUs
  EXPECT_EQ(s.n, 512);          // tensor parallelism splits each expert's width
}

TEST(ShapeEfficiency, AFlatCurveSimulatesAsTheFlatEfficiencyDoes) {
  for (const char* scenario : {"builtin:gpt-8gpu-1f1b", "builtin:mixtral-8x7b-64gpu"}) {
    const std::vector<std::string> small = {"training.iterations=1"};
    LoadedScenario flat_curve = without_flat_efficiency(scenario, small);
    proto::GemmEfficiency* g =
        flat_curve.scenario.mutable_cluster()->mutable_gpu()->mutable_gemm_efficiency();
    g->set_peak_fraction(0.55);
    g->set_sm_count(0);
    g->set_memory_efficiency(0);
    std::vector<std::string> flat = small;
    flat.push_back("model.zoo.efficiency=0.55");
    const double curve_s = simulate(flat_curve, {}).times.span_s();
    const double flat_s = simulate(load_scenario(scenario, flat), {}).times.span_s();
    EXPECT_NEAR(curve_s, flat_s, 1e-9 * flat_s) << scenario;
  }
}

TEST(ShapeEfficiency, AnExplicitFlatEfficiencyOverridesTheCurve) {
  const ResolvedScenario setup = resolve("builtin:llama3-70b-1024gpu", {});
  ASSERT_TRUE(setup.cluster.gemm_curve);  // the dgx-h100 preset has one
  EXPECT_EQ(setup.model.efficiency, 0.45);
}

TEST(ShapeEfficiency, BadCurvesNameTheirField) {
  for (const auto& [set, field] : std::vector<std::pair<std::string, std::string>>{
           {"cluster.gpu.gemm_efficiency.peak_fraction=1.5", "peak_fraction"},
           {"cluster.gpu.gemm_efficiency.tile_m=0", "tile_m"},
           {"cluster.gpu.gemm_efficiency.sm_count=-1", "sm_count"},
           {"cluster.gpu.gemm_efficiency.tile_n=70000", "tile_n"},
           {"cluster.gpu.gemm_efficiency.memory_efficiency=2", "memory_efficiency"}}) {
    try {
      resolve("builtin:gpt-8gpu-1f1b", {set});
      ADD_FAILURE() << set << " was accepted";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr("cluster.gpu.gemm_efficiency." + field)) << set;
    }
  }
}

}  // namespace
}  // namespace pipetwin
