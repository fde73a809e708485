// pipetwin.simulate(scenario, engine=...) -> Result: the fields of `simulate --json` as
// attributes, the timeline's spans as columns, write_trace(path).
#include <pybind11/stl.h>

#include "app/run_files.h"
#include "app/run_summary.h"
#include "app/simulate_run.h"
#include "python/bindings.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin::python {
namespace {

Result simulate_scenario(const Scenario& scenario, const std::string& engine, bool allow_oom,
                         int64_t max_instructions, double max_memory_gib) {
  const SimulationOptions options =
      simulation_options(engine, allow_oom, max_instructions, max_memory_gib);
  py::gil_scoped_release release;  // the simulation is all C++ (SimGrid runs in a child)
  return make_result(run_simulation(*scenario.loaded, options));
}

// A column as a numpy array when numpy can be imported, else as a list.
py::object column(py::list values) {
  static const py::object numpy = []() -> py::object {
    try {
      return py::module_::import("numpy");
    } catch (const py::error_already_set&) {
      return py::none();
    }
  }();
  if (numpy.is_none()) return values;
  return numpy.attr("asarray")(values);
}

template <typename Get>
py::object span_column(const Timeline& timeline, Get get) {
  py::list values;
  for (const Span& span : timeline.spans) values.append(get(span));
  return column(values);
}

// One column per field of a span, one row per span, in the timeline's order.
py::dict span_columns(const Timeline& t) {
  py::dict columns;
  columns["device"] = span_column(t, [](const Span& s) { return s.device; });
  columns["lane"] = span_column(t, [](const Span& s) { return s.lane; });
  columns["name"] = span_column(t, [](const Span& s) { return s.name; });
  columns["op"] = span_column(t, [](const Span& s) { return s.op; });
  columns["stage"] = span_column(t, [](const Span& s) { return s.stage; });
  columns["microbatch"] = span_column(t, [](const Span& s) { return s.microbatch; });
  columns["range_lo"] = span_column(t, [](const Span& s) { return s.range_lo; });
  columns["range_hi"] = span_column(t, [](const Span& s) { return s.range_hi; });
  columns["iteration"] = span_column(t, [](const Span& s) { return s.iteration; });
  columns["start_s"] = span_column(t, [](const Span& s) { return s.start_s; });
  columns["end_s"] = span_column(t, [](const Span& s) { return s.end_s; });
  columns["bytes"] = span_column(t, [](const Span& s) { return s.bytes; });
  columns["peer_device"] = span_column(t, [](const Span& s) { return s.peer_device; });
  return columns;
}

}  // namespace

SimulationOptions simulation_options(const std::string& engine, bool allow_oom,
                                     int64_t max_instructions, double max_memory_gib) {
  SimulationOptions options;
  options.engine = parse_engine(engine);
  options.allow_oom = allow_oom;
  if (max_instructions > 0) options.limits.max_instructions = max_instructions;
  if (max_memory_gib > 0) options.limits.max_memory_bytes = max_memory_gib * (1 << 30);
  return options;
}

Result make_result(const SimulateRun& run) {
  return {run.json(), std::make_shared<const Timeline>(run.timeline())};
}

void bind_result(py::module_& m) {
  py::class_<Result>(m, "Result",
                     "A simulated run: the fields of `pipetwin simulate --json` as attributes "
                     "(result.iteration_time_s), to_dict() gives them all; spans holds the "
                     "timeline's spans as columns.")
      .def("to_dict", [](const Result& r) { return to_python(r.report); })
      .def_property_readonly(
          "spans", [](const Result& r) { return span_columns(*r.timeline); },
          "the timeline's spans as columns: device, lane, name, op, stage, microbatch, "
          "range_lo, range_hi, iteration, start_s, end_s, bytes, peer_device (numpy arrays "
          "when numpy is installed, lists otherwise)")
      .def(
          "write_trace",
          [](const Result& r, const std::string& path) {
            py::gil_scoped_release release;
            write_run_files(*r.timeline, path, "");
          },
          py::arg("path"), "writes the Chrome/Perfetto trace (JSON), as simulate --trace does")
      .def(
          "write_timeline",
          [](const Result& r, const std::string& path) {
            py::gil_scoped_release release;
            write_run_files(*r.timeline, "", path);
          },
          py::arg("path"), "writes the timeline (protobuf), as simulate --timeline does")
      .def("__getattr__",
           [](const Result& r, const std::string& name) -> py::object {
             if (!r.report.contains(name)) throw py::attribute_error("Result has no field " + name);
             return to_python(r.report[name]);
           })
      .def("__dir__",
           [](const Result& r) {
             py::list names;
             for (const auto& [key, value] : r.report.items()) names.append(key);
             for (const char* own : {"to_dict", "spans", "write_trace", "write_timeline"}) {
               names.append(own);
             }
             return names;
           })
      .def("__repr__", [](const Result& r) {
        const nlohmann::json time = r.report.value("iteration_time_s", nlohmann::json());
        return "<pipetwin.Result iteration_time_s=" + time.dump() + ">";
      });

  m.def("simulate", &simulate_scenario, py::arg("scenario"), py::arg("engine") = "analytic",
        py::arg("allow_oom") = false, py::arg("max_instructions") = 0,
        py::arg("max_memory_gib") = 0.0,
        "Simulates a loaded scenario on the analytic or the simgrid engine (SimGrid runs in a "
        "child process, one engine per process). Returns a Result with the fields of "
        "`pipetwin simulate --json`.");
}

}  // namespace pipetwin::python
