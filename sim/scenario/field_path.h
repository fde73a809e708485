// Field paths such as "model.layers[3].fwd_ms", resolved against a message type.
// Used by --set overrides and by error messages that point at a line.
#pragma once

#include <google/protobuf/descriptor.h>

#include <string>
#include <vector>

namespace pipetwin {

struct FieldPathStep {
  const google::protobuf::FieldDescriptor* field = nullptr;
  int index = -1;  // for repeated fields; -1 otherwise (or "the whole list")
};

// Resolves `path` against `root`. Throws std::invalid_argument with a readable reason
// ("no field 'knd' in pipetwin.proto.Schedule") on an unknown field or bad syntax.
std::vector<FieldPathStep> resolve_field_path(const google::protobuf::Descriptor* root,
                                              const std::string& path);

}  // namespace pipetwin
