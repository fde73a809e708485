// The replay on one GPU (see replay_executor.h). The shared lane runner enqueues every op
// of the plan once, each lane from its own host thread (an op after the ops it waits for
// are enqueued); then the host waits for the device once and reads the events.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "backend/common/merge_slots.h"
#include "backend/cuda/cuda_support.cuh"
#include "backend/cuda/replay_executor.h"
#include "backend/replay/stash_ledger.h"

namespace pipetwin {
namespace {

using namespace cuda_support;

// Every transfer pair and collective group (per lane) gets its own communicator, split from the
// session's world communicator: each is then driven by one stream per member, in the
// same order on every member, as NCCL needs.
class Communicators {
 public:
  Communicators(const ReplayPlan& plan, ncclComm_t world) : world_(world) {
    for (const auto& [from, to] : plan.transfer_pairs) {
      const bool member = plan.rank == from || plan.rank == to;
      pairs_[{from, to}] = split(member);
    }
    for (const auto& [lane, members] : plan.groups) {
      const bool member = std::find(members.begin(), members.end(), plan.rank) != members.end();
      groups_[{lane, members}] = split(member);
    }
  }
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;
  ~Communicators() {
    for (auto& [key, comm] : pairs_)
      if (comm) ncclCommDestroy(comm);
    for (auto& [key, comm] : groups_)
      if (comm) ncclCommDestroy(comm);
  }

  ncclComm_t world() const { return world_; }
  ncclComm_t pair(int from, int to) const { return pairs_.at({from, to}); }
  ncclComm_t group(int lane, const std::vector<int32_t>& members) const {
    return groups_.at({lane, members});
  }

 private:
  // Every rank takes part in every split, in the same order; non-members get no comm.
  ncclComm_t split(bool member) {
    ncclComm_t comm = nullptr;
    PIPETWIN_CHECK(ncclCommSplit(world_, member ? 0 : NCCL_SPLIT_NOCOLOR, 0, &comm, nullptr));
    return comm;
  }

  ncclComm_t world_;
  std::map<std::pair<int32_t, int32_t>, ncclComm_t> pairs_;
  std::map<std::pair<int, std::vector<int32_t>>, ncclComm_t> groups_;
};

// BF16 values of either sign in [0.5, 1), from a hash of the index.
__global__ void bf16_noise(uint16_t* values, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u;
    h ^= h >> 15;
    values[i] = static_cast<uint16_t>(((h & 1u) << 15) | 0x3F00u | ((h >> 1) & 0x7Fu));
  }
}

// The spin kernel reads the GPU's nanosecond timer. Its first launch costs extra, and
// each launch a little: the slope between a 1 ms and a 5 ms spin (after a warm-up) is
// what a timed op's length scales by, the launch cost left out, since the ops follow each
// other on their stream and their launches overlap the previous op. Once per device.
double calibrate_spin(int device, cudaStream_t stream) {
  Cleanup cleanup;
  hold_stream<<<1, 1, 0, stream>>>(100'000);
  PIPETWIN_CHECK(cudaGetLastError());
  auto timed_ms = [&](uint64_t ns) {
    cudaEvent_t before = new_event(device, cudaEventDefault, cleanup);
    cudaEvent_t after = new_event(device, cudaEventDefault, cleanup);
    PIPETWIN_CHECK(cudaEventRecord(before, stream));
    hold_stream<<<1, 1, 0, stream>>>(ns);
    PIPETWIN_CHECK(cudaGetLastError());
    PIPETWIN_CHECK(cudaEventRecord(after, stream));
    PIPETWIN_CHECK(cudaEventSynchronize(after));
    float ms = 0;
    PIPETWIN_CHECK(cudaEventElapsedTime(&ms, before, after));
    return static_cast<double>(ms);
  };
  const double one = timed_ms(1'000'000), five = timed_ms(5'000'000);
  const double slope = (five - one) / 4.0;  // measured ms per requested ms
  return slope > 0.5 && slope < 2 ? 1.0 / slope : 1.0;
}

// The device's stream-ordered pool keeps what is freed (as PyTorch's caching allocator
// does), and never makes a stream wait for another to reuse a block: such a wait is not
// in the Program. Blocks whose free has already run are reused (opportunistic reuse).
void configure_pool(int device) {
  cudaMemPool_t pool;
  PIPETWIN_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t keep = UINT64_MAX;
  PIPETWIN_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  int no = 0;
  PIPETWIN_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &no));
}

