// A query's row gathered key by key: the keys it covers, their weights and the sums its
// estimator needs.
#include "nwreg/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "nwreg/base/errors.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/engine/pass.h"
#include "nwreg/kernel/kernel_nd.h"

namespace nwreg {

Span Engine::locate(const double* q, std::size_t exclude, Work& w, double rest) const {
  w.ready();
  Span s;
  s.ranges = &w.ranges;
  w.ranges.clear();
  double h = h_[0];  // one column: the window's bandwidth
  s.inv_h = policy_.query(index_, q, exclude, inv_h_.data(), cat_.data(), ks_.d, w.inv_h.data(), w.a, h, &w.kth_hint);
  const double* tree_inv_h = tree_ih_.data();
  if (s.inv_h != inv_h_.data() && ks_.tree) {  // the query's own scale (knn) in the tree's columns
    for (std::size_t c = 0; c < ks_.cont.size(); ++c) w.tree_inv_h[c] = s.inv_h[ks_.cont[c]];
    tree_inv_h = w.tree_inv_h.data();
  }
  s.b = index_.cover(q, exclude, rest, h, s.inv_h, tree_inv_h, keys(), w.ranges, w.qc.data());
  return s;
}

Span Engine::gather(const double* q, std::size_t exclude, Work& w, bool gradient, double rest) const {
  Span s = locate(q, exclude, w, rest);
  pairs_.fetch_add(static_cast<std::uint64_t>(s.sum([](std::size_t lo, std::size_t hi) { return hi - lo; })),
                   std::memory_order_relaxed);
  const kernel::Keys k = keys();
  const double* xb = ks_.key(s.b);
  // The values, and NW's gradient terms or local linear's moments, in the same sweep.
  kernel::Targets sums{ks_.ys.data(), ks_.ys[s.b], &s.s1};
  if (policy_.inv_s()) sums.ref = kernel::log2_weight(options_.kernel, k, s.b, q, s.inv_h);
  estimator_.prepare(sums, w, gradient);
  // Each range less the left-out block, whose keys may be nearer than b (their weights could
  // overflow) and get 0.
  const Block ex = index_.block(exclude);
  s.each([&](std::size_t lo, std::size_t hi) {
    const std::size_t a = std::clamp(ex.lo, lo, hi), z = std::clamp(ex.hi, lo, hi);
    if (lo < a) s.s0 += kernel::fill(options_.kernel, k, lo, a, q, xb, s.inv_h, w.e, sums);
    std::fill(w.e + a, w.e + z, 0.0);
    if (z < hi) s.s0 += kernel::fill(options_.kernel, k, z, hi, q, xb, s.inv_h, w.e, sums);
  });
  // Every weight on key b and the keys identical to it (neighbours in x order in one column, in
  // the k-d tree's leaves whose box holds it with several), shared by sample weight or, with
  // `unit`, equally.
  auto on_b = [&](bool unit) {
    s.each([&](std::size_t lo, std::size_t hi) { std::fill(w.e + lo, w.e + hi, 0.0); });
    const double* xb0 = ks_.key(s.b);
    index_.identical(s.b, exclude, tree_ih_.data(), w.ranges, w.qc.data());
    s.s0 = s.s1 = 0;
    s.each([&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) {
        const bool same = !ex.contains(i) && std::equal(xb0, xb0 + ks_.d, ks_.key(i));
        w.e[i] = same ? (unit || ks_.ws.empty() ? 1.0 : ks_.ws[i]) : 0.0;
        s.s0 += w.e[i];
        s.s1 += w.e[i] * (ks_.ys[i] - ks_.ys[s.b]);
      }
    });
    s.fallback = true;
  };
  if (!std::isfinite(s.s0) && rest == 0 && !ex.contains(s.b)) {
    // Far past the data the weights relative to key b overflow (an adaptive Gaussian at x near
    // 1e300: inf - inf). Their limit there is key b's, the key of largest weight: it answers, as
    // Laplace's exact sums do.
    on_b(false);
    if (s.s0 > 0) return s;
  }
  if (s.s0 == 0 && rest == 0 && estimator_.loss() == LossFunction::bisquare && !ex.contains(s.b) &&
      std::equal(q, q + ks_.d, ks_.key(s.b))) {
    // A query at a key whose whole neighbourhood weighs nothing (robustness weights of 0 all about
    // it; the key itself is always in reach): the y of the keys at q, whatever their weight, as
    // R's lowess answers such a row with its own y (clowess: ys[i] = y[i]).
    on_b(true);
    return s;
  }
  if (s.s0 == 0 && rest == 0 && options_.out_of_reach == OutOfReach::nearest) {
    // All the weight on the nearest key, shared by sample weight with the keys identical to it.
    on_b(false);
    if (s.s0 == 0) {
      // The nearest key weighs 0 (a row of weight 0 kept as a neighbour): the nearest key that
      // weighs something answers, shared with the keys identical to it.
      const std::size_t c = index_.nearest_weighted(q, exclude, s.inv_h);
      if (c != no_key) {
        s.each([&](std::size_t lo, std::size_t hi) { std::fill(w.e + lo, w.e + hi, 0.0); });
        s.b = c;
        const double* xc = ks_.key(c);
        w.ranges.assign(1, {0, ks_.n});
        s.s0 = s.s1 = 0;
        for (std::size_t i = 0; i < ks_.n; ++i) {
          w.e[i] = i != exclude && std::equal(xc, xc + ks_.d, ks_.key(i)) ? ks_.weight(i) : 0.0;
          s.s0 += w.e[i];
          s.s1 += w.e[i] * (ks_.ys[i] - ks_.ys[c]);
        }
      }
    }
    s.fallback = true;
  }
  return s;
}

}  // namespace nwreg
