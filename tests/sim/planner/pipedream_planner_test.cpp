// The PipeDream/APapo planner: antichain states, the DP against brute force over every
// valid cut (and replica count, and device assignment), the real profiles against a
// time-balanced chain partition, memory, and the command line.
#include "sim/planner/pipedream_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "cli_runner.h"
#include "sim/partition/balanced_partition.h"
#include "sim/planner/antichain_states.h"
#include "sim/planner/layer_graph.h"
#include "sim/planner/plan_cost.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A random DAG in topological order: each layer after the first reads 1-2 earlier ones,
// and every layer but the last is read by someone. `chain`: layer i reads i-1 only.
ModelSpec random_model(std::mt19937& rng, int layers, bool chain) {
  ModelSpec model;
  model.layers.resize(layers);
  std::uniform_real_distribution<double> time(0.5, 3.0), bytes(1e6, 2e8);
  for (int i = 0; i < layers; ++i) {
    ModelLayer& l = model.layers[i];
    // Built aside and moved in: GCC 12 warns (-Wrestrict, falsely) when a literal is
    // copied into the vector's string.
    std::string name(1, 'l');
    name += std::to_string(i);
    l.name = std::move(name);
    l.fwd.seconds_per_sample = time(rng) * 1e-3;
    l.bwd.seconds_per_sample = 2 * time(rng) * 1e-3;
    l.activation_bytes_per_sample = bytes(rng) / 32;
    l.stash_bytes_per_sample = l.activation_bytes_per_sample;
    l.parameter_bytes = static_cast<int64_t>(bytes(rng));
  }
  for (int i = 1; i < layers; ++i) {
    std::set<int> producers{chain ? i - 1 : std::uniform_int_distribution<int>(0, i - 1)(rng)};
    if (!chain && i > 1 && rng() % 2)
      producers.insert(std::uniform_int_distribution<int>(0, i - 1)(rng));
    for (int p : producers) model.layers[p].consumers.push_back(i);
  }
  for (int i = 0; i + 1 < layers; ++i) {
    if (model.layers[i].consumers.empty()) model.layers[i].consumers.push_back(i + 1);
    std::sort(model.layers[i].consumers.begin(), model.layers[i].consumers.end());
  }
  return model;
}

// Devices of `speeds` (relative) and `memories`, on one node unless nodes > 1.
PlannerProblem problem_for(const ModelSpec& model, const std::vector<double>& speeds,
                           const std::vector<double>& memories, int microbatches, double samples) {
  PlannerProblem p;
  p.model = model;
  p.microbatches = microbatches;
  p.microbatch_samples = samples;
  p.nodes = 1;
  p.gpus_per_node = static_cast<int>(speeds.size());
  p.intra_node = {20e9, 3e-6};
  p.inter_node = {5e9, 5e-6};
  std::vector<std::pair<double, double>> classes;
  for (size_t d = 0; d < speeds.size(); ++d) {
    const std::pair key{speeds[d], memories[d]};
    auto it = std::find(classes.begin(), classes.end(), key);
    if (it == classes.end()) {
      classes.push_back(key);
      it = classes.end() - 1;
    }
    p.device_class.push_back(static_cast<int>(it - classes.begin()));
    p.device_node.push_back(0);
  }
  for (const auto& [speed, memory] : classes) {
    p.class_memory_bytes.push_back(memory);
    p.layer_seconds.emplace_back();
    for (const ModelLayer& l : model.layers) {
      p.layer_seconds.back().push_back((l.fwd.seconds_per_sample + l.bwd.seconds_per_sample) *
                                       samples / speed);
    }
  }
  for (const ModelLayer& l : model.layers) {
    p.layer_resident_bytes.push_back(4.0 * static_cast<double>(l.parameter_bytes));
    p.layer_gradient_bytes.push_back(static_cast<double>(l.parameter_bytes));
    p.layer_stash_bytes.push_back(l.stash_bytes_per_sample * samples);
    p.layer_output_bytes.push_back(l.activation_bytes_per_sample * samples);
  }
  return p;
}

