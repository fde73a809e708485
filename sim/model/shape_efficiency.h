// GEMM efficiency by shape, as a lowering of the zoo's FLOP counts: every layer's FLOPs are
// rewritten as FLOPs at the GPU's peak that take the time its GEMMs take on the curve
// (sim/model/gemm_curve.h), and the model's efficiency becomes 1. A layer's GEMMs
// (ModelLayer::gemms) are timed as one GPU runs them: m is the microbatch's rows (divided by
// context parallelism; an expert's grown by expert parallelism), n, k or count divided by
// tensor parallelism. The backward runs, for each forward GEMM, the input gradient
// (m x k by the transposed weights) and the weight gradient (k x n, reduced over m); the
// weight gradients of the weights are W, the rest (the attention core's included) is B.
// FLOPs outside the GEMMs, and layers without GEMM shapes, run at peak_fraction. Fused
// attention's products (LayerGemm::on_chip) are not bound by memory.
//
// The curve is evaluated at one microbatch size (the scenario's), so the per-sample slope it
// leaves is exact at that size; schedules that vary the size (UMPIPE) see that slope.
#pragma once

#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"

namespace pipetwin {

// `expert_tensor`: the GPUs that split an expert's width (0: `tensor`, the experts split like
// the dense MLP).
struct ShapeParallelism {
  int tensor = 1, context = 1, expert = 1, expert_tensor = 0;
};

// `training_format`, when given, times the GEMMs of the linear layers (LayerGemm::
// in_training_format) in a low-precision training.precision: the curve at the format's peak and
// operand bytes. Their time still turns into FLOPs at `curve`'s peak.
void apply_shape_efficiency(ModelSpec& model, const GemmCurve& curve, double samples_per_microbatch,
                            const ShapeParallelism& parallel,
                            const GemmCurve* training_format = nullptr);

// A layer's per-GPU GEMM shape of `gemm` for `samples` samples: {m, n, k, count}.
struct GemmOnGpu {
  double m = 0, n = 0, k = 0, count = 1;
};
GemmOnGpu gemm_on_gpu(const LayerGemm& gemm, double samples, const ShapeParallelism& parallel);

}  // namespace pipetwin
