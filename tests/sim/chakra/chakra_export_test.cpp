// Chakra execution traces: the files are Chakra's stream (a varint length, then the
// message: GlobalMetadata first, then Nodes), and read back with the schema they give the
// Program's dependency graph, pairs, groups and durations exactly; traces that pipetwin did
// not write run too; bad files are errors naming file and field.
#include "sim/chakra/chakra_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "cli_runner.h"
#include "sim/driver/build_program.h"
#include "sim/chakra/chakra_import.h"
#include "sim/chakra/chakra_stream.h"
#include "sim/driver/engine.h"
#include "sim/exec/interference.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/driver/simulate.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ChakraProtoMsg::Node;
using ::testing::HasSubstr;
using testing::TempDir;

// The Program `pipetwin export chakra` writes for a scenario.
Program exported_program(const std::string& scenario, const std::vector<std::string>& overrides) {
  const ResolvedScenario setup = resolve_scenario(load_scenario(scenario, overrides));
  Program program = build_program(setup);
  apply_interference(program, setup.cluster);
  return program;
}

std::vector<ChakraRankTrace> write_and_read(const Program& program, const TempDir& dir) {
  write_chakra_workload(chakra_workload(program, {"test", "", {}}), dir.path().string());
  return read_chakra_dir(dir.path().string());
}

std::multiset<int32_t> dep_set(const Program& p, int32_t i) {
  return {p.deps_of(i).begin(), p.deps_of(i).end()};
}

const ChakraProtoMsg::AttributeProto& attr(const Node& node, const std::string& name) {
  const ChakraProtoMsg::AttributeProto* a = find_attr(node.attr(), name);
  EXPECT_NE(a, nullptr) << node.name() << " has no " << name;
  static const ChakraProtoMsg::AttributeProto none;
  return a ? *a : none;
}

struct Case {
  std::string scenario;
  std::vector<std::string> overrides;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.scenario;
  for (const std::string& o : c.overrides) *out << " --set " << o;
}

class ChakraRoundTrip : public ::testing::TestWithParam<Case> {};

