// The freeze log a real FreezePipe run writes (pipetwin run) and a scenario replays
// (freeze.log): "# comment" lines, then "layers L", "interval_iterations I", and one line
// per interval: "interval K n_0 n_1 ... n_(L-1)".
#pragma once

#include <cstdint>
#include <string>

#include "sim/spec/freeze_spec.h"

namespace pipetwin {

// Throws InputError naming `name`, the line and what is wrong; a log for another model
// (another layer count than `expected_layers`) is an error.
FreezeLog parse_freeze_log(const std::string& text, const std::string& name,
                           int32_t expected_layers);
std::string format_freeze_log(const FreezeLog& log);

}  // namespace pipetwin