// Every downward-closed set of layers, as bit masks.
std::vector<uint32_t> all_prefixes(const ModelSpec& model) {
  const int n = static_cast<int>(model.layers.size());
  std::vector<uint32_t> producers(n, 0);
  for (int i = 0; i < n; ++i) {
    for (int c : model.layers[i].consumers) producers[c] |= 1u << i;
  }
  std::vector<uint32_t> result;
  for (uint32_t set = 0; set < (1u << n); ++set) {
    bool closed = true;
    for (int i = 0; i < n && closed; ++i) {
      if ((set >> i & 1) && (producers[i] & ~set)) closed = false;
    }
    if (closed) result.push_back(set);
  }
  return result;
}

// The layers of prefix `next` that are not in prefix `done`: one stage.
std::vector<int> layers_between(uint32_t done, uint32_t next, int n) {
  std::vector<int> layers;
  for (int i = 0; i < n; ++i) {
    if ((next & ~done) >> i & 1) layers.push_back(i);
  }
  return layers;
}

// The best bottleneck over every chain of prefixes and every assignment of disjoint
// device sets to its stages (one device each when straight); kInf if nothing fits.
double brute_force(const PlannerProblem& p) {
  const int n = static_cast<int>(p.model.layers.size());
  const uint32_t all = (1u << n) - 1;
  const std::vector<uint32_t> prefixes = all_prefixes(p.model);
  const int devices = p.devices();
  double best = kInf;
  std::vector<StagePlacement> stages;
  std::function<void(uint32_t, uint32_t)> extend = [&](uint32_t done, uint32_t free) {
    if (done == all) {
      const PlanCost cost = plan_cost(p, stages);
      if (cost.fits) best = std::min(best, cost.bottleneck_s);
      return;
    }
    for (uint32_t next : prefixes) {
      if ((next & done) != done || next == done) continue;
      StagePlacement stage{layers_between(done, next, n), {}};
      for (uint32_t use = free; use; use = (use - 1) & free) {
        if (p.straight && __builtin_popcount(use) != 1) continue;
        stage.devices.clear();
        for (int d = 0; d < devices; ++d) {
          if (use >> d & 1) stage.devices.push_back(d);
        }
        stages.push_back(stage);
        extend(next, free & ~use);
        stages.pop_back();
      }
    }
  };
  extend(0, (1u << devices) - 1);
  return best;
}

// What the brute-force tests saw, so that they can check they covered something.
struct Coverage {
  int multi_stage = 0;  // plans with several stages
  int replicated = 0;   // plans with a replicated stage
  int non_contiguous = 0;
};

double planned(const PlannerProblem& p, Coverage* coverage = nullptr) {
  try {
    const PipedreamPlan plan = plan_pipedream(p);
    EXPECT_NEAR(plan.objective_s, plan.bottleneck_s, 1e-12 * plan.bottleneck_s);
    if (coverage) {
      coverage->multi_stage += plan.stages.size() > 1;
      coverage->non_contiguous += !plan.contiguous;
      for (const PlannedStage& stage : plan.stages) {
        if (stage.devices.size() > 1) {
          ++coverage->replicated;
          break;
        }
      }
    }
    return plan.bottleneck_s;
  } catch (const InputError&) {
    return kInf;
  }
}

void expect_same(double dp, double brute, const std::string& what) {
  if (brute == kInf) {
    EXPECT_EQ(dp, kInf) << what;
  } else {
    EXPECT_NEAR(dp, brute, 1e-9 * brute) << what;
  }
}

TEST(AntichainStates, ChainHasOneStatePerCut) {
  std::mt19937 rng(3);
  const ModelSpec model = random_model(rng, 7, true);
  const AntichainStates states = antichain_states(layer_graph_of(model));
  ASSERT_EQ(states.states.size(), 8u);
  for (size_t s = 0; s < states.states.size(); ++s) {
    EXPECT_EQ(states.states[s].size, static_cast<int>(s));
    EXPECT_EQ(states.subsets[s].size(), s);
  }
}

