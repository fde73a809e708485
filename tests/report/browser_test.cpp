// Every kind of report in a real browser: headless Chromium loads it from disk without a
// script error, the dumped DOM has the expected lanes, and the screenshot is not blank.
// Where Chromium is absent, each test says so in one line and is skipped.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "cli_runner.h"
#include "png_colours.h"
#include "report_samples.h"

namespace pipetwin {
namespace {

namespace fs = std::filesystem;
using testing::read_all;
using testing::TempDir;

std::optional<std::string> find_chromium() {
  if (const char* given = std::getenv("PIPETWIN_CHROMIUM")) return std::string(given);
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  const std::string dirs = path;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    size_t from = 0;
    while (from <= dirs.size()) {
      const size_t colon = std::min(dirs.find(':', from), dirs.size());
      const fs::path candidate = fs::path(dirs.substr(from, colon - from)) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
      from = colon + 1;
    }
  }
  return std::nullopt;
}

struct Browsed {
  int exit_code = -1;
  std::string dom;
  std::string log;
};

// One headless Chromium run on `page` with `extra` options: without the sandbox (CI runs as
// root), its own profile directory, /tmp rather than a container's small /dev/shm, and a
// time limit so that a hung browser fails the test instead of the suite.
Browsed browse(const std::string& chromium, const fs::path& page, const std::string& extra,
               const TempDir& dir) {
  const fs::path out = dir.path() / "dom.html", err = dir.path() / "browser.log";
  const std::string command =
      "timeout -k 5 90 " + chromium +
      " --headless --no-sandbox --disable-gpu --no-first-run"
      " --disable-extensions --disable-dev-shm-usage --user-data-dir=" +
      (dir.path() / "profile").string() + " --enable-logging=stderr --v=0 " + extra + " file://" +
      page.string() + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(out), read_all(err)};
}

class Browser : public ::testing::TestWithParam<std::string> {};

TEST_P(Browser, LoadsWithoutErrorsShowsItsLanesAndIsNotBlank) {
  const std::optional<std::string> chromium = find_chromium();
  if (!chromium) GTEST_SKIP() << "chromium not found on PATH: the browser tests are skipped";
  const std::string kind = GetParam();
  const TempDir dir;
  const fs::path page = dir.path() / (kind + ".html");
  std::ofstream(page) << testing::sample_reports().at(kind);

  const Browsed dumped = browse(*chromium, page, "--dump-dom", dir);
  ASSERT_EQ(dumped.exit_code, 0) << dumped.log;
  EXPECT_NE(dumped.dom.find("data-ready=\"1\""), std::string::npos)
      << "the page's script did not run to its end";
  const size_t error = dumped.dom.find("data-js-error=\"");
  EXPECT_EQ(error, std::string::npos) << dumped.dom.substr(error, 300);
  EXPECT_EQ(dumped.log.find("Uncaught"), std::string::npos) << dumped.log;
  EXPECT_EQ(testing::count_of(dumped.dom, "class=\"lane\""),
            static_cast<size_t>(testing::sample_lanes().at(kind)));

  const fs::path shot = dir.path() / "shot.png";
  const Browsed shown =
      browse(*chromium, page, "--screenshot=" + shot.string() + " --window-size=1280,1600", dir);
  ASSERT_EQ(shown.exit_code, 0) << shown.log;
  ASSERT_TRUE(fs::exists(shot)) << shown.log;
  const std::optional<size_t> colours = testing::png_colours(shot.string());
  ASSERT_TRUE(colours.has_value()) << "unreadable screenshot " << shot;
  EXPECT_GE(*colours, 8u) << "the screenshot is nearly blank";
}

INSTANTIATE_TEST_SUITE_P(EveryKind, Browser,
                         ::testing::Values("run", "compare", "sweep", "plan", "freeze"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pipetwin