// A peer's rank inside a two-rank communicator (split keeps the world order).
int pair_rank(int self, int peer) { return peer > self ? 1 : 0; }

}  // namespace

// What a rank keeps across the Programs it replays: its GPU, one stream per lane, the
// cuBLAS handle and the world communicator.
struct ReplaySession::State {
  int device = 0, world_size = 1, rank = 0;
  Cleanup cleanup;
  cudaStream_t streams[kReplayLanes] = {};
  ncclComm_t world = nullptr;
  cublasHandle_t blas = nullptr;
  double spin_scale = 1;  // timed kernels: requested / measured length
};

namespace {

// One Program on the session's GPU: its communicators, buffers and events live as long
// as the replay. The shared lane runner drives it: each lane's host thread enqueues onto
// the lane's stream (LaneDevice), an op once the ops it waits for are enqueued.
class Replay : public LaneDevice {
 public:
  Replay(const ReplayPlan& plan, const ReplaySession::State& session)
      : plan_(plan),
        device_(session.device),
        streams_(session.streams),
        blas_(session.blas),
        spin_scale_(session.spin_scale),
        ledger_(stash_ledger(plan)),
        blocks_(ledger_.blocks, nullptr) {
    PIPETWIN_CHECK(cudaSetDevice(device_));
    comms_ = std::make_unique<Communicators>(plan, session.world);
    allocate_scratch();
    if (plan.resident_bytes > 0) resident_ = device_buffer(plan.resident_bytes, "resident state");
    for (size_t k = 0; k < plan.ops.size(); ++k) index_of_[plan.ops[k].instruction] = k;
  }

  // LaneDevice, on each lane's thread: every lane starts after time 0 (the base event on
  // the compute stream).
  void enter_lane(int lane) override {
    PIPETWIN_CHECK(cudaSetDevice(device_));
    PIPETWIN_CHECK(cudaStreamWaitEvent(streams_[lane], base_, 0));
  }
  void execute(int32_t instruction) override { enqueue(index_of_.at(instruction)); }

  ReplayResult run(int world_size, bool shared_gpu) {
    ReplayResult result;
    result.spin_scale = spin_scale_;
    warm_up();
    reset_pool_peak();
    for (const ReplayOp& op : plan_.ops) {
      start_[op.instruction] = new_event(device_, cudaEventDefault, cleanup_);
      end_[op.instruction] = new_event(device_, cudaEventDefault, cleanup_);
    }
    // Every rank starts together: a one-element all-reduce ends at about the same instant
    // on every GPU, and the base event after it is time 0 of every rank's ops.
    cudaStream_t compute = streams_[0];
    PIPETWIN_CHECK(
        ncclAllReduce(scratch_, scratch_, 1, ncclFloat, ncclSum, comms_->world(), compute));
    cudaEvent_t base = new_event(device_, cudaEventDefault, cleanup_);
    PIPETWIN_CHECK(cudaEventRecord(base, compute));
    base_ = base;
    const auto enqueue_start = std::chrono::steady_clock::now();
    enqueue_all();
    result.host_enqueue_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - enqueue_start).count();
    result.allocation_stalls = allocation_stalls_;
    PIPETWIN_CHECK(cudaDeviceSynchronize());
    // Each instruction belongs to one rank, so a sum merges them.
    SlotLayout time_layout;
    const Slot starts = time_layout.add(plan_.program_size);
    const Slot ends = time_layout.add(plan_.program_size);
    std::vector<double> times = time_layout.zeros<double>();
    for (const ReplayOp& op : plan_.ops) {
      float start_ms = 0, end_ms = 0;
      PIPETWIN_CHECK(cudaEventElapsedTime(&start_ms, base, start_.at(op.instruction)));
      PIPETWIN_CHECK(cudaEventElapsedTime(&end_ms, base, end_.at(op.instruction)));
      starts.in(times, op.instruction) = start_ms * 1e-3;
      ends.in(times, op.instruction) = end_ms * 1e-3;
    }
    all_reduce_sum(times.data(), times.size(), ncclFloat64);
    result.start_s = starts.read(times);
    result.end_s = ends.read(times);

