// The CUDA backend's measurements, compiled by nvcc. Every operation is timed on the GPU
// with CUDA events; a short kernel holds the stream busy before the start event, so the
// host's launch cost (NCCL's especially) is not counted as link time.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>

#include "backend/cuda/cuda_calibration.h"
#include "backend/cuda/cuda_support.cuh"

namespace pipetwin {
namespace {

using namespace cuda_support;

constexpr int kWarmups = 2;
constexpr uint64_t kHoldNs = 1'000'000;  // longer than the host needs to enqueue one transfer

void hold(cudaStream_t stream) {
  hold_stream<<<1, 1, 0, stream>>>(kHoldNs);
  PIPETWIN_CHECK(cudaGetLastError());
}

void* new_device_buffer(int device, size_t bytes, Cleanup& cleanup) {
  PIPETWIN_CHECK(cudaSetDevice(device));
  void* buffer = nullptr;
  PIPETWIN_CHECK(cudaMalloc(&buffer, bytes));
  cleanup.add([buffer] { cudaFree(buffer); });
  PIPETWIN_CHECK(cudaMemset(buffer, 1, bytes));
  PIPETWIN_CHECK(cudaDeviceSynchronize());  // our streams do not wait for the default one
  return buffer;
}

double elapsed_s(cudaEvent_t start, cudaEvent_t stop) {
  PIPETWIN_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  PIPETWIN_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms * 1e-3;
}

// The fastest of `repeats` timed runs after the warm-ups.
double fastest(int repeats, const std::function<double()>& timed_run) {
  double best = std::numeric_limits<double>::infinity();
  for (int k = 0; k < kWarmups + repeats; ++k) {
    const double seconds = timed_run();
    if (k >= kWarmups) best = std::min(best, seconds);
  }
  return best;
}

void measure_copies(const std::vector<int64_t>& sizes, int repeats, CudaCalibration& result) {
  Cleanup cleanup;
  const size_t largest = static_cast<size_t>(*std::max_element(sizes.begin(), sizes.end()));
  void* device = new_device_buffer(0, largest, cleanup);
  void* host = nullptr;
  PIPETWIN_CHECK(cudaMallocHost(&host, largest));  // pinned: the copy is one DMA transfer
  cleanup.add([host] { cudaFreeHost(host); });
  std::fill_n(static_cast<char*>(host), largest, 1);
  cudaStream_t stream = new_stream(0, cleanup);
  cudaEvent_t start = new_event(0, cudaEventDefault, cleanup);
  cudaEvent_t stop = new_event(0, cudaEventDefault, cleanup);

  auto time_copy = [&](void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
    hold(stream);
    PIPETWIN_CHECK(cudaEventRecord(start, stream));
    PIPETWIN_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
    PIPETWIN_CHECK(cudaEventRecord(stop, stream));
    return elapsed_s(start, stop);
  };
  for (int64_t size : sizes) {
    const size_t bytes = static_cast<size_t>(size);
    result.h2d_samples.emplace_back(static_cast<double>(bytes), fastest(repeats, [&] {
                                      return time_copy(device, host, bytes, cudaMemcpyHostToDevice);
                                    }));
    result.d2h_samples.emplace_back(static_cast<double>(bytes), fastest(repeats, [&] {
                                      return time_copy(host, device, bytes, cudaMemcpyDeviceToHost);
                                    }));
  }
  result.h2d = fit_link(result.h2d_samples);
  result.d2h = fit_link(result.d2h_samples);
}

// Device 0 sends to device 1, both driven from this thread (one NCCL group). Both streams
// start at device 0's start event; device 0's stop event waits for device 1's receive, so
// start->stop spans the whole rendezvous and transfer.
void measure_nccl_p2p(const std::vector<int64_t>& sizes, int repeats, CudaCalibration& result) {
  Cleanup cleanup;
  const size_t largest = static_cast<size_t>(*std::max_element(sizes.begin(), sizes.end()));
  ncclComm_t comms[2];
  const int devices[2] = {0, 1};
  PIPETWIN_CHECK(ncclCommInitAll(comms, 2, devices));
  cleanup.add([comms] {
    // Destroy waits for pending work; after a failure there may be some that never ends.
    for (ncclComm_t comm : comms) {
      if (std::uncaught_exceptions() > 0) {
        ncclCommAbort(comm);
      } else {
        ncclCommDestroy(comm);
      }
    }
  });
  void* send_buffer = new_device_buffer(0, largest, cleanup);
  void* recv_buffer = new_device_buffer(1, largest, cleanup);
  cudaStream_t stream0 = new_stream(0, cleanup), stream1 = new_stream(1, cleanup);
  cudaEvent_t start = new_event(0, cudaEventDefault, cleanup);
  cudaEvent_t stop = new_event(0, cudaEventDefault, cleanup);
  cudaEvent_t received = new_event(1, cudaEventDisableTiming, cleanup);

  auto time_transfer = [&](size_t bytes) {
    PIPETWIN_CHECK(cudaSetDevice(0));
    hold(stream0);
    PIPETWIN_CHECK(cudaEventRecord(start, stream0));
    PIPETWIN_CHECK(cudaStreamWaitEvent(stream1, start, 0));
    PIPETWIN_CHECK(ncclGroupStart());
    PIPETWIN_CHECK(ncclSend(send_buffer, bytes, ncclInt8, 1, comms[0], stream0));
    PIPETWIN_CHECK(ncclRecv(recv_buffer, bytes, ncclInt8, 0, comms[1], stream1));
    PIPETWIN_CHECK(ncclGroupEnd());
    PIPETWIN_CHECK(cudaSetDevice(1));
    PIPETWIN_CHECK(cudaEventRecord(received, stream1));
    PIPETWIN_CHECK(cudaSetDevice(0));
    PIPETWIN_CHECK(cudaStreamWaitEvent(stream0, received, 0));
    PIPETWIN_CHECK(cudaEventRecord(stop, stream0));
    return elapsed_s(start, stop);
  };
  for (int64_t size : sizes) {
    const size_t bytes = static_cast<size_t>(size);
    result.nccl_p2p_samples.emplace_back(static_cast<double>(bytes),
                                         fastest(repeats, [&] { return time_transfer(bytes); }));
  }
  result.nccl_p2p = fit_link(result.nccl_p2p_samples);
  result.nccl_p2p_measured = true;
}

// 13000 -> "13.0"
// cuBLAS GEMMs of every m in kGemmRows against a k x n operand, per precision.
constexpr int64_t kGemmN = 8192, kGemmK = 8192;
constexpr int64_t kGemmRows[] = {128, 256, 512, 1024, 2048, 4096, 8192, 16384};

void measure_gemms(int repeats, CudaCalibration& result) {
  Cleanup cleanup;
  PIPETWIN_CHECK(cudaSetDevice(0));
  cudaStream_t stream = new_stream(0, cleanup);
  cublasHandle_t blas = nullptr;
  PIPETWIN_CHECK(cublasCreate(&blas));
  cleanup.add([blas] { cublasDestroy(blas); });
  PIPETWIN_CHECK(cublasSetStream(blas, stream));
  const int64_t max_m = kGemmRows[std::size(kGemmRows) - 1];
  // 4-byte elements cover every precision; contents do not change a GEMM's speed.
  void* a = new_device_buffer(0, 4 * max_m * kGemmK, cleanup);
  void* b = new_device_buffer(0, 4 * kGemmK * kGemmN, cleanup);
  void* c = new_device_buffer(0, 4 * max_m * kGemmN, cleanup);
  cudaEvent_t start = new_event(0, cudaEventDefault, cleanup);
  cudaEvent_t stop = new_event(0, cudaEventDefault, cleanup);
  struct Precision {
    cudaDataType_t type;
    cublasComputeType_t compute;
    std::vector<GemmSample>* samples;
  };
  const Precision precisions[] = {{CUDA_R_16BF, CUBLAS_COMPUTE_32F, &result.gemm_bf16},
                                  {CUDA_R_16F, CUBLAS_COMPUTE_32F, &result.gemm_fp16},
                                  {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, &result.gemm_fp32}};
  const float alpha = 1, beta = 0;
  for (const Precision& p : precisions) {
    for (int64_t m : kGemmRows) {
      // Column-major: C (n x m) = B (n x k) * A (k x m), i.e. row-major A (m x k) * B.
      const double seconds = fastest(repeats, [&] {
        hold(stream);
        PIPETWIN_CHECK(cudaEventRecord(start, stream));
        PIPETWIN_CHECK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, kGemmN, m, kGemmK, &alpha, b,
                                    p.type, kGemmN, a, p.type, kGemmK, &beta, c, p.type, kGemmN,
                                    p.compute, CUBLAS_GEMM_DEFAULT));
        PIPETWIN_CHECK(cudaEventRecord(stop, stream));
        return elapsed_s(start, stop);
      });
      p.samples->push_back({m, kGemmN, kGemmK, seconds});
    }
  }
}

