#include "sim/schedule/gradient_buckets.h"

#include <algorithm>
#include <cstdint>

#include "sim/schedule/collective_triggers.h"  // finish_like

namespace pipetwin {
namespace {

// The backward on the collective's own device whose weight gradients it reduces, or -1.
// Expert parallelism puts the backward's all-to-all in between, which the weight gradients
// do not wait for (expert_all_to_all.h): the backward behind it.
int32_t gradient_producer(const Program& program, int32_t i) {
  const Instruction& c = program.instructions[i];
  if ((c.op != Op::kAllreduce && c.op != Op::kReduceScatter) || !c.data_parallel ||
      c.collectives != 1 || c.starts_under_compute()) {
    return -1;
  }
  const auto backward = [&](int32_t d) {
    const Instruction& pass = program.instructions[d];
    return pass.device == c.device && computes_weight_gradient(pass.op);
  };
  for (int32_t d : program.deps_of(i)) {
    if (backward(d)) return d;
    if (program.instructions[d].op != Op::kAllToAll) continue;
    for (int32_t e : program.deps_of(d)) {
      if (backward(e)) return e;
    }
  }
  return -1;
}

}  // namespace

std::vector<BucketPiece> bucket_pieces(int64_t bytes, int64_t bucket_bytes) {
  if (bucket_bytes <= 0 || bytes <= bucket_bytes) return {{bytes, 1, 0.0}};
  const int64_t buckets = (bytes + bucket_bytes - 1) / bucket_bytes;  // at least 2
  const int64_t last = bytes - (buckets - 1) * bucket_bytes;
  const auto left = [&](int64_t filled) {  // the backward's share still to run
    return static_cast<double>(bytes - filled) / static_cast<double>(bytes);
  };
  std::vector<BucketPiece> pieces;
  if (buckets >= 3) {
    const int64_t first = buckets - 2;
    pieces.push_back({first * bucket_bytes, static_cast<int32_t>(std::min<int64_t>(first, 65535)),
                      left(bucket_bytes)});
  }
  pieces.push_back({bucket_bytes, 1, left((buckets - 1) * bucket_bytes)});
  pieces.push_back({last, 1, 0.0});
  return pieces;
}

int64_t reduction_bucket_bytes(const StageCost& cost, bool reduce_scatter, int64_t bucket_bytes) {
  if (!cost.bucketed) return 0;
  if (!reduce_scatter || bucket_bytes <= 0) return bucket_bytes;
  return std::max<int64_t>(bucket_bytes, cost.gradient_bytes / std::max(1, cost.layers));
}

Program bucket_gradients(const Program& program, const PipelineLayout& layout,
                         int64_t bucket_bytes) {
  if (bucket_bytes <= 0) return program;
  const auto bucket_of = [&](const Instruction& c) {
    return reduction_bucket_bytes(layout.costs[c.stage], c.op == Op::kReduceScatter, bucket_bytes);
  };
  const int32_t n = program.size();
  // A group is split when each of its members reduces gradients of more than one bucket (the
  // members hold equal bytes, so they split alike).
  std::vector<int32_t> producer(n, -1);
  bool any = false;
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    const auto members = program.members_of_group(g);
    const bool split = std::all_of(members.begin(), members.end(), [&](int32_t m) {
      const Instruction& c = program.instructions[m];
      return c.bytes > bucket_of(c) && gradient_producer(program, m) >= 0;
    });
    if (!split) continue;
    for (int32_t m : members) producer[m] = gradient_producer(program, m);
    any = true;
  }
  if (!any) return program;

  ProgramBuilder builder(program.num_devices, program.num_stages, program.iterations,
                         program.global_batch);
  builder.reserve(static_cast<int64_t>(n) + 2 * (n / 4 + 1),
                  static_cast<int64_t>(program.deps.size()) * 2 + n);
  std::vector<int32_t> id(n, -1);
  for (int32_t i = 0; i < n; ++i) {
    if (program.instructions[i].lane() != Lane::kDataParallel)
      id[i] = builder.add(program.instructions[i]);
  }

  // Data-parallel lanes: a split reduction's pieces take its place. They run beside the
  // collectives the backward itself needs (tensor parallelism's all-reduces, its expert
  // all-to-all), which are on the other collective lane.
  // A split reduction's pieces get consecutive ids from id[i] on, pieces[i] of them.
  std::vector<uint8_t> pieces(n, 1);
  for (int32_t device = 0; device < program.num_devices; ++device) {
    const int32_t lane = device * kLaneCount + static_cast<int>(Lane::kDataParallel);
    for (int32_t i = program.lane_begin[lane]; i < program.lane_begin[lane + 1]; ++i) {
      const Instruction& source = program.instructions[i];
      if (producer[i] < 0) {
        id[i] = builder.add(source);
        continue;
      }
      const std::vector<BucketPiece> split = bucket_pieces(source.bytes, bucket_of(source));
      pieces[i] = static_cast<uint8_t>(split.size());
      for (size_t p = 0; p < split.size(); ++p) {
        Instruction c = source;
        c.bytes = split[p].bytes;
        c.collectives = static_cast<uint16_t>(split[p].buckets);
        c.lead_s = split[p].lead_share * program.instructions[producer[i]].compute_s;
        const int32_t made = builder.add(c);
        if (p == 0) id[i] = made;
      }
    }
  }

  for (int32_t i = 0; i < n; ++i) {
    for (int32_t d : program.deps_of(i)) {
      // Buckets wait for the backward that fills them, not for its all-to-all.
      if (producer[i] >= 0 && program.instructions[d].op == Op::kAllToAll) d = producer[i];
      // What waits for a reduction waits for all its buckets.
      for (int32_t to = id[i]; to < id[i] + pieces[i]; ++to) {
        for (int32_t from = id[d]; from < id[d] + pieces[d]; ++from) {
          builder.add_dependency(to, from);
        }
      }
    }
    if (program.partner[i] >= 0 && is_send(program.instructions[i].op)) {
      builder.pair(id[i], id[program.partner[i]]);
    }
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    const auto members = program.members_of_group(g);
    for (int32_t p = 0; p < pieces[members.front()]; ++p) {
      std::vector<int32_t> group;
      for (int32_t m : members) group.push_back(id[m] + p);
      builder.group(group, program.kind_of_group(g));
    }
  }
  return finish_like(program, std::move(builder));
}

}  // namespace pipetwin