TEST(AntichainStates, DiamondHasEveryDownwardClosedSet) {
  // a -> b, a -> c, b -> d, c -> d
  ModelSpec model;
  model.layers.resize(4);
  model.layers[0].consumers = {1, 2};
  model.layers[1].consumers = {3};
  model.layers[2].consumers = {3};
  for (ModelLayer& l : model.layers) l.fwd.seconds_per_sample = 1;
  const AntichainStates states = antichain_states(layer_graph_of(model));
  // {}, {a}, {a,b}, {a,c}, {a,b,c}, {a,b,c,d}
  ASSERT_EQ(states.states.size(), 6u);
  const AntichainState& ab = states.states[2];
  EXPECT_EQ(ab.size, 2);
  // Both a (read by c) and b (read by d) cross the cut; only b is maximal.
  EXPECT_EQ(ab.antichain, std::vector<int>{1});
  EXPECT_EQ(ab.augmented, (std::vector<int>{0, 1}));
  EXPECT_EQ(states.states[1].next, (std::vector<int>{2, 3}));
  // {a,b} and {a,c} are not stages of each other.
  EXPECT_EQ(states.subsets[3], (std::vector<int>{0, 1}));
  EXPECT_EQ(states.subsets[5].size(), 5u);
}

TEST(AntichainStates, RandomDagStatesAreTheDownwardClosedSets) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const ModelSpec model = random_model(rng, 8, false);
    const AntichainStates states = antichain_states(layer_graph_of(model));
    EXPECT_EQ(states.states.size(), all_prefixes(model).size());
  }
}

TEST(AntichainStates, FreeDanglingLayersAreGlued) {
  ModelSpec model;
  model.layers.resize(4);  // input(free) -> a -> b, a -> getitem(free sink)
  model.layers[0].consumers = {1};
  model.layers[1].consumers = {2, 3};
  model.layers[1].fwd.seconds_per_sample = 1;
  model.layers[2].fwd.seconds_per_sample = 1;
  const LayerGraph graph = layer_graph_of(model);
  ASSERT_EQ(graph.units.size(), 2u);
  EXPECT_EQ(graph.units[0].layers, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(graph.units[1].layers, std::vector<int>{2});
}

TEST(PipedreamPlanner, ChainEqualsBruteForceOverCutsAndReplicas) {
  std::mt19937 rng(1);
  Coverage seen;
  for (int trial = 0; trial < 40; ++trial) {
    const int layers = 2 + static_cast<int>(rng() % 5);
    const int devices = 2 + static_cast<int>(rng() % 3);
    const ModelSpec model = random_model(rng, layers, true);
    PlannerProblem p = problem_for(model, std::vector<double>(devices, 1.0),
                                   std::vector<double>(devices, 80e9), 1 + rng() % 8, 32);
    p.straight = trial % 3 == 0;
    expect_same(planned(p, &seen), brute_force(p), "trial " + std::to_string(trial));
  }
  EXPECT_GT(seen.multi_stage, 10);
  EXPECT_GT(seen.replicated, 3);
}

TEST(PipedreamPlanner, DagEqualsBruteForceOverEveryValidCut) {
  std::mt19937 rng(2);
  Coverage seen;
  for (int trial = 0; trial < 40; ++trial) {
    const int layers = 3 + static_cast<int>(rng() % 5);
    const int devices = 2 + static_cast<int>(rng() % 3);
    const ModelSpec model = random_model(rng, layers, false);
    PlannerProblem p = problem_for(model, std::vector<double>(devices, 1.0),
                                   std::vector<double>(devices, 80e9), 1 + rng() % 8, 32);
    p.straight = trial % 4 == 0;
    expect_same(planned(p, &seen), brute_force(p), "trial " + std::to_string(trial));
  }
  EXPECT_GT(seen.multi_stage, 10);
  EXPECT_GT(seen.non_contiguous, 0);
}

TEST(PipedreamPlanner, MemoryLimitEqualsBruteForceAndIsRespected) {
  std::mt19937 rng(4);
  int limited = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const ModelSpec model = random_model(rng, 5, trial % 2 == 0);
    // Between a fraction of one layer's needs and the whole model's.
    const double memory = std::uniform_real_distribution<double>(4e8, 4e9)(rng);
    PlannerProblem p =
        problem_for(model, std::vector<double>(3, 1.0), std::vector<double>(3, memory), 4, 32);
    const double brute = brute_force(p);
    expect_same(planned(p), brute, "trial " + std::to_string(trial));
    if (brute == kInf) continue;
    ++limited;
    for (const PlannedStage& stage : plan_pipedream(p).stages) {
      EXPECT_LE(stage.cost.memory_bytes, memory);
    }
  }
  EXPECT_GT(limited, 5);
}

