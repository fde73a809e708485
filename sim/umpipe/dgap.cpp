#include "sim/umpipe/dgap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

namespace pipetwin {
namespace dgap {
namespace {

// Gene g of a plan: stage g / 2, forward when g is even.
std::vector<int32_t>& gene(UnequalPlan& plan, size_t g) {
  StagePlan& stage = plan.stages[g / 2];
  return g % 2 == 0 ? stage.forward_sizes : stage.backward_sizes;
}
const std::vector<int32_t>& gene(const UnequalPlan& plan, size_t g) {
  const StagePlan& stage = plan.stages[g / 2];
  return g % 2 == 0 ? stage.forward_sizes : stage.backward_sizes;
}

int32_t batch_of(const UnequalPlan& plan) {
  if (plan.stages.empty()) return 0;
  return std::accumulate(plan.stages[0].forward_sizes.begin(), plan.stages[0].forward_sizes.end(),
                         0);
}

bool has_size_above_one(const std::vector<int32_t>& sizes) {
  return std::any_of(sizes.begin(), sizes.end(), [](int32_t size) { return size >= 2; });
}

// A uniformly drawn index among those where `pick` holds; -1 if none.
template <typename Pred>
int64_t pick_index(Rng& rng, size_t n, Pred pick) {
  int64_t candidates = 0;
  for (size_t i = 0; i < n; ++i) candidates += pick(i) ? 1 : 0;
  if (candidates == 0) return -1;
  int64_t k = uniform_int(rng, 0, candidates - 1);
  for (size_t i = 0; i < n; ++i) {
    if (pick(i) && k-- == 0) return static_cast<int64_t>(i);
  }
  return -1;
}

// The genes a copy mutation of gene g may copy from (the other direction of its stage, the
// same direction of the neighbouring stages) that differ from it; returns how many.
int copy_sources(const UnequalPlan& plan, size_t g, size_t (&sources)[3]) {
  const size_t genes = plan.stages.size() * 2;
  int n = 0;
  auto consider = [&](size_t source) {
    if (source < genes && gene(plan, source) != gene(plan, g)) sources[n++] = source;
  };
  consider(g ^ 1);
  if (g >= 2) consider(g - 2);
  consider(g + 2);
  return n;
}

}  // namespace

int64_t uniform_int(Rng& rng, int64_t lo, int64_t hi) {
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (range == 0) return static_cast<int64_t>(rng());  // the whole 64-bit range
  // Reject the values below 2^64 mod range, so that x % range is uniform.
  const uint64_t threshold = (0 - range) % range;
  while (true) {
    const uint64_t x = rng();
    if (x >= threshold) return lo + static_cast<int64_t>(x % range);
  }
}

double uniform_real(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::vector<int32_t> random_partition(Rng& rng, int32_t total, int32_t parts) {
  // Choose parts - 1 distinct cut points among 1..total-1 (Floyd's algorithm).
  const int32_t n = total - 1, k = parts - 1;
  std::vector<char> cut(static_cast<size_t>(total) + 1, 0);
  for (int32_t j = n - k + 1; j <= n; ++j) {
    const auto t = static_cast<int32_t>(uniform_int(rng, 1, j));
    if (cut[t]) {
      cut[j] = 1;
    } else {
      cut[t] = 1;
    }
  }
  std::vector<int32_t> sizes;
  sizes.reserve(parts);
  int32_t last = 0;
  for (int32_t position = 1; position <= total; ++position) {
    if (position == total || cut[position]) {
      sizes.push_back(position - last);
      last = position;
    }
  }
  return sizes;
}

UnequalPlan random_plan(Rng& rng, int32_t stages, int32_t global_batch, int32_t max_microbatches) {
  const int32_t cap =
      max_microbatches <= 0 ? global_batch : std::min(max_microbatches, global_batch);
  // Log-uniform counts: small counts are as likely as large ones per octave.
  auto count = [&] {
    const double x = std::exp(uniform_real(rng) * std::log(static_cast<double>(cap) + 1));
    return std::clamp(static_cast<int32_t>(x), 1, cap);
  };
  UnequalPlan plan;
  plan.stages.resize(stages);
  const double mode = uniform_real(rng);
  if (mode < 0.5) {  // one partition everywhere
    const std::vector<int32_t> sizes = random_partition(rng, global_batch, count());
    for (StagePlan& stage : plan.stages) stage = {sizes, sizes};
  } else {  // one count, or one count per gene, and a partition per gene
    const int32_t shared = count();
    for (size_t g = 0; g < plan.stages.size() * 2; ++g) {
      gene(plan, g) = random_partition(rng, global_batch, mode < 0.75 ? shared : count());
    }
  }
  return plan;
}

void gene_crossover(Rng& rng, const UnequalPlan& a, const UnequalPlan& b, UnequalPlan& child) {
  child.stages.resize(a.stages.size());
  if (chance(rng, 0.75)) {  // whole stages
    for (size_t s = 0; s < a.stages.size(); ++s) {
      child.stages[s] = chance(rng, 0.5) ? b.stages[s] : a.stages[s];
    }
  } else {  // each gene on its own
    for (size_t g = 0; g < a.stages.size() * 2; ++g) {
      gene(child, g) = chance(rng, 0.5) ? gene(b, g) : gene(a, g);
    }
  }
}

UnequalPlan gene_crossover(Rng& rng, const UnequalPlan& a, const UnequalPlan& b) {
  UnequalPlan child;
  gene_crossover(rng, a, b, child);
  return child;
}

void cut_point_crossover(Rng& rng, const UnequalPlan& a, const UnequalPlan& b,
                         int32_t max_microbatches, UnequalPlan& child) {
  const int32_t total = batch_of(a);
  if (total < 2) {
    child = a;
    return;
  }
  const auto c = static_cast<int32_t>(uniform_int(rng, 1, total - 1));
  child.stages.resize(a.stages.size());
  for (size_t g = 0; g < a.stages.size() * 2; ++g) {
    const std::vector<int32_t>& first = gene(a, g);
    const std::vector<int32_t>& second = gene(b, g);
    std::vector<int32_t>& sizes = gene(child, g);
    size_t i = 0;
    int32_t position = 0;  // the last cut of `first` before c (or 0)
    while (position + first[i] < c) position += first[i++];
    size_t j = 0;
    int32_t next = 0;  // the first cut of `second` at or after c (or the batch)
    while (next < c) next += second[j++];
    sizes.assign(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(i));
    sizes.push_back(next - position);
    sizes.insert(sizes.end(), second.begin() + static_cast<std::ptrdiff_t>(j), second.end());
    cap_microbatches(sizes, max_microbatches);
  }
}

UnequalPlan cut_point_crossover(Rng& rng, const UnequalPlan& a, const UnequalPlan& b,
                                int32_t max_microbatches) {
  UnequalPlan child;
  cut_point_crossover(rng, a, b, max_microbatches, child);
  return child;
}

void cap_microbatches(std::vector<int32_t>& sizes, int32_t cap) {
  if (cap <= 0) return;
  while (sizes.size() > static_cast<size_t>(std::max(cap, 1))) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < sizes.size(); ++i) {
      if (sizes[i] + sizes[i + 1] < sizes[best] + sizes[best + 1]) best = i;
    }
    sizes[best] += sizes[best + 1];
    sizes.erase(sizes.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

namespace {

size_t cap_of(const UnequalPlan& plan, int32_t max_microbatches) {
  return max_microbatches <= 0 ? static_cast<size_t>(batch_of(plan))
                               : static_cast<size_t>(max_microbatches);
}

bool applies(const UnequalPlan& plan, Mutation kind, size_t cap, size_t g) {
  const std::vector<int32_t>& sizes = gene(plan, g);
  switch (kind) {
    case Mutation::kMove:
      return sizes.size() >= 2 && has_size_above_one(sizes);
    case Mutation::kSplit:
      return sizes.size() < cap && has_size_above_one(sizes);
    case Mutation::kMerge:
      return sizes.size() >= 2;
    case Mutation::kCopy: {
      size_t sources[3];
      return copy_sources(plan, g, sources) > 0;
    }
  }
  return false;
}

// Applies `kind` to gene g, where it applies.
void apply(Rng& rng, UnequalPlan& plan, Mutation kind, size_t g) {
  std::vector<int32_t>& sizes = gene(plan, g);
  const auto last = static_cast<int64_t>(sizes.size()) - 1;
  switch (kind) {
    case Mutation::kMove: {
      const auto from = static_cast<size_t>(
          pick_index(rng, sizes.size(), [&](size_t i) { return sizes[i] >= 2; }));
      size_t to;
      if (sizes.size() > 2 && chance(rng, 0.25)) {  // any other microbatch
        to = static_cast<size_t>(uniform_int(rng, 0, last - 1));
        if (to >= from) ++to;
      } else if (from == 0) {
        to = 1;
      } else if (from + 1 == sizes.size()) {
        to = from - 1;
      } else {
        to = chance(rng, 0.5) ? from - 1 : from + 1;
      }
      // One sample, half the difference (evening the two out), or any amount; or, now and
      // then, as many moves as it takes to even out the whole gene.
      const double how = uniform_real(rng);
      if (how >= 0.85) {
        const int32_t total = std::accumulate(sizes.begin(), sizes.end(), 0);
        const auto m = static_cast<int32_t>(sizes.size());
        std::vector<int32_t> even(sizes.size());
        for (int32_t i = 0; i < m; ++i) even[i] = total / m + (i < total % m ? 1 : 0);
        if (even != sizes) {
          sizes = std::move(even);
          return;
        }
      }
      int32_t amount = 1;
      if (how >= 0.4 && how < 0.6) {
        amount = std::max(1, (sizes[from] - sizes[to]) / 2);
      } else if (how >= 0.6) {
        amount = static_cast<int32_t>(uniform_int(rng, 1, sizes[from] - 1));
      }
      sizes[from] -= amount;
      sizes[to] += amount;
      return;
    }
    case Mutation::kSplit: {
      const auto at = static_cast<size_t>(
          pick_index(rng, sizes.size(), [&](size_t i) { return sizes[i] >= 2; }));
      const auto left = static_cast<int32_t>(chance(rng, 0.5) ? sizes[at] / 2
                                                              : uniform_int(rng, 1, sizes[at] - 1));
      sizes.insert(sizes.begin() + static_cast<std::ptrdiff_t>(at) + 1, sizes[at] - left);
      sizes[at] = left;
      return;
    }
    case Mutation::kMerge: {
      const auto at = static_cast<size_t>(uniform_int(rng, 0, last - 1));
      sizes[at] += sizes[at + 1];
      sizes.erase(sizes.begin() + static_cast<std::ptrdiff_t>(at) + 1);
      return;
    }
    case Mutation::kCopy: {
      size_t sources[3];
      const int n = copy_sources(plan, g, sources);
      sizes = gene(plan, sources[uniform_int(rng, 0, n - 1)]);
      return;
    }
  }
}

}  // namespace

bool mutate(Rng& rng, UnequalPlan& plan, Mutation kind, int32_t max_microbatches) {
  return mutate_gene(rng, plan, kind, max_microbatches, -1) >= 0;
}

int64_t mutate_gene(Rng& rng, UnequalPlan& plan, Mutation kind, int32_t max_microbatches,
                    int64_t only_gene) {
  const size_t cap = cap_of(plan, max_microbatches);
  int64_t g = only_gene;
  if (g < 0) {
    g = pick_index(rng, plan.stages.size() * 2,
                   [&](size_t i) { return applies(plan, kind, cap, i); });
  } else if (!applies(plan, kind, cap, static_cast<size_t>(g))) {
    g = -1;
  }
  if (g >= 0) apply(rng, plan, kind, static_cast<size_t>(g));
  return g;
}

int64_t mutate_any(Rng& rng, UnequalPlan& plan, int32_t max_microbatches, int64_t only_gene) {
  static constexpr Mutation kKinds[] = {Mutation::kMove, Mutation::kSplit, Mutation::kMerge,
                                        Mutation::kCopy};
  const double x = uniform_real(rng);
  const int first = x < 0.4 ? 0 : x < 0.6 ? 1 : x < 0.8 ? 2 : 3;
  for (int k = 0; k < 4; ++k) {
    const int64_t g = mutate_gene(rng, plan, kKinds[(first + k) % 4], max_microbatches, only_gene);
    if (g >= 0) return g;
  }
  return -1;
}

int64_t mutate_lockstep(Rng& rng, UnequalPlan& plan, int32_t max_microbatches, int64_t only_gene) {
  thread_local UnequalPlan before;  // reused: assignment keeps its capacity
  before.stages.resize(plan.stages.size());
  for (size_t s = 0; s < plan.stages.size(); ++s) before.stages[s] = plan.stages[s];
  const int64_t g = mutate_any(rng, plan, max_microbatches, only_gene);
  if (g < 0) return g;
  const std::vector<int32_t>& old_sizes = gene(before, static_cast<size_t>(g));
  const std::vector<int32_t>& new_sizes = gene(plan, static_cast<size_t>(g));
  for (size_t other = 0; other < plan.stages.size() * 2; ++other) {
    if (other != static_cast<size_t>(g) && gene(before, other) == old_sizes) {
      gene(plan, other) = new_sizes;
    }
  }
  return g;
}

}  // namespace dgap

namespace {

using dgap::Rng;

constexpr double kInfiniteSeconds = std::numeric_limits<double>::infinity();
constexpr int kRetries = 4;
constexpr double kLockstepRate = 0.4;

void check_options(const DgapOptions& options) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("DGAP: " + what); };
  if (options.population < 2) fail("population must be at least 2");
  if (options.generations < 0) fail("generations must not be negative");
  if (options.elite < 0 || options.elite > options.population) {
    fail("elite must be in [0, population]");
  }
  if (options.tournament < 1) fail("tournament must be at least 1");
  if (!(options.crossover_rate >= 0 && options.crossover_rate <= 1)) {
    fail("crossover_rate must be in [0, 1]");
  }
  if (!(options.mutation_rate >= 0 && options.mutation_rate <= 1)) {
    fail("mutation_rate must be in [0, 1]");
  }
  if (options.max_microbatches < 0) fail("max_microbatches must not be negative");
}

// Applies one mutation, then more with probability 1/2 each.
// Further ones hit the same gene half the time, so that a split can be followed by moves
// that even its pieces out.
void mutate_some(Rng& rng, UnequalPlan& plan, int32_t cap) {
  auto one = [&](int64_t only_gene) {
    return dgap::chance(rng, kLockstepRate) ? dgap::mutate_lockstep(rng, plan, cap, only_gene)
                                            : dgap::mutate_any(rng, plan, cap, only_gene);
  };
  const int64_t g = one(-1);
  if (g < 0) return;
  while (dgap::chance(rng, 0.5)) {
    if (dgap::chance(rng, 0.5) && one(g) >= 0) continue;
    if (one(-1) < 0) return;
  }
}

// For telling duplicates apart (a collision only costs a little diversity).
uint64_t plan_hash(const UnequalPlan& plan) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  for (const StagePlan& stage : plan.stages) {
    for (int32_t size : stage.forward_sizes) mix(static_cast<uint64_t>(size));
    mix(~0ull);
    for (int32_t size : stage.backward_sizes) mix(static_cast<uint64_t>(size));
    mix(~1ull);
  }
  return h;
}

// The hashes of a generation's plans, for telling duplicates apart: open addressing,
// cleared every generation, no allocation after the first.
class HashSet {
 public:
  explicit HashSet(size_t expected) {
    size_t size = 16;
    while (size < 2 * expected) size *= 2;
    slots_.assign(size, 0);
  }
  void clear() { std::fill(slots_.begin(), slots_.end(), 0); }
  // False when `hash` was already there.
  bool insert(uint64_t hash) {
    hash |= 1;  // 0 marks an empty slot
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      if (slots_[i] == hash) return false;
      if (slots_[i] == 0) {
        slots_[i] = hash;
        return true;
      }
    }
  }

