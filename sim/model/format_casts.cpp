#include "sim/model/format_casts.h"

namespace pipetwin {

void add_format_casts(ModelSpec& model, const NumberFormat& format) {
  if (!format.low_precision) return;
  for (ModelLayer& layer : model.layers) {
    layer.fwd_cast = layer.bwd_cast = {};
    for (const LayerGemm& g : layer.gemms) {
      if (!g.in_training_format()) continue;
      const double input = g.rows_per_sample * g.k * g.count * format.cast_bytes_per_element;
      const double output_gradient =
          g.rows_per_sample * g.n * g.count * format.cast_bytes_per_element;
      layer.fwd_cast.bytes += input;
      layer.bwd_cast.bytes += output_gradient;
      if (g.tensor_split == LayerGemm::Split::kN) layer.fwd_cast.undivided += input;
      if (g.tensor_split == LayerGemm::Split::kK) layer.bwd_cast.undivided += output_gradient;
    }
  }
}

}  // namespace pipetwin
