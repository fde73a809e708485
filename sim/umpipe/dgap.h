// DGAP, the genetic search of UMPIPE (TPDS 2024; docs/umpipe.md): it looks for the
// UnequalPlan with the shortest iteration time.
//
// An individual has two chromosomes, the forward cuts and the backward cuts, each with one
// gene per stage: the sizes of that stage's microbatches in that direction, which are
// positive and sum to the batch. Every operator keeps that true:
//   * crossover (rate `crossover_rate`), half the time either kind:
//       - gene crossover: each stage takes both its genes from one parent or the other
//         (and, a quarter of the time, each gene from either parent independently);
//       - cut-point crossover: a sample position c is drawn, and every gene of the child
//         takes the first parent's cut points before c and the second parent's from c on
//         (the child is the first parent for samples [0, c) and the second after);
//   * mutation (rate `mutation_rate`; then another with probability 1/2, and so on, half
//     of them on the same gene, so that a split can be followed by the moves that even out
//     its pieces):
//       - move: samples from a microbatch to its neighbour (1 sample, half the difference,
//         or any amount; a quarter of the time to any other microbatch, which shifts the
//         ranges in between; now and then as many moves as it takes to even out the gene);
//       - split: one microbatch in two (in halves, or anywhere);
//       - merge: two neighbouring microbatches into one;
//       - copy: a gene takes the cuts of the other direction of its stage or of the same
//         direction of a neighbouring stage;
//     and 40% of mutations act in lockstep: every gene that cut the batch like the mutated
//     one follows it. Copy and lockstep are additions to the paper's three operators: a
//     transfer waits for every upstream piece it overlaps, so aligned cuts matter, and
//     single-gene changes find alignment only by chance.
// A gene never gets more than `max_microbatches` microbatches from these operators
// (a crossover child over the cap has its smallest neighbouring pair merged until it fits);
// seeds are taken as given.
//
// Generations: the `elite` best individuals pass unchanged; the others are children of
// parents picked by tournament (`tournament` individuals drawn, the fastest wins). A child
// that is already in the next generation is drawn again (up to 4 times), which keeps the
// population diverse. Only new individuals are evaluated (a child equal to a parent keeps
// its time), and only feasible ones (the others count +inf).
//
// Deterministic: all randomness comes from one std::mt19937_64 seeded with `seed`, drawn in
// one thread, through this file's own integer and real draws (not the standard library's
// distributions, whose output differs between implementations). `evaluate` may use threads
// but must be a pure function of the plans.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "sim/spec/unequal_plan.h"

namespace pipetwin {

// Fills seconds[i] with the iteration time of population[i].
using PopulationEvaluate =
    std::function<void(std::span<const UnequalPlan> population, std::span<double> seconds)>;

struct DgapOptions {
  int32_t population = 256;   // >= 2
  int32_t generations = 100;  // >= 0; generation 0 is the initial population
  uint64_t seed = 1;
  int32_t elite = 4;       // in [0, population]
  int32_t tournament = 3;  // >= 1
  double crossover_rate = 0.9;
  double mutation_rate = 0.5;
  // At most this many microbatches per stage and direction; 0 = the batch (no cap).
  int32_t max_microbatches = 0;
  // Optional constraint (e.g. memory): an infeasible plan is never evaluated and counts +inf.
  std::function<bool(const UnequalPlan&)> feasible;
  // Optional: called after each generation (0 = the initial population) with the best so far.
  std::function<void(int32_t generation, double best_seconds)> progress;
};

struct DgapResult {
  UnequalPlan best;
  double best_seconds = 0;  // +inf when no plan was feasible
  // Best so far after each generation: generations + 1 entries, non-increasing.
  std::vector<double> history;
  int64_t evaluations = 0;  // plans passed to `evaluate`
};

// Throws std::invalid_argument for bad options or a seed that is not a valid plan for
// `stages` stages and `global_batch` samples (plan_problem). The result is never worse than
// the best seed.
DgapResult run_dgap(const PopulationEvaluate& evaluate, int32_t stages, int32_t global_batch,
                    const DgapOptions& options, const std::vector<UnequalPlan>& seeds);

// The operators, exposed for tests.
namespace dgap {

using Rng = std::mt19937_64;

int64_t uniform_int(Rng& rng, int64_t lo, int64_t hi);  // in [lo, hi], unbiased
double uniform_real(Rng& rng);                          // in [0, 1)
inline bool chance(Rng& rng, double p) { return uniform_real(rng) < p; }

// `parts` positive sizes summing to `total`, uniform over such compositions
// (1 <= parts <= total).
std::vector<int32_t> random_partition(Rng& rng, int32_t total, int32_t parts);

// A random plan: a random microbatch count in [1, max_microbatches] (0 = batch); half the
// time one random partition for every gene, otherwise one per gene.
UnequalPlan random_plan(Rng& rng, int32_t stages, int32_t global_batch, int32_t max_microbatches);

UnequalPlan gene_crossover(Rng& rng, const UnequalPlan& a, const UnequalPlan& b);
UnequalPlan cut_point_crossover(Rng& rng, const UnequalPlan& a, const UnequalPlan& b,
                                int32_t max_microbatches);
// The same into `child` (not a or b), reusing its storage.
void gene_crossover(Rng& rng, const UnequalPlan& a, const UnequalPlan& b, UnequalPlan& child);
void cut_point_crossover(Rng& rng, const UnequalPlan& a, const UnequalPlan& b,
                         int32_t max_microbatches, UnequalPlan& child);

// Merges the neighbouring pair with the smallest sum (the first such) until at most `cap`
// sizes remain (cap 0: no cap).
void cap_microbatches(std::vector<int32_t>& sizes, int32_t cap);

enum class Mutation { kMove, kSplit, kMerge, kCopy };

// Applies `kind` to a random gene where it applies; false (plan unchanged) where it
// applies nowhere. Move: 1 sample, half the difference, or any amount, from a microbatch to
// a neighbour (or, a quarter of the time, to any other microbatch, which shifts the ranges
// between them). Split: in halves, or anywhere. Merge: two neighbours. Copy: see above.
bool mutate(Rng& rng, UnequalPlan& plan, Mutation kind, int32_t max_microbatches);
// The same on gene `only_gene` (stage * 2 + 0 forward / 1 backward), or on a random gene
// where it applies when -1; returns the gene, or -1 (plan unchanged).
int64_t mutate_gene(Rng& rng, UnequalPlan& plan, Mutation kind, int32_t max_microbatches,
                    int64_t only_gene);
// A random kind (move 40%, split 20%, merge 20%, copy 20%), falling back to the other kinds
// when it does not apply; returns the gene mutated, or -1 when no kind applies (1 sample, or
// 1 stage with nothing to move, split or merge).
int64_t mutate_any(Rng& rng, UnequalPlan& plan, int32_t max_microbatches, int64_t only_gene = -1);
// mutate_any, then every other gene that had the same sizes as the mutated one before takes
// its new sizes: the same change in lockstep over all stages and directions that cut the
// batch alike, so that aligned cuts stay aligned.
int64_t mutate_lockstep(Rng& rng, UnequalPlan& plan, int32_t max_microbatches,
                        int64_t only_gene = -1);

}  // namespace dgap

}  // namespace pipetwin
