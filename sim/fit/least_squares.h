// Small dense linear least squares for the trace fit: a few dozen unknowns, thousands of
// rows. Normal equations solved by Gaussian elimination with partial pivoting, with
// columns that must stay non-negative dropped (set to 0) and the rest refitted, and one
// pass that leaves out gross outliers (a preempted op), as robust fits do.
#pragma once

#include <cstdint>
#include <vector>

namespace pipetwin {

struct LinearRows {
  int32_t columns = 0;
  std::vector<std::vector<double>> x;  // one row per observation
  std::vector<double> y;

  void add(std::vector<double> row, double value) {
    x.push_back(std::move(row));
    y.push_back(value);
  }
};

struct LinearFit {
  std::vector<double> coefficients;  // 0 for columns dropped or never seen
  int32_t rows_used = 0;
  int32_t outliers = 0;
  double rms_residual = 0;
};

// Minimises |X b - y|^2 over the rows with b[k] >= 0 for every k in `non_negative`.
// Columns with no non-zero entry get 0. Then rows whose residual exceeds `outlier_mads`
// times the median absolute residual (and 0.5% of their value) are left out and the fit
// repeated once; 0 keeps every row.
LinearFit fit_least_squares(const LinearRows& rows, const std::vector<int32_t>& non_negative,
                            double outlier_mads = 8);

// The same with column `capped` held at most `cap`: past it, the column is fixed at the cap
// and the others refitted.
LinearFit fit_least_squares_capped(LinearRows rows, const std::vector<int32_t>& non_negative,
                                   int32_t capped, double cap, double outlier_mads = 8);

}  // namespace pipetwin
