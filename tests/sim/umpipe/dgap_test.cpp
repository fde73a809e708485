// DGAP (sim/umpipe/dgap.h) and the UMPIPE baselines (sim/umpipe/baselines.h) on toy
// fitness functions whose optimum is known: operators keep plans valid, the search is
// deterministic, finds the optimum, and never reports worse than its seeds.
#include "sim/umpipe/dgap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

#include "sim/umpipe/baselines.h"

namespace pipetwin {
namespace {

using dgap::Mutation;
using dgap::Rng;

int32_t count_above(const UnequalPlan& plan, int32_t cap) {
  int32_t over = 0;
  for (const StagePlan& stage : plan.stages) {
    over += stage.forward_sizes.size() > static_cast<size_t>(cap);
    over += stage.backward_sizes.size() > static_cast<size_t>(cap);
  }
  return over;
}

std::set<int32_t> cuts_of(const std::vector<int32_t>& sizes) {
  std::set<int32_t> cuts;
  int32_t position = 0;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) cuts.insert(position += sizes[i]);
  return cuts;
}

// A separable toy: every gene costs sum_i (fixed + size_i^2), fixed per stage and
// direction. Integer-valued, so comparisons are exact. Per gene the optimum is, for the
// best count m, near-equal sizes.
struct SeparableToy {
  std::vector<double> fixed;  // per gene: stage * 2 + (0 forward, 1 backward)
  int64_t calls = 0;

  double gene_cost(size_t g, const std::vector<int32_t>& sizes) const {
    double cost = 0;
    for (int32_t size : sizes) cost += fixed[g] + double(size) * size;
    return cost;
  }
  double operator()(const UnequalPlan& plan) const {
    double cost = 0;
    for (size_t s = 0; s < plan.stages.size(); ++s) {
      cost += gene_cost(2 * s, plan.stages[s].forward_sizes);
      cost += gene_cost(2 * s + 1, plan.stages[s].backward_sizes);
    }
    return cost;
  }
  double optimum(int32_t batch, int32_t cap) const {
    double total = 0;
    for (size_t g = 0; g < fixed.size(); ++g) {
      double best = std::numeric_limits<double>::infinity();
      for (int32_t m = 1; m <= std::min(batch, cap); ++m) {
        best = std::min(best, gene_cost(g, equal_plan(1, batch, m).stages[0].forward_sizes));
      }
      total += best;
    }
    return total;
  }
  PopulationEvaluate evaluate() {
    return [this](std::span<const UnequalPlan> plans, std::span<double> seconds) {
      calls += static_cast<int64_t>(plans.size());
      for (size_t i = 0; i < plans.size(); ++i) seconds[i] = (*this)(plans[i]);
    };
  }
};

// A rugged toy with no structure: a hash of the plan.
double hash_cost(const UnequalPlan& plan) {
  uint64_t h = 1469598103934665603ull;
  for (const StagePlan& stage : plan.stages) {
    for (const auto* sizes : {&stage.forward_sizes, &stage.backward_sizes}) {
      for (int32_t size : *sizes) h = (h ^ static_cast<uint64_t>(size)) * 1099511628211ull;
      h = (h ^ 0xff) * 1099511628211ull;
    }
  }
  return static_cast<double>(h % 1000003) + 1;
}
void hash_evaluate(std::span<const UnequalPlan> plans, std::span<double> seconds) {
  for (size_t i = 0; i < plans.size(); ++i) seconds[i] = hash_cost(plans[i]);
}

TEST(DgapOperators, RandomPartitionIsACompositionWithTheCount) {
  Rng rng(1);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto total = static_cast<int32_t>(dgap::uniform_int(rng, 1, 200));
    const auto parts = static_cast<int32_t>(dgap::uniform_int(rng, 1, total));
    const std::vector<int32_t> sizes = dgap::random_partition(rng, total, parts);
    ASSERT_EQ(sizes.size(), static_cast<size_t>(parts));
    EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), 0), total);
    EXPECT_TRUE(std::all_of(sizes.begin(), sizes.end(), [](int32_t s) { return s > 0; }));
  }
}

