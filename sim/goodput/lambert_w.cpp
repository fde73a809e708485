#include "sim/goodput/lambert_w.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace pipetwin {

namespace {

constexpr int kMaxIterations = 64;
constexpr double kTolerance = 4 * std::numeric_limits<double>::epsilon();

// g(v) = (v - 1) e^v + 1 = sum over k >= 2 of (k - 1) v^k / k!, for v in [0, 1]: all terms are
// positive, so small v loses nothing to the cancellation of the closed form.
double branch_residual_base(double v) {
  double term = v;  // v^k / k! at k = 1
  double sum = 0;
  for (int k = 2; k < 24; ++k) {
    term *= v / k;
    sum += (k - 1) * term;
    if ((k - 1) * term <= sum * 1e-17) break;
  }
  return sum;
}

}  // namespace

double one_plus_lambert_w0_near_branch(double q) {
  if (!(q > 0)) return 0;
  if (q >= 1) return 1;
  // With w = v - 1, w e^w = x becomes g(v) = e x + 1 = q: well conditioned in v near 0, where
  // q ~ v^2 / 2. The start is the branch-point series v = p - p^2/3 + 11 p^3/72, p = sqrt(2 q).
  const double p = std::sqrt(2 * q);
  double v = p * (1 + p * (-1.0 / 3 + p * 11.0 / 72));
  if (p < 1e-7) return v;  // the next term, -43 p^4/540, is below rounding
  v = std::fmin(std::fmax(v, 0.5 * p), 1.0);
  for (int i = 0; i < kMaxIterations; ++i) {
    const double ev = std::exp(v);
    const double f = branch_residual_base(v) - q;
    const double d1 = v * ev;        // g'(v)
    const double d2 = (1 + v) * ev;  // g''(v)
    const double step = 2 * f * d1 / (2 * d1 * d1 - f * d2);
    v -= step;
    if (std::fabs(step) <= kTolerance * v) break;
  }
  return v;
}

double lambert_w0(double x) {
  constexpr double kE = std::numbers::e;
  const double q = 1 + kE * x;
  // -1/e itself rounds, so q may land a few ulps below 0 at the branch point.
  if (q < -1e-15 || std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (q < 0.25) return one_plus_lambert_w0_near_branch(q) - 1;
  if (x == 0) return 0;
  if (std::isinf(x)) return x;
  // Away from the branch point Halley's iteration on w e^w - x converges cubically from
  // log1p(x) (small x) or log x - log log x (large x).
  double w = x < 3 ? std::log1p(x) : std::log(x) - std::log(std::log(x));
  for (int i = 0; i < kMaxIterations; ++i) {
    const double ew = std::exp(w);
    const double f = w * ew - x;
    const double step = f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2));
    w -= step;
    if (std::fabs(step) <= kTolerance * std::fabs(w)) break;
  }
  return w;
}

}  // namespace pipetwin
