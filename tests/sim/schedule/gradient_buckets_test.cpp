// Gradient buckets: each bucket is reduced as soon as the backward has produced it. The three
// collectives that stand for k buckets end where k buckets reduced one after another would
// (brute force over every bucket); with one bucket the Program is today's; with a network
// that hides every bucket but the last, the iteration is the compute plus the last bucket.
#include "sim/schedule/gradient_buckets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "program_dump.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"

namespace pipetwin {
namespace {

struct Replicated {
  int stages = 1;
  int microbatches = 1;
  int replicas = 2;
  int layers_per_stage = 4;
  double fwd_s = 1e-3;  // per layer and sample
  double bwd_s = 2e-3;
  int64_t parameter_bytes = 10'000'000;  // per layer
  LinkSpec link{100e9, 2e-6};
  int32_t tensor_parallel = 1;
};

// `replicas` copies of a pipeline of identical layers, one sample per microbatch, on one
// node of identical links.
ResolvedScenario replicated(const Replicated& r, int64_t bucket_bytes) {
  ResolvedScenario setup;
  setup.name = "replicated";
  const int devices = r.stages * r.replicas * r.tensor_parallel;
  for (int d = 0; d < devices; ++d) {
    setup.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e15, 1e15});
  }
  setup.cluster.gpus_per_node = devices;
  setup.cluster.intra_node = r.link;
  const int layers = r.stages * r.layers_per_stage;
  for (int l = 0; l < layers; ++l) {
    ModelLayer layer;
    layer.name = "l";
    layer.name += std::to_string(l);
    layer.fwd.seconds_per_sample = r.fwd_s;
    layer.bwd.seconds_per_sample = r.bwd_s;
    layer.parameter_bytes = r.parameter_bytes;
    if (r.tensor_parallel > 1) {
      layer.tp_fwd_collectives = 1;
      layer.tp_bwd_collectives = 1;
      layer.tp_allreduce_bytes_per_sample = 1e6;
    }
    if (l + 1 < layers) layer.consumers = {l + 1};
    setup.model.layers.push_back(layer);
  }
  setup.training = {r.microbatches * r.replicas, r.microbatches, 1, proto::SGD, r.replicas};
  setup.training.tensor_parallel = r.tensor_parallel;
  setup.training.grad_bucket_bytes = bucket_bytes;
  setup.schedule.kind = proto::ONE_F_ONE_B;
  setup.schedule.stages = r.stages;
  return setup;
}

std::string program_text(const Program& p) {
  std::string text;
  testing::program_dump(p, [&](const std::string& line) { text += line; });
  return text;
}

double iteration_s(const ResolvedScenario& setup) {
  const ExecutionTimes times = run_analytic(build_program(setup), setup.cluster);
  return *std::max_element(times.end_s.begin(), times.end_s.end());
}

// The textbook ring all-reduce of `bytes` over `n` ranks on identical links.
double ring_allreduce_s(double bytes, int n, const LinkSpec& link) {
  return 2.0 * (n - 1) / n * bytes / link.bandwidth_bytes_per_s + 2.0 * (n - 1) * link.latency_s;
}

// One stage: the forward, the backward, then its k buckets one after another, bucket j ready
// when the backward has produced j+1 buckets of the G bytes at a steady rate.
double bucketed_iteration_s(const Replicated& r, int64_t bucket_bytes) {
  const double forward = r.layers_per_stage * r.fwd_s;
  const double backward = r.layers_per_stage * r.bwd_s;
  const int64_t gradients = r.layers_per_stage * r.parameter_bytes;
  double lane = 0;
  for (int64_t filled = 0; filled < gradients;) {
    const int64_t bytes = std::min(bucket_bytes, gradients - filled);
    filled += bytes;
    const double ready = forward + backward * filled / static_cast<double>(gradients);
    lane = std::max(lane, ready) + ring_allreduce_s(bytes, r.replicas, r.link);
  }
  return lane;
}

TEST(GradientBuckets, PiecesCoverTheBytesWithTheirBucketsLeads) {
  const auto one = bucket_pieces(100, 0);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].bytes, 100);
  EXPECT_EQ(bucket_pieces(100, 100).size(), 1u);

  const auto two = bucket_pieces(150, 100);  // 100 then 50
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].bytes, 100);
  EXPECT_DOUBLE_EQ(two[0].lead_share, 0.5 / 1.5);
  EXPECT_EQ(two[1].bytes, 50);
  EXPECT_EQ(two[1].lead_share, 0.0);

  const auto many = bucket_pieces(1000, 90);  // 11 of 90, then 10
  ASSERT_EQ(many.size(), 3u);
  EXPECT_EQ(many[0].bytes, 10 * 90);
  EXPECT_EQ(many[0].buckets, 10);
  EXPECT_DOUBLE_EQ(many[0].lead_share, 0.91);
  EXPECT_EQ(many[1].bytes, 90);
  EXPECT_DOUBLE_EQ(many[1].lead_share, 0.01);
  EXPECT_EQ(many[2].bytes, 10);
  EXPECT_EQ(many[2].lead_share, 0.0);
}

