#include "sim/fit/trace_fit.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "sim/driver/build_program.h"
#include "sim/exec/interference.h"
#include "sim/fit/least_squares.h"
#include "sim/fit/measured_ranges.h"
#include "sim/network/point_to_point.h"
#include "sim/program/instruction.h"
#include "sim/spec/errors.h"
#include "sim/spec/unequal_plan.h"
#include "sim/tune/replica_passes.h"

namespace pipetwin {
namespace {

// The largest fraction of speed the fit lets an overlapped op lose: near 1 an overlapped
// op barely progresses, and the fixed point becomes as sensitive as the measurement noise.
constexpr double kMaxSlowdown = 0.95;

// The least share of the compute time spent overlapping transfers from which the compute
// slowdown is fitted (below it the overlap is too short to tell a slowdown from the costs).
constexpr double kMinOverlapShare = 0.01;

// Rows left out as outliers: none. A preempted op is rare but not exceptional on a loaded
// machine, and the makespan adds the ops on its critical path, so their mean, tail
// included, is what a prediction of the typical run needs.
constexpr double kOutlierMads = 0;

std::optional<Op> op_named(const std::string& name) {
  for (int k = 0; k <= static_cast<int>(Op::kMigrateRecv); ++k) {
    if (name == op_name(static_cast<Op>(k))) return static_cast<Op>(k);
  }
  for (Op split : {Op::kBwdInput, Op::kBwdWeight}) {  // so that the fit can refuse them
    if (name == op_name(split)) return split;
  }
  return std::nullopt;
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / values.size();
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The scenario's own cost of layer `l` in one direction for b samples on chunk c's device.
// On one GPU of the chunk's stage: with tensor parallelism, 1/T of the layer, as the lowering
// divides it. The fitted costs are written back for the whole layer (times T).
double prior_seconds(const ResolvedScenario& setup, int32_t chunk, int32_t layer, bool forward,
                     double samples) {
  const ModelLayer& m = setup.model.layers[layer];
  const double flops = device_flops(setup, chunk_device(setup, chunk));
  return (forward ? m.fwd : m.bwd).curve(flops, setup.training.tensor_parallel).seconds(samples);
}

struct Measured {
  const Span* span;
  Op op;
  double overlap;             // with the other kind of activity, as the interference rule counts it
  const std::string* source;  // the timeline's name, for errors
};

// Every span with its op and its overlap, checked against the scenario.
std::vector<Measured> measured_spans(const ResolvedScenario& setup, const Timeline& timeline,
                                     const std::string& name) {
  const int32_t devices = static_cast<int32_t>(setup.cluster.devices.size());
  BusyIntervals compute(devices), communication(devices);
  std::vector<Measured> out;
  for (const Span& span : timeline.spans) {
    const std::optional<Op> op = op_named(span.op);
    if (!op) continue;  // a span kind this version does not fit
    if (span.device < 0 || span.device >= devices ||
        (is_transfer(*op) && (span.peer_device < 0 || span.peer_device >= devices))) {
      throw InputError(name + ": span " + span.name + " runs on device " +
                       std::to_string(span.device) + ", but the scenario has " +
                       std::to_string(devices) + " devices: was it measured from this scenario?");
    }
    out.push_back({&span, *op, 0, &name});
    if (activity_of(*op) == Activity::kCompute) compute.add(span.device, span.start_s, span.end_s);
    if (activity_of(*op) == Activity::kCommunication) {
      communication.add(span.device, span.start_s, span.end_s);
    }
  }
  compute.finish();
  communication.finish();
  for (Measured& m : out) {
    const Span& s = *m.span;
    if (activity_of(m.op) == Activity::kCompute) {
      m.overlap = communication.overlap(s.device, s.start_s, s.end_s);
    } else if (is_transfer(m.op)) {
      m.overlap = std::max(compute.overlap(s.device, s.start_s, s.end_s),
                           compute.overlap(s.peer_device, s.start_s, s.end_s));
    }
  }
  return out;
}

// Tensor and expert parallelism on real ranks run a pass's collectives inside the pass,
// where its layers need them (the Program's ALLREDUCE or ALL_TO_ALL after it is an empty
// span). The simulators add them after the pass, on the fitted links, so the fit takes that
// time out of each measured pass.
class InPassCollectives {
 public:
  InPassCollectives(const ResolvedScenario& setup, const TraceFit& fit)
      : split_(setup.training.tensor_parallel > 1 || setup.training.expert_parallel > 1) {
    if (!split_) return;
    priced_ = setup;
    for (const auto& [link, spec] : {std::pair{&fit.intra_node, &priced_.cluster.intra_node},
                                     std::pair{&fit.inter_node, &priced_.cluster.inter_node}}) {
      if (link->transfers > 0) *spec = {link->bandwidth_bytes_per_s, link->latency_s};
    }
    layout_ = make_layout(priced_, place_layers(priced_));
    gpus_ = {priced_.training.tensor_parallel, priced_.training.context_parallel,
             layout_.devices_per_replica};
  }
  // Chunk `chunk`'s forward or backward of `samples`.
  double seconds(int32_t chunk, bool forward, double samples) const {
    if (!split_) return 0;
    return in_pass_collective_seconds(priced_, layout_.costs[chunk], gpus_,
                                      layout_.stage_device[chunk], samples, forward);
  }

 private:
  bool split_;
  ResolvedScenario priced_;  // the scenario with the fitted links
  PipelineLayout layout_;
  GpuNumbering gpus_;
};

// Per chunk, the share of its optimizer step that one device runs in the scenario's Program
// (1/N of it when ZeRO shards it over N replicas; a slow device's step takes longer), read
// off a Program lowered with a cost on every parameter.
std::vector<double> optimizer_shares(const ResolvedScenario& setup) {
  ResolvedScenario probe = setup;
  for (ModelLayer& layer : probe.model.layers) layer.optim_seconds = 0;
  probe.model.optimizer_seconds_per_parameter = 1e-9;
  const PipelineLayout layout = make_layout(probe, place_layers(probe));
  std::vector<double> shares(layout.costs.size(), 1.0);
  std::vector<char> seen(layout.costs.size(), 0);
  const Program program = build_program(probe);
  for (const Instruction& ins : program.instructions) {
    if (ins.op != Op::kOptim || ins.stage < 0 || ins.stage >= static_cast<int32_t>(seen.size()) ||
        seen[ins.stage]) {
      continue;
    }
    const double whole = layout.costs[ins.stage].optim_s;
    if (whole > 0 && ins.compute_s > 0) shares[ins.stage] = ins.compute_s / whole;
    seen[ins.stage] = 1;
  }
  return shares;
}

// Compute: columns 2k, 2k+1 for block k = 2 * chunk + (backward), then compute_slowdown.
// The links are fitted already (tensor-parallel collectives are priced on them).
void fit_compute(const ResolvedScenario& setup, const std::vector<Measured>& spans, TraceFit& fit) {
  const InPassCollectives collectives(setup, fit);
  const auto ranges = chunk_layer_ranges(setup);
  const int32_t chunks = static_cast<int32_t>(ranges.size());
  std::vector<std::vector<const Measured*>> blocks(2 * chunks);
  for (const Measured& m : spans) {
    if (m.op == Op::kBwdInput || m.op == Op::kBwdWeight) {
      // The fit has one backward column per chunk: a split backward has two parts to fit.
      throw InputError(*m.source + ": span " + m.span->name +
                       " is half of a split backward (a zero-bubble schedule): calibrate "
                       "from a run whose backwards are whole (GPIPE, ONE_F_ONE_B, ...)");
    }
    if (m.op != Op::kFwd && m.op != Op::kBwd) continue;
    if (m.span->stage < 0 || m.span->stage >= chunks) {
      throw InputError(*m.source + ": span " + m.span->name + " belongs to stage " +
                       std::to_string(m.span->stage) + ", but the scenario has " +
                       std::to_string(chunks) +
                       " model chunks: was it measured from this "
                       "scenario?");
    }
    blocks[2 * m.span->stage + (m.op == Op::kBwd)].push_back(&m);
  }
  auto chunk_prior = [&](int32_t c, bool forward, double b) {
    double total = 0;
    for (int32_t l = ranges[c].first; l < ranges[c].second; ++l) {
      total += prior_seconds(setup, c, l, forward, b);
    }
    return total;
  };
  // A backward walks the whole graph of every forward of its stage it overlaps
  // (backward_through_forwards): its cost is a sum over those forwards' sizes.
  using ForwardKey = std::tuple<const std::string*, int32_t, int32_t, int32_t>;
  std::map<ForwardKey, std::vector<SampleRange>> forwards;
  for (int32_t c = 0; c < chunks; ++c) {
    for (const Measured* m : blocks[2 * c]) {
      const Span& f = *m->span;
      forwards[{m->source, f.device, f.stage, f.iteration}].push_back({f.range_lo, f.range_hi});
    }
  }
  for (auto& [key, list] : forwards) {
    std::sort(list.begin(), list.end(),
              [](const SampleRange& a, const SampleRange& b) { return a.lo < b.lo; });
  }
  // The sizes of the graphs a compute span walks: its own, or for a backward its forwards'.
  auto walked = [&](const Measured& m) {
    const Span& s = *m.span;
    std::vector<int32_t> sizes;
    if (m.op == Op::kBwd) {
      const auto it = forwards.find({m.source, s.device, s.stage, s.iteration});
      if (it != forwards.end()) {
        backward_through_forwards({s.range_lo, s.range_hi}, it->second, [&](int32_t size) {
          sizes.push_back(size);
          return 0.0;
        });
      }
    }
    if (sizes.empty()) sizes.push_back(s.samples());
    return sizes;
  };
  LinearRows rows;
  rows.columns = 4 * chunks + 1;
  const int32_t slowdown = 4 * chunks;
  fit.compute.clear();
  for (int32_t k = 0; k < 2 * chunks; ++k) {
    ChunkCostFit block;
    block.chunk = k / 2;
    block.forward = k % 2 == 0;
    block.spans = static_cast<int32_t>(blocks[k].size());
    std::vector<std::vector<int32_t>> graphs;
    std::set<int32_t> sizes;
    for (const Measured* m : blocks[k]) {
      graphs.push_back(walked(*m));
      sizes.insert(graphs.back().begin(), graphs.back().end());
    }
    block.sizes.assign(sizes.begin(), sizes.end());
    block.linear = sizes.size() >= 2;
    for (size_t j = 0; j < blocks[k].size(); ++j) {
      const Measured* m = blocks[k][j];
      std::vector<double> row(rows.columns, 0.0);
      for (int32_t b : graphs[j]) {
        if (block.linear) {
          row[2 * k] += 1;
          row[2 * k + 1] += b;
        } else {
          const double prior = chunk_prior(block.chunk, block.forward, b);
          row[2 * k] += prior > 0 ? prior : b;  // a zero-cost prior: proportional to samples
        }
      }
      row[slowdown] = m->overlap;
      rows.add(std::move(row),
               m->span->duration_s() -
                   collectives.seconds(block.chunk, block.forward, m->span->samples()));
    }
    fit.compute.push_back(block);
  }
  // A slowdown is told from the costs only by spans that overlapped transfers for a
  // measurable part of their time; below kMinOverlapShare of the compute (transfers that ran
  // between passes, as Megatron's blocking pipeline calls do) it is not fitted.
  double overlapped = 0, computed = 0;
  for (size_t r = 0; r < rows.x.size(); ++r) {
    overlapped += rows.x[r][slowdown];
    computed += rows.y[r];
  }
  fit.compute_overlap_share = computed > 0 ? overlapped / computed : 0;
  if (fit.compute_overlap_share < kMinOverlapShare) {
    for (auto& row : rows.x) row[slowdown] = 0;  // an all-zero column is left at 0
  }
  std::vector<int32_t> all(rows.columns);
  for (int32_t k = 0; k < rows.columns; ++k) all[k] = k;
  const LinearFit solved =
      fit_least_squares_capped(rows, all, slowdown, kMaxSlowdown, kOutlierMads);
  for (int32_t k = 0; k < 2 * chunks; ++k) {
    ChunkCostFit& block = fit.compute[k];
    if (block.spans == 0) continue;  // never measured (a frozen chunk's backward): prior kept
    if (block.linear) {
      block.fixed_s = solved.coefficients[2 * k];
      block.per_sample_s = solved.coefficients[2 * k + 1];
    } else {
      const double b = block.sizes.front();
      const double prior = chunk_prior(block.chunk, block.forward, b);
      if (prior > 0) {
        block.scale = solved.coefficients[2 * k];
      } else {  // proportional to samples: written as a per-sample cost
        block.linear = true;
        block.per_sample_s = solved.coefficients[2 * k];
      }
    }
  }
  fit.interference.compute_slowdown = solved.coefficients[slowdown];
  fit.compute_outliers = solved.outliers;
  fit.compute_rms_s = solved.rms_residual;

  // A measured OPTIM is one device's part of its chunk's step (ZeRO shards it): the fit
  // writes the whole step, which the lowering shares out again.
  const std::vector<double> shares = optimizer_shares(setup);
  fit.optim_s.assign(chunks, -1);
  std::vector<std::vector<double>> optim(chunks);
  for (const Measured& m : spans) {
    if (m.op == Op::kOptim && m.span->stage >= 0 && m.span->stage < chunks) {
      optim[m.span->stage].push_back(m.span->duration_s());
    }
  }
  for (int32_t c = 0; c < chunks; ++c) {
    if (!optim[c].empty()) fit.optim_s[c] = median(optim[c]) / shares[c];
  }
}

// Links: columns latency and seconds per byte of intra_node (0, 1) and inter_node (2, 3),
// then transfer_slowdown (4). When the joint fit finds an overlapped transfer barely
// progressing (slowdown past the cap), overlap and duration moved together and the link's
// own time cannot be told from the slowdown: the links are then fitted as they ran, under
// load, with no slowdown. Fewer than 5 transfers keep the scenario's link.
void fit_links(const ResolvedScenario& setup, const std::vector<Measured>& spans, TraceFit& fit) {
  std::vector<const Measured*> sends[2];  // intra, inter
  for (const Measured& m : spans) {
    if (!is_send(m.op)) continue;
    const bool inter = setup.cluster.devices[m.span->device].node !=
                       setup.cluster.devices[m.span->peer_device].node;
    sends[inter].push_back(&m);
  }
  const LinkSpec* prior[2] = {&setup.cluster.intra_node, &setup.cluster.inter_node};
  bool keep_bandwidth[2], keep_link[2];
  bool under_load = false;
  for (int g = 0; g < 2; ++g) {
    double lo = INFINITY, hi = 0;
    for (const Measured* m : sends[g]) {
      lo = std::min(lo, static_cast<double>(m->span->bytes));
      hi = std::max(hi, static_cast<double>(m->span->bytes));
    }
    keep_link[g] = sends[g].size() < 5;
    // The bandwidth is told apart from the latency only by messages of different sizes.
    keep_bandwidth[g] = keep_link[g] || !(hi > 0 && hi - lo > 0.05 * hi);
  }
  LinearFit solved;
  for (int attempt = 0; attempt < 3; ++attempt) {
    LinearRows rows;
    rows.columns = 5;
    for (int g = 0; g < 2; ++g) {
      for (const Measured* m : sends[g]) {
        std::vector<double> row(5, 0.0);
        const double bytes = static_cast<double>(m->span->bytes);
        double y = m->span->duration_s();
        if (keep_link[g]) {
          y -= transfer_seconds(*prior[g], bytes);
        } else {
          row[2 * g] = 1;
        }
        if (keep_bandwidth[g] && !keep_link[g]) {
          const double bw = prior[g]->bandwidth_bytes_per_s;
          if (bw > 0) y -= bytes / bw;
        } else if (!keep_bandwidth[g]) {
          row[2 * g + 1] = bytes;
        }
        row[4] = m->overlap;
        rows.add(std::move(row), y);
      }
    }
    if (under_load) {
      for (auto& row : rows.x) row[4] = 0;
    }
    solved = fit_least_squares(rows, {0, 1, 2, 3, 4}, kOutlierMads);
    if (solved.coefficients[4] > kMaxSlowdown) {
      // Overlap and duration moved together: the link's own time cannot be told from the
      // slowdown. The links are fitted as they ran, under load, without a slowdown.
      under_load = true;
      continue;
    }
    bool refit = false;
    for (int g = 0; g < 2; ++g) {
      if (!keep_bandwidth[g] && !sends[g].empty() && !(solved.coefficients[2 * g + 1] > 0)) {
        keep_bandwidth[g] = refit = true;  // no bandwidth could be seen: keep the scenario's
      }
    }
    if (!refit) break;
  }
  for (int g = 0; g < 2; ++g) {
    LinkTimeFit& link = g == 0 ? fit.intra_node : fit.inter_node;
    link.transfers = static_cast<int32_t>(sends[g].size());
    if (link.transfers == 0) continue;
    link.link_kept = keep_link[g];
    link.under_load = under_load;
    link.bandwidth_kept = keep_bandwidth[g];
    link.latency_s = keep_link[g] ? prior[g]->latency_s : solved.coefficients[2 * g];
    link.bandwidth_bytes_per_s =
        keep_bandwidth[g] ? prior[g]->bandwidth_bytes_per_s : 1 / solved.coefficients[2 * g + 1];
  }
  fit.interference.transfer_slowdown = solved.coefficients[4];
  fit.transfer_outliers = solved.outliers;
  fit.transfer_rms_s = solved.rms_residual;
}

// Dispatch: the measured gaps between an op's readiness and its start, as the Program
// of the scenario defines readiness. An op whose last constraint was a dependency on
// another lane waited for a wake-up; one whose last constraint was its lane predecessor
// waited for the host to issue it. Each is the mean of its gaps (the tail included, as
// for the costs).
void gaps_of_run(const Program& program, const Timeline& timeline, std::vector<double>& issue,
                 std::vector<double>& wakeup, TraceFit& fit) {
  using Key = std::tuple<int32_t, std::string, int32_t, int32_t, int32_t, int32_t>;
  std::map<Key, const Span*> by_key;
  for (const Span& s : timeline.spans) {
    by_key[{s.device, s.op, s.stage, s.microbatch, s.iteration, s.range_lo}] = &s;
  }
  std::vector<const Span*> span_of(program.size(), nullptr);
  int32_t matched = 0;
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    const auto it = by_key.find(
        {ins.device, op_name(ins.op), ins.stage, ins.microbatch, ins.iteration, ins.range.lo});
    if (it != by_key.end()) {
      span_of[i] = it->second;
      ++matched;
    }
  }
  fit.dispatch_matched += matched;
  if (matched < program.size() * 9 / 10) return;  // not this scenario's Program: no gaps
  // Each side's readiness: (from its lane predecessor, from other lanes); -inf if none.
  auto readiness = [&](int32_t i, double& lane, double& cross) -> bool {
    lane = cross = -INFINITY;
    const int32_t l = program.lane_index(i);
    if (i > program.lane_begin[l]) {
      if (!span_of[i - 1]) return false;
      lane = span_of[i - 1]->end_s;
    }
    for (int32_t d : program.deps_of(i)) {
      if (!span_of[d]) return false;
      if (program.lane_index(d) != l) cross = std::max(cross, span_of[d]->end_s);
    }
    return true;
  };
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    if (!span_of[i] || is_collective(ins.op) || is_recv(ins.op)) continue;
    double lane = 0, cross = 0;
    if (!readiness(i, lane, cross)) continue;
    if (is_send(ins.op)) {  // a pair starts when both ends are ready
      const int32_t j = program.partner[i];
      double lane_j = 0, cross_j = 0;
      if (j < 0 || !span_of[j] || !readiness(j, lane_j, cross_j)) continue;
      lane = std::max(lane, lane_j);
      cross = std::max(cross, cross_j);
    }
    const double start = span_of[i]->start_s;
    if (cross > lane) {
      wakeup.push_back(start - cross);
    } else if (std::isfinite(lane)) {
      issue.push_back(start - lane);
    }
  }
}

void fit_dispatch(const ResolvedScenario& setup, const std::vector<NamedTimeline>& runs,
                  TraceFit& fit) {
  const Program program = build_program(setup);
  std::vector<double> issue, wakeup;
  for (const NamedTimeline& run : runs) {
    gaps_of_run(program, *run.timeline, issue, wakeup, fit);
  }
  fit.dispatch.issue_s = std::max(0.0, mean(issue));
  fit.dispatch.wakeup_s = std::max(0.0, mean(wakeup));
  fit.issue_gaps = static_cast<int32_t>(issue.size());
  fit.wakeup_gaps = static_cast<int32_t>(wakeup.size());
}

// Layer l's fitted seconds in one direction for b samples, from its chunk's block: the
// whole layer's (with tensor parallelism, T GPUs' worth of what one measured).
double layer_seconds(const ResolvedScenario& setup, const ChunkCostFit& block,
                     std::pair<int32_t, int32_t> range, int32_t l, double b) {
  const double whole = setup.training.tensor_parallel;
  if (block.spans == 0 || !block.linear) {
    return whole * block.scale * prior_seconds(setup, block.chunk, l, block.forward, b);
  }
  // The chunk's line, split in the proportions of the scenario's costs at the measured
  // size (equally when the scenario's costs are all zero).
  const double reference = block.sizes[block.sizes.size() / 2];
  double total = 0;
  for (int32_t k = range.first; k < range.second; ++k) {
    total += prior_seconds(setup, block.chunk, k, block.forward, reference);
  }
  const double share = total > 0
                           ? prior_seconds(setup, block.chunk, l, block.forward, reference) / total
                           : 1.0 / (range.second - range.first);
  return whole * share * (block.fixed_s + block.per_sample_s * b);
}

// The runs with every span's samples: a trace that counts microbatches only (another
// framework's job) gets the scenario's ranges (sim/fit/measured_ranges.h), in copies kept in
// `storage`.
std::vector<NamedTimeline> with_samples(const ResolvedScenario& setup,
                                        const std::vector<NamedTimeline>& runs,
                                        std::deque<Timeline>& storage) {
  std::vector<NamedTimeline> out;
  for (const NamedTimeline& run : runs) {
    const auto& spans = run.timeline->spans;
    if (std::none_of(spans.begin(), spans.end(),
                     [](const Span& s) { return s.range_hi <= s.range_lo; })) {
      out.push_back(run);  // pipetwin's own runs: every span has its samples
      continue;
    }
    Timeline copy = *run.timeline;
    if (assign_sample_ranges(setup, copy) == 0) {
      out.push_back(run);
      continue;
    }
    storage.push_back(std::move(copy));
    out.push_back({&storage.back(), run.name});
  }
  return out;
}

}  // namespace