// `nodes` x `per_node` equal devices, node-major ids, two link levels.
PlannerProblem two_level_problem(const ModelSpec& model, int nodes, int per_node, double memory,
                                 int microbatches) {
  PlannerProblem p = problem_for(model, std::vector<double>(nodes * per_node, 1.0),
                                 std::vector<double>(nodes * per_node, memory), microbatches, 32);
  p.nodes = nodes;
  p.gpus_per_node = per_node;
  for (int d = 0; d < p.devices(); ++d) p.device_node[d] = d / per_node;
  p.intra_node = {20e9, 3e-6};
  p.inter_node = {1e9, 8e-6};
  return p;
}

// Every hierarchical plan, scored by plan_cost(): spans of states, each on `copies`
// consecutive nodes that all run the same pipeline of stages, whose devices per node add up
// to all of a node's devices; any number of nodes may stay unused at the end.
double brute_force_two_levels(const PlannerProblem& p) {
  const int n = static_cast<int>(p.model.layers.size());
  const uint32_t all = (1u << n) - 1;
  const std::vector<uint32_t> prefixes = all_prefixes(p.model);
  double best = kInf;
  std::vector<StagePlacement> stages;
  std::function<void(uint32_t, int)> next_span;
  // Stages of the span on nodes [first, first + copies), from `done` on, `used` devices of
  // each node taken.
  std::function<void(uint32_t, int, int, int)> next_stage = [&](uint32_t done, int first,
                                                                int copies, int used) {
    if (used == p.gpus_per_node) {
      next_span(done, first + copies);
      return;
    }
    for (uint32_t next : prefixes) {
      if ((next & done) != done || next == done) continue;
      StagePlacement stage{layers_between(done, next, n), {}};
      for (int m = 1; used + m <= p.gpus_per_node; ++m) {
        stage.devices.clear();
        for (int node = first; node < first + copies; ++node) {
          for (int local = used; local < used + m; ++local)
            stage.devices.push_back(node * p.gpus_per_node + local);
        }
        stages.push_back(stage);
        next_stage(next, first, copies, used + m);
        stages.pop_back();
      }
    }
  };
  next_span = [&](uint32_t done, int node) {
    if (done == all) {
      const PlanCost cost = plan_cost(p, stages);
      if (cost.fits) best = std::min(best, cost.bottleneck_s);
      return;
    }
    for (int copies = 1; node + copies <= p.nodes; ++copies) next_stage(done, node, copies, 0);
  };
  next_span(0, 0);
  return best;
}

TEST(PipedreamPlanner, TwoLevelsEqualBruteForceWithReplicationAcrossNodes) {
  std::mt19937 rng(7);
  Coverage seen;
  int limited = 0, cross_node_replicas = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int layers = 3 + static_cast<int>(rng() % 3);
    const int nodes = 2 + static_cast<int>(rng() % 2), per_node = 2 + static_cast<int>(rng() % 2);
    const ModelSpec model = random_model(rng, layers, trial % 2 == 0);
    // A third of the trials with a memory limit that rules some plans out.
    const double memory =
        trial % 3 == 0 ? std::uniform_real_distribution<double>(1e9, 4e9)(rng) : 80e9;
    const PlannerProblem p =
        two_level_problem(model, nodes, per_node, memory, 1 + static_cast<int>(rng() % 8));
    const double brute = brute_force_two_levels(p);
    const double dp = planned(p, &seen);
    expect_same(dp, brute, "trial " + std::to_string(trial));
    if (dp == kInf) continue;
    limited += trial % 3 == 0;
    const PipedreamPlan plan = plan_pipedream(p);
    EXPECT_EQ(plan.levels, 2);
    for (size_t s = 0; s + 1 < plan.stages.size(); ++s) {
      std::set<int> here, there;
      for (int d : plan.stages[s].devices) here.insert(p.device_node[d]);
      for (int d : plan.stages[s + 1].devices) there.insert(p.device_node[d]);
      cross_node_replicas += here != there && plan.stages[s].devices.size() > 1;
    }
  }
  EXPECT_GT(seen.multi_stage, 10);
  EXPECT_GT(seen.replicated, 10);
  EXPECT_GT(cross_node_replicas, 3);  // cuts between nodes sent by several replicas
  EXPECT_GT(limited, 5);
}

