// The dependency model of a Megatron-LM training step, built from its measured ops (one step
// of data-parallel rank 0, which every step and rank shares), after ByteDance's straggler study
// (OSDI'25, its artifact's dependency model):
//  - each rank's compute ops (forward-compute, backward-compute) in their measured order, and
//    each of its four pipeline streams (forward-send, forward-recv, backward-send,
//    backward-recv) likewise;
//  - the k-th send of a pass type waits for the k-th compute of that type; the k-th compute
//    waits for the k-th receive, which waits for the compute before it; a send and its peer's
//    receive (the next stage's for forwards, the previous one's for backwards) are one
//    collective; the first backward send and receive wait for the second forward before the
//    first backward;
//  - with data parallelism, the rank's params-all-gather and grads-reduce-scatter in order, the
//    first forward of each model chunk after its chunk's all-gather;
//  - after the last compute: gc, layernorm-grads-all-reduce, embedding-grads-all-reduce (first
//    and last stage, one collective), the reduce-scatters (or, overlapped,
//    separate-grads-all-reduce), optimizer-clip-main-grad (one collective over the stages and
//    the data-parallel ranks), optimizer, which ends the step.
#pragma once

#include "analysis/op_graph.h"
#include "analysis/op_trace.h"

namespace pipetwin {

// Megatron's timer names of communication (what-if analysis takes their median, not mean).
bool is_communication_optype(const std::string& optype);

struct MeasuredJob {
  OpGraph graph;
  OpInstances instances;
};

// The graph and every step's measured instances of it (steps lacking an op of the graph are
// dropped). Throws InputError when the trace does not have the shape of a Megatron step.
MeasuredJob megatron_job(const OpTrace& trace);

}  // namespace pipetwin
