// `--set PATH=VALUE`: overrides one field of a scenario by its path. The same syntax
// drives sweeps. VALUE is in text-format syntax for the field's type: numbers, true/false,
// enum names (ONE_F_ONE_B), strings with or without quotes, and "[1,2,3]" for lists.
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace pipetwin {

// Returns the field path that was set. Throws InputError naming the assignment.
std::string apply_override(google::protobuf::Message& root, const std::string& assignment);

}  // namespace pipetwin
