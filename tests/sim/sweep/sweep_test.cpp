// `pipetwin sweep`: the grid (axes, product, naming), the child-process pool and its
// result protocol, and the command end to end against `pipetwin simulate`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_runner.h"
#include "sim/simgrid/run_in_child.h"
#include "sim/spec/errors.h"
#include "sim/sweep/fork_pool.h"
#include "sim/sweep/point_result.h"
#include "sim/sweep/progress_bar.h"
#include "sim/sweep/shard.h"
#include "sim/sweep/sweep_grid.h"
#include "sim/sweep/sweep_row.h"
#include "sim/sweep/vary_axis.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::read_all;
using testing::run_pipetwin;
using testing::TempDir;

const std::string kUniform = std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/uniform.textproto";

// Four layers on two stages, so that schedule.partition has several valid values.
const char* kFourLayers = R"(
name: "four"
cluster {
  nodes: 1
  gpus_per_node: 2
  gpu { name: "test" peak_tflops: 100 memory_gib: 80 }
  intra_node { bandwidth_gbytes_per_s: 100 latency_us: 0 }
}
model {
  layers { name: "l0" fwd_ms: 1 bwd_ms: 2 activation_bytes: 1000 parameter_bytes: 100 }
  layers { name: "l1" fwd_ms: 2 bwd_ms: 4 activation_bytes: 1000 parameter_bytes: 100 }
  layers { name: "l2" fwd_ms: 1 bwd_ms: 2 activation_bytes: 1000 parameter_bytes: 100 }
  layers { name: "l3" fwd_ms: 4 bwd_ms: 8 activation_bytes: 1000 parameter_bytes: 100 }
}
training { global_batch: 8 microbatches: 4 }
schedule { kind: GPIPE stages: 2 }
)";

// ---- the grid ----

TEST(VaryAxis, SplitsAtCommasOutsideBracketsBracesAndQuotes) {
  EXPECT_THAT(split_vary_values("4,8,16"), ElementsAre("4", "8", "16"));
  EXPECT_THAT(split_vary_values("[1,3],[2,2]"), ElementsAre("[1,3]", "[2,2]"));
  EXPECT_THAT(split_vary_values("{a: 1, b: [2,3]}, {a: 4}"),
              ElementsAre("{a: 1, b: [2,3]}", "{a: 4}"));
  EXPECT_THAT(split_vary_values(R"("a,b",'c,\'d',e)"), ElementsAre(R"("a,b")", R"('c,\'d')", "e"));
}

TEST(VaryAxis, SemicolonsSeparateWhenPresent) {
  EXPECT_THAT(split_vary_values("[1,3];[2,2]"), ElementsAre("[1,3]", "[2,2]"));
  EXPECT_THAT(split_vary_values("1,3;2,2"), ElementsAre("1,3", "2,2"));
  EXPECT_THAT(split_vary_values("{a: 1; b: 2},{a: 3}"), ElementsAre("{a: 1; b: 2}", "{a: 3}"));
}

TEST(VaryAxis, ParsesPathAndValues) {
  const VaryAxis axis = parse_vary(" schedule.kind = GPIPE, ONE_F_ONE_B");
  EXPECT_EQ(axis.path, "schedule.kind");
  EXPECT_THAT(axis.values, ElementsAre("GPIPE", "ONE_F_ONE_B"));
}

TEST(VaryAxis, RejectsMalformedLists) {
  for (const char* bad :
       {"training.microbatches", "=1,2", "training.microbatches=", "training.microbatches= ",
        "training.microbatches=1,,2", "training.microbatches=1,2,", "schedule.partition=[1,3],[2,2",
        "schedule.partition=[1,3]],[2,2]", "name=\"a,b", "x=4,8,4"}) {
    EXPECT_THROW(parse_vary(bad), InputError) << bad;
  }
  try {
    parse_vary("training.microbatches=");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--vary training.microbatches=: no values after '='");
  }
}

TEST(SweepGrid, CartesianProductHasEveryCombinationFirstAxisSlowest) {
  const std::vector<SweepPoint> points =
      cartesian_product({{"a", {"1", "2", "3"}}, {"b", {"x", "y"}}, {"c", {"z"}}});
  ASSERT_EQ(points.size(), 6u);
  std::vector<std::string> names;
  for (const SweepPoint& p : points) names.push_back(point_name(p));
  EXPECT_THAT(names, ElementsAre("a=1, b=x, c=z", "a=1, b=y, c=z", "a=2, b=x, c=z", "a=2, b=y, c=z",
                                 "a=3, b=x, c=z", "a=3, b=y, c=z"));
}

