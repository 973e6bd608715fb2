#include "nwreg/base/distributions.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nwreg {

double normal_quantile(double p) {
  // Acklam's rational approximation (relative error 1.15e-9), then one Halley step on
  // Phi(x) - p with erfc, which brings it to double precision.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    const double q = std::sqrt(-2 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

namespace {

// The regularised incomplete beta function I_x(a, b) by its continued fraction (evaluated with
// the modified Lentz method), on the side where it converges fast: I_x(a, b) = 1 - I_1-x(b, a).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incomplete_beta(b, a, 1 - x);
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x)) / a;
  constexpr double tiny = 1e-300;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 400; ++i) {
    const int m = i / 2;
    double numerator;
    if (i == 0) numerator = 1;
    else if (i % 2 == 0) numerator = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    else numerator = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + numerator * d;
    d = 1 / (std::abs(d) < tiny ? tiny : d);
    c = 1 + numerator / c;
    c = std::abs(c) < tiny ? tiny : c;
    const double step = c * d;
    f *= step;
    if (std::abs(1 - step) < 1e-15) break;
  }
  return front * (f - 1);
}

// The regularised incomplete gamma functions P(a, x) and Q(a, x) = 1 - P(a, x), x > 0: P by its
// series below x = a + 1, Q by its continued fraction (modified Lentz) above, each on the side
// where it converges fast; the other is 1 minus it, so the smaller of the two is always accurate.
struct GammaTails {
  double lower, upper;
};
GammaTails gamma_tails(double a, double x) {
  const double front = std::exp(a * std::log(x) - x - std::lgamma(a));
  if (x < a + 1) {
    double term = 1 / a, sum = term;
    for (int n = 1; n < 1000000 && std::abs(term) > 1e-17 * std::abs(sum); ++n) {
      term *= x / (a + n);
      sum += term;
    }
    const double lower = std::min(1.0, front * sum);
    return {lower, 1 - lower};
  }
  constexpr double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, f = d;
  for (int i = 1; i < 1000000; ++i) {
    const double numerator = -i * (i - a);
    b += 2;
    d = numerator * d + b;
    d = 1 / (std::abs(d) < tiny ? tiny : d);
    c = b + numerator / c;
    c = std::abs(c) < tiny ? tiny : c;
    const double step = c * d;
    f *= step;
    if (std::abs(1 - step) < 1e-16) break;
  }
  const double upper = std::min(1.0, front * f);
  return {1 - upper, upper};
}

}  // namespace

double student_upper(double t, double nu) {
  if (!(nu < 1e7)) return 0.5 * std::erfc(t / std::sqrt(2.0));
  const double tail = 0.5 * incomplete_beta(nu / 2, 0.5, nu / (nu + t * t));
  return t >= 0 ? tail : 1 - tail;
}

double chi_square_upper(double x, double k) {
  if (!(x > 0)) return 1;
  if (!(x < std::numeric_limits<double>::infinity())) return 0;
  return gamma_tails(k / 2, x / 2).upper;
}

double chi_square_lower(double x, double k) {
  if (!(x > 0)) return 0;
  if (!(x < std::numeric_limits<double>::infinity())) return 1;
  return gamma_tails(k / 2, x / 2).lower;
}

}  // namespace nwreg
