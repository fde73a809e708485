// Chakra execution traces (sim/chakra/chakra_import.h): the input is one rank's .et stream,
// read and turned into a Program as `pipetwin simulate --chakra` does (which validates what it
// builds: every SEND its RECV, no deadlock). Bad input is an InputError, nothing else.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_support.h"
#include "sim/chakra/chakra_import.h"

using namespace pipetwin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  fuzz::expect_only_reported_errors(
      [&] { program_from_chakra({read_chakra_stream(in, "fuzz.0.et")}); });
  return 0;
}
