// A measured training job as an op timeline: every op of every rank and step with its start
// and duration, the way Megatron-LM's timers record them (forward-compute, backward-compute,
// forward-send, grads-reduce-scatter, optimizer, ...). ByteDance's straggler study (OSDI'25)
// publishes its jobs in this form: Chrome trace events with args.step, mb_id, model_chunk and
// seq_id, one process per data-parallel rank and a thread per pipeline rank and stream, and
// the job's parallel sizes in a small YAML file beside it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pipetwin {

struct MeasuredOp {
  int32_t dp_rank = 0;
  int32_t stage = 0;  // pipeline rank
  int32_t step = 0;
  std::string optype;  // Megatron's timer name: "forward-compute", "grads-reduce-scatter", ...
  double start_s = 0;
  double duration_s = 0;
  int32_t seq_id = 0;        // its place among the ops of its type on its rank in the step
  int32_t model_chunk = -1;  // virtual stage on the rank (-1: not a pass)
  int32_t microbatch = -1;   // -1: not a pass
  double end_s() const { return start_s + duration_s; }
};

struct OpTraceMeta {
  std::string name;  // trial_name
  int32_t dp_size = 1;
  int32_t pp_size = 1;
  int32_t tp_size = 1;
  int32_t vpp_size = 1;
};

struct OpTrace {
  std::string source;  // the timeline's path, for messages
  OpTraceMeta meta;
  std::vector<MeasuredOp> ops;
};

// Reads a Megatron-style op timeline (JSON, or gzipped JSON when the file starts with gzip's
// magic bytes) and its parallel sizes (`meta`: YAML with dp_size, pp_size, tp_size, vpp_size,
// trial_name). Ops of tensor-parallel ranks other than 0 are left out: the ranks of a
// tensor-parallel group run the same ops. Throws InputError naming the file and the event (its
// index in traceEvents) or the field.
OpTrace read_megatron_op_trace(const std::string& timeline_path, const std::string& meta_path);

}  // namespace pipetwin
