#include "backend/torch/gloo_group.h"

#include <algorithm>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

c10::intrusive_ptr<c10d::ProcessGroupGloo::Options> gloo_options(const RankEnvironment& env,
                                                                 double timeout_s) {
  auto options = c10d::ProcessGroupGloo::Options::create(
      std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(
      env.master_addr == "localhost" ? "127.0.0.1" : env.master_addr));
  return options;
}

}  // namespace

GlooJob join_job(const RankEnvironment& env, double timeout_s) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(env.master_port);
  store_options.isServer = env.rank == 0;
  store_options.numWorkers = env.world_size;
  store_options.waitWorkers = false;
  store_options.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  GlooJob job;
  try {
    job.store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  } catch (const std::exception& e) {
    throw RuntimeFailure("rank " + std::to_string(env.rank) + ": cannot reach the master at " +
                         env.master_addr + ":" + std::to_string(env.master_port) + ": " + e.what());
  }
  try {
    job.world = c10::make_intrusive<c10d::ProcessGroupGloo>(job.store, env.rank, env.world_size,
                                                            gloo_options(env, timeout_s));
  } catch (const std::exception& e) {
    throw RuntimeFailure("rank " + std::to_string(env.rank) + ": rendezvous of " +
                         std::to_string(env.world_size) + " ranks failed: " + e.what());
  }
  return job;
}

c10::intrusive_ptr<c10d::ProcessGroupGloo> connect(const RankEnvironment& env, double timeout_s) {
  return join_job(env, timeout_s).world;
}

c10::intrusive_ptr<c10d::ProcessGroupGloo> join_group(const GlooJob& job,
                                                      const RankEnvironment& env,
                                                      const std::vector<int>& ranks,
                                                      double timeout_s,
                                                      const std::string& purpose) {
  std::string name = purpose;
  for (int r : ranks) name.append("_").append(std::to_string(r));
  const auto me = std::find(ranks.begin(), ranks.end(), env.rank);
  if (me == ranks.end())
    throw std::logic_error("rank " + std::to_string(env.rank) + " is not in " + name);
  auto store = c10::make_intrusive<c10d::PrefixStore>(name, job.store);
  try {
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, static_cast<int>(me - ranks.begin()),
                                                       static_cast<int>(ranks.size()),
                                                       gloo_options(env, timeout_s));
  } catch (const std::exception& e) {
    throw RuntimeFailure("rank " + std::to_string(env.rank) + ": rendezvous of " + name +
                         " failed: " + e.what());
  }
}

}  // namespace pipetwin
