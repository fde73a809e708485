#include "sim/planner/level_dp.h"

#include <algorithm>

#include "sim/network/point_to_point.h"
#include "sim/network/two_level_allreduce.h"
#include "sim/planner/plan_cost.h"

namespace pipetwin {

LevelDp::LevelDp(const SpanTable& table, const LevelOptions& options)
    : table_(table), options_(options) {
  const int classes = static_cast<int>(options_.class_counts.size());
  for (int c = 0; c < classes; ++c) {
    stride_.push_back(vectors_);
    vectors_ *= options_.class_counts[c] + 1;
  }
  total_.resize(vectors_);
  for (int v = 0; v < vectors_; ++v) {
    for (int n : counts(v)) total_[v] += n;
  }
  rests_.resize(vectors_);
  for (int m = 1; m < vectors_; ++m) {
    if (options_.straight && total_[m] != 1) continue;
    stage_vectors_.push_back(m);
    const std::vector<int> used = counts(m);
    for (int rest = 0; rest < vectors_; ++rest) {
      const std::vector<int> left = counts(rest);
      bool fits = true;
      for (int c = 0; c < classes; ++c)
        fits = fits && used[c] + left[c] <= options_.class_counts[c];
      if (fits) rests_[m].push_back(rest);
    }
  }
  best_.assign(static_cast<size_t>(table_.size()) * vectors_, kInf);
  next_.assign(best_.size(), -1);
  used_.assign(best_.size(), -1);
}

std::vector<int> LevelDp::counts(int vector) const {
  std::vector<int> result;
  for (size_t c = 0; c < stride_.size(); ++c) {
    result.push_back(vector / stride_[c] % (options_.class_counts[c] + 1));
  }
  return result;
}

double LevelDp::best(int i, int* vector) const {
  double result = kInf;
  for (int v = 0; v < vectors_; ++v) {
    if (value(i, v) < result) {
      result = value(i, v);
      if (vector) *vector = v;
    }
  }
  return result;
}

void LevelDp::solve(int end) {
  end_ = end;
  const int classes = static_cast<int>(options_.class_counts.size());
  const int copies = options_.node_copies;
  const int m_count = static_cast<int>(stage_vectors_.size());
  // Per stage vector m: replicas, the memory of its smallest device, its classes.
  std::vector<double> memory(m_count, kInf);
  std::vector<std::vector<int>> present(m_count);
  for (int a = 0; a < m_count; ++a) {
    const std::vector<int> used = counts(stage_vectors_[a]);
    for (int c = 0; c < classes; ++c) {
      if (used[c] == 0) continue;
      memory[a] = std::min(memory[a], options_.class_memory[c]);
      present[a].push_back(options_.problem_class[c]);
    }
  }
  // Microbatches in flight on a stage of vector m followed by each of its rest vectors.
  std::vector<std::vector<int>> in_flight(m_count);
  for (int a = 0; a < m_count; ++a) {
    const int m = stage_vectors_[a];
    for (int rest : rests_[m]) {
      in_flight[a].push_back(
          in_flight_microbatches((total_[m] + total_[rest]) * copies + options_.devices_after,
                                 total_[m] * copies, options_.microbatches));
    }
  }
  std::fill(best_.begin() + static_cast<long>(index(end, 0)),
            best_.begin() + static_cast<long>(index(end, 0) + vectors_), kInf);
  best_[index(end, 0)] = 0;

  const std::vector<int>& starts = table_.states->subsets[end];
  for (auto it = starts.rbegin(); it != starts.rend(); ++it) {
    const int i = *it;
    std::fill(best_.begin() + static_cast<long>(index(i, 0)),
              best_.begin() + static_cast<long>(index(i, 0) + vectors_), kInf);
    const auto consider = [&](int k) {
      const int pair = table_.pair(i, k);
      const bool cut = k != end || options_.cut_after_end;
      const LinkSpec& cut_link = k != end ? options_.link : options_.inter;
      const double cut_bytes = cut ? table_.cut_bytes[k] : 0;
      for (int a = 0; a < m_count; ++a) {
        const int m = stage_vectors_[a];
        const int replicas = total_[m] * copies;
        double seconds = 0;
        for (int c : present[a]) {
          seconds =
              std::max(seconds, table_.seconds[static_cast<size_t>(pair) * table_.classes + c]);
        }
        double stage = seconds / replicas +
                       two_level_allreduce_seconds(table_.gradients[pair], total_[m], copies,
                                                   options_.link, options_.inter) /
                           options_.microbatches;
        if (cut) stage = std::max(stage, striped_transfer_seconds(cut_bytes, replicas, cut_link));
        const std::vector<int>& rests = rests_[m];
        const std::vector<int>& flights = in_flight[a];
        for (size_t r = 0; r < rests.size(); ++r) {
          const int rest = rests[r];
          const double after = best_[index(k, rest)];
          if (after == kInf) continue;
          if (table_.resident[pair] + table_.stash[pair] * flights[r] > memory[a]) continue;
          const double v = std::max(stage, after);
          const size_t at = index(i, m + rest);
          if (v < best_[at]) {
            best_[at] = v;
            next_[at] = k;
            used_[at] = m;
          }
        }
      }
    };
    // States k with before(i) < before(k) < before(end), then end itself.
    const auto& above = table_.supersets[i].words();
    const auto& below = table_.subsets[end].words();
    for (size_t w = 0; w < above.size(); ++w) {
      uint64_t bits = above[w] & below[w];
      while (bits) {
        consider(static_cast<int>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
        bits &= bits - 1;
      }
    }
    consider(end);
  }
}

}  // namespace pipetwin
