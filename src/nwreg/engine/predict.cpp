// The query passes of Attention: predictions, with what standard errors need, slopes and the
// attention rows written out.
#include "nwreg/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

#include "nwreg/base/errors.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/engine/pass.h"
#include "nwreg/engine/small_system.h"
#include "nwreg/kernel/kernel1d.h"
#include "nwreg/kernel/kernel_nd.h"

namespace nwreg {

void Engine::predict(const double* queries, std::size_t m, double* out) const {
  predict_detail(queries, m, {}, out, nullptr, nullptr);
}

void Engine::nearest_distances(const double* queries, std::size_t m, double* out) const {
  std::fill(out, out + m, std::numeric_limits<double>::quiet_NaN());
  const double* inv_s = policy_.inv_s();  // adaptive bandwidths: each key's own
  if ((!policy_.fixed() && !inv_s) || ks_.n == 0) return;
  if (index_.kind() == KeyIndex::Kind::line && !ks_.categorical && !inv_s) {
    // The keys are in x order: the queries in x order too, each key found by a galloping search
    // from the last (a binary search per query in its own order misses the cache at each step:
    // 0.7 s at 1e6 queries).
    std::vector<std::pair<double, std::size_t>> qs;
    qs.reserve(m);
    for (std::size_t j = 0; j < m; ++j)
      if (!std::isnan(queries[j])) qs.emplace_back(queries[j], j);
    std::sort(qs.begin(), qs.end());
    const double* x = ks_.xs.data();
    std::size_t i = 0;  // the first key at or past the last query
    for (const auto& [q, j] : qs) {
      std::size_t step = 1;
      while (i + step < ks_.n && x[i + step] < q) step *= 2;
      i = static_cast<std::size_t>(std::lower_bound(x + i, x + std::min(i + step + 1, ks_.n), q) - x);
      double gap = std::numeric_limits<double>::infinity();
      if (i < ks_.n) gap = x[i] - q;
      if (i > 0) gap = std::min(gap, q - x[i - 1]);
      out[j] = gap * inv_h_[0];
    }
    return;
  }
  std::vector<double> buf(ks_.d);
  for (std::size_t j = 0; j < m; ++j) {
    const double* q = queries + j * ks_.d;
    if (std::none_of(q, q + ks_.d, [](double v) { return std::isnan(v); }))
      out[j] = index_.nearest_distance(q, inv_h_.data(), tree_ih_.data(), buf.data(), inv_s);
  }
}

void Engine::predict_detail(const double* queries, std::size_t m, const std::vector<double>& v, double* out,
                            double* sum_w2, double* smooth, double* kernel_w2) const {
  std::vector<double> ve;  // v in engine order, a merged key's the weighted mean over its rows
  if (smooth)
    for (std::size_t g = 0; g < ks_.n; ++g) {
      double sum = 0;
      for (std::size_t t = ks_.first(g); t < ks_.first(g + 1); ++t) sum += ks_.share(t, g) * v.at(ks_.row_of(t));
      ve.push_back(sum);
    }
  const Plan plan =
      backends_.plan({.rows = m, .squares = sum_w2 || kernel_w2, .values = smooth ? &ve : nullptr});
  // Queries in x order where the plan asks (neighbouring queries share their windows in cache).
  std::vector<std::size_t> qo;
  if (plan.sorted()) {
    qo.resize(m);
    std::iota(qo.begin(), qo.end(), std::size_t{0});
    std::stable_sort(qo.begin(), qo.end(), [&](std::size_t a, std::size_t b) { return queries[a] < queries[b]; });
  }
  std::atomic<std::size_t> bad{no_key};
  const std::size_t grain = plan.sorted() ? 64 : index_.kind() == KeyIndex::Kind::line ? 32 : 8;
  for_queries(options_.pool, options_.progress, m, grain, shape(), [&](std::size_t k, Work& w) {
    const std::size_t j = qo.empty() ? k : qo[k];
    if (!detail_row(plan, queries + j * ks_.d, ve, w,
                    {out + j, sum_w2 ? sum_w2 + j : nullptr, smooth ? smooth + j : nullptr,
                     kernel_w2 ? kernel_w2 + j : nullptr}))
      lower_to(bad, j);
    return true;
  });
  if (bad != no_key) throw_out_of_reach(queries + bad * ks_.d, bad, false);
}

void Engine::slopes(const double* queries, std::size_t m, double* out, double* l_norm) const {
  if (policy_.per_query() && !estimator_.local())
    throw ParameterError("derivative", "NW's slope with " + to_string(options_.neighbour_policy.kind) + " bandwidths is not built (each query's bandwidth moves with "
                                       "it); give `method` local-linear, whose slope is its fitted line's");
  const std::size_t d = ks_.d, p = estimator_.p();
  const Plan plan = backends_.plan({.rows = m, .squares = l_norm != nullptr, .slopes = true});
  const std::size_t bad = for_queries(options_.pool, options_.progress, m, 8, shape(), [&](std::size_t j, Work& w) {
    const double* q = queries + j * d;
    double* slope = out + j * d;
    double* l2 = l_norm ? l_norm + j * d : nullptr;
    std::fill(slope, slope + d, 0.0);
    if (l2) std::fill(l2, l2 + d, 0.0);
    if (slope_by_moments(plan, q, w, slope, l2)) return true;
    const Span s = gather(q, no_key, w);
    std::vector<double> c(p);
    const Row row = reduce(q, s, w, nullptr, c.data());
    if (!row.reached) {
      if (options_.out_of_reach != OutOfReach::empty) return false;
      std::fill(slope, slope + d, std::numeric_limits<double>::quiet_NaN());
      if (l2) std::fill(l2, l2 + d, std::numeric_limits<double>::quiet_NaN());
      return true;
    }
    if (s.fallback) return true;
    const kernel::Keys k = keys();
    const double yb = ks_.ys[s.b], fc = row.f - yb;
    std::vector<double> beta(p), ck(p), unit(p);
    std::optional<SmallSystem> sys;
    if (estimator_.local()) {
      sys = SmallSystem::factored(p, w.S.data());
      sys->solve(w.tz.data(), beta.data());
    }
    for (std::size_t kk = 0; kk < d; ++kk) {
      const double zs = k.z_scale(kk, s.inv_h);  // the column's scale in z (0: not in the fit)
      if (cat_[kk].on && (!sys || zs == 0)) continue;
      if (sys) {
        // f(x) = yb + beta^T z, z_k = (x_k - q_k) / h_k: the slope is beta_k / h_k, and its
        // weights l_i = e_i (c_k^T z_i) / h_k with c_k = S^-1 e_k.
        slope[kk] = beta[kk + 1] * zs * ks_.y_scale;
        if (!l2) continue;
        std::fill(unit.begin(), unit.end(), 0.0);
        unit[kk + 1] = 1;
        sys->solve(unit.data(), ck.data());
        s.each([&](std::size_t lo, std::size_t hi) {
          kernel::linear(k, lo, hi, q, s.inv_h, ck.data(), w.a);
          for (std::size_t i = lo; i < hi; ++i) w.b[i] = w.e[i] != 0 ? w.e[i] * w.a[i] * zs : 0.0;
        });
      } else {
        // df/dq = sum_i e'_i (y_i - f) / s0, e'_i = de_i/dq; its weights (e'_i - e_i B / s0) / s0,
        // B = sum_i e'_i.
        double A = 0, B = 0;
        s.each([&](std::size_t lo, std::size_t hi) {
          kernel::slope_weights(options_.kernel, k, kk, lo, hi, q, s.inv_h, w.e, w.a);
          for (std::size_t i = lo; i < hi; ++i) A += w.a[i] * (ks_.ys[i] - yb), B += w.a[i];
        });
        slope[kk] = (A - fc * B) / s.s0 * ks_.y_scale;
        if (!l2) continue;
        s.each([&](std::size_t lo, std::size_t hi) {
          for (std::size_t i = lo; i < hi; ++i) w.b[i] = (w.a[i] - w.e[i] * (B / s.s0)) / s.s0;
        });
      }
      // |l| = 2^k |l / 2^k|, 2^k the largest |l_i|'s scale: no square over- or underflows
      // (x of 1e-160 makes l_i about 1e160, x of 1e200 about 1e-200).
      double top = 0;
      s.each([&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) top = std::max(top, std::abs(w.b[i]));
      });
      const int e = top > 0 && std::isfinite(top) ? std::ilogb(top) : 0;
      s.each([&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) w.b[i] = std::ldexp(w.b[i], -e);
      });
      l2[kk] = std::ldexp(std::sqrt(s.sum([&](std::size_t lo, std::size_t hi) { return sum_squares(lo, hi, w.b); })), e);
    }
    return true;
  });
  if (bad != no_key) throw_out_of_reach(queries + bad * ks_.d, bad, false);
}

