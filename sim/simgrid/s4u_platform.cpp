#include "sim/simgrid/s4u_platform.h"

namespace pipetwin {

namespace sg4 = simgrid::s4u;

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
