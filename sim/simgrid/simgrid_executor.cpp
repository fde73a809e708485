#include "sim/simgrid/simgrid_executor.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <simgrid/s4u.hpp>

#include "sim/exec/program_collectives.h"
#include "sim/simgrid/collective_member.h"
#include "sim/simgrid/engine_arguments.h"
#include "sim/simgrid/run_in_child.h"
#include "sim/simgrid/s4u_platform.h"
#include "sim/simgrid/simulation_progress.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

namespace sg4 = simgrid::s4u;

// The host endpoint (a platform host after the devices) of a device's node.
int32_t host_endpoint_of(const ClusterSpec& cluster, int32_t device) {
  return static_cast<int32_t>(cluster.devices.size()) + cluster.devices[device].node;
}

// The network model's flows of every collective group (sim/exec/program_collectives.h).
// With dedicated links, a data-parallel group's flows run between the devices' twin
// endpoints: the two collective lanes of a device then never share a link, as the analytic
// engine assumes of every transfer.
std::vector<CollectiveSchedule> all_group_flows(const Program& program, const ClusterSpec& cluster,
                                                bool dedicated) {
  std::vector<CollectiveSchedule> flows;
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    flows.push_back(group_flows(program, cluster, g));
    if (!dedicated || !program.instructions[program.members_of_group(g)[0]].data_parallel) {
      continue;
    }
    for (FlowPhase& phase : flows.back()) {
      for (PointFlow& flow : phase.flows) {
        flow.from = Topology::data_parallel_endpoint(cluster, flow.from);
        flow.to = Topology::data_parallel_endpoint(cluster, flow.to);
      }
    }
  }
  return flows;
}

