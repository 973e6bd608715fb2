#include "nwreg/learn/robust.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nwreg {

std::vector<double> robustness_weights(const std::vector<double>& residuals) {
  const std::size_t n = residuals.size();
  std::vector<double> a(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = std::abs(residuals[i]);
  std::vector<double> sorted = a;
  double s = 0;
  if (n > 0) {
    const std::size_t mid = n / 2;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(mid), sorted.end());
    const double upper = sorted[mid];
    if (n % 2 == 1) {
      s = 6 * upper;
    } else {
      const double lower = *std::max_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(mid));
      s = 3 * (upper + lower);
    }
  }
  long double mean = 0;
  for (double v : a) mean += v;
  mean /= static_cast<long double>(std::max<std::size_t>(n, 1));
  if (!(s >= std::numeric_limits<double>::min()) || s < 1e-7 * static_cast<double>(mean)) return {};
  std::vector<double> w(n, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] <= 0.001 * s) continue;
    if (a[i] > 0.999 * s) {
      w[i] = 0;
      continue;
    }
    const double u = a[i] / s, t = 1 - u * u;
    w[i] = t * t;
  }
  return w;
}

}  // namespace nwreg
