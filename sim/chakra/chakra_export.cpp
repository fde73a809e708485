#include "sim/chakra/chakra_export.h"

#include <cmath>
#include <filesystem>
#include <ostream>
#include <queue>
#include <stdexcept>

#include "sim/chakra/chakra_collectives.h"
#include "sim/spec/errors.h"
#include "traces/atomic_file.h"

namespace pipetwin {
namespace {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

template <typename Message>
AttributeProto* add_attr(Message& message, const std::string& name) {
  AttributeProto* attr = message.add_attr();
  attr->set_name(name);
  return attr;
}

template <typename Message>
void add_int64(Message& message, const std::string& name, int64_t value) {
  add_attr(message, name)->set_int64_val(value);
}

template <typename Message>
void add_int32(Message& message, const std::string& name, int32_t value) {
  add_attr(message, name)->set_int32_val(value);
}

template <typename Message, typename Values>
void add_int64_list(Message& message, const std::string& name, const Values& values) {
  ChakraProtoMsg::Int64List* list = add_attr(message, name)->mutable_int64_list();
  for (const auto value : values) list->add_values(value);
}

ChakraProtoMsg::NodeType node_type(Op op) {
  if (is_send(op)) return ChakraProtoMsg::COMM_SEND_NODE;
  if (is_recv(op)) return ChakraProtoMsg::COMM_RECV_NODE;
  if (is_collective(op)) return ChakraProtoMsg::COMM_COLL_NODE;
  if (is_copy(op))
    return copies_to_host(op) ? ChakraProtoMsg::MEM_STORE_NODE : ChakraProtoMsg::MEM_LOAD_NODE;
  return ChakraProtoMsg::COMP_NODE;
}

}  // namespace

std::optional<std::vector<int32_t>> topological_order(const Program& p) {
  const int32_t n = p.size();
  std::vector<int32_t> waiting(n, 0);
  std::vector<std::vector<int32_t>> extra(n);  // lane successor, RECV of a SEND
  for (int32_t i = 0; i < n; ++i) {
    waiting[i] += static_cast<int32_t>(p.deps_of(i).size());
    if (i > p.lane_begin[p.lane_index(i)]) {
      ++waiting[i];
      extra[i - 1].push_back(i);
    }
    if (is_recv(p.instructions[i].op) && p.partner[i] >= 0) {
      ++waiting[i];
      extra[p.partner[i]].push_back(i);
    }
  }
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> ready;
  for (int32_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push(i);
  }
  std::vector<int32_t> order;
  order.reserve(n);
  const auto release = [&](int32_t j) {
    if (--waiting[j] == 0) ready.push(j);
  };
  while (!ready.empty()) {
    const int32_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int32_t j : p.dependents_of(i)) release(j);
    for (int32_t j : extra[i]) release(j);
  }
  if (static_cast<int32_t>(order.size()) != n) return std::nullopt;
  return order;
}

namespace {

// Collective groups by their devices: pg_name k (from 1) is the k-th distinct set of devices.
std::vector<int32_t> process_groups(const Program& p,
                                    std::map<int32_t, std::vector<int32_t>>& out) {
  std::map<std::vector<int32_t>, int32_t> ids;
  std::vector<int32_t> pg(std::max(p.num_groups(), 0), 0);
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    std::vector<int32_t> devices;
    for (int32_t m : p.members_of_group(g)) devices.push_back(p.instructions[m].device);
    std::sort(devices.begin(), devices.end());
    auto [it, added] = ids.emplace(devices, static_cast<int32_t>(ids.size()) + 1);
    if (added) out[it->second] = devices;
    pg[g] = it->second;
  }
  return pg;
}

Node make_node(const Program& p, int32_t i, const std::vector<int32_t>& pg) {
  const Instruction& instr = p.instructions[i];
  Node node;
  node.set_id(static_cast<uint64_t>(i));
  node.set_name(p.text(i));
  node.set_type(node_type(instr.op));
  if (i > p.lane_begin[p.lane_index(i)]) node.add_ctrl_deps(static_cast<uint64_t>(i - 1));
  std::vector<int64_t> remote;
  for (int32_t d : p.deps_of(i)) {
    if (p.instructions[d].device == instr.device) {
      node.add_data_deps(static_cast<uint64_t>(d));
    } else {
      remote.push_back(d);
    }
  }
  add_attr(node, "is_cpu_op")->set_bool_val(false);
  switch (node.type()) {
    case ChakraProtoMsg::COMP_NODE:
      node.set_duration_micros(
          static_cast<uint64_t>(std::llround((instr.compute_s + instr.interference_s) * 1e6)));
      break;
    case ChakraProtoMsg::COMM_SEND_NODE:
    case ChakraProtoMsg::COMM_RECV_NODE: {
      const bool send = node.type() == ChakraProtoMsg::COMM_SEND_NODE;
      add_int64(node, "comm_size", instr.bytes);
      add_int32(node, "comm_src", send ? instr.device : instr.peer_device);
      add_int32(node, "comm_dst", send ? instr.peer_device : instr.device);
      // The pair shares a tag: the SEND's instruction index.
      add_int32(node, "comm_tag", send ? i : p.partner[i]);
      break;
    }
    case ChakraProtoMsg::COMM_COLL_NODE: {
      add_int64(node, "comm_type", comm_type(instr.op));
      add_int64(node, "comm_size", instr.bytes);
      const int32_t g = p.group[i];
      add_attr(node, "pg_name")->set_string_val(std::to_string(g >= 0 ? pg[g] : 0));
      if (g >= 0) {
        const std::span<const int32_t> members = p.members_of_group(g);
        const int64_t position = std::find(members.begin(), members.end(), i) - members.begin();
        add_int64_list(node, "pipetwin_group", std::vector<int64_t>{g, position});
      }
      break;
    }
    default:  // MEM_STORE_NODE, MEM_LOAD_NODE
      add_attr(node, "tensor_size")->set_uint64_val(static_cast<uint64_t>(instr.bytes));
      break;
  }
  add_attr(node, "pipetwin_op")->set_string_val(op_name(instr.op));
  add_int32(node, "pipetwin_stage", instr.stage);
  add_int32(node, "pipetwin_microbatch", instr.microbatch);
  add_int32(node, "pipetwin_iteration", instr.iteration);
  add_int64_list(node, "pipetwin_range", std::vector<int64_t>{instr.range.lo, instr.range.hi});
  add_attr(node, "pipetwin_compute_s")->set_double_val(instr.compute_s);
  add_attr(node, "pipetwin_interference_s")->set_double_val(instr.interference_s);
  // A collective that starts under the compute it waits for (ASTRA-sim starts it after).
  if (instr.lead_s > 0) add_attr(node, "pipetwin_lead_s")->set_double_val(instr.lead_s);
  // On the data-parallel lane (Instruction::data_parallel).
  if (instr.data_parallel) add_int32(node, "pipetwin_data_parallel", 1);
  add_int64(node, "pipetwin_bytes", instr.bytes);
  add_int64(node, "pipetwin_stash_bytes", instr.stash_bytes);
  add_int32(node, "pipetwin_collectives", instr.collectives);
  add_int32(node, "pipetwin_peer_device", instr.peer_device);
  if (p.partner[i] >= 0) add_int64(node, "pipetwin_partner", p.partner[i]);
  if (!remote.empty()) add_int64_list(node, "pipetwin_remote_deps", remote);
  return node;
}

