#include "analysis/megatron_op_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

constexpr char kForward[] = "forward-compute";
constexpr char kBackward[] = "backward-compute";
constexpr char kAllGather[] = "params-all-gather";
constexpr char kReduceScatter[] = "grads-reduce-scatter";
constexpr char kSeparate[] = "separate-grads-all-reduce";
constexpr char kEmbedding[] = "embedding-grads-all-reduce";
constexpr char kLayernorm[] = "layernorm-grads-all-reduce";
constexpr char kClip[] = "optimizer-clip-main-grad";
constexpr char kOptimizer[] = "optimizer";
constexpr char kGc[] = "gc";
// Slack for clocks of different hosts (the artifact's).
constexpr double kClockSlack = 5e-4;

// The ops of one stage of the template instance, by type, in measured order.
struct StageOps {
  std::map<std::string, std::vector<const MeasuredOp*>> by_type;
  std::vector<const MeasuredOp*> compute;  // forwards and backwards together
};

bool earlier(const MeasuredOp* a, const MeasuredOp* b) {
  return std::tie(a->start_s, a->seq_id, a->optype) < std::tie(b->start_s, b->seq_id, b->optype);
}

class GraphBuilder {
 public:
  GraphBuilder(const OpTrace& trace, int32_t template_step) : pp_(trace.meta.pp_size) {
    stages_.resize(pp_);
    for (const MeasuredOp& op : trace.ops) {
      if (op.step != template_step || op.dp_rank != 0) continue;
      StageOps& s = stages_[op.stage];
      s.by_type[op.optype].push_back(&op);
      if (op.optype == kForward || op.optype == kBackward) s.compute.push_back(&op);
      node_[{op.optype, op.seq_id, op.stage}] = graph_.add_node({op.optype, op.seq_id, op.stage});
    }
    for (StageOps& s : stages_) {
      for (auto& [type, ops] : s.by_type) std::sort(ops.begin(), ops.end(), earlier);
      std::sort(s.compute.begin(), s.compute.end(), earlier);
    }
    dp_ = trace.meta.dp_size;
  }

  OpGraph build() {
    for (int32_t s = 0; s < pp_; ++s) {
      chain(stages_[s].compute, {});
      for (const char* stream :
           {"forward-send", "forward-recv", "backward-send", "backward-recv"}) {
        chain(ops(s, stream), {});
      }
    }
    pair_pipeline_transfers();
    for (int32_t s = 0; s < pp_; ++s) first_backward_transfers_wait(s);
    if (dp_ > 1) {
      for (int32_t s = 0; s < pp_; ++s) {
        std::vector<const MeasuredOp*> dp_stream = ops(s, kAllGather);
        const std::vector<const MeasuredOp*> rs = ops(s, kReduceScatter);
        dp_stream.insert(dp_stream.end(), rs.begin(), rs.end());
        std::sort(dp_stream.begin(), dp_stream.end(), earlier);
        chain(dp_stream, {});
        forwards_wait_for_all_gathers(s);
      }
    }
    for (int32_t s = 0; s < pp_; ++s) after_last_compute(s);
    collectives();
    for (size_t v = 0; v < graph_.nodes.size(); ++v) {
      graph_.ends_step[v] = graph_.nodes[v].optype == kOptimizer ? 1 : 0;
    }
    return std::move(graph_);
  }

 private:
  std::vector<const MeasuredOp*> ops(int32_t stage, const std::string& type) const {
    const auto it = stages_[stage].by_type.find(type);
    return it == stages_[stage].by_type.end() ? std::vector<const MeasuredOp*>{} : it->second;
  }
  int32_t id(const MeasuredOp* op) const { return node_.at({op->optype, op->seq_id, op->stage}); }
  int32_t id(const std::string& type, int32_t seq, int32_t stage) const {
    const auto it = node_.find({type, seq, stage});
    return it == node_.end() ? -1 : it->second;
  }
  // Each op after the one before it; the first after `before`.
  void chain(const std::vector<const MeasuredOp*>& list, std::vector<int32_t> before) {
    for (const MeasuredOp* op : list) {
      for (int32_t b : before) graph_.depend(id(op), b);
      before = {id(op)};
    }
  }
  void chain_ids(const std::vector<int32_t>& list, std::vector<int32_t> before) {
    for (int32_t v : list) {
      if (v < 0) continue;
      for (int32_t b : before) graph_.depend(v, b);
      before = {v};
    }
  }

