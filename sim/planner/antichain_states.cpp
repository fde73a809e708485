#include "sim/planner/antichain_states.h"

#include <algorithm>
#include <deque>
#include <map>
#include <string>

#include "sim/spec/errors.h"

namespace pipetwin {

bool BitSet::subset_of(const BitSet& other) const {
  for (size_t w = 0; w < words_.size(); ++w) {
    if (words_[w] & ~other.words_[w]) return false;
  }
  return true;
}

size_t BitSet::count() const {
  size_t n = 0;
  for (uint64_t w : words_) n += static_cast<size_t>(__builtin_popcountll(w));
  return n;
}

namespace {

// The layers of a unit set form a prefix 0..t-1 of the model's layer order.
bool is_layer_prefix(const LayerGraph& graph, const BitSet& before) {
  std::vector<char> in(graph.layers, 0);
  for (size_t u = 0; u < graph.units.size(); ++u) {
    if (!before.test(u)) continue;
    for (int layer : graph.units[u].layers) in[layer] = 1;
  }
  const auto first_out = std::find(in.begin(), in.end(), 0);
  return std::find(first_out, in.end(), 1) == in.end();
}

}  // namespace

AntichainStates antichain_states(const LayerGraph& graph, bool chain_only, size_t max_states) {
  const size_t n = graph.units.size();
  std::vector<BitSet> producers(n, BitSet(n));
  for (size_t u = 0; u < n; ++u) {
    for (int c : graph.units[u].consumers) producers[c].set(u);
  }
  // Breadth-first over the next-antichain relation from the empty set.
  std::map<BitSet, int> id;
  std::vector<BitSet> sets;
  std::vector<std::vector<int>> next;
  std::deque<int> queue;
  const auto visit = [&](const BitSet& set) {
    const auto [it, inserted] = id.emplace(set, static_cast<int>(sets.size()));
    if (inserted) {
      if (sets.size() >= max_states) {
        throw InputError("the layer graph has more than " + std::to_string(max_states) +
                         " antichain states: too wide for the PipeDream planner");
      }
      sets.push_back(set);
      next.emplace_back();
      queue.push_back(it->second);
    }
    return it->second;
  };
  visit(BitSet(n));
  if (chain_only) {
    // Prefixes of the unit order only: the BFS below would enumerate every downward-closed
    // set first, and an unglued graph has too many.
    BitSet prefix(n);
    for (size_t u = 0; u < n; ++u) {
      prefix.set(u);
      const int grown = visit(prefix);
      next[grown - 1].push_back(grown);
    }
    queue.clear();
  }
  while (!queue.empty()) {
    const int s = queue.front();
    queue.pop_front();
    for (size_t u = 0; u < n; ++u) {
      if (sets[s].test(u) || !producers[u].subset_of(sets[s])) continue;
      BitSet grown = sets[s];
      grown.set(u);
      const int t = visit(grown);
      next[s].push_back(t);
    }
  }

  // Topological order of the antichain DAG: every next state has one more unit.
  std::vector<int> order(sets.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::vector<size_t> sizes(sets.size());
  for (size_t i = 0; i < sets.size(); ++i) sizes[i] = sets[i].count();
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return sizes[a] != sizes[b] ? sizes[a] < sizes[b] : sets[a] < sets[b];
  });
  std::vector<int> kept;
  for (int s : order) {
    if (!chain_only || is_layer_prefix(graph, sets[s])) kept.push_back(s);
  }
  std::vector<int> position(sets.size(), -1);
  for (size_t i = 0; i < kept.size(); ++i) position[kept[i]] = static_cast<int>(i);

  AntichainStates result;
  result.states.resize(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    AntichainState& state = result.states[i];
    const BitSet& set = sets[kept[i]];
    state.before = set;
    state.size = static_cast<int>(sizes[kept[i]]);
    for (size_t u = 0; u < n; ++u) {
      if (!set.test(u)) continue;
      bool maximal = true, crosses = false;
      for (int c : graph.units[u].consumers) {
        if (set.test(c))
          maximal = false;
        else
          crosses = true;
      }
      if (maximal) state.antichain.push_back(static_cast<int>(u));
      if (crosses) state.augmented.push_back(static_cast<int>(u));
    }
    for (int t : next[kept[i]]) {
      if (position[t] >= 0) state.next.push_back(position[t]);
    }
    std::sort(state.next.begin(), state.next.end());
  }
  result.subsets.resize(kept.size());
  for (size_t j = 0; j < kept.size(); ++j) {
    for (size_t i = 0; i < j; ++i) {
      if (result.states[i].size < result.states[j].size &&
          result.states[i].before.subset_of(result.states[j].before)) {
        result.subsets[j].push_back(static_cast<int>(i));
      }
    }
  }
  return result;
}

}  // namespace pipetwin
