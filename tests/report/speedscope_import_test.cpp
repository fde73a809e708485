// The quickstart's Chrome trace through speedscope's own importer, in headless Chromium:
// speedscope (https://www.speedscope.app) turns every complete slice into a begin and an
// end event and replays them per thread, so a slice whose end lands after the next slice's
// start, once parsed and shifted to the thread's first event, is reported as mis-nested.
// The pinned speedscope lives in tests/report/speedscope/ (tools/install_deps.sh runs
// `npm ci` there). Without Chromium, or without npm to install speedscope, the test says so
// and is skipped; with npm but without speedscope it fails, so CI cannot pass silently.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "headless_chromium.h"

namespace pipetwin {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::read_all;
using testing::TempDir;

const fs::path kSpeedscopeRelease = fs::path(PIPETWIN_SOURCE_DIR) / "tests" / "report" /
                                    "speedscope" / "node_modules" / "speedscope" / "dist" /
                                    "release";

bool on_path(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

std::string base64(const std::string& bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 2]);
    for (size_t k = 0; k < 4; ++k) {
      text += i + k <= bytes.size() ? kDigits[(group >> (18 - 6 * k)) & 63] : '=';
    }
  }
  return text;
}

// speedscope's page with two scripts around it: one before that records every console
// warning, and one after that, once the import has set the title to "<name> - speedscope",
// writes them into <pre id="warnings">, one line each. The profile arrives as speedscope's
// own command line hands it over: a script calling speedscope.loadFileFromBase64.
std::string harness_page(const std::string& bundle) {
  return R"(<!DOCTYPE html><html><head><meta charset="UTF-8"><title>loading</title><script>
var warnings = [];
var plainWarn = console.warn;
console.warn = function() {
  warnings.push(Array.prototype.join.call(arguments, ' ').replace(/\n/g, ' '));
  plainWarn.apply(console, arguments);
};
var poll = setInterval(function() {
  if (!/ - speedscope$/.test(document.title)) return;
  clearInterval(poll);
  var out = document.createElement('pre');
  out.id = 'warnings';
  out.textContent = 'imported\n' + warnings.map(function(w) { return 'WARN ' + w; }).join('\n');
  document.body.appendChild(out);
}, 20);
</script></head><body><script src="file://)" +
         bundle + R"("></script></body></html>)";
}

struct Imported {
  bool done = false;
  std::vector<std::string> warnings;
  std::string log;
};

Imported import_in_speedscope(const std::string& chromium, const std::string& trace_text,
                              const TempDir& dir) {
  const std::string index = read_all(kSpeedscopeRelease / "index.html");
  std::smatch bundle;
  if (!std::regex_search(index, bundle, std::regex(R"(src="(speedscope-[^"]+\.js)\")"))) {
    return {
        false, {}, "no speedscope-*.js script in " + (kSpeedscopeRelease / "index.html").string()};
  }
  const fs::path page =
      dir.write("harness.html", harness_page((kSpeedscopeRelease / bundle[1].str()).string()));
  const fs::path profile =
      dir.write("profile.js",
                "speedscope.loadFileFromBase64(\"trace.json\", \"" + base64(trace_text) + "\")");
  const testing::Browsed browsed =
      testing::browse(chromium, "file://" + page.string() + "#localProfilePath=" + profile.string(),
                      "--dump-dom --virtual-time-budget=60000", dir);
  Imported imported;
  imported.log = browsed.log;
  const size_t from = browsed.dom.find("<pre id=\"warnings\">imported");
  if (browsed.exit_code != 0 || from == std::string::npos) return imported;
  imported.done = true;
  std::istringstream lines(browsed.dom.substr(from, browsed.dom.find("</pre>", from) - from));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("WARN ", 0) == 0) imported.warnings.push_back(line.substr(5));
  }
  return imported;
}

// The importer's two complaints about nesting: an end event that does not close the slice on
// top of the thread's stack, and a slice still open when the thread's events run out.
bool about_nesting(const std::string& warning) {
  return warning.find("Tried to end") != std::string::npos ||
         warning.find("still open at end of profile") != std::string::npos;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += "\n  " + line;
  return text;
}

// A control thread of two overlapping slices rides along in the same file: speedscope must
// report it, which shows that the harness does see the importer's warnings.
TEST(SpeedscopeImport, QuickstartTraceNestsWithoutWarnings) {
  const std::optional<std::string> chromium = testing::find_chromium();
  if (!chromium)
    GTEST_SKIP() << "chromium not found on PATH: the speedscope import test is skipped";
  if (!fs::exists(kSpeedscopeRelease / "index.html")) {
    if (!on_path("npm")) {
      GTEST_SKIP() << "npm not found on PATH, so speedscope cannot be installed: the speedscope "
                      "import test is skipped";
    }
    FAIL() << "speedscope is not installed in tests/report/speedscope/node_modules: run "
              "tools/install_deps.sh (it runs `npm ci` there)";
  }
  const TempDir dir;
  const fs::path trace = dir.path() / "quickstart.json";
  const testing::CliResult r = testing::run_pipetwin(
      "simulate " +
      (fs::path(PIPETWIN_SOURCE_DIR) / "scenarios" / "quickstart.textproto").string() +
      " --trace " + trace.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // The control slices go in as text, so the writer's own bytes reach the importer.
  std::string text = read_all(trace);
  const json events = json::parse(text);
  const auto slices =
      std::count_if(events.at("traceEvents").begin(), events.at("traceEvents").end(),
                    [](const json& e) { return e.at("ph") == "X"; });
  ASSERT_GT(slices, 20);
  const std::string opening = "{\"traceEvents\":[";
  ASSERT_EQ(text.rfind(opening, 0), 0u) << text.substr(0, 100);
  text.insert(opening.size(),
              R"({"ph":"X","name":"control_a","pid":999999,"tid":0,"ts":0,"dur":2},)"
              R"({"ph":"X","name":"control_b","pid":999999,"tid":0,"ts":1,"dur":2},)");

  const Imported imported = import_in_speedscope(*chromium, text, dir);
  ASSERT_TRUE(imported.done) << "speedscope did not finish importing the trace:\n" << imported.log;
  std::vector<std::string> control, misnested;
  for (const std::string& warning : imported.warnings) {
    if (!about_nesting(warning)) continue;
    (warning.find("control_") != std::string::npos ? control : misnested).push_back(warning);
  }
  EXPECT_FALSE(control.empty()) << "the overlapping control slices drew no warning; all:"
                                << joined(imported.warnings);
  EXPECT_EQ(misnested.size(), 0u) << "speedscope mis-nests slices of the quickstart's trace:"
                                  << joined(misnested);
}

}  // namespace
}  // namespace pipetwin
