// pipetwin.InputError (a ValueError: bad input, the message names file, line and field, as
// the command line's exit code 2 does) and pipetwin.RuntimeFailure (a RuntimeError: the
// input was fine but the run failed, exit code 1).
#include "sim/spec/errors.h"

#include <pybind11/pybind11.h>

#include "python/bindings.h"

namespace pipetwin::python {

void bind_errors(py::module_& m) {
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  static py::exception<RuntimeFailure> runtime_failure(m, "RuntimeFailure", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const InputError& e) {
      PyErr_SetString(input_error.ptr(), e.what());
    } catch (const RuntimeFailure& e) {
      PyErr_SetString(runtime_failure.ptr(), e.what());
    }
  });
}

}  // namespace pipetwin::python