// The files, read by the schema alone: one node per instruction of the rank's device,
// the node type of its op, ctrl_deps the lane predecessor, data_deps the dependencies on
// the same device, and Chakra's attributes for communication.
TEST_P(ChakraRoundTrip, NodesFollowTheProgram) {
  const Program p = exported_program(GetParam().scenario, GetParam().overrides);
  TempDir dir;
  const std::vector<ChakraRankTrace> ranks = write_and_read(p, dir);
  ASSERT_EQ(static_cast<int32_t>(ranks.size()), p.num_devices);
  std::map<int, int64_t> nodes_of_type, instructions_of_type;
  for (const Instruction& instr : p.instructions) {
    const int type = is_send(instr.op)         ? ChakraProtoMsg::COMM_SEND_NODE
                     : is_recv(instr.op)       ? ChakraProtoMsg::COMM_RECV_NODE
                     : is_collective(instr.op) ? ChakraProtoMsg::COMM_COLL_NODE
                     : is_copy(instr.op)
                         ? (copies_to_host(instr.op) ? ChakraProtoMsg::MEM_STORE_NODE
                                                     : ChakraProtoMsg::MEM_LOAD_NODE)
                         : ChakraProtoMsg::COMP_NODE;
    ++instructions_of_type[type];
  }
  std::set<uint64_t> seen;
  for (const ChakraRankTrace& rank : ranks) {
    EXPECT_EQ(rank.metadata.version(), "0.0.4");
    ASSERT_NE(find_attr(rank.metadata.attr(), "schema"), nullptr);
    EXPECT_EQ(find_attr(rank.metadata.attr(), "schema")->string_val(), "1.0.2-chakra.0.0.4");
    std::set<uint64_t> earlier;
    for (const Node& node : rank.nodes) {
      ++nodes_of_type[node.type()];
      const int32_t i = static_cast<int32_t>(node.id());
      ASSERT_LT(i, p.size());
      EXPECT_TRUE(seen.insert(node.id()).second) << "node " << i << " written twice";
      const Instruction& instr = p.instructions[i];
      EXPECT_EQ(instr.device, rank.rank);
      EXPECT_EQ(node.name(), p.text(i));
      // Every dependency in the file comes before the node.
      for (uint64_t d : node.data_deps()) EXPECT_TRUE(earlier.count(d)) << node.name();
      for (uint64_t d : node.ctrl_deps()) EXPECT_TRUE(earlier.count(d)) << node.name();
      earlier.insert(node.id());

      const bool first_of_lane = i == p.lane_begin[p.lane_index(i)];
      if (first_of_lane) {
        EXPECT_EQ(node.ctrl_deps_size(), 0);
      } else {
        ASSERT_EQ(node.ctrl_deps_size(), 1);
        EXPECT_EQ(node.ctrl_deps(0), static_cast<uint64_t>(i - 1));
      }
      std::multiset<int32_t> deps;
      for (uint64_t d : node.data_deps()) {
        deps.insert(static_cast<int32_t>(d));
        EXPECT_EQ(p.instructions[d].device, instr.device);
      }
      if (const auto* remote = find_attr(node.attr(), "pipetwin_remote_deps")) {
        for (int64_t d : remote->int64_list().values()) deps.insert(static_cast<int32_t>(d));
      }
      EXPECT_EQ(deps, dep_set(p, i)) << node.name();

      switch (node.type()) {
        case ChakraProtoMsg::COMP_NODE:
          EXPECT_EQ(
              node.duration_micros(),
              static_cast<uint64_t>(std::llround((instr.compute_s + instr.interference_s) * 1e6)));
          EXPECT_EQ(attr(node, "pipetwin_compute_s").double_val(), instr.compute_s);
          break;
        case ChakraProtoMsg::COMM_SEND_NODE:
          EXPECT_EQ(attr(node, "comm_src").int32_val(), instr.device);
          EXPECT_EQ(attr(node, "comm_dst").int32_val(), instr.peer_device);
          EXPECT_EQ(attr(node, "comm_size").int64_val(), instr.bytes);
          EXPECT_EQ(attr(node, "comm_tag").int32_val(), i);
          break;
        case ChakraProtoMsg::COMM_RECV_NODE:
          EXPECT_EQ(attr(node, "comm_src").int32_val(), instr.peer_device);
          EXPECT_EQ(attr(node, "comm_dst").int32_val(), instr.device);
          EXPECT_EQ(attr(node, "comm_tag").int32_val(), p.partner[i]);
          break;
        case ChakraProtoMsg::COMM_COLL_NODE:
          EXPECT_EQ(attr(node, "comm_type").int64_val(),
                    (std::map<Op, int64_t>{{Op::kAllreduce, ChakraProtoMsg::ALL_REDUCE},
                                           {Op::kAllToAll, ChakraProtoMsg::ALL_TO_ALL},
                                           {Op::kReduceScatter, ChakraProtoMsg::REDUCE_SCATTER},
                                           {Op::kAllGather, ChakraProtoMsg::ALL_GATHER}}
                         .at(instr.op)));
          EXPECT_EQ(attr(node, "comm_size").int64_val(), instr.bytes);
          EXPECT_FALSE(attr(node, "pg_name").string_val().empty());
          break;
        default:
          EXPECT_EQ(attr(node, "tensor_size").uint64_val(), static_cast<uint64_t>(instr.bytes));
      }
    }
  }
  EXPECT_EQ(static_cast<int32_t>(seen.size()), p.size());
  EXPECT_EQ(nodes_of_type, instructions_of_type);
}

