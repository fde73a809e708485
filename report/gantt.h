// The per-device Gantt chart: one lane per device, compute spans above, transfers below,
// coloured by op kind, with the communication the compute lane does not hide hatched.
//
// Spans narrower than a pixel are not drawn one by one: each pixel column of a lane gets
// one mark, coloured by the op that filled most of it, so a report's size is bounded by
// the pixels, not by the spans (200k spans stay a few megabytes).
#pragma once

#include <cstdint>
#include <string>

#include "traces/timeline.h"

namespace pipetwin {

struct GanttOptions {
  double origin_s = 0;  // the time at the left edge
  double span_s = 0;    // the time across the plot
  double plot_px = 1100;
  std::string title;
  // Hover details for every span drawn one by one (off by itself for large timelines).
  int64_t max_span_tips = 20000;
};

// From the timeline's first span start to its last span end.
GanttOptions gantt_options_for(const Timeline& timeline);

struct GanttStats {
  int64_t spans = 0;       // spans of the timeline on its devices
  int64_t aggregated = 0;  // of them, drawn inside a pixel column's mark
  int64_t marks = 0;       // rectangles written
};

// An <svg class="gantt"> with one <g class="lane" data-device="ID"> per device of the
// timeline, in its order.
std::string render_gantt(const Timeline& timeline, const GanttOptions& options,
                         GanttStats* stats = nullptr);

// The legend of op colours and hatching shared by every Gantt of a page.
std::string gantt_legend();

}  // namespace pipetwin