TraceFit fit_trace(const ResolvedScenario& setup, const std::vector<NamedTimeline>& measured_runs,
                   const std::vector<NamedTimeline>& measured_resized) {
  if (measured_runs.empty()) throw InputError("calibrate --from: no measured run");
  std::deque<Timeline> storage;
  const std::vector<NamedTimeline> runs = with_samples(setup, measured_runs, storage);
  const std::vector<NamedTimeline> resized = with_samples(setup, measured_resized, storage);
  TraceFit fit;
  std::vector<Measured> spans;
  for (const NamedTimeline& run : runs) {
    const std::vector<Measured> own = measured_spans(setup, *run.timeline, run.name);
    if (own.empty()) throw InputError(run.name + ": the timeline has no spans");
    double first = INFINITY, last = -INFINITY;
    for (const Measured& m : own) {
      first = std::min(first, m.span->start_s);
      last = std::max(last, m.span->end_s);
    }
    fit.measured_makespans_s.push_back(last - first);
    spans.insert(spans.end(), own.begin(), own.end());
  }
  for (const NamedTimeline& run : resized) {
    const std::vector<Measured> other = measured_spans(setup, *run.timeline, run.name);
    spans.insert(spans.end(), other.begin(), other.end());
  }
  fit.measured_makespan_s = median(fit.measured_makespans_s);
  fit_links(setup, spans, fit);
  fit_compute(setup, spans, fit);
  for (const ChunkCostFit& block : fit.compute) {
    if (block.spans == 0 && block.forward) {
      throw InputError(runs.front().name + ": no FWD span of stage " + std::to_string(block.chunk) +
                       ": was it measured from this scenario?");
    }
  }
  fit_dispatch(setup, runs, fit);
  return fit;
}