    // Per rank, each entry written by its own rank.
    SlotLayout memory_layout;
    const Slot stash_peak = memory_layout.add(world_size);
    const Slot peak_pool = memory_layout.add(world_size);
    const Slot device_used = memory_layout.add(world_size);
    const Slot device_total = memory_layout.add(world_size);
    const Slot shared = memory_layout.add(world_size);
    std::vector<int64_t> memory = memory_layout.zeros<int64_t>();
    cudaMemPool_t pool;
    PIPETWIN_CHECK(cudaDeviceGetDefaultMemPool(&pool, device_));
    unsigned long long high = 0;  // the attribute is a 64-bit value
    PIPETWIN_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
    size_t free_bytes = 0, total_bytes = 0;
    PIPETWIN_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    stash_peak.in(memory, plan_.rank) = plan_.stash_reserve_bytes;
    peak_pool.in(memory, plan_.rank) = static_cast<int64_t>(high);
    device_used.in(memory, plan_.rank) = static_cast<int64_t>(total_bytes - free_bytes);
    device_total.in(memory, plan_.rank) = static_cast<int64_t>(total_bytes);
    shared.in(memory, plan_.rank) = shared_gpu ? 1 : 0;
    all_reduce_sum(memory.data(), memory.size(), ncclInt64);
    result.stash_peak_bytes = stash_peak.read(memory);
    result.peak_pool_bytes = peak_pool.read(memory);
    result.device_used_bytes = device_used.read(memory);
    result.device_total_bytes = device_total.read(memory);
    result.shared_gpu = shared.read(memory);
    cudaDeviceProp properties;
    PIPETWIN_CHECK(cudaGetDeviceProperties(&properties, device_));
    result.device_name = properties.name;
    return result;
  }

 private:
  // Buffers whose contents do not matter, sized for the largest op of each kind. Copies
  // move the stash blocks themselves (stash_ledger.h); the device scratch is only for a
  // copy without one.
  void allocate_scratch() {
    int64_t gemm_a = 1, gemm_b = 1, gemm_c = 1, sent = 1, received = 1, reduced = 4, copy = 1,
            copy_unblocked = 1, exchanged = 1;
    for (size_t k = 0; k < plan_.ops.size(); ++k) {
      const ReplayOp& op = plan_.ops[k];
      gemm_a = std::max(gemm_a, op.m * op.k);
      gemm_b = std::max(gemm_b, op.k * op.n);
      gemm_c = std::max(gemm_c, op.m * op.n);
      if (op.kind == ReplayKind::kSend) sent = std::max(sent, op.bytes);
      if (op.kind == ReplayKind::kRecv) received = std::max(received, op.bytes);
      if (op.kind == ReplayKind::kAllReduce) reduced = std::max(reduced, op.bytes);
      if (op.kind == ReplayKind::kReduceScatter || op.kind == ReplayKind::kAllGather) {
        const int64_t n = static_cast<int64_t>(op.group.size());
        reduced = std::max(reduced, (op.bytes + n - 1) / n * n);
      }
      if (op.kind == ReplayKind::kAllToAll) exchanged = std::max(exchanged, op.bytes);
      if (op.kind == ReplayKind::kToHost || op.kind == ReplayKind::kToDevice) {
        copy = std::max(copy, op.bytes);
        if (copy_block_id(k) < 0) copy_unblocked = std::max(copy_unblocked, op.bytes);
      }
    }
    const size_t bf16 = 2;
    a_ = device_buffer(gemm_a * bf16);
    b_ = device_buffer(gemm_b * bf16);
    // Random-looking operands: tensor cores on zeros draw less power and run faster
    // than on training data.
    fill_noise(a_, gemm_a);
    fill_noise(b_, gemm_b);
    c_ = device_buffer(gemm_c * bf16);
    send_ = device_buffer(sent);
    recv_ = device_buffer(received);
    scratch_ = device_buffer(reduced);
    // An all-to-all's blocks are rounded up to whole bytes: room for one more per rank.
    exchange_send_ = device_buffer(exchanged + 4096);
    exchange_recv_ = device_buffer(exchanged + 4096);
    copy_device_ = device_buffer(copy_unblocked);
    PIPETWIN_CHECK(cudaMallocHost(&copy_host_, copy));
    void* host = copy_host_;
    cleanup_.add([host] { cudaFreeHost(host); });
  }

  // The stash block an OFFLOAD copies out (and then frees) or a RELOAD copies into
  // (having allocated it), or -1 when the ledger gives it none.
  int32_t copy_block_id(size_t k) const {
    const StashActions& act = ledger_.actions[k];
    if (plan_.ops[k].kind == ReplayKind::kToHost && !act.release.empty())
      return act.release.front().id;
    if (plan_.ops[k].kind == ReplayKind::kToDevice && !act.allocate.empty())
      return act.allocate.front().id;
    return -1;
  }

