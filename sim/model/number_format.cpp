#include "sim/model/number_format.h"

namespace pipetwin {
namespace {

constexpr double kBf16 = 2;
constexpr double kFp8 = 1;
constexpr double kFp4 = 0.5;
// MXFP8 (OCP Microscaling Formats v1.0): one E8M0 byte per block of 32 values.
constexpr double kMxfp8 = kFp8 + 1.0 / 32;
// NVFP4: one E4M3 byte per block of 16 values (the per-tensor fp32 scale is negligible).
constexpr double kNvfp4 = kFp4 + 1.0 / 16;
// FP8_BLOCKWISE: an fp32 scale per 1 x 128 tile of activations.
constexpr double kBlockwiseActivation = kFp8 + 4.0 / 128;
// And per 128 x 128 tile of weights, which serves the transposed product as it is.
constexpr double kBlockwiseWeight = kFp8 + 4.0 / (128 * 128);

NumberFormat low_precision(double element_bytes, double extra_read, double weight_copy_bytes) {
  NumberFormat f;
  f.low_precision = true;
  f.element_bytes = element_bytes;
  f.cast_bytes_per_element = kBf16 + extra_read + 2 * element_bytes;
  f.weight_copy_bytes = weight_copy_bytes;
  return f;
}

}  // namespace

NumberFormat number_format(proto::Precision precision, proto::Training::Fp8Scaling scaling) {
  switch (precision) {
    case proto::FP8:
      return low_precision(kFp8, scaling == proto::Training::CURRENT ? kBf16 : 0, 2 * kFp8);
    case proto::FP8_BLOCKWISE:
      return low_precision(kBlockwiseActivation, 0, kBlockwiseWeight);
    case proto::MXFP8:
      return low_precision(kMxfp8, 0, 2 * kMxfp8);
    case proto::NVFP4:
      return low_precision(kNvfp4, 0, 2 * kNvfp4);
    case proto::FP32:
    case proto::FP16:
    case proto::BF16:
      break;
  }
  return {};
}

const char* format_peak_field(proto::Precision precision) {
  switch (precision) {
    case proto::FP8:
    case proto::FP8_BLOCKWISE:
      return "peak_tflops_fp8";
    case proto::MXFP8:
      return "peak_tflops_mxfp8";
    case proto::NVFP4:
      return "peak_tflops_nvfp4";
    case proto::FP32:
    case proto::FP16:
    case proto::BF16:
      break;
  }
  return nullptr;
}

double format_peak_flops(const proto::Gpu& gpu, proto::Precision precision) {
  switch (precision) {
    case proto::FP8:
    case proto::FP8_BLOCKWISE:
      return gpu.peak_tflops_fp8() * 1e12;
    case proto::MXFP8:
      return gpu.peak_tflops_mxfp8() * 1e12;
    case proto::NVFP4:
      return gpu.peak_tflops_nvfp4() * 1e12;
    case proto::FP32:
    case proto::FP16:
    case proto::BF16:
      break;
  }
  return gpu.peak_tflops() * 1e12;
}

}  // namespace pipetwin