TEST(DgapOperators, UniformIntStaysInRangeAndCoversIt) {
  Rng rng(2);
  std::vector<int> seen(7, 0);
  for (int i = 0; i < 7000; ++i) {
    const int64_t x = dgap::uniform_int(rng, -3, 3);
    ASSERT_GE(x, -3);
    ASSERT_LE(x, 3);
    ++seen[x + 3];
  }
  for (int count : seen) EXPECT_GT(count, 800);
  for (int i = 0; i < 1000; ++i) {
    const double u = dgap::uniform_real(rng);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

// The property test: every operator, on many random plans, keeps each gene positive,
// summing to the batch, and (from parents within the cap) within the cap.
TEST(DgapOperators, CrossoverAndMutationsPreserveSumsAndPositivity) {
  Rng rng(3);
  int64_t applied[4] = {0, 0, 0, 0};
  for (int trial = 0; trial < 3000; ++trial) {
    const auto stages = static_cast<int32_t>(dgap::uniform_int(rng, 1, 6));
    const auto batch = static_cast<int32_t>(dgap::uniform_int(rng, 1, 64));
    const auto cap = static_cast<int32_t>(dgap::uniform_int(rng, 1, batch));
    const UnequalPlan a = dgap::random_plan(rng, stages, batch, cap);
    const UnequalPlan b = dgap::random_plan(rng, stages, batch, cap);
    ASSERT_EQ(plan_problem(a, stages, batch), "");
    ASSERT_EQ(count_above(a, cap), 0);

    const UnequalPlan genes = dgap::gene_crossover(rng, a, b);
    EXPECT_EQ(plan_problem(genes, stages, batch), "") << "gene crossover";
    for (size_t s = 0; s < genes.stages.size(); ++s) {  // each gene from a parent
      EXPECT_TRUE(genes.stages[s].forward_sizes == a.stages[s].forward_sizes ||
                  genes.stages[s].forward_sizes == b.stages[s].forward_sizes);
      EXPECT_TRUE(genes.stages[s].backward_sizes == a.stages[s].backward_sizes ||
                  genes.stages[s].backward_sizes == b.stages[s].backward_sizes);
    }

    const UnequalPlan cut = dgap::cut_point_crossover(rng, a, b, cap);
    EXPECT_EQ(plan_problem(cut, stages, batch), "") << "cut-point crossover";
    EXPECT_EQ(count_above(cut, cap), 0) << "cut-point crossover";
    EXPECT_EQ(dgap::cut_point_crossover(rng, a, a, cap), a);
    // Without the cap's repair, every cut comes from a parent.
    const UnequalPlan uncapped = dgap::cut_point_crossover(rng, a, b, 0);
    EXPECT_EQ(plan_problem(uncapped, stages, batch), "");
    for (size_t s = 0; s < uncapped.stages.size(); ++s) {
      std::set<int32_t> allowed = cuts_of(a.stages[s].forward_sizes);
      allowed.merge(cuts_of(b.stages[s].forward_sizes));
      for (int32_t c : cuts_of(uncapped.stages[s].forward_sizes)) EXPECT_TRUE(allowed.count(c));
    }

    for (Mutation kind : {Mutation::kMove, Mutation::kSplit, Mutation::kMerge, Mutation::kCopy}) {
      UnequalPlan mutated = a;
      const bool done = dgap::mutate(rng, mutated, kind, cap);
      applied[static_cast<int>(kind)] += done;
      EXPECT_EQ(plan_problem(mutated, stages, batch), "") << "mutation " << int(kind);
      EXPECT_EQ(count_above(mutated, cap), 0) << "mutation " << int(kind);
      if (done) {
        EXPECT_NE(mutated, a) << "mutation " << int(kind);
      } else {
        EXPECT_EQ(mutated, a);
      }
    }
    UnequalPlan any = a, lockstep = a;
    for (int k = 0; k < 20; ++k) {
      dgap::mutate_any(rng, any, cap);
      dgap::mutate_lockstep(rng, lockstep, cap);
    }
    EXPECT_EQ(plan_problem(any, stages, batch), "");
    EXPECT_EQ(count_above(any, cap), 0);
    EXPECT_EQ(plan_problem(lockstep, stages, batch), "");
    EXPECT_EQ(count_above(lockstep, cap), 0);
  }
  for (int64_t count : applied) EXPECT_GT(count, 500);  // every kind was exercised
}

TEST(DgapOperators, MutationsChangeTheCountAsNamed) {
  Rng rng(4);
  for (int trial = 0; trial < 500; ++trial) {
    const UnequalPlan plan = equal_plan(1, 40, static_cast<int32_t>(dgap::uniform_int(rng, 2, 10)));
    const size_t m = plan.stages[0].forward_sizes.size();
    auto total_count = [](const UnequalPlan& p) {
      return p.stages[0].forward_sizes.size() + p.stages[0].backward_sizes.size();
    };
    UnequalPlan moved = plan, split = plan, merged = plan;
    ASSERT_TRUE(dgap::mutate(rng, moved, Mutation::kMove, 0));
    ASSERT_TRUE(dgap::mutate(rng, split, Mutation::kSplit, 0));
    ASSERT_TRUE(dgap::mutate(rng, merged, Mutation::kMerge, 0));
    EXPECT_EQ(total_count(moved), 2 * m);
    EXPECT_EQ(total_count(split), 2 * m + 1);
    EXPECT_EQ(total_count(merged), 2 * m - 1);
    UnequalPlan copy = plan;  // both genes equal: nothing to copy
    EXPECT_FALSE(dgap::mutate(rng, copy, Mutation::kCopy, 0));
  }
  UnequalPlan single = equal_plan(1, 1, 1);  // nothing at all applies
  EXPECT_EQ(dgap::mutate_any(rng, single, 0), -1);
  UnequalPlan full = equal_plan(2, 12, 6);  // at the cap of 6: no split
  EXPECT_FALSE(dgap::mutate(rng, full, Mutation::kSplit, 6));
  EXPECT_TRUE(dgap::mutate(rng, full, Mutation::kSplit, 7));
}

TEST(DgapOperators, LockstepKeepsAlignedCutsAligned) {
  Rng rng(6);
  for (int trial = 0; trial < 300; ++trial) {
    UnequalPlan plan = equal_plan(5, 30, static_cast<int32_t>(dgap::uniform_int(rng, 2, 30)));
    plan.stages[2].backward_sizes = {30};  // one gene cut differently
    const UnequalPlan before = plan;
    const int64_t g = dgap::mutate_lockstep(rng, plan, 0);
    ASSERT_GE(g, 0);
    EXPECT_EQ(plan_problem(plan, 5, 30), "");
    EXPECT_NE(plan, before);
    // The genes that were alike are alike still, and the odd one moved only if it was
    // the one mutated.
    for (const StagePlan& stage : plan.stages) {
      if (g != 5) {
        EXPECT_EQ(stage.forward_sizes, plan.stages[0].forward_sizes);
      }
    }
    if (g != 5) {
      EXPECT_EQ(plan.stages[2].backward_sizes, std::vector<int32_t>{30});
    }
  }
}

TEST(DgapOperators, CapMergesTheSmallestNeighbours) {
  std::vector<int32_t> sizes = {5, 1, 1, 4, 2, 3};
  dgap::cap_microbatches(sizes, 4);
  EXPECT_EQ(sizes, (std::vector<int32_t>{5, 2, 4, 5}));  // (1,1), then (2,3)
  dgap::cap_microbatches(sizes, 0);
  EXPECT_EQ(sizes.size(), 4u);
  dgap::cap_microbatches(sizes, 1);
  EXPECT_EQ(sizes, (std::vector<int32_t>{16}));
}

TEST(Dgap, SameSeedSameResult) {
  DgapOptions options;
  options.population = 40;
  options.generations = 15;
  options.seed = 7;
  const std::vector<UnequalPlan> seeds = {equal_plan(3, 20, 4)};
  const DgapResult first = run_dgap(hash_evaluate, 3, 20, options, seeds);
  const DgapResult second = run_dgap(hash_evaluate, 3, 20, options, seeds);
  EXPECT_EQ(first.best, second.best);
  EXPECT_EQ(first.best_seconds, second.best_seconds);
  EXPECT_EQ(first.history, second.history);
  EXPECT_EQ(first.evaluations, second.evaluations);
}

TEST(Dgap, DifferentSeedsMayDiffer) {
  DgapOptions options;
  options.population = 20;
  options.generations = 3;
  std::set<std::vector<double>> histories;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    options.seed = seed;
    histories.insert(run_dgap(hash_evaluate, 3, 20, options, {}).history);
  }
  EXPECT_GT(histories.size(), 1u);
}

TEST(Dgap, FindsTheOptimumOfASeparableToy) {
  SeparableToy toy{{1, 10, 40, 150, 3, 25, 80, 400}};
  const int32_t batch = 24;
  const double optimum = toy.optimum(batch, batch);
  DgapOptions options;
  options.population = 200;
  options.generations = 300;
  options.seed = 11;
  const DgapResult result = run_dgap(toy.evaluate(), 4, batch, options, {});
  EXPECT_EQ(plan_problem(result.best, 4, batch), "");
  EXPECT_EQ(result.best_seconds, optimum);
  EXPECT_EQ(toy(result.best), result.best_seconds);
  EXPECT_EQ(result.history.size(), 301u);
  EXPECT_TRUE(std::is_sorted(result.history.rbegin(), result.history.rend()));
}

TEST(Dgap, RespectsTheMicrobatchCap) {
  SeparableToy toy{{0.5, 0.5, 0.5, 0.5}};  // small fixed costs: many microbatches pay
  const int32_t batch = 30, cap = 4;
  DgapOptions options;
  options.population = 100;
  options.generations = 150;
  options.max_microbatches = cap;
  const DgapResult result = run_dgap(toy.evaluate(), 2, batch, options, {});
  EXPECT_EQ(count_above(result.best, cap), 0);
  EXPECT_EQ(result.best_seconds, toy.optimum(batch, cap));
}

TEST(Dgap, NeverWorseThanItsSeeds) {
  Rng rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<UnequalPlan> seeds;
    double best_seed = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 5; ++i) {
      seeds.push_back(dgap::random_plan(rng, 4, 32, 0));
      best_seed = std::min(best_seed, hash_cost(seeds.back()));
    }
    DgapOptions options;
    options.population = 8;
    options.generations = static_cast<int32_t>(trial % 3);
    options.elite = static_cast<int32_t>(trial % 2);
    options.seed = static_cast<uint64_t>(trial);
    const DgapResult result = run_dgap(hash_evaluate, 4, 32, options, seeds);
    EXPECT_LE(result.best_seconds, best_seed);
    EXPECT_EQ(hash_cost(result.best), result.best_seconds);
  }
  // The optimum as a seed is what comes back, even with no generations.
  SeparableToy toy{{20, 20}};
  const UnequalPlan optimum = equal_plan(1, 12, 3);  // 3 x (20 + 16) = 108 per gene
  DgapOptions options;
  options.generations = 0;
  const DgapResult result = run_dgap(toy.evaluate(), 1, 12, options, {optimum});
  EXPECT_EQ(result.best_seconds, toy.optimum(12, 12));
  EXPECT_EQ(result.best_seconds, toy(optimum));
}