std::string cuda_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

std::string cuda_unavailable() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear it, so that it does not surface in a later call
    std::string reason =
        std::string("no CUDA device is visible (cudaGetDeviceCount: ") + cudaGetErrorString(status);
    if (status == cudaErrorInsufficientDriver) {
      int driver = 0, runtime = 0;
      cudaDriverGetVersion(&driver);  // 0 when no driver is installed
      cudaRuntimeGetVersion(&runtime);
      reason += driver == 0 ? "; no NVIDIA driver is installed"
                            : "; the driver supports CUDA " + cuda_version(driver) +
                                  ", this build needs " + cuda_version(runtime);
    }
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
      reason += std::string("; CUDA_VISIBLE_DEVICES=") + visible;
    }
    return reason + ")";
  }
  if (count < 1) return "no CUDA device is visible (cudaGetDeviceCount found 0 devices)";
  return "";
}

CudaCalibration calibrate_cuda(const std::vector<int64_t>& sizes, int repeats) {
  if (sizes.empty()) throw std::invalid_argument("calibrate_cuda: no message sizes");
  for (int64_t size : sizes) {
    if (size < 1) throw std::invalid_argument("calibrate_cuda: each message needs >= 1 byte");
  }
  if (repeats < 1) throw std::invalid_argument("calibrate_cuda: repeats must be >= 1");
  if (const std::string reason = cuda_unavailable(); !reason.empty()) {
    throw std::runtime_error(reason);
  }
  CudaCalibration result;
  PIPETWIN_CHECK(cudaGetDeviceCount(&result.device_count));
  cudaDeviceProp properties;
  PIPETWIN_CHECK(cudaGetDeviceProperties(&properties, 0));
  result.device_name = properties.name;

  measure_copies(sizes, repeats, result);
  measure_gemms(repeats, result);
  if (result.device_count >= 2) {
    measure_nccl_p2p(sizes, repeats, result);
  } else {
    result.nccl_p2p_note = "NCCL point-to-point needs 2 GPUs; " +
                           std::to_string(result.device_count) +
                           " is visible, so the intra-node link was not measured";
  }
  return result;
}

}  // namespace pipetwin
