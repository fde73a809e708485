// What every section resolver of a scenario (resolve_scenario.h) checks its fields with: each
// error names the file, the line and the field (or the --set that wrote it).
#pragma once

#include <string>

#include "sim/scenario/loaded_scenario.h"

namespace pipetwin {

// A number as errors print it ("%g": 0.5, 1e+12).
std::string number_text(double value);

// Raises InputError against the scenario's source locations.
class ScenarioChecker {
 public:
  explicit ScenarioChecker(const LoadedScenario& loaded) : loaded_(loaded) {}

  [[noreturn]] void fail(const std::string& path, const std::string& problem) const;
  void require(bool present, const std::string& path) const;
  void positive(bool present, double value, const std::string& path) const;
  void non_negative(double value, const std::string& path) const;

 private:
  const LoadedScenario& loaded_;
};

}  // namespace pipetwin