TEST(Dgap, InfeasiblePlansAreNeverEvaluated) {
  SeparableToy toy{{100, 100, 100, 100}};  // wants one microbatch per gene
  DgapOptions options;
  options.population = 60;
  options.generations = 100;
  auto small = [](const UnequalPlan& plan) {
    for (const StagePlan& stage : plan.stages) {
      for (int32_t size : stage.forward_sizes) {
        if (size > 5) return false;
      }
      for (int32_t size : stage.backward_sizes) {
        if (size > 5) return false;
      }
    }
    return true;
  };
  options.feasible = small;
  PopulationEvaluate checked = [&](std::span<const UnequalPlan> plans, std::span<double> seconds) {
    for (size_t i = 0; i < plans.size(); ++i) {
      EXPECT_TRUE(small(plans[i]));
      seconds[i] = toy(plans[i]);
    }
  };
  const DgapResult result = run_dgap(checked, 2, 20, options, {equal_plan(2, 20, 1)});
  EXPECT_TRUE(small(result.best));
  // The best feasible plan: 4 microbatches of 5 per gene, 4 x (100 + 25) = 500.
  EXPECT_EQ(result.best_seconds, 4 * 500.0);
}

TEST(Dgap, ReportsProgressEveryGeneration) {
  std::vector<std::pair<int32_t, double>> seen;
  DgapOptions options;
  options.population = 10;
  options.generations = 5;
  options.progress = [&](int32_t generation, double best) { seen.push_back({generation, best}); };
  const DgapResult result = run_dgap(hash_evaluate, 2, 8, options, {});
  ASSERT_EQ(seen.size(), 6u);
  for (int32_t g = 0; g <= 5; ++g) {
    EXPECT_EQ(seen[g].first, g);
    EXPECT_EQ(seen[g].second, result.history[g]);
  }
}

