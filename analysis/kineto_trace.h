// PyTorch profiler (Kineto) traces, one JSON file per rank, as pipetwin Timelines: every GPU
// kernel, copy and set becomes a span on its device (the file's distributedInfo.rank), on the
// lane of its kind (NCCL kernels on "collective", copies and sets on "copy", the rest on
// "compute"), at its measured time. A span's op comes from the annotation around it: a
// gpu_user_annotation over the kernel on the GPU, else the innermost user annotation around the
// CPU launch of the kernel (the cuda_runtime event of the same correlation id), mapped to a
// Program op by the first matching rule (Megatron's and torchtitan's range names by default;
// a --map file for others); an NCCL kernel without one takes the op of its own name. Kernels
// no rule matches keep op "" (unmatched): their time still counts. ProfilerStep#N numbers the
// iterations.
#pragma once

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "traces/timeline.h"

namespace pipetwin {

struct AnnotationRule {
  std::string pattern;  // ECMAScript regex, searched case-insensitively in the annotation
  std::regex regex;
  std::string op;  // "FWD", "BWD", "OPTIM", "ALLREDUCE", ...
};

// Backward before forward (a backward range may name its forward), optimizer, then the
// collectives and pipeline transfers by their usual names.
std::vector<AnnotationRule> default_annotation_rules();

// A --map file: one rule per line, "REGEX = OP" ('#' starts a comment). Throws InputError
// naming the file and line of a bad regex or an unknown op.
std::vector<AnnotationRule> read_annotation_rules(const std::string& path);

// The traces (gzipped or not) as one Timeline, its clock starting at the earliest event. Throws
// InputError naming the file and the event of what it cannot read.
Timeline timeline_from_kineto(const std::vector<std::string>& paths,
                              const std::vector<AnnotationRule>& rules);

}  // namespace pipetwin
