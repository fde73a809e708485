// One `--vary PATH=V1,V2,...` of `pipetwin sweep`: a field path and the values it takes.
#pragma once

#include <string>
#include <vector>

namespace pipetwin {

struct VaryAxis {
  std::string path;                 // as written for --set: "schedule.partition"
  std::vector<std::string> values;  // each one a --set value: "[1,3]", "GPIPE", "8"
};

// Parses "PATH=V1,V2,...". Values are text-format, so a value may itself hold commas
// ("[1,3]", "{name: \"a\", peak_tflops: 1}"): the list is split only at commas outside
// brackets, braces and quotes. When the list holds a top-level ';', it is split at ';'
// instead, for values whose commas are not enclosed ("--vary x=1,2;3,4" gives 2 values).
// Throws InputError naming the --vary: no '=', an empty path, no values, an empty or
// repeated value, unbalanced brackets or quotes.
VaryAxis parse_vary(const std::string& text);

// The list part of a --vary, split as described above (exposed for tests).
std::vector<std::string> split_vary_values(const std::string& list);

}  // namespace pipetwin