  // The sends and receives that carry a pass's data, matched to the computes they serve: a
  // receive after the stage's last compute of its type, or a send before its first ends, is
  // one that carries nothing (the profiler's extra ops).
  void pair_pipeline_transfers() {
    // (pass type, send or receive, stage) -> the matched transfer nodes in order.
    std::map<std::tuple<std::string, bool, int32_t>, std::vector<int32_t>> matched;
    for (int32_t s = 0; s < pp_; ++s) {
      for (const std::string pass : {"forward", "backward"}) {
        std::vector<const MeasuredOp*> computes;
        for (const MeasuredOp* c : stages_[s].compute) {
          if (c->optype == pass + "-compute") computes.push_back(c);
        }
        if (computes.empty()) continue;
        const double last_start = computes.back()->start_s;
        double first_end = computes.front()->end_s();
        for (const MeasuredOp* c : computes) first_end = std::min(first_end, c->end_s());
        for (const bool send : {true, false}) {
          std::vector<const MeasuredOp*> valid;
          for (const MeasuredOp* t : ops(s, pass + (send ? "-send" : "-recv"))) {
            if (send ? t->end_s() >= first_end - kClockSlack
                     : t->start_s <= last_start + kClockSlack) {
              valid.push_back(t);
            }
          }
          if (valid.empty()) continue;
          // The first stage's forward receive (and the last's backward) may be missing alone.
          size_t offset = 0;
          if (valid.size() + 1 == computes.size() && !send) offset = 1;
          if (valid.size() + offset != computes.size()) {
            throw InputError("stage " + std::to_string(s) + " has " + std::to_string(valid.size()) +
                             " " + pass + (send ? " sends" : " receives") + " for " +
                             std::to_string(computes.size()) + " " + pass +
                             " computes: not a Megatron pipeline step");
          }
          for (size_t k = 0; k < valid.size(); ++k) {
            const int32_t t = id(valid[k]), c = id(computes[k + offset]);
            if (send) {
              graph_.depend(t, c);
            } else {
              graph_.depend(c, t);
              if (k + offset > 0) graph_.depend(t, id(computes[k + offset - 1]));
            }
            matched[{pass, send, s}].push_back(t);
          }
        }
      }
    }
    std::set<int32_t> grouped;
    for (int32_t s = 0; s < pp_; ++s) {
      for (const std::string pass : {"forward", "backward"}) {
        const int32_t peer = pass == "forward" ? s + 1 : s - 1;
        if (peer < 0 || peer >= pp_) continue;
        const std::vector<int32_t>& sends = matched[{pass, true, s}];
        const std::vector<int32_t>& recvs = matched[{pass, false, peer}];
        if (sends.size() != recvs.size()) {
          throw InputError("stage " + std::to_string(s) + " sends " + std::to_string(sends.size()) +
                           " " + pass + " activations or " + "gradients that stage " +
                           std::to_string(peer) + " receives " + std::to_string(recvs.size()) +
                           " times");
        }
        for (size_t k = 0; k < sends.size(); ++k) {
          graph_.add_group({sends[k], recvs[k]}, false);
          grouped.insert(sends[k]);
          grouped.insert(recvs[k]);
        }
      }
    }
    // Transfers that carry nothing still wait on their stream: each a collective of one.
    for (int32_t v = 0; v < static_cast<int32_t>(graph_.nodes.size()); ++v) {
      const std::string& type = graph_.nodes[v].optype;
      const bool transfer =
          type.find("-send") != std::string::npos || type.find("-recv") != std::string::npos;
      if (transfer && !grouped.count(v)) graph_.add_group({v}, false);
    }
  }

  void first_backward_transfers_wait(int32_t s) {
    const std::vector<const MeasuredOp*>& compute = stages_[s].compute;
    size_t first = 0;
    while (first < compute.size() && compute[first]->optype != kBackward) ++first;
    if (first < 2 || first == compute.size()) return;
    const int32_t forward = id(compute[first - 2]);
    for (const char* type : {"backward-recv", "backward-send"}) {
      const int32_t t = id(type, 0, s);
      if (t >= 0) graph_.depend(t, forward);
    }
  }

  void forwards_wait_for_all_gathers(int32_t s) {
    std::set<int32_t> chunks;
    std::vector<const MeasuredOp*> gathers = ops(s, kAllGather);
    for (auto it = gathers.rbegin(); it != gathers.rend(); ++it) {
      if (!chunks.insert((*it)->model_chunk).second) continue;
      for (const MeasuredOp* c : stages_[s].compute) {
        if (c->optype == kForward && c->model_chunk == (*it)->model_chunk) {
          graph_.depend(id(c), id(*it));
          break;
        }
      }
    }
    // Gathers of no known chunk: before the stage's first forward.
    if (!gathers.empty() && chunks.count(-1)) {
      for (const MeasuredOp* c : stages_[s].compute) {
        if (c->optype == kForward) {
          graph_.depend(id(c), id(gathers.back()));
          break;
        }
      }
    }
  }

