// The time breakdown of every device (analysis/time_breakdown.h) as stacked bars, one per
// device, each the whole run, and the same in a table of seconds.
#pragma once

#include <string>
#include <vector>

#include "analysis/time_breakdown.h"

namespace pipetwin {

// An <svg class="chart breakdown"> with one <g class="device-breakdown" data-device="ID">
// per device holding a <rect data-part="..." data-fraction="..."> per non-empty part,
// followed by the table.
std::string render_breakdown(const std::vector<DeviceTimeBreakdown>& devices);

}  // namespace pipetwin
