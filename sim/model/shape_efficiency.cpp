#include "sim/model/shape_efficiency.h"

#include <algorithm>

#include "sim/model/gemm_curve.h"

namespace pipetwin {
namespace {

// Seconds per sample of one pass's GEMMs, as the whole layer would take them (the cost model
// divides a layer's time by tensor x context parallelism afterwards), and their FLOPs per
// sample (whole layer).
struct PassTime {
  double seconds = 0, flops = 0;
  void add(double s, double f) { seconds += s, flops += f; }
};

struct LayerGemmTimes {
  PassTime fwd, input_gradient, weight_gradient, attention_core, experts;
};

LayerGemmTimes layer_gemm_times(const ModelLayer& layer, const GemmCurve& curve,
                                const GemmCurve* training_format, double samples,
                                const ShapeParallelism& parallel) {
  LayerGemmTimes t;
  const double spread = static_cast<double>(parallel.tensor) * parallel.context / samples;
  GemmCurve on_chip = curve;
  on_chip.memory_bytes_per_s = 0;
  for (const LayerGemm& g : layer.gemms) {
    const GemmOnGpu s = gemm_on_gpu(g, samples, parallel);
    const GemmCurve& c = g.on_chip                                              ? on_chip
                         : training_format != nullptr && g.in_training_format() ? *training_format
                                                                                : curve;
    const double flops = g.flops_per_sample();
    const double fwd = gemm_seconds(c, s.m, s.n, s.k, s.count) * spread;
    const double dx = gemm_seconds(c, s.m, s.k, s.n, s.count) * spread;
    const double dw = gemm_seconds(c, s.k, s.n, s.m, s.count) * spread;
    t.fwd.add(fwd, flops);
    if (g.part == LayerGemm::Part::kAttentionCore) {
      t.attention_core.add(fwd, flops);
      t.input_gradient.add(dx + dw, 2 * flops);  // both are gradients of activations
    } else {
      t.input_gradient.add(dx, flops);
      t.weight_gradient.add(dw, flops);
    }
    if (g.part == LayerGemm::Part::kExpert) t.experts.add(fwd, flops);
  }
  return t;
}

// The factor that turns `flops` (of which `gemm` were timed as `gemm_seconds` per sample)
// into FLOPs at the peak: the rest runs at peak_fraction.
double to_peak_flops(double flops, const PassTime& gemm, const GemmCurve& curve) {
  if (flops <= 0) return 1 / curve.peak_fraction;
  const double rest = std::max(0.0, flops - gemm.flops);
  return (rest / curve.peak_fraction + gemm.seconds * curve.peak_flops) / flops;
}

void scale(LayerCost& cost, double factor) {
  cost.flops_per_sample *= factor;
  cost.fixed_flops *= factor;
}

}  // namespace

GemmOnGpu gemm_on_gpu(const LayerGemm& gemm, double samples, const ShapeParallelism& parallel) {
  GemmOnGpu s{gemm.rows_per_sample * samples / parallel.context, gemm.n, gemm.k, gemm.count};
  double split = parallel.tensor;
  if (gemm.part == LayerGemm::Part::kExpert) {
    // Each GPU of the group holds count / E experts, split ETP ways, and gathers their tokens
    // from the E x ETP GPUs of its group, each with 1 / (T C) of the replica's (sequence
    // parallelism): with ETP = T, the tokens of E replicas.
    const int expert_tensor = parallel.expert_tensor > 0 ? parallel.expert_tensor : parallel.tensor;
    s.m *= static_cast<double>(parallel.expert) * expert_tensor / parallel.tensor;
    s.count /= parallel.expert;
    split = expert_tensor;
  }
  switch (gemm.tensor_split) {
    case LayerGemm::Split::kN:
      s.n /= split;
      break;
    case LayerGemm::Split::kK:
      s.k /= split;
      break;
    case LayerGemm::Split::kCount:
      s.count /= split;
      break;
    case LayerGemm::Split::kNone:
      break;
  }
  return s;
}

void apply_shape_efficiency(ModelSpec& model, const GemmCurve& curve, double samples_per_microbatch,
                            const ShapeParallelism& parallel, const GemmCurve* training_format) {
  for (ModelLayer& layer : model.layers) {
    const LayerGemmTimes t =
        layer_gemm_times(layer, curve, training_format, samples_per_microbatch, parallel);
    const double weight_flops = layer.bwd_weight ? layer.bwd_weight->flops_per_sample : 0;
    PassTime backward = t.input_gradient;
    backward.add(t.weight_gradient.seconds, t.weight_gradient.flops);
    const double fwd = to_peak_flops(layer.fwd.flops_per_sample, t.fwd, curve);
    const double bwd = to_peak_flops(layer.bwd.flops_per_sample, backward, curve);
    const double weight = to_peak_flops(weight_flops, t.weight_gradient, curve);
    scale(layer.fwd, fwd);
    scale(layer.bwd, bwd);
    if (layer.bwd_weight) scale(*layer.bwd_weight, weight);
    layer.attention_flops_per_sample *=
        to_peak_flops(layer.attention_flops_per_sample, t.attention_core, curve);
    layer.cp_attention_flops_per_sample *=
        to_peak_flops(layer.cp_attention_flops_per_sample, t.attention_core, curve);
    // The experts' FLOPs of one token through every routed expert (expert parallelism's
    // imbalance is priced from them): the routed GEMMs' time over their FLOPs.
    const double routed = layer.moe.top_k * layer.moe.expert_flops_per_sample;
    if (routed > 0) layer.moe.expert_flops_per_sample *= to_peak_flops(routed, t.experts, curve);
  }
  model.efficiency = 1;
}

}  // namespace pipetwin
