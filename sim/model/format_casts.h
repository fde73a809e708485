// The casts a low-precision training.precision adds (sim/model/number_format.h): before each
// GEMM of a linear layer, its 16-bit input is cast in the forward and its output gradient in
// the backward, each to the row-wise and column-wise copies the pass's two GEMMs read. The
// weights' copies are cast once per iteration, with the optimizer step
// (optimizer_step_bytes). The bytes are memory-bound time at model.zoo.memory_efficiency.
#pragma once

#include "sim/model/number_format.h"
#include "sim/spec/model_spec.h"

namespace pipetwin {

// Sets every layer's fwd_cast and bwd_cast from its GEMMs. A column-parallel GEMM's input and a
// row-parallel GEMM's output gradient are whole on every tensor-parallel GPU without sequence
// parallelism (the undivided part); the rest is split.
void add_format_casts(ModelSpec& model, const NumberFormat& format);

}  // namespace pipetwin
