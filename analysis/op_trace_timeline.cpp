#include "analysis/op_trace_timeline.h"

#include <algorithm>
#include <map>
#include <set>

namespace pipetwin {
namespace {

struct Placed {
  const char* op;
  const char* lane;
};

Placed placed(const std::string& optype) {
  static const std::map<std::string, Placed> table = {
      {"forward-compute", {"FWD", "compute"}},
      {"backward-compute", {"BWD", "compute"}},
      {"optimizer", {"OPTIM", "compute"}},
      {"forward-send", {"SEND_ACT", "send"}},
      {"forward-recv", {"RECV_ACT", "recv"}},
      {"backward-send", {"SEND_GRAD", "send"}},
      {"backward-recv", {"RECV_GRAD", "recv"}},
      {"grads-reduce-scatter", {"REDUCE_SCATTER", "data-parallel"}},
      {"params-all-gather", {"ALL_GATHER", "data-parallel"}},
      {"separate-grads-all-reduce", {"ALLREDUCE", "data-parallel"}},
      {"embedding-grads-all-reduce", {"ALLREDUCE", "data-parallel"}},
      {"layernorm-grads-all-reduce", {"ALLREDUCE", "collective"}},
      {"optimizer-clip-main-grad", {"ALLREDUCE", "collective"}},
  };
  const auto it = table.find(optype);
  return it == table.end() ? Placed{"", "compute"} : it->second;
}

}  // namespace

Timeline timeline_from_op_trace(const OpTrace& trace) {
  Timeline timeline;
  timeline.source = "megatron";
  const int32_t pp = trace.meta.pp_size;
  for (int32_t d = 0; d < trace.meta.dp_size * pp; ++d) {
    timeline.devices.push_back(
        {d, 0, "dp" + std::to_string(d / pp) + "-pp" + std::to_string(d % pp)});
  }
  // Each step's first start and last end; a trace samples steps of a longer run, which the
  // timeline places back to back, as the iterations of one run.
  std::map<int32_t, std::pair<double, double>> extent;
  for (const MeasuredOp& op : trace.ops) {
    auto [it, added] = extent.try_emplace(op.step, op.start_s, op.end_s());
    it->second.first = std::min(it->second.first, op.start_s);
    it->second.second = std::max(it->second.second, op.end_s());
  }
  // Microbatches per replica and step: a pass's mb_id counts within its data-parallel rank,
  // pipetwin's microbatch index across the replicas (replica r's m-th is r x count + m).
  std::map<std::pair<int32_t, int32_t>, int32_t> per_replica;
  for (const MeasuredOp& op : trace.ops) {
    int32_t& count = per_replica[{op.dp_rank, op.step}];
    count = std::max(count, op.microbatch + 1);
  }
  std::map<int32_t, int32_t> iteration;
  std::map<int32_t, double> offset;
  double elapsed = 0;
  for (const auto& [step, span] : extent) {
    iteration[step] = static_cast<int32_t>(iteration.size());
    offset[step] = elapsed - span.first;
    elapsed += span.second - span.first;
  }
  for (const MeasuredOp& op : trace.ops) {
    const Placed where = placed(op.optype);
    Span span;
    span.device = op.dp_rank * pp + op.stage;
    span.lane = where.lane;
    span.op = where.op;
    span.name = op.optype;
    if (op.microbatch >= 0) span.name.append(" ").append(std::to_string(op.microbatch));
    // A pipeline transfer's peer: the next stage for forwards sent and backwards received.
    const bool to_next = op.optype == "forward-send" || op.optype == "backward-recv";
    const bool to_previous = op.optype == "forward-recv" || op.optype == "backward-send";
    const int32_t peer_stage = op.stage + (to_next ? 1 : to_previous ? -1 : 0);
    if ((to_next || to_previous) && peer_stage >= 0 && peer_stage < pp) {
      span.peer_device = op.dp_rank * pp + peer_stage;
    }
    // With virtual stages, pipetwin's chunk c runs on pipeline rank c mod pp, as Megatron's
    // model chunk v of rank p holds the layers of chunk v x pp + p.
    span.stage = op.model_chunk > 0 ? op.model_chunk * pp + op.stage : op.stage;
    // A pipeline transfer carries no mb_id; without virtual stages each direction's
    // transfers go in microbatch order, so its seq_id is its microbatch.
    const int32_t local = op.microbatch >= 0                                     ? op.microbatch
                          : (to_next || to_previous) && trace.meta.vpp_size == 1 ? op.seq_id
                                                                                 : -1;
    if (local >= 0) {
      span.microbatch = op.dp_rank * per_replica[{op.dp_rank, op.step}] + local;
    }
    span.iteration = iteration[op.step];
    span.start_s = op.start_s + offset[op.step];
    span.end_s = op.end_s() + offset[op.step];
    timeline.spans.push_back(std::move(span));
  }
  return timeline;
}

}  // namespace pipetwin
