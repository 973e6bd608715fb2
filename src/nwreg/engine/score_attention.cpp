#include "nwreg/engine/score_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/simd.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/engine/key_set.h"

namespace nwreg {
namespace {

using kernel::exp2_inline;
using kernel::lanes;
constexpr double log2e = 1.4426950408889634074;

// tanh by one exp: 1 - 2 / (e^2|u| + 1), signed; within a few ulps of 1 absolutely (a score's
// accuracy is absolute), branch-free so that it vectorises.
[[gnu::always_inline]] inline double tanh_inline(double u) {
  const double a = std::abs(u) * (2 * log2e);
  const double e = exp2_inline(a < 200 ? a : 200.0);  // NaN too: exp2_inline's shift needs a number
  return std::copysign(1 - 2 / (e + 1), u);
}

// s_i = sum_k z_k x_ki over keys by column (xc, d x n).
NWREG_CLONES void linear_scores(const double* xc, std::size_t n, std::size_t d, const double* z, double* s) {
  std::fill(s, s + n, 0.0);
  for (std::size_t k = 0; k < d; ++k) {
    const double zk = z[k];
    const double* x = xc + k * n;
    for (std::size_t i = 0; i < n; ++i) s[i] += zk * x[i];
  }
}

// s_i = sum_h v_h tanh(aq_h + pk_hi); the tanh into t (H x n) unless it is null.
NWREG_CLONES void tanh_scores(const double* pk, std::size_t n, std::size_t H, const double* aq, const double* v,
                              double* s, double* t) {
  std::fill(s, s + n, 0.0);
  for (std::size_t h = 0; h < H; ++h) {
    const double a = aq[h], vh = v[h];
    const double* p = pk + h * n;
    if (t) {
      double* th = t + h * n;
      for (std::size_t i = 0; i < n; ++i) {
        th[i] = tanh_inline(a + p[i]);
        s[i] += vh * th[i];
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) s[i] += vh * tanh_inline(a + p[i]);
    }
  }
}

// a_i = w_i 2^((s_i - M) log2 e) where w_i > 0, else 0.
NWREG_CLONES void softmax_weights(const double* s, const double* w, std::size_t n, double M, double* a) {
  for (std::size_t i = 0; i < n; ++i) {
    // A key left out (weight 0, or the leave-one-out row) may score inf or NaN: its exponent is
    // kept a number (exp2_inline's shift needs one) and its weight set to 0.
    const double u = (s[i] - M) * log2e;
    const double e = w[i] * exp2_inline(u >= -1100 && u <= 0 ? u : -1100.0);
    a[i] = w[i] > 0 ? e : 0.0;
  }
}

// sum_i a_i b_i (b null: sum_i a_i) in `lanes` running sums added in a fixed order.
NWREG_CLONES double dot_lanes(const double* a, const double* b, std::size_t n) {
  double acc[lanes] = {};
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes)
    for (int l = 0; l < lanes; ++l) acc[l] += a[i + l] * (b ? b[i + l] : 1.0);
  for (int l = 0; i < n; ++i, ++l) acc[l] += a[i] * (b ? b[i] : 1.0);
  double total = 0;
  for (int l = 0; l < lanes; ++l) total += acc[l];
  return total;
}

}  // namespace

struct ScoreAttention::Scratch {
  std::vector<double> s, a, t, z, g, u;  // scores, weights, units' tanh, the query's half, gradient terms
  Scratch(std::size_t n, std::size_t width, bool units, std::size_t H)
      : s(n), a(n), t(units ? n * H : 0), z(width), g(units || H == 0 ? n : 0), u(units ? n : 0) {}
};

