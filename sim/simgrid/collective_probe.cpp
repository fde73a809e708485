#include "sim/simgrid/collective_probe.h"

#include <algorithm>
#include <cstring>
#include <simgrid/s4u.hpp>

#include "sim/cluster/topology.h"
#include "sim/simgrid/collective_member.h"
#include "sim/simgrid/engine_arguments.h"
#include "sim/simgrid/run_in_child.h"
#include "sim/simgrid/s4u_platform.h"

namespace pipetwin {

namespace sg4 = simgrid::s4u;

double simulate_collective(const ClusterSpec& cluster, const std::vector<int32_t>& group,
                           const CollectiveSchedule& schedule, const SimgridSettings& settings) {
  const std::string data = run_in_child([&] {
    start_engine(settings, static_cast<int64_t>(group.size()));
    std::vector<std::pair<int32_t, int32_t>> pairs;
    append_flow_pairs(schedule, pairs);
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    const Topology topology =
        settings.exact ? Topology::dedicated(cluster, pairs) : Topology::shared(cluster);
    const std::vector<sg4::Host*> hosts = build_s4u_platform(topology, cluster, pairs);
    sg4::BarrierPtr barrier = sg4::Barrier::create(group.size());
    CollectiveInboxes inboxes("member", hosts.size());
    double end = 0;
    for (int32_t device : group) {
      sg4::Actor::create("member" + std::to_string(device), hosts[device], [&, device] {
        run_collective_member(schedule, device, hosts, inboxes, *barrier,
                              settings.collective_steps);
        end = std::max(end, sg4::Engine::get_clock());
      });
    }
    sg4::Engine::get_instance()->run();
    std::string out(sizeof(double), '\0');
    std::memcpy(out.data(), &end, sizeof(double));
    return out;
  });
  double seconds = 0;
  std::memcpy(&seconds, data.data(), std::min(data.size(), sizeof(double)));
  return seconds;
}

}  // namespace pipetwin
