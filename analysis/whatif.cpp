#include "analysis/whatif.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>

#include "analysis/megatron_op_graph.h"
#include "analysis/statistics.h"

namespace pipetwin {
namespace {

// The time the replay takes of each instance: a collective member's transfer, a plain op's
// duration.
std::vector<double> replay_time(const OpGraph& g, const OpInstances& in,
                                const std::vector<double>& duration,
                                const std::vector<double>& transfer) {
  std::vector<double> time(duration.size());
  for (size_t i = 0; i < time.size(); ++i) {
    const auto node = static_cast<int32_t>(i % static_cast<size_t>(in.nodes));
    time[i] = g.group[node] >= 0 ? transfer[i] : duration[i];
  }
  return time;
}

// The op types attribution groups by: a pipeline transfer's send and receive together, as
// "forward-pp-comm" and "backward-pp-comm".
std::string attributed_type(const std::string& optype) {
  for (const char* pass : {"forward", "backward"}) {
    if (optype == std::string(pass) + "-send" || optype == std::string(pass) + "-recv") {
      return std::string(pass) + "-pp-comm";
    }
  }
  return optype;
}

}  // namespace

WhatIfResult what_if(const OpTrace& trace) {
  const MeasuredJob job = megatron_job(trace);
  const OpGraph& g = job.graph;
  const OpInstances& in = job.instances;
  WhatIfResult r;
  r.name = trace.meta.name;
  r.steps = in.steps;
  r.measured_step_s = mean(in.measured_step_s);
  const std::vector<double> measured = replay_time(g, in, in.duration_s, in.transfer_s);
  r.replayed_step_s = mean(replay_steps(g, in, measured, &in.launch_delay_s));
  const std::vector<double> no_delay = replay_steps(g, in, measured, nullptr);
  r.no_delay_step_s = mean(no_delay);

  // Each op type's typical duration and transfer time, over every instance.
  std::map<std::string, std::vector<size_t>> of_type;
  for (size_t i = 0; i < in.duration_s.size(); ++i) {
    of_type[g.nodes[i % static_cast<size_t>(in.nodes)].optype].push_back(i);
  }
  std::vector<double> duration = in.duration_s, transfer = in.transfer_s;
  for (const auto& [type, indices] : of_type) {
    std::vector<double> d, t;
    for (size_t i : indices) d.push_back(in.duration_s[i]), t.push_back(in.transfer_s[i]);
    const bool communication = is_communication_optype(type);
    const double typical_d = communication ? median(d) : mean(d);
    const double typical_t = communication ? median(t) : mean(t);
    for (size_t i : indices) duration[i] = typical_d, transfer[i] = typical_t;
  }
  const std::vector<double> ideal_time = replay_time(g, in, duration, transfer);
  const std::vector<double> ideal = replay_steps(g, in, ideal_time, nullptr);
  r.ideal_step_s = mean(ideal);
  r.slowdown = r.no_delay_step_s / r.ideal_step_s;
  r.launch_slowdown = r.measured_step_s / r.no_delay_step_s;
  for (size_t s = 0; s < in.steps.size(); ++s)
    r.step_slowdown[in.steps[s]] = no_delay[s] / ideal[s];

  // One group of instances back at its measured time.
  const auto attributed = [&](const std::function<bool(size_t)>& in_group) {
    std::vector<double> time = ideal_time;
    for (size_t i = 0; i < time.size(); ++i) {
      if (in_group(i)) time[i] = measured[i];
    }
    return mean(replay_steps(g, in, time, nullptr)) / r.ideal_step_s;
  };
  const auto node_of = [&](size_t i) { return i % static_cast<size_t>(in.nodes); };
  const auto dp_rank_of = [&](size_t i) {
    return static_cast<int32_t>(i / static_cast<size_t>(in.nodes) %
                                static_cast<size_t>(in.dp_size));
  };
  for (int32_t d = 0; d < in.dp_size; ++d) {
    r.by_dp_rank[d] = attributed([&](size_t i) { return dp_rank_of(i) == d; });
  }
  for (int32_t s = 0; s < trace.meta.pp_size; ++s) {
    r.by_stage[s] = attributed([&](size_t i) { return g.nodes[node_of(i)].stage == s; });
  }
  std::set<std::string> groups;
  for (const auto& [type, indices] : of_type) groups.insert(attributed_type(type));
  for (const std::string& group : groups) {
    r.by_op[group] =
        attributed([&](size_t i) { return attributed_type(g.nodes[node_of(i)].optype) == group; });
  }
  return r;
}

}  // namespace pipetwin
