#include "sim/program/dependency_edges.h"

#include "sim/program/csr.h"

namespace pipetwin {

DependencyEdges dependency_edges(const Program& p) {
  DependencyEdges edges;
  edges.reserve(p.deps.size());
  for (int32_t i = 0; i < p.size(); ++i) {
    for (int32_t d : p.deps_of(i)) edges.emplace_back(i, d);
  }
  return edges;
}

void set_dependencies(Program& p, const DependencyEdges& edges) {
  DependencyEdges reverse;
  reverse.reserve(edges.size());
  for (const auto& [instr, dep] : edges) reverse.emplace_back(dep, instr);
  build_csr(p.size(), edges, p.dep_begin, p.deps);
  build_csr(p.size(), reverse, p.dependent_begin, p.dependents);
}

}  // namespace pipetwin
