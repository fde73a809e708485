// Lowering's output, pinned: the Program of every shipped scenario (and of each phase of
// the FreezePipe ones), of seeded random scenarios of every schedule kind with and without
// offload, stage replicas, blocking transfers and frozen layers, and of tensor-parallel
// GPTs, each compared by the digest of its full dump (tests/support/program_dump.h) with
// the digest the golden file under tests/sim/schedule/golden/ holds. Any change to any
// field of any instruction, to a dependency row's order, to a pairing or to a collective
// fails the test.
//
// The golden files are data made by the code, not a specification: a change meant to alter
// Programs (or a change to tests/support/random_setup.h, which draws the random cases)
// regenerates them with
//   PIPETWIN_REGENERATE_GOLDEN=1 build/tests/pipetwin_tests --gtest_filter='*LoweringGolden*'
// and the diff of the golden files shows which Programs changed. To see how one changed,
// PIPETWIN_GOLDEN_DUMP_DIR=DIR writes every case's full dump into DIR, before and after.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "program_dump.h"
#include "random_setup.h"
#include "shipped_scenarios.h"
#include "sim/driver/build_program.h"
#include "sim/freeze/training_run.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/stage_replicas.h"
#include "small_gpt.h"

namespace pipetwin {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDir = fs::path(PIPETWIN_SOURCE_DIR) / "tests/sim/schedule/golden";

// One Program to pin: its name and how to build it.
struct Case {
  std::string name;
  std::function<Program()> build;
};

// "instructions digest" of a case; a case whose build throws is pinned by its message.
std::string outcome(const Case& c) {
  testing::Digest digest;
  std::ofstream file;
  if (const char* dir = std::getenv("PIPETWIN_GOLDEN_DUMP_DIR")) {
    std::string name = c.name;
    std::replace(name.begin(), name.end(), '/', '_');
    fs::create_directories(dir);
    file.open(fs::path(dir) / (name + ".txt"));
  }
  const auto write = [&](const std::string& text) {
    digest.add(text);
    if (file.is_open()) file << text;
  };
  std::string summary;
  try {
    const Program program = c.build();
    testing::program_dump(program, write);
    summary = std::to_string(program.size());
  } catch (const std::exception& e) {
    write(std::string("error: ") + e.what());
    summary = "error";
  }
  return summary + " " + digest.hex();
}

// The golden file's cases: name -> "instructions digest".
std::map<std::string, std::string> read_golden(const fs::path& path) {
  std::map<std::string, std::string> golden;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    golden[line.substr(0, space)] = line.substr(space + 1);
  }
  return golden;
}

// Whether case `name` belongs to `group` ("scenario/uniform" holds itself and
// "scenario/uniform/...").
bool in_group(const std::string& name, const std::string& group) {
  return name == group || name.rfind(group + "/", 0) == 0;
}

// Compares the cases of `group` with the golden file, or rewrites the group's lines of the
// file when asked to.
void check_against_golden(const std::string& file, const std::string& group,
                          const std::vector<Case>& cases) {
  const fs::path path = kGoldenDir / file;
  std::map<std::string, std::string> actual;
  for (const Case& c : cases) actual[c.name] = outcome(c);
  std::map<std::string, std::string> golden = read_golden(path);
  if (std::getenv("PIPETWIN_REGENERATE_GOLDEN")) {
    std::erase_if(golden, [&](const auto& entry) { return in_group(entry.first, group); });
    golden.insert(actual.begin(), actual.end());
    fs::create_directories(kGoldenDir);
    std::ofstream out(path);
    out << "# Written by tests/sim/schedule/lowering_golden_test.cpp: case, instructions, "
           "digest of the Program's dump.\n";
    for (const auto& [name, result] : golden) out << name << ' ' << result << '\n';
    GTEST_SKIP() << "rewrote " << group << " in " << path;
  }
  ASSERT_TRUE(fs::exists(path)) << "no golden file " << path;
  for (const auto& [name, result] : actual) {
    const auto found = golden.find(name);
    if (found == golden.end()) {
      ADD_FAILURE() << name << ": not in " << path << " (regenerate it, see this test's header)";
    } else {
      EXPECT_EQ(result, found->second) << name << ": the Program differs from the golden one";
    }
  }
  for (const auto& [name, result] : golden) {
    if (in_group(name, group)) {
      EXPECT_TRUE(actual.count(name)) << name << ": in " << path << " but no longer built";
    }
  }
}

