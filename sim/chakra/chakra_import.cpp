#include "sim/chakra/chakra_import.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "sim/chakra/chakra_collectives.h"
#include "sim/chakra/chakra_export.h"
#include "sim/program/validate_program.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;
using Attrs = google::protobuf::RepeatedPtrField<AttributeProto>;

// Sizes past a pebibyte are damage, not programs; below it, sums of them stay far from
// overflowing.
constexpr int64_t kMaxBytes = int64_t{1} << 50;

std::string node_where(const ChakraRankTrace& trace, const Node& node) {
  return trace.path + ": node " + std::to_string(node.id()) +
         (node.name().empty() ? "" : " (" + node.name() + ")");
}

int64_t int_or(const Attrs& attrs, const std::string& name, int64_t fallback,
               const std::string& where) {
  const AttributeProto* attr = find_attr(attrs, name);
  return attr ? attr_int(*attr, where) : fallback;
}

int64_t required_int(const Attrs& attrs, const std::string& name, const std::string& where) {
  const AttributeProto* attr = find_attr(attrs, name);
  if (!attr) throw InputError(where + ": attribute " + name + " is missing");
  return attr_int(*attr, where);
}

double double_or(const Attrs& attrs, const std::string& name, double fallback) {
  const AttributeProto* attr = find_attr(attrs, name);
  return attr && attr->has_double_val() ? attr->double_val() : fallback;
}

std::vector<int64_t> int_list(const Attrs& attrs, const std::string& name) {
  const AttributeProto* attr = find_attr(attrs, name);
  if (!attr || !attr->has_int64_list()) return {};
  return {attr->int64_list().values().begin(), attr->int64_list().values().end()};
}

std::string string_or(const Attrs& attrs, const std::string& name, const std::string& fallback) {
  const AttributeProto* attr = find_attr(attrs, name);
  return attr && attr->has_string_val() ? attr->string_val() : fallback;
}

bool parse_op(const std::string& name, Op& op) {
  for (int k = 0; k <= static_cast<int>(kLastOp); ++k) {
    if (name == op_name(static_cast<Op>(k))) {
      op = static_cast<Op>(k);
      return true;
    }
  }
  return false;
}

int32_t checked_rank(int64_t value, int32_t ranks, const std::string& where,
                     const std::string& field) {
  if (value < 0 || value >= ranks) {
    throw InputError(where + ": " + field + " " + std::to_string(value) + " is not a rank (the " +
                     "directory holds ranks 0 to " + std::to_string(ranks - 1) + ")");
  }
  return static_cast<int32_t>(value);
}