TraceFit fit_trace(const ResolvedScenario& setup, const Timeline& measured,
                   const std::string& timeline_name) {
  return fit_trace(setup, {{&measured, timeline_name}});
}

proto::Scenario fitted_scenario(const proto::Scenario& original, const ResolvedScenario& setup,
                                const TraceFit& fit) {
  proto::Scenario out = original;
  proto::Model* model = out.mutable_model();
  const bool zoo = model->has_zoo();
  const proto::Zoo architecture = model->zoo();
  model->Clear();
  if (zoo) *model->mutable_zoo() = architecture;
  model->set_layer_batch(1);  // bytes below are per sample; costs are absolute
  const auto ranges = chunk_layer_ranges(setup);
  const int32_t batch = setup.training.global_batch / setup.training.data_parallel;
  for (int32_t c = 0; c < static_cast<int32_t>(ranges.size()); ++c) {
    const ChunkCostFit& fwd = fit.compute[2 * c];
    const ChunkCostFit& bwd = fit.compute[2 * c + 1];
    // Sizes the cost points are written at: powers of two up to the batch, and those measured.
    std::set<int32_t> grid(fwd.sizes.begin(), fwd.sizes.end());
    grid.insert(bwd.sizes.begin(), bwd.sizes.end());
    for (int32_t b = 1; b < 2 * batch; b *= 2) grid.insert(std::min(b, batch));
    int64_t chunk_parameters = 0;
    for (int32_t l = ranges[c].first; l < ranges[c].second; ++l) {
      chunk_parameters += setup.model.layers[l].parameter_bytes;
    }
    for (int32_t l = ranges[c].first; l < ranges[c].second; ++l) {
      const ModelLayer& source = setup.model.layers[l];
      proto::Layer* layer = model->add_layers();
      layer->set_name(source.name);
      layer->set_activation_bytes(std::llround(source.activation_bytes_per_sample));
      layer->set_parameter_bytes(source.parameter_bytes);
      if (source.stash_bytes_per_sample != source.activation_bytes_per_sample) {
        layer->set_stash_bytes(std::llround(source.stash_bytes_per_sample));
      }
      const double share = chunk_parameters > 0
                               ? static_cast<double>(source.parameter_bytes) / chunk_parameters
                               : 1.0 / (ranges[c].second - ranges[c].first);
      layer->set_optim_ms(1e3 *
                          (fit.optim_s[c] >= 0 ? fit.optim_s[c] * share : source.optim_seconds));
      // A line's fixed part is not divided among tensor-parallel GPUs (sim/spec/model_spec.h,
      // LayerCost::curve), measured points are: a split layer is written as points.
      if (setup.training.tensor_parallel == 1 && fwd.linear && bwd.linear && fwd.spans > 0 &&
          bwd.spans > 0) {
        const double at_one = layer_seconds(setup, fwd, ranges[c], l, 1);
        const double at_zero = layer_seconds(setup, fwd, ranges[c], l, 0);
        layer->set_fwd_fixed_ms(1e3 * at_zero);
        layer->set_fwd_per_sample_ms(1e3 * (at_one - at_zero));
        const double bwd_one = layer_seconds(setup, bwd, ranges[c], l, 1);
        const double bwd_zero = layer_seconds(setup, bwd, ranges[c], l, 0);
        layer->set_bwd_fixed_ms(1e3 * bwd_zero);
        layer->set_bwd_per_sample_ms(1e3 * (bwd_one - bwd_zero));
        continue;
      }
      // A profile's curve extrapolates its last segment, which noise can tilt down far
      // enough to cross zero at sizes nobody measured: a cost is never below zero.
      for (int32_t b : grid) {
        proto::CostPoint* point = layer->add_cost_points();
        point->set_batch(b);
        point->set_fwd_ms(1e3 * std::max(0.0, layer_seconds(setup, fwd, ranges[c], l, b)));
        point->set_bwd_ms(1e3 * std::max(0.0, layer_seconds(setup, bwd, ranges[c], l, b)));
      }
    }
  }
  // The measured run's placement, so that the fitted costs describe the same stages.
  proto::Schedule* schedule = out.mutable_schedule();
  schedule->clear_partition();
  for (const auto& [first, last] : ranges) schedule->add_partition(last - first);
  proto::Cluster* cluster = out.mutable_cluster();
  for (const auto& [link, proto_link] :
       {std::pair{&fit.intra_node, cluster->mutable_intra_node()},
        std::pair{&fit.inter_node, cluster->mutable_inter_node()}}) {
    if (link->transfers == 0) continue;
    proto_link->set_latency_us(1e6 * link->latency_s);
    proto_link->set_bandwidth_gbytes_per_s(link->bandwidth_bytes_per_s / 1e9);
  }
  if (fit.inter_node.transfers == 0 && !original.cluster().has_inter_node()) {
    cluster->clear_inter_node();
  }
  cluster->mutable_dispatch()->set_issue_us(1e6 * fit.dispatch.issue_s);
  cluster->mutable_dispatch()->set_wakeup_us(1e6 * fit.dispatch.wakeup_s);
  cluster->mutable_interference()->set_compute_slowdown(fit.interference.compute_slowdown);
  cluster->mutable_interference()->set_transfer_slowdown(fit.interference.transfer_slowdown);
  out.set_name((original.has_name() ? original.name() : setup.name) + "-fitted");
  return out;
}

