// The time one pass of a layer (or a whole stage) takes for b samples. Pipelines care
// about its shape: a fixed cost per microbatch (kernel launches, poor utilisation at small
// sizes) is what makes the best microbatch size differ from stage to stage (UMPIPE).
//
//   seconds(b) = fixed + slope * b + measured(b)        and seconds(0) = 0
//
// where measured(b) interpolates measured (batch, seconds) points piecewise-linearly and
// extrapolates the end segments linearly (a single point scales proportionally).
#pragma once

#include <utility>
#include <vector>

namespace pipetwin {

class CostCurve {
 public:
  CostCurve() = default;
  static CostCurve linear(double fixed_s, double per_sample_s);
  // `points`: (batch, seconds), batches positive and distinct, any order.
  static CostCurve measured(std::vector<std::pair<double, double>> points);

  // Pointwise sum: a stage's curve is the sum of its layers' curves.
  void add(const CostCurve& other);
  CostCurve scaled(double factor) const;

  double seconds(double samples) const;

  double fixed_s() const { return fixed_; }
  double per_sample_s() const { return slope_; }
  const std::vector<std::pair<double, double>>& points() const { return points_; }

 private:
  double measured_at(double samples) const;

  double fixed_ = 0;
  double slope_ = 0;
  std::vector<std::pair<double, double>> points_;  // sorted by batch
};

}  // namespace pipetwin