TEST(PipedreamPlanner, NothingFitsIsAnInputError) {
  std::mt19937 rng(5);
  PlannerProblem p = problem_for(random_model(rng, 4, true), {1, 1}, {1e6, 1e6}, 4, 32);
  p.memory_source = "s.textproto:3: cluster.gpu.memory_gib";
  try {
    plan_pipedream(p);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.textproto:3: cluster.gpu.memory_gib"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("fits"), std::string::npos) << e.what();
  }
}

TEST(PipedreamPlanner, HeterogeneousDevicesEqualBruteForce) {
  std::mt19937 rng(6);
  Coverage seen;
  for (int trial = 0; trial < 30; ++trial) {
    const ModelSpec model = random_model(rng, 3 + static_cast<int>(rng() % 3), trial % 2 == 0);
    // A fast small device, slow big ones (APapo's mixed GPUs).
    const double small = std::uniform_real_distribution<double>(5e8, 3e9)(rng);
    PlannerProblem p =
        problem_for(model, {2.5, 1.0, 1.0, 0.5}, {small, 40e9, 40e9, 40e9}, 1 + rng() % 6, 32);
    p.straight = trial % 3 == 0;
    ASSERT_EQ(p.classes(), 3);
    expect_same(planned(p, &seen), brute_force(p), "trial " + std::to_string(trial));
  }
  EXPECT_GT(seen.multi_stage, 5);
}

TEST(PipedreamPlanner, HeterogeneousPutsTheFastDeviceOnTheHeaviestStage) {
  ModelSpec model;
  model.layers.resize(2);
  model.layers[0].fwd.seconds_per_sample = 1e-3;
  model.layers[1].fwd.seconds_per_sample = 3e-3;
  model.layers[0].consumers = {1};
  PlannerProblem p = problem_for(model, {1.0, 3.0}, {80e9, 80e9}, 8, 32);
  p.straight = true;
  const PipedreamPlan plan = plan_pipedream(p);
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[1].devices, std::vector<int>{1});
  EXPECT_NEAR(plan.bottleneck_s, 32e-3, 1e-9);
}

// A scenario on one of the real profiles, `devices` GPUs of dgx-a100 (two nodes for 16).
ResolvedScenario profile_scenario(const std::string& profile, int devices) {
  const int nodes = devices > 8 ? 2 : 1;
  const std::string text =
      "name: \"" + profile + "\"\ncluster { preset: \"dgx-a100\" nodes: " + std::to_string(nodes) +
      " gpus_per_node: " + std::to_string(devices / nodes) + " }\nmodel { pipedream_profile: \"" +
      std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/profiles/" + profile +
      ".graph.txt\" profile_batch: 128 }\ntraining { global_batch: 256 "
      "microbatches: 8 optimizer: SGD }\nschedule { kind: ONE_F_ONE_B "
      "stages: " +
      std::to_string(devices) + " }\n";
  return resolve_scenario(parse_scenario(text, profile + ".textproto", ".", false, {}));
}

// The time-balanced chain partition, one stage per device in order.
PlanCost balanced_cost(const PlannerProblem& p, int devices) {
  const std::vector<int32_t> counts = balanced_partition(p.layer_seconds[0], devices);
  std::vector<StagePlacement> stages;
  int layer = 0;
  for (int s = 0; s < devices; ++s) {
    StagePlacement stage{{}, {s}};
    for (int n = 0; n < counts[s]; ++n) stage.layers.push_back(layer++);
    stages.push_back(stage);
  }
  return plan_cost(p, stages);
}

