// Lambert's W, the inverse of w * e^w, on its principal branch W0 (w >= -1). The optimal
// checkpoint interval of a Poisson-failing job is 1 + W0 of a number just above -1/e, where W0
// has a square-root branch point; there the form that takes the distance from the branch point
// keeps the digits that computing -1/e + something would cancel away.
#pragma once

namespace pipetwin {

// W0(x) for x in [-1/e, inf) by Halley's iteration, to ~1e-15 relative; NaN below -1/e.
double lambert_w0(double x);

// 1 + W0(x) given q = 1 + e * x in [0, 1] (x in [-1/e, 0]), accurate to ~1e-15 relative even
// when q is tiny and 1 + W0 ~ sqrt(2 q).
double one_plus_lambert_w0_near_branch(double q);

}  // namespace pipetwin
