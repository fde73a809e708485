// The run report: a lane per device, the peak marked where the metrics put it, breakdown
// fractions that sum to 1, and a 200k-span timeline that stays a few megabytes.
#include "report/run_page.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "analysis/metrics.h"
#include "cli_runner.h"
#include "report/gantt.h"
#include "report/run_charts.h"
#include "report_samples.h"

namespace pipetwin {
namespace {

TEST(RunReport, GanttHasOneLanePerDevice) {
  const SimulationResult result = testing::simulated_quickstart();
  GanttStats stats;
  const std::string svg = render_gantt(result.timeline, gantt_options_for(result.timeline), &stats);
  EXPECT_EQ(testing::count_of(svg, "class=\"lane\""), result.timeline.devices.size());
  for (const TimelineDevice& d : result.timeline.devices) {
    EXPECT_NE(svg.find("data-device=\"" + std::to_string(d.id) + "\""), std::string::npos);
  }
  EXPECT_EQ(stats.spans, static_cast<int64_t>(result.timeline.spans.size()));
  // Transfers are narrower than a pixel at this scale; compute spans are not.
  EXPECT_GT(stats.aggregated, 0);
  EXPECT_LT(stats.aggregated, stats.spans);
}

TEST(RunReport, PeakMarkedIsTheReportedPeak) {
  const SimulationResult result = testing::simulated_quickstart();
  const RunMetrics metrics = compute_metrics(result.timeline, 1, 1);
  const std::string svg = render_memory_chart(result.timeline, {});
  const std::regex peak(R"re(class="peak" data-value="([^"]+)" data-key="([0-9]+)")re");
  std::map<int32_t, double> marked;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), peak); it != std::sregex_iterator();
       ++it) {
    marked[std::stoi((*it)[2])] = std::stod((*it)[1]);
  }
  ASSERT_EQ(marked.size(), metrics.devices.size());
  for (const DeviceMetrics& d : metrics.devices) {
    EXPECT_EQ(marked[d.id], d.peak_memory_bytes) << d.name;
  }
}

TEST(RunReport, BreakdownFractionsOfEachDeviceSumToOne) {
  const std::string html = testing::run_report_html(testing::simulated_quickstart());
  const std::regex group(R"re(<g class="device-breakdown" data-device="([0-9]+)">(.*?)</g>)re");
  const std::regex fraction(R"re(data-fraction="([^"]+)")re");
  int devices = 0;
  for (auto g = std::sregex_iterator(html.begin(), html.end(), group); g != std::sregex_iterator();
       ++g, ++devices) {
    const std::string body = (*g)[2];
    double sum = 0;
    for (auto f = std::sregex_iterator(body.begin(), body.end(), fraction);
         f != std::sregex_iterator(); ++f) {
      sum += std::stod((*f)[1]);
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << "device " << (*g)[1];
  }
  EXPECT_EQ(devices, 4);
}

TEST(RunReport, HeadlineNumbersAppearAsGiven) {
  const std::string html = testing::run_report_html(testing::simulated_quickstart());
  EXPECT_NE(html.find("<b>1 s</b><span>iteration time</span>"), std::string::npos);
}

// 8 devices x 25,000 spans, each a fraction of a pixel wide, with a memory sample per span.
Timeline large_timeline() {
  Timeline t;
  t.source = "synthetic";
  for (int32_t d = 0; d < 8; ++d) t.devices.push_back({d, 0, "gpu" + std::to_string(d)});
  for (int32_t d = 0; d < 8; ++d) {
    for (int32_t i = 0; i < 25000; ++i) {
      Span s;
      s.device = d;
      const bool compute = i % 4 != 3;
      s.lane = compute ? "compute" : (i % 8 == 3 ? "send" : "recv");
      s.op = compute ? (i % 2 ? "BWD" : "FWD") : (s.lane == "send" ? "SEND_ACT" : "RECV_ACT");
      s.name = std::to_string(d) + (compute ? "F" : "S") + std::to_string(i);
      s.iteration = i / 5000;
      s.start_s = i * 1e-4 + d * 1e-5;
      s.end_s = s.start_s + 0.8e-4;
      t.spans.push_back(s);
      t.counters.push_back({d, "memory_bytes", s.start_s, 1e9 + (i % 100) * 1e7, -1});
    }
  }
  return t;
}

TEST(RunReport, A200kSpanReportStaysUnder10MBAndSaysItAggregates) {
  const Timeline t = large_timeline();
  ASSERT_EQ(t.spans.size(), 200000u);
  RunReport report;
  report.timeline = &t;
  report.headline = {{"spans", "200000"}};
  HtmlPage page("large", "200k spans");
  add_run_sections(page, report);
  const std::string html = page.render();
  EXPECT_LT(html.size(), 10u << 20);
  EXPECT_EQ(testing::count_of(html, "class=\"lane\""), 8u);
  EXPECT_NE(html.find("narrower than a pixel"), std::string::npos);
  EXPECT_NE(html.find("200000 spans."), std::string::npos);
}

}  // namespace
}  // namespace pipetwin
