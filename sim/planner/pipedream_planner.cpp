#include "sim/planner/pipedream_planner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "sim/planner/antichain_states.h"
#include "sim/planner/layer_graph.h"
#include "sim/planner/level_dp.h"
#include "sim/planner/span_table.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

constexpr double kInf = LevelDp::kInf;

// A stage as the DP chose it: states, replicas per class and where they sit.
struct ChosenStage {
  int from = 0, to = 0;
  std::vector<int> devices;
};

std::vector<std::vector<int>> devices_by_class(const PlannerProblem& p) {
  std::vector<std::vector<int>> result(p.classes());
  for (int d = 0; d < p.devices(); ++d) result[p.device_class[d]].push_back(d);
  return result;
}

// One level over device classes: the whole model from the empty state.
double solve_flat(const PlannerProblem& p, const SpanTable& table,
                  std::vector<ChosenStage>* stages) {
  const std::vector<std::vector<int>> by_class = devices_by_class(p);
  LevelOptions o;
  for (int c = 0; c < p.classes(); ++c) {
    o.class_counts.push_back(static_cast<int>(by_class[c].size()));
    o.problem_class.push_back(c);
    o.class_memory.push_back(p.class_memory_bytes[c]);
  }
  // Classes do not say where devices sit: across nodes, assume the slower link.
  o.link = p.nodes > 1 ? p.inter_node : p.intra_node;
  o.inter = o.link;
  o.straight = p.straight;
  o.microbatches = p.microbatches;
  LevelDp dp(table, o);
  const int end = table.size() - 1;
  dp.solve(end);
  int vector = 0;
  const double best = dp.best(0, &vector);
  if (best == kInf) return kInf;
  std::vector<size_t> taken(p.classes(), 0);
  for (int i = 0; i != end;) {
    const int k = dp.next_state(i, vector), used = dp.stage_vector(i, vector);
    ChosenStage stage{i, k, {}};
    const std::vector<int> counts = dp.counts(used);
    for (int c = 0; c < p.classes(); ++c) {
      for (int n = 0; n < counts[c]; ++n) stage.devices.push_back(by_class[c][taken[c]++]);
    }
    std::sort(stage.devices.begin(), stage.devices.end());
    stages->push_back(std::move(stage));
    vector = dp.rest_vector(vector, used);
    i = k;
  }
  return best;
}

