// Two timelines in one, so that a single Chrome/Perfetto trace shows them one above the
// other (`pipetwin compare --trace`).
#pragma once

#include <string>

#include "traces/timeline.h"

namespace pipetwin {

// A's devices, spans, counters, instants and links as they are, then B's renumbered past
// them: device ids past A's largest, nodes past A's largest (so B's devices are separate
// processes in the trace), non-zero flow ids past A's largest, link ids past A's largest,
// with peers, counters and link counters following. Device and link names get their side's
// label in front ("simulated gpu0", "measured gpu0"; "measured nic0_1"); an empty label adds
// nothing. B's times are shifted so that its first span starts where A's does: a measured
// timeline on a steady clock then lines up with a simulated one that starts at 0 (the same
// alignment compare_timelines uses for start errors). `source` becomes
// "<label_a>: <a.source>, <label_b>: <b.source>".
//
// Throws std::invalid_argument when the two labels are equal (the names would collide).
Timeline stack_timelines(const Timeline& a, const std::string& label_a, const Timeline& b,
                         const std::string& label_b);

}  // namespace pipetwin
