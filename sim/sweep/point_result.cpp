#include "sim/sweep/point_result.h"

#include <cstdint>
#include <cstring>

namespace pipetwin {
namespace {

constexpr char kMagic[8] = "ptsweep";  // guards against reading stray output as a result

struct Header {
  char magic[8];
  int32_t status;
  int32_t out_of_memory;
  double iteration_time_s;
  double throughput_samples_per_s;
  double bubble_ratio;
  double peak_memory_bytes;
  uint64_t error_size;
};

}  // namespace

const char* status_name(PointStatus status) {
  switch (status) {
    case PointStatus::kOk:
      return "ok";
    case PointStatus::kOutOfMemory:
      return "out_of_memory";
    default:
      return "error";
  }
}

const char* error_kind_name(PointStatus status) {
  switch (status) {
    case PointStatus::kInputError:
      return "input";
    case PointStatus::kRuntimeError:
      return "runtime";
    case PointStatus::kCrashed:
      return "crash";
    default:
      return "";
  }
}

std::string encode_point_result(const PointResult& result) {
  Header header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.status = static_cast<int32_t>(result.status);
  header.out_of_memory = result.out_of_memory ? 1 : 0;
  header.iteration_time_s = result.iteration_time_s;
  header.throughput_samples_per_s = result.throughput_samples_per_s;
  header.bubble_ratio = result.bubble_ratio;
  header.peak_memory_bytes = result.peak_memory_bytes;
  header.error_size = result.error.size();
  std::string bytes(reinterpret_cast<const char*>(&header), sizeof header);
  return bytes + result.error;
}

std::optional<PointResult> decode_point_result(const std::string& bytes) {
  Header header;
  if (bytes.size() < sizeof header) return std::nullopt;
  std::memcpy(&header, bytes.data(), sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) return std::nullopt;
  if (bytes.size() - sizeof header != header.error_size) return std::nullopt;
  if (header.status < static_cast<int32_t>(PointStatus::kOk) ||
      header.status > static_cast<int32_t>(PointStatus::kCrashed)) {
    return std::nullopt;
  }
  PointResult result;
  result.status = static_cast<PointStatus>(header.status);
  result.out_of_memory = header.out_of_memory != 0;
  result.iteration_time_s = header.iteration_time_s;
  result.throughput_samples_per_s = header.throughput_samples_per_s;
  result.bubble_ratio = header.bubble_ratio;
  result.peak_memory_bytes = header.peak_memory_bytes;
  result.error = bytes.substr(sizeof header);
  return result;
}

}  // namespace pipetwin
