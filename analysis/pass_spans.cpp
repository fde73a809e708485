#include "analysis/pass_spans.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace pipetwin {
namespace {

bool is_pass_op(const std::string& op) {
  return op == "FWD" || op == "BWD" || op == "BWD_INPUT" || op == "BWD_WEIGHT" || op == "OPTIM";
}

}  // namespace

Timeline passes_of(const Timeline& kernels) {
  Timeline out = kernels;
  out.spans.clear();
  using Key = std::tuple<int32_t, std::string, int32_t, int32_t>;  // device, op, step, microbatch
  std::map<Key, size_t> pass_of;
  for (const Span& span : kernels.spans) {
    // A pass's copies and sets are its GPU work too (a copy stream's, beside the kernels).
    if (span.lane == "collective" || !is_pass_op(span.op) ||
        (span.microbatch < 0 && span.op != "OPTIM")) {
      out.spans.push_back(span);
      continue;
    }
    const Key key{span.device, span.op, span.iteration, span.microbatch};
    const auto [it, added] = pass_of.try_emplace(key, out.spans.size());
    if (added) {
      Span pass = span;
      pass.lane = "compute";
      pass.name = span.op == "OPTIM" ? span.op : span.op + " " + std::to_string(span.microbatch);
      out.spans.push_back(std::move(pass));
      continue;
    }
    Span& pass = out.spans[it->second];
    pass.start_s = std::min(pass.start_s, span.start_s);
    pass.end_s = std::max(pass.end_s, span.end_s);
  }
  return out;
}

}  // namespace pipetwin
