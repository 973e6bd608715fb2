#include "nwreg/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nwreg/errors.h"
#include "nwreg/numbers.h"

namespace nwreg {

std::string to_string(Kernel kernel) {
  switch (kernel) {
    case Kernel::gaussian:
      return "gaussian";
  }
  return "gaussian";
}

Kernel parse_kernel(const std::string& name) {
  if (name == "gaussian") return Kernel::gaussian;
  throw UsageError("--kernel: unknown kernel \"" + name + "\" (known: gaussian)");
}

namespace {

// (x_i - x_b)(x_i + x_b - 2q) / h^2 = ((q - x_i)/h)^2 - ((q - x_b)/h)^2, computed without
// cancellation: x_i - x_b is exact for nearby keys, and (x_i - q) + (x_b - q) is only needed
// to relative accuracy. A factor of 0 (equal keys, or q midway) gives 0 even if the other
// factor overflowed.
inline double gap_term(double xi, double xb, double q, double inv_h) {
  const double a = (xi - xb) * inv_h;
  const double c = ((xi - q) + (xb - q)) * inv_h;
  return (a == 0 || c == 0) ? 0.0 : a * c;
}

}  // namespace

void check_bandwidth(const std::vector<double>& h, std::size_t d, const std::string& option) {
  if (h.size() != d)
    throw UsageError(option + ": needs " + std::to_string(d) + " value" + (d == 1 ? "" : "s") +
                     " (one per x column), got " + std::to_string(h.size()));
  for (double v : h) {
    if (!(v > 0)) throw UsageError(option + ": must be > 0, got " + format_double(v));
    if (!std::isfinite(v) || !std::isfinite(1 / v))
      throw UsageError(option + ": " + format_double(v) + " is outside the usable range (" +
                       format_double(1 / std::numeric_limits<double>::max()) + " to " +
                       format_double(std::numeric_limits<double>::max()) + ")");
  }
}

Attention::Attention(const Dataset& train, std::vector<double> bandwidth, Kernel kernel)
    : data_(train), h_(std::move(bandwidth)), kernel_(kernel) {
  check_bandwidth(h_, data_.d, "--bandwidth");
  for (double v : h_) inv_h_.push_back(1 / v);
  double ymax = 0;
  for (double v : data_.y) ymax = std::max(ymax, std::abs(v));
  if (ymax > 0) {
    int e;
    std::frexp(ymax, &e);  // 2^(e-1) <= ymax < 2^e, and 2^e may overflow
    y_scale_ = std::ldexp(1.0, e - 1);
  }
  ys_.resize(data_.n);
  for (std::size_t i = 0; i < data_.n; ++i) ys_[i] = data_.y[i] / y_scale_;
}

std::size_t Attention::nearest(const double* q, std::size_t exclude) const {
  const std::size_t n = data_.n, d = data_.d;
  const double* x = data_.x.data();
  std::size_t best = exclude == 0 ? 1 : 0;
  for (std::size_t i = best + 1; i < n; ++i) {
    if (i == exclude) continue;
    // |q - x_i|^2 < |q - x_b|^2  <=>  sum_k (x_ik - x_bk)(x_ik + x_bk - 2 q_k) / h_k^2 < 0:
    // the sign survives where q - x rounds the difference between keys away.
    double delta = 0;
    for (std::size_t k = 0; k < d; ++k)
      delta += gap_term(x[i * d + k], x[best * d + k], q[k], inv_h_[k]);
    if (delta < 0) best = i;
  }
  return best;
}

double Attention::row(const double* q, std::size_t exclude, double* e, std::size_t* ref) const {
  const std::size_t n = data_.n, d = data_.d;
  const double* x = data_.x.data();
  const std::size_t b = nearest(q, exclude);
  if (ref) *ref = b;
  double s0 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i == exclude) {  // the left-out key may be nearer than b: its e would overflow
      e[i] = 0;
      continue;
    }
    double delta = 0;  // r_i - r_b >= 0: the score below the row maximum, times -2
    for (std::size_t k = 0; k < d; ++k) delta += gap_term(x[i * d + k], x[b * d + k], q[k], inv_h_[k]);
    e[i] = std::exp(-0.5 * delta);
    s0 += e[i];
  }
  return s0;
}

void Attention::predict(const double* queries, std::size_t m, double* out) const {
  std::vector<double> e(data_.n);
  for (std::size_t j = 0; j < m; ++j) {
    const double s0 = row(queries + j * data_.d, data_.n, e.data());
    double s1 = 0;
    for (std::size_t i = 0; i < data_.n; ++i) s1 += e[i] * ys_[i];
    out[j] = s1 / s0 * y_scale_;
  }
}

void Attention::weights(const double* queries, std::size_t m,
                        const std::function<void(std::size_t, const double*)>& emit) const {
  std::vector<double> e(data_.n);
  for (std::size_t j = 0; j < m; ++j) {
    const double s0 = row(queries + j * data_.d, data_.n, e.data());
    for (double& v : e) v /= s0;
    emit(j, e.data());
  }
}

LooResult Attention::loo(bool with_gradient) const {
  const std::size_t n = data_.n, d = data_.d;
  if (n < 2) throw DataError("leave-one-out needs at least 2 training rows, got " + std::to_string(n));
  const double* x = data_.x.data();
  std::vector<double> e(n), t(d);
  std::vector<double> grad(with_gradient ? d : 0, 0.0);
  double sse = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double* q = x + j * d;
    std::size_t b = 0;
    const double s0 = row(q, j, e.data(), &b);
    double s1 = 0;
    for (std::size_t i = 0; i < n; ++i) s1 += e[i] * ys_[i];
    const double f = s1 / s0;
    const double resid = ys_[j] - f;
    sse += resid * resid;
    if (!with_gradient) continue;
    // df/dlog h_k = sum_i a_i (y_i - f) r_ik with r_ik = ((q_k - x_ik)/h_k)^2. As the weights
    // sum to 1, r_ik may be measured from the nearest key b: r_ik - r_bk stays finite and exact
    // where r_ik itself would overflow. Keys with e = 0 add nothing (and may be infinitely far).
    std::fill(t.begin(), t.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      if (e[i] == 0) continue;
      const double w = e[i] * (ys_[i] - f);
      for (std::size_t k = 0; k < d; ++k) t[k] += w * gap_term(x[i * d + k], x[b * d + k], q[k], inv_h_[k]);
    }
    for (std::size_t k = 0; k < d; ++k) grad[k] += -2 * resid * t[k] / s0;
  }
  LooResult out;
  const double unit = y_scale_ * y_scale_;
  out.mse = sse / static_cast<double>(n) * unit;
  for (double& g : grad) g = g / static_cast<double>(n) * unit;
  out.gradient = std::move(grad);
  return out;
}

}  // namespace nwreg
