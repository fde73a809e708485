#include "analysis/op_trace.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <utility>

#include "analysis/compressed_file.h"
#include "analysis/json_fields.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

OpTraceMeta read_meta(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw InputError(path + ": cannot read the file");
  } catch (const YAML::Exception& e) {
    throw InputError(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) throw InputError(path + ": expected a map of the job's parallel sizes");
  OpTraceMeta meta;
  const auto size = [&](const char* key, int32_t& field, bool required) {
    const YAML::Node node = root[key];
    if (!node) {
      if (required) throw InputError(path + ": " + key + ": missing");
      return;
    }
    try {
      field = node.as<int32_t>();
    } catch (const YAML::Exception&) {
      throw InputError(path + ":" + std::to_string(node.Mark().line + 1) + ": " + key +
                       ": not a whole number");
    }
    if (field < 1 || field > (1 << 20)) {
      throw InputError(path + ":" + std::to_string(node.Mark().line + 1) + ": " + key +
                       ": must be between 1 and 2^20, got " + std::to_string(field));
    }
  };
  size("dp_size", meta.dp_size, true);
  size("pp_size", meta.pp_size, true);
  size("tp_size", meta.tp_size, false);
  size("vpp_size", meta.vpp_size, false);
  if (root["trial_name"]) meta.name = root["trial_name"].as<std::string>();
  return meta;
}

// A rank's thread: "PP rank 3, TP rank 0, compute".
struct ThreadRank {
  int32_t stage = 0;
  int32_t tensor_rank = 0;
};

int32_t whole_arg(const nlohmann::json& args, const char* key, const std::string& where) {
  const auto it = args.find(key);
  if (it == args.end() || !it->is_number_integer()) {
    throw InputError(where + ": args." + key + " missing or not a whole number");
  }
  return it->get<int32_t>();
}

// Every event into `trace`: the metadata first (which data-parallel rank each process is, which
// pipeline and tensor rank each thread), then the ops.
// `current` follows the event being read, for the message of an error it throws.
void read_events(const nlohmann::json& events, const std::string& timeline_path, OpTrace& trace,
                 size_t& current) {
  std::map<int64_t, int32_t> dp_of_pid;
  std::map<std::pair<int64_t, int64_t>, ThreadRank> rank_of_thread;
  // At most 7 digits: ranks below ten million, which std::stoi reads.
  const std::regex dp_name(R"(DP rank \[?(\d{1,7})\]?)");
  const std::regex thread_name(R"(PP rank (\d{1,7}), TP rank (\d{1,7}))");
  for (size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& e = events[current = i];
    if (!e.is_object() || e.value("ph", "") != "M") continue;
    const std::string where = timeline_path + ": event " + std::to_string(i);
    const std::string name = e.value("name", "");
    const nlohmann::json args = e.value("args", nlohmann::json::object());
    const std::string label = args.is_object() ? args.value("name", "") : "";
    std::smatch m;
    if (name == "process_name" && std::regex_search(label, m, dp_name)) {
      dp_of_pid[integer_or(e, "pid", 0)] = std::stoi(m[1]);
    } else if (name == "thread_name" && std::regex_search(label, m, thread_name)) {
      rank_of_thread[{integer_or(e, "pid", 0), integer_or(e, "tid", 0)}] = {std::stoi(m[1]),
                                                                            std::stoi(m[2])};
    }
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& e = events[current = i];
    const std::string where = timeline_path + ": event " + std::to_string(i);
    if (!e.is_object()) throw InputError(where + ": not an object");
    if (e.value("ph", "") != "X") continue;
    const int64_t pid = integer_or(e, "pid", 0), tid = integer_or(e, "tid", 0);
    const auto dp = dp_of_pid.find(pid);
    const auto thread = rank_of_thread.find({pid, tid});
    if (dp == dp_of_pid.end() || thread == rank_of_thread.end()) {
      throw InputError(where + ": pid " + std::to_string(pid) + " tid " + std::to_string(tid) +
                       " has no process_name \"DP rank [k]\" or thread_name \"PP rank i, TP "
                       "rank j, ...\" metadata event");
    }
    if (thread->second.tensor_rank != 0) continue;
    const auto ts = e.find("ts"), dur = e.find("dur");
    if (ts == e.end() || !ts->is_number() || dur == e.end() || !dur->is_number() ||
        !(dur->get<double>() >= 0)) {
      throw InputError(where + ": needs numbers ts and dur (at least 0), in microseconds");
    }
    const nlohmann::json args = e.value("args", nlohmann::json::object());
    MeasuredOp op;
    op.dp_rank = dp->second;
    op.stage = thread->second.stage;
    op.optype = e.value("name", "");
    op.start_s = ts->get<double>() * 1e-6;
    op.duration_s = dur->get<double>() * 1e-6;
    op.step = whole_arg(args, "step", where);
    op.seq_id = whole_arg(args, "seq_id", where);
    op.model_chunk = args.contains("model_chunk") ? whole_arg(args, "model_chunk", where) : -1;
    op.microbatch = args.contains("mb_id") ? whole_arg(args, "mb_id", where) : -1;
    if (op.optype.empty()) throw InputError(where + ": an op without a name");
    if (op.dp_rank >= trace.meta.dp_size || op.stage >= trace.meta.pp_size) {
      throw InputError(where + ": DP rank " + std::to_string(op.dp_rank) + ", PP rank " +
                       std::to_string(op.stage) + " outside the meta file's dp_size " +
                       std::to_string(trace.meta.dp_size) + " and pp_size " +
                       std::to_string(trace.meta.pp_size));
    }
    trace.ops.push_back(std::move(op));
  }
}

}  // namespace

OpTrace read_megatron_op_trace(const std::string& timeline_path, const std::string& meta_path) {
  OpTrace trace;
  trace.source = timeline_path;
  trace.meta = read_meta(meta_path);
  nlohmann::json events;
  try {
    events = nlohmann::json::parse(read_maybe_gzipped(timeline_path));
  } catch (const nlohmann::json::exception& e) {  // parse_error, or a number out of range
    throw InputError(timeline_path + ": not JSON (" + e.what() + ")");
  }
  if (events.is_object() && events.contains("traceEvents")) events = events["traceEvents"];
  if (!events.is_array()) throw InputError(timeline_path + ": expected an array of trace events");
  size_t current = 0;
  try {
    read_events(events, timeline_path, trace, current);
  } catch (const nlohmann::json::exception& e) {
    // A field of another type than the format's (a name that is a number, say).
    throw InputError(timeline_path + ": event " + std::to_string(current) + ": " + e.what());
  }
  if (trace.ops.empty()) throw InputError(timeline_path + ": no ops (complete events, ph \"X\")");
  return trace;
}

}  // namespace pipetwin