  void* device_buffer(int64_t bytes, const char* what = "a scratch buffer") {
    void* buffer = nullptr;
    if (const cudaError_t status = cudaMalloc(&buffer, static_cast<size_t>(bytes));
        status != cudaSuccess) {
      cudaGetLastError();  // clear it
      throw std::runtime_error("cudaMalloc of " + std::to_string(bytes) + " bytes for " + what +
                               " failed: " + cudaGetErrorString(status));
    }
    cleanup_.add([buffer] { cudaFree(buffer); });
    PIPETWIN_CHECK(cudaMemset(buffer, 0, static_cast<size_t>(bytes)));
    return buffer;
  }

  void fill_noise(void* buffer, int64_t count) {
    bf16_noise<<<1024, 256>>>(static_cast<uint16_t*>(buffer), count);
    PIPETWIN_CHECK(cudaGetLastError());
    PIPETWIN_CHECK(cudaDeviceSynchronize());
  }

  void reset_pool_peak() {
    cudaMemPool_t pool;
    PIPETWIN_CHECK(cudaDeviceGetDefaultMemPool(&pool, device_));
    unsigned long long zero = 0;
    PIPETWIN_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  }

  // An element-wise sum over every rank of a host array, through the world communicator.
  template <typename T>
  void all_reduce_sum(T* host, size_t count, ncclDataType_t type) {
    void* device = nullptr;
    const size_t bytes = count * sizeof(T);
    PIPETWIN_CHECK(cudaMalloc(&device, bytes));
    cleanup_.add([device] { cudaFree(device); });
    cudaStream_t stream = streams_[0];
    PIPETWIN_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
    PIPETWIN_CHECK(ncclAllReduce(device, device, count, type, ncclSum, comms_->world(), stream));
    PIPETWIN_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
    PIPETWIN_CHECK(cudaStreamSynchronize(stream));
  }