ScoreAttention::ScoreAttention(const Dataset& train, ScoreParameters params, EngineOptions options)
    : p_(std::move(params)), options_(std::move(options)), n_(train.n), d_(train.d) {
  if (p_.distance()) throw UsageError("`score` gaussian: the distance kernels run in Attention");
  for (std::size_t k = 0; k < d_; ++k)
    if (is_categorical(train.kind(k)))
      throw DataError("the " + to_string(p_.score) + " score multiplies numbers; x column " + quote(train.x_names[k]) +
                      " is categorical (the gaussian score weighs levels by their own kernel)");
  p_.d = d_;
  check_score(p_, "`score` " + to_string(p_.score));
  H_ = p_.score == Score::additive ? p_.hidden : 0;
  x_ = train.x;
  xc_.resize(n_ * d_);
  for (std::size_t i = 0; i < n_; ++i)
    for (std::size_t k = 0; k < d_; ++k) xc_[k * n_ + i] = train.x[i * d_ + k];
  y_ = train.y;
  w_ = train.weight.empty() ? std::vector<double>(n_, 1.0) : train.weight;
  for (double w : w_) positive_ += w > 0;
  if (positive_ == 0) throw DataError("every training row has sample weight 0: no key to attend to");
  if (H_) {
    const double* B = p_.theta.data() + H_ + H_ * d_;
    pk_.assign(H_ * n_, 0.0);
    for (std::size_t h = 0; h < H_; ++h)
      for (std::size_t i = 0; i < n_; ++i) {
        double v = p_.bias ? p_.theta[H_ + 2 * H_ * d_ + h] : 0.0;
        for (std::size_t k = 0; k < d_; ++k) v += B[h * d_ + k] * xc_[k * n_ + i];
        pk_[h * n_ + i] = v;
      }
  }
}

double ScoreAttention::attend(const double* q, std::size_t exclude, Scratch& w, bool units, std::size_t index,
                              bool loo) const {
  pairs_.fetch_add(n_, std::memory_order_relaxed);
  const double* th = p_.theta.data();
  if (H_) {  // W_q q: the query's half of each unit
    for (std::size_t h = 0; h < H_; ++h) {
      double v = 0;
      for (std::size_t k = 0; k < d_; ++k) v += th[H_ + h * d_ + k] * q[k];
      w.z[h] = v;
    }
    tanh_scores(pk_.data(), n_, H_, w.z.data(), th, w.s.data(), units ? w.t.data() : nullptr);
  } else {
    for (std::size_t b = 0; b < d_; ++b) {
      double v = 0;
      if (p_.score == Score::general)
        for (std::size_t a = 0; a < d_; ++a) v += q[a] * th[a * d_ + b];
      else
        v = p_.score == Score::scaled_dot ? q[b] / std::sqrt(static_cast<double>(d_)) : q[b];
      w.z[b] = v;
    }
    linear_scores(xc_.data(), n_, d_, w.z.data(), w.s.data());
  }
  double M = -std::numeric_limits<double>::infinity();
  bool finite = true;
  for (std::size_t i = 0; i < n_; ++i)
    if (w_[i] > 0 && i != exclude) {
      finite &= std::isfinite(w.s[i]);
      M = std::max(M, w.s[i]);
    }
  if (!finite || !std::isfinite(M)) {
    const std::string what = !finite ? " overflows its " + to_string(p_.score) +
                                           " score (x too large for q.k to be a number; scale the x columns)"
                                     : " has no other key of sample weight > 0";
    if (loo) throw DataError("training row " + std::to_string(index + 1) + what);
    throw QueryError(index, what);
  }
  softmax_weights(w.s.data(), w_.data(), n_, M, w.a.data());
  if (exclude < n_) w.a[exclude] = 0;
  const double inv = 1 / dot_lanes(w.a.data(), nullptr, n_);
  for (std::size_t i = 0; i < n_; ++i) w.a[i] *= inv;
  return dot_lanes(w.a.data(), y_.data(), n_);  // a weighted mean of finite values: finite
}

