#include "analysis/kineto_trace.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "analysis/compressed_file.h"
#include "analysis/json_fields.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

const std::set<std::string>& program_ops() {
  static const std::set<std::string> ops = {
      "FWD",        "BWD",       "BWD_INPUT", "BWD_WEIGHT", "OPTIM",          "SEND_ACT",
      "RECV_ACT",   "SEND_GRAD", "RECV_GRAD", "ALLREDUCE",  "REDUCE_SCATTER", "ALL_GATHER",
      "ALL_TO_ALL", "OFFLOAD",   "RELOAD"};
  return ops;
}

// Why a --map pattern could take exponential time to match, or "" when it cannot: a
// repetition (*, +, {n,m}) of something already repeated (a**, a?+, (a+)*) or of a group with
// alternatives ((a|aa)*), which backtracking matchers such as std::regex explore in every split;
// a back-reference or a repetition count of more than four digits (libstdc++ overflows reading
// long ones); or more than 256 characters.
std::string pattern_risk(const std::string& pattern) {
  if (pattern.size() > 256) return "longer than 256 characters";
  std::vector<bool> group_risky = {false};  // per open group: repeats or alternatives inside
  bool atom_repeated = false;  // the atom just before (a character, class or group), as repeated
  bool after_quantifier = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '*' || c == '+' || c == '{') {
      if (atom_repeated) return "a repetition of something already repeated";
      if (c == '{') {
        const size_t close = std::min(pattern.find('}', i), pattern.size() - 1);
        int digits = 0;  // libstdc++ reads a count into a long without checking its range
        for (size_t k = i + 1; k < close; ++k) {
          digits = std::isdigit(static_cast<unsigned char>(pattern[k])) ? digits + 1 : 0;
          if (digits > 4) return "a repetition count above 9999";
        }
        i = close;
      }
      atom_repeated = after_quantifier = true;
      group_risky.back() = true;
      continue;
    }
    if (c == '?') {  // after a quantifier, its lazy mark; else "optional", which repeats nothing
      if (!after_quantifier) atom_repeated = true;
      after_quantifier = false;
      continue;
    }
    after_quantifier = false;
    if (c == '|') group_risky.back() = true;
    if (c == '(') {
      group_risky.push_back(false);
      atom_repeated = false;
      continue;
    }
    if (c == ')' && group_risky.size() > 1) {
      atom_repeated = group_risky.back();  // repeating it would nest
      group_risky.pop_back();
      if (atom_repeated) group_risky.back() = true;
      continue;
    }
    if (c == '\\' && i + 1 < pattern.size() &&
        std::isdigit(static_cast<unsigned char>(pattern[i + 1]))) {
      return "a back-reference (\\N), which annotation names do not need";
    }
    if (c == '\\') ++i;  // an escaped character is one atom
    if (c == '[') {      // a class is one atom
      for (++i; i < pattern.size() && pattern[i] != ']'; ++i) {
        if (pattern[i] == '\\') ++i;
      }
    }
    atom_repeated = false;
  }
  return "";
}

AnnotationRule rule(const std::string& pattern, const std::string& op) {
  return {pattern, std::regex(pattern, std::regex::ECMAScript | std::regex::icase), op};
}

// A CPU or GPU range: [start, end) in microseconds (a range of no length holds its instant),
// its name, and for a GPU range its stream (-1: a CPU range).
struct Range {
  double start_us = 0;
  double end_us = 0;
  std::string name;
  int64_t stream = -1;
};

// The op of the innermost range of `ranges` (sorted by start) on `stream` that holds [from, to]
// (a CPU launch: from == to) and that a rule maps, with that range (null: none).
struct Annotated {
  std::string op;
  const Range* range = nullptr;
};
Annotated op_at(const std::vector<Range>& ranges, double from, double to, int64_t stream,
                const std::vector<AnnotationRule>& rules) {
  Annotated found;
  double innermost = std::numeric_limits<double>::infinity();
  for (const Range& r : ranges) {
    if (r.start_us > from) break;
    const bool holds = to < r.end_us || (to == r.end_us && (from < to || r.start_us == r.end_us));
    if (r.stream != stream || !holds || r.end_us - r.start_us >= innermost) continue;
    for (const AnnotationRule& rl : rules) {
      if (std::regex_search(r.name, rl.regex)) {
        found = {rl.op, &r};
        innermost = r.end_us - r.start_us;
        break;
      }
    }
  }
  return found;
}

