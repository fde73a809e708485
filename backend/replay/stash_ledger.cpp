#include "backend/replay/stash_ledger.h"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

namespace pipetwin {
namespace {

using StashKey = std::tuple<int32_t, int32_t, int32_t>;  // stage, iteration, microbatch

StashKey key_of(const ReplayOp& op) { return {op.stage, op.iteration, op.microbatch}; }

bool is_forward_stash(const ReplayOp& op) {
  return (op.kind == ReplayKind::kGemm || op.kind == ReplayKind::kSpin) && op.allocate_bytes > 0;
}

// One forward's stash: its kept block and, when offloaded, the block that travels.
struct Stash {
  int64_t total = 0;
  StashBlock kept, travelling;  // bytes 0: none
};

}  // namespace

StashLedger stash_ledger(const ReplayPlan& plan) {
  StashLedger ledger;
  ledger.actions.resize(plan.ops.size());
  std::map<StashKey, int64_t> offloaded;  // forward -> bytes its OFFLOAD takes
  for (const ReplayOp& op : plan.ops) {
    if (op.kind == ReplayKind::kToHost && !op.weights) offloaded[key_of(op)] += op.bytes;
  }
  // A reloaded weight version is held until the last op that waits for its copy (the
  // BWDs that use it, on the compute stream) ends.
  const std::vector<size_t> order = host_enqueue_order(plan);
  std::map<int32_t, StashBlock> weight_blocks;  // reload instruction -> its block
  std::map<int32_t, size_t> last_user;          // reload instruction -> plan index
  for (size_t k : order) {
    for (int32_t waited : plan.ops[k].wait_for) last_user[waited] = k;
  }
  std::map<StashKey, Stash> stashes;
  std::map<int32_t, std::deque<StashKey>> oldest_first;  // per stage
  auto new_block = [&](int64_t bytes) { return StashBlock{ledger.blocks++, bytes}; };
  // The enqueue order puts every op after what it waits for: a FWD before its OFFLOAD,
  // the OFFLOAD before its RELOAD, the RELOAD before the BWD that frees it.
  for (size_t k : order) {
    const ReplayOp& op = plan.ops[k];
    StashActions& act = ledger.actions[k];
    for (int32_t waited : op.wait_for) {
      const auto block = weight_blocks.find(waited);
      if (block != weight_blocks.end() && last_user.at(waited) == k) {
        act.release.push_back(block->second);
        weight_blocks.erase(block);
      }
    }
    if (op.weights) {  // copied out of the live weights: nothing to free
      if (op.kind == ReplayKind::kToDevice && op.bytes > 0) {
        weight_blocks[op.instruction] = new_block(op.bytes);
        act.allocate.push_back(weight_blocks[op.instruction]);
      }
    } else if (is_forward_stash(op)) {
      Stash& stash = stashes[key_of(op)];
      stash.total = op.allocate_bytes;
      const auto it = offloaded.find(key_of(op));
      const int64_t away = it == offloaded.end() ? 0 : std::min(it->second, op.allocate_bytes);
      if (op.allocate_bytes - away > 0) {
        stash.kept = new_block(op.allocate_bytes - away);
        act.allocate.push_back(stash.kept);
      }
      if (away > 0) {
        stash.travelling = new_block(away);
        act.allocate.push_back(stash.travelling);
      }
      oldest_first[op.stage].push_back(key_of(op));
    } else if (op.kind == ReplayKind::kToHost) {
      Stash& stash = stashes[key_of(op)];
      if (stash.travelling.bytes > 0) act.release.push_back(stash.travelling);
      stash.travelling = {};
    } else if (op.kind == ReplayKind::kToDevice) {
      Stash& stash = stashes[key_of(op)];
      if (op.bytes > 0) {
        stash.travelling = new_block(op.bytes);
        act.allocate.push_back(stash.travelling);
      }
    }
    auto& queue = oldest_first[op.stage];
    for (int64_t to_free = op.free_bytes; to_free > 0 && !queue.empty(); queue.pop_front()) {
      Stash& stash = stashes[queue.front()];
      for (const StashBlock& block : {stash.kept, stash.travelling}) {
        if (block.bytes > 0) act.release.push_back(block);
      }
      to_free -= stash.total;
      stashes.erase(queue.front());
    }
  }
  return ledger;
}

int64_t stash_peak(const StashLedger& ledger, const std::vector<double>& start_s,
                   const std::vector<double>& end_s) {
  std::vector<std::pair<double, int64_t>> changes;  // (time, bytes): releases sort first
  for (size_t k = 0; k < ledger.actions.size(); ++k) {
    for (const StashBlock& b : ledger.actions[k].allocate) changes.push_back({start_s[k], b.bytes});
    for (const StashBlock& b : ledger.actions[k].release) changes.push_back({end_s[k], -b.bytes});
  }
  std::sort(changes.begin(), changes.end());
  int64_t held = 0, peak = 0;
  for (const auto& [time, bytes] : changes) {
    held += bytes;
    peak = std::max(peak, held);
  }
  return peak;
}

}  // namespace pipetwin