 private:
  std::vector<uint64_t> slots_;
};

class Search {
 public:
  Search(const PopulationEvaluate& evaluate, const DgapOptions& options)
      : evaluate_(evaluate), options_(options) {}

  // Fills `seconds` for `plans`, reordering `plans` so that the feasible ones come first
  // (the infeasible ones are not evaluated and get +inf).
  void evaluate(std::span<UnequalPlan> plans, std::span<double> seconds) {
    std::fill(seconds.begin(), seconds.end(), kInfiniteSeconds);
    size_t feasible = plans.size();
    if (options_.feasible) {
      auto split = std::stable_partition(plans.begin(), plans.end(), options_.feasible);
      feasible = static_cast<size_t>(split - plans.begin());
    }
    if (feasible == 0) return;
    evaluate_(std::span<const UnequalPlan>(plans.data(), feasible), seconds.first(feasible));
    evaluations_ += static_cast<int64_t>(feasible);
    for (double& s : seconds) {
      if (std::isnan(s)) s = kInfiniteSeconds;
    }
  }

  // Records a better plan (strictly: the first of equals stays).
  void consider(std::span<const UnequalPlan> plans, std::span<const double> seconds) {
    for (size_t i = 0; i < plans.size(); ++i) {
      if (!have_best_ || seconds[i] < best_seconds_) {
        best_ = plans[i];
        best_seconds_ = seconds[i];
        have_best_ = true;
      }
    }
  }

