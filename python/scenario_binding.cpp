// pipetwin.load(path_or_builtin, set={...}) -> Scenario, whose fields read as attributes.
#include <google/protobuf/util/json_util.h>
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "sim/scenario/loaded_scenario.h"

namespace pipetwin::python {
namespace {

// {path: value} or ["path=value", ...] -> the --set texts, in order.
std::vector<std::string> override_texts(const py::object& set) {
  std::vector<std::string> texts;
  if (set.is_none()) return texts;
  if (py::isinstance<py::dict>(set)) {
    for (const auto& [path, value] : set.cast<py::dict>()) {
      texts.push_back(py::str(path).cast<std::string>() + "=" + value_text(value));
    }
    return texts;
  }
  if (py::isinstance<py::str>(set)) return {set.cast<std::string>()};
  for (const py::handle& item : set) texts.push_back(py::str(item).cast<std::string>());
  return texts;
}

// The scenario's fields as a dict with the schema's names (proto/scenario.proto), fields
// left at their default included.
nlohmann::json scenario_fields(const LoadedScenario& loaded) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(loaded.scenario, &text, options).ok()) {
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(text);
}

Scenario load(const std::string& path, const py::object& set) {
  Scenario scenario{path, override_texts(set), nullptr};
  py::gil_scoped_release release;
  scenario.loaded = std::make_shared<const LoadedScenario>(load_scenario(path, scenario.overrides));
  return scenario;
}

}  // namespace

void bind_scenario(py::module_& m) {
  py::class_<Scenario>(m, "Scenario",
                       "A loaded scenario: its fields read as attributes (scenario.model, "
                       "scenario.schedule['kind']), to_dict() gives them all.")
      .def_readonly("source", &Scenario::source, "the path or builtin:NAME it was loaded from")
      .def_readonly("overrides", &Scenario::overrides, "the PATH=VALUE overrides applied")
      .def_property_readonly(
          "source_name", [](const Scenario& s) { return s.loaded->source_name; },
          "the file that was read (builtin:NAME.textproto for a built-in one)")
      .def("to_dict", [](const Scenario& s) { return to_python(scenario_fields(*s.loaded)); })
      .def(
          "with_set",
          [](const Scenario& s, const py::object& set) {
            std::vector<std::string> overrides = s.overrides;
            for (std::string& text : override_texts(set)) overrides.push_back(std::move(text));
            py::list list;
            for (const std::string& text : overrides) list.append(text);
            return load(s.source, list);
          },
          py::arg("set"), "the same scenario loaded again with more overrides")
      .def("__getattr__",
           [](const Scenario& s, const std::string& name) -> py::object {
             const nlohmann::json fields = scenario_fields(*s.loaded);
             if (!fields.contains(name)) throw py::attribute_error("Scenario has no field " + name);
             return to_python(fields[name]);
           })
      .def("__dir__",
           [](const Scenario& s) {
             py::list names;
             // Held in a variable: a range-for over items() of a temporary would outlive it.
             const nlohmann::json fields = scenario_fields(*s.loaded);
             for (const auto& [key, value] : fields.items()) names.append(key);
             for (const char* own : {"source", "overrides", "source_name", "to_dict", "with_set"}) {
               names.append(own);
             }
             return names;
           })
      .def("__repr__", [](const Scenario& s) {
        return "<pipetwin.Scenario " + s.loaded->scenario.name() + " from " +
               s.loaded->source_name + ">";
      });

  m.def("load", &load, py::arg("path") = "", py::arg("set") = py::none(),
        "Loads a scenario: a .textproto path, builtin:NAME (builtin:quickstart), or nothing for "
        "the built-in quickstart; `set` overrides fields like the command line's --set, as "
        "{path: value} or ['path=value', ...]. Raises pipetwin.InputError naming file, line and "
        "field.");
}

}  // namespace pipetwin::python
