// Memory-bound kernels (layernorms, softmax, dropout, GeLU, residual adds): time that
// depends on bytes moved, not FLOPs. Their share of a transformer block is ~(38h + 9as)/(24h^2)
// of its GEMMs' work in bytes per FLOP, so it shrinks as models widen: the reason large
// models reach more of a GPU's peak than small ones.
#pragma once

#include "sim/spec/model_spec.h"

namespace pipetwin {

// Adds to every layer's forward its fwd_memory_bytes_per_sample over `bytes_per_s` (the
// device's memory bandwidth times the fraction memory-bound kernels reach), and twice that
// to its backward (which reads the saved tensors and the incoming gradient and writes the
// outgoing one). The tp_undivided part is time every tensor-parallel GPU spends whole,
// unless sequence parallelism splits it. Also sets each layer's
// attention_memory_seconds_per_sample, the part of that forward time selective
// recomputation runs again. A low-precision format's casts (fwd_cast, bwd_cast) are added to
// their passes as they are.
void add_memory_bound_time(ModelSpec& model, double bytes_per_s, bool sequence_parallel);

}  // namespace pipetwin
