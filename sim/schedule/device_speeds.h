// Devices that compute at another speed than the GPU their stages were priced on: a slow or
// throttled GPU (cluster.overrides' compute_scale), nodes of another GPU type
// (cluster.node_groups, cluster.devices). Lowering prices every stage once, on one device;
// this pass gives each copy of its ops the time of the device that runs it, so both engines,
// the Chakra export and every schedule see the uneven speeds.
#pragma once

#include <span>

#include "sim/program/program.h"

namespace pipetwin {

// Each compute op (FWD, BWD, BWD_INPUT, BWD_WEIGHT, OPTIM) of stage s on device d takes its
// time x stage_priced_speed[s] / device_speed[d]; a collective that starts under one of d's
// compute ops (lead_s: a gradient bucket the backward fills first) keeps the same share of it.
// Ops whose factor is 1 are left untouched, bit for bit.
void apply_device_speeds(Program& program, std::span<const double> stage_priced_speed,
                         std::span<const double> device_speed);

}  // namespace pipetwin
