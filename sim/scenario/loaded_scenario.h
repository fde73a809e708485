// A parsed scenario together with where each field came from, so that every error
// can name the file, the line and the field (or the --set override at fault).
#pragma once

#include <google/protobuf/text_format.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scenario.pb.h"

namespace pipetwin {

struct LoadedScenario {
  proto::Scenario scenario;
  std::string source_name;  // the file path, or "builtin:quickstart.textproto"
  std::string base_dir;     // where relative paths (profiles) are looked up
  bool builtin = false;     // also look relative paths up among the embedded files
  std::unique_ptr<google::protobuf::TextFormat::ParseInfoTree> locations;
  std::map<std::string, std::string> overrides;  // field path -> the --set that wrote it

  // "file:LINE: path" for a field path like "model.layers[3].fwd_ms". When the field
  // was not written, the line of its closest written ancestor; when a --set wrote it,
  // "--set path=value".
  std::string where(const std::string& field_path) const;
};

// Loads SCENARIO (a path, "builtin:NAME", or empty for the built-in quickstart), then
// applies --set overrides ("path=value") and fills a cluster preset. Throws InputError.
LoadedScenario load_scenario(const std::string& path, const std::vector<std::string>& overrides);

// Same from text already in memory.
LoadedScenario parse_scenario(const std::string& text, const std::string& source_name,
                              const std::string& base_dir, bool builtin,
                              const std::vector<std::string>& overrides);

// Reads a file a scenario refers to (relative to its directory, or embedded).
// Throws InputError naming `field_path` when it cannot.
std::string read_scenario_relative_file(const LoadedScenario& loaded, const std::string& path,
                                        const std::string& field_path);

}  // namespace pipetwin
