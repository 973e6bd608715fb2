#include "nwreg/kernel/kernel1d.h"

#include <algorithm>
#include <cmath>

#include "nwreg/base/simd.h"

namespace nwreg::kernel {
namespace {

// Grad: t and v; Detail: w2 and sv over `vals`. s0 and s1 are summed the same way in every case.
template <bool Grad, bool Detail = false>
[[gnu::always_inline]] inline Sums sums_impl(const double* x, const double* y, std::size_t lo, std::size_t hi, double xb,
                      double q, double D, double K2, double yb, const double* vals = nullptr) {
  double s0[lanes] = {}, s1[lanes] = {}, t[lanes] = {}, v[lanes] = {}, w2[lanes] = {}, sv[lanes] = {};
  std::size_t i = lo;
  for (; i + lanes <= hi; i += lanes) {
    for (int l = 0; l < lanes; ++l) {
      const double xi = x[i + l];
      const double u = std::max((xi - xb) * ((xi - q) + D) * K2, -1021.0);
      const double e = exp2_inline(u);
      const double dy = y[i + l] - yb;
      s0[l] += e;
      s1[l] = std::fma(e, dy, s1[l]);
      if constexpr (Grad) {
        t[l] = std::fma(e, u, t[l]);
        v[l] = std::fma(e * dy, u, v[l]);
      }
      if constexpr (Detail) {
        w2[l] = std::fma(e, e, w2[l]);
        sv[l] = std::fma(e, vals[i + l], sv[l]);
      }
    }
  }
  Sums out;
  for (int l = 0; l < lanes; ++l) {
    out.s0 += s0[l];
    out.s1 += s1[l];
    out.t += t[l];
    out.v += v[l];
    out.w2 += w2[l];
    out.sv += sv[l];
  }
  for (; i < hi; ++i) {
    const double u = std::max((x[i] - xb) * ((x[i] - q) + D) * K2, -1021.0);
    const double e = exp2_inline(u);
    const double dy = y[i] - yb;
    out.s0 += e;
    out.s1 = std::fma(e, dy, out.s1);
    if constexpr (Grad) {
      out.t = std::fma(e, u, out.t);
      out.v = std::fma(e * dy, u, out.v);
    }
    if constexpr (Detail) {
      out.w2 = std::fma(e, e, out.w2);
      out.sv = std::fma(e, vals[i], out.sv);
    }
  }
  return out;
}

}  // namespace

NWREG_CLONES
Sums sums(const double* x, const double* y, std::size_t lo, std::size_t hi, double xb, double q,
          double D, double K2, double yb) {
  return sums_impl<false>(x, y, lo, hi, xb, q, D, K2, yb);
}

NWREG_CLONES
Sums sums_grad(const double* x, const double* y, std::size_t lo, std::size_t hi, double xb,
               double q, double D, double K2, double yb) {
  return sums_impl<true>(x, y, lo, hi, xb, q, D, K2, yb);
}

NWREG_CLONES
Sums sums_detail(const double* x, const double* y, const double* v, std::size_t lo, std::size_t hi, double xb,
                 double q, double D, double K2, double yb) {
  return sums_impl<false, true>(x, y, lo, hi, xb, q, D, K2, yb, v);
}

NWREG_CLONES
void weights(const double* x, std::size_t lo, std::size_t hi, double xb, double q, double D,
             double K2, double* e) {
  for (std::size_t i = lo; i < hi; ++i) e[i] = exp2_inline((x[i] - xb) * ((x[i] - q) + D) * K2);
}

double exp2_clamped(double u) { return exp2_inline(u); }

}  // namespace nwreg::kernel