// Bandwidth-bound and latency-bound buckets, compute-bound and network-bound, with and
// without a short last bucket: the three collectives end where the k buckets do.
TEST(GradientBuckets, ThreeCollectivesEndWhereEveryBucketWouldEnd) {
  for (double bandwidth : {1e9, 2e10, 1e12}) {
    for (double latency : {0.0, 1e-5, 2e-4}) {
      for (int64_t bucket : {5'000'000ll, 7'000'000ll, 10'000'000ll, 13'000'000ll, 40'000'000ll}) {
        Replicated r;
        r.link = {bandwidth, latency};
        SCOPED_TRACE(std::to_string(bandwidth) + " B/s, " + std::to_string(latency) + " s, " +
                     std::to_string(bucket) + "-byte buckets");
        EXPECT_NEAR(iteration_s(replicated(r, bucket)), bucketed_iteration_s(r, bucket), 1e-12);
      }
    }
  }
}

TEST(GradientBuckets, OneBucketIsTheProgramWithoutBuckets) {
  Replicated r;
  r.replicas = 3;
  r.stages = 2;
  r.microbatches = 4;
  const int64_t gradients = r.layers_per_stage * r.parameter_bytes;
  const std::string without = program_text(build_program(replicated(r, 0)));
  EXPECT_EQ(program_text(build_program(replicated(r, gradients))), without);
  EXPECT_NE(program_text(build_program(replicated(r, gradients - 1))), without);
}

// A network fast enough for every bucket to finish under the backward leaves only the last
// one after it; a free network leaves the compute alone.
TEST(GradientBuckets, OnlyTheLastBucketOutlastsTheBackwardWhenTheNetworkKeepsUp) {
  Replicated r;
  r.link = {1e12, 0};
  const int64_t bucket = 4'000'000;
  const int64_t gradients = r.layers_per_stage * r.parameter_bytes;
  const int64_t last = gradients - (gradients - 1) / bucket * bucket;
  const double compute = r.layers_per_stage * (r.fwd_s + r.bwd_s);
  EXPECT_NEAR(iteration_s(replicated(r, bucket)),
              compute + ring_allreduce_s(last, r.replicas, r.link), 1e-12);
  EXPECT_GT(iteration_s(replicated(r, 0)), iteration_s(replicated(r, bucket)));
  r.link = {1e30, 0};
  EXPECT_NEAR(iteration_s(replicated(r, bucket)), compute, 1e-12);
}

// With tensor parallelism, a backward's all-reduces gate the pipeline on the collective lane;
// its buckets run beside them on the data-parallel lane, from the moment the backward has
// filled them, and end where k buckets reduced one after another would (brute force).
TEST(GradientBuckets, BucketsOverlapTheBackwardUnderTensorParallelism) {
  for (double bandwidth : {1e9, 2e10}) {
    Replicated r;
    r.tensor_parallel = 2;
    r.link = {bandwidth, 1e-5};
    const int64_t bucket = 4'000'000;
    const ResolvedScenario setup = replicated(r, bucket);
    const Program p = build_program(setup);
    const ExecutionTimes times = run_analytic(p, setup.cluster);
    for (int32_t device = 0; device < p.num_devices; ++device) {
      SCOPED_TRACE("gpu" + std::to_string(device) + ", " + std::to_string(bandwidth) + " B/s");
      const auto lane = [&](Lane kind) {
        const int32_t l = device * kLaneCount + static_cast<int>(kind);
        return std::pair{p.lane_begin[l], p.lane_begin[l + 1]};
      };
      // The collective lane: the tensor-parallel all-reduces of the forward and the backward.
      const auto [tp_begin, tp_end] = lane(Lane::kCollective);
      ASSERT_EQ(tp_end - tp_begin, 2);
      for (int32_t i = tp_begin; i < tp_end; ++i) {
        EXPECT_FALSE(p.instructions[i].data_parallel);
        EXPECT_EQ(p.members_of_group(p.group[i]).size(), 2u);
      }
      // The data-parallel lane: the buckets, over the two replicas.
      const auto [dp_begin, dp_end] = lane(Lane::kDataParallel);
      ASSERT_GE(dp_end - dp_begin, 2);
      int64_t gradients = 0;
      for (int32_t i = dp_begin; i < dp_end; ++i) {
        EXPECT_TRUE(p.instructions[i].data_parallel);
        gradients += p.instructions[i].bytes;
      }
      const auto [compute_begin, compute_end] = lane(Lane::kCompute);
      int32_t backward = -1;
      for (int32_t i = compute_begin; i < compute_end; ++i) {
        if (p.instructions[i].op == Op::kBwd) backward = i;
      }
      ASSERT_GE(backward, 0);
      EXPECT_LT(times.start_s[dp_begin], times.end_s[backward]);  // under the backward
      // Brute force: bucket j ready when the backward has filled j+1 of them.
      const double b0 = times.start_s[backward];
      const double b = times.end_s[backward] - b0;
      double ends = 0;
      for (int64_t filled = 0; filled < gradients;) {
        const int64_t bytes = std::min(bucket, gradients - filled);
        filled += bytes;
        ends = std::max(ends, b0 + b * filled / static_cast<double>(gradients)) +
               ring_allreduce_s(bytes, r.replicas, r.link);
      }
      EXPECT_NEAR(times.end_s[dp_end - 1], ends, 1e-12);
    }
  }
}

}  // namespace
}  // namespace pipetwin