  void after_last_compute(int32_t s) {
    const std::vector<const MeasuredOp*>& compute = stages_[s].compute;
    if (compute.empty()) throw InputError("stage " + std::to_string(s) + " has no compute op");
    const MeasuredOp* last = *std::max_element(
        compute.begin(), compute.end(),
        [](const MeasuredOp* a, const MeasuredOp* b) { return a->end_s() < b->end_s(); });
    const int32_t gc = id(kGc, 0, s);
    std::vector<int32_t> before = {id(last)};
    if (gc >= 0) {
      graph_.depend(gc, id(last));
      before = {gc};
    }
    const int32_t reduce_scatters = static_cast<int32_t>(ops(s, kReduceScatter).size());
    std::vector<int32_t> tail = {id(kLayernorm, 0, s), id(kEmbedding, 0, s)};
    const bool overlapped = id(kSeparate, 0, s) >= 0;
    if (dp_ > 1 && overlapped) {
      tail.push_back(id(kSeparate, 0, s));
      if (reduce_scatters > 0) before.push_back(id(kReduceScatter, reduce_scatters - 1, s));
    } else if (dp_ > 1) {
      for (int32_t k = 0; k < reduce_scatters; ++k) tail.push_back(id(kReduceScatter, k, s));
    }
    tail.push_back(id(kClip, 0, s));
    tail.push_back(id(kOptimizer, 0, s));
    if (id(kOptimizer, 0, s) < 0) {
      throw InputError("stage " + std::to_string(s) +
                       " has no optimizer op: every step ends "
                       "with one");
    }
    chain_ids(tail, before);
  }

  void collectives() {
    for (int32_t s = 0; s < pp_; ++s) {
      for (const char* type : {kAllGather, kReduceScatter, kSeparate}) {
        if (dp_ == 1) break;
        for (const MeasuredOp* op : ops(s, type)) graph_.add_group({id(op)}, true);
      }
    }
    std::vector<int32_t> embedding;
    for (int32_t s : {0, pp_ - 1}) {
      const int32_t e = id(kEmbedding, 0, s);
      if (e >= 0 && (embedding.empty() || embedding.back() != e)) embedding.push_back(e);
    }
    if (!embedding.empty()) graph_.add_group(embedding, false);
    std::vector<int32_t> clip;
    for (int32_t s = 0; s < pp_; ++s) {
      if (id(kClip, 0, s) >= 0) clip.push_back(id(kClip, 0, s));
    }
    if (!clip.empty()) graph_.add_group(clip, true);
  }

  int32_t pp_ = 1, dp_ = 1;
  std::vector<StageOps> stages_;
  std::map<OpKey, int32_t> node_;
  OpGraph graph_;
};

}  // namespace

bool is_communication_optype(const std::string& optype) {
  return optype.find("-send") != std::string::npos || optype.find("-recv") != std::string::npos ||
         optype == kAllGather || optype == kReduceScatter || optype == kSeparate ||
         optype == kLayernorm || optype == kEmbedding || optype == kClip;
}

namespace {

MeasuredJob megatron_job_of(const OpTrace& trace) {
  if (trace.meta.vpp_size != 1) {
    throw InputError("vpp_size " + std::to_string(trace.meta.vpp_size) +
                     ": the dependency model covers Megatron's 1F1B without virtual stages");
  }
  std::set<int32_t> steps;
  for (const MeasuredOp& op : trace.ops) steps.insert(op.step);
  MeasuredJob job;
  job.graph = GraphBuilder(trace, *steps.begin()).build();
  std::map<OpKey, int32_t> node;
  for (size_t v = 0; v < job.graph.nodes.size(); ++v) {
    node[job.graph.nodes[v]] = static_cast<int32_t>(v);
  }
  OpInstances& in = job.instances;
  in.dp_size = trace.meta.dp_size;
  in.nodes = static_cast<int32_t>(job.graph.nodes.size());
  // Per step, its ops; a step missing one of the graph's is dropped.
  std::map<int32_t, std::vector<const MeasuredOp*>> by_step;
  for (const MeasuredOp& op : trace.ops) by_step[op.step].push_back(&op);
  const size_t per_step = static_cast<size_t>(in.dp_size) * static_cast<size_t>(in.nodes);
  for (const auto& [step, ops] : by_step) {
    std::vector<double> start(per_step, -1), duration(per_step, 0);
    double first = ops.front()->start_s, last = ops.front()->end_s();
    for (const MeasuredOp* op : ops) {
      first = std::min(first, op->start_s);
      last = std::max(last, op->end_s());
      const auto it = node.find({op->optype, op->seq_id, op->stage});
      if (it == node.end()) continue;
      const size_t i = static_cast<size_t>(op->dp_rank) * in.nodes + it->second;
      start[i] = op->start_s;
      duration[i] = op->duration_s;
    }
    if (std::find(start.begin(), start.end(), -1.0) != start.end()) continue;
    in.steps.push_back(step);
    in.start_s.insert(in.start_s.end(), start.begin(), start.end());
    in.duration_s.insert(in.duration_s.end(), duration.begin(), duration.end());
    in.step_start_s.push_back(first);
    in.measured_step_s.push_back(last - first);
  }
  if (in.steps.empty()) throw InputError("no step holds every op of the first step's ranks");
  derive_transfer_and_delay(job.graph, in);
  return job;
}

}  // namespace

MeasuredJob megatron_job(const OpTrace& trace) {
  try {
    return megatron_job_of(trace);
  } catch (const InputError& e) {
    throw InputError(trace.source + ": " + e.what());
  }
}

}  // namespace pipetwin
