#include "nwreg/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "nwreg/errors.h"
#include "nwreg/kernel1d.h"
#include "nwreg/numbers.h"
#include "nwreg/thread_pool.h"

namespace nwreg {
namespace {

constexpr double log2e = 1.4426950408889634;
constexpr double ln2 = 0.6931471805599453;
constexpr std::size_t none = static_cast<std::size_t>(-1);
// Keys and queries within this magnitude cannot overflow the kernels' factored form.
constexpr double fast_limit = 4e307;

// (x_i - x_b)(x_i + x_b - 2q) / h^2 = ((q - x_i)/h)^2 - ((q - x_b)/h)^2, computed without
// cancellation: x_i - x_b is exact for nearby keys, and (x_i - q) + (x_b - q) is only needed
// to relative accuracy. A factor of 0 (equal keys, or q midway) gives 0 even if the other
// factor overflowed. The scalar path for any d, and for data beyond fast_limit.
inline double gap_term(double xi, double xb, double q, double inv_h) {
  const double a = (xi - xb) * inv_h;
  const double c = ((xi - q) + (xb - q)) * inv_h;
  return (a == 0 || c == 0) ? 0.0 : a * c;
}

void add(kernel::Sums& to, const kernel::Sums& s) {
  to.s0 += s.s0;
  to.s1 += s.s1;
  to.t += s.t;
  to.v += s.v;
}

}  // namespace

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

void check_tolerance(double tolerance) {
  if (!(tolerance >= 0 && tolerance < 1))
    throw UsageError("--tolerance: must be >= 0 and < 1, got " + format_double(tolerance));
}

// One attention row reduced, in units of y_scale_: the prediction, and for d = 1 its
// derivative in log h; for any d, the nearest key b and the sum of the unnormalised weights.
struct Attention::Row {
  double f = 0;
  double dfdtheta = 0;
  double s0 = 0;
  std::size_t b = 0;
};

Attention::Attention(const Dataset& train, EngineOptions options)
    : options_(options), n_(train.n), d_(train.d) {
  check_tolerance(options_.tolerance);
  if (n_ > std::numeric_limits<std::uint32_t>::max())
    throw DataError("more than " + std::to_string(std::numeric_limits<std::uint32_t>::max()) + " training rows");
  order_.resize(n_);
  std::iota(order_.begin(), order_.end(), std::uint32_t{0});
  if (d_ == 1)
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return train.x[a] < train.x[b]; });
  rank_.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) rank_[order_[i]] = static_cast<std::uint32_t>(i);
  xs_.resize(n_ * d_);
  for (std::size_t i = 0; i < n_; ++i)
    std::copy_n(train.row(order_[i]), d_, xs_.begin() + static_cast<std::ptrdiff_t>(i * d_));

  double ymax = 0;
  for (double v : train.y) ymax = std::max(ymax, std::abs(v));
  if (ymax > 0) {
    int e;
    std::frexp(ymax, &e);  // 2^(e-1) <= ymax < 2^e, and 2^e may overflow
    y_scale_ = std::ldexp(1.0, e - 1);
  }
  ys_.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) ys_[i] = train.y[order_[i]] / y_scale_;
  fast_keys_ = d_ == 1 && std::all_of(xs_.begin(), xs_.end(), [](double v) { return std::abs(v) <= fast_limit; });
}

Attention::Attention(const Dataset& train, std::vector<double> bandwidth, EngineOptions options)
    : Attention(train, options) {
  set_bandwidth(std::move(bandwidth));
}

void Attention::set_bandwidth(std::vector<double> bandwidth) {
  check_bandwidth(bandwidth, d_, "--bandwidth");
  h_ = std::move(bandwidth);
  inv_h_.clear();
  for (double v : h_) inv_h_.push_back(1 / v);
  if (d_ != 1) return;
  K2_ = -0.5 * log2e * inv_h_[0] * inv_h_[0];
}

bool Attention::fast_row(double q) const {
  return fast_keys_ && std::abs(q) <= fast_limit && std::isnormal(K2_);
}

std::size_t Attention::nearest_1d(double q, std::size_t exclude) const {
  const auto p = static_cast<std::size_t>(std::lower_bound(xs_.begin(), xs_.end(), q) - xs_.begin());
  std::size_t right = p == exclude ? p + 1 : p;
  std::size_t left = p == 0 ? none : (p - 1 == exclude ? (p >= 2 ? p - 2 : none) : p - 1);
  if (left == none) return right;
  if (right >= n_) return left;
  // x_l <= q <= x_r: both distances are differences of nearby numbers, exact or nearly, and
  // never underflow to a tie the way a product of them can (keys near 1e-200).
  return xs_[right] - q < q - xs_[left] ? right : left;
}

