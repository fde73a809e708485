#include "sim/fit/least_squares.h"

#include <algorithm>
#include <cmath>

namespace pipetwin {
namespace {

// Solves the normal equations over `active` columns and `use` rows; false if singular.
bool solve(const LinearRows& rows, const std::vector<char>& use, const std::vector<int32_t>& active,
           std::vector<double>& out) {
  const size_t n = active.size();
  std::vector<std::vector<double>> a(n, std::vector<double>(n + 1, 0.0));
  for (size_t r = 0; r < rows.y.size(); ++r) {
    if (!use[r]) continue;
    const std::vector<double>& x = rows.x[r];
    for (size_t i = 0; i < n; ++i) {
      const double xi = x[active[i]];
      if (xi == 0) continue;
      for (size_t j = 0; j < n; ++j) a[i][j] += xi * x[active[j]];
      a[i][n] += xi * rows.y[r];
    }
  }
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < n; ++r) {
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    }
    if (!(std::abs(a[pivot][c]) > 1e-300)) return false;
    std::swap(a[c], a[pivot]);
    for (size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      if (f == 0) continue;
      for (size_t k = c; k <= n; ++k) a[r][k] -= f * a[c][k];
    }
  }
  out.assign(n, 0.0);
  for (size_t c = 0; c < n; ++c) out[c] = a[c][n] / a[c][c];
  return true;
}

// The constrained fit over the rows in `use`: drop the most negative constrained
// coefficient (or, if singular, the last active column) until the solution is feasible.
std::vector<double> constrained_fit(const LinearRows& rows, const std::vector<char>& use,
                                    const std::vector<int32_t>& non_negative) {
  std::vector<int32_t> active;
  for (int32_t k = 0; k < rows.columns; ++k) {
    bool seen = false;
    for (size_t r = 0; r < rows.y.size() && !seen; ++r) seen = use[r] && rows.x[r][k] != 0;
    if (seen) active.push_back(k);
  }
  std::vector<double> b(rows.columns, 0.0);
  while (!active.empty()) {
    std::vector<double> solution;
    if (!solve(rows, use, active, solution)) {
      active.pop_back();
      continue;
    }
    int32_t worst = -1;
    for (size_t i = 0; i < active.size(); ++i) {
      const bool constrained =
          std::find(non_negative.begin(), non_negative.end(), active[i]) != non_negative.end();
      if (constrained && solution[i] < 0 && (worst < 0 || solution[i] < solution[worst])) {
        worst = static_cast<int32_t>(i);
      }
    }
    if (worst < 0) {
      for (size_t i = 0; i < active.size(); ++i) b[active[i]] = solution[i];
      return b;
    }
    active.erase(active.begin() + worst);
  }
  return b;
}

double residual(const LinearRows& rows, const std::vector<double>& b, size_t r) {
  double predicted = 0;
  for (int32_t k = 0; k < rows.columns; ++k) predicted += rows.x[r][k] * b[k];
  return rows.y[r] - predicted;
}

}  // namespace

LinearFit fit_least_squares(const LinearRows& rows, const std::vector<int32_t>& non_negative,
                            double outlier_mads) {
  LinearFit fit;
  std::vector<char> use(rows.y.size(), 1);
  fit.coefficients = constrained_fit(rows, use, non_negative);
  if (outlier_mads > 0 && rows.y.size() >= 8) {
    std::vector<double> abs_residuals;
    for (size_t r = 0; r < rows.y.size(); ++r) {
      abs_residuals.push_back(std::abs(residual(rows, fit.coefficients, r)));
    }
    std::vector<double> sorted = abs_residuals;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const double mad = sorted[sorted.size() / 2];
    for (size_t r = 0; r < rows.y.size(); ++r) {
      const double limit = std::max(outlier_mads * mad, 0.005 * std::abs(rows.y[r]));
      if (abs_residuals[r] > limit) {
        use[r] = 0;
        ++fit.outliers;
      }
    }
    if (fit.outliers > 0) fit.coefficients = constrained_fit(rows, use, non_negative);
  }
  double squares = 0;
  for (size_t r = 0; r < rows.y.size(); ++r) {
    if (!use[r]) continue;
    ++fit.rows_used;
    const double e = residual(rows, fit.coefficients, r);
    squares += e * e;
  }
  fit.rms_residual = fit.rows_used > 0 ? std::sqrt(squares / fit.rows_used) : 0;
  return fit;
}

LinearFit fit_least_squares_capped(LinearRows rows, const std::vector<int32_t>& non_negative,
                                   int32_t capped, double cap, double outlier_mads) {
  LinearFit fit = fit_least_squares(rows, non_negative, outlier_mads);
  if (!(fit.coefficients[capped] > cap)) return fit;
  for (size_t r = 0; r < rows.y.size(); ++r) {
    rows.y[r] -= cap * rows.x[r][capped];
    rows.x[r][capped] = 0;
  }
  fit = fit_least_squares(rows, non_negative, outlier_mads);
  fit.coefficients[capped] = cap;
  return fit;
}

}  // namespace pipetwin
