#include "sim/simgrid/s4u_platform.h"

#include <algorithm>

#include "sim/spec/errors.h"

namespace pipetwin {

namespace sg4 = simgrid::s4u;

std::vector<sg4::Host*> load_s4u_platform(sg4::Engine& engine, const ClusterSpec& cluster) {
  try {
    engine.load_platform(cluster.simgrid_platform);
  } catch (const std::exception& e) {
    throw InputError(cluster.simgrid_platform + ": not a SimGrid platform: " + e.what());
  }
  std::vector<sg4::Host*> all = engine.get_all_hosts();
  std::sort(all.begin(), all.end(),
            [](const sg4::Host* a, const sg4::Host* b) { return a->get_name() < b->get_name(); });
  std::vector<sg4::Host*> hosts;
  for (size_t d = 0; d < cluster.devices.size(); ++d) {
    if (cluster.platform_hosts.empty()) {
      if (d >= all.size()) {
        throw InputError(cluster.simgrid_platform + ": has " + std::to_string(all.size()) +
                         " hosts for " + std::to_string(cluster.devices.size()) + " devices");
      }
      hosts.push_back(all[d]);
      continue;
    }
    sg4::Host* host = sg4::Host::by_name_or_null(cluster.platform_hosts[d]);
    if (host == nullptr) {
      throw InputError("cluster.platform_hosts[" + std::to_string(d) + "]: no host '" +
                       cluster.platform_hosts[d] + "' in " + cluster.simgrid_platform);
    }
    hosts.push_back(host);
  }
  return hosts;
}

std::vector<sg4::Host*> build_s4u_platform(const Topology& topology, const ClusterSpec& cluster,
                                           const std::vector<std::pair<int32_t, int32_t>>& routes) {
  sg4::NetZone* zone = sg4::create_full_zone("cluster");
  std::vector<sg4::Host*> hosts;
  for (const DeviceSpec& device : cluster.devices) {
    hosts.push_back(zone->create_host(device.name, device.peak_flops)->seal());
  }
  for (int32_t n = 0; n < cluster.nodes; ++n) {
    hosts.push_back(zone->create_host("host" + std::to_string(n), 1e9)->seal());
  }
  // Dedicated links may run between the devices' data-parallel twins (Topology::dedicated).
  const bool twins = std::any_of(routes.begin(), routes.end(), [&](const auto& route) {
    return std::max(route.first, route.second) >= static_cast<int32_t>(hosts.size());
  });
  for (size_t d = 0; twins && d < cluster.devices.size(); ++d) {
    const DeviceSpec& device = cluster.devices[d];
    hosts.push_back(zone->create_host(device.name + ".data-parallel", device.peak_flops)->seal());
  }

  std::vector<const sg4::Link*> links;
  for (const TopologyLink& spec : topology.links()) {
    sg4::Link* link = spec.split_duplex ? static_cast<sg4::Link*>(zone->create_split_duplex_link(
                                              spec.name, spec.bandwidth_bytes_per_s))
                                        : zone->create_link(spec.name, spec.bandwidth_bytes_per_s);
    link->set_latency(spec.latency_s)->seal();
    links.push_back(link);
  }

  for (const auto& [from, to] : routes) {
    std::vector<sg4::LinkInRoute> hops;
    for (const LinkHop& hop : topology.route(from, to)) {
      const TopologyLink& spec = topology.links()[hop.link];
      if (spec.split_duplex) {
        hops.emplace_back(links[hop.link], hop.up ? sg4::LinkInRoute::Direction::UP
                                                  : sg4::LinkInRoute::Direction::DOWN);
      } else {
        hops.emplace_back(links[hop.link]);
      }
    }
    zone->add_route(hosts[from]->get_netpoint(), hosts[to]->get_netpoint(), nullptr, nullptr, hops,
                    /*symmetrical=*/false);
  }
  zone->seal();
  return hosts;
}

}  // namespace pipetwin