void Attention::window_1d(double q, double xb, std::size_t& lo, std::size_t& hi) const {
  if (options_.tolerance == 0) {
    lo = 0;
    hi = n_;
    return;
  }
  // The omitted weights E0 move the prediction by at most E0 (max y - min y) / S0, so keys may
  // be left out while E0 <= tolerance S0. Every key within h of q weighs at least e^-1/2, and
  // the nearest weighs 1: S0 >= max(1, count e^-1/2). Keys with weight below e^-T, T =
  // ln(n / (tolerance S0_low)), add up to less than that; each such normalised weight is below
  // tolerance / n.
  const double h = h_[0];
  const auto near_lo = std::lower_bound(xs_.begin(), xs_.end(), q - h);
  const auto near_hi = std::upper_bound(near_lo, xs_.end(), q + h);
  const double s0_low = std::max(1.0, static_cast<double>(near_hi - near_lo) * 0.6065306597126334);
  const double T = std::max(0.5, std::log(static_cast<double>(n_) / (options_.tolerance * s0_low)));
  // Keys with (x - q)^2 <= (x_b - q)^2 + 2 T h^2; the margin absorbs rounding at the edge.
  const double r = std::hypot(q - xb, std::sqrt(2 * T) * h) * (1 + 1e-12);
  lo = static_cast<std::size_t>(std::lower_bound(xs_.begin(), xs_.end(), q - r) - xs_.begin());
  hi = static_cast<std::size_t>(std::upper_bound(xs_.begin(), xs_.end(), q + r) - xs_.begin());
}

