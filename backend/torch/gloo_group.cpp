#include "backend/torch/gloo_group.h"

#include "sim/errors.h"

namespace pipetwin {

c10::intrusive_ptr<c10d::ProcessGroupGloo> connect(const RankEnvironment& env, double timeout_s) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(env.master_port);
  store_options.isServer = env.rank == 0;
  store_options.numWorkers = env.world_size;
  store_options.waitWorkers = false;
  store_options.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  } catch (const std::exception& e) {
    throw RuntimeFailure("rank " + std::to_string(env.rank) + ": cannot reach the master at " +
                         env.master_addr + ":" + std::to_string(env.master_port) + ": " + e.what());
  }
  auto options = c10d::ProcessGroupGloo::Options::create(
      std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(
      env.master_addr == "localhost" ? "127.0.0.1" : env.master_addr));
  try {
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
  } catch (const std::exception& e) {
    throw RuntimeFailure("rank " + std::to_string(env.rank) + ": rendezvous of " +
                         std::to_string(env.world_size) + " ranks failed: " + e.what());
  }
}

}  // namespace pipetwin
