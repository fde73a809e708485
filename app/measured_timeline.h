// A timeline file as `compare`, `report`, `trace` and `calibrate --from` take it: a pipetwin
// timeline (written by `simulate --timeline`, `run --timeline` or `import`), or a real job's
// trace, read as `pipetwin import` reads it (docs/compare.md, "Traces of other jobs"):
//  - a PyTorch profiler (Kineto) trace of one rank, JSON or gzipped JSON (an object with
//    traceEvents), its kernels folded into passes as `import --passes` folds them;
//  - a Megatron-style op timeline `timeline-X.json[.gz]` (a JSON array of events, or an object
//    beside a `meta-X.yaml`), with the parallel sizes of the `meta-X.yaml` beside it.
// A job of several profiler files, or one that needs a --map or --scenario, goes through
// `pipetwin import`.
#pragma once

#include <string>

#include "traces/timeline.h"

namespace pipetwin {

// Throws InputError naming the file: neither kind, or an op timeline without its meta file.
Timeline read_any_timeline(const std::string& path);

}  // namespace pipetwin
