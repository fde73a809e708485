#include "backend/run/machine_share.h"

#include <set>

#include "backend/common/core_pinning.h"
#include "report/text_units.h"

namespace pipetwin {
namespace {

// A rank's LibTorch intra-op threads: the rank executor (and the reference and the
// profiler) call torch::set_num_threads(1), since the ranks share the machine's cores.
constexpr int kTorchThreadsPerRank = 1;

}  // namespace

MachineShare machine_share(const std::string& backend, const RankEnvironment& env,
                           const Timeline& timeline, bool pinned) {
  MachineShare machine;
  machine.ranks = env.world_size;
  machine.cores = cores_before_pinning();
  machine.pinned = pinned;
  if (backend == "torch") machine.torch_threads_per_rank = kTorchThreadsPerRank;
  std::set<std::string> used;
  for (const Span& s : timeline.spans) used.insert(s.lane);
  for (const char* lane : {"compute", "send", "recv", "copy", "collective", "data-parallel"}) {
    if (used.erase(lane)) machine.lanes.push_back(lane);
  }
  machine.lanes.insert(machine.lanes.end(), used.begin(), used.end());
  return machine;
}

nlohmann::json machine_json(const MachineShare& m) {
  return {{"ranks", m.ranks},
          {"cores", m.cores},
          {"torch_threads_per_rank", m.torch_threads_per_rank
                                         ? nlohmann::json(*m.torch_threads_per_rank)
                                         : nlohmann::json(nullptr)},
          {"lanes", m.lanes},
          {"pinned", m.pinned}};
}

void print_machine(std::ostream& out, const MachineShare& m) {
  std::string lanes;
  for (const std::string& lane : m.lanes) lanes += (lanes.empty() ? "" : ", ") + lane;
  out << pad("machine", 16) << m.ranks << " rank" << (m.ranks == 1 ? "" : "s") << " on " << m.cores
      << " core" << (m.cores == 1 ? "" : "s") << (m.pinned ? ", each pinned to one" : "") << "; ";
  if (m.torch_threads_per_rank) {
    out << *m.torch_threads_per_rank << " LibTorch thread"
        << (*m.torch_threads_per_rank == 1 ? "" : "s") << " per rank, one host thread per lane ("
        << lanes << ")\n";
  } else {
    out << "one host thread per lane (" << lanes << "), each enqueuing onto its CUDA stream\n";
  }
}

}  // namespace pipetwin