// Read back, the traces give the very Program.
TEST_P(ChakraRoundTrip, ReadsBackTheSameProgram) {
  const Program p = exported_program(GetParam().scenario, GetParam().overrides);
  TempDir dir;
  const Program q = program_from_chakra(write_and_read(p, dir)).program;
  ASSERT_EQ(q.size(), p.size());
  EXPECT_EQ(q.num_devices, p.num_devices);
  EXPECT_EQ(q.num_stages, p.num_stages);
  EXPECT_EQ(q.iterations, p.iterations);
  EXPECT_EQ(q.global_batch, p.global_batch);
  EXPECT_EQ(q.show_ranges, p.show_ranges);
  EXPECT_EQ(q.tensor_parallel, p.tensor_parallel);
  EXPECT_EQ(q.lane_begin, p.lane_begin);
  EXPECT_EQ(q.partner, p.partner);
  EXPECT_EQ(q.group, p.group);
  EXPECT_EQ(q.group_begin, p.group_begin);
  EXPECT_EQ(q.group_members, p.group_members);
  EXPECT_EQ(q.static_bytes, p.static_bytes);
  EXPECT_EQ(q.stage_device, p.stage_device);
  EXPECT_EQ(q.stage_replicas, p.stage_replicas);
  EXPECT_EQ(q.model_stage, p.model_stage);
  for (int32_t i = 0; i < p.size(); ++i) {
    const Instruction& a = p.instructions[i];
    const Instruction& b = q.instructions[i];
    EXPECT_EQ(b.op, a.op) << p.text(i);
    EXPECT_EQ(b.collectives, a.collectives) << p.text(i);
    EXPECT_EQ(b.device, a.device) << p.text(i);
    EXPECT_EQ(b.stage, a.stage) << p.text(i);
    EXPECT_EQ(b.microbatch, a.microbatch) << p.text(i);
    EXPECT_EQ(b.range.lo, a.range.lo) << p.text(i);
    EXPECT_EQ(b.range.hi, a.range.hi) << p.text(i);
    EXPECT_EQ(b.iteration, a.iteration) << p.text(i);
    EXPECT_EQ(b.peer_device, a.peer_device) << p.text(i);
    EXPECT_EQ(b.bytes, a.bytes) << p.text(i);
    EXPECT_EQ(b.compute_s, a.compute_s) << p.text(i);
    EXPECT_EQ(b.interference_s, a.interference_s) << p.text(i);
    EXPECT_EQ(b.stash_bytes, a.stash_bytes) << p.text(i);
    EXPECT_EQ(dep_set(q, i), dep_set(p, i)) << p.text(i);
  }
}