void ScoreAttention::score_slope(const double* q, std::size_t i, const Scratch& w, double* g) const {
  (void)q;
  const double* th = p_.theta.data();
  switch (p_.score) {
    case Score::general:  // (W k)_a
      for (std::size_t a = 0; a < d_; ++a) {
        double v = 0;
        for (std::size_t b = 0; b < d_; ++b) v += th[a * d_ + b] * xc_[b * n_ + i];
        g[a] = v;
      }
      break;
    case Score::additive:  // sum_h v_h (1 - t_h^2) W_q[h]
      std::fill(g, g + d_, 0.0);
      for (std::size_t h = 0; h < H_; ++h) {
        const double t = w.t[h * n_ + i], c = th[h] * (1 - t * t);
        for (std::size_t k = 0; k < d_; ++k) g[k] += c * th[H_ + h * d_ + k];
      }
      break;
    default: {
      const double c = p_.score == Score::scaled_dot ? 1 / std::sqrt(static_cast<double>(d_)) : 1.0;
      for (std::size_t k = 0; k < d_; ++k) g[k] = c * xc_[k * n_ + i];
    }
  }
}

void ScoreAttention::predict(const double* queries, std::size_t m, double* out) const {
  predict_detail(queries, m, {}, out, nullptr, nullptr);
}

void ScoreAttention::predict_detail(const double* queries, std::size_t m, const std::vector<double>& v, double* out,
                                    double* sum_w2, double* smooth, double* kernel_w2) const {
  std::atomic<std::size_t> done{0};
  parallel_for(options_.pool, m, 16, [&](std::size_t lo, std::size_t hi) {
    Scratch w(n_, std::max(d_, H_), false, H_);
    for (std::size_t j = lo; j < hi; ++j) {
      out[j] = attend(queries + j * d_, no_key, w, false, j, false);
      if (sum_w2 || kernel_w2) {  // (its weights are its kernel's)
        const double w2 = dot_lanes(w.a.data(), w.a.data(), n_);
        if (sum_w2) sum_w2[j] = w2;
        if (kernel_w2) kernel_w2[j] = w2;
      }
      if (smooth) smooth[j] = dot_lanes(w.a.data(), v.data(), n_);
    }
    if (options_.progress) options_.progress(done += hi - lo, m);
  });
}

void ScoreAttention::slopes(const double* queries, std::size_t m, double* out, double* l_norm) const {
  std::atomic<std::size_t> done{0};
  parallel_for(options_.pool, m, 16, [&](std::size_t lo, std::size_t hi) {
    Scratch w(n_, std::max(d_, H_), H_ > 0, H_);
    std::vector<double> g(n_ * d_), mean(d_);
    for (std::size_t j = lo; j < hi; ++j) {
      const double* q = queries + j * d_;
      const double f = attend(q, no_key, w, true, j, false);
      // g_i = d score_i / dq; slope = sum_i a_i (y_i - f) g_i, l_i = a_i (g_i - gbar).
      std::fill(mean.begin(), mean.end(), 0.0);
      double* slope = out + j * d_;
      std::fill(slope, slope + d_, 0.0);
      for (std::size_t i = 0; i < n_; ++i) {
        if (w.a[i] == 0) continue;
        score_slope(q, i, w, g.data() + i * d_);
        for (std::size_t k = 0; k < d_; ++k) {
          mean[k] += w.a[i] * g[i * d_ + k];
          slope[k] += w.a[i] * (y_[i] - f) * g[i * d_ + k];
        }
      }
      if (!l_norm) continue;
      for (std::size_t k = 0; k < d_; ++k) {  // sqrt(sum_i l_i^2), summed scaled as Attention's
        double top = 0;
        for (std::size_t i = 0; i < n_; ++i) top = std::max(top, std::abs(w.a[i] * (g[i * d_ + k] - mean[k])));
        const int e = top > 0 && std::isfinite(top) ? std::ilogb(top) : 0;
        double sum = 0;
        for (std::size_t i = 0; i < n_; ++i) {
          if (w.a[i] == 0) continue;
          const double l = std::ldexp(w.a[i] * (g[i * d_ + k] - mean[k]), -e);
          sum += l * l;
        }
        l_norm[j * d_ + k] = std::ldexp(std::sqrt(sum), e);
      }
    }
    if (options_.progress) options_.progress(done += hi - lo, m);
  });
}

