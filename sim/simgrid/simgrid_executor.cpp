#include "sim/simgrid/simgrid_executor.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <simgrid/s4u.hpp>

#include "sim/exec/ring_allreduce.h"
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

// Sender -> receiver pairs of every SEND, every offload copy (both ways) and every ring
// all-reduce step.
std::vector<std::pair<int32_t, int32_t>> communicating_pairs(const Program& program,
                                                             const ClusterSpec& cluster) {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (const Instruction& instr : program.instructions) {
    if (is_send(instr.op)) pairs.emplace_back(instr.device, instr.peer_device);
    if (copies_to_host(instr.op)) {
      pairs.emplace_back(instr.device, host_endpoint_of(cluster, instr.device));
      pairs.emplace_back(host_endpoint_of(cluster, instr.device), instr.device);
    }
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    const auto members = program.members_of_group(g);
    if (members.size() < 2) continue;  // a ring of one device moves nothing
    for (size_t k = 0; k < members.size(); ++k) {
      pairs.emplace_back(program.instructions[members[k]].device,
                         program.instructions[members[(k + 1) % members.size()]].device);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

// What the lane actors share. SimGrid actors run one at a time, so plain counters are
// safe; a condition variable per lane wakes an actor whose next instruction became ready.
class LaneRunner {
 public:
  LaneRunner(const Program& program, const ClusterSpec& cluster,
             const std::vector<sg4::Host*>& hosts, bool collective_steps)
      : p_(program),
        cluster_(cluster),
        hosts_(hosts),
        collective_steps_(collective_steps),
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

  void start_actors() {
    for (int32_t l = 0; l + 1 < static_cast<int32_t>(p_.lane_begin.size()); ++l) {
      if (p_.lane_begin[l] == p_.lane_begin[l + 1]) continue;
      const int32_t device = l / kLaneCount;
      sg4::Actor::create("lane" + std::to_string(l), hosts_[device], [this, l] { run_lane(l); });
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
      ring_allreduce(i);
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
      const double flops =
          (instr.compute_s + instr.interference_s) * hosts_[instr.device]->get_speed();
      sg4::ExecPtr exec = sg4::this_actor::exec_init(flops);
      exec->start();
      exec->wait();
      record(i, exec->get_start_time(), exec->get_finish_time());
    }
  }

  // A ring all-reduce (sim/exec/ring_allreduce.h): 2(D-1) lock-step steps, in each of
  // which every member sends a chunk to its successor. Aggregated (the default), each member
  // sends its 2(D-1) chunks as one flow over the same route, then waits out the latency of
  // the 2(D-1) - 1 steps that one flow does not pay, and all members end together: the same
  // bytes on the same links, with D flows instead of 2(D-1) D. Without contention that is
  // the closed form exactly; under contention tests hold it to the step-by-step model.
  // Each member waits for its own flow only: the barrier after it waits for everyone's,
  // so for every member's incoming flow too.
  void ring_allreduce(int32_t i) {
    const int32_t g = p_.group[i];
    const auto members = p_.members_of_group(g);
    const int32_t n = static_cast<int32_t>(members.size());
    const int32_t k =
        static_cast<int32_t>(std::find(members.begin(), members.end(), i) - members.begin());
    // Several all-reduces in one op (tensor parallelism) run one after the other.
    const int32_t collectives = p_.instructions[i].collectives;
    const uint64_t chunk =
        static_cast<uint64_t>(ring_chunk_bytes(p_.instructions[i].bytes, n * collectives));
    const int32_t steps = 2 * (n - 1) * collectives;
    const int32_t from = p_.instructions[i].device;
    const int32_t to = p_.instructions[members[(k + 1) % n]].device;
    barriers_[g]->wait();
    const double start = sg4::Engine::get_clock();
    if (collective_steps_) {
      for (int32_t step = 0; step < steps; ++step) {
        sg4::Comm::sendto_async(hosts_[from], hosts_[to], chunk)->wait();
        barriers_[g]->wait();
      }
    } else if (steps > 0) {
      const uint64_t bytes = chunk * static_cast<uint64_t>(steps);
      sg4::Comm::sendto_async(hosts_[from], hosts_[to], bytes)->wait();
      const double rounds_latency = (steps - 1) * route_latency(from, to);
      if (rounds_latency > 0) sg4::this_actor::sleep_for(rounds_latency);
      barriers_[g]->wait();
    }
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

  double route_latency(int32_t from, int32_t to) const {
    std::vector<sg4::Link*> links;
    double latency = 0;
    hosts_[from]->route_to(hosts_[to], links, &latency);
    return latency;
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
      if (p_.lane_index(d) != p_.lane_index(i)) {
        ready_[d] = std::max(ready_[d], times_.end_s[i] + cluster_.dispatch.wakeup_s);
      }
      if (--remaining_[d] == 0) wakeups_[p_.lane_index(d)]->notify_all();
    }
  }

  const Program& p_;
  const ClusterSpec& cluster_;
  const std::vector<sg4::Host*>& hosts_;
  const bool collective_steps_;
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

  std::vector<sg4::Host*> hosts;
  if (cluster.simgrid_platform.empty()) {
    const Topology topology = simgrid_topology(program, cluster, settings);
    hosts = build_s4u_platform(topology, cluster, communicating_pairs(program, cluster));
  } else {
    hosts = load_s4u_platform(engine, cluster);
  }
  LaneRunner runner(program, cluster, hosts, settings.collective_steps);
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
  return settings.exact ? Topology::dedicated(cluster, communicating_pairs(program, cluster))
                        : Topology::shared(cluster);
}

ExecutionTimes run_simgrid(const Program& program, const ClusterSpec& cluster,
                           const SimgridSettings& settings) {
  const std::string data =
      run_in_child([&] { return simulate_in_this_process(program, cluster, settings); });
  return deserialize(data, program.size());
}

}  // namespace pipetwin
