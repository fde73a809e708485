// The low-precision formats (sim/model/number_format.h): their bytes per element and per cast,
// the memory per parameter they keep, the GEMMs of the linear layers at the format's peak, the
// casts as memory-bound traffic, and the weights gathered in the format.
#include "sim/model/number_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/driver/build_program.h"
#include "sim/model/format_casts.h"
#include "sim/model/memory_bound_time.h"
#include "sim/model/training_memory.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

ResolvedScenario resolve(const std::string& scenario, const std::vector<std::string>& overrides) {
  return resolve_scenario(load_scenario(scenario, overrides));
}

// Per element: FP8 1 byte; MXFP8 one 8-bit scale per 32; NVFP4 half a byte and one FP8 scale per
// 16; blockwise FP8 an fp32 scale per 128. A cast reads the BF16 tensor (twice with current
// scaling) and writes the row-wise and column-wise copies.
TEST(NumberFormat, BytesPerElementAndPerCast) {
  const NumberFormat current = number_format(proto::FP8, proto::Training::CURRENT);
  EXPECT_TRUE(current.low_precision);
  EXPECT_EQ(current.element_bytes, 1);
  EXPECT_EQ(current.cast_bytes_per_element, 2 + 2 + 2 * 1);
  EXPECT_EQ(current.weight_copy_bytes, 2);
  EXPECT_EQ(number_format(proto::FP8, proto::Training::DELAYED).cast_bytes_per_element, 2 + 2);
  const NumberFormat mx = number_format(proto::MXFP8, proto::Training::CURRENT);
  EXPECT_DOUBLE_EQ(mx.element_bytes, 1 + 1.0 / 32);
  EXPECT_DOUBLE_EQ(mx.cast_bytes_per_element, 2 + 2 * (1 + 1.0 / 32));
  const NumberFormat fp4 = number_format(proto::NVFP4, proto::Training::CURRENT);
  EXPECT_DOUBLE_EQ(fp4.element_bytes, 0.5 + 1.0 / 16);
  EXPECT_DOUBLE_EQ(fp4.weight_copy_bytes, 2 * (0.5 + 1.0 / 16));
  const NumberFormat block = number_format(proto::FP8_BLOCKWISE, proto::Training::CURRENT);
  EXPECT_DOUBLE_EQ(block.element_bytes, 1 + 4.0 / 128);
  EXPECT_DOUBLE_EQ(block.weight_copy_bytes, 1 + 4.0 / (128 * 128));
  for (proto::Precision p : {proto::FP32, proto::FP16, proto::BF16}) {
    EXPECT_FALSE(number_format(p, proto::Training::CURRENT).low_precision);
    EXPECT_EQ(format_peak_field(p), nullptr);
  }
}

// Mixed-precision Adam in FP8 keeps BF16 weights and gradients, fp32 master weights and moments,
// and the weights' FP8 copies: 2 + 2 + 12 + 2 = 18 bytes per parameter; kept only in FP8
// (fp8_param_gather) 16. The step also writes the copies: 30 + 2.
TEST(NumberFormat, MemoryPerParameterByFormatAndOptimizer) {
  TrainingSpec t;
  t.optimizer = proto::ADAM;
  t.mixed_precision = true;
  t.precision = proto::FP8;
  EXPECT_EQ(bytes_per_parameter(t).total(), 18);
  EXPECT_EQ(bytes_per_parameter(t).weights, 4);
  EXPECT_EQ(optimizer_step_bytes(t), 30 + 2);
  t.fp8_param_gather = true;
  EXPECT_EQ(bytes_per_parameter(t).total(), 16);
  t.fp8_param_gather = false;
  t.precision = proto::MXFP8;
  EXPECT_DOUBLE_EQ(bytes_per_parameter(t).total(), 16 + 2 * (1 + 1.0 / 32));
  t.precision = proto::NVFP4;
  t.optimizer = proto::SGD;
  EXPECT_DOUBLE_EQ(bytes_per_parameter(t).total(), 2 + 2 + 4 + 2 * (0.5 + 1.0 / 16));
}

// A GEMM-bound layer (flat efficiency, no memory-bound kernels): the linear layers' GEMMs run at
// the efficiency of the FP8 peak, the attention core at that of the BF16 peak.
TEST(NumberFormat, AnFp8GemmBoundLayerRunsAtTheFormatsPeak) {
  const std::vector<std::string> bf16 = {"training.precision=BF16",
                                         "training.mixed_precision=true"};
  const std::vector<std::string> fp8 = {"training.precision=FP8"};
  const ResolvedScenario a = resolve("builtin:gpt-8gpu-1f1b", bf16);
  const ResolvedScenario b = resolve("builtin:gpt-8gpu-1f1b", fp8);
  const double efficiency = 0.45, bf16_peak = 989e12, fp8_peak = 1979e12;
  ASSERT_EQ(a.model.efficiency, efficiency);
  ASSERT_EQ(b.model.efficiency, 1);  // FLOPs rewritten at the BF16 peak
  ASSERT_EQ(b.training.format_peak_flops, fp8_peak);
  const ModelLayer& block = a.model.layers[1];
  double linear = 0;
  for (const LayerGemm& g : block.gemms)
    linear += g.in_training_format() ? g.flops_per_sample() : 0;
  ASSERT_GT(linear, 0.5 * block.fwd.flops_per_sample);
  const double expected = linear / (efficiency * fp8_peak) +
                          (block.fwd.flops_per_sample - linear) / (efficiency * bf16_peak);
  EXPECT_NEAR(b.model.layers[1].fwd.flops_per_sample / bf16_peak, expected, 1e-12 * expected);
  // The logits stay BF16.
  const ModelLayer& head = a.model.layers.back();
  EXPECT_NEAR(b.model.layers.back().fwd.flops_per_sample / bf16_peak,
              head.fwd.flops_per_sample / (efficiency * bf16_peak),
              1e-12 * head.fwd.flops_per_sample / bf16_peak);
}