// PipeDream's hierarchy: level 0 inside a node, level 1 over nodes. A span of states runs
// on `copies` consecutive nodes, each a replica of the same pipeline of level-0 stages; a
// stage then has copies x its devices per node as replicas. Every term is charged as
// plan_cost() charges it (the cut to the next span is paid by the span's last stage, split
// among all its replicas), so the two levels together find plan_cost()'s optimum over
// such plans; tests check that against brute force.
class Hierarchy {
 public:
  Hierarchy(const PlannerProblem& p, const SpanTable& table) : p_(p), table_(table) {
    const int s = table_.size();
    // node span time for every (nodes after, node copies) combination and stage pair.
    for (int after = 0; after < p_.nodes; ++after) {
      for (int copies = 1; after + copies <= p_.nodes; ++copies) {
        if (p_.straight && copies > 1) continue;
        combos_.push_back({after, copies});
      }
    }
    span_.assign(combos_.size(), std::vector<double>(table_.resident.size(), kInf));
    // One suffix DP per (combination, span end) gives the span from every start. A span
    // with no node after it ends the model; one with nodes after it ends before the model
    // does. The DPs are independent: threads take them in turn, each writing its own pairs.
    std::vector<std::pair<int, int>> jobs;  // (combination, end), the longest first
    for (int end = s - 1; end >= 1; --end) {
      for (size_t c = 0; c < combos_.size(); ++c) {
        if ((combos_[c].first == 0) == (end == s - 1)) jobs.push_back({static_cast<int>(c), end});
      }
    }
    std::atomic<size_t> next{0};
    const auto work = [&] {
      std::vector<std::unique_ptr<LevelDp>> dps(combos_.size());
      for (size_t j = next++; j < jobs.size(); j = next++) {
        const auto [c, end] = jobs[j];
        if (!dps[c]) {
          dps[c] = std::make_unique<LevelDp>(table_, level0(combos_[c].first, combos_[c].second));
        }
        dps[c]->solve(end);
        for (int i : table_.states->subsets[end])
          span_[c][table_.pair(i, end)] = span_value(*dps[c], i);
      }
    };
    const unsigned threads = std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 8);
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < std::min<size_t>(threads, jobs.size()); ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
  }

  double solve(std::vector<ChosenStage>* stages) {
    const int s = table_.size(), n = p_.nodes, end = s - 1;
    // best[i][r]: layers after state i on exactly r nodes.
    std::vector<std::vector<double>> best(s, std::vector<double>(n + 1, kInf));
    std::vector<std::vector<std::pair<int, int>>> choice(
        s, std::vector<std::pair<int, int>>(n + 1, {-1, 0}));
    best[end][0] = 0;
    for (int i = end - 1; i >= 0; --i) {
      for (int k = i + 1; k <= end; ++k) {
        const int pair = table_.pair(i, k);
        if (pair < 0) continue;
        for (int r = 1; r <= n; ++r) {
          for (int copies = 1; copies <= r; ++copies) {
            const int c = combo(r - copies, copies);
            if (c < 0 || best[k][r - copies] == kInf) continue;
            // The cut to the next span is part of the span's value (its last stage).
            const double v = std::max(span_[c][pair], best[k][r - copies]);
            if (v < best[i][r]) {
              best[i][r] = v;
              choice[i][r] = {k, copies};
            }
          }
        }
      }
    }
    int r = 0;
    for (int v = 1; v <= n; ++v) {
      if (best[0][v] < best[0][r]) r = v;
    }
    const double value = best[0][r];
    if (value == kInf) return kInf;
    const std::vector<std::vector<int>> node_devices = devices_by_node();
    int first_node = 0;
    for (int i = 0; i != end;) {
      const auto [k, copies] = choice[i][r];
      expand(i, k, r - copies, copies, first_node, node_devices, stages);
      first_node += copies;
      r -= copies;
      i = k;
    }
    return value;
  }

 private:
  LevelOptions level0(int after, int copies) const {
    LevelOptions o;
    o.class_counts = {p_.gpus_per_node};
    o.problem_class = {0};
    o.class_memory = {p_.class_memory_bytes[0]};
    o.devices_after = after * p_.gpus_per_node;
    o.node_copies = copies;
    o.link = p_.intra_node;
    o.inter = p_.inter_node;
    o.cut_after_end = after > 0;
    o.straight = p_.straight;
    o.microbatches = p_.microbatches;
    return o;
  }

  // A span uses every device of its nodes, so that the stages of earlier spans count the
  // devices after them (their 1F1B stash) exactly as plan_cost() does. Straight plans
  // (one device per stage) may leave devices idle; their stash count is then an upper bound.
  double span_value(const LevelDp& dp, int i, int* vector = nullptr) const {
    if (p_.straight) return dp.best(i, vector);
    if (vector) *vector = p_.gpus_per_node;  // one class: the vector is the device count
    return dp.value(i, p_.gpus_per_node);
  }

  int combo(int after, int copies) const {
    for (size_t c = 0; c < combos_.size(); ++c) {
      if (combos_[c] == std::pair{after, copies}) return static_cast<int>(c);
    }
    return -1;
  }

  std::vector<std::vector<int>> devices_by_node() const {
    std::vector<std::vector<int>> result(p_.nodes);
    for (int d = 0; d < p_.devices(); ++d) result[p_.device_node[d]].push_back(d);
    return result;
  }

  // The level-0 stages of span (i, k) copied on nodes [first_node, first_node + copies).
  void expand(int i, int k, int after, int copies, int first_node,
              const std::vector<std::vector<int>>& node_devices,
              std::vector<ChosenStage>* stages) const {
    LevelDp dp(table_, level0(after, copies));
    dp.solve(k);
    int vector = 0;
    span_value(dp, i, &vector);
    int local = 0;
    for (int at = i; at != k;) {
      const int next = dp.next_state(at, vector), used = dp.stage_vector(at, vector);
      ChosenStage stage{at, next, {}};
      for (int node = first_node; node < first_node + copies; ++node) {
        for (int d = 0; d < dp.total(used); ++d)
          stage.devices.push_back(node_devices[node][local + d]);
      }
      local += dp.total(used);
      stages->push_back(std::move(stage));
      vector = dp.rest_vector(vector, used);
      at = next;
    }
  }

  const PlannerProblem& p_;
  const SpanTable& table_;
  std::vector<std::pair<int, int>> combos_;
  std::vector<std::vector<double>> span_;
};

