// The simgrid executor: the Program on a SimGrid 3.32 platform built from the cluster
// (docs/simgrid.md). One actor per device lane; compute is an execution on the
// device's host, a SEND/RECV pair a rendezvous through its own mailbox, so transfers
// share links and slow each other down as the network model says.
//
// Exact mode builds one dedicated link per communicating pair and uses CM02 without TCP
// window or cross-traffic: it then reproduces the analytic executor's timestamps, which
// is the proof that both implement the same semantics. Default mode builds the cluster's
// real fabric (sim/cluster/topology.h) on the same model, so contention shows.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/topology.h"
#include "sim/exec/execution_times.h"
#include "sim/program/program.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// The topology the run uses: dedicated pairs in exact mode, the shared fabric otherwise.
Topology simgrid_topology(const Program& program, const ClusterSpec& cluster,
                          const SimgridSettings& settings);

// Runs in a child process (see run_in_child.h). Throws RuntimeFailure on a deadlock or
// a SimGrid error.
ExecutionTimes run_simgrid(const Program& program, const ClusterSpec& cluster,
                           const SimgridSettings& settings);

}  // namespace pipetwin
