// The replay on one GPU (see replay_executor.h). The host enqueues every op of the plan
// once, in an order that respects the events (an op is enqueued after the ops it waits
// for), then waits for the device once and reads the events.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>

#include "backend/cuda/cuda_support.cuh"
#include "backend/cuda/replay_executor.h"

namespace pipetwin {
namespace {

using namespace cuda_support;
using cuda_support::check;  // next to the cuBLAS overload below

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(call) + " failed: cuBLAS status " +
                             std::to_string(static_cast<int>(status)));
  }
}

// Every transfer pair and all-reduce group gets its own communicator: each is then driven
// by one stream per member, in the same order on every member, as NCCL needs.
class Communicators {
 public:
  Communicators(const ReplayPlan& plan, int world_size, const std::string& id) {
    ncclUniqueId unique;
    if (id.size() != sizeof(unique.internal)) {
      throw std::runtime_error("the NCCL unique id has " + std::to_string(id.size()) +
                               " bytes, not " + std::to_string(sizeof(unique.internal)));
    }
    std::memcpy(unique.internal, id.data(), id.size());
    PIPETWIN_CHECK(ncclCommInitRank(&world_, world_size, unique, plan.rank));
    for (const auto& [from, to] : plan.transfer_pairs) {
      const bool member = plan.rank == from || plan.rank == to;
      pairs_[{from, to}] = split(member);
    }
    for (const auto& members : plan.groups) {
      const bool member = std::find(members.begin(), members.end(), plan.rank) != members.end();
      groups_[members] = split(member);
    }
  }
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;
  ~Communicators() {
    for (auto& [key, comm] : pairs_)
      if (comm) ncclCommDestroy(comm);
    for (auto& [key, comm] : groups_)
      if (comm) ncclCommDestroy(comm);
    if (world_) ncclCommDestroy(world_);
  }

  ncclComm_t world() const { return world_; }
  ncclComm_t pair(int from, int to) const { return pairs_.at({from, to}); }
  ncclComm_t group(const std::vector<int32_t>& members) const { return groups_.at(members); }

 private:
  // Every rank takes part in every split, in the same order; non-members get no comm.
  ncclComm_t split(bool member) {
    ncclComm_t comm = nullptr;
    PIPETWIN_CHECK(ncclCommSplit(world_, member ? 0 : NCCL_SPLIT_NOCOLOR, 0, &comm, nullptr));
    return comm;
  }

  ncclComm_t world_ = nullptr;
  std::map<std::pair<int32_t, int32_t>, ncclComm_t> pairs_;
  std::map<std::vector<int32_t>, ncclComm_t> groups_;
};

// A peer's rank inside a two-rank communicator (split keeps the world order).
int pair_rank(int self, int peer) { return peer > self ? 1 : 0; }

class Replay {
 public:
  Replay(const ReplayPlan& plan, int world_size, const std::string& id, int device)
      : plan_(plan), device_(device) {
    PIPETWIN_CHECK(cudaSetDevice(device));
    for (int lane = 0; lane < kReplayLanes; ++lane) streams_[lane] = new_stream(device, cleanup_);
    comms_ = std::make_unique<Communicators>(plan, world_size, id);
    PIPETWIN_CHECK(cublasCreate(&blas_));
    cleanup_.add([this] { cublasDestroy(blas_); });
    allocate_scratch();
  }

  ReplayResult run(double (*host_now)()) {
    ReplayResult result;
    result.spin_scale = calibrate_spin();
    reset_pool_peak();
    for (const ReplayOp& op : plan_.ops) {
      start_[op.instruction] = new_event(device_, cudaEventDefault, cleanup_);
      end_[op.instruction] = new_event(device_, cudaEventDefault, cleanup_);
    }
    // Every rank starts together: a one-element all-reduce, then the base event.
    cudaStream_t compute = streams_[0];
    PIPETWIN_CHECK(
        ncclAllReduce(scratch_, scratch_, 1, ncclFloat, ncclSum, comms_->world(), compute));
    cudaEvent_t base = new_event(device_, cudaEventDefault, cleanup_);
    PIPETWIN_CHECK(cudaEventRecord(base, compute));
    PIPETWIN_CHECK(cudaEventSynchronize(base));
    result.host_start_s = host_now();
    enqueue_all(result.spin_scale);
    PIPETWIN_CHECK(cudaDeviceSynchronize());
    for (const ReplayOp& op : plan_.ops) {
      float start_ms = 0, end_ms = 0;
      PIPETWIN_CHECK(cudaEventElapsedTime(&start_ms, base, start_.at(op.instruction)));
      PIPETWIN_CHECK(cudaEventElapsedTime(&end_ms, base, end_.at(op.instruction)));
      result.start_s.push_back(start_ms * 1e-3);
      result.end_s.push_back(end_ms * 1e-3);
    }
    result.peak_allocated_bytes = peak_allocated_;
    cudaMemPool_t pool;
    PIPETWIN_CHECK(cudaDeviceGetDefaultMemPool(&pool, device_));
    unsigned long long high = 0;  // the attribute is a 64-bit value
    PIPETWIN_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
    result.peak_pool_bytes = static_cast<int64_t>(high);
    size_t free_bytes = 0, total_bytes = 0;
    PIPETWIN_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    result.device_used_bytes = static_cast<int64_t>(total_bytes - free_bytes);
    return result;
  }