// Microbatches from the annotations: on one rank, the k-th range of an op in a step (by
// start) is its microbatch k, as a pipeline schedule without virtual stages runs each
// direction in microbatch order. Optimizer ranges number none: however many a step nests,
// they are its one update. `ranges[i]` is the annotation of the rank's span `first + i`.
void number_microbatches(Timeline& timeline, size_t first,
                         const std::vector<const Range*>& ranges) {
  std::map<std::pair<std::string, int32_t>, std::vector<const Range*>> instances;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i])
      instances[{timeline.spans[first + i].op, timeline.spans[first + i].iteration}].push_back(
          ranges[i]);
  }
  const auto earlier = [](const Range* a, const Range* b) {
    return a->start_us != b->start_us ? a->start_us < b->start_us : std::less<const Range*>()(a, b);
  };
  for (auto& [key, list] : instances) {
    std::sort(list.begin(), list.end(), earlier);
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (!ranges[i]) continue;
    Span& span = timeline.spans[first + i];
    if (span.op == "OPTIM") continue;  // one step per iteration, of no one microbatch
    const auto& list = instances[{span.op, span.iteration}];
    span.microbatch = static_cast<int32_t>(
        std::lower_bound(list.begin(), list.end(), ranges[i], earlier) - list.begin());
  }
}

// NCCL's kernels name their collective: ncclDevKernel_AllReduce_Sum_f32_RING_LL, ...
std::string nccl_op(const std::string& kernel) {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"AllReduce", "ALLREDUCE"},  {"ReduceScatter", "REDUCE_SCATTER"},
      {"AllGather", "ALL_GATHER"}, {"SendRecv", "ALL_TO_ALL"},
      {"Send", "SEND_ACT"},        {"Recv", "RECV_ACT"},
      {"Broadcast", "ALLREDUCE"}};
  for (const auto& [needle, op] : names) {
    if (kernel.find(needle) != std::string::npos) return op;
  }
  return "";
}

bool is_nccl(const std::string& kernel) { return kernel.rfind("nccl", 0) == 0; }

// A thread id as profilers write it: a number, or a name ending in one ("stream 7").
int64_t stream_number(const nlohmann::json& tid) {
  if (tid.is_number_integer()) return tid.get<int64_t>();
  if (!tid.is_string()) return 0;
  const std::string text = tid.get<std::string>();
  const size_t digits = text.find_last_not_of("0123456789");
  const std::string tail = digits == std::string::npos ? text : text.substr(digits + 1);
  return tail.empty() || tail.size() > 18 ? 0 : std::stoll(tail);
}

// One rank's trace into `timeline`; `current` follows the event being read.
void read_rank(const nlohmann::json& trace, const std::string& path, int32_t file_index,
               const std::vector<AnnotationRule>& rules, std::set<int32_t>& devices,
               Timeline& timeline, double& origin_us, size_t& current) {
  int32_t device = file_index;
  if (trace.contains("distributedInfo") && trace["distributedInfo"].is_object()) {
    device = static_cast<int32_t>(integer_or(trace["distributedInfo"], "rank", device));
  }
  if (!devices.insert(device).second) {
    throw InputError(path + ": rank " + std::to_string(device) + " again (one file per rank)");
  }
  timeline.devices.push_back({device, 0, "rank" + std::to_string(device)});

  std::vector<Range> cpu, gpu, steps;
  std::map<int64_t, double> launch_us;  // correlation id -> CPU launch time
  struct Kernel {
    double ts = 0, dur = 0;
    std::string name, cat;
    int64_t correlation = -1;
    int64_t stream = 0;
  };
  std::vector<Kernel> kernels;
  const nlohmann::json& events = trace["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& e = events[current = i];
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    const std::string where = path + ": event " + std::to_string(i);
    const auto ts = e.find("ts"), dur = e.find("dur");
    if (ts == e.end() || !ts->is_number() || dur == e.end() || !dur->is_number() ||
        !(dur->get<double>() >= 0)) {
      throw InputError(where + ": needs numbers ts and dur (at least 0)");
    }
    const double start = ts->get<double>(), length = dur->get<double>();
    const std::string cat = e.value("cat", ""), name = e.value("name", "");
    const nlohmann::json args = e.value("args", nlohmann::json::object());
    const int64_t correlation =
        args.is_object() && args.contains("correlation") && args["correlation"].is_number_integer()
            ? args["correlation"].get<int64_t>()
            : -1;
    // A GPU event's stream: args.stream, else its thread (a number, or "stream 7").
    int64_t stream = 0;
    if (args.is_object() && args.contains("stream") && args["stream"].is_number_integer()) {
      stream = args["stream"].get<int64_t>();
    } else if (e.contains("tid")) {
      stream = stream_number(e["tid"]);
    }
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      kernels.push_back({start, length, name, cat, correlation, stream});
      origin_us = std::min(origin_us, start);
    } else if (cat == "gpu_user_annotation") {
      gpu.push_back({start, start + length, name, stream});
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      if (correlation >= 0) launch_us[correlation] = start;
    } else if (name.rfind("ProfilerStep#", 0) == 0) {
      steps.push_back({start, start + length, name});
    } else if (cat == "user_annotation") {
      cpu.push_back({start, start + length, name});
    }
  }
  const auto by_start = [](const Range& a, const Range& b) { return a.start_us < b.start_us; };
  std::sort(cpu.begin(), cpu.end(), by_start);
  std::sort(gpu.begin(), gpu.end(), by_start);
  std::sort(steps.begin(), steps.end(), by_start);
  const size_t first = timeline.spans.size();
  std::vector<const Range*> annotation;
  for (const Kernel& k : kernels) {
    Span span;
    span.device = device;
    span.name = k.name;
    span.lane = k.cat != "kernel" ? "copy" : is_nccl(k.name) ? "collective" : "compute";
    Annotated found = op_at(gpu, k.ts, k.ts + k.dur, k.stream, rules);
    const auto launch = launch_us.find(k.correlation);
    if (found.op.empty() && launch != launch_us.end()) {
      found = op_at(cpu, launch->second, launch->second, -1, rules);
    }
    span.op = found.op;
    annotation.push_back(found.range);
    if (span.op.empty() && is_nccl(k.name)) span.op = nccl_op(k.name);
    const double cpu_time = launch != launch_us.end() ? launch->second : k.ts;
    for (size_t s = 0; s < steps.size(); ++s) {
      if (cpu_time >= steps[s].start_us && cpu_time < steps[s].end_us) {
        span.iteration = static_cast<int32_t>(s);
        break;
      }
    }
    // In microseconds until the clock's origin is known: epoch microseconds (1.7e15) lose
    // their fraction in seconds.
    span.start_s = k.ts;
    span.end_s = k.ts + k.dur;
    timeline.spans.push_back(std::move(span));
  }
  number_microbatches(timeline, first, annotation);
}