// The same Program, so the same times on both engines.
TEST_P(ChakraRoundTrip, SimulatesToTheSameTimes) {
  const LoadedScenario loaded = load_scenario(GetParam().scenario, GetParam().overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  const SimulationResult direct =
      simulate_setup(setup, {Engine::kAnalytic, true, ResourceLimits{}, true});
  TempDir dir;
  Program read = program_from_chakra(write_and_read(direct.program, dir)).program;
  const SimulationResult replayed =
      simulate_program(setup, std::move(read), {Engine::kAnalytic, true, ResourceLimits{}, true});
  EXPECT_EQ(replayed.times.start_s, direct.times.start_s);
  EXPECT_EQ(replayed.times.end_s, direct.times.end_s);
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, ChakraRoundTrip,
    ::testing::Values(
        Case{"builtin:quickstart", {}},
        // Data parallelism: an ALLREDUCE per stage across its replicas.
        Case{"builtin:quickstart", {"cluster.gpus_per_node=8", "training.data_parallel=2"}},
        // Zero bubble: split backwards.
        Case{"builtin:quickstart", {"schedule.kind=ZB_H1"}},
        // DualPipe: two copies of each stage, their gradients summed together.
        Case{"builtin:quickstart", {"schedule.kind=DUALPIPE", "training.microbatches=8"}},
        // Interleaved chunks.
        Case{"builtin:quickstart",
             {"schedule.kind=INTERLEAVED_ONE_F_ONE_B", "schedule.virtual_stages=2"}},
        // Activation offload: copies to host memory and back.
        Case{"builtin:offload-gpt-a100", {"schedule.offload=prefetch_horizon: 2"}},
        // PipeFB: stash and weights transfers.
        Case{"builtin:offload-gpt-a100", {"schedule.kind=PIPEFB", "schedule.stages=4"}},
        // Tensor parallelism: per-block collectives.
        Case{"builtin:gpt-tp2-pp2-cpu", {"training.iterations=1"}},
        // ZeRO-3: per-pass ALL_GATHERs and REDUCE_SCATTERs; ZeRO-1: the updated weights'.
        Case{"builtin:quickstart",
             {"cluster.gpus_per_node=8", "training.data_parallel=2", "training.zero_stage=3"}},
        Case{"builtin:quickstart",
             {"cluster.gpus_per_node=8", "training.data_parallel=2", "training.zero_stage=1"}},
        // Expert parallelism: the all-to-alls of each MoE block, as ALL_TO_ALL collectives.
        Case{"builtin:mixtral-8x7b-64gpu",
             {"cluster.nodes=1", "model.zoo.layers=2", "schedule.stages=2",
              "training.data_parallel=2", "training.expert_parallel=2", "training.global_batch=4",
              "training.microbatches=2"}},
        // MoE parallel folding: whole experts, each expert group the tensor-parallel pair.
        Case{"builtin:mixtral-8x7b-64gpu",
             {"cluster.nodes=1", "model.zoo.layers=2", "schedule.stages=2",
              "training.tensor_parallel=2", "training.sequence_parallel=true",
              "training.data_parallel=2", "training.expert_parallel=2",
              "training.expert_tensor_parallel=1", "training.global_batch=4",
              "training.microbatches=2"}},
        // Hybrid sharding, weights kept for the step: scatters and gathers within pairs of
        // replicas, each scatter's shard all-reduced across the pairs.
        Case{"builtin:quickstart",
             {"cluster.gpus_per_node=8", "schedule.stages=2", "training.data_parallel=4",
              "training.zero_stage=3", "training.fsdp_shard_size=2",
              "training.fsdp_reshard=AFTER_STEP"}},
        // Context parallelism: each pass's ring (under the pass: pipetwin_lead_s) and
        // Ulysses' all-to-alls; gradient buckets over data- and context-parallel GPUs.
        Case{"builtin:quickstart",
             {"cluster.gpus_per_node=8", "training.context_parallel=2", "training.data_parallel=2",
              "schedule.stages=2"}},
        Case{"builtin:quickstart",
             {"cluster.gpus_per_node=8", "training.context_parallel=2",
              "training.context_parallel_algorithm=ULYSSES", "schedule.stages=2"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return "Case" + std::to_string(info.index); });

// The cases cover every kind of node the export writes.
TEST(ChakraExport, CasesCoverEveryNodeType) {
  std::set<int> types;
  for (const auto& [scenario, overrides] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"builtin:quickstart", {"cluster.gpus_per_node=8", "training.data_parallel=2"}},
           {"builtin:offload-gpt-a100", {"schedule.offload=prefetch_horizon: 2"}}}) {
    const ChakraWorkload w = chakra_workload(exported_program(scenario, overrides), {});
    for (const ChakraRankTrace& r : w.ranks) {
      for (const Node& node : r.nodes) types.insert(node.type());
    }
  }
  EXPECT_EQ(types, (std::set<int>{ChakraProtoMsg::COMP_NODE, ChakraProtoMsg::COMM_SEND_NODE,
                                  ChakraProtoMsg::COMM_RECV_NODE, ChakraProtoMsg::COMM_COLL_NODE,
                                  ChakraProtoMsg::MEM_STORE_NODE, ChakraProtoMsg::MEM_LOAD_NODE}));
}

// The framing, decoded by hand as Chakra's protolib decodeMessage does: a varint length,
// then that many bytes of the message; GlobalMetadata first.
TEST(ChakraStream, IsVarintLengthDelimitedMessagesMetadataFirst) {
  const ChakraWorkload w = chakra_workload(exported_program("builtin:quickstart", {}), {});
  TempDir dir;
  write_chakra_workload(w, dir.path().string());
  std::ifstream in(chakra_rank_path(dir.path().string(), "pipetwin", 1), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = 0, messages = 0;
  while (at < bytes.size()) {
    uint64_t size = 0;
    for (int shift = 0;; shift += 7) {
      const auto c = static_cast<uint8_t>(bytes.at(at++));
      size |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) break;
    }
    const std::string message = bytes.substr(at, size);
    ASSERT_EQ(message.size(), size);
    at += size;
    if (messages == 0) {
      ChakraProtoMsg::GlobalMetadata metadata;
      ASSERT_TRUE(metadata.ParseFromString(message));
      EXPECT_EQ(metadata.version(), "0.0.4");
    } else {
      Node node;
      ASSERT_TRUE(node.ParseFromString(message));
      EXPECT_EQ(node.SerializeAsString(), w.ranks[1].nodes[messages - 1].SerializeAsString());
    }
    ++messages;
  }
  EXPECT_EQ(messages, w.ranks[1].nodes.size() + 1);
}

TEST(ChakraExport, WritesTheCommGroupsOfItsCollectives) {
  const ChakraWorkload w =
      chakra_workload(exported_program("builtin:quickstart",
                                       {"cluster.gpus_per_node=8", "training.data_parallel=2"}),
                      {});
  // Stage s runs on devices s and s + 4.
  EXPECT_EQ(w.comm_groups.size(), 4u);
  for (const auto& [id, ranks] : w.comm_groups) {
    ASSERT_EQ(ranks.size(), 2u);
    EXPECT_EQ(ranks[1], ranks[0] + 4);
  }
  TempDir dir;
  write_chakra_workload(w, dir.path().string());
  const std::string json = testing::read_all(dir.path() / "comm_group.json");
  EXPECT_THAT(json, HasSubstr("\"1\": [0, 4]"));
}

// --- Traces that pipetwin did not write --------------------------------------------------

Node node(uint64_t id, const std::string& name, ChakraProtoMsg::NodeType type) {
  Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(type);
  return n;
}

void add_int(Node& n, const std::string& name, int64_t value) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(value);
}