void ScoreAttention::weights(const double* queries, std::size_t m,
                             const std::function<void(std::size_t, const double*)>& emit) const {
  // Rows are made in parallel a block at a time (about 32 MB) and handed out in order.
  const std::size_t block = std::clamp<std::size_t>((std::size_t{1} << 22) / std::max<std::size_t>(n_, 1), 1, 4096);
  std::vector<double> buf(std::min(block, m) * n_);
  for (std::size_t start = 0; start < m; start += block) {
    const std::size_t rows = std::min(block, m - start);
    parallel_for(options_.pool, rows, 1, [&](std::size_t lo, std::size_t hi) {
      Scratch w(n_, std::max(d_, H_), false, H_);
      for (std::size_t r = lo; r < hi; ++r) {
        attend(queries + (start + r) * d_, no_key, w, false, start + r, false);
        std::copy(w.a.begin(), w.a.end(), buf.begin() + static_cast<std::ptrdiff_t>(r * n_));
      }
    });
    for (std::size_t r = 0; r < rows; ++r) emit(start + r, buf.data() + r * n_);
    if (options_.progress) options_.progress(start + rows, m);
  }
}

void ScoreAttention::add_gradient(std::size_t j, double f, double c, Scratch& w, double* grad) const {
  const double* th = p_.theta.data();
  const double* q = x_.data() + j * d_;
  double* g = w.g.data();  // g_i = c a_i (y_i - f) = dL/dscore_i
  for (std::size_t i = 0; i < n_; ++i) g[i] = c * w.a[i] * (y_[i] - f);
  if (p_.score == Score::general) {  // dL/dW_ab += q_a sum_i g_i k_ib
    for (std::size_t b = 0; b < d_; ++b) {
      const double sum = dot_lanes(g, xc_.data() + b * n_, n_);
      for (std::size_t a = 0; a < d_; ++a) grad[a * d_ + b] += q[a] * sum;
    }
    return;
  }
  // additive: dv_h = sum_i g_i t_hi; u_hi = g_i v_h (1 - t_hi^2): db_h = sum_i u_hi,
  // dW_q[h] = q sum_i u_hi, dW_k[h] = sum_i u_hi k_i.
  double* dv = grad;
  double* dA = grad + H_;
  double* dB = dA + H_ * d_;
  double* db = dB + H_ * d_;
  double* u = w.u.data();
  for (std::size_t h = 0; h < H_; ++h) {
    const double* t = w.t.data() + h * n_;
    dv[h] += dot_lanes(g, t, n_);
    const double vh = th[h];
    for (std::size_t i = 0; i < n_; ++i) u[i] = g[i] * vh * (1 - t[i] * t[i]);
    const double su = dot_lanes(u, nullptr, n_);
    if (p_.bias) db[h] += su;
    for (std::size_t k = 0; k < d_; ++k) {
      dA[h * d_ + k] += su * q[k];
      dB[h * d_ + k] += dot_lanes(u, xc_.data() + k * n_, n_);
    }
  }
}

void ScoreAttention::check_loo_rows() const {
  if (positive_ < 2)
    throw DataError("the leave-one-out error needs at least 2 training rows of sample weight > 0, got " +
                    std::to_string(positive_));
}

