#include "sim/simgrid/flow_probe.h"

#include <algorithm>
#include <cstring>
#include <simgrid/s4u.hpp>

#include "sim/simgrid/engine_arguments.h"
#include "sim/simgrid/run_in_child.h"
#include "sim/simgrid/s4u_platform.h"
#include "sim/spec/errors.h"

namespace pipetwin {

namespace sg4 = simgrid::s4u;

std::vector<double> simulate_flows(const Topology& topology, const ClusterSpec& cluster,
                                   const std::vector<Flow>& flows,
                                   const SimgridSettings& settings) {
  const std::string data = run_in_child([&] {
    sg4::Engine& engine = start_engine(settings);
    std::vector<std::pair<int32_t, int32_t>> routes;
    for (const Flow& f : flows) routes.emplace_back(f.from, f.to);
    std::sort(routes.begin(), routes.end());
    routes.erase(std::unique(routes.begin(), routes.end()), routes.end());
    const auto hosts = build_s4u_platform(topology, cluster, routes);
    std::vector<double> finish(flows.size(), -1);
    static char token;
    for (size_t k = 0; k < flows.size(); ++k) {
      sg4::Mailbox* box = sg4::Mailbox::by_name("flow" + std::to_string(k));
      const Flow flow = flows[k];
      sg4::Actor::create("send" + std::to_string(k), hosts[flow.from], [box, flow] {
        sg4::this_actor::sleep_until(flow.start_s);
        box->put(&token, static_cast<uint64_t>(flow.bytes));
      });
      sg4::Actor::create("recv" + std::to_string(k), hosts[flow.to], [box, &finish, k] {
        char* received = nullptr;
        sg4::CommPtr comm = box->get_async<char>(&received);
        comm->wait();
        finish[k] = comm->get_finish_time();
      });
    }
    engine.run();
    std::string out(finish.size() * sizeof(double), '\0');
    std::memcpy(out.data(), finish.data(), out.size());
    return out;
  });
  std::vector<double> finish(flows.size());
  std::memcpy(finish.data(), data.data(), std::min(data.size(), finish.size() * sizeof(double)));
  return finish;
}

}  // namespace pipetwin