TEST(Dgap, RejectsBadOptionsAndSeeds) {
  DgapOptions options;
  options.population = 1;
  EXPECT_THROW(run_dgap(hash_evaluate, 2, 8, options, {}), std::invalid_argument);
  options = {};
  options.generations = -1;
  EXPECT_THROW(run_dgap(hash_evaluate, 2, 8, options, {}), std::invalid_argument);
  options = {};
  options.elite = 1000;
  EXPECT_THROW(run_dgap(hash_evaluate, 2, 8, options, {}), std::invalid_argument);
  options = {};
  options.tournament = 0;
  EXPECT_THROW(run_dgap(hash_evaluate, 2, 8, options, {}), std::invalid_argument);
  options = {};
  options.mutation_rate = 1.5;
  EXPECT_THROW(run_dgap(hash_evaluate, 2, 8, options, {}), std::invalid_argument);
  options = {};
  UnequalPlan bad = equal_plan(2, 8, 2);
  bad.stages[1].backward_sizes = {4, 3};
  EXPECT_THROW(run_dgap(hash_evaluate, 2, 8, options, {bad}), std::invalid_argument);
  EXPECT_THROW(run_dgap(hash_evaluate, 3, 8, options, {equal_plan(2, 8, 2)}),
               std::invalid_argument);
}

