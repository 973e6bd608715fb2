#pragma once
/// Moment sums moved to another centre by the binomial theorem: sum_i w_i (b_i + t)^m =
/// sum_l C(m, l) t^(m - l) sum_i w_i b_i^l. The fast Gauss transform's boxes and Laplace's
/// recursion (engine/line_sums.h) both shift this way.

#include <cstddef>

namespace nwreg::kernel {

/// C(m, l) for m, l < 24 (exact in double).
struct BinomialTable {
  static constexpr std::size_t size = 24;
  double c[size][size] = {};
  constexpr BinomialTable() {
    for (std::size_t m = 0; m < size; ++m) {
      c[m][0] = c[m][m] = 1;
      for (std::size_t l = 1; l < m; ++l) c[m][l] = c[m - 1][l - 1] + c[m - 1][l];
    }
  }
};
inline constexpr BinomialTable binomial{};

/// out[m] += f sum_(l <= m) C(m, l) tp[m - l] u[l] for m < count (count <= 24), tp[k] = t^k.
inline void binomial_shift(const double* u, const double* tp, std::size_t count, double f, double* out) {
  for (std::size_t m = 0; m < count; ++m) {
    double v = 0;
    for (std::size_t l = 0; l <= m; ++l) v += binomial.c[m][l] * tp[m - l] * u[l];
    out[m] += f * v;
  }
}

}  // namespace nwreg::kernel
