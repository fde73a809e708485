// The Python module's parts, each in its own file; module.cpp puts them together.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/simulate_run.h"
#include "sim/scenario/loaded_scenario.h"
#include "traces/timeline.h"

namespace pipetwin::python {

namespace py = pybind11;

// A scenario as `pipetwin.load` returns it: where it came from and the overrides applied,
// so that sweeps can load it again with more.
struct Scenario {
  std::string source;                  // a path, builtin:NAME, or empty (the quickstart)
  std::vector<std::string> overrides;  // PATH=VALUE, in order
  std::shared_ptr<const LoadedScenario> loaded;
};

// A simulated run: the object `simulate --json` prints and the run's timeline.
struct Result {
  nlohmann::json report;
  std::shared_ptr<const Timeline> timeline;
};

// JSON -> dict, list, str, int, float, bool, None.
py::object to_python(const nlohmann::json& value);
// A Python value as the text of a --set or --vary value: True -> "true", 3 -> "3".
std::string value_text(const py::handle& value);

// The engine by name (InputError for an unknown one) and the limits (0: the default).
SimulationOptions simulation_options(const std::string& engine, bool allow_oom,
                                     int64_t max_instructions, double max_memory_gib);
// What pipetwin.simulate returns for a run.
Result make_result(const SimulateRun& run);

void bind_errors(py::module_& m);
void bind_scenario(py::module_& m);
void bind_result(py::module_& m);
void bind_studies(py::module_& m);
void bind_chakra(py::module_& m);

}  // namespace pipetwin::python