  void gemm(const ReplayOp& op, cudaStream_t stream) {
    const float alpha = 1, beta = 0;
    PIPETWIN_CHECK(cublasSetStream(blas_, stream));
    PIPETWIN_CHECK(cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, op.m, op.n, op.k, &alpha, a_,
                                CUDA_R_16BF, op.m, b_, CUDA_R_16BF, op.k, &beta, c_, CUDA_R_16BF,
                                op.m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  // What a training framework has done before its first timed step, done here before
  // time 0: each GEMM shape once (cuBLAS picks and loads its kernel), the memory pool
  // grown to the stashes' peak (the session keeps what is freed), and every
  // communicator's connections made (NCCL connects a pair
  // at its first transfer). The pairs and groups go in one global order on every rank,
  // so the earliest unfinished one always has both sides ready.
  void warm_up() {
    cudaStream_t stream = streams_[0];
    std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
    for (const ReplayOp& op : plan_.ops) {
      if (op.kind == ReplayKind::kGemm && op.m > 0 && shapes.insert({op.m, op.n, op.k}).second) {
        gemm(op, stream);
      }
    }
    // Best effort: where the predicted peak does not fit, the run's own allocations grow
    // the pool, and one that cannot is the error.
    if (const int64_t peak = plan_.stash_reserve_bytes; peak > 0) {
      void* block = nullptr;
      if (cudaMallocAsync(&block, static_cast<size_t>(peak), stream) == cudaSuccess) {
        PIPETWIN_CHECK(cudaFreeAsync(block, stream));
      } else {
        cudaGetLastError();  // clear it
      }
    }
    for (const auto& [from, to] : plan_.transfer_pairs) {
      if (plan_.rank == from) {
        PIPETWIN_CHECK(
            ncclSend(send_, 1, ncclChar, pair_rank(from, to), comms_->pair(from, to), stream));
      } else if (plan_.rank == to) {
        PIPETWIN_CHECK(
            ncclRecv(recv_, 1, ncclChar, pair_rank(to, from), comms_->pair(from, to), stream));
      }
    }
    for (const auto& [lane, members] : plan_.groups) {
      if (std::find(members.begin(), members.end(), plan_.rank) == members.end()) continue;
      PIPETWIN_CHECK(ncclAllReduce(scratch_, scratch_, 1, ncclFloat, ncclSum,
                                   comms_->group(lane, members), stream));
    }
    PIPETWIN_CHECK(cudaStreamSynchronize(stream));
  }

  // Enqueuing waits on nothing on the device, so a lane waits on the host only for the
  // moments another lane takes to enqueue.
  void enqueue_all() {
    constexpr double kEnqueueTimeoutS = 600;
    try {
      run_lanes(lane_schedule(plan_), *this, kEnqueueTimeoutS);
    } catch (const LaneFailure& f) {
      throw std::runtime_error(plan_.ops[index_of_.at(f.instruction)].text + ": " + f.what());
    }
  }

  // A stash block from the stream-ordered pool. The host runs ahead of the GPU, so the
  // frees it has enqueued may not have run yet: when the pool is exhausted, wait for the
  // device and try once more, as PyTorch's caching allocator does (each wait is counted:
  // the GPU idles meanwhile).
  void allocate(const StashBlock& block, cudaStream_t stream, const ReplayOp& op) {
    const size_t bytes = static_cast<size_t>(block.bytes);
    cudaError_t status = cudaMallocAsync(&blocks_[block.id], bytes, stream);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear it
      ++allocation_stalls_;
      PIPETWIN_CHECK(cudaDeviceSynchronize());
      status = cudaMallocAsync(&blocks_[block.id], bytes, stream);
    }
    if (status != cudaSuccess) {
      throw std::runtime_error(
          "its " + std::to_string(block.bytes) +
          "-byte stash: cudaMallocAsync failed: " + cudaGetErrorString(status));
    }
  }

  // Pairwise exchange: one block of ceil(bytes / n) to and from every other member, in one
  // NCCL group (the block for itself stays local).
  void all_to_all(const ReplayOp& op, int64_t bytes, cudaStream_t stream) {
    ncclComm_t comm = comms_->group(op.lane, op.group);
    const int n = static_cast<int>(op.group.size());
    const size_t block = static_cast<size_t>((bytes + n - 1) / n);
    const int me = static_cast<int>(std::find(op.group.begin(), op.group.end(), plan_.rank) -
                                    op.group.begin());
    PIPETWIN_CHECK(ncclGroupStart());
    for (int r = 0; r < n; ++r) {
      if (r == me) continue;
      PIPETWIN_CHECK(ncclSend(static_cast<char*>(exchange_send_) + r * block, block, ncclChar, r,
                              comm, stream));
      PIPETWIN_CHECK(ncclRecv(static_cast<char*>(exchange_recv_) + r * block, block, ncclChar, r,
                              comm, stream));
    }
    PIPETWIN_CHECK(ncclGroupEnd());
  }

  // ZeRO's collectives in place on the scratch buffer: each member's shard is the
  // ceil(bytes / n) bytes at its place in the group.
  void shard_collective(const ReplayOp& op, int64_t bytes, cudaStream_t stream) {
    ncclComm_t comm = comms_->group(op.lane, op.group);
    const int64_t n = static_cast<int64_t>(op.group.size());
    const size_t shard = static_cast<size_t>((bytes + n - 1) / n);
    const int64_t me = std::find(op.group.begin(), op.group.end(), plan_.rank) - op.group.begin();
    char* own = static_cast<char*>(scratch_) + me * shard;
    if (op.kind == ReplayKind::kReduceScatter) {
      PIPETWIN_CHECK(ncclReduceScatter(scratch_, own, shard, ncclChar, ncclSum, comm, stream));
    } else {
      PIPETWIN_CHECK(ncclAllGather(own, scratch_, shard, ncclChar, comm, stream));
    }
  }

  void enqueue(size_t k) {
    const ReplayOp& op = plan_.ops[k];
    const StashActions& stash = ledger_.actions[k];
    const int32_t copy_id = copy_block_id(k);  // the stash block a copy moves, or -1
    cudaStream_t stream = streams_[op.lane];
    for (int32_t d : op.wait_for) PIPETWIN_CHECK(cudaStreamWaitEvent(stream, end_.at(d), 0));
    PIPETWIN_CHECK(cudaEventRecord(start_.at(op.instruction), stream));
    for (const StashBlock& block : stash.allocate) allocate(block, stream, op);
    const int64_t bytes = std::max<int64_t>(op.bytes, 1);  // a token still rendezvouses
    switch (op.kind) {
      case ReplayKind::kGemm: {
        if (op.m == 0) break;
        for (int64_t r = 0; r < op.repeats; ++r) gemm(op, stream);
        break;
      }
      case ReplayKind::kSpin:
        if (op.seconds > 0) {
          hold_stream<<<1, 1, 0, stream>>>(static_cast<uint64_t>(op.seconds * 1e9 * spin_scale_));
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
        PIPETWIN_CHECK(cudaMemcpyAsync(copy_host_, copy_id >= 0 ? blocks_[copy_id] : copy_device_,
                                       static_cast<size_t>(op.bytes), cudaMemcpyDeviceToHost,
                                       stream));
        break;
      case ReplayKind::kToDevice:
        PIPETWIN_CHECK(cudaMemcpyAsync(copy_id >= 0 ? blocks_[copy_id] : copy_device_, copy_host_,
                                       static_cast<size_t>(op.bytes), cudaMemcpyHostToDevice,
                                       stream));
        break;
      case ReplayKind::kAllReduce:
        PIPETWIN_CHECK(ncclAllReduce(scratch_, scratch_, static_cast<size_t>(bytes), ncclChar,
                                     ncclSum, comms_->group(op.lane, op.group), stream));
        break;
      case ReplayKind::kAllToAll:
        all_to_all(op, bytes, stream);
        break;
      case ReplayKind::kReduceScatter:
      case ReplayKind::kAllGather:
        shard_collective(op, bytes, stream);
        break;
    }
    for (const StashBlock& block : stash.release) {
      PIPETWIN_CHECK(cudaFreeAsync(blocks_[block.id], stream));
      blocks_[block.id] = nullptr;
    }
    PIPETWIN_CHECK(cudaEventRecord(end_.at(op.instruction), stream));
  }

  const ReplayPlan& plan_;
  int device_;
  const cudaStream_t* streams_;  // the session's, one per lane
  cublasHandle_t blas_;
  double spin_scale_;  // the session's calibration of timed kernels
  Cleanup cleanup_;
  std::unique_ptr<Communicators> comms_;
  void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
  void *send_ = nullptr, *recv_ = nullptr, *scratch_ = nullptr;
  void *exchange_send_ = nullptr, *exchange_recv_ = nullptr;
  void *copy_device_ = nullptr, *copy_host_ = nullptr;
  void* resident_ = nullptr;  // the stages' weights, gradients and optimizer state
  std::map<int32_t, cudaEvent_t> start_, end_;
  StashLedger ledger_;
  std::vector<void*> blocks_;                  // by StashBlock id
  std::atomic<int64_t> allocation_stalls_{0};  // lanes allocate from their own threads
  std::map<int32_t, size_t> index_of_;         // instruction -> its op in the plan
  cudaEvent_t base_ = nullptr;                 // time 0
};

}  // namespace

std::string new_nccl_unique_id() {
  ncclUniqueId id;
  PIPETWIN_CHECK(ncclGetUniqueId(&id));
  return std::string(id.internal, sizeof(id.internal));
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear it
    return 0;
  }
  return count;
}

