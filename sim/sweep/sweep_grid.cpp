#include "sim/sweep/sweep_grid.h"

#include <set>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

std::string path_of(const std::string& assignment) {
  const std::string path = assignment.substr(0, assignment.find('='));
  const size_t first = path.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return path.substr(first, path.find_last_not_of(" \t") - first + 1);
}

void check_paths(const std::vector<VaryAxis>& axes, const std::vector<std::string>& fixed) {
  std::set<std::string> varied;
  for (const VaryAxis& axis : axes) {
    if (!varied.insert(axis.path).second) {
      throw InputError("--vary " + axis.path + ": the path is varied twice; give all its values " +
                       "in one --vary");
    }
  }
  for (const std::string& assignment : fixed) {
    if (varied.count(path_of(assignment)) != 0) {
      throw InputError("--set " + assignment + ": " + path_of(assignment) +
                       " is also varied, so this value would never be used");
    }
  }
}

}  // namespace

std::vector<SweepPoint> cartesian_product(const std::vector<VaryAxis>& axes,
                                          const std::vector<std::string>& fixed_overrides) {
  check_paths(axes, fixed_overrides);
  std::vector<SweepPoint> points(1);  // the product of no axes is one empty point
  for (const VaryAxis& axis : axes) {
    std::vector<SweepPoint> next;
    next.reserve(points.size() * axis.values.size());
    for (const SweepPoint& point : points) {
      for (const std::string& value : axis.values) {
        SweepPoint extended = point;
        extended.settings.emplace_back(axis.path, value);
        next.push_back(std::move(extended));
      }
    }
    points = std::move(next);
  }
  return points;
}

std::string point_name(const SweepPoint& point) {
  std::string name;
  for (const auto& [path, value] : point.settings) {
    if (!name.empty()) name += ", ";
    name += path + "=" + value;
  }
  return name;
}

std::vector<std::string> point_overrides(const std::vector<std::string>& fixed_overrides,
                                         const SweepPoint& point) {
  std::vector<std::string> overrides = fixed_overrides;
  for (const auto& [path, value] : point.settings) overrides.push_back(path + "=" + value);
  return overrides;
}

}  // namespace pipetwin
