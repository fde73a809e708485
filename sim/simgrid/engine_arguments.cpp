#include "sim/simgrid/engine_arguments.h"

#include <simgrid/s4u.hpp>

namespace pipetwin {
namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PIPETWIN_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PIPETWIN_SANITIZED 1
#endif
#ifdef PIPETWIN_SANITIZED
constexpr bool kSanitizedBuild = true;
#else
constexpr bool kSanitizedBuild = false;
#endif

}  // namespace

std::vector<std::string> engine_arguments(const SimgridSettings& settings, int64_t actors) {
  std::vector<std::string> args = {"pipetwin",
                                   "--log=root.thres:critical",
                                   "--cfg=network/model:CM02",
                                   "--cfg=network/TCP-gamma:0",
                                   "--cfg=network/crosstraffic:0",
                                   "--cfg=network/latency-factor:1",
                                   "--cfg=network/bandwidth-factor:1",
                                   "--cfg=network/weight-S:0",
                                   "--cfg=surf/precision:1e-15",
                                   "--cfg=maxmin/precision:1e-12"};
  // SimGrid switches between its actors' stacks by hand; AddressSanitizer and
  // ThreadSanitizer, which Debian's SimGrid does not tell about those switches, would take
  // them for stack corruption or races. SimGrid's debugging setting gives each actor a
  // real thread instead, which both sanitizers follow (same results, slower).
  if (kSanitizedBuild) args.push_back("--cfg=contexts/factory:thread");
  // The lane actors' stacks stay shallow (their code, then SimGrid's calls into the
  // maestro); SimGrid's 8 MiB default made every actor's stack cost time and memory at
  // scale (4096 GPUs: 17 s and 2.6 GB, against 9 s and 1.1 GB with 64 KiB). Sanitized code
  // needs more stack; it keeps the default.
  if (!kSanitizedBuild)
    args.push_back("--cfg=contexts/stack-size:" + std::to_string(kSimgridActorStackKib));
  if (actors > kSimgridGuardedActors) args.push_back("--cfg=contexts/guard-size:0");
  for (const std::string& cfg : settings.cfg) args.push_back("--cfg=" + cfg);
  return args;
}

}  // namespace pipetwin

namespace pipetwin {

simgrid::s4u::Engine& start_engine(const SimgridSettings& settings, int64_t actors) {
  // The engine may keep argv: both live as long as the (child) process.
  static std::vector<std::string> args = engine_arguments(settings, actors);
  static std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  static int argc = static_cast<int>(argv.size());
  static simgrid::s4u::Engine engine(&argc, argv.data());
  return engine;
}

}  // namespace pipetwin