// Each linear GEMM casts its input (m x k) forward and its output gradient (m x n) backward; a
// column-parallel input and a row-parallel output gradient are whole on every tensor-parallel GPU.
TEST(NumberFormat, CastsAreMemoryBoundTrafficOfTheGemmsOperands) {
  ModelSpec model;
  ModelLayer layer;
  layer.gemms = {{10, 300, 100, 1, LayerGemm::Split::kN, LayerGemm::Part::kWeights},
                 {10, 100, 300, 2, LayerGemm::Split::kK, LayerGemm::Part::kExpert},
                 {10, 10, 64, 4, LayerGemm::Split::kCount, LayerGemm::Part::kAttentionCore}};
  layer.gemms.push_back({10, 8, 100, 1, LayerGemm::Split::kNone, LayerGemm::Part::kWeights});
  layer.gemms.back().keeps_bf16 = true;  // a router
  model.layers = {layer};
  const NumberFormat f = number_format(proto::FP8, proto::Training::DELAYED);  // 4 B per element
  add_format_casts(model, f);
  const ModelLayer& l = model.layers[0];
  EXPECT_EQ(l.fwd_cast.bytes, 4 * (10 * 100 + 10 * 300 * 2));
  EXPECT_EQ(l.fwd_cast.undivided, 4 * (10 * 100));
  EXPECT_EQ(l.bwd_cast.bytes, 4 * (10 * 300 + 10 * 100 * 2));
  EXPECT_EQ(l.bwd_cast.undivided, 4 * (10 * 100 * 2));
  const double bandwidth = 1e12;
  add_memory_bound_time(model, bandwidth, false);
  EXPECT_DOUBLE_EQ(model.layers[0].fwd.seconds_per_sample, 4 * (10 * 300 * 2) / bandwidth);
  EXPECT_DOUBLE_EQ(model.layers[0].fwd.undivided_seconds_per_sample, 4 * (10 * 100) / bandwidth);
  EXPECT_DOUBLE_EQ(model.layers[0].bwd.seconds_per_sample, 4 * (10 * 300) / bandwidth);
}

// ZeRO-3 with the weights kept in FP8 gathers 1 byte per parameter where BF16 gathers 2; the
// gradients are reduce-scattered in BF16 either way.
TEST(NumberFormat, Fp8ParameterAllGathersMoveHalfOfBf16s) {
  const auto bytes = [](bool fp8_gather, Op op) {
    std::vector<std::string> set = {"training.precision=FP8", "training.data_parallel=4",
                                    "cluster.nodes=4",        "training.global_batch=128",
                                    "training.zero_stage=3",  "training.grad_bucket_mb=0"};
    if (fp8_gather) set.push_back("training.fp8_param_gather=true");
    const Program p = build_program(resolve("builtin:gpt-8gpu-1f1b", set));
    int64_t total = 0;
    for (const Instruction& ins : p.instructions) total += ins.op == op ? ins.bytes : 0;
    return static_cast<double>(total);
  };
  const double bf16 = bytes(false, Op::kAllGather), fp8 = bytes(true, Op::kAllGather);
  ASSERT_GT(bf16, 0);
  EXPECT_NEAR(fp8 / bf16, 0.5, 1e-6);
  EXPECT_EQ(bytes(false, Op::kReduceScatter), bytes(true, Op::kReduceScatter));
}

TEST(NumberFormat, AFormatTheGpuLacksNamesTheField) {
  const auto error = [](const std::vector<std::string>& set,
                        const std::string& scenario = "builtin:gpt-8gpu-1f1b") -> std::string {
    try {
      resolve(scenario, set);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_THAT(error({"training.precision=FP8"}, "builtin:offload-gpt-a100"),
              HasSubstr("training.precision: FP8 needs tensor cores for it: the GPU "
                        "(A100-SXM4-80GB) has no cluster.gpu.peak_tflops_fp8"));
  EXPECT_THAT(error({"training.precision=MXFP8"}), HasSubstr("cluster.gpu.peak_tflops_mxfp8"));
  EXPECT_THAT(error({"training.precision=NVFP4"}), HasSubstr("cluster.gpu.peak_tflops_nvfp4"));
  EXPECT_THAT(error({"training.precision=BF16", "training.fp8_param_gather=true"}),
              HasSubstr("training.fp8_param_gather"));
  EXPECT_THAT(error({"training.precision=BF16", "training.fp8_dispatch=true"}),
              HasSubstr("training.fp8_dispatch"));
  EXPECT_EQ(error({"training.precision=FP8_BLOCKWISE"}), "");
}

}  // namespace
}  // namespace pipetwin
