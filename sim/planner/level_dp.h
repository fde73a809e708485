// PipeDream's DP on one bandwidth level, over antichain states and device counts:
//
//   B[i][r] = min over states k after i and replica vectors m <= r, m != 0 of
//             max( stage(i, k) on m: seconds / replicas + all-reduce / M,
//                  cut at k (unless k is the span's end),
//                  B[k][r - m] )          with B[end][0] = 0
//
// i.e. the best bottleneck of the layers between state i and `end` on exactly r devices.
// It runs backwards (suffixes) so that a stage knows how many devices follow it, which is
// what its 1F1B stash needs. r and m are vectors of device counts per class: with one
// class this is PipeDream's A[i][j][m]; with several (APapo's heterogeneous devices) it
// matches stages to devices exactly, fast devices and big memories included.
#pragma once

#include <limits>
#include <vector>

#include "sim/planner/span_table.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

struct LevelOptions {
  std::vector<int> class_counts;     // devices of each class available on this level
  std::vector<int> problem_class;    // class of the span table each of them is
  std::vector<double> class_memory;  // bytes per device
  int devices_after = 0;  // devices of later nodes (their stages' microbatches stay in flight)
  int node_copies = 1;    // the span runs on this many nodes, each a replica of it
  LinkSpec link;          // cuts and the all-reduce inside a node
  LinkSpec inter;         // the all-reduce across node copies
  // The span's last stage also sends across nodes to the next span (over `inter`, split
  // among its replicas as plan_cost() charges it): the hierarchy's spans before the last.
  bool cut_after_end = false;
  bool straight = false;  // one device per stage
  int microbatches = 1;
};

class LevelDp {
 public:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  LevelDp(const SpanTable& table, const LevelOptions& options);

  // Solves every start state i before `end`.
  void solve(int end);

  int vectors() const { return vectors_; }
  // Best bottleneck from state i to the end on at most the level's devices, and the
  // device vector reaching it.
  double best(int i, int* vector = nullptr) const;
  double value(int i, int vector) const { return best_[index(i, vector)]; }
  // The first stage of the best plan from (i, vector): its end state and devices.
  int next_state(int i, int vector) const { return next_[index(i, vector)]; }
  int stage_vector(int i, int vector) const { return used_[index(i, vector)]; }
  int rest_vector(int vector, int used) const { return vector - used; }
  // Devices of each class in a vector.
  std::vector<int> counts(int vector) const;
  int total(int vector) const { return total_[vector]; }

 private:
  size_t index(int state, int vector) const {
    return static_cast<size_t>(state) * vectors_ + vector;
  }

  const SpanTable& table_;
  LevelOptions options_;
  int vectors_ = 1;
  std::vector<int> stride_;
  std::vector<int> total_;               // devices in each vector
  std::vector<std::vector<int>> rests_;  // [m]: vectors that m can be added to
  std::vector<int> stage_vectors_;       // m allowed for one stage
  std::vector<double> best_;
  std::vector<int> next_;
  std::vector<int> used_;
  int end_ = -1;
};

}  // namespace pipetwin
