// Trace-driven calibration: fits a scenario's costs to a measured run of that scenario
// (`pipetwin calibrate SCENARIO --from MEASURED.timeline`), so that the simulators
// predict the machine as it behaves under load rather than op by op in isolation.
//
// What is fitted, jointly, by least squares over the measured spans (sim/fit/least_squares.h):
//  - compute: per model chunk and direction, the span's time for b samples. With several
//    microbatch sizes in the run, a fixed part plus a part per sample; with one, a factor
//    on the scenario's own cost curve (whose shape then carries to other sizes). A
//    backward counts as the backwards of the forward graphs it walks, as the lowering
//    charges it (sim/spec/unequal_plan.h, backward_through_forwards). Each
//    chunk's fit is split over its layers in the proportions of the scenario's costs.
//  - the optimizer step per chunk (the median OPTIM span over the share of the step one device
//    runs in the scenario's Program: 1/N under ZeRO over N replicas), split by parameter bytes;
//  - links: latency and bandwidth of intra_node and inter_node transfers as measured
//    (both directions, activations and gradients together). With one message size the
//    bandwidth stays the scenario's and the latency absorbs the rest; when overlap and
//    duration move together (every transfer overlapped compute), the scenario's link stays (measure
//    it alone with `pipetwin calibrate`) and only the slowdown is fitted;
//  - interference (cluster.interference): one compute_slowdown shared by every compute
//    span, against how long each span overlapped transfers of its device; one
//    transfer_slowdown shared by every transfer, against how long it overlapped compute;
//    each at most 0.95; the compute_slowdown only when compute overlapped transfers for at
//    least 1% of its time (0 otherwise);
//  - dispatch (cluster.dispatch): the median gap between an op's readiness (in the
//    scenario's Program) and its measured start, after its lane predecessor (issue) and
//    after a dependency on another lane (wake-up).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenario.pb.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/resolved_scenario.h"
#include "traces/timeline.h"

namespace pipetwin {

// One chunk's compute in one direction.
struct ChunkCostFit {
  int32_t chunk = 0;
  bool forward = true;
  int32_t spans = 0;
  std::vector<int32_t> sizes;  // distinct microbatch (for a backward: graph) sizes measured
  bool linear = false;         // fixed + per-sample fitted (several sizes)
  double fixed_s = 0;
  double per_sample_s = 0;
  double scale = 1;  // !linear: measured over the scenario's cost curve
};

struct LinkTimeFit {
  int32_t transfers = 0;  // 0: not measured; the scenario's link stays
  double latency_s = 0;
  double bandwidth_bytes_per_s = 0;
  bool bandwidth_kept = false;  // one message size: the scenario's bandwidth was kept
  bool link_kept = false;       // too few transfers: the scenario's link was kept
  bool under_load = false;      // fitted as the transfers ran, no transfer_slowdown
};

struct TraceFit {
  std::vector<ChunkCostFit> compute;  // chunk-major, forward then backward
  std::vector<double> optim_s;        // per chunk; < 0: no OPTIM span measured
  LinkTimeFit intra_node;
  LinkTimeFit inter_node;
  InterferenceSpec interference;
  DispatchSpec dispatch;
  int32_t dispatch_matched = 0;  // instructions of the scenario's Program found in the run
  int32_t issue_gaps = 0;
  int32_t wakeup_gaps = 0;
  int32_t compute_outliers = 0;  // spans left out of the compute fit
  int32_t transfer_outliers = 0;
  double compute_rms_s = 0;
  double compute_overlap_share = 0;  // of the compute spans' time, overlapping transfers
  double transfer_rms_s = 0;
  double measured_makespan_s = 0;  // the median of the runs'
  std::vector<double> measured_makespans_s;
};

struct NamedTimeline {
  const Timeline* timeline;
  std::string name;  // for errors and comments
};

// Spans that name their microbatch but not its samples (another framework's trace) first take
// the scenario's sample ranges (sim/fit/measured_ranges.h).
// Fits to every span of every run together (several runs of one scenario average over
// the machine's moods); the makespan to match is the median run's. `resized` are runs of the
// scenario with other microbatch counts: their passes and transfers join the compute and link
// fits (a second microbatch size tells a pass's fixed cost from its cost per sample), not the
// dispatch gaps or the makespan, which are the scenario's own. Throws InputError (naming the
// timeline) when a timeline cannot be a run of `setup` (other devices, chunks without spans).
TraceFit fit_trace(const ResolvedScenario& setup, const std::vector<NamedTimeline>& runs,
                   const std::vector<NamedTimeline>& resized = {});
TraceFit fit_trace(const ResolvedScenario& setup, const Timeline& measured,
                   const std::string& timeline_name);

// `original` with the fitted costs: model.layers written next to a zoo block (which the
// real backends build), the links and cluster.interference set, and the placement kept.
proto::Scenario fitted_scenario(const proto::Scenario& original, const ResolvedScenario& setup,
                                const TraceFit& fit);

// Comment lines (each starting with "# ") saying what was fitted from what.
std::string describe_fit(const TraceFit& fit, const std::vector<std::string>& timeline_names);

}  // namespace pipetwin
