// Lambert's W0 against its known values, the identity w e^w = x across its domain, and near
// the branch point against the series of Corless et al. in p = sqrt(2 (1 + e x)).
#include "sim/goodput/lambert_w.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace pipetwin {
namespace {

TEST(LambertW, KnownValues) {
  EXPECT_NEAR(lambert_w0(1), 0.5671432904097838, 1e-15);  // the omega constant
  EXPECT_NEAR(lambert_w0(std::numbers::e), 1, 1e-15);
  EXPECT_EQ(lambert_w0(0), 0);
  // -1/e rounds, so W0 of it sits within sqrt(2 e ulp) of -1.
  EXPECT_NEAR(lambert_w0(-1 / std::numbers::e), -1, 1e-7);
  // ln2 e^{ln2} = 2 ln2 (Halley's side) and -ln2 e^{-ln2} = -ln2 / 2 (the branch side).
  EXPECT_NEAR(lambert_w0(2 * std::numbers::ln2), std::numbers::ln2, 1e-15);
  EXPECT_NEAR(lambert_w0(-std::numbers::ln2 / 2), -std::numbers::ln2, 1e-15);
  EXPECT_TRUE(std::isnan(lambert_w0(-0.5)));
}

TEST(LambertW, InvertsWTimesExpW) {
  int checked = 0;
  for (double x = -0.3678; x < 1e12; x = x < 0 ? x + 0.01 : x * 1.7 + 1e-9) {
    const double w = lambert_w0(x);
    EXPECT_GE(w, -1) << x;
    EXPECT_NEAR(w * std::exp(w), x, 2e-15 * std::fmax(std::fabs(x), 1e-9)) << x;
    ++checked;
  }
  EXPECT_GT(checked, 80);
  for (const double tiny : {1e-300, -1e-300, 1e-20, -1e-12}) {
    EXPECT_NEAR(lambert_w0(tiny), tiny - tiny * tiny, 1e-16 * std::fabs(tiny)) << tiny;
  }
}

TEST(LambertW, NearTheBranchPointKeepsItsDigits) {
  for (const double q : {1e-30, 1e-16, 1e-10, 1e-8, 1e-6}) {
    const double p = std::sqrt(2 * q);
    // Truncated after p^5: the p^6 term, -1768 p^6 / 25515, is below 1e-13 relative here.
    const double series =
        p * (1 + p * (-1.0 / 3 + p * (11.0 / 72 + p * (-43.0 / 540 + p * 769.0 / 17280))));
    EXPECT_NEAR(one_plus_lambert_w0_near_branch(q), series, 1e-13 * series) << q;
  }
  // Where both forms are accurate they agree.
  for (double q = 0.3; q < 1; q += 0.1) {
    EXPECT_NEAR(one_plus_lambert_w0_near_branch(q), 1 + lambert_w0((q - 1) / std::numbers::e),
                1e-14)
        << q;
  }
  EXPECT_EQ(one_plus_lambert_w0_near_branch(0), 0);
  EXPECT_EQ(one_plus_lambert_w0_near_branch(1), 1);
}

}  // namespace
}  // namespace pipetwin