// The instruction a node stands for, before pairing and grouping.
Instruction instruction_of(const ChakraRankTrace& trace, const Node& node, int32_t ranks,
                           bool exact) {
  const std::string where = node_where(trace, node);
  const Attrs& attrs = node.attr();
  Instruction instr;
  instr.device = trace.rank;
  instr.stage = trace.rank;
  instr.range = {0, 1};
  switch (node.type()) {
    case ChakraProtoMsg::COMP_NODE:
      instr.op = Op::kFwd;
      instr.compute_s = static_cast<double>(node.duration_micros()) * 1e-6;
      break;
    case ChakraProtoMsg::COMM_SEND_NODE:
    case ChakraProtoMsg::COMM_RECV_NODE: {
      const bool send = node.type() == ChakraProtoMsg::COMM_SEND_NODE;
      instr.op = send ? Op::kSendAct : Op::kRecvAct;
      instr.bytes = required_int(attrs, "comm_size", where);
      const int64_t src = int_or(attrs, "comm_src", send ? trace.rank : -1, where);
      const int64_t dst = int_or(attrs, "comm_dst", send ? -1 : trace.rank, where);
      instr.peer_device =
          checked_rank(send ? dst : src, ranks, where, send ? "comm_dst" : "comm_src");
      if ((send ? src : dst) != trace.rank) {
        throw InputError(where + ": " + (send ? "comm_src " : "comm_dst ") +
                         std::to_string(send ? src : dst) + " is not this file's rank " +
                         std::to_string(trace.rank));
      }
      if (instr.peer_device == trace.rank) {
        throw InputError(where + ": a transfer from rank " + std::to_string(trace.rank) +
                         " to itself");
      }
      break;
    }
    case ChakraProtoMsg::COMM_COLL_NODE: {
      const int64_t type = required_int(attrs, "comm_type", where);
      if (!collective_op(type, instr.op)) {
        const std::string name = ChakraProtoMsg::CollectiveCommType_IsValid(static_cast<int>(type))
                                     ? ChakraProtoMsg::CollectiveCommType_Name(
                                           static_cast<ChakraProtoMsg::CollectiveCommType>(type))
                                     : std::to_string(type);
        throw InputError(where + ": comm_type " + name +
                         ": pipetwin simulates ALL_REDUCE, ALL_TO_ALL, REDUCE_SCATTER and "
                         "ALL_GATHER collectives only");
      }
      instr.bytes = required_int(attrs, "comm_size", where);
      break;
    }
    case ChakraProtoMsg::MEM_STORE_NODE:
    case ChakraProtoMsg::MEM_LOAD_NODE:
      instr.op = node.type() == ChakraProtoMsg::MEM_STORE_NODE ? Op::kOffload : Op::kReload;
      instr.bytes = required_int(attrs, "tensor_size", where);
      break;
    default:
      throw InputError(where + ": type " + ChakraProtoMsg::NodeType_Name(node.type()) +
                       ": pipetwin runs COMP, COMM_SEND, COMM_RECV, COMM_COLL, MEM_LOAD and "
                       "MEM_STORE nodes");
  }
  if (instr.bytes < 0 || instr.bytes > kMaxBytes) {
    throw InputError(where + ": a size of " + std::to_string(instr.bytes) +
                     " bytes (at most 2^50)");
  }
  if (!exact) return instr;
  // pipetwin's own traces: the instruction as it was.
  Op op;
  if (!parse_op(string_or(attrs, "pipetwin_op", ""), op) || lane_of(op) != instr.lane()) {
    throw InputError(where + ": attribute pipetwin_op does not name an op of this node's type");
  }
  instr.op = op;
  instr.data_parallel = is_collective(op) && int_or(attrs, "pipetwin_data_parallel", 0, where) != 0;
  instr.stage = static_cast<int32_t>(int_or(attrs, "pipetwin_stage", instr.stage, where));
  instr.microbatch = static_cast<int32_t>(int_or(attrs, "pipetwin_microbatch", 0, where));
  instr.iteration = static_cast<int32_t>(int_or(attrs, "pipetwin_iteration", 0, where));
  const std::vector<int64_t> range = int_list(attrs, "pipetwin_range");
  if (range.size() == 2)
    instr.range = {static_cast<int32_t>(range[0]), static_cast<int32_t>(range[1])};
  instr.compute_s = double_or(attrs, "pipetwin_compute_s", instr.compute_s);
  instr.interference_s = double_or(attrs, "pipetwin_interference_s", 0);
  instr.lead_s = double_or(attrs, "pipetwin_lead_s", 0);
  instr.bytes = int_or(attrs, "pipetwin_bytes", instr.bytes, where);
  instr.stash_bytes = int_or(attrs, "pipetwin_stash_bytes", 0, where);
  instr.peer_device = static_cast<int32_t>(int_or(attrs, "pipetwin_peer_device", -1, where));
  const int64_t collectives = int_or(attrs, "pipetwin_collectives", 1, where);
  if (collectives < 1 || collectives > 65535) {
    throw InputError(where + ": pipetwin_collectives " + std::to_string(collectives) +
                     " is not between 1 and 65535");
  }
  instr.collectives = static_cast<uint16_t>(collectives);
  for (const auto& [name, seconds] : {std::pair{"pipetwin_compute_s", instr.compute_s},
                                      std::pair{"pipetwin_interference_s", instr.interference_s},
                                      std::pair{"pipetwin_lead_s", instr.lead_s}}) {
    if (!std::isfinite(seconds) || seconds < 0) {
      throw InputError(where + ": " + name + " must be a finite number of seconds, at least 0");
    }
  }
  if (instr.bytes < 0 || instr.stash_bytes < 0 || instr.bytes > kMaxBytes ||
      instr.stash_bytes > kMaxBytes) {
    throw InputError(where +
                     ": pipetwin_bytes and pipetwin_stash_bytes must be between 0 and 2^50");
  }
  return instr;
}