TEST(SweepGrid, PointOverridesComeAfterTheFixedOnes) {
  const std::vector<SweepPoint> points = cartesian_product({{"a", {"1"}}, {"b", {"[1,2]"}}});
  EXPECT_THAT(point_overrides({"c=3"}, points[0]), ElementsAre("c=3", "a=1", "b=[1,2]"));
}

TEST(SweepGrid, RejectsAPathVariedTwiceOrAlsoSet) {
  EXPECT_THROW(cartesian_product({{"a", {"1"}}, {"a", {"2"}}}), InputError);
  EXPECT_THROW(cartesian_product({{"a", {"1"}}}, {" a =5"}), InputError);
  EXPECT_NO_THROW(cartesian_product({{"a", {"1"}}}, {"ab=5"}));
}

// ---- results, ordering, progress ----

TEST(PointResult, RoundTripsExactlyAndRejectsPartialRecords) {
  PointResult r;
  r.status = PointStatus::kOutOfMemory;
  r.iteration_time_s = 0.1 + 0.2;
  r.throughput_samples_per_s = 1.0 / 3;
  r.bubble_ratio = 0.125;
  r.peak_memory_bytes = 8e12;
  r.out_of_memory = true;
  r.error = "with, commas\nand lines";
  const std::string bytes = encode_point_result(r);
  const std::optional<PointResult> back = decode_point_result(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->status, r.status);
  EXPECT_EQ(back->iteration_time_s, r.iteration_time_s);
  EXPECT_EQ(back->throughput_samples_per_s, r.throughput_samples_per_s);
  EXPECT_EQ(back->bubble_ratio, r.bubble_ratio);
  EXPECT_EQ(back->peak_memory_bytes, r.peak_memory_bytes);
  EXPECT_TRUE(back->out_of_memory);
  EXPECT_EQ(back->error, r.error);
  EXPECT_FALSE(decode_point_result(""));
  EXPECT_FALSE(decode_point_result(bytes.substr(0, bytes.size() - 1)));
  EXPECT_FALSE(decode_point_result(bytes + "x"));
  EXPECT_FALSE(decode_point_result("some stray text that is long enough to be a header........"));
}

TEST(SweepRow, SortsByIterationTimeFailedLastTiesInGridOrder) {
  const auto row = [](const std::string& name, PointStatus status, double t) {
    SweepRow r;
    r.point.settings = {{"p", name}};
    r.result.status = status;
    r.result.iteration_time_s = t;
    return r;
  };
  std::vector<SweepRow> rows = {
      row("a", PointStatus::kOk, 3),          row("b", PointStatus::kRuntimeError, 0),
      row("c", PointStatus::kOutOfMemory, 1), row("d", PointStatus::kOk, 2),
      row("e", PointStatus::kCrashed, 0),     row("f", PointStatus::kOk, 2)};
  sort_by_iteration_time(rows);
  std::string order;
  for (const SweepRow& r : rows) order += r.point.settings[0].second;
  EXPECT_EQ(order, "cdfabe");
}

TEST(ProgressBar, RendersAndStaysSilentWhenDisabled) {
  EXPECT_EQ(render_progress(12, 40, 10), "[###.......] 12/40 points");
  EXPECT_EQ(render_progress(40, 40, 4), "[####] 40/40 points");
  std::ostringstream silent;
  {
    ProgressBar bar(silent, 3, false);
    bar.update(1);
  }
  EXPECT_EQ(silent.str(), "");
  std::ostringstream shown;
  {
    ProgressBar bar(shown, 2, true);
    bar.update(1);
    bar.clear();
  }
  const std::string line = render_progress(1, 2);
  EXPECT_EQ(shown.str(), "\r" + line + "\r" + std::string(line.size(), ' ') + "\r");
}

// ---- the pool ----

TEST(ForkPool, EveryJobRunsInItsOwnProcessAndReportsBack) {
  const pid_t parent = getpid();
  std::map<size_t, ChildExit> exits;
  run_in_children(
      7, 3,
      [&](size_t i) {
        return std::to_string(i * i) + (getpid() == parent ? " in the parent" : "");
      },
      [&](size_t i, ChildExit exit) { exits[i] = std::move(exit); });
  ASSERT_EQ(exits.size(), 7u);
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_TRUE(exits[i].exited_cleanly());
    EXPECT_EQ(exits[i].output, std::to_string(i * i));
  }
}