std::string describe_fit(const TraceFit& fit, const std::vector<std::string>& timeline_names) {
  std::ostringstream out;
  out << "# Fitted by `pipetwin calibrate";
  for (const std::string& name : timeline_names) out << " --from " << name;
  out << "` to " << (timeline_names.size() == 1 ? "that measured run" : "those measured runs")
      << " (makespan";
  for (double m : fit.measured_makespans_s) out << " " << m * 1e3;
  out << " ms";
  if (timeline_names.size() > 1) out << ", median " << fit.measured_makespan_s * 1e3 << " ms";
  out << "):\n";
  for (const ChunkCostFit& b : fit.compute) {
    out << "#   stage " << b.chunk << (b.forward ? " FWD" : " BWD") << ": " << b.spans << " spans";
    if (b.spans == 0) {
      out << ", the scenario's costs kept\n";
    } else if (b.linear) {
      out << " of " << b.sizes.size() << " sizes -> " << b.fixed_s * 1e3 << " ms + "
          << b.per_sample_s * 1e3 << " ms/sample\n";
    } else {
      out << " of " << b.sizes.front() << " samples -> " << b.scale
          << " x the scenario's cost curve\n";
    }
  }
  out << "#   compute: rms residual " << fit.compute_rms_s * 1e6 << " us, " << fit.compute_outliers
      << " outlier spans left out; optimizer: median OPTIM span\n";
  for (const auto& [name, link] :
       {std::pair{"intra_node", &fit.intra_node}, std::pair{"inter_node", &fit.inter_node}}) {
    if (link->transfers == 0) continue;
    out << "#   " << name << ": " << link->transfers << " transfers -> latency "
        << link->latency_s * 1e6 << " us, bandwidth " << link->bandwidth_bytes_per_s / 1e9
        << " GB/s"
        << (link->link_kept        ? " (the scenario's: too few transfers)"
            : link->bandwidth_kept ? " (bandwidth kept: one message size)"
                                   : "")
        << (link->under_load ? ", as seen under load (overlap and duration moved together)" : "")
        << "\n";
  }
  out << "#   transfers: rms residual " << fit.transfer_rms_s * 1e6 << " us, "
      << fit.transfer_outliers << " outliers left out\n"
      << "#   interference: compute loses " << 100 * fit.interference.compute_slowdown
      << "% of its speed while a transfer runs"
      << (fit.compute_overlap_share < kMinOverlapShare
              ? " (not fitted: compute overlapped transfers for " +
                    std::to_string(100 * fit.compute_overlap_share) + "% of its time)"
              : std::string())
      << ", transfers " << 100 * fit.interference.transfer_slowdown << "% while compute runs\n"
      << "#   dispatch: " << fit.dispatch.issue_s * 1e6 << " us to issue an op after its lane's "
      << "previous one (mean of " << fit.issue_gaps << " gaps), " << fit.dispatch.wakeup_s * 1e6
      << " us to start after a dependency on another lane (mean of " << fit.wakeup_gaps << ")\n";
  return out.str();
}

}  // namespace pipetwin
