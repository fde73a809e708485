#include "sim/spec/cost_curve.h"

#include <algorithm>

namespace pipetwin {

CostCurve CostCurve::linear(double fixed_s, double per_sample_s) {
  CostCurve c;
  c.fixed_ = fixed_s;
  c.slope_ = per_sample_s;
  return c;
}

CostCurve CostCurve::measured(std::vector<std::pair<double, double>> points) {
  CostCurve c;
  std::sort(points.begin(), points.end());
  c.points_ = std::move(points);
  return c;
}

double CostCurve::measured_at(double b) const {
  const auto& p = points_;
  if (p.empty()) return 0;
  if (p.size() == 1) return p[0].second * b / p[0].first;
  // The segment containing b, or the nearest end segment to extrapolate.
  size_t k = 1;
  while (k + 1 < p.size() && p[k].first < b) ++k;
  const auto& [x0, y0] = p[k - 1];
  const auto& [x1, y1] = p[k];
  return y0 + (y1 - y0) * (b - x0) / (x1 - x0);
}

void CostCurve::add(const CostCurve& other) {
  fixed_ += other.fixed_;
  slope_ += other.slope_;
  if (other.points_.empty()) return;
  if (points_.empty()) {
    points_ = other.points_;
    return;
  }
  // Both piecewise linear: the sum is piecewise linear on the union of breakpoints, and
  // extrapolates with the sum of the end slopes, which evaluating at the union gives.
  std::vector<double> xs;
  for (const auto& [x, y] : points_) xs.push_back(x);
  for (const auto& [x, y] : other.points_) xs.push_back(x);
  // A single-point curve is proportional (through the origin): anchor the sum at 0 so
  // that it keeps that shape below the smallest measured batch.
  if (points_.size() == 1 || other.points_.size() == 1) xs.push_back(0.0);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::vector<std::pair<double, double>> sum;
  for (double x : xs) sum.emplace_back(x, measured_at(x) + other.measured_at(x));
  points_ = std::move(sum);
}

CostCurve CostCurve::scaled(double factor) const {
  CostCurve c = *this;
  c.fixed_ *= factor;
  c.slope_ *= factor;
  for (auto& [x, y] : c.points_) y *= factor;
  return c;
}

double CostCurve::seconds(double samples) const {
  if (samples <= 0) return 0;
  return fixed_ + slope_ * samples + measured_at(samples);
}

}  // namespace pipetwin
