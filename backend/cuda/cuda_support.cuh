// What the CUDA backend's .cu files share: errors that name the failing call, cleanup
// of what was acquired (also when something throws), streams and events, and a kernel
// that holds a stream for a given time. Only nvcc compiles this.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipetwin::cuda_support {

inline void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(status));
  }
}

inline void check(ncclResult_t status, const char* call) {
  if (status != ncclSuccess) {
    std::string message = std::string(call) + " failed: " + ncclGetErrorString(status);
    const char* detail = ncclGetLastError(nullptr);
    if (detail != nullptr && *detail != '\0') message += std::string(" (") + detail + ")";
    throw std::runtime_error(message);
  }
}

inline void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(call) + " failed: cuBLAS status " +
                             std::to_string(static_cast<int>(status)));
  }
}

#define PIPETWIN_CHECK(call) check((call), #call)

// Releases what was acquired, last first, also when a measurement throws.
class Cleanup {
 public:
  Cleanup() = default;
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  ~Cleanup() {
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) (*it)();
  }
  void add(std::function<void()> undo) { undo_.push_back(std::move(undo)); }

 private:
  std::vector<std::function<void()>> undo_;
};

// Spins on the GPU's nanosecond timer.
static __global__ void hold_stream(uint64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

inline cudaStream_t new_stream(int device, Cleanup& cleanup) {
  PIPETWIN_CHECK(cudaSetDevice(device));
  cudaStream_t stream;
  PIPETWIN_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cleanup.add([stream] { cudaStreamDestroy(stream); });
  return stream;
}

inline cudaEvent_t new_event(int device, unsigned flags, Cleanup& cleanup) {
  PIPETWIN_CHECK(cudaSetDevice(device));
  cudaEvent_t event;
  PIPETWIN_CHECK(cudaEventCreateWithFlags(&event, flags));
  cleanup.add([event] { cudaEventDestroy(event); });
  return event;
}

}  // namespace pipetwin::cuda_support
