#include "nwreg/engine/line_sums.h"

#include <algorithm>
#include <cmath>

#include "nwreg/base/thread_pool.h"
#include "nwreg/kernel/binomial.h"
#include "nwreg/kernel/gauss_transform.h"

namespace nwreg {

GaussLine::GaussLine(const KeySet& keys, double h, std::size_t degree, double tolerance, std::size_t rows,
                     ThreadPool* pool, const LineData& data, bool targets)
    : data_(data), degree_(degree), tolerance_(tolerance) {
  if (!keys.bounded || keys.d != 1) return;
  GaussTransform::Shape shape;
  shape.weights = data.w;
  shape.order0 = 2 * degree + 3;  // M[0..2P] and G[m] = M[m + 2]
  shape.order1 = degree + 3;
  shape.powers = true;
  shape.targets = targets;
  auto t = std::make_unique<GaussTransform>(keys.xs.data(), data.y, keys.n, h, tolerance, data.y_mid, rows, pool, shape);
  if (t->usable()) fgt_ = std::move(t);
}

GaussLine::~GaussLine() = default;

bool GaussLine::sums(double q, double, std::size_t exclude, bool gradient, LineMoments& out) const {
  if (!(std::abs(q) <= KeySet::bounded_limit)) return false;
  double M[2 * max_degree + 3], My[max_degree + 3];
  const std::size_t more = gradient ? 2 : 0;  // G[m] = M[m + 2]
  fgt_->moments(q, M, My, 2 * degree_ + 1 + more, degree_ + 1 + more);
  const double total = M[0];
  if (exclude != no_key) {  // at distance 0: in M[0] and My[0] only (z = 0)
    const double s = data_.weight(exclude);
    M[0] -= s;
    My[0] -= s * (data_.y[exclude] - data_.y_mid);
  }
  // Each sum within weight_error() W of the true one: answer only where that is below the
  // tolerance of the row's weight, and the left-out key did not carry most of it.
  if (!(fgt_->weight_error() * fgt_->total_weight() <= tolerance_ * M[0]) || !(M[0] >= 0.5 * total)) return false;
  out.gaussian(M, My, degree_, gradient);
  return true;
}

std::unique_ptr<double[]> BufferPool::take(std::size_t n) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->first >= n) {
        std::unique_ptr<double[]> b = std::move(it->second);
        free_.erase(it);
        return b;
      }
  }
  return std::make_unique_for_overwrite<double[]>(n);
}

void BufferPool::give(std::unique_ptr<double[]> buffer, std::size_t n) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (free_.size() < 4) free_.emplace_back(n, std::move(buffer));
}

namespace {

// P[m] += f sum_l C(m, l) d^(m - l) u_l for m < O0, and Py likewise from u[O0..O0 + O1): sizes
// fixed per degree so that the loops unroll (a Laplace pass makes 4 of these a key).
template <std::size_t O0, std::size_t O1>
void shift_sums(const double* u, double d, double f, double* P, double* Py) {
  double dp[O0];
  dp[0] = 1;
  for (std::size_t m = 1; m < O0; ++m) dp[m] = dp[m - 1] * d;
  kernel::binomial_shift(u, dp, O0, f, P);
  kernel::binomial_shift(u + O0, dp, O1, f, Py);
}

}  // namespace

LaplaceLine::~LaplaceLine() {
  if (!buffers_) return;
  const std::size_t size = keys_.n * (o0_ + o1_);
  buffers_->give(std::move(left_), size);
  buffers_->give(std::move(right_), size);
}

LaplaceLine::LaplaceLine(const KeySet& keys, double h, std::size_t degree, const LineData& data, BufferPool* buffers,
                         bool gradient, ThreadPool* pool)
    : keys_(keys), data_(data), degree_(degree), gradient_(gradient), o0_(2 * degree + 1 + gradient),
      o1_(degree + 1 + gradient), inv_h_(1 / h), buffers_(buffers) {
  static_assert(max_degree == 3, "a shift_sums per degree");
  static constexpr void (*table[])(const double*, double, double, double*, double*) = {
      &shift_sums<1, 1>, &shift_sums<2, 2>, &shift_sums<3, 2>, &shift_sums<4, 3>,
      &shift_sums<5, 3>, &shift_sums<6, 4>, &shift_sums<7, 4>, &shift_sums<8, 5>};
  shift_ = table[2 * degree + gradient];
  const std::size_t n = keys.n, stride = o0_ + o1_;
  // Not zeroed (1e6 keys, a pass each): step writes every entry.
  left_ = buffers ? buffers->take(n * stride) : std::make_unique_for_overwrite<double[]>(n * stride);
  right_ = buffers ? buffers->take(n * stride) : std::make_unique_for_overwrite<double[]>(n * stride);
  // The gaps between neighbouring keys, d_j = (x_j - x_(j-1)) / h, and exp(-d_j): both sides'.
  std::unique_ptr<double[]> gap = buffers ? buffers->take(2 * n) : std::make_unique_for_overwrite<double[]>(2 * n);
  double* e = gap.get() + n;
  for (std::size_t j = 1; j < n; ++j) {
    gap[j] = (keys.xs[j] - keys.xs[j - 1]) * inv_h_;
    e[j] = std::exp(-gap[j]);
  }
  // From key `from` to key `to` across gap j: the carried sums shifted, plus the key's own.
  auto step = [&](double* v, std::size_t to, std::size_t from, std::size_t j) {
    double* t = &v[to * stride];
    const double s = data.weight(to);
    std::fill(t, t + stride, 0.0);
    t[0] = s;
    t[o0_] = s * (data.y[to] - data.y_mid);
    if (from != no_key && e[j] > 0) shift_(&v[from * stride], gap[j], e[j], t, t + o0_);  // (no 0 * inf)
  };
  parallel_for(pool, 2, 1, [&](std::size_t a, std::size_t z) {
    for (std::size_t side = a; side < z; ++side)
      if (side == 0)
        for (std::size_t j = 0; j < n; ++j) step(left_.get(), j, j == 0 ? no_key : j - 1, j);
      else
        for (std::size_t j = n; j-- > 0;) step(right_.get(), j, j + 1 == n ? no_key : j + 1, j + 1);
  });
  if (buffers) buffers->give(std::move(gap), 2 * n);
}

