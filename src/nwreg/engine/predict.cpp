// The query passes of Attention: predictions, with what standard errors need, slopes and the
// attention rows written out.
#include "nwreg/engine/attention.h"

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
#include "nwreg/kernel/gauss_transform.h"
#include "nwreg/kernel/kernel1d.h"
#include "nwreg/kernel/kernel_nd.h"

namespace nwreg {

void Attention::predict(const double* queries, std::size_t m, double* out) const {
  if (fused_) {
    // Queries in sorted order: neighbouring queries share their windows in cache.
    std::vector<std::size_t> qo(m);
    std::iota(qo.begin(), qo.end(), std::size_t{0});
    std::stable_sort(qo.begin(), qo.end(), [&](std::size_t a, std::size_t b) { return queries[a] < queries[b]; });
    std::atomic<std::size_t> done{0};
    const std::unique_ptr<GaussTransform> fgt = transform(m);
    parallel_for(options_.pool, m, 64, [&](std::size_t a, std::size_t z) {
      for (std::size_t k = a; k < z; ++k) {
        const double q = queries[qo[k]];
        out[qo[k]] = (fgt && fused_->fast(q) ? fused_->row(*fgt, q, no_key, false) : fused_->row(q, no_key, false)).f * ks_.y_scale;
      }
      if (options_.progress) options_.progress(done += z - a, m);
    });
    return;
  }
  std::vector<double> dummy;
  predict_detail(queries, m, dummy, out, nullptr, nullptr);
}

void Attention::predict_detail(const double* queries, std::size_t m, const std::vector<double>& v, double* out,
                               double* sum_w2, double* smooth) const {
  std::vector<double> ve;  // v in engine order, a merged key's the weighted mean over its rows
  if (smooth)
    for (std::size_t g = 0; g < ks_.n; ++g) {
      double sum = 0;
      for (std::size_t t = ks_.first(g); t < ks_.first(g + 1); ++t) sum += ks_.share(t, g) * v.at(ks_.row_of(t));
      ve.push_back(sum);
    }
  const bool detail = sum_w2 || smooth;
  // The fused path's long windows through fast Gauss transforms: the prediction as predict()
  // makes it; the squared weights are the weights at h / sqrt(2) (E^2 = exp(-(x - q)^2 / h^2)),
  // the smooth a transform of v. Each within its bound where the nearest key lies within h.
  std::unique_ptr<GaussTransform> fgt, fgt2, fgtv;
  double vsum = 0;
  if (fused_ && detail && (fgt = transform(m))) {
    fgt2 = std::make_unique<GaussTransform>(ks_.xs.data(), ks_.ys.data(), ks_.n, h_[0] / std::sqrt(2.0), options_.tolerance,
                                            ks_.y_mid, m, options_.pool);
    // v >= 0 (squared residuals) is summed as it is: measured from an offset, a local mean
    // many orders below the largest v would cancel. Other v: summed key by key.
    for (double x : ve) vsum += x;
    if (smooth && *std::min_element(ve.begin(), ve.end()) >= 0)
      fgtv = std::make_unique<GaussTransform>(ks_.xs.data(), ve.data(), ks_.n, h_[0], options_.tolerance, 0.0, m,
                                              options_.pool);
    if (!fgt2->usable()) fgt.reset();
    if (fgtv && !fgtv->usable()) fgtv.reset();
  }
  const PassLine line = fused_ ? PassLine{} : line_sums(m);
  const DetailLines more = line.line && detail ? detail_lines(m, sum_w2 != nullptr, smooth ? &ve : nullptr) : DetailLines{};
  // A row by moments, with what standard errors need from the same backends: false where one
  // does not answer (the row is then gathered).
  auto by_moments = [&](const double* q, Work& w, Span& s, std::size_t j) {
    if (detail && ((sum_w2 && !more.squares) || (smooth && !more.values))) return false;
    if (!moment_row(line.line, q, no_key, w, s, false)) return false;
    std::vector<double> c(estimator_.p());
    const Row r = reduce(q, s, w, nullptr, detail ? c.data() : nullptr);
    LineMoments sq, sv;
    if (sum_w2 && !more.squares->sums(q[0], s.inv_h[0], no_key, false, sq)) return false;
    if (smooth && !(more.values->sums(q[0], s.inv_h[0], no_key, false, sv) && sv.M[0] > 0)) return false;
    out[j] = r.f * ks_.y_scale;
    if (sum_w2) sum_w2[j] = squared_weights(c.data(), sq);
    if (smooth) smooth[j] = sv.My[0] / sv.M[0];
    if (r.dropped) dropped_.fetch_add(1, std::memory_order_relaxed);
    return true;
  };
  const std::size_t bad = for_queries(options_.pool, options_.progress, m, index_.kind() == KeyIndex::Kind::line ? 32 : 8, shape(), [&](std::size_t j, Work& w) {
      const double* q = queries + j * ks_.d;
      if (fgt && fused_->fast(q[0]) && std::abs(ks_.xs[index_.nearest_1d(q[0], no_key)] - q[0]) <= h_[0]) {
        const Row r = fused_->row(*fgt, q[0], no_key, false);
        out[j] = r.f * ks_.y_scale;
        if (sum_w2) sum_w2[j] = fgt2->at(q[0], false).s0 / (r.s0 * r.s0);
        if (!smooth) return true;
        if (fgtv) {
          const GaussTransform::Sums sv = fgtv->at(q[0], false);
          // Each weight errs by at most weight_error(): within 1e-13 of this row's sum of v
          // unless much larger v elsewhere (within reach or not) could outweigh it.
          if (fgtv->weight_error() * vsum <= 1e-13 * sv.s1) {
            smooth[j] = sv.s1 / sv.s0;
            return true;
          }
        }
        // The smooth key by key over the window.
        const std::size_t b = index_.nearest_1d(q[0], no_key);
        std::size_t lo, hi;
        index_.window_1d(q[0], h_[0], b, 1.0, lo, hi);
        const kernel::Sums k = kernel::sums_detail(ks_.xs.data(), ks_.ys.data(), ve.data(), lo, hi, ks_.xs[b], q[0],
                                                   ks_.xs[b] - q[0], fused_->K2(), ks_.ys[b]);
        smooth[j] = k.sv / k.s0;
        return true;
      }
      if (fused_ && detail && fused_->fast(q[0])) {  // (predict() answers the fused case without detail)
        // One vectorised pass: the prediction exactly as predict() makes it (s0 and s1 summed
        // as there), the squared weights and the smooth of v.
        const std::size_t b = index_.nearest_1d(q[0], no_key);
        std::size_t lo, hi;
        index_.window_1d(q[0], h_[0], b, 1.0, lo, hi);
        pairs_.fetch_add(hi - lo, std::memory_order_relaxed);
        const double xb = ks_.xs[b], yb = ks_.ys[b];
        const kernel::Sums k = kernel::sums_detail(ks_.xs.data(), ks_.ys.data(), smooth ? ve.data() : ks_.ys.data(), lo, hi,
                                                   xb, q[0], xb - q[0], fused_->K2(), yb);
        out[j] = (yb + k.s1 / k.s0) * ks_.y_scale;
        if (sum_w2) sum_w2[j] = k.w2 / (k.s0 * k.s0);
        if (smooth) smooth[j] = k.sv / k.s0;
        return true;
      }
      Span s;
      if (by_moments(q, w, s, j)) return true;
      s = gather(q, no_key, w);
      std::vector<double> c(estimator_.p());
      const Row r = reduce(q, s, w, nullptr, detail ? c.data() : nullptr);
      if (r.reached && r.dropped && !s.fallback) dropped_.fetch_add(1, std::memory_order_relaxed);
      if (!r.reached) {
        if (options_.out_of_reach != OutOfReach::empty) return false;
        for (double* v : {out + j, sum_w2 ? sum_w2 + j : nullptr, smooth ? smooth + j : nullptr})
          if (v) *v = std::numeric_limits<double>::quiet_NaN();
        return true;
      }
      out[j] = r.f * ks_.y_scale;
      if (!detail) return true;
      if (smooth)  // NW weights e_i / s0
        smooth[j] = s.sum([&](std::size_t lo, std::size_t hi) { return kernel::dot(lo, hi, w.e, {ve.data()}); }) / s.s0;
      if (sum_w2) {
        // NW's weights are e_i / s0 (c = (1/s0, 0..0)): no pass for the equivalent weights.
        const bool nw = !estimator_.local() || s.fallback;
        if (!nw) equivalent(q, s, c.data(), w);
        const double w2 = s.sum([&](std::size_t lo, std::size_t hi) { return sum_squares(lo, hi, w.e); });
        sum_w2[j] = nw ? w2 / (s.s0 * s.s0) : w2;
      }
      return true;
  });
  if (bad != no_key) throw_out_of_reach(queries + bad * ks_.d, bad, false);
}

void Attention::slopes(const double* queries, std::size_t m, double* out, double* l_norm) const {
  if (policy_.per_query() && !estimator_.local())
    throw ParameterError("derivative", "NW's slope with " + to_string(options_.neighbour_policy.kind) + " bandwidths is not built (each query's bandwidth moves with "
                                       "it); give --method local-linear, whose slope is its fitted line's");
  const std::size_t d = ks_.d, p = estimator_.p();
  // A local fit's slope by moments (one column): beta_1 / h, and sum_i l_i^2 from the squared
  // weights' moments, c_1 = S^-1 e_2.
  const PassLine line = estimator_.local() ? line_sums(m) : PassLine{};
  const DetailLines more = line.line && l_norm ? detail_lines(m, true, nullptr) : DetailLines{};
  auto by_moments = [&](const double* q, Work& w, double* slope, double* l2) {
    Span s;
    if ((l2 && !more.squares) || !moment_row(line.line, q, no_key, w, s, false)) return false;
    const SmallSystem sys = SmallSystem::factored(p, w.S.data());
    std::vector<double> beta(p), c1(p), unit(p, 0.0);
    unit[1] = 1;
    sys.solve(w.tz.data(), beta.data());
    sys.solve(unit.data(), c1.data());
    LineMoments sq;
    if (l2 && !more.squares->sums(q[0], s.inv_h[0], no_key, false, sq)) return false;
    const double zs = s.inv_h[0];
    slope[0] = beta[1] * zs * ks_.y_scale;
    if (l2) l2[0] = std::sqrt(std::max(0.0, squared_weights(c1.data(), sq))) * zs;
    return true;
  };
  const std::size_t bad = for_queries(options_.pool, options_.progress, m, 8, shape(), [&](std::size_t j, Work& w) {
    const double* q = queries + j * d;
    double* slope = out + j * d;
    double* l2 = l_norm ? l_norm + j * d : nullptr;
    std::fill(slope, slope + d, 0.0);
    if (l2) std::fill(l2, l2 + d, 0.0);
    if (line.line && by_moments(q, w, slope, l2)) return true;
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

void Attention::weights(const double* queries, std::size_t m,
                        const std::function<void(std::size_t, const double*)>& emit) const {
  // Rows are made in parallel a block at a time (about 32 MB) and handed out in order.
  const std::size_t block = std::clamp<std::size_t>((std::size_t{1} << 22) / std::max<std::size_t>(ks_.n_in, 1), 1, 4096);
  std::vector<double> buf(std::min(block, m) * ks_.n_in);
  std::atomic<std::size_t> first_bad{no_key};
  for (std::size_t start = 0; start < m; start += block) {
    const std::size_t rows = std::min(block, m - start);
    parallel_for(options_.pool, rows, 1, [&](std::size_t a, std::size_t z) {
      Work work(ks_.n, ks_.d, estimator_.p());
      double* const e = work.e;
      std::vector<double> c(estimator_.p());
      for (std::size_t r = a; r < z; ++r) {
        double* w = buf.data() + r * ks_.n_in;
        const double* q = queries + (start + r) * ks_.d;
        std::fill(w, w + ks_.n_in, 0.0);
        if (!fused_) {
          Span s;
          if (!weights_row(q, work, s, c.data()).reached) {
            if (options_.out_of_reach != OutOfReach::empty) lower_to(first_bad, start + r);
            continue;
          }
          s.each([&](std::size_t lo, std::size_t hi) {  // each row of a key its share
            for (std::size_t g = lo; g < hi; ++g)
              for (std::size_t t = ks_.first(g); t < ks_.first(g + 1); ++t) w[ks_.row_of(t)] = e[g] * ks_.share(t, g);
          });
          continue;
        }
        const std::size_t b = index_.nearest_1d(q[0], no_key);
        const double xb = ks_.xs[b];
        std::size_t lo, hi;
        index_.window_1d(q[0], h_[0], b, 1.0, lo, hi);
        pairs_.fetch_add(hi - lo, std::memory_order_relaxed);
        if (fused_->fast(q[0])) {
          kernel::weights(ks_.xs.data(), lo, hi, xb, q[0], xb - q[0], fused_->K2(), e);
        } else {
          for (std::size_t i = lo; i < hi; ++i)
            e[i] = std::exp2(std::max(kernels::Gaussian::term(ks_.xs[i], xb, q[0], inv_h_[0]), -1021.0));
        }
        double s0 = 0;
        for (std::size_t i = lo; i < hi; ++i) s0 += e[i];
        for (std::size_t i = lo; i < hi; ++i) w[ks_.order[i]] = e[i] / s0;
      }
    });
    if (first_bad.load() != no_key) throw_out_of_reach(queries + first_bad.load() * ks_.d, first_bad.load(), false);
    for (std::size_t r = 0; r < rows; ++r) emit(start + r, buf.data() + r * ks_.n_in);
    if (options_.progress) options_.progress(start + rows, m);
  }
}

}  // namespace nwreg
