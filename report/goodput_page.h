// The report of a whole training run (`pipetwin goodput --report`): ETTR against the checkpoint
// interval and against the cluster's size, and days to train against GPUs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/html_page.h"

namespace pipetwin {

struct GoodputCurves {
  std::vector<std::pair<double, double>> ettr_by_interval_s;  // (interval, ETTR)
  double chosen_interval_s = 0;
  std::vector<std::pair<double, double>> ettr_by_gpus;  // (GPUs, ETTR)
  std::vector<std::pair<double, double>> days_by_gpus;  // (GPUs, days)
  double gpus = 0;                                      // the scenario's
};

// Adds the three charts (<svg class="chart goodput" data-curve="...">, one per curve).
void add_goodput_sections(HtmlPage& page, const GoodputCurves& curves);

}  // namespace pipetwin
