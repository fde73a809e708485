// The cut states of PipeDream's planner. A state is a downward-closed set of units (every
// unit before a cut), named as PipeDream does by its antichain (the set's maximal units)
// and its augmented antichain (the units whose output crosses the cut). A stage is the
// units between two states i and j with before(i) a strict subset of before(j); on a
// chain the states are the L+1 cut positions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/planner/layer_graph.h"

namespace pipetwin {

// A set of units (or of states), one bit each.
class BitSet {
 public:
  BitSet() = default;
  explicit BitSet(size_t bits) : words_((bits + 63) / 64, 0) {}
  void set(size_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  bool test(size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  bool subset_of(const BitSet& other) const;
  size_t count() const;
  const std::vector<uint64_t>& words() const { return words_; }
  bool operator==(const BitSet& other) const { return words_ == other.words_; }
  bool operator<(const BitSet& other) const { return words_ < other.words_; }
  // Calls f(i) for every set bit of this & ~minus, in increasing order.
  template <typename F>
  void for_each_minus(const BitSet& minus, F&& f) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      uint64_t bits = words_[w] & ~minus.words_[w];
      while (bits) {
        f(w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
        bits &= bits - 1;
      }
    }
  }

 private:
  std::vector<uint64_t> words_;
};

struct AntichainState {
  BitSet before;               // the units before the cut: PipeDream's "predecessors"
  int size = 0;                // units in `before`
  std::vector<int> antichain;  // maximal units of `before`
  std::vector<int> augmented;  // units of `before` read by a unit after the cut
  std::vector<int> next;       // next-antichain relation: states with one more unit
};

struct AntichainStates {
  // A topological order of the antichain DAG: by size, then by set. states[0] is the
  // empty set (before the first stage), states.back() the whole model.
  std::vector<AntichainState> states;
  // subsets[j]: the states i < j with before(i) a strict subset of before(j), increasing;
  // every (i, j) there is a possible stage.
  std::vector<std::vector<int>> subsets;
};

// Enumerates every state reachable from the empty set by adding one unit whose producers
// are all inside (PipeDream's next antichains, which may add a unit's missing producers
// too, reach the same sets through intermediate states). `chain_only` gives just the
// prefixes of the unit order whose layers are a prefix of the model's layer order (what
// schedule.partition can express); on a graph without glued layers
// (layer_graph_of(model, false)) that is every cut of the layer order. Throws InputError
// beyond `max_states`.
AntichainStates antichain_states(const LayerGraph& graph, bool chain_only = false,
                                 size_t max_states = 5000);

}  // namespace pipetwin