TEST(ForkPool, ACrashOrAThrowIsReportedAndTheOthersStillFinish) {
  std::map<size_t, ChildExit> exits;
  run_in_children(
      4, 2,
      [](size_t i) -> std::string {
        if (i == 1) std::abort();
        if (i == 2) throw std::runtime_error("no");
        return "done";
      },
      [&](size_t i, ChildExit exit) { exits[i] = std::move(exit); });
  ASSERT_EQ(exits.size(), 4u);
  EXPECT_TRUE(exits[0].exited_cleanly());
  EXPECT_EQ(exits[3].output, "done");
  EXPECT_FALSE(exits[1].exited_cleanly());
  EXPECT_THAT(describe_child_exit(exits[1].wait_status), HasSubstr("signal 6"));
  EXPECT_FALSE(exits[2].exited_cleanly());
  EXPECT_EQ(exits[2].output, "");
  EXPECT_THAT(describe_child_exit(exits[2].wait_status), HasSubstr("exited with status"));
}

TEST(ForkPool, AThrowingCallbackLeavesNoChildBehind) {
  EXPECT_THROW(run_in_children(
                   5, 5, [](size_t) { return std::string("x"); },
                   [](size_t, ChildExit) { throw std::runtime_error("stop"); }),
               std::runtime_error);
  // Every child was reaped: there is nothing left to wait for.
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

// A child killed by the pool takes its own children with it: a simulation it ran in a process
// of its own (SimGrid's, sim/simgrid/run_in_child.h) is not left running as an orphan.
TEST(ForkPool, AKilledChildLeavesNoGrandchildRunning) {
  TempDir dir;
  const std::string pid_file = (dir.path() / "grandchild").string();
  EXPECT_THROW(run_in_children(
                   2, 2,
                   [&](size_t i) {
                     if (i == 1) return std::string("done");
                     return run_in_child([&] {
                       std::ofstream(pid_file) << ::getpid();
                       ::sleep(60);  // long past the test; killed with its parent
                       return std::string();
                     });
                   },
                   [&](size_t i, ChildExit) {
                     if (i != 1) return;
                     // The other child's grandchild is running by now: stop the pool.
                     for (int k = 0; k < 200 && !std::filesystem::exists(pid_file); ++k) {
                       ::usleep(10000);
                     }
                     throw std::runtime_error("stop");
                   }),
               std::runtime_error);
  ASSERT_TRUE(std::filesystem::exists(pid_file));
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  bool gone = false;
  for (int k = 0; k < 200 && !gone; ++k) {
    gone = ::kill(grandchild, 0) != 0;
    if (!gone) ::usleep(10000);
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " still runs";
  if (!gone) ::kill(grandchild, SIGKILL);
}

// ---- the command ----

nlohmann::json sweep_json(const std::string& args, int expected_exit = 0) {
  const CliResult r = run_pipetwin("sweep " + args + " --json");
  EXPECT_EQ(r.exit_code, expected_exit) << r.err;
  return nlohmann::json::parse(r.out);
}

double simulated_iteration_time(const std::string& args) {
  const CliResult r = run_pipetwin("simulate " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out)["iteration_time_s"].get<double>();
}

TEST(SweepCli, EveryPointMatchesSimulateWithTheSameOverrides) {
  const nlohmann::json rows = sweep_json(kUniform +
                                         " --vary training.microbatches=4,8,16"
                                         " --vary schedule.kind=GPIPE,ONE_F_ONE_B");
  ASSERT_EQ(rows.size(), 6u);
  std::set<std::pair<std::string, std::string>> seen;
  for (const nlohmann::json& row : rows) {
    EXPECT_EQ(row["status"], "ok");
    const std::string m = row["point"]["training.microbatches"];
    const std::string kind = row["point"]["schedule.kind"];
    seen.insert({m, kind});
    const double expected = simulated_iteration_time(
        kUniform + " --set training.microbatches=" + m + " --set schedule.kind=" + kind);
    EXPECT_DOUBLE_EQ(row["iteration_time_s"].get<double>(), expected) << m << " " << kind;
  }
  EXPECT_EQ(seen.size(), 6u);
  // The closed form (M + 1) * 3 ms * (8 / M samples) / 8 of uniform.textproto, as a check
  // that the values reached the points: 4 microbatches take (4 + 1) * 6 ms.
  EXPECT_NEAR(rows.back()["iteration_time_s"].get<double>(), 0.030, 1e-12);
}

TEST(SweepCli, TableIsSortedByIterationTime) {
  const std::string args = kUniform + " --vary training.microbatches=2,4,8,16,32";
  const nlohmann::json rows = sweep_json(args);
  ASSERT_EQ(rows.size(), 5u);
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_LE(rows[i - 1]["iteration_time_s"].get<double>(),
              rows[i]["iteration_time_s"].get<double>());
  }
  EXPECT_EQ(rows[0]["point"]["training.microbatches"], "32");  // smallest bubble first

  const CliResult table = run_pipetwin("sweep " + args);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  std::istringstream lines(table.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_THAT(line, HasSubstr("training.microbatches"));
  EXPECT_THAT(line, HasSubstr("iteration time"));
  EXPECT_THAT(line, HasSubstr("peak memory (GiB)"));
  std::vector<std::string> first_column;
  while (std::getline(lines, line) && !line.empty()) {
    first_column.push_back(line.substr(0, line.find(' ')));
    EXPECT_THAT(line, ::testing::EndsWith("ok"));
  }
  EXPECT_THAT(first_column, ElementsAre("32", "16", "8", "4", "2"));
  EXPECT_EQ(table.err, "");  // not a terminal: no progress bar
}

TEST(SweepCli, BadValueIsRejectedBeforeAnyPointRuns) {
  TempDir dir;
  const auto csv = dir.path() / "out.csv";
  const CliResult r = run_pipetwin("sweep " + kUniform +
                                   " --vary training.microbatches=8,0"
                                   " --vary schedule.kind=GPIPE --csv " +
                                   csv.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "error: point training.microbatches=0, schedule.kind=GPIPE: --set "
            "training.microbatches=0: training.microbatches: must be positive (got 0)\n");
  EXPECT_FALSE(std::filesystem::exists(csv));
  EXPECT_FALSE(std::filesystem::exists(csv.string() + ".tmp"));
}

TEST(SweepCli, MalformedOptionsAreBadInput) {
  for (const std::string& args :
       {std::string("--vary training.microbatches="), std::string("--vary training.microbatches"),
        std::string("--vary training.microbatches=4 --vary training.microbatches=8"),
        std::string("--vary training.microbatches=4,8 --set training.microbatches=2"),
        std::string("--vary no.such_field=1,2"), std::string("--vary schedule.kind=GPIPE -j 0"),
        std::string("--vary schedule.kind=GPIPE --engine nosuch"), std::string("")}) {
    const CliResult r = run_pipetwin("sweep " + kUniform + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
}

// A minimal RFC 4180 reader: quoted fields with "" for a quote.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        rows.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        rows.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\n') {
      rows.emplace_back(1);
    } else {
      rows.back().back() += c;
    }
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}

TEST(SweepCli, CsvHasAHeaderAndOneParsableRowPerPoint) {
  TempDir dir;
  const auto scenario = dir.write("four.textproto", kFourLayers);
  const auto csv = dir.path() / "grid.csv";
  const CliResult r = run_pipetwin("sweep " + scenario.string() +
                                   " --vary schedule.partition=[1,3],[2,2],[3,1]"
                                   " --vary 'training.microbatches=2;4' --csv " +
                                   csv.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto table = parse_csv(read_all(csv));
  ASSERT_EQ(table.size(), 7u);
  EXPECT_THAT(table[0],
              ElementsAre("point", "points", "schedule.partition", "training.microbatches",
                          "iteration_time_s", "throughput_samples_per_s", "bubble_ratio",
                          "peak_memory_bytes", "out_of_memory", "status", "error_kind", "error"));
  const nlohmann::json rows = sweep_json(scenario.string() +
                                         " --vary schedule.partition=[1,3],[2,2],[3,1]"
                                         " --vary 'training.microbatches=2;4'");
  ASSERT_EQ(rows.size(), 6u);
  for (size_t i = 1; i < table.size(); ++i) {
    ASSERT_EQ(table[i].size(), table[0].size());
    const nlohmann::json& row = rows[i - 1];  // same order as the table and the JSON
    EXPECT_EQ(std::stoi(table[i][0]), row["index"].get<int>());
    EXPECT_EQ(table[i][1], "6");
    EXPECT_EQ(table[i][2], row["point"]["schedule.partition"]);
    EXPECT_EQ(table[i][3], row["point"]["training.microbatches"]);
    // Unrounded: the text reads back as exactly the same double.
    EXPECT_EQ(std::stod(table[i][4]), row["iteration_time_s"].get<double>());
    EXPECT_EQ(std::stod(table[i][7]), row["peak_memory_bytes"].get<double>());
    EXPECT_GT(std::stod(table[i][7]), 0);
    EXPECT_EQ(table[i][9], "ok");
  }
  // fwd+bwd per stage: [3,1] 12 and 12 ms, [2,2] 9 and 15 ms, [1,3] 3 and 21 ms; more
  // microbatches of fewer samples each shrink the bubble.
  EXPECT_EQ(table[1][2], "[3,1]");
  EXPECT_EQ(table[1][3], "4");
  EXPECT_EQ(table[1][0], "5");  // the last point of the grid
  EXPECT_EQ(table[6][2], "[1,3]");
  EXPECT_EQ(table[6][3], "2");
  EXPECT_FALSE(std::filesystem::exists(csv.string() + ".tmp"));
}

TEST(SweepCli, ParallelismDoesNotChangeTheResults) {
  const std::string args = kUniform +
                           " --vary training.microbatches=1,2,3,4,5,6,7,8"
                           " --vary schedule.kind=GPIPE,ONE_F_ONE_B --json";
  const CliResult one = run_pipetwin("sweep " + args + " -j 1");
  const CliResult four = run_pipetwin("sweep " + args + " -j 4");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(four.exit_code, 0) << four.err;
  EXPECT_EQ(one.out, four.out);
  EXPECT_EQ(nlohmann::json::parse(one.out).size(), 16u);
}

TEST(SweepCli, APointThatFailsIsReportedAndTheOthersStillRun) {
  TempDir dir;
  const auto csv = dir.path() / "grid.csv";
  const std::string args = kUniform +
                           " --vary model.layers[0].activation_bytes=0,1000000000000"
                           " --vary training.microbatches=4,8 --csv " +
                           csv.string();
  const CliResult r = run_pipetwin("sweep " + args + " --json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: 2 of 4 points failed (their rows say why)\n");
  const nlohmann::json rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const bool huge = rows[i]["point"]["model.layers[0].activation_bytes"] != "0";
    EXPECT_EQ(huge, i >= 2) << "failed points sort last";
    if (huge) {
      EXPECT_EQ(rows[i]["status"], "error");
      EXPECT_EQ(rows[i]["error_kind"], "runtime");
      EXPECT_THAT(rows[i]["error"].get<std::string>(), HasSubstr("runs out of memory"));
      EXPECT_TRUE(rows[i]["iteration_time_s"].is_null());
    } else {
      EXPECT_EQ(rows[i]["status"], "ok");
      EXPECT_GT(rows[i]["iteration_time_s"].get<double>(), 0);
    }
  }
  // The CSV is still written, failed rows included.
  const auto table = parse_csv(read_all(csv));
  ASSERT_EQ(table.size(), 5u);
  EXPECT_EQ(table[4][9], "error");  // after point, points and the two varied fields
  EXPECT_EQ(table[4][4], "");       // no iteration time

  const CliResult text = run_pipetwin("sweep " + kUniform +
                                      " --vary model.layers[0].activation_bytes=0,1000000000000");
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_THAT(text.out, HasSubstr("error: gpu0 runs out of memory"));
  EXPECT_THAT(text.out, HasSubstr("ok"));
}

TEST(SweepCli, AllowOomReportsOutOfMemoryPointsWithTheirMetrics) {
  const nlohmann::json rows =
      sweep_json(kUniform + " --vary model.layers[0].activation_bytes=0,1000000000000 --allow-oom");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["status"], "out_of_memory");
  EXPECT_TRUE(rows[1]["out_of_memory"].get<bool>());
  EXPECT_GT(rows[1]["peak_memory_bytes"].get<double>(), 80.0 * (1 << 30));
  const CliResult text = run_pipetwin(
      "sweep " + kUniform + " --vary model.layers[0].activation_bytes=0,1000000000000 --allow-oom");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_THAT(text.out, HasSubstr("OUT OF MEMORY"));
}

TEST(SweepCli, FixedSetAppliesToEveryPointAndScenarioMayComeLast) {
  const nlohmann::json rows = sweep_json(
      "--vary schedule.kind=GPIPE,ONE_F_ONE_B"
      " --set training.microbatches=16 " +
      kUniform);
  ASSERT_EQ(rows.size(), 2u);
  for (const nlohmann::json& row : rows) {
    EXPECT_NEAR(row["iteration_time_s"].get<double>(), 17 * 0.0015, 1e-12);
  }
}

// ---- shards ----

TEST(Shard, ParsesKOfNAndSlurmArrays) {
  const Shard shard = parse_shard("2/5");
  EXPECT_EQ(shard.index, 2);
  EXPECT_EQ(shard.count, 5);
  EXPECT_TRUE(shard.holds(7));
  EXPECT_FALSE(shard.holds(8));
  for (const char* bad : {"5/5", "-1/3", "1/0", "1", "a/b", "1/2/3", ""}) {
    EXPECT_THROW(parse_shard(bad), InputError) << bad;
  }
  std::map<std::string, const char*> env;
  const auto getenv = [&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second;
  };
  EXPECT_FALSE(shard_from_slurm(getenv).has_value());
  env = {{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}};
  EXPECT_EQ(shard_from_slurm(getenv)->index, 3);
  env = {
      {"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "1"}};
  EXPECT_EQ(shard_from_slurm(getenv)->index, 3);
  env = {{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_COUNT", "4"}};
  EXPECT_THROW(shard_from_slurm(getenv), InputError);
}

// The shards of a sweep, run apart (one by --shard, the others as Slurm array tasks) and
// merged, give the unsharded sweep's CSV row for row, in grid order.
TEST(SweepCli, MergedShardsEqualTheUnshardedSweep) {
  TempDir dir;
  const std::string grid = kUniform + " --vary training.microbatches=2,4,8 --vary " +
                           "schedule.kind=GPIPE,ONE_F_ONE_B --vary training.global_batch=32,64";
  const auto whole = dir.path() / "whole.csv";
  ASSERT_EQ(run_pipetwin("sweep " + grid + " --csv " + whole.string()).exit_code, 0);
  std::string shards;
  for (int k = 0; k < 3; ++k) {
    const auto csv = dir.path() / ("shard" + std::to_string(k) + ".csv");
    // Shard 0 by --shard; the others as Slurm array tasks, which the environment names.
    const std::string how = k == 0 ? " --shard 0/3" : "";
    const std::string env =
        k == 0 ? "" : "SLURM_ARRAY_TASK_ID=" + std::to_string(k) + " SLURM_ARRAY_TASK_COUNT=3 ";
    const CliResult r = testing::run_binary(env + PIPETWIN_BINARY,
                                            "sweep " + grid + how + " --csv " + csv.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(parse_csv(read_all(csv)).size(), 5u) << "a third of the 12 points, and a header";
    shards += " " + csv.string();
  }
  const auto merged = dir.path() / "merged.csv";
  const CliResult r = run_pipetwin("sweep merge" + shards + " -o " + merged.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto expected = parse_csv(read_all(whole));
  std::sort(expected.begin() + 1, expected.end(),
            [](const auto& a, const auto& b) { return std::stoi(a[0]) < std::stoi(b[0]); });
  EXPECT_EQ(parse_csv(read_all(merged)), expected);
}

TEST(SweepCli, MergeRefusesMissingRepeatedAndForeignShards) {
  TempDir dir;
  const std::string grid = kUniform + " --vary training.microbatches=2,4,8,16";
  const auto a = dir.path() / "a.csv", b = dir.path() / "b.csv", c = dir.path() / "c.csv";
  ASSERT_EQ(run_pipetwin("sweep " + grid + " --shard 0/2 --csv " + a.string()).exit_code, 0);
  ASSERT_EQ(run_pipetwin("sweep " + grid + " --shard 1/2 --csv " + b.string()).exit_code, 0);
  ASSERT_EQ(
      run_pipetwin("sweep " + kUniform + " --vary training.iterations=1,2 --csv " + c.string())
          .exit_code,
      0);
  CliResult r = run_pipetwin("sweep merge " + a.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no row for point 1 of 4: a shard is missing"));
  r = run_pipetwin("sweep merge " + a.string() + " " + b.string() + " " + a.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(" again (first at " + a.string()));
  r = run_pipetwin("sweep merge " + a.string() + " " + c.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("another sweep's columns"));
  r = run_pipetwin("sweep merge " + a.string() + " " + b.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse_csv(r.out).size(), 5u);
}

}  // namespace
}  // namespace pipetwin
