#include "sim/schedule/gradient_buckets.h"

#include <algorithm>
#include <span>

#include "sim/schedule/collective_triggers.h"

namespace pipetwin {
namespace {

// The backward on the collective's own device whose weight gradients it reduces, or -1.
// Expert parallelism puts the backward's all-to-all in between, which the weight gradients
// do not wait for (expert_all_to_all.h): the backward behind it.
int32_t gradient_producer(const Program& program, int32_t i) {
  const Instruction& c = program.instructions[i];
  if ((c.op != Op::kAllreduce && c.op != Op::kReduceScatter) || c.collectives != 1 ||
      c.starts_under_compute()) {
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

// One entry of a rebuilt collective lane: collective `source` whole (piece -1) or one of
// its pieces.
struct LaneEntry {
  int32_t source = 0;
  int32_t piece = -1;
  int32_t trigger = 0;
  bool early = false;
};

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

Program bucket_gradients(const Program& program, int64_t bucket_bytes) {
  if (bucket_bytes <= 0) return program;
  const int32_t n = program.size();
  // A group is split when each of its members reduces gradients of more than one bucket (the
  // members hold equal bytes, so they split alike).
  std::vector<int32_t> producer(n, -1);
  bool any = false;
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    const auto members = program.members_of_group(g);
    const bool split = std::all_of(members.begin(), members.end(), [&](int32_t m) {
      return program.instructions[m].bytes > bucket_bytes && gradient_producer(program, m) >= 0;
    });
    if (!split) continue;
    for (int32_t m : members) producer[m] = gradient_producer(program, m);
    any = true;
  }
  if (!any) return program;

  const std::vector<int32_t> trigger = collective_triggers(program, compute_positions(program));
  ProgramBuilder builder(program.num_devices, program.num_stages, program.iterations,
                         program.global_batch);
  builder.reserve(static_cast<int64_t>(n) + 2 * (n / 4 + 1),
                  static_cast<int64_t>(program.deps.size()) * 2 + n);
  std::vector<int32_t> id(n, -1);
  for (int32_t i = 0; i < n; ++i) {
    if (program.instructions[i].lane() != Lane::kCollective)
      id[i] = builder.add(program.instructions[i]);
  }

  // Collective lanes: a split reduction's pieces that start under the backward go before the
  // collectives of the same trigger that wait for its end; the last stays in its place.
  std::vector<std::vector<int32_t>> piece_ids(n);
  for (int32_t device = 0; device < program.num_devices; ++device) {
    const int32_t lane = device * kLaneCount + static_cast<int>(Lane::kCollective);
    std::vector<LaneEntry> entries;
    for (int32_t i = program.lane_begin[lane]; i < program.lane_begin[lane + 1]; ++i) {
      if (producer[i] < 0) {
        entries.push_back({i, -1, trigger[i], false});
        continue;
      }
      const auto pieces = bucket_pieces(program.instructions[i].bytes, bucket_bytes);
      size_t at = entries.size();
      while (at > 0 && entries[at - 1].trigger == trigger[i] && !entries[at - 1].early) --at;
      std::vector<LaneEntry> early;
      for (size_t p = 0; p + 1 < pieces.size(); ++p) {
        early.push_back({i, static_cast<int32_t>(p), trigger[i], true});
      }
      entries.insert(entries.begin() + static_cast<std::ptrdiff_t>(at), early.begin(), early.end());
      entries.push_back({i, static_cast<int32_t>(pieces.size()) - 1, trigger[i], false});
    }
    for (const LaneEntry& e : entries) {
      const Instruction& source = program.instructions[e.source];
      if (e.piece < 0) {
        id[e.source] = builder.add(source);
        continue;
      }
      const BucketPiece piece = bucket_pieces(source.bytes, bucket_bytes)[e.piece];
      Instruction c = source;
      c.bytes = piece.bytes;
      c.collectives = static_cast<uint16_t>(piece.buckets);
      c.lead_s = piece.lead_share * program.instructions[producer[e.source]].compute_s;
      piece_ids[e.source].push_back(builder.add(c));
    }
  }

  const auto made = [&](int32_t i) -> std::span<const int32_t> {
    if (producer[i] < 0) return {&id[i], 1};
    return piece_ids[i];
  };
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t d : program.deps_of(i)) {
      // Buckets wait for the backward that fills them, not for its all-to-all.
      if (producer[i] >= 0 && program.instructions[d].op == Op::kAllToAll) d = producer[i];
      // What waits for a reduction waits for all its buckets.
      for (int32_t to : made(i)) {
        for (int32_t from : made(d)) builder.add_dependency(to, from);
      }
    }
    if (program.partner[i] >= 0 && is_send(program.instructions[i].op)) {
      builder.pair(id[i], id[program.partner[i]]);
    }
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    const auto members = program.members_of_group(g);
    const size_t count = made(members.front()).size();
    for (size_t p = 0; p < count; ++p) {
      std::vector<int32_t> group;
      for (int32_t m : members) group.push_back(made(m)[p]);
      builder.group(group);
    }
  }
  return finish_like(program, std::move(builder));
}

}  // namespace pipetwin
