// Every kind of report in a real browser: headless Chromium loads it from disk without a
// script error, the dumped DOM has the expected lanes, and the screenshot is not blank.
// Where Chromium is absent, each test says so in one line and is skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "headless_chromium.h"
#include "png_colours.h"
#include "report_samples.h"

namespace pipetwin {
namespace {

namespace fs = std::filesystem;
using testing::browse;
using testing::Browsed;
using testing::find_chromium;
using testing::TempDir;

class Browser : public ::testing::TestWithParam<std::string> {};

TEST_P(Browser, LoadsWithoutErrorsShowsItsLanesAndIsNotBlank) {
  const std::optional<std::string> chromium = find_chromium();
  if (!chromium) GTEST_SKIP() << "chromium not found on PATH: the browser tests are skipped";
  const std::string kind = GetParam();
  const TempDir dir;
  const fs::path page = dir.path() / (kind + ".html");
  std::ofstream(page) << testing::sample_reports().at(kind);

  const Browsed dumped = browse(*chromium, "file://" + page.string(), "--dump-dom", dir);
  ASSERT_EQ(dumped.exit_code, 0) << dumped.log;
  EXPECT_NE(dumped.dom.find("data-ready=\"1\""), std::string::npos)
      << "the page's script did not run to its end";
  const size_t error = dumped.dom.find("data-js-error=\"");
  EXPECT_EQ(error, std::string::npos) << dumped.dom.substr(error, 300);
  EXPECT_EQ(dumped.log.find("Uncaught"), std::string::npos) << dumped.log;
  EXPECT_EQ(testing::count_of(dumped.dom, "class=\"lane\""),
            static_cast<size_t>(testing::sample_lanes().at(kind)));

  const fs::path shot = dir.path() / "shot.png";
  const Browsed shown = browse(*chromium, "file://" + page.string(),
                               "--screenshot=" + shot.string() + " --window-size=1280,1600", dir);
  ASSERT_EQ(shown.exit_code, 0) << shown.log;
  ASSERT_TRUE(fs::exists(shot)) << shown.log;
  const std::optional<size_t> colours = testing::png_colours(shot.string());
  ASSERT_TRUE(colours.has_value()) << "unreadable screenshot " << shot;
  EXPECT_GE(*colours, 8u) << "the screenshot is nearly blank";
}

INSTANTIATE_TEST_SUITE_P(EveryKind, Browser,
                         ::testing::Values("run", "compare", "sweep", "plan", "freeze", "goodput",
                                           "whatif"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pipetwin
