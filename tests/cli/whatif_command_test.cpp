// `pipetwin whatif` on the command line: its JSON keys, and malformed traces refused with exit 2
// naming the file and the event or field.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using testing::run_pipetwin;
using testing::TempDir;

const std::string kDir = std::string(PIPETWIN_SOURCE_DIR) + "/tests/data/straggler-analysis/";

TEST(WhatIfCli, PrintsTheSlowdownAndItsJson) {
  const CliResult r =
      run_pipetwin("whatif " + kDir + "timeline-ST.json.gz --meta " + kDir + "meta-ST.yaml --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"step_s", "ideal_step_s", "slowdown", "by_stage", "by_dp_rank", "by_op"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_NEAR(j["slowdown"].get<double>(), 1.179, 0.01);
  TempDir dir;
  const std::string page = (dir.path() / "whatif.html").string();
  const CliResult html = run_pipetwin("whatif " + kDir + "timeline-ST.json.gz --meta " + kDir +
                                      "meta-ST.yaml --report " + page);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_EQ(testing::count_of(testing::read_all(page), "chart bars whatif"), 3u);
}

TEST(WhatIfCli, MalformedTracesNameTheFileAndTheEvent) {
  TempDir dir;
  const std::string meta = (dir.path() / "meta.yaml").string();
  std::ofstream(meta) << "dp_size: 1\npp_size: 1\n";
  const auto refused = [&](const std::string& events, const std::string& what) {
    const std::string path = (dir.path() / "trace.json").string();
    std::ofstream(path) << events;
    const CliResult r = run_pipetwin("whatif " + path + " --meta " + meta);
    EXPECT_EQ(r.exit_code, 2) << events << "\n" << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  };
  const std::string names =
      R"({"name":"process_name","ph":"M","pid":0,"args":{"name":"DP rank [0]"}},)"
      R"({"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"PP rank 0, TP rank 0, compute"}},)";
  refused(
      "[" + names +
          R"({"name":"forward-compute","ph":"X","pid":0,"tid":0,"ts":1,"args":{"step":0,"seq_id":0}}])",
      "event 2: needs numbers ts and dur");
  refused(
      "[" + names +
          R"({"name":"forward-compute","ph":"X","pid":0,"tid":0,"ts":1,"dur":2,"args":{"seq_id":0}}])",
      "event 2: args.step missing");
  refused(
      "[" + names +
          R"({"name":"forward-compute","ph":"X","pid":0,"tid":7,"ts":1,"dur":2,"args":{"step":0,"seq_id":0}}])",
      "event 2: pid 0 tid 7 has no");
  refused("[{", "not JSON");
  refused(
      "[" + names +
          R"({"name":"forward-compute","ph":"X","pid":0,"tid":0,"ts":1,"dur":2,"args":{"step":0,"seq_id":0}}])",
      "no optimizer op");
  std::ofstream(meta) << "dp_size: two\npp_size: 1\n";
  const CliResult r = run_pipetwin("whatif " + kDir + "timeline-ST.json.gz --meta " + meta);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(meta + ":1: dp_size: not a whole number"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pipetwin