// The clock from the earliest event, in seconds; devices in rank order.
void finish(Timeline& timeline, double origin_us) {
  if (timeline.spans.empty()) throw InputError("the traces hold no GPU kernel, copy or set");
  for (Span& span : timeline.spans) {
    span.start_s = (span.start_s - origin_us) * 1e-6;
    span.end_s = (span.end_s - origin_us) * 1e-6;
  }
  std::sort(timeline.devices.begin(), timeline.devices.end(),
            [](const TimelineDevice& a, const TimelineDevice& b) { return a.id < b.id; });
}

}  // namespace

std::vector<AnnotationRule> default_annotation_rules() {
  return {rule("backward", "BWD"),
          rule("forward", "FWD"),
          rule("optimizer|optim\\.step|\\.step#|^step$", "OPTIM"),
          rule("all_?reduce|allreduce", "ALLREDUCE"),
          rule("reduce_?scatter|reduce-scatter", "REDUCE_SCATTER"),
          rule("all_?gather|all-gather", "ALL_GATHER"),
          rule("all_?to_?all|alltoall", "ALL_TO_ALL"),
          rule("send", "SEND_ACT"),
          rule("recv", "RECV_ACT")};
}

std::vector<AnnotationRule> read_annotation_rules(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read the file");
  std::vector<AnnotationRule> rules;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const size_t equals = line.rfind('=');
    if (equals == std::string::npos) throw InputError(where + ": expected REGEX = OP");
    auto trim = [](std::string t) {
      t.erase(0, t.find_first_not_of(" \t"));
      t.erase(t.find_last_not_of(" \t\r") + 1);
      return t;
    };
    const std::string pattern = trim(line.substr(0, equals)), op = trim(line.substr(equals + 1));
    if (!program_ops().count(op)) throw InputError(where + ": '" + op + "' is not a Program op");
    if (const std::string risk = pattern_risk(pattern); !risk.empty()) {
      throw InputError(where + ": '" + pattern + "': " + risk +
                       " (its matching could take exponential time)");
    }
    try {
      rules.push_back(rule(pattern, op));
    } catch (const std::regex_error& e) {
      throw InputError(where + ": '" + pattern + "' is not a regular expression (" + e.what() +
                       ")");
    }
  }
  return rules;
}
Timeline timeline_from_kineto(const std::vector<std::string>& paths,
                              const std::vector<AnnotationRule>& rules) {
  Timeline timeline;
  timeline.source = "kineto";
  double origin_us = std::numeric_limits<double>::infinity();
  std::set<int32_t> devices;
  for (size_t f = 0; f < paths.size(); ++f) {
    const std::string& path = paths[f];
    nlohmann::json trace;
    try {
      trace = nlohmann::json::parse(read_maybe_gzipped(path));
    } catch (const nlohmann::json::exception& e) {  // parse_error, or a number out of range
      throw InputError(path + ": not JSON (" + e.what() + ")");
    }
    if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
      throw InputError(path + ": not a PyTorch profiler trace (no traceEvents array)");
    }
    size_t current = 0;  // the event being read, for the message of a type error
    try {
      read_rank(trace, path, static_cast<int32_t>(f), rules, devices, timeline, origin_us, current);
    } catch (const nlohmann::json::exception& e) {
      // A field of another type than the format's (a name that is a number, say).
      throw InputError(path + ": event " + std::to_string(current) + ": " + e.what());
    }
  }
  finish(timeline, origin_us);
  return timeline;
}

}  // namespace pipetwin