  int64_t evaluations() const { return evaluations_; }
  const UnequalPlan& best() const { return best_; }
  double best_seconds() const { return best_seconds_; }

 private:
  const PopulationEvaluate& evaluate_;
  const DgapOptions& options_;
  int64_t evaluations_ = 0;
  UnequalPlan best_;
  double best_seconds_ = kInfiniteSeconds;
  bool have_best_ = false;
};

}  // namespace

DgapResult run_dgap(const PopulationEvaluate& evaluate, int32_t stages, int32_t global_batch,
                    const DgapOptions& options, const std::vector<UnequalPlan>& seeds) {
  check_options(options);
  if (stages < 1) throw std::invalid_argument("DGAP: stages must be at least 1");
  if (global_batch < 1) throw std::invalid_argument("DGAP: the batch must be at least 1");
  for (size_t i = 0; i < seeds.size(); ++i) {
    const std::string problem = plan_problem(seeds[i], stages, global_batch);
    if (!problem.empty()) {
      throw std::invalid_argument("DGAP: seed " + std::to_string(i) + " " + problem);
    }
  }
  const int32_t cap = options.max_microbatches == 0
                          ? global_batch
                          : std::min(options.max_microbatches, global_batch);
  const auto population = static_cast<size_t>(options.population);
  Rng rng(options.seed);
  Search search(evaluate, options);

  // Generation 0: the seeds, mutated copies of them up to half the population, random
  // plans. The seeds are evaluated first so that, among equals, a seed is the one reported.
  std::vector<UnequalPlan> current = seeds;
  const size_t initial = std::max(population, seeds.size());
  for (size_t i = 0; !seeds.empty() && current.size() < std::max(seeds.size(), population / 2);
       ++i) {
    UnequalPlan plan = seeds[i % seeds.size()];
    mutate_some(rng, plan, cap);
    current.push_back(std::move(plan));
  }
  while (current.size() < initial) {
    current.push_back(dgap::random_plan(rng, stages, global_batch, cap));
  }
  std::vector<double> fitness(current.size());
  {
    const std::span<UnequalPlan> all(current);
    const std::span<double> seconds(fitness);
    search.evaluate(all.first(seeds.size()), seconds.first(seeds.size()));
    search.evaluate(all.subspan(seeds.size()), seconds.subspan(seeds.size()));
    search.consider(all, seconds);
  }

  DgapResult result;
  result.history.push_back(search.best_seconds());
  if (options.progress) options.progress(0, search.best_seconds());

  // The next generation is built in place: plans known without evaluation (elites, children
  // equal to a parent) fill it from the front, new ones from the back. Slots are reused
  // from generation to generation, so their vectors keep their storage.
  std::vector<UnequalPlan> next(population);
  std::vector<double> next_fitness(population);
  std::vector<size_t> order;
  HashSet present(population);
  for (int32_t generation = 1; generation <= options.generations; ++generation) {
    order.resize(current.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return fitness[x] < fitness[y]; });
    auto tournament = [&]() -> size_t {
      size_t winner =
          static_cast<size_t>(dgap::uniform_int(rng, 0, static_cast<int64_t>(current.size()) - 1));
      for (int32_t t = 1; t < options.tournament; ++t) {
        const auto other = static_cast<size_t>(
            dgap::uniform_int(rng, 0, static_cast<int64_t>(current.size()) - 1));
        if (fitness[other] < fitness[winner] ||
            (fitness[other] == fitness[winner] && other < winner)) {
          winner = other;
        }
      }
      return winner;
    };

    next.resize(population);
    next_fitness.resize(population);
    present.clear();
    size_t known = 0, fresh = population;  // [0, known) known, [fresh, population) new
    const size_t elite = std::min(static_cast<size_t>(options.elite), current.size());
    for (; known < elite; ++known) {
      next[known] = current[order[known]];
      next_fitness[known] = fitness[order[known]];
      present.insert(plan_hash(next[known]));
    }
    while (known < fresh) {
      // A child already in the next generation is drawn again (up to kRetries times), to
      // keep the population diverse.
      for (int attempt = 0;; ++attempt) {
        const size_t first = tournament();
        size_t second = first;
        UnequalPlan& child = next[fresh - 1];
        if (dgap::chance(rng, options.crossover_rate)) {
          second = tournament();
          if (dgap::chance(rng, 0.5)) {
            dgap::gene_crossover(rng, current[first], current[second], child);
          } else {
            dgap::cut_point_crossover(rng, current[first], current[second], cap, child);
          }
        } else {
          child = current[first];
        }
        if (dgap::chance(rng, options.mutation_rate)) mutate_some(rng, child, cap);
        if (!present.insert(plan_hash(child)) && attempt < kRetries) continue;
        if (child == current[first] || child == current[second]) {
          // Equal to a parent: it keeps the parent's time.
          next_fitness[known] = child == current[first] ? fitness[first] : fitness[second];
          std::swap(next[known], child);
          ++known;
        } else {
          --fresh;
        }
        break;
      }
    }
    const std::span<UnequalPlan> added = std::span<UnequalPlan>(next).subspan(fresh);
    const std::span<double> added_seconds = std::span<double>(next_fitness).subspan(fresh);
    search.evaluate(added, added_seconds);
    search.consider(added, added_seconds);
    std::swap(current, next);
    std::swap(fitness, next_fitness);
    result.history.push_back(search.best_seconds());
    if (options.progress) options.progress(generation, search.best_seconds());
  }

  result.best = search.best();
  result.best_seconds = search.best_seconds();
  result.evaluations = search.evaluations();
  return result;
}

}  // namespace pipetwin
