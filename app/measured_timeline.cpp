#include "app/measured_timeline.h"

#include <filesystem>
#include <stdexcept>

#include "analysis/compressed_file.h"
#include "analysis/kineto_trace.h"
#include "analysis/op_trace.h"
#include "analysis/op_trace_timeline.h"
#include "analysis/pass_spans.h"
#include "sim/spec/errors.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

// `meta-X.yaml` beside `timeline-X.json[.gz]`; empty when there is none.
std::string meta_beside(const std::string& path) {
  const std::filesystem::path p(path);
  std::string name = p.filename().string();
  for (const char* suffix : {".gz", ".json"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      name.resize(name.size() - s.size());
    }
  }
  const std::string prefix = "timeline-";
  if (name.rfind(prefix, 0) != 0) return "";
  const std::filesystem::path meta =
      p.parent_path() / ("meta-" + name.substr(prefix.size()) + ".yaml");
  return std::filesystem::exists(meta) ? meta.string() : "";
}

}  // namespace

Timeline read_any_timeline(const std::string& path) {
  std::string proto_error;
  try {
    return read_timeline_file(path);
  } catch (const std::runtime_error& e) {
    proto_error = e.what();
  }
  if (!std::filesystem::is_regular_file(path)) throw InputError(proto_error);
  const char first = first_text_character(path);
  const std::string meta = meta_beside(path);
  if (first == '[' || (first == '{' && !meta.empty())) {
    if (meta.empty()) {
      throw InputError(path +
                       ": a Megatron-style op timeline needs its parallel sizes: a meta-X.yaml "
                       "beside timeline-X.json, or `pipetwin import " +
                       path + " --meta META.yaml -o F.timeline`");
    }
    return timeline_from_op_trace(read_megatron_op_trace(path, meta));
  }
  if (first == '{') return passes_of(timeline_from_kineto({path}, default_annotation_rules()));
  throw InputError(proto_error + ", nor a JSON trace (a PyTorch profiler trace or a " +
                   "Megatron-style op timeline)");
}

}  // namespace pipetwin