// Rank 0 computes 1 ms then sends 1 MiB to rank 1, which receives it and computes 0.5 ms.
std::vector<ChakraRankTrace> two_ranks() {
  std::vector<ChakraRankTrace> ranks(2);
  for (int32_t r = 0; r < 2; ++r) {
    ranks[r].rank = r;
    ranks[r].path = "rank" + std::to_string(r) + ".et";
    ranks[r].metadata.set_version("0.0.4");
  }
  Node comp = node(10, "forward", ChakraProtoMsg::COMP_NODE);
  comp.set_duration_micros(1000);
  Node send = node(11, "send", ChakraProtoMsg::COMM_SEND_NODE);
  send.add_data_deps(10);
  add_int(send, "comm_src", 0);
  add_int(send, "comm_dst", 1);
  add_int(send, "comm_size", 1 << 20);
  add_int(send, "comm_tag", 7);
  ranks[0].nodes = {comp, send};
  Node recv = node(20, "recv", ChakraProtoMsg::COMM_RECV_NODE);
  add_int(recv, "comm_src", 0);
  add_int(recv, "comm_dst", 1);
  add_int(recv, "comm_size", 1 << 20);
  add_int(recv, "comm_tag", 7);
  Node after = node(21, "backward", ChakraProtoMsg::COMP_NODE);
  after.set_duration_micros(500);
  after.add_data_deps(20);
  ranks[1].nodes = {recv, after};
  return ranks;
}

TEST(ChakraImport, RunsAHandWrittenTwoRankTrace) {
  const Program p = program_from_chakra(two_ranks()).program;
  ASSERT_EQ(p.size(), 4);
  ResolvedScenario setup = resolve_scenario(load_scenario("builtin:quickstart", {}));
  setup.training.iterations = p.iterations;
  setup.training.global_batch = p.global_batch;
  for (Engine engine : {Engine::kAnalytic, Engine::kSimgrid}) {
    const SimulationResult r = simulate_program(setup, p, {engine, true, ResourceLimits{}});
    std::map<std::string, std::pair<double, double>> at;
    for (int32_t i = 0; i < p.size(); ++i) {
      at[op_name(p.instructions[i].op) + std::to_string(p.instructions[i].device)] = {
          r.times.start_s[i], r.times.end_s[i]};
    }
    EXPECT_DOUBLE_EQ(at["FWD0"].first, 0);
    EXPECT_DOUBLE_EQ(at["FWD0"].second, 1e-3);
    EXPECT_GE(at["SEND_ACT0"].first, 1e-3);
    EXPECT_GT(at["RECV_ACT1"].second, 1e-3);  // 1 MiB takes time
    EXPECT_GE(at["FWD1"].first, at["RECV_ACT1"].second);
    EXPECT_NEAR(at["FWD1"].second - at["FWD1"].first, 0.5e-3, 1e-12);
  }
}

TEST(ChakraImport, PairsTransfersByTag) {
  std::vector<ChakraRankTrace> ranks = two_ranks();
  ranks[1].nodes[0].mutable_attr(3)->set_int64_val(8);  // the RECV's comm_tag
  try {
    program_from_chakra(ranks);
    FAIL() << "a SEND without its RECV was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank0.et: node 11 (send): no COMM_RECV_NODE on rank 1"));
  }
}

