// `pipetwin sweep merge A.csv B.csv ... -o ALL.csv`: the CSVs that the shards of one sweep
// wrote (--shard K/N, or a Slurm array), joined into the CSV of the whole grid, in grid
// order, after checking that they are of the same sweep and cover its grid exactly once.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace pipetwin {

// The merged CSV text. Throws InputError naming the file (and the point) that is missing,
// repeated, unreadable or from another sweep.
std::string merge_sweep_csvs(const std::vector<std::string>& paths);

// Registers `merge` under `sweep`; returns it so that sweep's own callback can stand aside.
CLI::App* add_sweep_merge_command(CLI::App& sweep);

}  // namespace pipetwin
