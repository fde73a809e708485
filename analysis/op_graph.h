// A measured job's op graph: the dependencies one step of one model-parallel group has (every
// step and data-parallel rank has the same), each op with the duration it was measured at, and
// its replay in max-plus, the analytic engine's recurrence (docs/schedules.md): an op starts
// when its dependencies have ended (plus its launch delay, the host's gap before it), a
// collective's members start together when the last is ready and each ends its transfer time
// later. docs/whatif.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pipetwin {

// An op of one rank in a step: Megatron's timer name, its place among the ops of that type on
// the rank, the pipeline rank.
struct OpKey {
  std::string optype;
  int32_t seq_id = 0;
  int32_t stage = 0;
  auto operator<=>(const OpKey&) const = default;
};

struct OpGraph {
  std::vector<OpKey> nodes;
  std::vector<std::vector<int32_t>> deps;  // per node: the nodes it waits for
  std::vector<int32_t> group;              // per node: its collective, -1: none
  std::vector<std::vector<int32_t>> groups;
  // Per group: its members on every data-parallel rank start together (the data-parallel
  // collectives and the gradient clipping's all-reduce), not only those of one rank.
  std::vector<char> dp_sync;
  std::vector<char> ends_step;  // per node: the step ends when the last of these ends

  int32_t add_node(OpKey key);
  void depend(int32_t node, int32_t on) { deps[node].push_back(on); }
  // Makes `members` one collective.
  void add_group(const std::vector<int32_t>& members, bool across_dp);
};

// Every (step, data-parallel rank, node) of the job: what was measured and what the replay
// takes. Index (step x dp_size + dp_rank) x nodes + node.
struct OpInstances {
  std::vector<int32_t> steps;  // the step ids, in order
  int32_t dp_size = 1;
  int32_t nodes = 0;
  std::vector<double> start_s, duration_s;
  // A collective's time once its last member arrived (its measured end less the latest start
  // among its members); for other ops their duration.
  std::vector<double> transfer_s;
  // The gap between an op's dependencies ending and its start: host-side work the graph does
  // not hold (data loading, launches). At least 0.
  std::vector<double> launch_delay_s;
  std::vector<double> step_start_s;     // per step: its first op's start
  std::vector<double> measured_step_s;  // per step: its last op's end less its first start

  size_t at(size_t step, int32_t dp_rank, int32_t node) const {
    return (step * static_cast<size_t>(dp_size) + static_cast<size_t>(dp_rank)) *
               static_cast<size_t>(nodes) +
           static_cast<size_t>(node);
  }
};

// Fills transfer_s and launch_delay_s from the measured starts and durations.
void derive_transfer_and_delay(const OpGraph& graph, OpInstances& instances);

// The time of each step replayed with `time` (per instance: the duration of a plain op, the
// transfer time of a collective's member) and, when given, each instance's launch delay. A
// step starts at its measured start and ends when its last step-ending op does.
std::vector<double> replay_steps(const OpGraph& graph, const OpInstances& instances,
                                 const std::vector<double>& time,
                                 const std::vector<double>* launch_delay_s);

}  // namespace pipetwin
