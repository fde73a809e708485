// A Program's dependency tables as a flat list of edges, for the passes that add
// dependencies to a built Program in place (blocking transfers, reductions after the
// flush): list the edges with some added, then write both tables back.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/program/program.h"

namespace pipetwin {

using DependencyEdges = std::vector<std::pair<int32_t, int32_t>>;  // (instruction, waits for)

// Every dependency of the Program, rows in order, each row's edges in its order.
DependencyEdges dependency_edges(const Program& p);

// Replaces the Program's dependencies and their reverse with `edges`.
void set_dependencies(Program& p, const DependencyEdges& edges);

}  // namespace pipetwin
