#include "nwreg/engine/moment_line.h"

#include <algorithm>
#include <cmath>

namespace nwreg {

bool MomentLine::applies(const KeySet& keys, Kernel kernel) {
  return keys.d == 1 && !keys.categorical && is_compact(kernel);
}

MomentLine::MomentLine(const KeySet& keys, Kernel kernel, std::size_t degree, const LineData& data, bool squared,
                       double edge)
    : keys_(keys), data_(data), kernel_(kernel), edge_(edge), degree_(degree) {
  visit_kernel(kernel, [&]<class K>(K) {
    if constexpr (K::compact) poly_.assign(std::begin(K::poly), std::end(K::poly));
  });
  if (squared) {  // (sum c a^e)^2, like powers merged
    std::vector<std::pair<double, int>> sq;
    for (const auto& t1 : poly_)
      for (const auto& t2 : poly_) {
        const int e = t1.second + t2.second;
        auto it = std::find_if(sq.begin(), sq.end(), [e](const auto& t) { return t.second == e; });
        if (it == sq.end()) sq.emplace_back(t1.first * t2.first, e);
        else it->first += t1.first * t2.first;
      }
    poly_ = sq;
  }
  int top = 0;
  for (const auto& [c, e] : poly_) top = std::max(top, e);
  J_ = 2 * degree + static_cast<std::size_t>(top) + 1;
  Jy_ = degree + static_cast<std::size_t>(top) + 1;
  binom_.assign(J_ * J_, 0.0);
  for (std::size_t j = 0; j < J_; ++j) {
    binom_[j * J_] = 1;
    for (std::size_t l = 1; l <= j; ++l) binom_[j * J_ + l] = binom_[(j - 1) * J_ + l - 1] + (l < j ? binom_[(j - 1) * J_ + l] : 0.0);
  }
  const std::size_t n = keys.n;
  blocks_ = (n + block - 1) / block;
  size_ = 1;
  while (size_ < blocks_) size_ *= 2;
  centre_.assign(2 * size_, 0.0);
  radius_.assign(2 * size_, 1.0);
  A_.assign(2 * size_ * J_, 0.0);
  Ay_.assign(2 * size_ * Jy_, 0.0);
  // Each node's power sums from its keys about its own centre: exact to rounding at every level.
  for (std::size_t node = 1; node < 2 * size_; ++node) {
    // The node's blocks: its leftmost leaf and how many leaves lie under it.
    std::size_t first = node, span = 1;
    while (first < size_) first *= 2, span *= 2;
    const std::size_t b0 = first - size_, b1 = std::min(b0 + span, blocks_);
    if (b0 >= blocks_) continue;
    const std::size_t lo = b0 * block, hi = std::min(b1 * block, n);
    const double x0 = keys.xs[lo], x1 = keys.xs[hi - 1];
    const double c = x0 + (x1 - x0) / 2, r = (x1 - x0) / 2;
    centre_[node] = c;
    radius_[node] = r > 0 && std::isfinite(1 / r) ? r : 1.0;
    const double inv_r = 1 / radius_[node];
    double* A = &A_[node * J_];
    double* Ay = &Ay_[node * Jy_];
    for (std::size_t i = lo; i < hi; ++i) {
      const double u = (keys.xs[i] - c) * inv_r, s = data.weight(i), yv = data.y[i] - data.y_mid;
      double pw = s;
      for (std::size_t j = 0; j < J_; ++j, pw *= u) {
        A[j] += pw;
        if (j < Jy_) Ay[j] += pw * yv;
      }
    }
  }
}

std::pair<std::size_t, std::size_t> MomentLine::support(double q, double inv_h, std::size_t lo, std::size_t hi) const {
  const auto begin = keys_.xs.begin();
  return visit_kernel(kernel_, [&]<class K>(K) {
    // K(u) > 0 exactly where the key-by-key path gives it weight; u rises with x.
    auto in = [&](double x) {
      if constexpr (K::compact) return K::value((x - q) * inv_h) > 0 && std::abs(x - q) * inv_h <= edge_;
      else return true;
    };
    const auto first = std::partition_point(begin + static_cast<std::ptrdiff_t>(lo), begin + static_cast<std::ptrdiff_t>(hi),
                                            [&](double x) { return x < q && !in(x); });
    const auto last = std::partition_point(first, begin + static_cast<std::ptrdiff_t>(hi),
                                           [&](double x) { return x <= q || in(x); });
    return std::pair<std::size_t, std::size_t>(static_cast<std::size_t>(first - begin), static_cast<std::size_t>(last - begin));
  });
}

void MomentLine::node_sums(std::size_t node, double q, double inv_h, double* P, double* Py) const {
  const double t = (centre_[node] - q) * inv_h, rho = radius_[node] * inv_h;
  const double* A = &A_[node * J_];
  const double* Ay = &Ay_[node * Jy_];
  double tp[32], rp[32];  // powers of t and rho
  tp[0] = rp[0] = 1;
  for (std::size_t j = 1; j < J_; ++j) tp[j] = tp[j - 1] * t, rp[j] = rp[j - 1] * rho;
  for (std::size_t j = 0; j < J_; ++j) {
    double a = 0, ay = 0;
    for (std::size_t l = 0; l <= j; ++l) {
      const double f = binom_[j * J_ + l] * tp[j - l] * rp[l];
      a += f * A[l];
      if (j < Jy_) ay += f * Ay[l];
    }
    P[j] += a;
    if (j < Jy_) Py[j] += ay;
  }
}

void MomentLine::key_sums(std::size_t lo, std::size_t hi, double q, double inv_h, double* P, double* Py) const {
  for (std::size_t i = lo; i < hi; ++i) {
    const double z = (keys_.xs[i] - q) * inv_h, yv = data_.y[i] - data_.y_mid;
    double pw = data_.weight(i);
    for (std::size_t j = 0; j < J_; ++j, pw *= z) {
      P[j] += pw;
      if (j < Jy_) Py[j] += pw * yv;
    }
  }
}

bool MomentLine::sums(double q, double inv_h, std::size_t exclude, bool gradient, LineMoments& out) const {
  const auto [lo, hi] = support(q, inv_h, 0, keys_.n);
  const double mass = sums(q, inv_h, lo, hi, exclude, out.M, out.My, gradient ? out.G : nullptr, gradient ? out.Gy : nullptr);
  out.unit = 1;  // K(0) = 1
  return out.M[0] > min_share * mass;
}

double MomentLine::sums(double q, double inv_h, std::size_t lo, std::size_t hi, std::size_t exclude, double* M,
                        double* My, double* G, double* Gy) const {
  double mass = 0;
  std::fill(M, M + 2 * degree_ + 1, 0.0);
  std::fill(My, My + degree_ + 1, 0.0);
  if (G) {
    std::fill(G, G + 2 * degree_ + 1, 0.0);
    std::fill(Gy, Gy + degree_ + 1, 0.0);
  }
  const std::size_t mid = static_cast<std::size_t>(
      std::lower_bound(keys_.xs.begin() + static_cast<std::ptrdiff_t>(lo), keys_.xs.begin() + static_cast<std::ptrdiff_t>(hi), q) -
      keys_.xs.begin());
  // Each side: its power sums, then the kernel's terms with |z|^e = (sign z)^e z^e.
  for (int side = 0; side < 2; ++side) {
    const std::size_t a = side == 0 ? lo : mid, z = side == 0 ? mid : hi;
    if (a >= z) continue;
    double P[32] = {}, Py[32] = {};
    const std::size_t ba = (a + block - 1) / block, bz = z / block;  // whole blocks [ba, bz)
    if (ba >= bz) {
      key_sums(a, z, q, inv_h, P, Py);
    } else {
      key_sums(a, ba * block, q, inv_h, P, Py);
      key_sums(bz * block, z, q, inv_h, P, Py);
      for (std::size_t l = ba + size_, r = bz + size_; l < r; l >>= 1, r >>= 1) {
        if (l & 1) node_sums(l++, q, inv_h, P, Py);
        if (r & 1) node_sums(--r, q, inv_h, P, Py);
      }
    }
    if (exclude >= a && exclude < z) {  // less the left-out key's own terms
      double Q[32] = {}, Qy[32] = {};
      key_sums(exclude, exclude + 1, q, inv_h, Q, Qy);
      for (std::size_t j = 0; j < J_; ++j) P[j] -= Q[j];
      for (std::size_t j = 0; j < Jy_; ++j) Py[j] -= Qy[j];
    }
    mass += P[0];
    const double sign = side == 0 ? -1.0 : 1.0;
    for (const auto& [c, e] : poly_) {
      const double f = c * (e % 2 ? sign : 1.0);
      for (std::size_t m = 0; m <= 2 * degree_; ++m) M[m] += f * P[m + static_cast<std::size_t>(e)];
      for (std::size_t m = 0; m <= degree_; ++m) My[m] += f * Py[m + static_cast<std::size_t>(e)];
      if (!G || e == 0) continue;
      const double g = -e * f;  // d(c |z|^e) / dlog h = -e c |z|^e
      for (std::size_t m = 0; m <= 2 * degree_; ++m) G[m] += g * P[m + static_cast<std::size_t>(e)];
      for (std::size_t m = 0; m <= degree_; ++m) Gy[m] += g * Py[m + static_cast<std::size_t>(e)];
    }
  }
  return mass;
}

}  // namespace nwreg
