#include "sim/scenario/freeze_log.h"

#include <sstream>

#include "sim/spec/errors.h"

namespace pipetwin {

FreezeLog parse_freeze_log(const std::string& text, const std::string& name,
                           int32_t expected_layers) {
  FreezeLog log;
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  auto fail = [&](const std::string& what) {
    throw InputError(name + ":" + std::to_string(line_number) + ": " + what);
  };
  while (std::getline(in, line)) {
    ++line_number;
    std::istringstream words(line);
    std::string key;
    if (!(words >> key) || key[0] == '#') continue;
    if (key == "layers") {
      if (!(words >> log.layers) || log.layers <= 0) fail("layers: expected a positive count");
      if (log.layers != expected_layers) {
        fail("layers: the log is for a model of " + std::to_string(log.layers) +
             " layers, this scenario's has " + std::to_string(expected_layers));
      }
    } else if (key == "interval_iterations") {
      if (!(words >> log.interval_iterations) || log.interval_iterations <= 0) {
        fail("interval_iterations: expected a positive count");
      }
    } else if (key == "interval") {
      if (log.layers == 0) fail("interval before the 'layers' line");
      int32_t k = -1;
      if (!(words >> k) || k != static_cast<int32_t>(log.norms.size())) {
        fail("interval: expected interval " + std::to_string(log.norms.size()));
      }
      std::vector<double> norms;
      double v = 0;
      while (words >> v) {
        if (!(v >= 0)) fail("interval " + std::to_string(k) + ": a norm must not be negative");
        norms.push_back(v);
      }
      if (static_cast<int32_t>(norms.size()) != log.layers) {
        fail("interval " + std::to_string(k) + ": " + std::to_string(norms.size()) + " norms for " +
             std::to_string(log.layers) + " layers");
      }
      log.norms.push_back(std::move(norms));
    } else {
      fail("unknown line '" + key + "' (expected layers, interval_iterations or interval)");
    }
  }
  if (log.layers == 0 || log.interval_iterations == 0) {
    line_number = 0;
    fail("missing the 'layers' or 'interval_iterations' line");
  }
  return log;
}

std::string format_freeze_log(const FreezeLog& log) {
  std::ostringstream out;
  out.precision(17);
  out << "# pipetwin freeze log: accumulated gradient L1 norm per layer and interval\n"
      << "layers " << log.layers << "\ninterval_iterations " << log.interval_iterations << "\n";
  for (size_t k = 0; k < log.norms.size(); ++k) {
    out << "interval " << k;
    for (double v : log.norms[k]) out << " " << v;
    out << "\n";
  }
  return out.str();
}

}  // namespace pipetwin
