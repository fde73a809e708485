// The launcher's environment, read once per rank.
#include "backend/common/rank_environment.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

int integer_variable(const char* name, int fallback, int minimum) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < minimum || value > 1 << 30) {
    throw InputError(std::string("environment variable ") + name + "='" + text +
                     "' is not an integer >= " + std::to_string(minimum));
  }
  return static_cast<int>(value);
}

}  // namespace

bool launched_as_rank() { return std::getenv("RANK") != nullptr; }

RankEnvironment rank_environment() {
  RankEnvironment env;
  env.world_size = integer_variable("WORLD_SIZE", 1, 1);
  env.rank = integer_variable("RANK", 0, 0);
  if (env.rank >= env.world_size) {
    throw InputError("RANK=" + std::to_string(env.rank) +
                     " is not below WORLD_SIZE=" + std::to_string(env.world_size));
  }
  env.local_rank = integer_variable("LOCAL_RANK", env.rank, 0);
  env.master_port = integer_variable("MASTER_PORT", 29500, 1);
  if (env.master_port > 65535) throw InputError("MASTER_PORT is not a TCP port");
  if (const char* addr = std::getenv("MASTER_ADDR"); addr != nullptr && *addr != '\0') {
    env.master_addr = addr;
  }
  return env;
}

int allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace pipetwin
