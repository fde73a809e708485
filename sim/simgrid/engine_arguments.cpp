#include "sim/simgrid/engine_arguments.h"

#include <simgrid/s4u.hpp>

namespace pipetwin {

std::vector<std::string> engine_arguments(const SimgridSettings& settings) {
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
  for (const std::string& cfg : settings.cfg) args.push_back("--cfg=" + cfg);
  return args;
}

}  // namespace pipetwin

namespace pipetwin {

simgrid::s4u::Engine& start_engine(const SimgridSettings& settings) {
  // The engine may keep argv: both live as long as the (child) process.
  static std::vector<std::string> args = engine_arguments(settings);
  static std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  static int argc = static_cast<int>(argv.size());
  static simgrid::s4u::Engine engine(&argc, argv.data());
  return engine;
}

}  // namespace pipetwin
