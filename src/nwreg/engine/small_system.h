#pragma once
/// A local fit's small linear system, factored once.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace nwreg {

/// A p x p symmetric positive semi-definite system S c = r (a local fit's moments), factored once
/// (Cholesky, intercept first). A direction whose pivot falls below 1e-10 of its diagonal (the keys
/// do not spread along it) is dropped: its coefficient is 0 and the others are solved without it.
class SmallSystem {
 public:
  /// The system of moments gathered as kernel::Targets::S (the lower triangle), factored.
  static SmallSystem factored(std::size_t p, const double* lower) {
    SmallSystem sys(p);
    sys.reset();
    for (std::size_t a = 0; a < p; ++a)
      for (std::size_t b = 0; b <= a; ++b) sys.s(a, b) = sys.s(b, a) = lower[a * p + b];
    sys.factor();
    return sys;
  }
  explicit SmallSystem(std::size_t p) : p_(p), l_(p * p, 0.0), active_(p, false) {}
  double& s(std::size_t i, std::size_t j) { return s_[i * p_ + j]; }
  void reset() { s_.assign(p_ * p_, 0.0); }
  void factor() {
    for (std::size_t k = 0; k < p_; ++k) {
      for (std::size_t j = 0; j < k; ++j) {
        if (!active_[j]) continue;
        double v = s_[k * p_ + j];
        for (std::size_t m = 0; m < j; ++m)
          if (active_[m]) v -= l_[k * p_ + m] * l_[j * p_ + m];
        l_[k * p_ + j] = v / l_[j * p_ + j];
      }
      double piv = s_[k * p_ + k];
      for (std::size_t m = 0; m < k; ++m)
        if (active_[m]) piv -= l_[k * p_ + m] * l_[k * p_ + m];
      active_[k] = s_[k * p_ + k] > 0 && piv > 1e-10 * s_[k * p_ + k];
      if (s_[k * p_ + k] > 0) worst_ = std::min(worst_, piv / s_[k * p_ + k]);  // (a column not in the fit: no pivot)
      l_[k * p_ + k] = active_[k] ? std::sqrt(piv) : 0.0;
    }
  }
  /// The smallest pivot relative to its diagonal, over the directions with a diagonal: near 1 for
  /// keys spread about the query, small where the moments cancel (a pivot of r keeps about
  /// log10(r) fewer digits).
  double worst_pivot() const { return worst_; }
  /// Whether every direction was kept (no pivot dropped as degenerate).
  bool full_rank() const {
    for (std::size_t k = 0; k < p_; ++k)
      if (!active_[k]) return false;
    return true;
  }
  /// Solves into x (inactive entries 0).
  void solve(const double* r, double* x) const {
    std::vector<double> t(p_, 0.0);
    for (std::size_t k = 0; k < p_; ++k) {
      if (!active_[k]) continue;
      double v = r[k];
      for (std::size_t m = 0; m < k; ++m)
        if (active_[m]) v -= l_[k * p_ + m] * t[m];
      t[k] = v / l_[k * p_ + k];
    }
    for (std::size_t k = p_; k-- > 0;) {
      if (!active_[k]) {
        x[k] = 0;
        continue;
      }
      double v = t[k];
      for (std::size_t m = k + 1; m < p_; ++m)
        if (active_[m]) v -= l_[m * p_ + k] * x[m];
      x[k] = v / l_[k * p_ + k];
    }
  }

 private:
  std::size_t p_;
  std::vector<double> s_, l_;
  std::vector<bool> active_;
  double worst_ = 1;
};


}  // namespace nwreg