TEST(PipedreamPlanner, RealProfilesNeverWorseThanTimeBalancedChain) {
  for (const char* profile : {"vgg16", "resnet50", "gnmt", "alexnet"}) {
    for (int devices : {4, 8, 16}) {
      const PlannerProblem base = planner_problem(profile_scenario(profile, devices));
      const PlanCost balanced = balanced_cost(base, devices);
      for (bool straight : {false, true}) {
        PlannerProblem p = base;
        p.straight = straight;
        const PipedreamPlan plan = plan_pipedream(p);
        const std::string what =
            std::string(profile) + " on " + std::to_string(devices) + (straight ? " straight" : "");
        // What the plan costs is never more than what the DP thought (the two-level DP is
        // conservative), and no device is over its memory.
        EXPECT_LE(plan.bottleneck_s, plan.objective_s * (1 + 1e-9)) << what;
        for (const PlannedStage& stage : plan.stages) {
          EXPECT_LE(stage.cost.memory_bytes, stage.cost.memory_limit_bytes) << what;
        }
        int layers = 0;
        for (const PlannedStage& stage : plan.stages)
          layers += static_cast<int>(stage.layers.size());
        EXPECT_EQ(layers, static_cast<int>(p.model.layers.size())) << what;
        EXPECT_LE(plan.devices_used, devices) << what;
        if (balanced.fits) {
          EXPECT_LE(plan.bottleneck_s, balanced.bottleneck_s * (1 + 1e-9))
              << what << ": balanced chain " << balanced.bottleneck_s;
        }
      }
    }
  }
}

// The plan --write-plan writes (straight, contiguous) is never worse than the balanced
// chain the scenario simulates without a plan: both are chains, and the DP sees all of them.
TEST(PipedreamPlanner, ContiguousPlansNeverWorseThanTimeBalancedChain) {
  for (const char* profile : {"vgg16", "resnet50", "gnmt", "alexnet"}) {
    for (int devices : {4, 8, 16}) {
      PlannerProblem p = planner_problem(profile_scenario(profile, devices));
      p.straight = true;
      PipedreamOptions chain;
      chain.chain_only = true;
      const PipedreamPlan plan = plan_pipedream(p, chain);
      const PlanCost balanced = balanced_cost(p, devices);
      EXPECT_TRUE(plan.contiguous);
      if (balanced.fits) {
        EXPECT_LE(plan.bottleneck_s, balanced.bottleneck_s * (1 + 1e-9))
            << profile << " on " << devices << ": balanced chain " << balanced.bottleneck_s;
      }
    }
  }
}

TEST(PipedreamPlanner, ResNetUsesBranchCutsAndTwoLevels) {
  const PlannerProblem p = planner_problem(profile_scenario("resnet50", 16));
  const PipedreamPlan plan = plan_pipedream(p);
  EXPECT_EQ(plan.levels, 2);
  EXPECT_GT(plan.states, 177);  // more states than cut positions: the branches
  PipedreamOptions chain;
  chain.chain_only = true;
  const PipedreamPlan prefixes = plan_pipedream(p, chain);
  EXPECT_TRUE(prefixes.contiguous);
  EXPECT_LE(plan.objective_s, prefixes.objective_s * (1 + 1e-12));
}

std::string resnet16() {
  return std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/resnet50-pipedream-16gpu.textproto";
}