void LaplaceLine::shift(const double* u, double d, double dmin, double* P, double* Py) const {
  const double f = std::exp(-(d - dmin));
  if (f == 0) return;  // (and d may be inf: no 0 * inf)
  shift_(u, d, f, P, Py);
}

bool LaplaceLine::sums(double q, double, std::size_t exclude, bool gradient, LineMoments& out) const {
  if (gradient && !gradient_) return false;  // built without the gradient's moments
  const std::size_t n = keys_.n;
  // The nearest key on each side: l (x <= q) and r (x > q), or around the left-out key.
  std::size_t l, r;
  if (exclude != no_key) {
    l = exclude == 0 ? no_key : exclude - 1;
    r = exclude + 1 < n ? exclude + 1 : no_key;
  } else {
    r = static_cast<std::size_t>(std::upper_bound(keys_.xs.begin(), keys_.xs.begin() + static_cast<std::ptrdiff_t>(n), q) -
                                 keys_.xs.begin());
    l = r == 0 ? no_key : r - 1;
    if (r == n) r = no_key;
  }
  const double dl = l == no_key ? 0 : (q - keys_.xs[l]) * inv_h_, dr = r == no_key ? 0 : (keys_.xs[r] - q) * inv_h_;
  if (l == no_key && r == no_key) return false;
  const double dmin = l == no_key ? dr : r == no_key ? dl : std::min(dl, dr);
  // Far from every key (in bandwidths) the unit exp(dmin) could overflow what is added at
  // distance 0 (a merged key's rest): summed key by key there.
  if (!(dmin <= 300)) return false;
  double L[2 * max_degree + 2] = {}, Ly[max_degree + 2] = {}, R[2 * max_degree + 2] = {}, Ry[max_degree + 2] = {};
  const std::size_t stride = o0_ + o1_;
  if (l != no_key) shift(&left_[l * stride], dl, dmin, L, Ly);
  if (r != no_key) shift(&right_[r * stride], dr, dmin, R, Ry);
  // Left of q z = -D: its odd powers change sign; |z| = -z there and z on the right.
  const std::size_t P = degree_;
  for (std::size_t m = 0; m <= 2 * P; ++m) {
    const double sg = m % 2 ? -1.0 : 1.0;
    out.M[m] = sg * L[m] + R[m];
    if (gradient) out.G[m] = sg * L[m + 1] + R[m + 1];
  }
  for (std::size_t m = 0; m <= P; ++m) {
    const double sg = m % 2 ? -1.0 : 1.0;
    out.My[m] = sg * Ly[m] + Ry[m];
    if (gradient) out.Gy[m] = sg * Ly[m + 1] + Ry[m + 1];
  }
  out.unit = std::exp(dmin);
  for (std::size_t m = 0; m <= 2 * P; ++m)
    if (!std::isfinite(out.M[m]) || !std::isfinite(out.G[m])) return false;
  for (std::size_t m = 0; m <= P; ++m)
    if (!std::isfinite(out.My[m]) || !std::isfinite(out.Gy[m])) return false;
  return out.M[0] > 0;
}

bool ScaledLine::sums(double q, double inv_h, std::size_t exclude, bool gradient, LineMoments& out) const {
  if (!inner_->sums(q, inv_h * r_, exclude, gradient, out)) return false;
  double f = 1;
  for (std::size_t m = 0; m < LineMoments::cap; ++m, f /= r_) {
    out.M[m] *= f;
    out.My[m] *= f;
    out.G[m] *= f;
    out.Gy[m] *= f;
  }
  return true;
}

}  // namespace nwreg
