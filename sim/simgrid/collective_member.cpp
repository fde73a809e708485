#include "sim/simgrid/collective_member.h"

#include <algorithm>

namespace pipetwin {
namespace {

namespace sg4 = simgrid::s4u;

double route_latency(sg4::Host* from, sg4::Host* to) {
  std::vector<sg4::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  return latency;
}

// Starts the member's flows of one phase (`out`), `bytes_factor` times their bytes each,
// posts a receive for each of the `in` flows that come to it, and waits for all of them.
// Returns the sends, in the order of `out`.
std::vector<sg4::CommPtr> send_and_wait(const std::vector<const PointFlow*>& out, size_t in,
                                        int32_t device, CollectiveInboxes& inboxes,
                                        uint64_t bytes_factor) {
  static char payload;  // flows carry no data, only their simulated bytes
  std::vector<sg4::CommPtr> sends;
  for (const PointFlow* flow : out) {
    sends.push_back(inboxes.at(flow->to)->put_async(
        &payload, static_cast<uint64_t>(flow->bytes) * bytes_factor));
  }
  std::vector<char*> received(in);
  std::vector<sg4::CommPtr> receives;
  for (char*& slot : received) receives.push_back(inboxes.at(device)->get_async(&slot));
  for (const sg4::CommPtr& comm : sends) comm->wait();
  for (const sg4::CommPtr& comm : receives) comm->wait();
  return sends;
}

}  // namespace

sg4::Mailbox* CollectiveInboxes::at(int32_t endpoint) {
  sg4::Mailbox*& box = boxes_[endpoint];
  if (box == nullptr) box = sg4::Mailbox::by_name(prefix_ + std::to_string(endpoint));
  return box;
}

void run_collective_member(const CollectiveSchedule& schedule, int32_t device,
                           const std::vector<sg4::Host*>& hosts, CollectiveInboxes& inboxes,
                           sg4::Barrier& barrier, bool step_by_step) {
  std::vector<const PointFlow*> own;
  for (const FlowPhase& phase : schedule) {
    own.clear();
    size_t incoming = 0;
    for (const PointFlow& flow : phase.flows) {
      if (flow.from == device) own.push_back(&flow);
      incoming += flow.to == device;
    }
    if (step_by_step) {
      for (int32_t step = 0; step < phase.repeats; ++step) {
        send_and_wait(own, incoming, device, inboxes, 1);
        barrier.wait();
        if (phase.overhead_s > 0) sg4::this_actor::sleep_for(phase.overhead_s);
      }
      continue;
    }
    const std::vector<sg4::CommPtr> comms =
        send_and_wait(own, incoming, device, inboxes, static_cast<uint64_t>(phase.repeats));
    // Each flow is due its other steps' latencies after it ended; the last one to end
    // (ended now) has waited nothing of them yet.
    const double now = sg4::Engine::get_clock();
    double rest = 0;
    for (size_t k = 0; k < own.size(); ++k) {
      const double latencies =
          (phase.repeats - 1) * route_latency(hosts[own[k]->from], hosts[own[k]->to]);
      rest = std::max(rest, latencies - (now - comms[k]->get_finish_time()));
    }
    if (rest > 0) sg4::this_actor::sleep_for(rest);
    barrier.wait();
    if (phase.overhead_s > 0) sg4::this_actor::sleep_for(phase.repeats * phase.overhead_s);
  }
}

void append_flow_pairs(const CollectiveSchedule& schedule,
                       std::vector<std::pair<int32_t, int32_t>>& pairs) {
  for (const FlowPhase& phase : schedule) {
    for (const PointFlow& flow : phase.flows) pairs.emplace_back(flow.from, flow.to);
  }
}

}  // namespace pipetwin
