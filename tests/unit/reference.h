#pragma once
// The one brute-force reference the unit tests hold the engine to, by the definition and in
// long double: every key, no pruning, no sums by moments. Weights are products of the kernel
// over the columns, each key's with its own scale where given (adaptive bandwidths), measured
// from the largest (the softmax's maximum), so that neither far queries nor tiny bandwidths
// under- or overflow.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/kernel/kernels.h"

namespace testing {

// log K(u) for the engine's kernels (-inf outside a compact kernel's support).
inline long double log_kernel(nwreg::Kernel kernel, long double u) {
  const long double a = std::abs(u), inf = -std::numeric_limits<long double>::infinity();
  switch (kernel) {
    case nwreg::Kernel::gaussian: return -0.5L * u * u;
    case nwreg::Kernel::laplace: return -a;
    case nwreg::Kernel::epanechnikov: return a < 1 ? std::log(1 - a * a) : inf;
    case nwreg::Kernel::tricube: return a < 1 ? 3 * std::log(1 - a * a * a) : inf;
    case nwreg::Kernel::uniform: return a <= 1 ? 0.0L : inf;
  }
  return inf;
}

struct Reference {
  nwreg::Kernel kernel = nwreg::Kernel::gaussian;
  std::vector<double> h;                 // per column
  std::vector<double> scale;             // per key, multiplying h (adaptive: s_i); empty = 1
  bool normalise = false;                // divide each key's weight by its scale^d (adaptive)
  std::function<bool(std::size_t)> out;  // keys left out (a row itself, its block); empty = none
};

// The Gaussian at bandwidths h, every key kept (the other fields set as needed).
inline Reference gaussian(std::vector<double> h) {
  Reference r;
  r.h = std::move(h);
  return r;
}

// The NW prediction at q: sum_i w_i y_i / sum_i w_i over the keys kept (NaN where none weighs).
inline double reference_nw(const nwreg::Dataset& d, const Reference& r, const double* q) {
  std::vector<long double> lw(d.n, -std::numeric_limits<long double>::infinity());
  long double top = -std::numeric_limits<long double>::infinity();
  for (std::size_t i = 0; i < d.n; ++i) {
    if (r.out && r.out(i)) continue;
    const long double s = r.scale.empty() ? 1.0L : r.scale[i];
    long double v = d.weight.empty() ? 0.0L : std::log(static_cast<long double>(d.weight[i]));
    for (std::size_t k = 0; k < d.d; ++k)
      v += log_kernel(r.kernel, (static_cast<long double>(q[k]) - d.x[i * d.d + k]) / (r.h[k] * s));
    if (r.normalise) v -= static_cast<long double>(d.d) * std::log(s);
    lw[i] = v;
    top = std::max(top, v);
  }
  long double s0 = 0, s1 = 0;
  for (std::size_t i = 0; i < d.n; ++i) {
    if (std::isinf(lw[i])) continue;
    const long double e = std::exp(lw[i] - top);
    s0 += e;
    s1 += e * d.y[i];
  }
  return s0 > 0 ? static_cast<double>(s1 / s0) : std::numeric_limits<double>::quiet_NaN();
}

// The leave-one-out mean squared error: row j attends to every key `out_of(j)` keeps (by
// default every key but j), each row's error weighted by its sample weight.
inline double reference_loo(const nwreg::Dataset& d, Reference r,
                            const std::function<bool(std::size_t, std::size_t)>& out_of = {}) {
  long double sse = 0, total = 0;
  for (std::size_t j = 0; j < d.n; ++j) {
    const long double w = d.weight.empty() ? 1.0L : d.weight[j];
    if (w == 0) continue;
    r.out = [&](std::size_t i) { return out_of ? out_of(j, i) : i == j; };
    const long double e = d.y[j] - static_cast<long double>(reference_nw(d, r, d.row(j)));
    sse += w * e * e;
    total += w;
  }
  return static_cast<double>(sse / total);
}

// The K-th nearest distance by the engine's rule (key_index.h), from the distances to every
// other key: the K-th smallest, ties with multiplicity. Where it is 0, or `widen`ed (a compact
// kernel's knn and adaptive), the smallest distance beyond it instead (knn's `limit`: 2^-40 of
// that where it was 0 and not widened; twice the K-th where nothing lies beyond); 1 where no
// positive finite scale results.
struct KthRule {
  bool widen = false, limit = false;
};
inline double kth_distance(std::vector<double> others, std::size_t K, KthRule rule) {
  std::sort(others.begin(), others.end());
  double s = others[std::min(K, others.size()) - 1];
  if (!(s > 0) || rule.widen) {
    const double after = s;
    const auto beyond = std::upper_bound(others.begin(), others.end(), after);
    s = beyond == others.end() ? std::numeric_limits<double>::infinity() : *beyond;
    if (!std::isfinite(s) && after > 0) s = 2 * after;
    else if (!(after > 0) && !rule.widen && rule.limit) s = std::ldexp(s, -40);
  }
  return std::isfinite(s) && s > 0 ? s : 1.0;
}

}  // namespace testing
