// Timeline files: the binary timeline proto (proto/timeline.proto), written by
// `pipetwin simulate --timeline` and `pipetwin run`, read by `pipetwin trace` and `compare`.
#pragma once

#include <string>

#include "traces/timeline.h"

namespace pipetwin {

// Writes atomically (see atomic_file.h): `path` is either the old file or the complete new one.
// Throws std::runtime_error naming the path on I/O failure.
void write_timeline_file(const Timeline& timeline, const std::string& path);

// Throws std::runtime_error naming the path when it is missing or not a timeline proto.
Timeline read_timeline_file(const std::string& path);

}  // namespace pipetwin