 private:
  // Buffers whose contents do not matter, sized for the largest op of each kind.
  void allocate_scratch() {
    int64_t gemm_a = 1, gemm_b = 1, gemm_c = 1, transfer = 4, copy = 1;
    for (const ReplayOp& op : plan_.ops) {
      gemm_a = std::max(gemm_a, op.m * op.k);
      gemm_b = std::max(gemm_b, op.k * op.n);
      gemm_c = std::max(gemm_c, op.m * op.n);
      if (op.kind == ReplayKind::kSend || op.kind == ReplayKind::kRecv ||
          op.kind == ReplayKind::kAllReduce) {
        transfer = std::max(transfer, op.bytes);
      }
      if (op.kind == ReplayKind::kToHost || op.kind == ReplayKind::kToDevice) {
        copy = std::max(copy, op.bytes);
      }
    }
    const size_t bf16 = 2;
    a_ = device_buffer(gemm_a * bf16);
    b_ = device_buffer(gemm_b * bf16);
    c_ = device_buffer(gemm_c * bf16);
    send_ = device_buffer(transfer);
    recv_ = device_buffer(transfer);
    scratch_ = device_buffer(std::max<int64_t>(transfer, 4));
    copy_device_ = device_buffer(copy);
    PIPETWIN_CHECK(cudaMallocHost(&copy_host_, copy));
    void* host = copy_host_;
    cleanup_.add([host] { cudaFreeHost(host); });
  }

  void* device_buffer(int64_t bytes) {
    void* buffer = nullptr;
    PIPETWIN_CHECK(cudaMalloc(&buffer, static_cast<size_t>(bytes)));
    cleanup_.add([buffer] { cudaFree(buffer); });
    PIPETWIN_CHECK(cudaMemset(buffer, 0, static_cast<size_t>(bytes)));
    return buffer;
  }

  // The spin kernel reads the GPU's nanosecond timer; launching it costs a little. One
  // timed millisecond tells how much, so timed ops last what the cost model says.
  double calibrate_spin() {
    cudaStream_t stream = streams_[0];
    cudaEvent_t before = new_event(device_, cudaEventDefault, cleanup_);
    cudaEvent_t after = new_event(device_, cudaEventDefault, cleanup_);
    constexpr uint64_t kNs = 1'000'000;
    PIPETWIN_CHECK(cudaEventRecord(before, stream));
    hold_stream<<<1, 1, 0, stream>>>(kNs);
    PIPETWIN_CHECK(cudaGetLastError());
    PIPETWIN_CHECK(cudaEventRecord(after, stream));
    PIPETWIN_CHECK(cudaEventSynchronize(after));
    float ms = 0;
    PIPETWIN_CHECK(cudaEventElapsedTime(&ms, before, after));
    return ms > 0 ? 1.0 / ms : 1.0;  // requested 1 ms over measured
  }

  void reset_pool_peak() {
    cudaMemPool_t pool;
    PIPETWIN_CHECK(cudaDeviceGetDefaultMemPool(&pool, device_));
    unsigned long long zero = 0;
    PIPETWIN_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  }

  void enqueue_all(double spin_scale) {
    for (size_t k : host_enqueue_order(plan_)) enqueue(plan_.ops[k], spin_scale);
  }