Attention::Row Attention::row_1d(double q, std::size_t exclude, bool gradient) const {
  const std::size_t b = nearest_1d(q, exclude);
  const double xb = xs_[b], yb = ys_[b];
  std::size_t lo, hi;
  window_1d(q, xb, lo, hi);
  pairs_.fetch_add(hi - lo, std::memory_order_relaxed);
  kernel::Sums s;
  if (fast_row(q)) {
    const double D = xb - q;
    auto range = [&](std::size_t a, std::size_t z) {
      if (a < z)
        add(s, gradient ? kernel::sums_grad(xs_.data(), ys_.data(), a, z, xb, q, D, K2_, yb)
                        : kernel::sums(xs_.data(), ys_.data(), a, z, xb, q, D, K2_, yb));
    };
    if (exclude >= lo && exclude < hi) {
      range(lo, exclude);
      range(exclude + 1, hi);
    } else {
      range(lo, hi);
    }
  } else {
    for (std::size_t i = lo; i < hi; ++i) {
      if (i == exclude) continue;
      const double u = std::max(-0.5 * log2e * gap_term(xs_[i], xb, q, inv_h_[0]), -1021.0);
      const double e = std::exp2(u), dy = ys_[i] - yb;
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
  return row;
}

Attention::Row Attention::row_any(const double* q, std::size_t exclude, double* e) const {
  const std::size_t n = n_, d = d_;
  const double* x = xs_.data();
  // The nearest key, by an exact comparison of squared distances (see gap_term).
  std::size_t b = exclude == 0 ? 1 : 0;
  for (std::size_t i = b + 1; i < n; ++i) {
    if (i == exclude) continue;
    double delta = 0;
    for (std::size_t k = 0; k < d; ++k) delta += gap_term(x[i * d + k], x[b * d + k], q[k], inv_h_[k]);
    if (delta < 0) b = i;
  }
  pairs_.fetch_add(n, std::memory_order_relaxed);
  double s0 = 0, s1 = 0;
  const double yb = ys_[b];
  for (std::size_t i = 0; i < n; ++i) {
    if (i == exclude) {  // the left-out key may be nearer than b: its e would overflow
      e[i] = 0;
      continue;
    }
    double delta = 0;  // r_i - r_b >= 0: the score below the row maximum, times -2
    for (std::size_t k = 0; k < d; ++k) delta += gap_term(x[i * d + k], x[b * d + k], q[k], inv_h_[k]);
    e[i] = std::exp(-0.5 * delta);
    s0 += e[i];
    s1 += e[i] * (ys_[i] - yb);
  }
  Row row;
  row.f = yb + s1 / s0;
  row.s0 = s0;
  row.b = b;
  return row;
}

void Attention::predict(const double* queries, std::size_t m, double* out) const {
  if (d_ == 1) {
    // Queries in sorted order: neighbouring queries share their windows in cache.
    std::vector<std::size_t> qo(m);
    std::iota(qo.begin(), qo.end(), std::size_t{0});
    std::stable_sort(qo.begin(), qo.end(), [&](std::size_t a, std::size_t b) { return queries[a] < queries[b]; });
    std::atomic<std::size_t> done{0};
    parallel_for(options_.pool, m, 64, [&](std::size_t a, std::size_t z) {
      for (std::size_t k = a; k < z; ++k) out[qo[k]] = row_1d(queries[qo[k]], none, false).f * y_scale_;
      if (options_.progress) options_.progress(done += z - a, m);
    });
    return;
  }
  std::atomic<std::size_t> done{0};
  parallel_for(options_.pool, m, 16, [&](std::size_t a, std::size_t z) {
    std::vector<double> e(n_);
    for (std::size_t j = a; j < z; ++j) out[j] = row_any(queries + j * d_, none, e.data()).f * y_scale_;
    if (options_.progress) options_.progress(done += z - a, m);
  });
}

void Attention::weights(const double* queries, std::size_t m,
                        const std::function<void(std::size_t, const double*)>& emit) const {
  // Rows are made in parallel a block at a time (about 32 MB) and handed out in order.
  const std::size_t block = std::clamp<std::size_t>((std::size_t{1} << 22) / std::max<std::size_t>(n_, 1), 1, 4096);
  std::vector<double> buf(std::min(block, m) * n_);
  for (std::size_t start = 0; start < m; start += block) {
    const std::size_t rows = std::min(block, m - start);
    parallel_for(options_.pool, rows, 1, [&](std::size_t a, std::size_t z) {
      std::vector<double> e(n_);
      for (std::size_t r = a; r < z; ++r) {
        double* w = buf.data() + r * n_;
        const double* q = queries + (start + r) * d_;
        std::fill(w, w + n_, 0.0);
        if (d_ != 1) {
          const double s0 = row_any(q, none, e.data()).s0;
          for (std::size_t i = 0; i < n_; ++i) w[order_[i]] = e[i] / s0;
          continue;
        }
        const std::size_t b = nearest_1d(q[0], none);
        const double xb = xs_[b];
        std::size_t lo, hi;
        window_1d(q[0], xb, lo, hi);
        pairs_.fetch_add(hi - lo, std::memory_order_relaxed);
        if (fast_row(q[0])) {
          kernel::weights(xs_.data(), lo, hi, xb, q[0], xb - q[0], K2_, e.data());
        } else {
          for (std::size_t i = lo; i < hi; ++i)
            e[i] = std::exp2(std::max(-0.5 * log2e * gap_term(xs_[i], xb, q[0], inv_h_[0]), -1021.0));
        }
        double s0 = 0;
        for (std::size_t i = lo; i < hi; ++i) s0 += e[i];
        for (std::size_t i = lo; i < hi; ++i) w[order_[i]] = e[i] / s0;
      }
    });
    for (std::size_t r = 0; r < rows; ++r) emit(start + r, buf.data() + r * n_);
    if (options_.progress) options_.progress(start + rows, m);
  }
}

std::vector<std::size_t> Attention::spread_rows(std::size_t count) const {
  std::vector<std::size_t> rows;
  if (count >= n_) {
    rows.resize(n_);
    std::iota(rows.begin(), rows.end(), std::size_t{0});
    return rows;
  }
  for (std::size_t k = 0; k < count; ++k) {
    // The middle of the k-th of `count` equal slices of the sorted keys.
    rows.push_back(order_[(2 * k + 1) * n_ / (2 * count)]);
  }
  return rows;
}

LooResult Attention::loo(bool with_gradient, const std::vector<std::size_t>* rows) const {
  if (n_ < 2) throw DataError("leave-one-out needs at least 2 training rows, got " + std::to_string(n_));
  std::vector<std::size_t> pos;
  if (rows) {
    for (std::size_t r : *rows) pos.push_back(rank_.at(r));
  } else {
    pos.resize(n_);
    std::iota(pos.begin(), pos.end(), std::size_t{0});
  }
  const std::size_t cnt = pos.size(), d = d_;
  std::vector<double> sq(cnt), grad(with_gradient ? cnt * d : 0);
  parallel_for(options_.pool, cnt, d == 1 ? 64 : 8, [&](std::size_t a, std::size_t z) {
    std::vector<double> e(d == 1 ? 0 : n_);
    for (std::size_t k = a; k < z; ++k) {
      const std::size_t p = pos[k];
      if (d == 1) {
        const Row row = row_1d(xs_[p], p, with_gradient);
        const double resid = ys_[p] - row.f;
        sq[k] = resid * resid;
        if (with_gradient) grad[k] = -2 * resid * row.dfdtheta;
        continue;
      }
      const double* q = xs_.data() + p * d;
      const Row row = row_any(q, p, e.data());
      const double resid = ys_[p] - row.f;
      sq[k] = resid * resid;
      if (!with_gradient) continue;
      // df/dlog h_k = sum_i a_i (y_i - f) (r_ik - r_bk), measured from the nearest key b (the
      // weights sum to 1). Keys with e = 0 add nothing (and may be infinitely far).
      const std::size_t b = row.b;
      for (std::size_t c = 0; c < d; ++c) {
        double t = 0;
        for (std::size_t i = 0; i < n_; ++i) {
          if (e[i] == 0) continue;
          t += e[i] * (ys_[i] - row.f) * gap_term(xs_[i * d + c], xs_[b * d + c], q[c], inv_h_[c]);
        }
        grad[k * d + c] = -2 * resid * t / row.s0;
      }
    }
  });
  // Summed in a fixed order: the result does not depend on the number of threads.
  LooResult out;
  const double unit = y_scale_ * y_scale_;
  double sse = 0;
  for (double v : sq) sse += v;
  out.mse = sse / static_cast<double>(cnt) * unit;
  if (with_gradient) {
    out.gradient.assign(d, 0.0);
    for (std::size_t k = 0; k < cnt; ++k)
      for (std::size_t c = 0; c < d; ++c) out.gradient[c] += grad[k * d + c];
    for (double& g : out.gradient) g = g / static_cast<double>(cnt) * unit;
  }
  return out;
}

}  // namespace nwreg
