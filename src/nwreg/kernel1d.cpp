#include "nwreg/kernel1d.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

// Built with -fno-trapping-math (see src/CMakeLists.txt): it changes no result, and lets the
// compiler turn the clamp into a vector max on AVX2.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NWREG_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NWREG_CLONES
#endif

namespace nwreg::kernel {
namespace {

constexpr int lanes = 8;

// 2^u: u = k + w with k an integer and |w| <= 1/2; 2^w by a degree-11 polynomial (minimax for
// exp on [-ln2/2, ln2/2] with ln 2 folded into the coefficients), 2^k by adding k to the
// exponent bits. Branch-free so that it vectorises.
// Always inlined: a call from a target clone to an out-of-line helper would run the helper's
// baseline code, unvectorised.
[[gnu::always_inline]] inline double exp2_inline(double u) {
  constexpr double magic = 0x1.8p52;  // adding it rounds to an integer kept in the low bits
  const double uc = std::max(u, -1021.0);
  const double kd = uc + magic;
  const std::int64_t k = std::bit_cast<std::int64_t>(kd) - std::bit_cast<std::int64_t>(magic);
  const double w = uc - (kd - magic);
  double p = 4.0780719295883366649e-10;
  p = std::fma(p, w, 7.0725704128144235096e-9);
  p = std::fma(p, w, 1.0180647659234138889e-7);
  p = std::fma(p, w, 1.3215442675329822143e-6);
  p = std::fma(p, w, 0.000015252727385193868197);
  p = std::fma(p, w, 0.0001540353044157213033);
  p = std::fma(p, w, 0.0013333558153439964747);
  p = std::fma(p, w, 0.0096181291076070023796);
  p = std::fma(p, w, 0.05550410866479039455);
  p = std::fma(p, w, 0.24022650695910098007);
  p = std::fma(p, w, 0.69314718055994569675);
  p = std::fma(p, w, 1.0);
  return std::bit_cast<double>(std::bit_cast<std::int64_t>(p) + (k << 52));
}

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