// Sender -> receiver pairs of every SEND, every offload copy (both ways) and every flow of
// a collective.
std::vector<std::pair<int32_t, int32_t>> communicating_pairs(
    const Program& program, const ClusterSpec& cluster,
    const std::vector<CollectiveSchedule>& collective_flows) {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (const Instruction& instr : program.instructions) {
    if (is_send(instr.op)) pairs.emplace_back(instr.device, instr.peer_device);
    if (copies_to_host(instr.op)) {
      pairs.emplace_back(instr.device, host_endpoint_of(cluster, instr.device));
      pairs.emplace_back(host_endpoint_of(cluster, instr.device), instr.device);
    }
  }
  for (const CollectiveSchedule& flows : collective_flows) append_flow_pairs(flows, pairs);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

// What the lane actors share. SimGrid actors run one at a time, so plain counters are
// safe; a condition variable per lane wakes an actor whose next instruction became ready.
class LaneRunner {
 public:
  LaneRunner(const Program& program, const ClusterSpec& cluster,
             const std::vector<sg4::Host*>& hosts,
             const std::vector<CollectiveSchedule>& collective_flows, bool collective_steps,
             bool dedicated)
      : p_(program),
        cluster_(cluster),
        hosts_(hosts),
        collective_flows_(collective_flows),
        collective_steps_(collective_steps),
        dedicated_(dedicated),
        collective_inboxes_("collective", hosts.size()),
        data_parallel_inboxes_("data-parallel", hosts.size()),
        remaining_(program.size()),
        ready_(program.size(), 0.0),
        posted_(program.size(), 0),
        transferred_(program.size(), 0) {
    for (int32_t i = 0; i < p_.size(); ++i) remaining_[i] = p_.dep_begin[i + 1] - p_.dep_begin[i];
    const int32_t lanes = p_.num_devices * kLaneCount;
    for (int32_t l = 0; l < lanes; ++l) {
      mutexes_.push_back(sg4::Mutex::create());
      wakeups_.push_back(sg4::ConditionVariable::create());
    }
    for (int32_t g = 0; g < p_.num_groups(); ++g) {
      barriers_.push_back(sg4::Barrier::create(p_.members_of_group(g).size()));
    }
    times_.start_s.assign(p_.size(), 0.0);
    times_.end_s.assign(p_.size(), 0.0);
  }

  // An actor per lane that holds instructions, on its device's host; a data-parallel lane's
  // on the host its collectives' flows leave from (the device's twin endpoint in exact mode),
  // since a flow through a mailbox leaves from its sender's host.
  void start_actors() {
    for (int32_t l = 0; l + 1 < static_cast<int32_t>(p_.lane_begin.size()); ++l) {
      if (p_.lane_begin[l] == p_.lane_begin[l + 1]) continue;
      const int32_t device = l / kLaneCount;
      const bool data_parallel = l % kLaneCount == static_cast<int>(Lane::kDataParallel);
      const size_t endpoint = data_parallel ? collective_endpoint(device, true) : device;
      // (Twins exist only where some flow runs between them.)
      sg4::Host* host = hosts_[endpoint < hosts_.size() ? endpoint : device];
      sg4::Actor::create("lane" + std::to_string(l), host, [this, l] { run_lane(l); });
    }
  }

  int32_t completed() const { return completed_; }
  ExecutionTimes take_times() { return std::move(times_); }

 private:
  void run_lane(int32_t lane) {
    for (int32_t i = p_.lane_begin[lane]; i < p_.lane_begin[lane + 1]; ++i) {
      {
        std::unique_lock<sg4::Mutex> lock(*mutexes_[lane]);
        while (remaining_[i] > 0) wakeups_[lane]->wait(lock);
      }
      // Host-side dispatch (cluster.dispatch), as the analytic walk adds it.
      double earliest = ready_[i];
      if (i > p_.lane_begin[lane]) {
        earliest = std::max(earliest, times_.end_s[i - 1] + cluster_.dispatch.issue_s);
      }
      if (earliest > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(earliest);
      run_instruction(i);
      complete(i);
    }
  }

  void run_instruction(int32_t i) {
    const Instruction& instr = p_.instructions[i];
    if (is_transfer(instr.op)) {
      rendezvous(i);
    } else if (is_collective(instr.op)) {
      collective(i);
    } else if (is_copy(instr.op)) {
      // Over the device's host link, which the GPUs behind one PCIe switch share.
      sg4::Host* device = hosts_[instr.device];
      sg4::Host* host = hosts_[host_endpoint_of(cluster_, instr.device)];
      const bool out = copies_to_host(instr.op);
      sg4::CommPtr comm = sg4::Comm::sendto_async(out ? device : host, out ? host : device,
                                                  static_cast<uint64_t>(instr.bytes));
      comm->wait();
      record(i, comm->get_start_time(), comm->get_finish_time());
    } else {
      compute(i);
    }
  }

  // A compute op, in pieces where collectives may start under it (Instruction::lead_s):
  // each is released when the op has its lead left to run, as the analytic walk does.
  void compute(int32_t i) {
    const Instruction& instr = p_.instructions[i];
    const double speed = hosts_[instr.device]->get_speed();
    const double total = instr.compute_s + instr.interference_s;
    std::vector<std::pair<double, int32_t>> early;  // (lead, dependent), longest lead first
    for (int32_t d : p_.dependents_of(i)) {
      if (starts_early(i, d)) early.push_back({p_.instructions[d].lead_s, d});
    }
    std::sort(early.begin(), early.end(), std::greater<>());
    const double start = sg4::Engine::get_clock();
    double done = 0;
    for (const auto& [lead, d] : early) {
      const double until = std::max(0.0, total - lead);
      if (until > done) sg4::this_actor::execute((until - done) * speed);
      done = std::max(done, until);
      release(d, sg4::Engine::get_clock() + cluster_.dispatch.wakeup_s);
    }
    sg4::this_actor::execute((total - done) * speed);
    record(i, start, sg4::Engine::get_clock());
  }

  // Whether dependent d of i is a collective released before i ends (compute()).
  bool starts_early(int32_t i, int32_t d) const {
    const Instruction& instr = p_.instructions[i];
    return instr.lane() == Lane::kCompute && p_.instructions[d].starts_under_compute() &&
           p_.instructions[d].device == instr.device;
  }

  // Where a device's collectives send and receive their flows.
  int32_t collective_endpoint(int32_t device, bool data_parallel) const {
    return dedicated_ && data_parallel ? Topology::data_parallel_endpoint(cluster_, device)
                                       : device;
  }

  // One dependency of d has been met; from another lane, d may start at `ready` at the
  // earliest.
  void release(int32_t d, double ready) {
    ready_[d] = std::max(ready_[d], ready);
    if (--remaining_[d] == 0) wakeups_[p_.lane_index(d)]->notify_all();
  }

  // A member's part of its group's collective: the network model's flows
  // (sim/network/network_model.h), phase by phase, all members starting together.
  void collective(int32_t i) {
    const int32_t g = p_.group[i];
    barriers_[g]->wait();
    const double start = sg4::Engine::get_clock();
    const Instruction& instr = p_.instructions[i];
    const int32_t endpoint = collective_endpoint(instr.device, instr.data_parallel);
    run_collective_member(collective_flows_[g], endpoint, hosts_,
                          instr.data_parallel ? data_parallel_inboxes_ : collective_inboxes_,
                          *barriers_[g], collective_steps_);
    record_slowed(i, start, sg4::Engine::get_clock());
  }

  // A SEND and its RECV are one communication between their devices, started by
  // whichever end is posted second; the first waits on its lane until it has ended.
  // No mailbox: each would live for the rest of the run, one per transfer.
  void rendezvous(int32_t i) {
    const int32_t other = p_.partner[i];
    if (!posted_[other]) {
      posted_[i] = 1;
      std::unique_lock<sg4::Mutex> lock(*mutexes_[p_.lane_index(i)]);
      while (!transferred_[i]) wakeups_[p_.lane_index(i)]->wait(lock);
      record_slowed(i, times_.start_s[i], times_.end_s[i]);
      return;
    }
    const int32_t send = is_send(p_.instructions[i].op) ? i : other;
    const Instruction& instr = p_.instructions[send];
    sg4::CommPtr comm = sg4::Comm::sendto_async(hosts_[instr.device], hosts_[instr.peer_device],
                                                static_cast<uint64_t>(instr.bytes));
    comm->wait();
    record(other, comm->get_start_time(), comm->get_finish_time());
    transferred_[other] = 1;
    wakeups_[p_.lane_index(other)]->notify_all();
    record_slowed(i, comm->get_start_time(), comm->get_finish_time());
  }

  // A transfer slowed by interference holds its lane for the extra time after its flow
  // has finished (the link itself is released at the flow's end).
  void record_slowed(int32_t i, double start, double end) {
    const double extra = p_.instructions[i].interference_s;
    if (extra > 0) sg4::this_actor::sleep_until(end + extra);
    record(i, start, end + extra);
  }

  void record(int32_t i, double start, double end) {
    times_.start_s[i] = start;
    times_.end_s[i] = end;
  }

  void complete(int32_t i) {
    ++completed_;
    progress_.update(completed_, sg4::Engine::get_clock());
    for (int32_t d : p_.dependents_of(i)) {
      if (starts_early(i, d)) continue;  // released by compute()
      const bool same_lane = p_.lane_index(d) == p_.lane_index(i);
      release(d, same_lane ? 0.0 : times_.end_s[i] + cluster_.dispatch.wakeup_s);
    }
  }

  const Program& p_;
  const ClusterSpec& cluster_;
  const std::vector<sg4::Host*>& hosts_;
  const std::vector<CollectiveSchedule>& collective_flows_;  // per group
  const bool collective_steps_;
  const bool dedicated_;  // exact mode: data-parallel collectives on the twin endpoints
  // Where each endpoint receives its collectives' flows, one set per kind of collective lane:
  // a device's two collective lanes may run collectives at the same time.
  CollectiveInboxes collective_inboxes_;
  CollectiveInboxes data_parallel_inboxes_;
  std::vector<int32_t> remaining_;
  std::vector<double> ready_;      // when cross-lane dependencies allow a start (dispatch)
  std::vector<char> posted_;       // a SEND or RECV waiting for its partner
  std::vector<char> transferred_;  // its communication has ended (started by the partner)
  std::vector<sg4::MutexPtr> mutexes_;
  std::vector<sg4::ConditionVariablePtr> wakeups_;
  std::vector<sg4::BarrierPtr> barriers_;  // one per collective group
  ExecutionTimes times_;
  int32_t completed_ = 0;
  SimulationProgress progress_{p_.size()};
};

std::string serialize(const ExecutionTimes& times) {
  std::string out(2 * times.start_s.size() * sizeof(double), '\0');
  std::memcpy(out.data(), times.start_s.data(), times.start_s.size() * sizeof(double));
  std::memcpy(out.data() + times.start_s.size() * sizeof(double), times.end_s.data(),
              times.end_s.size() * sizeof(double));
  return out;
}

ExecutionTimes deserialize(const std::string& data, int32_t n) {
  if (data.size() != 2 * static_cast<size_t>(n) * sizeof(double)) {
    throw RuntimeFailure("simgrid executor: truncated result from the simulation process");
  }
  ExecutionTimes times;
  times.start_s.resize(n);
  times.end_s.resize(n);
  std::memcpy(times.start_s.data(), data.data(), n * sizeof(double));
  std::memcpy(times.end_s.data(), data.data() + n * sizeof(double), n * sizeof(double));
  return times;
}

// Lanes that hold instructions: one actor each.
int64_t actor_count(const Program& program) {
  int64_t actors = 0;
  for (size_t l = 0; l + 1 < program.lane_begin.size(); ++l)
    actors += program.lane_begin[l] != program.lane_begin[l + 1];
  return actors;
}

std::string simulate_in_this_process(const Program& program, const ClusterSpec& cluster,
                                     const SimgridSettings& settings) {
  sg4::Engine& engine = start_engine(settings, actor_count(program));

  const bool dedicated = settings.exact && cluster.simgrid_platform.empty();
  const std::vector<CollectiveSchedule> collective_flows =
      all_group_flows(program, cluster, dedicated);
  std::vector<sg4::Host*> hosts;
  if (cluster.simgrid_platform.empty()) {
    const auto pairs = communicating_pairs(program, cluster, collective_flows);
    const Topology topology =
        settings.exact ? Topology::dedicated(cluster, pairs) : Topology::shared(cluster);
    hosts = build_s4u_platform(topology, cluster, pairs);
  } else {
    hosts = load_s4u_platform(engine, cluster);
  }
  LaneRunner runner(program, cluster, hosts, collective_flows, settings.collective_steps,
                    dedicated);
  runner.start_actors();
  engine.run();
  if (runner.completed() != program.size()) {
    throw RuntimeFailure("simgrid executor: the program deadlocked after " +
                         std::to_string(runner.completed()) + " of " +
                         std::to_string(program.size()) + " instructions");
  }
  return serialize(runner.take_times());
}

}  // namespace

Topology simgrid_topology(const Program& program, const ClusterSpec& cluster,
                          const SimgridSettings& settings) {
  return settings.exact ? Topology::dedicated(
                              cluster, communicating_pairs(program, cluster,
                                                           all_group_flows(program, cluster, true)))
                        : Topology::shared(cluster);
}

ExecutionTimes run_simgrid(const Program& program, const ClusterSpec& cluster,
                           const SimgridSettings& settings) {
  const std::string data =
      run_in_child([&] { return simulate_in_this_process(program, cluster, settings); });
  return deserialize(data, program.size());
}

}  // namespace pipetwin
