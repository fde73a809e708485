// What a sweep point's child process sends back to the parent: the few figures the table
// shows, or why the point failed. Small on purpose: the whole SimulationResult never
// crosses the pipe.
#pragma once

#include <optional>
#include <string>

namespace pipetwin {

enum class PointStatus {
  kOk,
  kOutOfMemory,   // ran with --allow-oom, and some device is over capacity
  kInputError,    // bad input found only while running (InputError in the child)
  kRuntimeError,  // RuntimeFailure or any other exception in the child
  kCrashed,       // the child died or exited without sending a whole result
};

struct PointResult {
  PointStatus status = PointStatus::kCrashed;
  // The metrics are meaningful for kOk and kOutOfMemory only.
  double iteration_time_s = 0;
  double throughput_samples_per_s = 0;
  double bubble_ratio = 0;
  double peak_memory_bytes = 0;  // the largest peak over the devices
  bool out_of_memory = false;
  std::string error;  // the message, for the error statuses

  bool failed() const { return status != PointStatus::kOk && status != PointStatus::kOutOfMemory; }
};

// "ok", "out_of_memory" or "error": the status column of --json and --csv.
const char* status_name(PointStatus status);
// "input", "runtime", "crash", or "" when the point did not fail.
const char* error_kind_name(PointStatus status);

// A fixed binary layout (parent and child are the same binary, so no portability is
// needed, and doubles cross exactly). The record carries its own length, so a child that
// dies halfway through writing is detected rather than half-read.
std::string encode_point_result(const PointResult& result);
// nullopt unless `bytes` is exactly one whole record.
std::optional<PointResult> decode_point_result(const std::string& bytes);

}  // namespace pipetwin
