// cluster.simgrid_platform: the simgrid engine on a user's SimGrid XML platform.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::run_pipetwin;
using testing::TempDir;

std::string platform(const std::string& bandwidth) {
  return R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="rack" routing="Full">
    <host id="alpha" speed="1Gf"/>
    <host id="beta" speed="1Gf"/>
    <link id="cable" bandwidth=")" +
         bandwidth + R"(" latency="5us"/>
    <route src="alpha" dst="beta"><link_ctn id="cable"/></route>
  </zone>
</platform>
)";
}

// Two stages, one 1 GB activation per microbatch, intra_node as fast as the XML's link.
std::string scenario(const std::string& extra_cluster) {
  return R"(name: "xml"
cluster {
  nodes: 1
  gpus_per_node: 2
  gpu { peak_tflops: 100 memory_gib: 1000 }
  intra_node { bandwidth_gbytes_per_s: 10 latency_us: 5 }
  simgrid_platform: "rack.xml"
)" + extra_cluster +
         R"(
}
model {
  layers { fwd_ms: 1 bwd_ms: 2 activation_bytes: 1000000000 }
  layers { fwd_ms: 1 bwd_ms: 2 }
}
training { global_batch: 4 microbatches: 4 }
schedule { kind: GPIPE stages: 2 }
)";
}

std::vector<double> send_durations(const std::string& timeline_path) {
  std::vector<double> out;
  for (const Span& s : read_timeline_file(timeline_path).spans) {
    if (s.op == "SEND_ACT") out.push_back(s.duration_s());
  }
  return out;
}

TEST(SimgridPlatform, RunsOnTheXmlLinks) {
  const TempDir dir;
  dir.write("rack.xml", platform("10GBps"));
  const auto path = dir.write("s.textproto", scenario("platform_hosts: [\"alpha\", \"beta\"]"));
  const auto timeline = (dir.path() / "run.timeline").string();
  const CliResult same = run_pipetwin("simulate " + path.string() +
                                      " --engine simgrid --timeline " + timeline + " --json");
  ASSERT_EQ(same.exit_code, 0) << same.err;
  for (double d : send_durations(timeline)) EXPECT_NEAR(d, 5e-6 + 0.1, 1e-12);
  const CliResult analytic = run_pipetwin("simulate " + path.string() + " --json");
  EXPECT_EQ(nlohmann::json::parse(same.out)["iteration_time_s"],
            nlohmann::json::parse(analytic.out)["iteration_time_s"]);

  dir.write("rack.xml", platform("5GBps"));  // a slower cable: transfers take twice as long
  ASSERT_EQ(run_pipetwin("simulate " + path.string() + " --engine simgrid --timeline " + timeline)
                .exit_code,
            0);
  for (double d : send_durations(timeline)) EXPECT_NEAR(d, 5e-6 + 0.2, 1e-12);
}

TEST(SimgridPlatform, UnknownHostIsBadInput) {
  const TempDir dir;
  dir.write("rack.xml", platform("10GBps"));
  const auto path = dir.write("s.textproto", scenario("platform_hosts: [\"alpha\", \"gamma\"]"));
  const CliResult r = run_pipetwin("simulate " + path.string() + " --engine simgrid");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cluster.platform_hosts[1]: no host 'gamma'"));
}

TEST(SimgridPlatform, MissingFileIsBadInputWithItsLine) {
  const TempDir dir;
  const auto path = dir.write("s.textproto", scenario(""));
  const CliResult r = run_pipetwin("simulate " + path.string() + " --engine simgrid");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(path.string() + ":7: cluster.simgrid_platform: cannot read file"));
}

}  // namespace
}  // namespace pipetwin