ChakraProtoMsg::GlobalMetadata metadata(const Program& p, const ChakraSource& source,
                                        int32_t rank) {
  ChakraProtoMsg::GlobalMetadata m;
  m.set_version(kChakraVersion);
  add_attr(m, "schema")->set_string_val(kChakraSchema);
  add_attr(m, "pipetwin_scenario")->set_string_val(source.scenario_name);
  add_attr(m, "pipetwin_scenario_source")->set_string_val(source.scenario_source);
  ChakraProtoMsg::StringList* overrides = add_attr(m, "pipetwin_overrides")->mutable_string_list();
  for (const std::string& text : source.overrides) overrides->add_values(text);
  add_int32(m, "pipetwin_rank", rank);
  add_int32(m, "pipetwin_devices", p.num_devices);
  add_int32(m, "pipetwin_stages", p.num_stages);
  add_int32(m, "pipetwin_iterations", p.iterations);
  add_int32(m, "pipetwin_global_batch", p.global_batch);
  add_int32(m, "pipetwin_tensor_parallel", p.tensor_parallel);
  add_int32(m, "pipetwin_context_parallel", p.context_parallel);
  add_attr(m, "pipetwin_show_ranges")->set_bool_val(p.show_ranges);
  add_int64_list(m, "pipetwin_static_bytes", p.static_bytes);
  add_int64_list(m, "pipetwin_stage_device", p.stage_device);
  add_int64_list(m, "pipetwin_stage_replicas", p.stage_replicas);
  add_int64_list(m, "pipetwin_model_stage", p.model_stage);
  add_int32(m, "pipetwin_instructions", p.size());
  add_int32(m, "pipetwin_groups", std::max(p.num_groups(), 0));
  return m;
}

std::string comm_group_json(const std::map<int32_t, std::vector<int32_t>>& groups) {
  std::string text = "{";
  bool first = true;
  for (const auto& [id, ranks] : groups) {
    text += (first ? "\n  \"" : ",\n  \"") + std::to_string(id) + "\": [";
    for (size_t r = 0; r < ranks.size(); ++r) text += (r ? ", " : "") + std::to_string(ranks[r]);
    text += "]";
    first = false;
  }
  return text + "\n}\n";
}

}  // namespace

ChakraWorkload chakra_workload(const Program& program, const ChakraSource& source) {
  ChakraWorkload workload;
  const std::vector<int32_t> pg = process_groups(program, workload.comm_groups);
  workload.ranks.resize(program.num_devices);
  for (int32_t r = 0; r < program.num_devices; ++r) {
    workload.ranks[r].rank = r;
    workload.ranks[r].metadata = metadata(program, source, r);
  }
  const std::optional<std::vector<int32_t>> order = topological_order(program);
  if (!order)
    throw RuntimeFailure("the program's dependencies form a cycle: it cannot be exported");
  for (int32_t i : *order) {
    workload.ranks[program.instructions[i].device].nodes.push_back(make_node(program, i, pg));
  }
  return workload;
}

void write_chakra_workload(const ChakraWorkload& workload, const std::string& dir) {
  try {
    std::filesystem::create_directories(dir);
    for (const ChakraRankTrace& trace : workload.ranks) {
      write_file_atomically(chakra_rank_path(dir, kChakraPrefix, trace.rank),
                            [&](std::ostream& out) { write_chakra_stream(out, trace); });
    }
    write_file_atomically((std::filesystem::path(dir) / "comm_group.json").string(),
                          [&](std::ostream& out) { out << comm_group_json(workload.comm_groups); });
  } catch (const std::filesystem::filesystem_error& e) {
    throw RuntimeFailure(dir + ": " + e.what());
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const RuntimeFailure*>(&e)) throw;
    throw RuntimeFailure(e.what());
  }
}

}  // namespace pipetwin