void Engine::weights(const double* queries, std::size_t m,
                        const std::function<void(std::size_t, const double*)>& emit) const {
  // Rows are made in parallel a block at a time (about 32 MB) and handed out in order.
  const std::size_t block = std::clamp<std::size_t>((std::size_t{1} << 22) / std::max<std::size_t>(ks_.n_in, 1), 1, 4096);
  std::vector<double> buf(std::min(block, m) * ks_.n_in);
  std::atomic<std::size_t> first_bad{no_key};
  const Plan plan = backends_.plan({});
  for (std::size_t start = 0; start < m; start += block) {
    const std::size_t rows = std::min(block, m - start);
    parallel_for(options_.pool, rows, 1, [&](std::size_t a, std::size_t z) {
      Work work(shape());
      std::vector<double> c(estimator_.p());
      for (std::size_t r = a; r < z; ++r) {
        double* w = buf.data() + r * ks_.n_in;
        const double* q = queries + (start + r) * ks_.d;
        std::fill(w, w + ks_.n_in, 0.0);
        Span s;
        if (!weights_row(plan, q, work, s, c.data()).reached) {
          if (options_.out_of_reach != OutOfReach::empty) lower_to(first_bad, start + r);
          continue;
        }
        s.each([&](std::size_t lo, std::size_t hi) {  // each row of a key its share
          for (std::size_t g = lo; g < hi; ++g)
            for (std::size_t t = ks_.first(g); t < ks_.first(g + 1); ++t) w[ks_.row_of(t)] = work.e[g] * ks_.share(t, g);
        });
      }
    });
    if (first_bad.load() != no_key) throw_out_of_reach(queries + first_bad.load() * ks_.d, first_bad.load(), false);
    for (std::size_t r = 0; r < rows; ++r) emit(start + r, buf.data() + r * ks_.n_in);
    if (options_.progress) options_.progress(start + rows, m);
  }
}

}  // namespace nwreg
