#include "sim/exec/link_usage.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "sim/exec/program_collectives.h"

namespace pipetwin {
namespace {

struct FlowOnLink {
  double start;
  double end;
  double bytes;
};

}  // namespace

std::vector<LinkUsage> link_usage(const Program& program, const ClusterSpec& cluster,
                                  const Topology& topology, const ExecutionTimes& times) {
  // Index 2 * link + 1 is the up direction (or the whole of a shared link), 2 * link
  // the down direction.
  std::vector<std::vector<FlowOnLink>> flows(2 * topology.links().size());
  auto add = [&](int32_t from, int32_t to, double start, double end, double bytes) {
    for (const LinkHop& hop : topology.route(from, to)) {
      const bool up = hop.up || !topology.links()[hop.link].split_duplex;
      flows[2 * hop.link + (up ? 1 : 0)].push_back({start, end, bytes});
    }
  };
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& instr = program.instructions[i];
    if (is_send(instr.op)) {
      add(instr.device, instr.peer_device, times.start_s[i], times.end_s[i],
          static_cast<double>(instr.bytes));
    } else if (is_copy(instr.op)) {
      const int32_t host = topology.host_of(instr.device);
      const bool out = copies_to_host(instr.op);
      add(out ? instr.device : host, out ? host : instr.device, times.start_s[i], times.end_s[i],
          static_cast<double>(instr.bytes));
    }
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    // Each flow of the collective, with all of its steps' bytes, over the span of the
    // member that sends it.
    // The member on each device, sorted by device: a lookup per flow instead of a scan of
    // the members (100,000 replicas made that scan 80% of a run).
    std::vector<std::pair<int32_t, int32_t>> member_on;
    for (int32_t m : program.members_of_group(g)) {
      member_on.emplace_back(program.instructions[m].device, m);
    }
    std::sort(member_on.begin(), member_on.end());
    // Dedicated links run a data-parallel group's flows between the devices' twins, as the
    // SimGrid engine does (Topology::dedicated).
    const bool twins =
        topology.dedicated() && program.instructions[member_on.front().second].data_parallel;
    const auto endpoint = [&](int32_t device) {
      return twins ? Topology::data_parallel_endpoint(cluster, device) : device;
    };
    for (const FlowPhase& phase : group_flows(program, cluster, g)) {
      for (const PointFlow& flow : phase.flows) {
        const auto at = std::lower_bound(member_on.begin(), member_on.end(),
                                         std::make_pair(flow.from, INT32_MIN));
        const int32_t i =
            at != member_on.end() && at->first == flow.from ? at->second : member_on.front().second;
        add(endpoint(flow.from), endpoint(flow.to), times.start_s[i], times.end_s[i],
            static_cast<double>(phase.repeats) * static_cast<double>(flow.bytes));
      }
    }
  }

  std::vector<LinkUsage> usage;
  for (int32_t index = 0; index < static_cast<int32_t>(flows.size()); ++index) {
    if (flows[index].empty()) continue;
    const int32_t l = index / 2;
    const TopologyLink& spec = topology.links()[l];
    LinkUsage u;
    u.link = l;
    u.up = index % 2 == 1;
    u.name = spec.name + (spec.split_duplex ? (u.up ? "/up" : "/down") : "");
    u.bandwidth_bytes_per_s = spec.bandwidth_bytes_per_s;
    struct Event {
      double time;
      double rate;  // + at start, - at end
      int32_t active;
    };
    std::vector<Event> events;
    for (const FlowOnLink& f : flows[index]) {
      u.bytes += f.bytes;
      const double rate = f.end > f.start ? f.bytes / (f.end - f.start) : 0;
      events.push_back({f.start, rate, +1});
      events.push_back({f.end, -rate, -1});
    }
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      return a.time < b.time || (a.time == b.time && a.active < b.active);
    });
    const double bandwidth = spec.bandwidth_bytes_per_s;
    double rate = 0;
    int32_t active = 0;
    double busy_since = 0;
    for (const Event& e : events) {
      if (active == 0 && e.active > 0) busy_since = e.time;
      active += e.active;
      rate += e.rate;
      if (active == 0) {
        u.busy_s += e.time - busy_since;
        rate = 0;  // no drift from summing and subtracting rates
      }
      const double value = bandwidth > 0 ? rate / bandwidth : 0;
      if (!u.utilization.empty() && u.utilization.back().first == e.time) {
        u.utilization.back().second = value;
      } else {
        u.utilization.emplace_back(e.time, value);
      }
    }
    usage.push_back(std::move(u));
  }
  return usage;
}

}  // namespace pipetwin
