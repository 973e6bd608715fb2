#include "nwreg/engine/hermite_line.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace nwreg {

namespace {

// The moments asked for go up to z^top, top <= 2 max_degree + 2 (the gradient's z^2 more).
constexpr std::size_t top_max = 2 * max_degree + 2;

struct Tables {
  // C(a, l), a, l < terms: the binomial shifts of the tree's power sums.
  std::array<std::array<double, HermiteLine::terms>, HermiteLine::terms> binom{};
  // z^m = sum_k c[m][k] He_k(z) (probabilists' Hermite polynomials), m, k <= top_max.
  std::array<std::array<double, top_max + 1>, top_max + 1> c{};
  // sum_k |c[m][k]|: what the series' truncation is multiplied by in z^m's sum.
  std::array<double, top_max + 1> csum{};
  // sum_(a >= terms) (1/2)^a sqrt((a + k)!) / a!: a node's series left out, per unit of its
  // weight and of 1.0865 exp(-t^2 / 4), for phi^(k + a) (rho <= 1/2).
  std::array<double, top_max + 1> tail{};
  Tables() {
    for (std::size_t a = 0; a < HermiteLine::terms; ++a) {
      binom[a][0] = 1;
      for (std::size_t l = 1; l <= a; ++l) binom[a][l] = binom[a - 1][l - 1] + (l < a ? binom[a - 1][l] : 0.0);
    }
    for (std::size_t m = 0; m <= top_max; ++m) {
      for (std::size_t j = 0; 2 * j <= m; ++j)
        c[m][m - 2 * j] = std::exp(std::lgamma(m + 1.0) - j * std::log(2.0) - std::lgamma(j + 1.0) -
                                   std::lgamma(static_cast<double>(m - 2 * j) + 1));
      for (std::size_t k = 0; k <= m; ++k) csum[m] += std::abs(c[m][k]);
    }
    for (std::size_t k = 0; k <= top_max; ++k)
      for (std::size_t a = HermiteLine::terms; a < HermiteLine::terms + 200; ++a)
        tail[k] += std::exp(static_cast<double>(a) * std::log(0.5) + 0.5 * std::lgamma(static_cast<double>(a + k) + 1) -
                            std::lgamma(static_cast<double>(a) + 1));
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

HermiteLine::HermiteLine(const KeySet& keys, std::size_t degree, const LineData& data, double tolerance)
    : keys_(keys), data_(data), degree_(degree), tolerance_(tolerance) {
  const Tables& tb = tables();
  const std::size_t n = keys.n;
  blocks_ = (n + block - 1) / block;
  size_ = 1;
  while (size_ < blocks_) size_ *= 2;
  centre_.assign(2 * size_, 0.0);
  radius_.assign(2 * size_, 0.0);
  weight_.assign(2 * size_, 0.0);
  A_.assign(2 * size_ * terms, 0.0);
  Ay_.assign(2 * size_ * terms, 0.0);
  std::vector<std::size_t> first(2 * size_, n), last(2 * size_, n);  // each node's first and last key
  for (std::size_t b = 0; b < blocks_; ++b) {
    const std::size_t j = size_ + b, lo = b * block, hi = std::min(lo + block, n);
    first[j] = lo;
    last[j] = hi - 1;
  }
  for (std::size_t j = size_ - 1; j >= 1; --j) {
    first[j] = first[2 * j];
    last[j] = last[2 * j + 1] != n ? last[2 * j + 1] : last[2 * j];
  }
  auto place = [&](std::size_t j) {  // centre and half-width; 1 / r (0 where every key is at c)
    const double x0 = keys.xs[first[j]], x1 = keys.xs[last[j]];
    centre_[j] = x0 + (x1 - x0) / 2;
    radius_[j] = (x1 - x0) / 2;
    return radius_[j] > 0 && std::isfinite(1 / radius_[j]) ? 1 / radius_[j] : 0.0;
  };
  // Leaves from their keys; each parent from its children by u = delta + lambda u',
  // |delta| + lambda <= 1: sum_l C(a, l) delta^(a - l) lambda^l A'_l, bounded by the child's weight.
  for (std::size_t b = 0; b < blocks_; ++b) {
    const std::size_t j = size_ + b;
    const double inv_r = place(j);
    double* A = &A_[j * terms];
    double* Ay = &Ay_[j * terms];
    for (std::size_t i = first[j]; i <= last[j]; ++i) {
      const double u = (keys.xs[i] - centre_[j]) * inv_r, s = data.weight(i), yv = data.y[i] - data.y_mid;
      weight_[j] += s;
      double pw = s;
      for (std::size_t a = 0; a < terms; ++a, pw *= u) {
        A[a] += pw;
        Ay[a] += pw * yv;
      }
    }
  }
  double dp[terms], lp[terms];
  for (std::size_t j = size_ - 1; j >= 1; --j) {
    if (first[j] == n) continue;
    const double inv_r = place(j);
    for (std::size_t child : {2 * j, 2 * j + 1}) {
      if (first[child] == n) continue;
      weight_[j] += weight_[child];
      const double delta = (centre_[child] - centre_[j]) * inv_r, lambda = radius_[child] * inv_r;
      dp[0] = lp[0] = 1;
      for (std::size_t a = 1; a < terms; ++a) dp[a] = dp[a - 1] * delta, lp[a] = lp[a - 1] * lambda;
      const double* Ac = &A_[child * terms];
      const double* Ayc = &Ay_[child * terms];
      for (std::size_t a = 0; a < terms; ++a) {
        double v = 0, vy = 0;
        for (std::size_t l = 0; l <= a; ++l) {
          const double f = tb.binom[a][l] * dp[a - l] * lp[l];
          v += f * Ac[l];
          vy += f * Ayc[l];
        }
        A_[j * terms + a] += v;
        Ay_[j * terms + a] += vy;
      }
    }
  }
}

void HermiteLine::keys_into(std::size_t lo, std::size_t hi, double q, double inv_h, std::size_t exclude,
                            std::size_t top, double* Z, double* Zy) const {
  for (std::size_t i = lo; i < hi; ++i) {
    if (i == exclude) continue;
    const double z = (keys_.xs[i] - q) * inv_h, yv = data_.y[i] - data_.y_mid;
    double pw = data_.weight(i) * std::exp(-0.5 * z * z);
    for (std::size_t m = 0; m <= top; ++m, pw *= z) {
      Z[m] += pw;
      Zy[m] += pw * yv;
    }
  }
}

void HermiteLine::node_into(std::size_t j, double q, double inv_h, std::size_t top, double* T, double* Ty,
                            double* err) const {
  const double t = (centre_[j] - q) * inv_h, rho = radius_[j] * inv_h, phi = std::exp(-0.5 * t * t);
  // D_i = phi^(i)(t) = (-1)^i He_i(t) phi(t), i < terms + top.
  double D[terms + top_max];
  double he0 = 1, he1 = t;
  D[0] = phi;
  for (std::size_t i = 1; i < terms + top; ++i) {
    D[i] = (i % 2 ? -he1 : he1) * phi;
    const double next = t * he1 - static_cast<double>(i) * he0;
    he0 = he1;
    he1 = next;
  }
  const double* A = &A_[j * terms];
  const double* Ay = &Ay_[j * terms];
  double f[terms], fy[terms], g = 1;  // rho^a / a! A_a
  for (std::size_t a = 0; a < terms; ++a, g *= rho / static_cast<double>(a)) {
    f[a] = g * A[a];
    fy[a] = g * Ay[a];
  }
  for (std::size_t k = 0; k <= top; ++k) {
    double v = 0, vy = 0;
    for (std::size_t a = 0; a < terms; ++a) {
      v += f[a] * D[k + a];
      vy += fy[a] * D[k + a];
    }
    T[k] += v;
    Ty[k] += vy;
  }
  *err += weight_[j] * 1.0865 * std::exp(-0.25 * t * t) * tables().tail[top] * tables().csum[top];
}

bool HermiteLine::sums(double q, double inv_h, std::size_t exclude, bool gradient, LineMoments& out) const {
  const std::size_t n = keys_.n, P = degree_, top = 2 * P + (gradient ? 2 : 0);
  if (!(tolerance_ > 0) || !(inv_h > 0) || !std::isfinite(inv_h) || n < 2) return false;
  const std::span<const double> xs = keys_.xs;
  // S0 is at least the weight of the key nearest q (other than `exclude`); the keys beyond
  // D bandwidths, D^2 / 2 = ln(W / (tolerance / 2 * that)), weigh less than half the tolerance
  // of it in all (W the keys' total weight).
  const auto p = static_cast<std::size_t>(std::lower_bound(xs.begin(), xs.end(), q) - xs.begin());
  double near = 0;
  for (std::size_t i : {p == 0 ? no_key : p - 1, p, p + 1, p >= 2 ? p - 2 : no_key})
    if (i < n && i != exclude) {
      const double z = (xs[i] - q) * inv_h;
      near = std::max(near, data_.weight(i) * std::exp(-0.5 * z * z));
    }
  if (!(near > 0)) return false;
  const double W = weight_[1], D = std::sqrt(2 * std::max(0.0, std::log(W / (0.5 * tolerance_ * near)))) / inv_h;
  const auto lo = static_cast<std::size_t>(std::lower_bound(xs.begin(), xs.end(), q - D) - xs.begin());
  const auto hi = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), q + D) - xs.begin());
  double Z[top_max + 1] = {}, Zy[top_max + 1] = {}, T[top_max + 1] = {}, Ty[top_max + 1] = {}, err = 0;
  bool excluded = exclude == no_key || exclude < lo || exclude >= hi;  // left out already
  auto by_keys = [&](std::size_t a, std::size_t z) {
    if (a >= z) return;
    keys_into(a, z, q, inv_h, exclude, top, Z, Zy);
    if (exclude >= a && exclude < z) excluded = true;
  };
  // Whole blocks in [lo, hi) through the tree (nodes no wider than h by their series, wider
  // leaves key by key), the partial blocks at its ends key by key.
  const std::size_t b0 = (lo + block - 1) / block, b1 = hi / block;
  if (b0 >= b1) {
    by_keys(lo, hi);
  } else {
    by_keys(lo, b0 * block);
    by_keys(b1 * block, hi);
    std::vector<std::size_t> stack;
    for (std::size_t l = size_ + b0, r = size_ + b1; l < r; l /= 2, r /= 2) {  // the canonical nodes
      if (l & 1) stack.push_back(l++);
      if (r & 1) stack.push_back(--r);
    }
    while (!stack.empty()) {
      const std::size_t j = stack.back();
      stack.pop_back();
      if (radius_[j] * inv_h <= 0.5) {
        node_into(j, q, inv_h, top, T, Ty, &err);
      } else if (j >= size_) {
        const std::size_t a = (j - size_) * block;
        by_keys(a, std::min(a + block, n));
      } else {
        stack.push_back(2 * j);
        stack.push_back(2 * j + 1);
      }
    }
  }
  const Tables& tb = tables();
  double M[top_max + 1], My[top_max + 1];
  for (std::size_t m = 0; m <= top; ++m) {
    M[m] = Z[m];
    My[m] = Zy[m];
    for (std::size_t k = 0; k <= m; ++k) {
      const double c = (k % 2 ? -1.0 : 1.0) * tb.c[m][k];
      M[m] += c * T[k];
      My[m] += c * Ty[k];
    }
  }
  if (!excluded) {  // inside a node: its term taken back out
    const double z = (xs[exclude] - q) * inv_h, yv = data_.y[exclude] - data_.y_mid;
    const double e = data_.weight(exclude) * std::exp(-0.5 * z * z);
    if (!(e < 0.5 * M[0])) return false;  // most of the weight: the difference would cancel
    double pw = e;
    for (std::size_t m = 0; m <= top; ++m, pw *= z) {
      M[m] -= pw;
      My[m] -= pw * yv;
    }
  }
  if (!(M[0] > 0) || !(err <= 0.5 * tolerance_ * M[0])) return false;
  for (std::size_t m = 0; m <= top; ++m)
    if (!std::isfinite(M[m]) || !std::isfinite(My[m])) return false;
  out.gaussian(M, My, P, gradient);
  return true;
}

}  // namespace nwreg
