// The time of one GEMM by its shape on a GPU (cluster.gpu.gemm_efficiency): the larger of
//   compute: ceil(tiles / SMs) waves, each the time one multiprocessor takes for a
//            tile_m x tile_n tile over the whole k at peak_fraction of its share of the peak
//            (wave and tile quantisation: a last wave or a partial tile runs as a whole one),
//            then for the tile's epilogue: writing its 16-bit result at the multiprocessor's
//            share of the memory bandwidth (what a short k no longer hides);
//   memory:  the operands read (operand_bytes each) and the result written once (16-bit) at the
//   fraction
//            memory_efficiency of the memory bandwidth (a roofline: a thin GEMM is memory-bound).
// The library may compute C or its transpose, whichever tiles better. With no multiprocessor
// count (0) and no bandwidth (0) the curve is flat: every GEMM at peak_fraction of the peak,
// which is the flat `efficiency` model. docs/models.md states the parameters and sources.
#pragma once

#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// Seconds of `count` GEMMs C[m x n] = A[m x k] B[k x n] run side by side (one batched launch).
double gemm_seconds(const GemmCurve& curve, double m, double n, double k, double count = 1);

// Their FLOPs over their time, as a fraction of peak_flops.
double gemm_efficiency(const GemmCurve& curve, double m, double n, double k, double count = 1);

}  // namespace pipetwin