ReplaySession::ReplaySession(int world_size, int rank, const std::string& nccl_id, int device)
    : state_(std::make_unique<State>()) {
  State& st = *state_;
  st.device = device;
  st.world_size = world_size;
  st.rank = rank;
  PIPETWIN_CHECK(cudaSetDevice(device));
  for (int lane = 0; lane < kReplayLanes; ++lane) st.streams[lane] = new_stream(device, st.cleanup);
  PIPETWIN_CHECK(cublasCreate(&st.blas));
  cublasHandle_t blas = st.blas;
  st.cleanup.add([blas] { cublasDestroy(blas); });
  configure_pool(device);
  st.spin_scale = calibrate_spin(device, st.streams[0]);
  ncclUniqueId unique;
  if (nccl_id.size() != sizeof(unique.internal)) {
    throw std::runtime_error("the NCCL unique id has " + std::to_string(nccl_id.size()) +
                             " bytes, not " + std::to_string(sizeof(unique.internal)));
  }
  std::memcpy(unique.internal, nccl_id.data(), nccl_id.size());
  PIPETWIN_CHECK(ncclCommInitRank(&st.world, world_size, unique, rank));
  ncclComm_t world = st.world;
  st.cleanup.add([world] { ncclCommDestroy(world); });
}

ReplaySession::~ReplaySession() = default;

ReplayResult ReplaySession::run(const ReplayPlan& plan, bool shared_gpu) {
  if (plan.rank != state_->rank) {
    throw std::runtime_error("a plan for rank " + std::to_string(plan.rank) + " given to rank " +
                             std::to_string(state_->rank));
  }
  Replay replay(plan, *state_);
  return replay.run(state_->world_size, shared_gpu);
}

}  // namespace pipetwin
