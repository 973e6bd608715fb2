#pragma once
/// The distribution functions inference needs, to full double precision: the normal quantile,
/// Student's t and the chi-square upper tails.

namespace nwreg {

/// The standard normal quantile Phi^-1(p), 0 < p < 1, to full double precision.
double normal_quantile(double p);

/// Student's t with nu degrees of freedom (any nu > 0; normal past 1e7): the upper tail P(T > t).
double student_upper(double t, double nu);

/// The chi-square distribution with k > 0 degrees of freedom (any real k): the upper tail
/// P(X > x) (1 for x <= 0), and the lower tail P(X <= x); each accurate where it is small.
double chi_square_upper(double x, double k);
double chi_square_lower(double x, double k);

}  // namespace nwreg