// The placement the metadata gives: every stage on devices of the traces.
void check_layout(const Program& p, const std::string& where) {
  const auto bad = [&](const std::string& field) {
    throw InputError(where + ": " + field + " does not place the " + std::to_string(p.num_stages) +
                     " stages on the " + std::to_string(p.num_devices) + " ranks");
  };
  if (static_cast<int32_t>(p.stage_device.size()) != p.num_stages) bad("pipetwin_stage_device");
  if (!p.stage_replicas.empty() && static_cast<int32_t>(p.stage_replicas.size()) != p.num_stages) {
    bad("pipetwin_stage_replicas");
  }
  if (!p.model_stage.empty() && static_cast<int32_t>(p.model_stage.size()) != p.num_stages) {
    bad("pipetwin_model_stage");
  }
  for (int32_t s = 0; s < p.num_stages; ++s) {
    if (!p.model_stage.empty() && (p.model_stage[s] < 0 || p.model_stage[s] >= p.num_stages)) {
      bad("pipetwin_model_stage");
    }
    const int32_t replicas = p.stage_replicas.empty() ? 1 : p.stage_replicas[s];
    if (p.stage_device[s] < 0 || replicas < 1 ||
        static_cast<int64_t>(p.stage_device[s]) + replicas > p.num_devices) {
      bad(p.stage_replicas.empty() ? "pipetwin_stage_device" : "pipetwin_stage_replicas");
    }
  }
}

struct Loaded {
  const ChakraRankTrace* trace;
  const Node* node;
  int32_t id;  // the builder's
  Lane lane;   // the instruction's (two lanes hold collectives)
};

}  // namespace

