// Compressed sparse rows, the layout of a Program's dependency tables: row i's entries
// are targets[begin[i], begin[i + 1]), in the order the edges list them.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace pipetwin {

inline void build_csr(int32_t rows, const std::vector<std::pair<int32_t, int32_t>>& edges,
                      std::vector<int32_t>& begin, std::vector<int32_t>& targets) {
  begin.assign(rows + 1, 0);
  for (const auto& [from, to] : edges) ++begin[from + 1];
  for (int32_t i = 0; i < rows; ++i) begin[i + 1] += begin[i];
  targets.resize(edges.size());
  std::vector<int32_t> fill(begin.begin(), begin.end() - 1);
  for (const auto& [from, to] : edges) targets[fill[from]++] = to;
}

}  // namespace pipetwin
