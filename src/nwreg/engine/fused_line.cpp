#include "nwreg/engine/fused_line.h"

#include <algorithm>
#include <cmath>

#include "nwreg/kernel/kernel1d.h"
#include "nwreg/kernel/kernels.h"

namespace nwreg {

FusedLine::FusedLine(const KeySet& keys, const KeyIndex& index, double tolerance, ThreadPool* pool,
                     std::atomic<std::uint64_t>& pairs, std::atomic<std::uint64_t>& transformed_rows)
    : keys_(keys), index_(index), tolerance_(tolerance), pool_(pool), pairs_(pairs), transformed_rows_(transformed_rows) {}

void FusedLine::set_bandwidth(double h) {
  h_ = h;
  inv_h_ = 1 / h;
  K2_ = -0.5 * kernels::log2e * inv_h_ * inv_h_;
}

bool FusedLine::fast(double q) const {
  return keys_.bounded && std::abs(q) <= KeySet::bounded_limit && std::isnormal(K2_);
}

Row FusedLine::summed(double q, std::size_t exclude, bool gradient) const {
  const std::size_t b = index_.nearest_1d(q, exclude);
  const double xb = keys_.xs[b], yb = keys_.ys[b];
  std::size_t lo, hi;
  index_.window_1d(q, h_, b, 1.0, lo, hi);
  const Block ex = index_.block(exclude);
  pairs_.fetch_add(hi - lo, std::memory_order_relaxed);
  kernel::Sums s;
  if (fast(q)) {
    const double D = xb - q;
    auto range = [&](std::size_t a, std::size_t z) {
      if (a < z)
        add(s, gradient ? kernel::sums_grad(keys_.xs.data(), keys_.ys.data(), a, z, xb, q, D, K2_, yb)
                        : kernel::sums(keys_.xs.data(), keys_.ys.data(), a, z, xb, q, D, K2_, yb));
    };
    // The window less the left-out block: [lo, ex.lo) and [ex.hi, hi), either possibly empty.
    range(lo, std::clamp(ex.lo, lo, hi));
    range(std::clamp(ex.hi, lo, hi), hi);
  } else {
    for (std::size_t i = lo; i < hi; ++i) {
      if (ex.contains(i)) continue;
      const double u = std::max(kernels::Gaussian::term(keys_.xs[i], xb, q, inv_h_), -1021.0);
      const double e = std::exp2(u), dy = keys_.ys[i] - yb;
      s.s0 += e;
      s.s1 += e * dy;
      s.t += e * u;
      s.v += e * dy * u;
    }
  }
  Row row;
  const double fc = s.s1 / s.s0;  // prediction relative to y_b: exact when b holds all weight
  row.f = yb + fc;
  // df/dlog h = sum_i a_i (y_i - f) ((q - x_i)^2 - (q - x_b)^2) / h^2 (the weights sum to 1, so
  // distances may be measured from b), and that square difference is -2 ln 2 u_i.
  if (gradient) row.dfdtheta = -2 * ln2 * (s.v - fc * s.t) / s.s0;
  row.s0 = s.s0;
  row.t = s.t;
  return row;
}

// NW's sums and the squared weights' (y within its range): target-side series where a pass has
// many rows a box. The smooth of squared residuals (values spanning many orders) keeps the
// boxes' series, whose rounding stays nearer each key's weight. From 2^17 keys the keys' power
// sums are binned once (16,384 bins at most, 64 keys a bin at least), at the first pass of 1000
// rows or more (a stream's single rows never pay for them): a transform then merges them
// (O(bins p^2)) instead of summing every key's powers at each bandwidth (O(n p)).
GaussTransform::Shape FusedLine::targets(std::size_t rows, bool gradient) const {
  GaussTransform::Shape shape;
  shape.targets = true;
  shape.gradient = gradient;
  if (rows < 1000) return shape;
  std::call_once(bins_once_, [&] {
    const std::size_t terms = GaussTransform::target_terms(keys_.n, tolerance_);
    if (keys_.n >= (std::size_t{1} << 17) && terms > 0)
      bins_ = std::make_unique<GaussBins>(keys_.xs.data(), keys_.ys.data(), keys_.n, keys_.y_mid,
                                          std::min<std::size_t>(16384, keys_.n / 64), terms, pool_);
  });
  shape.bins = bins_.get();
  return shape;
}

std::unique_ptr<GaussTransform> FusedLine::transform(std::size_t rows, bool gradient) const {
  // Worth building (O(n p)) for many rows over many keys, on the fused path without
  // left-out blocks; rows whose nearest key lies beyond sqrt(2) h sum their windows instead (row).
  if (!keys_.bounded || index_.leave_out() > 0 || !(tolerance_ > 0) || keys_.n < 8192)
    return nullptr;
  auto t = std::make_unique<GaussTransform>(keys_.xs.data(), keys_.ys.data(), keys_.n, h_, tolerance_, keys_.y_mid, rows,
                                            pool_, targets(rows, gradient));
  return t->usable() ? std::move(t) : nullptr;
}

Row FusedLine::transformed(const GaussTransform& fgt, double q, std::size_t exclude, bool gradient) const {
  // The transform's bound holds for a row whose weights sum to at least 1/e: one whose nearest
  // key (other than `exclude`) lies within sqrt(2) h. Other rows sum their windows.
  const std::size_t b = index_.nearest_1d(q, exclude);
  if (!(std::abs(keys_.xs[b] - q) <= std::sqrt(2.0) * h_)) return summed(q, exclude, gradient);
  transformed_rows_.fetch_add(1, std::memory_order_relaxed);
  const double y0 = fgt.y0();
  const GaussTransform::Sums s = fgt.at(q, gradient);
  // A left-out key p = q goes: it weighs exp(0) = 1 at distance 0 (D = 0).
  const bool out = exclude != no_key;
  const double s0 = out ? s.s0 - 1 : s.s0, s1 = out ? s.s1 - (keys_.ys[exclude] - y0) : s.s1;
  Row row;
  const double fc = s1 / s0;
  row.f = y0 + fc;
  // df/dlog h = sum_i a_i (y_i - f) D_i = (v - (f - y0) t) / s0.
  if (gradient) row.dfdtheta = (s.v - fc * s.t) / s0;
  // As the sweep makes them for a query at a key: s0, and t = sum e u with u = -D / (2 ln 2).
  row.s0 = s0;
  row.t = -s.t / (2 * ln2);
  return row;
}

FusedLine::Pass FusedLine::pass(std::size_t rows, bool detail, const std::vector<double>* v, bool gradient) const {
  Pass p;
  if (rows == 0 || !(p.fgt = transform(rows, gradient)) || !detail) return p;
  p.fgt2 = std::make_unique<GaussTransform>(keys_.xs.data(), keys_.ys.data(), keys_.n, h_ / std::sqrt(2.0), tolerance_,
                                            keys_.y_mid, rows, pool_, targets(rows, false));
  // v >= 0 (squared residuals) is summed as it is: measured from an offset, a local mean
  // many orders below the largest v would cancel. Other v: summed key by key.
  if (v) {
    for (double x : *v) p.vsum += x;
    if (*std::min_element(v->begin(), v->end()) >= 0)
      p.fgtv = std::make_unique<GaussTransform>(keys_.xs.data(), v->data(), keys_.n, h_, tolerance_, 0.0, rows, pool_);
  }
  if (!p.fgt2->usable()) p.fgt.reset();
  if (p.fgtv && !p.fgtv->usable()) p.fgtv.reset();
  return p;
}

Row FusedLine::row(const Pass& pass, double q, std::size_t exclude, bool gradient) const {
  return pass.fgt && fast(q) ? transformed(*pass.fgt, q, exclude, gradient) : summed(q, exclude, gradient);
}

bool FusedLine::loo_squares(const Pass& pass, double q, std::size_t exclude, double& f, double& sum_w2) const {
  if (!pass.fgt || !pass.fgt2 || !fast(q)) return false;
  const std::size_t b = index_.nearest_1d(q, exclude);
  if (!(std::abs(keys_.xs[b] - q) <= h_)) return false;  // each transform within its bound
  const Row r = transformed(*pass.fgt, q, exclude, false);
  // The left-out key (at q: keys are not merged on this path) weighs exp(0)^2 = 1 in fgt2's sum.
  f = r.f;
  sum_w2 = (pass.fgt2->at(q, false).s0 - (exclude != no_key ? 1.0 : 0.0)) / (r.s0 * r.s0);
  return true;
}

bool FusedLine::detail(const Pass& pass, double q, const double* v, double& f, double* sum_w2, double* smooth) const {
  const std::size_t b = index_.nearest_1d(q, no_key);
  const double xb = keys_.xs[b], yb = keys_.ys[b];
  std::size_t lo, hi;
  if (pass.fgt && fast(q) && std::abs(xb - q) <= h_) {  // each transform within its bound
    const Row r = transformed(*pass.fgt, q, no_key, false);
    f = r.f;
    if (sum_w2) *sum_w2 = pass.fgt2->at(q, false).s0 / (r.s0 * r.s0);
    if (!smooth) return true;
    if (pass.fgtv) {
      const GaussTransform::Sums sv = pass.fgtv->at(q, false);
      // Each weight errs by at most weight_error(): within 1e-13 of this row's sum of v
      // unless much larger v elsewhere (within reach or not) could outweigh it.
      if (pass.fgtv->weight_error() * pass.vsum <= 1e-13 * sv.s1) {
        *smooth = sv.s1 / sv.s0;
        return true;
      }
    }
    // The smooth key by key over the window.
    index_.window_1d(q, h_, b, 1.0, lo, hi);
    const kernel::Sums k = kernel::sums_detail(keys_.xs.data(), keys_.ys.data(), v, lo, hi, xb, q, xb - q, K2_, yb);
    *smooth = k.sv / k.s0;
    return true;
  }
  if (!fast(q)) return false;  // the sweep does not apply: gathered
  // One vectorised pass: the prediction exactly as row() makes it (s0 and s1 summed as there),
  // the squared weights and the smooth of v.
  index_.window_1d(q, h_, b, 1.0, lo, hi);
  pairs_.fetch_add(hi - lo, std::memory_order_relaxed);
  const kernel::Sums k = kernel::sums_detail(keys_.xs.data(), keys_.ys.data(), smooth ? v : keys_.ys.data(), lo, hi, xb,
                                             q, xb - q, K2_, yb);
  f = yb + k.s1 / k.s0;
  if (sum_w2) *sum_w2 = k.w2 / (k.s0 * k.s0);
  if (smooth) *smooth = k.sv / k.s0;
  return true;
}

void FusedLine::weights(double q, double* a, std::size_t& lo, std::size_t& hi) const {
  const std::size_t b = index_.nearest_1d(q, no_key);
  const double xb = keys_.xs[b];
  index_.window_1d(q, h_, b, 1.0, lo, hi);
  pairs_.fetch_add(hi - lo, std::memory_order_relaxed);
  if (fast(q)) {
    kernel::weights(keys_.xs.data(), lo, hi, xb, q, xb - q, K2_, a);
  } else {
    for (std::size_t i = lo; i < hi; ++i)
      a[i] = std::exp2(std::max(kernels::Gaussian::term(keys_.xs[i], xb, q, inv_h_), -1021.0));
  }
  double s0 = 0;
  for (std::size_t i = lo; i < hi; ++i) s0 += a[i];
  for (std::size_t i = lo; i < hi; ++i) a[i] /= s0;
}

}  // namespace nwreg