ChakraProgram program_from_chakra(const std::vector<ChakraRankTrace>& ranks) {
  if (ranks.empty()) throw InputError("no Chakra trace to read");
  const int32_t n_ranks = static_cast<int32_t>(ranks.size());
  const Attrs& meta = ranks[0].metadata.attr();
  const std::string meta_where = ranks[0].path + ": GlobalMetadata";
  // Traces pipetwin wrote carry the Program's own fields; read them exactly.
  const bool exact = find_attr(meta, "pipetwin_devices") != nullptr;
  for (const ChakraRankTrace& trace : ranks) {
    if (exact != (find_attr(trace.metadata.attr(), "pipetwin_devices") != nullptr)) {
      throw InputError(trace.path +
                       ": GlobalMetadata: the files mix pipetwin's traces with others");
    }
  }
  if (exact && int_or(meta, "pipetwin_devices", 0, meta_where) != n_ranks) {
    throw InputError(meta_where + ": pipetwin_devices says " +
                     std::to_string(int_or(meta, "pipetwin_devices", 0, meta_where)) +
                     " ranks, the directory holds " + std::to_string(n_ranks));
  }
  const auto meta_int = [&](const std::string& name, int64_t fallback) {
    return static_cast<int32_t>(exact ? int_or(meta, name, fallback, meta_where) : fallback);
  };
  for (const char* name : {"pipetwin_stages", "pipetwin_iterations", "pipetwin_global_batch",
                           "pipetwin_tensor_parallel", "pipetwin_context_parallel"}) {
    if (exact && (int_or(meta, name, 1, meta_where) < 1 ||
                  int_or(meta, name, 1, meta_where) > std::numeric_limits<int32_t>::max())) {
      throw InputError(meta_where + ": " + name + " must be a positive 32-bit number");
    }
  }
  ProgramBuilder builder(n_ranks, meta_int("pipetwin_stages", n_ranks),
                         meta_int("pipetwin_iterations", 1), meta_int("pipetwin_global_batch", 1));

  // Nodes per rank in stream order: each appended to its lane's end.
  std::vector<Loaded> loaded;
  std::vector<std::unordered_map<uint64_t, int32_t>> by_id(n_ranks);  // node id -> loaded index
  std::unordered_map<uint64_t, int32_t> by_global_id;                 // pipetwin's ids
  for (const ChakraRankTrace& trace : ranks) {
    for (const Node& node : trace.nodes) {
      const Instruction instr = instruction_of(trace, node, n_ranks, exact);
      if (!by_id[trace.rank].emplace(node.id(), static_cast<int32_t>(loaded.size())).second) {
        throw InputError(node_where(trace, node) + ": id: another node of the file has it");
      }
      by_global_id.emplace(node.id(), static_cast<int32_t>(loaded.size()));
      loaded.push_back({&trace, &node, builder.add(instr), instr.lane()});
    }
  }
  // The lane predecessor of each node, which lane order already implies.
  std::vector<int32_t> lane_previous(loaded.size(), -1);
  {
    std::map<std::pair<int32_t, Lane>, int32_t> last;
    for (size_t k = 0; k < loaded.size(); ++k) {
      auto [it, added] = last.emplace(std::make_pair(loaded[k].trace->rank, loaded[k].lane), k);
      if (!added) {
        lane_previous[k] = it->second;
        it->second = static_cast<int32_t>(k);
      }
    }
  }
  // Dependencies: data_deps always; ctrl_deps unless lane order implies them; across ranks
  // (pipetwin's own traces) pipetwin_remote_deps.
  for (size_t k = 0; k < loaded.size(); ++k) {
    const Loaded& l = loaded[k];
    const std::string where = node_where(*l.trace, *l.node);
    const auto local = [&](uint64_t id, const char* field) {
      const auto it = by_id[l.trace->rank].find(id);
      if (it == by_id[l.trace->rank].end()) {
        throw InputError(where + ": " + field + " names node " + std::to_string(id) +
                         ", which the file does not hold");
      }
      if (it->second == static_cast<int32_t>(k)) {
        throw InputError(where + ": " + field + " names the node itself");
      }
      return it->second;
    };
    for (uint64_t id : l.node->data_deps())
      builder.add_dependency(l.id, loaded[local(id, "data_deps")].id);
    for (uint64_t id : l.node->ctrl_deps()) {
      const int32_t dep = local(id, "ctrl_deps");
      if (dep != lane_previous[k]) builder.add_dependency(l.id, loaded[dep].id);
    }
    for (int64_t id : int_list(l.node->attr(), "pipetwin_remote_deps")) {
      const auto it = by_global_id.find(static_cast<uint64_t>(id));
      if (it == by_global_id.end()) {
        throw InputError(where + ": pipetwin_remote_deps names node " + std::to_string(id) +
                         ", which no file holds");
      }
      builder.add_dependency(l.id, loaded[it->second].id);
    }
  }
  // SEND <-> RECV: the k-th SEND from a to b with tag t pairs with the k-th such RECV.
  std::map<std::tuple<int32_t, int32_t, int64_t>, std::deque<int32_t>> sends, recvs;
  for (size_t k = 0; k < loaded.size(); ++k) {
    const Node& node = *loaded[k].node;
    const bool send = node.type() == ChakraProtoMsg::COMM_SEND_NODE;
    if (!send && node.type() != ChakraProtoMsg::COMM_RECV_NODE) continue;
    const std::string where = node_where(*loaded[k].trace, node);
    const int32_t rank = loaded[k].trace->rank;
    const int32_t peer =
        static_cast<int32_t>(int_or(node.attr(), send ? "comm_dst" : "comm_src", -1, where));
    const int64_t tag = int_or(node.attr(), "comm_tag", 0, where);
    const auto key = send ? std::make_tuple(rank, peer, tag) : std::make_tuple(peer, rank, tag);
    (send ? sends : recvs)[key].push_back(static_cast<int32_t>(k));
  }
  for (auto& [key, list] : sends) {
    std::deque<int32_t>& partners = recvs[key];
    for (int32_t k : list) {
      if (partners.empty()) {
        throw InputError(node_where(*loaded[k].trace, *loaded[k].node) +
                         ": no COMM_RECV_NODE on rank " + std::to_string(std::get<1>(key)) +
                         " matches it (comm_src, comm_dst, comm_tag)");
      }
      const int32_t r = partners.front();
      partners.pop_front();
      if (int_or(loaded[k].node->attr(), "comm_size", 0, "") !=
          int_or(loaded[r].node->attr(), "comm_size", 0, "")) {
        throw InputError(node_where(*loaded[r].trace, *loaded[r].node) +
                         ": comm_size differs from its COMM_SEND_NODE's");
      }
      builder.pair(loaded[k].id, loaded[r].id);
    }
  }
  for (auto& [key, list] : recvs) {
    if (!list.empty()) {
      const Loaded& l = loaded[list.front()];
      throw InputError(node_where(*l.trace, *l.node) + ": no COMM_SEND_NODE on rank " +
                       std::to_string(std::get<0>(key)) +
                       " matches it (comm_src, comm_dst, comm_tag)");
    }
  }
  // Collectives: pipetwin's own traces say their group; others, the k-th node of each
  // pg_name on every rank is one collective.
  std::map<std::pair<std::string, int64_t>, std::vector<std::pair<int64_t, int32_t>>> groups;
  std::map<std::pair<int32_t, std::string>, int64_t> seen;
  for (size_t k = 0; k < loaded.size(); ++k) {
    const Node& node = *loaded[k].node;
    if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
    if (exact) {
      const std::vector<int64_t> group = int_list(node.attr(), "pipetwin_group");
      if (group.size() == 2) groups[{"", group[0]}].push_back({group[1], loaded[k].id});
      continue;
    }
    const std::string pg = string_or(node.attr(), "pg_name", "");
    const int64_t occurrence = seen[{loaded[k].trace->rank, pg}]++;
    auto& members = groups[{pg, occurrence}];
    members.push_back({static_cast<int64_t>(members.size()), loaded[k].id});
  }
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end());
    std::vector<int32_t> ids;
    for (const auto& member : members) ids.push_back(member.second);
    builder.group(ids);
  }
  if (exact) {
    const auto list32 = [&](const std::string& name) {
      std::vector<int32_t> values;
      for (int64_t v : int_list(meta, name)) values.push_back(static_cast<int32_t>(v));
      return values;
    };
    builder.set_static_bytes(int_list(meta, "pipetwin_static_bytes"));
    builder.set_stage_device(list32("pipetwin_stage_device"));
    builder.set_stage_replicas(list32("pipetwin_stage_replicas"));
    builder.set_model_stage(list32("pipetwin_model_stage"));
    builder.set_tensor_parallel(meta_int("pipetwin_tensor_parallel", 1));
    builder.set_context_parallel(meta_int("pipetwin_context_parallel", 1));
    const AttributeProto* ranges = find_attr(meta, "pipetwin_show_ranges");
    builder.set_show_ranges(ranges && ranges->bool_val());
  } else {
    std::vector<int32_t> stage_device(n_ranks);
    for (int32_t r = 0; r < n_ranks; ++r) stage_device[r] = r;
    builder.set_stage_device(stage_device);
  }
  ChakraProgram result{std::move(builder).finish(), "", {}};
  const std::string dir = std::filesystem::path(ranks[0].path).parent_path().string();
  const std::string traces = dir.empty() ? "the traces" : dir;
  if (!topological_order(result.program)) {
    throw InputError(traces + ": the dependencies (data_deps, ctrl_deps, file order per lane, " +
                     "a send before its receive) form a cycle");
  }
  if (exact) {
    check_layout(result.program, meta_where);
    // Every stage runs in every iteration: more of them than nodes is damage (and the
    // coverage check below would allocate for each).
    if (static_cast<int64_t>(result.program.iterations) * result.program.num_stages >
        result.program.size()) {
      throw InputError(meta_where + ": pipetwin_iterations x pipetwin_stages exceeds the " +
                       std::to_string(result.program.size()) + " nodes");
    }
    for (int64_t bytes : result.program.static_bytes) {
      if (bytes < 0 || bytes > kMaxBytes) {
        throw InputError(meta_where + ": pipetwin_static_bytes must be between 0 and 2^50");
      }
    }
  }
  // The checks every Program passes before it runs; pipetwin's own traces were lowered from
  // a schedule, so their stages also cover the minibatch.
  try {
    exact ? validate_program(result.program) : validate_program_graph(result.program);
  } catch (const InputError& e) {
    throw InputError(traces + ": " + e.what());
  }
  if (exact) {
    result.scenario_source = string_or(meta, "pipetwin_scenario_source", "");
    if (const AttributeProto* o = find_attr(meta, "pipetwin_overrides");
        o && o->has_string_list()) {
      result.overrides.assign(o->string_list().values().begin(), o->string_list().values().end());
    }
  }
  return result;
}

}  // namespace pipetwin
