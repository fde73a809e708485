#include "sim/sweep/shard.h"

#include <charconv>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

std::optional<int64_t> whole_number(const std::string& text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  const std::optional<int64_t> index =
      slash == std::string::npos ? std::nullopt : whole_number(text.substr(0, slash));
  const std::optional<int64_t> count =
      slash == std::string::npos ? std::nullopt : whole_number(text.substr(slash + 1));
  if (!index || !count || *count < 1 || *index < 0 || *index >= *count) {
    throw InputError("--shard " + text + ": expected K/N with 0 <= K < N (e.g. 0/4)");
  }
  return {*index, *count};
}

std::optional<Shard> shard_from_slurm(const std::function<const char*(const char*)>& getenv) {
  const char* id = getenv("SLURM_ARRAY_TASK_ID");
  const char* count = getenv("SLURM_ARRAY_TASK_COUNT");
  if (id == nullptr || count == nullptr) return std::nullopt;
  const char* min = getenv("SLURM_ARRAY_TASK_MIN");
  const std::optional<int64_t> task = whole_number(id);
  const std::optional<int64_t> first = whole_number(min != nullptr ? min : "0");
  const std::string text =
      (task && first ? std::to_string(*task - *first) : std::string(id)) + "/" + count;
  try {
    return parse_shard(text);
  } catch (const InputError&) {
    throw InputError("the Slurm array (SLURM_ARRAY_TASK_ID " + std::string(id) +
                     ", SLURM_ARRAY_TASK_COUNT " + count + ", SLURM_ARRAY_TASK_MIN " +
                     (min != nullptr ? min : "unset") +
                     ") is not a shard of the grid: run one task per shard, "
                     "--array=0-(N-1), or give --shard K/N");
  }
}

}  // namespace pipetwin
