// The extension `pipetwin._pipetwin` under the package `pipetwin` (python/pipetwin/): load,
// simulate, sweep, plan, compare, Chakra traces (docs/python.md).
#include "python/bindings.h"

PYBIND11_MODULE(_pipetwin, m) {
  m.doc() = "pipetwin: a digital twin for pipeline-parallel DNN training";
  pipetwin::python::bind_errors(m);
  pipetwin::python::bind_scenario(m);
  pipetwin::python::bind_result(m);
  pipetwin::python::bind_studies(m);
  pipetwin::python::bind_chakra(m);
}
