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
    std::frexp(ymax, &e);  // ymax < 2^e
    y_scale_ = std::ldexp(1.0, e);
  }
  ys_.resize(data_.n);
  for (std::size_t i = 0; i < data_.n; ++i) ys_[i] = data_.y[i] / y_scale_;
}

double Attention::row(const double* q, std::size_t exclude, double* e, bool* extreme) const {
  const std::size_t n = data_.n, d = data_.d;
  const double* x = data_.x.data();
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    double r = 0;
    for (std::size_t k = 0; k < d; ++k) {
      const double u = (q[k] - x[i * d + k]) * inv_h_[k];
      r += u * u;
    }
    e[i] = -0.5 * r;
  }
  if (exclude < n) e[exclude] = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, e[i]);
  const bool far = !(m > -std::numeric_limits<double>::infinity());
  if (extreme) *extreme = far;
  if (far) return row_long_double(q, exclude, e);
  double s0 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    e[i] = std::exp(e[i] - m);
    s0 += e[i];
  }
  return s0;
}

double Attention::row_long_double(const double* q, std::size_t exclude, double* e) const {
  const std::size_t n = data_.n, d = data_.d;
  std::vector<long double> s(n);
  long double m = -std::numeric_limits<long double>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    long double r = 0;
    for (std::size_t k = 0; k < d; ++k) {
      const long double u = (static_cast<long double>(q[k]) - data_.x[i * d + k]) / h_[k];
      r += u * u;
    }
    s[i] = -0.5L * r;
    if (i != exclude) m = std::max(m, s[i]);
  }
  double s0 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    e[i] = i == exclude ? 0.0 : static_cast<double>(std::exp(s[i] - m));
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
    bool extreme = false;
    const double s0 = row(q, j, e.data(), &extreme);
    double s1 = 0;
    for (std::size_t i = 0; i < n; ++i) s1 += e[i] * ys_[i];
    const double f = s1 / s0;
    const double resid = ys_[j] - f;
    sse += resid * resid;
    // A row whose nearest keys are 1e154 bandwidths away puts all weight on equidistant keys,
    // whose weights do not move with h: its gradient term is 0.
    if (!with_gradient || extreme) continue;
    // df/dlog h_k = sum_i a_i (y_i - f) r_ik, r_ik = ((q_k - x_ik)/h_k)^2. Keys with e = 0 are
    // skipped: their r may be infinite.
    std::fill(t.begin(), t.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      if (e[i] == 0) continue;
      const double w = e[i] * (ys_[i] - f);
      for (std::size_t k = 0; k < d; ++k) {
        const double v = (q[k] - x[i * d + k]) * inv_h_[k];
        t[k] += w * v * v;
      }
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
