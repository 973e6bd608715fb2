#pragma once
/// The inner loops of the 1-D attention engine, vectorised: sums over a contiguous range of
/// sorted keys of the unnormalised Gaussian weights relative to the nearest key b,
///
///   e_i = 2^u_i,  u_i = K2 (x_i - x_b) ((x_i - q) + D),  D = x_b - q,  K2 = -log2(e) / (2 h^2)
///
/// so that u_i = -(((q - x_i)/h)^2 - ((q - x_b)/h)^2) log2(e) / 2 <= 0 and e_b = 1. Both
/// differences are exact for nearby values (timestamps near 1.7e9 keep full precision), and the
/// factored form does not cancel where (q - x)^2 would. u is clamped at -1021 (e ~ 4e-308, far
/// below any rounding of a sum that holds e_b = 1). Valid when |x|, |q| <= 4e307 and K2 is a
/// normal number (no inf * 0); the caller checks. Each function is compiled for x86-64-v4, v3
/// and baseline and picks one at run time; eight lanes are summed in the same order on all.

#include <cstddef>

namespace nwreg::kernel {

/// Sums over keys [lo, hi): s0 = sum e, s1 = sum e (y - yb); with gradient sums,
/// t = sum e u and v = sum e (y - yb) u (u clamped as above); with detail sums (standard
/// errors), w2 = sum e^2 and sv = sum e v_i.
struct Sums {
  double s0 = 0, s1 = 0, t = 0, v = 0, w2 = 0, sv = 0;
};

Sums sums(const double* x, const double* y, std::size_t lo, std::size_t hi, double xb, double q,
          double D, double K2, double yb);
Sums sums_grad(const double* x, const double* y, std::size_t lo, std::size_t hi, double xb,
               double q, double D, double K2, double yb);

/// s0 and s1 exactly as sums() makes them (the same prediction), and w2 and sv over values v.
Sums sums_detail(const double* x, const double* y, const double* v, std::size_t lo, std::size_t hi, double xb,
                 double q, double D, double K2, double yb);

/// e[i] = 2^u_i for i in [lo, hi) (the attention row before normalisation).
void weights(const double* x, std::size_t lo, std::size_t hi, double xb, double q, double D,
             double K2, double* e);

/// 2^u for u <= 0.5, clamped at u = -1021; relative error <= 2.3e-16. Exposed for tests.
double exp2_clamped(double u);

}  // namespace nwreg::kernel
