// The rounds of a binomial tree rooted at group[0], shared by broadcast and the tree
// all-reduce. With L = ceil(log2 n) rounds, in the broadcast's round j = L-1 .. 0 every
// member r (its index in the group) with r mod 2^(j+1) = 0 sends to r + 2^j; the reduction
// runs the same rounds backwards, every r with r mod 2^(j+1) = 2^j sending to r - 2^j.
#pragma once

#include <cstdint>
#include <span>

#include "sim/network/collective_schedule.h"

namespace pipetwin {

CollectiveSchedule binomial_broadcast_phases(std::span<const int32_t> group, int64_t bytes);
CollectiveSchedule binomial_reduce_phases(std::span<const int32_t> group, int64_t bytes);

}  // namespace pipetwin