TEST(UmpipeBaselines, ChunkSizes) {
  EXPECT_EQ(chunk_sizes(10, 3), (std::vector<int32_t>{3, 3, 3, 1}));
  EXPECT_EQ(chunk_sizes(10, 5), (std::vector<int32_t>{5, 5}));
  EXPECT_EQ(chunk_sizes(10, 10), (std::vector<int32_t>{10}));
}

TEST(UmpipeBaselines, LocalGreedyTakesEachStagesBestSize) {
  // Stage s is fastest per sample at b = 3 + s; a flat stretch after it takes the smallest.
  auto per_sample = [](int32_t stage, int32_t b) {
    const int32_t best = 3 + stage;
    return b < best ? 2.0 + best - b : 1.0 + (stage == 2 ? 0.0 : 0.01 * (b - best));
  };
  const UnequalPlan plan = local_greedy_plan(3, 12, 0, per_sample);
  ASSERT_EQ(plan_problem(plan, 3, 12), "");
  EXPECT_EQ(plan.stages[0].forward_sizes, (std::vector<int32_t>{3, 3, 3, 3}));
  EXPECT_EQ(plan.stages[1].forward_sizes, (std::vector<int32_t>{4, 4, 4}));
  EXPECT_EQ(plan.stages[2].forward_sizes, (std::vector<int32_t>{5, 5, 2}));
  for (const StagePlan& stage : plan.stages) EXPECT_EQ(stage.forward_sizes, stage.backward_sizes);
  // A cap of 2 microbatches allows b >= 6 only.
  const UnequalPlan capped = local_greedy_plan(3, 12, 2, per_sample);
  EXPECT_EQ(capped.stages[0].forward_sizes, (std::vector<int32_t>{6, 6}));
}