TEST(PipedreamPlanCli, JsonListsStagesAndBottleneck) {
  const testing::CliResult r =
      testing::run_pipetwin("plan " + resnet16() + " --search pipedream --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["bottleneck_s"].get<double>(), 0);
  std::set<int> layers;
  int replicas = 0;
  for (const auto& stage : j["stages"]) {
    for (int layer : stage["layers"]) EXPECT_TRUE(layers.insert(layer).second);
    replicas += stage["replicas"].get<int>();
    EXPECT_GT(stage["time_s"].get<double>(), 0);
    EXPECT_GT(stage["memory_bytes"].get<double>(), 0);
    EXPECT_LE(stage["time_s"].get<double>(), j["bottleneck_s"].get<double>());
  }
  EXPECT_EQ(layers.size(), 177u);
  EXPECT_LE(replicas, 16);
}

TEST(PipedreamPlanCli, StraightHasOneReplicaPerStageAndPrintsATable) {
  const testing::CliResult r =
      testing::run_pipetwin("plan " + resnet16() + " --search pipedream --straight --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The parsed document must outlive the loop: a range-for over a member of a temporary
  // reads freed memory (found by AddressSanitizer).
  const nlohmann::json plan = nlohmann::json::parse(r.out);
  for (const auto& stage : plan["stages"]) {
    EXPECT_EQ(stage["replicas"].get<int>(), 1);
  }
  const testing::CliResult table =
      testing::run_pipetwin("plan " + resnet16() + " --search pipedream");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("bottleneck"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("replicas"), std::string::npos) << table.out;
}

TEST(PipedreamPlanCli, WrittenPlanSimulates) {
  testing::TempDir dir;
  const std::string plan = (dir.path() / "plan.textproto").string();
  const testing::CliResult r =
      testing::run_pipetwin("plan " + resnet16() + " --search pipedream --write-plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = testing::read_all(plan);
  EXPECT_NE(text.find("partition"), std::string::npos) << text;
  const testing::CliResult sim = testing::run_pipetwin("simulate " + plan + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_GT(nlohmann::json::parse(sim.out)["iteration_time_s"].get<double>(), 0);
}

// What the planner predicts for the plan it writes is what the simulator gives it: the
// busiest device's time per microbatch equals the written bottleneck (compute-bound plans on
// NVSwitch), and the plan is as fast as the time-balanced chain the scenario simulates as
// written. GNMT, whose free sources far from their consumers once hid every
// chain cut between them, wrote a 3-stage plan 1.6x slower than that chain.
TEST(PipedreamPlanCli, WrittenPlanSimulatesAsPredicted) {
  for (const char* name : {"gnmt-pipedream-8gpu", "vgg16-pipedream-4gpu"}) {
    const std::string scenario =
        std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/" + name + ".textproto";
    testing::TempDir dir;
    const std::string plan = (dir.path() / "plan.textproto").string();
    const testing::CliResult r = testing::run_pipetwin("plan " + scenario +
                                                       " --search pipedream --straight "
                                                       "--write-plan " +
                                                       plan);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = testing::read_all(plan);
    const std::string marker = "bottleneck ";
    const size_t at = text.find(marker);
    ASSERT_NE(at, std::string::npos) << text;
    const double predicted = std::stod(text.substr(at + marker.size()));
    const auto simulated = [](const std::string& args) {
      const testing::CliResult sim = testing::run_pipetwin("simulate " + args + " --json");
      EXPECT_EQ(sim.exit_code, 0) << sim.err;
      return nlohmann::json::parse(sim.out);
    };
    const nlohmann::json planned = simulated(plan);
    double busiest = 0;
    for (const auto& device : planned["devices"])
      busiest = std::max(busiest, device["busy_s"].get<double>());
    const int microbatches = 16;  // both scenarios, one iteration
    EXPECT_NEAR(busiest / microbatches, predicted, 0.05 * predicted) << name;
    const nlohmann::json balanced = simulated(scenario);
    // Within 5%: the planner minimises the bottleneck, not the fill and drain of one
    // iteration, which differ between plans of the same bottleneck (VGG-16: 4%).
    EXPECT_LE(planned["iteration_time_s"].get<double>(),
              balanced["iteration_time_s"].get<double>() * 1.05)
        << name;
  }
}

TEST(PipedreamPlanCli, MemoryNothingFitsInExitsTwoNamingTheField) {
  const testing::CliResult r = testing::run_pipetwin(
      "plan " + resnet16() + " --search pipedream --set cluster.gpu.memory_gib=0.01");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("memory_gib"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fits"), std::string::npos) << r.err;
}

TEST(PipedreamPlanCli, ProfileWithACycleExitsTwoWithTheLine) {
  testing::TempDir dir;
  dir.write("p.graph.txt",
            "node1 -- A -- forward_compute_time=1, backward_compute_time=1, activation_size=4, "
            "parameter_size=4\nnode2 -- B -- forward_compute_time=1, backward_compute_time=1, "
            "activation_size=4, parameter_size=4\n\tnode1 -- node2\n\tnode2 -- node1\n");
  const auto scenario =
      dir.write("s.textproto",
                "cluster { preset: \"dgx-a100\" gpus_per_node: 2 }\nmodel { pipedream_profile: "
                "\"p.graph.txt\" profile_batch: 1 }\ntraining { global_batch: 4 microbatches: 2 }\n"
                "schedule { kind: ONE_F_ONE_B stages: 2 }\n");
  const testing::CliResult r =
      testing::run_pipetwin("plan " + scenario.string() + " --search pipedream");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("p.graph.txt:3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cycle"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pipetwin
