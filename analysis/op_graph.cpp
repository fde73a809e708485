#include "analysis/op_graph.h"

#include <algorithm>
#include <deque>
#include <limits>

#include "sim/spec/errors.h"

namespace pipetwin {

int32_t OpGraph::add_node(OpKey key) {
  nodes.push_back(std::move(key));
  deps.emplace_back();
  group.push_back(-1);
  ends_step.push_back(0);
  return static_cast<int32_t>(nodes.size()) - 1;
}

void OpGraph::add_group(const std::vector<int32_t>& members, bool across_dp) {
  for (int32_t m : members) group[m] = static_cast<int32_t>(groups.size());
  groups.push_back(members);
  dp_sync.push_back(across_dp ? 1 : 0);
}

namespace {

// Nodes in an order where every node comes after its dependencies, collectives counted as one
// node (their members start together): Kahn's algorithm, a group released when all its members
// are. Throws RuntimeFailure on a cycle.
std::vector<int32_t> release_order(const OpGraph& g) {
  const auto n = static_cast<int32_t>(g.nodes.size());
  std::vector<int32_t> remaining(n);
  std::vector<std::vector<int32_t>> dependents(n);
  for (int32_t v = 0; v < n; ++v) {
    remaining[v] = static_cast<int32_t>(g.deps[v].size());
    for (int32_t u : g.deps[v]) dependents[u].push_back(v);
  }
  std::deque<int32_t> ready;
  for (int32_t v = 0; v < n; ++v) {
    if (remaining[v] == 0) ready.push_back(v);
  }
  std::vector<int32_t> arrived(g.groups.size(), 0);
  std::vector<int32_t> order;
  const auto release = [&](int32_t u) {
    for (int32_t v : dependents[u]) {
      if (--remaining[v] == 0) ready.push_back(v);
    }
  };
  while (!ready.empty()) {
    const int32_t v = ready.front();
    ready.pop_front();
    order.push_back(v);
    if (g.group[v] < 0) {
      release(v);
    } else if (++arrived[g.group[v]] == static_cast<int32_t>(g.groups[g.group[v]].size())) {
      for (int32_t m : g.groups[g.group[v]]) release(m);
    }
  }
  if (static_cast<int32_t>(order.size()) != n) {
    throw RuntimeFailure(
        "the op graph has a cycle: the trace's ops do not follow the schedule "
        "the dependency model expects");
  }
  return order;
}

}  // namespace

std::vector<double> replay_steps(const OpGraph& g, const OpInstances& in,
                                 const std::vector<double>& time,
                                 const std::vector<double>* launch_delay_s) {
  const std::vector<int32_t> order = release_order(g);
  std::vector<double> steps;
  std::vector<double> start(static_cast<size_t>(in.dp_size) * in.nodes);
  std::vector<double> end(start.size());
  for (size_t s = 0; s < in.steps.size(); ++s) {
    const auto local = [&](int32_t r, int32_t v) {
      return static_cast<size_t>(r) * static_cast<size_t>(in.nodes) + static_cast<size_t>(v);
    };
    std::vector<int32_t> arrived(g.groups.size(), 0);
    double step_end = in.step_start_s[s];
    for (int32_t v : order) {
      for (int32_t r = 0; r < in.dp_size; ++r) {
        double ready = in.step_start_s[s];
        for (int32_t u : g.deps[v]) ready = std::max(ready, end[local(r, u)]);
        start[local(r, v)] = ready + (launch_delay_s ? (*launch_delay_s)[in.at(s, r, v)] : 0.0);
      }
      const int32_t gid = g.group[v];
      if (gid < 0) {
        for (int32_t r = 0; r < in.dp_size; ++r) {
          end[local(r, v)] = start[local(r, v)] + time[in.at(s, r, v)];
        }
      } else if (++arrived[gid] == static_cast<int32_t>(g.groups[gid].size())) {
        // The last member is here: each rank's members start at their latest start (across
        // the ranks too for a data-parallel collective), each ends its transfer time later.
        std::vector<double> latest(in.dp_size, -std::numeric_limits<double>::infinity());
        for (int32_t r = 0; r < in.dp_size; ++r) {
          for (int32_t m : g.groups[gid]) latest[r] = std::max(latest[r], start[local(r, m)]);
        }
        if (g.dp_sync[gid]) {
          const double all = *std::max_element(latest.begin(), latest.end());
          std::fill(latest.begin(), latest.end(), all);
        }
        for (int32_t r = 0; r < in.dp_size; ++r) {
          for (int32_t m : g.groups[gid]) {
            start[local(r, m)] = latest[r];
            end[local(r, m)] = latest[r] + time[in.at(s, r, m)];
          }
        }
      }
    }
    for (int32_t v = 0; v < in.nodes; ++v) {
      if (!g.ends_step[v]) continue;
      for (int32_t r = 0; r < in.dp_size; ++r) step_end = std::max(step_end, end[local(r, v)]);
    }
    steps.push_back(step_end - in.step_start_s[s]);
  }
  return steps;
}

void derive_transfer_and_delay(const OpGraph& g, OpInstances& in) {
  in.transfer_s = in.duration_s;
  in.launch_delay_s.assign(in.duration_s.size(), 0.0);
  for (size_t s = 0; s < in.steps.size(); ++s) {
    for (size_t gid = 0; gid < g.groups.size(); ++gid) {
      std::vector<double> latest(in.dp_size, -std::numeric_limits<double>::infinity());
      for (int32_t r = 0; r < in.dp_size; ++r) {
        for (int32_t m : g.groups[gid]) latest[r] = std::max(latest[r], in.start_s[in.at(s, r, m)]);
      }
      if (g.dp_sync[gid]) {
        const double all = *std::max_element(latest.begin(), latest.end());
        std::fill(latest.begin(), latest.end(), all);
      }
      for (int32_t r = 0; r < in.dp_size; ++r) {
        for (int32_t m : g.groups[gid]) {
          const size_t i = in.at(s, r, m);
          // A send that ended before its peer started (clocks of two hosts) transfers nothing.
          in.transfer_s[i] = std::max(0.0, in.start_s[i] + in.duration_s[i] - latest[r]);
        }
      }
    }
    for (int32_t r = 0; r < in.dp_size; ++r) {
      for (int32_t v = 0; v < in.nodes; ++v) {
        const size_t i = in.at(s, r, v);
        double ready = in.step_start_s[s];
        for (int32_t u : g.deps[v]) {
          const size_t j = in.at(s, r, u);
          ready = std::max(ready, in.start_s[j] + in.duration_s[j]);
        }
        in.launch_delay_s[i] = std::max(0.0, in.start_s[i] - ready);
      }
    }
  }
}

}  // namespace pipetwin