std::vector<fs::path> shipped_scenarios() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(fs::path(PIPETWIN_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() == ".textproto") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// A shipped scenario as `simulate` builds it: as written, or for a FreezePipe run each
// phase's Program (one iteration with its frozen prefix, on the phase's balanced partition).
// The largest (testing::benchmark_sized) on one small replica.
std::vector<Case> scenario_cases(const fs::path& path) {
  const std::string name = "scenario/" + path.stem().string();
  const std::vector<std::string> overrides =
      testing::benchmark_sized(path.stem().string())
          ? testing::one_small_replica_overrides(path.stem().string())
          : std::vector<std::string>{};
  const auto resolved = [path, overrides] {
    return resolve_scenario(load_scenario(path.string(), overrides));
  };
  ResolvedScenario setup;
  try {
    setup = resolved();
  } catch (const std::exception&) {
    setup.freeze.enabled = false;  // the case below pins the error
  }
  if (!setup.freeze.enabled) return {{name, [resolved] { return build_program(resolved()); }}};
  std::vector<FreezeEvent> phases = {{0, 0}};
  for (const FreezeEvent& event :
       freeze_events(setup.freeze, static_cast<int32_t>(setup.model.layers.size()),
                     setup.training.iterations)) {
    phases.push_back(event);
  }
  std::vector<Case> cases;
  for (const FreezeEvent& phase : phases) {
    PhasePlan plan;
    plan.frozen_layers = phase.frozen_layers;
    plan.stages = setup.schedule.stages;
    plan.data_parallel = setup.training.data_parallel;
    cases.push_back({name + "/frozen" + std::to_string(phase.frozen_layers),
                     [setup, plan] { return build_program(phase_setup(setup, plan)); }});
  }
  return cases;
}

// One test per scenario, each in its own process (the largest, 1536 GPUs, takes a while).
class LoweringGoldenScenario : public ::testing::TestWithParam<fs::path> {};

TEST_P(LoweringGoldenScenario, ProgramIsTheGoldenOne) {
  check_against_golden("lowering_scenarios.txt", "scenario/" + GetParam().stem().string(),
                       scenario_cases(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Shipped, LoweringGoldenScenario, ::testing::ValuesIn(shipped_scenarios()),
                         [](const auto& info) {
                           std::string name = info.param.stem().string();
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// A scenario no longer shipped leaves no lines behind.
TEST(LoweringGolden, EveryPinnedScenarioIsShipped) {
  std::set<std::string> shipped;
  for (const fs::path& path : shipped_scenarios()) shipped.insert(path.stem().string());
  for (const auto& [name, result] : read_golden(kGoldenDir / "lowering_scenarios.txt")) {
    const std::string stem = name.substr(9, name.find('/', 9) - 9);  // after "scenario/"
    EXPECT_TRUE(shipped.count(stem)) << name << ": no scenarios/" << stem << ".textproto";
  }
}

const proto::ScheduleKind kKinds[] = {proto::GPIPE,
                                      proto::ONE_F_ONE_B,
                                      proto::INTERLEAVED_ONE_F_ONE_B,
                                      proto::UMPIPE,
                                      proto::ZB_H1,
                                      proto::ZB_H2,
                                      proto::ZB_V,
                                      proto::DUALPIPE,
                                      proto::PIPEFB,
                                      proto::PIPEDREAM_ASYNC,
                                      proto::PIPEDREAM_2BW,
                                      proto::APAPO};

bool takes_stage_replicas(proto::ScheduleKind kind) {
  return kind == proto::GPIPE || kind == proto::ONE_F_ONE_B || is_asynchronous(kind);
}

// Offload on every stage, over a host link.
void enable_offload(ResolvedScenario& setup, std::mt19937& rng, bool weight_stashes,
                    bool selective) {
  setup.cluster.has_host_link = true;
  setup.cluster.host_link = {std::uniform_real_distribution<double>(5e9, 60e9)(rng), 1e-6};
  setup.cluster.host_memory_bytes = 1e18;
  OffloadSpec& offload = setup.schedule.offload;
  offload.enabled = true;
  offload.prefetch_horizon = std::uniform_int_distribution<int>(0, 4)(rng);
  offload.fraction = std::uniform_real_distribution<double>(0.1, 1.0)(rng);
  offload.weight_stashes = weight_stashes;
  if (selective) offload.policy = proto::Offload::SELECTIVE;
  offload.stages.clear();
  for (int s = 0; s < setup.schedule.chunks(); ++s) offload.stages.push_back(s);
}

// Random stage replicas on one pipeline, as tests/sim/schedule/stage_replicas_test.cpp draws.
void replicate_stages(ResolvedScenario& setup, std::mt19937& rng) {
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  setup.training.data_parallel = 1;
  setup.schedule.stage_replicas.clear();
  for (int s = 0; s < setup.schedule.stages; ++s) {
    setup.schedule.stage_replicas.push_back(integer(1, 3));
  }
  const StageReplicas replicas(setup.schedule.stage_replicas);
  setup.training.microbatches =
      std::max({setup.training.microbatches, 3,
                setup.schedule.kind == proto::PIPEDREAM_2BW ? setup.schedule.stages : 1});
  setup.training.global_batch = setup.training.microbatches * integer(1, 4);
  const int gpus_per_node = integer(1, replicas.devices());
  setup.cluster.gpus_per_node = gpus_per_node;
  setup.cluster.nodes = (replicas.devices() + gpus_per_node - 1) / gpus_per_node;
  setup.cluster.devices.clear();
  for (int d = 0; d < setup.cluster.nodes * gpus_per_node; ++d) {
    setup.cluster.devices.push_back({d, d / gpus_per_node, "gpu" + std::to_string(d),
                                     std::uniform_real_distribution<double>(50, 500)(rng) * 1e12,
                                     1e15});
  }
}

// Trial t of a kind: plain (t % 4 == 0); offloading activations (1; asynchronous
// pipelines every other time their weight stashes too); with replicated stages, or else
// blocking transfers, or else (ZB-V and DualPipe, which refuse them) three iterations (2);
// the selective offload policy, or for asynchronous pipelines weight stashes alone (3).
// From trial 4 on every other one freezes a prefix of the layers (not ZB-V, whose greedy
// order does not take frozen chunks).
ResolvedScenario random_case(std::mt19937& rng, proto::ScheduleKind kind, int trial) {
  ResolvedScenario setup = kind == proto::PIPEFB ? testing::random_pipefb_setup(rng, trial % 2 == 1)
                                                 : testing::random_setup(rng, kind);
  switch (trial % 4) {
    case 1:
      enable_offload(setup, rng, is_asynchronous(kind) && trial % 8 == 1, false);
      break;
    case 2:
      if (takes_stage_replicas(kind)) {
        replicate_stages(setup, rng);
        setup.schedule.max_staleness = trial % 3;
      } else if (kind == proto::ZB_V || kind == proto::DUALPIPE) {
        setup.training.iterations = 3;
      } else {
        setup.schedule.comm_overlap = false;
      }
      break;
    case 3:
      if (is_asynchronous(kind)) {
        enable_offload(setup, rng, true, false);
        setup.schedule.offload.activations = false;
      } else {
        enable_offload(setup, rng, false, true);
      }
      break;
  }
  if (trial >= 4 && trial % 2 == 1 && kind != proto::ZB_V) {
    const int frozen =
        std::uniform_int_distribution<int>(1, static_cast<int>(setup.model.layers.size()) - 1)(rng);
    for (int l = 0; l < frozen; ++l) setup.model.layers[l].frozen = true;
  }
  return setup;
}

TEST(LoweringGolden, RandomPrograms) {
  std::vector<Case> cases;
  for (proto::ScheduleKind kind : kKinds) {
    std::mt19937 rng(4200 + kind);
    for (int trial = 0; trial < 8; ++trial) {
      const ResolvedScenario setup = random_case(rng, kind, trial);
      cases.push_back({"random/" + proto::ScheduleKind_Name(kind) + "/" + std::to_string(trial),
                       [setup] { return build_program(setup); }});
    }
  }
  check_against_golden("lowering_random.txt", "random", cases);
}

// Tensor parallelism expands the lowered Program onto T GPUs per stage: small GPTs of each
// kind that takes it, with and without sequence parallelism.
TEST(LoweringGolden, TensorParallelPrograms) {
  std::vector<Case> cases;
  for (proto::ScheduleKind kind : kKinds) {
    // UMPIPE's plans and PipeFB's placement do not take tensor parallelism.
    if (kind == proto::UMPIPE || kind == proto::PIPEFB) continue;
    for (int tp : {2, 4}) {
      const std::string name =
          "tensor_parallel/" + proto::ScheduleKind_Name(kind) + "/tp" + std::to_string(tp);
      const int stages = 2, microbatches = 4;
      std::vector<std::string> more = {"schedule.kind=" + proto::ScheduleKind_Name(kind)};
      if (kind == proto::INTERLEAVED_ONE_F_ONE_B) more.push_back("schedule.virtual_stages=2");
      if (tp == 4) more.push_back("training.sequence_parallel=true");
      cases.push_back(
          {name,
           [=] { return build_program(testing::small_gpt(stages, 4, microbatches, tp, more)); }});
    }
  }
  check_against_golden("lowering_tensor_parallel.txt", "tensor_parallel", cases);
}

}  // namespace
}  // namespace pipetwin