LooResult ScoreAttention::objective(bool gradient, const std::vector<std::size_t>* rows, bool sum) const {
  check_loo_rows();
  std::vector<std::size_t> all;
  if (!rows) {
    all.resize(n_);
    std::iota(all.begin(), all.end(), std::size_t{0});
    rows = &all;
  }
  const std::size_t count = rows->size(), P = gradient ? p_.theta.size() : 0;
  double wsum = 0;
  for (std::size_t j : *rows) wsum += w_[j];
  std::vector<double> err(count, 0.0), grads(count * P, 0.0);
  parallel_for(options_.pool, count, 4, [&](std::size_t lo, std::size_t hi) {
    Scratch w(n_, std::max(d_, H_), gradient && H_ > 0, H_);
    for (std::size_t r = lo; r < hi; ++r) {
      const std::size_t j = (*rows)[r];
      if (w_[j] == 0) continue;
      const double f = attend(x_.data() + j * d_, j, w, gradient && H_ > 0, j, true);
      err[r] = w_[j] * (f - y_[j]) * (f - y_[j]);
      if (gradient) add_gradient(j, f, 2 * w_[j] * (f - y_[j]) / (sum ? 1.0 : wsum), w, grads.data() + r * P);
    }
  });
  LooResult out;
  double total = 0;
  for (double e : err) total += e;
  out.mse = sum ? total : total / wsum;
  if (!std::isfinite(out.mse)) throw DataError("the leave-one-out error overflows: y values are too large to square");
  if (gradient) {
    out.gradient.assign(P, 0.0);
    for (std::size_t r = 0; r < count; ++r)
      for (std::size_t k = 0; k < P; ++k) out.gradient[k] += grads[r * P + k];
  }
  return out;
}

InSample ScoreAttention::insample(bool, const std::vector<std::size_t>* rows) const {
  std::vector<std::size_t> all;
  if (!rows) {
    all = spread_rows(n_);
    rows = &all;
  }
  const std::size_t count = rows->size();
  std::vector<double> err(count, 0.0), self(count, 0.0);
  parallel_for(options_.pool, count, 4, [&](std::size_t lo, std::size_t hi) {
    Scratch w(n_, std::max(d_, H_), false, H_);
    for (std::size_t r = lo; r < hi; ++r) {
      const std::size_t j = (*rows)[r];
      if (w_[j] == 0) continue;
      const double f = attend(x_.data() + j * d_, no_key, w, false, j, true);
      err[r] = w_[j] * (f - y_[j]) * (f - y_[j]);
      self[r] = w.a[j];
    }
  });
  InSample out;
  double total = 0, wsum = 0;
  for (std::size_t r = 0; r < count; ++r) {
    total += err[r];
    out.trace += self[r];
    wsum += w_[(*rows)[r]];
  }
  out.mse = total / wsum;
  out.trace *= static_cast<double>(positive_) / static_cast<double>(count);
  out.room = static_cast<double>(positive_) - out.trace;
  return out;
}

std::vector<std::size_t> ScoreAttention::spread_rows(std::size_t count) const {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n_; ++i)
    if (w_[i] > 0) order.push_back(i);
  if (count >= order.size()) return order;
  if (d_ == 1) std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x_[a] < x_[b]; });
  std::vector<std::size_t> rows;
  for (std::size_t k = 0; k < count; ++k) rows.push_back(order[(2 * k + 1) * order.size() / (2 * count)]);
  return rows;
}

LooDetail ScoreAttention::loo_detail(std::size_t neighbour_rows, bool residuals) const {
  check_loo_rows();
  LooDetail out;
  std::vector<std::size_t> rows = spread_rows(neighbour_rows == 0 ? n_ : neighbour_rows);
  std::vector<char> counted(n_, 0);
  for (std::size_t j : rows) counted[j] = 1;
  if (residuals) out.residual.assign(n_, 0.0);
  std::vector<double> inv(n_, 0.0);
  parallel_for(options_.pool, n_, 4, [&](std::size_t lo, std::size_t hi) {
    Scratch w(n_, std::max(d_, H_), false, H_);
    for (std::size_t j = lo; j < hi; ++j) {
      if (w_[j] == 0 || (!residuals && !counted[j])) continue;
      const double f = attend(x_.data() + j * d_, j, w, false, j, true);
      if (residuals) out.residual[j] = y_[j] - f;
      if (counted[j]) inv[j] = 1 / dot_lanes(w.a.data(), w.a.data(), n_);
    }
  });
  double total = 0, wsum = 0;
  for (std::size_t j : rows) {
    total += w_[j] * inv[j];
    wsum += w_[j];
  }
  out.neighbours = total / wsum;
  return out;
}

}  // namespace nwreg
