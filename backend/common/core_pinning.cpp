#include "backend/common/core_pinning.h"

#include <sched.h>

#include <vector>

namespace pipetwin {

int cores_before_pinning() {
  static const int cores = allowed_cores();
  return cores;
}

void pin_to_own_core(const RankEnvironment& env) {
  cores_before_pinning();  // remember the machine as it was
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cores.push_back(c);
  }
  if (cores.empty()) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cores[env.local_rank % cores.size()], &one);
  ::sched_setaffinity(0, sizeof one, &one);
}

}  // namespace pipetwin
