// pipetwin.export_chakra(scenario, dir) and pipetwin.simulate_chakra(dir, ...): Chakra
// execution traces, as `pipetwin export chakra` and `pipetwin simulate --chakra` (docs/chakra.md).
#include <pybind11/stl.h>

#include "app/chakra_export_run.h"
#include "python/bindings.h"

namespace pipetwin::python {
namespace {

std::vector<std::string> export_traces(const Scenario& scenario, const std::string& dir) {
  py::gil_scoped_release release;
  const ChakraExportRun run = export_chakra(scenario.source, scenario.overrides, ResourceLimits{});
  write_chakra_workload(run.workload, dir);
  std::vector<std::string> files;
  for (const ChakraRankTrace& trace : run.workload.ranks) {
    files.push_back(chakra_rank_path(dir, kChakraPrefix, trace.rank));
  }
  return files;
}

Result simulate_traces(const std::string& dir, const std::optional<Scenario>& scenario,
                       const std::string& engine, bool allow_oom) {
  const SimulationOptions options = simulation_options(engine, allow_oom, 0, 0);
  py::gil_scoped_release release;
  return make_result(
      run_chakra_simulation(dir, scenario ? scenario->source : "",
                            scenario ? scenario->overrides : std::vector<std::string>{}, options));
}

}  // namespace

void bind_chakra(py::module_& m) {
  m.def("export_chakra", &export_traces, py::arg("scenario"), py::arg("dir"),
        "Writes the scenario's program as Chakra execution traces, DIR/pipetwin.RANK.et per "
        "rank and DIR/comm_group.json, as `pipetwin export chakra` does; returns the trace "
        "files.");
  m.def("simulate_chakra", &simulate_traces, py::arg("dir"), py::arg("scenario") = py::none(),
        py::arg("engine") = "analytic", py::arg("allow_oom") = false,
        "Runs the Chakra traces in DIR on the cluster of `scenario` (default: the one recorded "
        "in traces pipetwin wrote, else the quickstart's), as `pipetwin simulate --chakra` "
        "does; returns a Result.");
}

}  // namespace pipetwin::python
