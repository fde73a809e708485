#include "sim/scenario/scenario_checker.h"

#include <cstdio>

#include "sim/spec/errors.h"

namespace pipetwin {

std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

void ScenarioChecker::fail(const std::string& path, const std::string& problem) const {
  throw InputError(loaded_.where(path) + ": " + problem);
}

void ScenarioChecker::require(bool present, const std::string& path) const {
  if (!present) fail(path, "missing (required)");
}

void ScenarioChecker::positive(bool present, double value, const std::string& path) const {
  require(present, path);
  if (!(value > 0)) fail(path, "must be positive (got " + number_text(value) + ")");
}

void ScenarioChecker::non_negative(double value, const std::string& path) const {
  if (!(value >= 0)) fail(path, "must not be negative (got " + number_text(value) + ")");
}

}  // namespace pipetwin
