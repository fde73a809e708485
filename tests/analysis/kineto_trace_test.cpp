// PyTorch profiler (Kineto) traces in: a trace written here from a simulated timeline reads back
// to the same spans, and HTA's sample traces import with every GPU kernel, copy and set
// accounted for (matched to an op or not), each lane's time the file's.
#include "analysis/kineto_trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "analysis/compressed_file.h"
#include "analysis/pass_spans.h"
#include "cli_runner.h"
#include "sim/driver/simulate.h"
#include "sim/fit/measured_ranges.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using testing::TempDir;

// What the profiler would record of a span: a kernel on a stream, under a GPU range named as
// Megatron and torchtitan name theirs ("forward", "backward", "optimizer"), or an NCCL kernel.
nlohmann::json kineto_of(const Timeline& t, int32_t device) {
  nlohmann::json events = nlohmann::json::array();
  const std::map<std::string, std::string> range = {
      {"FWD", "## forward ##"}, {"BWD", "## backward ##"}, {"OPTIM", "Optimizer.step#Adam.step"}};
  const std::map<std::string, std::string> nccl = {
      {"SEND_ACT", "ncclDevKernel_Send"},
      {"SEND_GRAD", "ncclDevKernel_Send"},
      {"RECV_ACT", "ncclDevKernel_Recv"},
      {"RECV_GRAD", "ncclDevKernel_Recv"},
      {"ALLREDUCE", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"}};
  int64_t correlation = 1;
  for (const Span& s : t.spans) {
    if (s.device != device) continue;
    const double ts = s.start_s * 1e6 + 1000, dur = s.duration_s() * 1e6;
    const bool is_range = range.count(s.op) > 0;
    events.push_back({{"ph", "X"},
                      {"cat", "kernel"},
                      {"name", is_range ? "sm90_xmma_gemm_bf16" : nccl.at(s.op)},
                      {"pid", 0},
                      {"tid", is_range ? 7 : 20},
                      {"ts", ts},
                      {"dur", dur},
                      {"args", {{"correlation", correlation++}, {"stream", is_range ? 7 : 20}}}});
    if (is_range) {
      events.push_back({{"ph", "X"},
                        {"cat", "gpu_user_annotation"},
                        {"name", range.at(s.op)},
                        {"pid", 0},
                        {"tid", 7},
                        {"ts", ts},
                        {"dur", dur}});
    }
  }
  // ProfilerStep#N tiles the device's time: from its iteration's first span to the next's.
  std::map<int32_t, std::pair<double, double>> steps;
  for (const Span& s : t.spans) {
    if (s.device != device) continue;
    auto [it, added] = steps.try_emplace(s.iteration, s.start_s, s.end_s);
    it->second = {std::min(it->second.first, s.start_s), std::max(it->second.second, s.end_s)};
  }
  for (auto it = steps.begin(); it != steps.end(); ++it) {
    const auto next = std::next(it);
    const double end = next == steps.end() ? it->second.second + 1e-6 : next->second.first;
    events.push_back({{"ph", "X"},
                      {"cat", "user_annotation"},
                      {"name", "ProfilerStep#" + std::to_string(it->first)},
                      {"pid", 0},
                      {"tid", 1},
                      {"ts", it->second.first * 1e6 + 1000},
                      {"dur", (end - it->second.first) * 1e6}});
  }
  return {{"schemaVersion", 1},
          {"distributedInfo", {{"backend", "nccl"}, {"rank", device}}},
          {"traceEvents", events}};
}

TEST(KinetoTrace, ATraceOfASimulatedRunReadsBackToItsSpans) {
  SimulationOptions options;
  const SimulationResult run = simulate(load_scenario("builtin:quickstart", {}), options);
  TempDir dir;
  std::vector<std::string> paths;
  for (const TimelineDevice& d : run.timeline.devices) {
    paths.push_back((dir.path() / ("rank" + std::to_string(d.id) + ".json")).string());
    std::ofstream(paths.back()) << kineto_of(run.timeline, d.id).dump();
  }
  const Timeline back = timeline_from_kineto(paths, default_annotation_rules());
  ASSERT_EQ(back.devices.size(), run.timeline.devices.size());
  // (device, op, start, end), the transfers' ops by their direction only.
  const auto key = [](const Span& s) {
    std::string op = s.op;
    if (op == "SEND_GRAD") op = "SEND_ACT";
    if (op == "RECV_GRAD") op = "RECV_ACT";
    return std::tuple{s.device, op, std::llround(s.start_s * 1e9), std::llround(s.end_s * 1e9)};
  };
  std::multiset<std::tuple<int32_t, std::string, long long, long long>> simulated, imported;
  for (const Span& s : run.timeline.spans) simulated.insert(key(s));
  for (const Span& s : back.spans) imported.insert(key(s));
  std::vector<std::tuple<int32_t, std::string, long long, long long>> only_one;
  std::set_symmetric_difference(imported.begin(), imported.end(), simulated.begin(),
                                simulated.end(), std::back_inserter(only_one));
  for (const auto& [d, op, s, e] : only_one)
    ADD_FAILURE() << d << " " << op << " " << s << " " << e;
  for (const Span& s : back.spans) EXPECT_FALSE(s.op.empty()) << s.name;
}

// The profiler's ranges number the microbatches (the k-th forward range of a step on a rank is
// its microbatch k), and with the scenario they get the simulation's sample ranges.
TEST(KinetoTrace, AnnotationsNumberTheMicrobatchesAsTheSimulationDoes) {
  const LoadedScenario loaded =
      load_scenario("builtin:quickstart", {"training.data_parallel=2", "cluster.gpus_per_node=8"});
  const SimulationResult run = simulate(loaded, {});
  TempDir dir;
  std::vector<std::string> paths;
  for (const TimelineDevice& d : run.timeline.devices) {
    paths.push_back((dir.path() / ("rank" + std::to_string(d.id) + ".json")).string());
    std::ofstream(paths.back()) << kineto_of(run.timeline, d.id).dump();
  }
  Timeline back = passes_of(timeline_from_kineto(paths, default_annotation_rules()));
  assign_sample_ranges(run.setup, back);
  using Key = std::tuple<int32_t, std::string, long long>;  // device, op, start
  std::map<Key, const Span*> simulated;
  for (const Span& s : run.timeline.spans) {
    simulated[{s.device, s.op, std::llround(s.start_s * 1e9)}] = &s;
  }
  int32_t passes = 0;
  for (const Span& s : back.spans) {
    if (s.op != "FWD" && s.op != "BWD") continue;
    const auto it = simulated.find({s.device, s.op, std::llround(s.start_s * 1e9)});
    ASSERT_NE(it, simulated.end()) << s.name;
    const Span& truth = *it->second;
    EXPECT_EQ(s.iteration, truth.iteration) << s.name;
    EXPECT_EQ(s.stage, truth.stage) << s.name;
    EXPECT_EQ(s.microbatch, truth.microbatch) << s.name << " on " << s.device;
    EXPECT_EQ(s.range_lo, truth.range_lo) << s.name;
    EXPECT_EQ(s.range_hi, truth.range_hi) << s.name;
    ++passes;
  }
  // 8 devices, 2 iterations, on each device a forward and a backward per microbatch.
  EXPECT_EQ(passes, 8 * 2 * 2 * run.setup.training.microbatches);
}

const std::string kHta = std::string(PIPETWIN_SOURCE_DIR) + "/tests/data/hta/";

TEST(KinetoTrace, HtasSampleTracesImportWithEveryKernelAccountedFor) {
  const std::vector<std::string> paths = {kHta + "sampled_rank-0.json.gz",
                                          kHta + "sampled_rank-1.json.gz"};
  const Timeline t = timeline_from_kineto(paths, default_annotation_rules());
  ASSERT_EQ(t.devices.size(), 2u);
  for (size_t f = 0; f < paths.size(); ++f) {
    // The file's GPU work by kind, read here from the JSON itself.
    const nlohmann::json trace = nlohmann::json::parse(read_maybe_gzipped(paths[f]));
    const int32_t rank = trace["distributedInfo"]["rank"];
    std::map<std::string, double> file_us;
    size_t kernels = 0;
    for (const nlohmann::json& e : trace["traceEvents"]) {
      const std::string cat = e.value("cat", "");
      if (e.value("ph", "") != "X") continue;
      if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") continue;
      const bool nccl = e.value("name", "").rfind("nccl", 0) == 0;
      file_us[cat != "kernel" ? "copy" : nccl ? "collective" : "compute"] += e["dur"].get<double>();
      ++kernels;
    }
    std::map<std::string, double> imported_us;
    size_t spans = 0, matched = 0;
    for (const Span& s : t.spans) {
      if (s.device != rank) continue;
      imported_us[s.lane] += s.duration_s() * 1e6;
      ++spans;
      matched += s.op.empty() ? 0 : 1;
    }
    EXPECT_EQ(spans, kernels);
    for (const auto& [lane, us] : file_us) EXPECT_NEAR(imported_us[lane], us, 1e-6 * us) << lane;
    EXPECT_GT(matched, 0u);  // its forward ranges and NCCL collectives
  }
}

TEST(KinetoTrace, BadTracesAndMapsNameTheFileAndTheLine) {
  TempDir dir;
  const std::string path = (dir.path() / "rank0.json").string();
  std::ofstream(path) << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1}]})";
  try {
    timeline_from_kineto({path}, default_annotation_rules());
    ADD_FAILURE() << "accepted an event without dur";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": event 0: needs numbers ts and dur"),
              std::string::npos)
        << e.what();
  }
  const std::string map = (dir.path() / "map.txt").string();
  std::ofstream(map) << "# Megatron's ranges\nforward-compute = FWD\nbackward-compute = BACKWARD\n";
  try {
    read_annotation_rules(map);
    ADD_FAILURE() << "accepted an unknown op";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(map + ":3: 'BACKWARD' is not a Program op"),
              std::string::npos)
        << e.what();
  }
  // A pattern whose matching could take exponential time is refused at its line (a fuzzed
  // map with "fo****..." took over 10 s on one range name); bounded ones are kept.
  for (const char* risky : {"fo***n", "(a+)+b", "(forward|fwd)*x", "a?+", "r\\33333333333",
                            "x{99999999999999999999}"}) {
    std::ofstream(map) << "optim(izer)?\\.step = OPTIM\n" << risky << " = FWD\n";
    try {
      read_annotation_rules(map);
      ADD_FAILURE() << "accepted " << risky;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(map + ":2: '" + risky + "'"), std::string::npos)
          << e.what();
    }
  }
  std::ofstream(map) << "optim(izer)?\\.step = OPTIM\nall_?reduce = ALLREDUCE\nx{2,}y*? = FWD\n";
  EXPECT_EQ(read_annotation_rules(map).size(), 3u);
}

}  // namespace
}  // namespace pipetwin
