// One of N deterministic slices of a sweep's grid, so that a grid too large for one machine
// runs as N jobs (a Slurm array) whose CSVs `pipetwin sweep merge` joins. Point i of the
// grid (in grid order) belongs to shard i mod N: neighbouring points, which often cost alike,
// spread over the shards.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace pipetwin {

struct Shard {
  int64_t index = 0;  // 0 .. count - 1
  int64_t count = 1;

  bool holds(int64_t point) const { return point % count == index; }
};

// "K/N" with 0 <= K < N. Throws InputError naming --shard.
Shard parse_shard(const std::string& text);

// Inside a Slurm array job: task SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of
// SLURM_ARRAY_TASK_COUNT; nullopt outside one. `getenv` is the environment (injectable for
// tests). Throws InputError when the variables are set but not a valid shard.
std::optional<Shard> shard_from_slurm(const std::function<const char*(const char*)>& getenv);

}  // namespace pipetwin
