// What a training precision (training.precision) changes in the cost and memory models. The
// low-precision formats run the GEMMs of the linear layers in the format and keep the rest in
// BF16; each GEMM operand is cast from BF16 before it is used (a memory-bound kernel that
// reads the 16-bit tensor and writes the row-wise copy the forward reads and the column-wise
// copy the backward's other GEMM reads), and the weights keep low-precision copies next to the
// BF16 ones. docs/models.md, "Number formats", gives each figure and its source.
#pragma once

#include "scenario.pb.h"

namespace pipetwin {

struct NumberFormat {
  // The GEMMs of the linear layers run in the format (FP8 and after).
  bool low_precision = false;
  // Bytes per element of a cast operand, its scales included: 1 for FP8, 1 + 1/32 for MXFP8
  // (an 8-bit exponent per 32 values), 1/2 + 1/16 for NVFP4 (an FP8 scale per 16).
  double element_bytes = 2;
  // Bytes one cast moves per element of a BF16 tensor: it reads 2 (and 2 more with current
  // scaling, for the tensor's largest magnitude) and writes the row-wise and column-wise
  // copies of element_bytes each.
  double cast_bytes_per_element = 0;
  // Bytes per parameter of the weights' low-precision copies (row-wise and column-wise; one
  // for 128 x 128 tiles, which serve both orientations).
  double weight_copy_bytes = 0;
};

NumberFormat number_format(proto::Precision precision, proto::Training::Fp8Scaling scaling);

// The field of cluster.gpu that holds the format's peak ("peak_tflops_fp8"), or nullptr for the
// 16-bit and 32-bit formats, which run at peak_tflops.
const char* format_peak_field(proto::Precision precision);

// That peak in FLOP/s, 0 when the GPU lacks it.
double format_peak_flops(const proto::Gpu& gpu, proto::Precision precision);

}  // namespace pipetwin