  void enqueue(const ReplayOp& op, double spin_scale) {
    cudaStream_t stream = streams_[op.lane];
    for (int32_t d : op.wait_for) PIPETWIN_CHECK(cudaStreamWaitEvent(stream, end_.at(d), 0));
    PIPETWIN_CHECK(cudaEventRecord(start_.at(op.instruction), stream));
    if (op.allocate_bytes > 0) {
      void* stash = nullptr;
      PIPETWIN_CHECK(cudaMallocAsync(&stash, static_cast<size_t>(op.allocate_bytes), stream));
      stashes_[op.stage].push_back({stash, op.allocate_bytes});
      allocated_ += op.allocate_bytes;
      peak_allocated_ = std::max(peak_allocated_, allocated_);
    }
    const int64_t bytes = std::max<int64_t>(op.bytes, 1);  // a token still rendezvouses
    switch (op.kind) {
      case ReplayKind::kGemm: {
        if (op.m == 0) break;
        const float alpha = 1, beta = 0;
        PIPETWIN_CHECK(cublasSetStream(blas_, stream));
        PIPETWIN_CHECK(cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, op.m, op.n, op.k, &alpha, a_,
                                    CUDA_R_16BF, op.m, b_, CUDA_R_16BF, op.k, &beta, c_,
                                    CUDA_R_16BF, op.m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        break;
      }
      case ReplayKind::kSpin:
        if (op.seconds > 0) {
          hold_stream<<<1, 1, 0, stream>>>(static_cast<uint64_t>(op.seconds * 1e9 * spin_scale));
          PIPETWIN_CHECK(cudaGetLastError());
        }
        break;
      case ReplayKind::kSend:
        PIPETWIN_CHECK(ncclSend(send_, bytes, ncclChar, pair_rank(plan_.rank, op.peer),
                                comms_->pair(plan_.rank, op.peer), stream));
        break;
      case ReplayKind::kRecv:
        PIPETWIN_CHECK(ncclRecv(recv_, bytes, ncclChar, pair_rank(plan_.rank, op.peer),
                                comms_->pair(op.peer, plan_.rank), stream));
        break;
      case ReplayKind::kToHost:
        PIPETWIN_CHECK(cudaMemcpyAsync(copy_host_, copy_device_, static_cast<size_t>(op.bytes),
                                       cudaMemcpyDeviceToHost, stream));
        break;
      case ReplayKind::kToDevice:
        PIPETWIN_CHECK(cudaMemcpyAsync(copy_device_, copy_host_, static_cast<size_t>(op.bytes),
                                       cudaMemcpyHostToDevice, stream));
        break;
      case ReplayKind::kAllReduce:
        PIPETWIN_CHECK(ncclAllReduce(scratch_, scratch_, static_cast<size_t>(bytes), ncclChar,
                                     ncclSum, comms_->group(op.group), stream));
        break;
    }
    // A BWD releases its stage's oldest stashes, as many bytes as it frees.
    int64_t to_free = op.free_bytes;
    auto& stashes = stashes_[op.stage];
    while (to_free > 0 && !stashes.empty()) {
      PIPETWIN_CHECK(cudaFreeAsync(stashes.front().first, stream));
      to_free -= stashes.front().second;
      allocated_ -= stashes.front().second;
      stashes.pop_front();
    }
    PIPETWIN_CHECK(cudaEventRecord(end_.at(op.instruction), stream));
  }

  const ReplayPlan& plan_;
  int device_;
  Cleanup cleanup_;
  cudaStream_t streams_[kReplayLanes] = {};
  std::unique_ptr<Communicators> comms_;
  cublasHandle_t blas_ = nullptr;
  void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
  void *send_ = nullptr, *recv_ = nullptr, *scratch_ = nullptr;
  void *copy_device_ = nullptr, *copy_host_ = nullptr;
  std::map<int32_t, cudaEvent_t> start_, end_;
  std::map<int32_t, std::deque<std::pair<void*, int64_t>>> stashes_;
  int64_t allocated_ = 0, peak_allocated_ = 0;
};

}  // namespace

std::string new_nccl_unique_id() {
  ncclUniqueId id;
  PIPETWIN_CHECK(ncclGetUniqueId(&id));
  return std::string(id.internal, sizeof(id.internal));
}

ReplayResult run_replay(const ReplayPlan& plan, int world_size, const std::string& nccl_id,
                        int device, double (*host_now)()) {
  Replay replay(plan, world_size, nccl_id, device);
  return replay.run(host_now);
}

}  // namespace pipetwin