bool is_contiguous(const std::vector<PlannedStage>& stages) {
  int next = 0;
  for (const PlannedStage& stage : stages) {
    for (int layer : stage.layers) {
      if (layer != next++) return false;
    }
  }
  return true;
}

[[noreturn]] void nothing_fits(const PlannerProblem& p) {
  double smallest = kInf, largest = 0;
  for (double m : p.class_memory_bytes) {
    smallest = std::min(smallest, m);
    largest = std::max(largest, m);
  }
  // The least any plan needs somewhere: the heaviest single layer, one microbatch in flight.
  double heaviest = 0;
  size_t which = 0;
  for (size_t l = 0; l < p.model.layers.size(); ++l) {
    const double need = p.layer_resident_bytes[l] + p.layer_stash_bytes[l];
    if (need > heaviest) {
      heaviest = need;
      which = l;
    }
  }
  const auto gib = [](double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
    return std::string(text);
  };
  std::string why = "no partition of the model over " + std::to_string(p.devices()) +
                    " devices fits in their memory (" + gib(largest) + " per device";
  if (smallest < largest) why += " at most";
  why += ")";
  if (heaviest > largest) {
    why += ": layer '" + p.model.layers[which].name + "' alone needs " + gib(heaviest);
  }
  throw InputError(p.memory_source + ": " + why);
}

}  // namespace

std::vector<int> PipedreamPlan::partition() const {
  std::vector<int> counts;
  for (const PlannedStage& stage : stages) counts.push_back(static_cast<int>(stage.layers.size()));
  return counts;
}

PipedreamPlan plan_pipedream(const PlannerProblem& p, const PipedreamOptions& options) {
  if (p.model.layers.empty()) throw InputError("the model has no layers to partition");
  const LayerGraph graph = layer_graph_of(p.model, /*glue=*/!options.chain_only);
  const AntichainStates states = antichain_states(graph, options.chain_only);
  const SpanTable table = span_table(p, graph, states);

  PipedreamPlan plan;
  plan.states = static_cast<int>(states.states.size());
  std::vector<ChosenStage> chosen;
  if (!p.heterogeneous() && p.nodes > 1) {
    plan.levels = 2;
    Hierarchy hierarchy(p, table);
    plan.objective_s = hierarchy.solve(&chosen);
  } else {
    plan.objective_s = solve_flat(p, table, &chosen);
  }
  if (plan.objective_s == kInf) nothing_fits(p);

  std::vector<StagePlacement> placements;
  for (const ChosenStage& stage : chosen) {
    placements.push_back({table.layers(stage.from, stage.to), stage.devices});
    plan.devices_used += static_cast<int>(stage.devices.size());
  }
  const PlanCost cost = plan_cost(p, placements);
  plan.bottleneck_s = cost.bottleneck_s;
  for (size_t s = 0; s < placements.size(); ++s) {
    plan.stages.push_back({placements[s].layers, placements[s].devices, cost.stages[s]});
  }
  plan.contiguous = is_contiguous(plan.stages);
  return plan;
}

}  // namespace pipetwin