TEST(UmpipeBaselines, GlobalDpKeepsTheBestEqualPlan) {
  SeparableToy toy{{9, 9, 9, 9}};  // m * 9 + sum of squares per gene, batch 12: m = 3 or 4
  const GlobalDpResult dp = global_dp_plan(toy.evaluate(), 2, 12, 0);
  double best = std::numeric_limits<double>::infinity();
  int32_t best_m = 0;
  for (int32_t m = 1; m <= 12; ++m) {
    if (toy(equal_plan(2, 12, m)) < best) best = toy(equal_plan(2, 12, m)), best_m = m;
  }
  EXPECT_EQ(dp.seconds, best);
  EXPECT_EQ(dp.microbatches, best_m);
  EXPECT_EQ(dp.plan, equal_plan(2, 12, best_m));
  EXPECT_EQ(toy.calls, 12);
  EXPECT_EQ(global_dp_plan(toy.evaluate(), 2, 12, 2).microbatches, 2);
}

TEST(UmpipeBaselines, PlanSpaceSize) {
  EXPECT_EQ(plan_space_size(1, 4, 0), 64);  // 8 compositions of 4, squared
  EXPECT_EQ(plan_space_size(2, 4, 0), 4096);
  EXPECT_EQ(plan_space_size(1, 4, 2), 16);  // {4}, {1,3}, {2,2}, {3,1}
  EXPECT_EQ(plan_space_size(1, 1, 0), 1);
  EXPECT_EQ(plan_space_size(16, 512, 0), std::numeric_limits<int64_t>::max());
}

TEST(UmpipeBaselines, ExhaustiveFindsTheOptimum) {
  SeparableToy toy{{3, 1, 6, 2}};
  const auto result = exhaustive_search(toy.evaluate(), 2, 5, 0);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->plans, 16 * 16 * 16 * 16);
  EXPECT_EQ(toy.calls, result->plans);
  EXPECT_EQ(result->seconds, toy.optimum(5, 5));
  EXPECT_EQ(toy(result->plan), result->seconds);
  EXPECT_FALSE(exhaustive_search(toy.evaluate(), 2, 7, 0).has_value());  // 64^4 plans
  EXPECT_TRUE(exhaustive_search(toy.evaluate(), 2, 7, 3, 1 << 20).has_value());
}

TEST(UmpipeBaselines, GaMatchesExhaustiveOnSmallToys) {
  for (int32_t batch = 4; batch <= 5; ++batch) {
    SeparableToy toy{{2, 7, 1, 4}};
    const auto exhaustive = exhaustive_search(toy.evaluate(), 2, batch, 0, 1 << 20);
    ASSERT_TRUE(exhaustive.has_value());
    DgapOptions options;
    options.population = 50;
    options.generations = 50;
    EXPECT_EQ(run_dgap(toy.evaluate(), 2, batch, options, {}).best_seconds, exhaustive->seconds);
  }
}

}  // namespace
}  // namespace pipetwin
