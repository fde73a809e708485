// Headless Chromium for the browser tests: where it is, and one run of it on a page from disk.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "cli_runner.h"

namespace pipetwin::testing {

// $PIPETWIN_CHROMIUM, else the first chromium, chromium-browser or google-chrome on PATH.
inline std::optional<std::string> find_chromium() {
  if (const char* given = std::getenv("PIPETWIN_CHROMIUM")) return std::string(given);
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  const std::string dirs = path;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    size_t from = 0;
    while (from <= dirs.size()) {
      const size_t colon = std::min(dirs.find(':', from), dirs.size());
      const std::filesystem::path candidate =
          std::filesystem::path(dirs.substr(from, colon - from)) / name;
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

// One headless Chromium run on `url` with `extra` options: without the sandbox (CI runs as
// root), its own profile directory in `dir`, /tmp rather than a container's small /dev/shm,
// no network of its own, and a time limit so that a hung browser fails the test instead of
// the suite. stdout (the DOM, with --dump-dom) and stderr (the log) come back.
inline Browsed browse(const std::string& chromium, const std::string& url, const std::string& extra,
                      const TempDir& dir) {
  const std::filesystem::path out = dir.path() / "dom.html", err = dir.path() / "browser.log";
  const std::string command =
      "timeout -k 5 90 " + chromium +
      " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions"
      " --disable-background-networking --disable-component-update --disable-dev-shm-usage"
      " --user-data-dir=" +
      (dir.path() / "profile").string() + " --enable-logging=stderr --v=0 " + extra + " '" + url +
      "' >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(out), read_all(err)};
}

}  // namespace pipetwin::testing