TEST(ChakraImport, BadNodesNameFileNodeAndField) {
  const auto error_of = [](std::vector<ChakraRankTrace> ranks) {
    try {
      program_from_chakra(ranks);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::vector<ChakraRankTrace> dangling = two_ranks();
  dangling[1].nodes[1].add_data_deps(99);
  EXPECT_EQ(error_of(dangling),
            "rank1.et: node 21 (backward): data_deps names node 99, which the file does not hold");
  std::vector<ChakraRankTrace> unsized = two_ranks();
  unsized[0].nodes[1].mutable_attr()->DeleteSubrange(2, 1);  // comm_size
  EXPECT_EQ(error_of(unsized), "rank0.et: node 11 (send): attribute comm_size is missing");
  std::vector<ChakraRankTrace> far = two_ranks();
  far[0].nodes[1].mutable_attr(1)->set_int64_val(5);  // comm_dst
  EXPECT_THAT(error_of(far), HasSubstr("rank0.et: node 11 (send): comm_dst 5 is not a rank"));
  std::vector<ChakraRankTrace> broadcast = two_ranks();
  broadcast[0].nodes.push_back(node(12, "broadcast", ChakraProtoMsg::COMM_COLL_NODE));
  add_int(broadcast[0].nodes.back(), "comm_type", ChakraProtoMsg::BROADCAST);
  EXPECT_THAT(error_of(broadcast), HasSubstr("node 12 (broadcast): comm_type BROADCAST"));
  std::vector<ChakraRankTrace> cycle = two_ranks();
  cycle[0].nodes[0].add_ctrl_deps(11);
  EXPECT_THAT(error_of(cycle), HasSubstr("form a cycle"));
}

// Damaged files (bytes overwritten at random, a fixed seed) are input errors or run; they
// never crash the reader or the engine.
TEST(ChakraImport, DamagedTracesAreErrorsNeverCrashes) {
  const std::vector<std::string> overrides = {"cluster.gpus_per_node=8", "training.data_parallel=2",
                                              "training.iterations=1", "training.microbatches=4"};
  const ResolvedScenario setup = resolve_scenario(load_scenario("builtin:quickstart", overrides));
  const ChakraWorkload w = chakra_workload(exported_program("builtin:quickstart", overrides), {});
  std::vector<std::string> files;
  for (const ChakraRankTrace& r : w.ranks) {
    std::ostringstream out;
    write_chakra_stream(out, r);
    files.push_back(out.str());
  }
  std::mt19937 random(1);
  int read = 0, ran = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const size_t rank = random() % files.size();
    std::string bytes = files[rank];
    for (int k = 0, n = 1 + static_cast<int>(random() % 3); k < n; ++k) {
      bytes[random() % bytes.size()] = static_cast<char>(random() % 256);
    }
    std::vector<ChakraRankTrace> ranks;
    try {
      for (size_t r = 0; r < files.size(); ++r) {
        std::istringstream in(r == rank ? bytes : files[r]);
        ranks.push_back(read_chakra_stream(in, "rank" + std::to_string(r) + ".et"));
        ranks.back().rank = static_cast<int32_t>(r);
      }
      Program p = program_from_chakra(ranks).program;
      ++read;
      simulate_program(setup, std::move(p), {Engine::kAnalytic, true, ResourceLimits{}, true});
      ++ran;
    } catch (const InputError&) {
    } catch (const RuntimeFailure&) {
    }
  }
  // Some damage lands where it changes nothing the reader checks (names, sizes): those run.
  EXPECT_GT(ran, 0);
  EXPECT_LE(ran, read);
}

TEST(ChakraStream, BadFilesNameTheFile) {
  TempDir dir;
  EXPECT_THROW(read_chakra_dir((dir.path() / "missing").string()), InputError);
  try {
    read_chakra_dir(dir.path().string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no Chakra trace"));
  }
  dir.write("w.0.et", std::string("\x05\x0a\x01", 3));  // 5 bytes announced, 2 there
  try {
    read_chakra_dir(dir.path().string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("w.0.et: message 0 (GlobalMetadata): the file ends inside"));
  }
  std::filesystem::remove(dir.path() / "w.0.et");
  const ChakraWorkload w = chakra_workload(exported_program("builtin:quickstart", {}), {});
  write_chakra_workload(w, dir.path().string());
  std::filesystem::remove(dir.path() / "pipetwin.2.et");
  try {
    read_chakra_dir(dir.path().string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("pipetwin.2.et: missing"));
  }
}

}  // namespace
}  // namespace pipetwin
