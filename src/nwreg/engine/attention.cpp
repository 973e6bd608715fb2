#include "nwreg/engine/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

#include "nwreg/base/errors.h"
#include "nwreg/kernel/gauss_transform.h"
#include "nwreg/kernel/kernel1d.h"
#include "nwreg/kernel/kernel_nd.h"
#include "nwreg/engine/kd_tree.h"
#include "nwreg/engine/pass.h"
#include "nwreg/engine/small_system.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/thread_pool.h"

namespace nwreg {
namespace {

using kernels::log2e;
// Keys and queries within this magnitude cannot overflow the kernels' factored form.
constexpr double fast_limit = KeySet::bounded_limit;

}  // namespace




std::string to_string(OutOfReach policy) { return policy == OutOfReach::error ? "error" : "nearest"; }



OutOfReach parse_out_of_reach(const std::string& name) {
  if (name == "error") return OutOfReach::error;
  if (name == "nearest") return OutOfReach::nearest;
  throw ParameterError("out_of_reach", "unknown policy " + quote(name) + " (known: error, nearest)");
}


void check_tolerance(double tolerance) {
  if (!(tolerance >= 0 && tolerance < 1))
    throw ParameterError("tolerance", "must be >= 0 and < 1, got " + format_double(tolerance));
}

kernel::Keys Attention::keys() const {
  return {ks_.xs.data(),
          ks_.n,
          ks_.d,
          ks_.ws.empty() ? nullptr : ks_.ws.data(),
          ks_.bounded,
          ks_.categorical ? cat_.data() : nullptr,
          estimator_.design(),
          policy_.inv_s(),
          policy_.lognorm()};
}

namespace {

// One continuous x column: keys sorted by x, windows (not with adaptive bandwidths, whose
// per-key scales reach unevenly).
bool line_index(const Dataset& train, const EngineOptions& o) {
  return train.d == 1 && !is_categorical(train.kind(0)) && !o.adaptive;
}

// The fused 1-D Gaussian NW path (kernel1d.h): one column, a fixed bandwidth, no sample weights.
bool fused_line(const Dataset& train, const EngineOptions& o) {
  return line_index(train, o) && !o.knn && o.kernel == Kernel::gaussian && method_degree(o.method, o.degree) == 0 &&
         train.weight.empty();
}

// Checks the options against the data and lays out the keys for them: merged unless rows must
// stay apart (leave-block-out counts rows, neighbour bandwidths count keys); sorted windows for
// one continuous column; a k-d tree for several, except with adaptive bandwidths.
KeyLayout layout_for(const Dataset& train, const EngineOptions& o) {
  check_tolerance(o.tolerance);
  if (o.knn && o.adaptive) throw ParameterError("bandwidth", "knn and adaptive bandwidths exclude each other");
  const bool neighbours = o.knn || o.adaptive;
  if (o.leave_out > 0 && neighbours) throw ParameterError("leave_out", "not with knn or adaptive bandwidths");
  if (o.leave_out > 0 && !(train.d == 1 && !is_categorical(train.kind(0))))
    throw ParameterError("leave_out", "only for one continuous x column (it leaves out the nearest keys in x order)");
  check_degree(o.degree);
  KeyLayout layout;
  layout.merge = o.merge && o.leave_out == 0 && !neighbours;
  layout.prefer_rows = fused_line(train, o);
  layout.tree = !neighbours;
  return layout;
}

}  // namespace

Attention::Attention(const Dataset& train, EngineOptions options)
    : options_(options),
      ks_(train, layout_for(train, options_)),
      index_(ks_, options_.kernel, options_.tolerance, line_index(train, options_), options_.leave_out),
      estimator_(options_.method, options_.degree, ks_.d),
      policy_(options_.knn, options_.adaptive),
      cat_(ks_.d) {
  if (fused_line(train, options_) && !ks_.merged)
    fused_.emplace(ks_, index_, options_.tolerance, options_.transform, options_.pool, pairs_);
}

Attention::Attention(const Dataset& train, std::vector<double> bandwidth, EngineOptions options)
    : Attention(train, options) {
  set_bandwidth(std::move(bandwidth));
}

Attention::~Attention() = default;

void Attention::set_bandwidth(std::vector<double> bandwidth) {
  check_bandwidth(bandwidth, ks_.d, "--bandwidth");
  for (std::size_t k = 0; k < ks_.d; ++k)
    if (is_categorical(ks_.kinds[k])) {
      const double top = lambda_max(options_.categorical, ks_.kinds[k], ks_.levels[k]);
      if (bandwidth[k] > top)
        throw ParameterError("bandwidth", "column " + quote(ks_.names[k]) + " is categorical: its lambda must be <= " +
                                              format_double(top) + " (" +
                                              to_string(options_.categorical) + " kernel), got " +
                                              format_double(bandwidth[k]));
      cat_[k] = category(options_.categorical, ks_.kinds[k], ks_.levels[k], bandwidth[k]);
      cat_[k].in_line = options_.categorical_in_fit;
    }
  h_ = std::move(bandwidth);
  inv_h_.clear();
  for (double v : h_) inv_h_.push_back(1 / v);
  if (fused_) fused_->set_bandwidth(h_[0]);
  policy_.set(ks_, index_, inv_h_.data(), options_.pool);
  tree_ih_.clear();
  for (std::size_t k : ks_.cont) tree_ih_.push_back(inv_h_[k]);
  index_.choose(tree_ih_.data(), keys());
}

void Attention::check_loo_rows() const {
  if (ks_.rows < 2) throw DataError("leave-one-out needs at least 2 training rows, got " + std::to_string(ks_.rows));
  if (ks_.rows < 2 + 2 * options_.leave_out)
    throw DataError("--leave-out " + std::to_string(options_.leave_out) + " leaves " + std::to_string(options_.leave_out) +
                    " keys out on each side of each row: it needs at least " + std::to_string(2 + 2 * options_.leave_out) +
                    " training rows, got " + std::to_string(ks_.rows));
}

Span Attention::gather(const double* q, std::size_t exclude, Work& w, bool gradient, double rest) const {
  Span s;
  s.ranges = &w.ranges;
  w.ranges.clear();
  double h = h_[0];  // one column: the window's bandwidth
  s.inv_h = policy_.query(index_, q, exclude, inv_h_.data(), cat_.data(), ks_.d, w.inv_h.data(), w.a, h);
  s.b = index_.cover(q, exclude, rest, h, s.inv_h, tree_ih_.data(), keys(), w.ranges, w.qc.data());
  pairs_.fetch_add(static_cast<std::uint64_t>(s.sum([](std::size_t lo, std::size_t hi) { return hi - lo; })),
                   std::memory_order_relaxed);
  const kernel::Keys k = keys();
  const double* xb = ks_.key(s.b);
  // The values, and NW's gradient terms or local linear's moments, in the same sweep.
  kernel::Targets sums{ks_.ys.data(), ks_.ys[s.b], &s.s1};
  if (policy_.inv_s()) sums.ref = kernel::log2_weight(options_.kernel, k, s.b, q, s.inv_h);
  estimator_.prepare(sums, w, gradient);
  // Each range less the left-out block, whose keys may be nearer than b (their weights could
  // overflow) and get 0.
  const Block ex = index_.block(exclude);
  s.each([&](std::size_t lo, std::size_t hi) {
    const std::size_t a = std::clamp(ex.lo, lo, hi), z = std::clamp(ex.hi, lo, hi);
    if (lo < a) s.s0 += kernel::fill(options_.kernel, k, lo, a, q, xb, s.inv_h, w.e, sums);
    std::fill(w.e + a, w.e + z, 0.0);
    if (z < hi) s.s0 += kernel::fill(options_.kernel, k, z, hi, q, xb, s.inv_h, w.e, sums);
  });
  if (s.s0 == 0 && rest == 0 && options_.out_of_reach == OutOfReach::nearest) {
    // All the weight on the nearest key, shared by sample weight with the keys identical to it
    // (when keys are not merged): neighbours in x order in one column, in the k-d tree's
    // leaves whose box holds it with several.
    s.each([&](std::size_t lo, std::size_t hi) { std::fill(w.e + lo, w.e + hi, 0.0); });
    const double* xb0 = ks_.key(s.b);
    index_.identical(s.b, exclude, tree_ih_.data(), w.ranges, w.qc.data());
    s.s0 = s.s1 = 0;
    s.each([&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) {
        const bool same = !ex.contains(i) && std::equal(xb0, xb0 + ks_.d, ks_.key(i));
        w.e[i] = same ? (ks_.ws.empty() ? 1.0 : ks_.ws[i]) : 0.0;
        s.s0 += w.e[i];
        s.s1 += w.e[i] * (ks_.ys[i] - ks_.ys[s.b]);
      }
    });
    s.fallback = true;
  }
  return s;
}

void Attention::add_rest(Span& s, Work& w, std::size_t slot) const {
  const double rw = ks_.rest_w[slot], rdy = ks_.rest_dy[slot];
  s.s0 += rw;
  s.s1 += rdy;
  if (estimator_.local()) {  // z = (1, 0, ..., 0) at distance 0
    w.S[0] += rw;
    w.tz[0] += rdy;
  }
}

Row Attention::loo_row(const Slot& at, Work& w, Rest& cache, Span& s, double* grad, double* c) const {
  const double* q = ks_.key(at.key);
  if (!ks_.merged || ks_.rest_w[at.slot] == 0) {  // no other row at this key
    cache.key = no_key;
    s = gather(q, at.key, w, grad != nullptr);
    return reduce(q, s, w, grad, c);
  }
  if (cache.key != at.key) {
    // One window for every row of the key: measured from the least rest among them.
    double rest = std::numeric_limits<double>::infinity();
    for (std::size_t t = ks_.first_slot[at.key]; t < ks_.first_slot[at.key + 1]; ++t) rest = std::min(rest, ks_.rest_w[t]);
    cache.span = gather(q, at.key, w, grad != nullptr, rest);
    cache.S = w.S;
    cache.tz = w.tz;
    cache.key = at.key;
  }
  s = cache.span;
  std::copy(cache.S.begin(), cache.S.end(), w.S.begin());
  std::copy(cache.tz.begin(), cache.tz.end(), w.tz.begin());
  add_rest(s, w, at.slot);
  return reduce(q, s, w, grad, c);
}


double Attention::dlog_weight(const double* q, const double* xb, std::size_t i, std::size_t k) const {
  // For the Gaussian measured from b (the weights' residuals sum to 0, so a constant shift
  // changes nothing, and r_i^2 - r_b^2 does not cancel).
  return kernel::dlog(options_.kernel, keys(), k, i, q, xb, inv_h_.data());
}


void Attention::throw_out_of_reach(const double* q, std::size_t index, bool loo) const {
  std::string at;
  for (std::size_t k = 0; k < ks_.d; ++k) at += (k ? ", " : "") + format_double(q[k]);
  std::string bw;
  for (std::size_t k = 0; k < ks_.d; ++k) bw += (k ? " " : "") + format_double(h_[k]);
  throw DataError(std::string(loo ? "training row " : "query ") + std::to_string(index + 1) + " (x = " + at +
                  ") has no " + (loo ? "other " : "") + "training point within reach of the " +
                  to_string(options_.kernel) + " kernel (bandwidth " + bw +
                  "): widen --bandwidth or give --out-of-reach nearest");
}

Row Attention::reduce(const double* q, const Span& s, Work& w, double* grad, double* c) const {
  return estimator_.reduce(options_.kernel, keys(), ks_.ys.data(), q, ks_.key(s.b), s, w, grad, c);
}

void Attention::equivalent(const double* q, const Span& s, const double* c, Work& w) const {
  estimator_.equivalent(keys(), q, s, c, w);
}

std::unique_ptr<GaussTransform> Attention::transform(std::size_t rows) const {
  return fused_ ? fused_->transform(rows) : nullptr;
}

Row Attention::weights_row(const double* q, Work& w, Span& s, double* c) const {
  s = gather(q, no_key, w);
  const Row r = reduce(q, s, w, nullptr, c);
  if (r.reached) equivalent(q, s, c, w);
  return r;
}

Row Attention::weights_row(const Slot& at, Work& w, Span& s, double* c) const {
  Rest uncached;
  const Row r = loo_row(at, w, uncached, s, nullptr, c);
  if (r.reached) equivalent(ks_.key(at.key), s, c, w);
  return r;
}

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
      const Span s = gather(q, no_key, w);
      std::vector<double> c(estimator_.p());
      const Row r = reduce(q, s, w, nullptr, detail ? c.data() : nullptr);
      if (!r.reached) return false;
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

void Attention::slopes(const double* queries, std::size_t m, double* out, double* sum_l2) const {
  if (policy_.kind() == BandwidthPolicy::Kind::knn && !estimator_.local())
    throw ParameterError("derivative", "NW's slope with knn bandwidths is not built (each query's bandwidth moves with "
                                       "it); give --method local-linear, whose slope is its fitted line's");
  const std::size_t d = ks_.d, p = estimator_.p();
  const std::size_t bad = for_queries(options_.pool, options_.progress, m, 8, shape(), [&](std::size_t j, Work& w) {
    const double* q = queries + j * d;
    double* slope = out + j * d;
    double* l2 = sum_l2 ? sum_l2 + j * d : nullptr;
    std::fill(slope, slope + d, 0.0);
    if (l2) std::fill(l2, l2 + d, 0.0);
    const Span s = gather(q, no_key, w);
    std::vector<double> c(p);
    const Row row = reduce(q, s, w, nullptr, c.data());
    if (!row.reached) return false;
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
      l2[kk] = s.sum([&](std::size_t lo, std::size_t hi) { return sum_squares(lo, hi, w.b); });
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
            lower_to(first_bad, start + r);
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

double Attention::sum_squares(std::size_t lo, std::size_t hi, const double* e) const {
  // A merged key's rows share its weight e_g: their squares add up to e_g^2 q2_g.
  return ks_.merged ? kernel::dot(lo, hi, e, {e}, {ks_.q2.data()}) : kernel::dot(lo, hi, e, {e});
}

std::vector<std::size_t> Attention::spread_rows(std::size_t count) const {
  std::vector<std::size_t> rows;
  if (count >= ks_.rows) {
    for (std::size_t t = 0; t < ks_.rows; ++t) rows.push_back(ks_.row_of(t));
    std::sort(rows.begin(), rows.end());
    return rows;
  }
  for (std::size_t k = 0; k < count; ++k) {
    // The middle of the k-th of `count` equal slices of the rows in engine order.
    rows.push_back(ks_.row_of((2 * k + 1) * ks_.rows / (2 * count)));
  }
  return rows;
}

std::vector<Attention::Slot> Attention::slots(const std::vector<std::size_t>* rows) const {
  std::vector<Slot> out;  // keys only: a row of sample weight 0 counts for nothing
  if (!rows) {
    for (std::size_t g = 0; g < ks_.n; ++g)
      for (std::size_t t = ks_.first(g); t < ks_.first(g + 1); ++t) out.push_back({g, t});
    return out;
  }
  for (std::size_t r : *rows) {
    const std::uint32_t g = ks_.rank.at(r);
    if (g == std::numeric_limits<std::uint32_t>::max()) continue;
    if (!ks_.merged) {
      out.push_back({g, g});
      continue;
    }
    // A key's slots hold its rows in input order.
    const auto* lo = ks_.slot_row.data() + ks_.first_slot[g];
    const auto* at = std::lower_bound(lo, ks_.slot_row.data() + ks_.first_slot[g + 1], static_cast<std::uint32_t>(r));
    out.push_back({g, static_cast<std::size_t>(at - ks_.slot_row.data())});
  }
  // By slot: the rows of a merged key one after another, gathered once.
  if (ks_.merged) std::stable_sort(out.begin(), out.end(), [](const Slot& a, const Slot& b) { return a.slot < b.slot; });
  return out;
}

LooResult Attention::loo(bool with_gradient, const std::vector<std::size_t>* rows) const {
  check_loo_rows();
  const std::vector<Slot> at = slots(rows);
  const std::size_t cnt = at.size(), d = ks_.d;
  std::vector<double> sq(cnt), grad(with_gradient ? cnt * d : 0);
  std::vector<char> reached(cnt, 1);
  const std::unique_ptr<GaussTransform> fgt = transform(cnt);
  parallel_for(options_.pool, cnt, d == 1 ? 64 : 8, [&](std::size_t a, std::size_t z) {
    Work w(fused_ ? 0 : ks_.n, ks_.d, estimator_.p());
    Rest cache;
    std::vector<double> g(d);
    for (std::size_t k = a; k < z; ++k) {
      const std::size_t p = at[k].key;
      if (fused_) {
        const Row row = fgt ? fused_->row(*fgt, ks_.xs[p], p, with_gradient) : fused_->row(ks_.xs[p], p, with_gradient);
        const double resid = ks_.ys[p] - row.f;
        sq[k] = resid * resid;
        if (with_gradient) grad[k] = -2 * resid * row.dfdtheta;
        continue;
      }
      Span s;
      const Row row = loo_row(at[k], w, cache, s, with_gradient ? g.data() : nullptr, nullptr);
      if (!row.reached) {
        reached[k] = 0;
        continue;
      }
      const double resid = ks_.y_of(at[k].slot) - row.f, sw = ks_.w_of(at[k].slot);
      sq[k] = sw * resid * resid;
      if (with_gradient)
        for (std::size_t c = 0; c < d; ++c) grad[k * d + c] = -2 * sw * resid * g[c];
    }
  });
  // Summed in a fixed order: the result does not depend on the number of threads.
  LooResult out;
  const double unit = ks_.y_scale * ks_.y_scale;
  double sse = 0, total = 0;
  for (std::size_t k = 0; k < cnt; ++k) {
    sse += sq[k];
    total += ks_.w_of(at[k].slot);
    if (!reached[k] && out.out_of_reach++ == 0) out.first_out_of_reach = ks_.row_of(at[k].slot);
  }
  out.mse = out.out_of_reach ? std::numeric_limits<double>::infinity() : sse / total * unit;
  if (with_gradient) {
    out.gradient.assign(d, 0.0);
    for (std::size_t k = 0; k < cnt; ++k)
      for (std::size_t c = 0; c < d; ++c) out.gradient[c] += grad[k * d + c];
    for (double& g : out.gradient) g = g / total * unit;
  }
  return out;
}

InSample Attention::insample(bool with_gradient, const std::vector<std::size_t>* rows) const {
  const std::vector<Slot> at = slots(rows);
  const std::size_t cnt = at.size(), d = ks_.d;
  // Per row: its weighted squared residual, its own weight l_pp, and their gradients.
  std::vector<double> sq(cnt), own(cnt), grad(with_gradient ? cnt * 2 * d : 0);
  const std::unique_ptr<GaussTransform> fgt = transform(cnt);
  parallel_for(options_.pool, cnt, d == 1 ? 64 : 8, [&](std::size_t a, std::size_t z) {
    Work w(fused_ ? 0 : ks_.n, ks_.d, estimator_.p());
    std::vector<double> g(d), c(estimator_.p()), dtrace(d);  // of the last key reduced
    std::size_t last = no_key;
    Row fit;
    double ep = 0;  // e_p: the key's own unnormalised weight
    for (std::size_t k = a; k < z; ++k) {
      const std::size_t p = at[k].key;
      if (fused_) {  // the 1-D Gaussian NW fast path, key p in: its weight is 1 / s0
        const Row row = fgt ? fused_->row(*fgt, ks_.xs[p], no_key, with_gradient) : fused_->row(ks_.xs[p], no_key, with_gradient);
        const double resid = ks_.ys[p] - row.f;
        sq[k] = resid * resid;
        own[k] = 1 / row.s0;  // key p is at distance 0: e_p = 1
        if (with_gradient) {
          grad[k * 2] = -2 * resid * row.dfdtheta;
          // a_pp (r_pp - rbar) with r_pp = 0 and rbar = sum a_i (-2 ln 2 u_i) = -2 ln 2 t / s0.
          grad[k * 2 + 1] = -own[k] * (-2 * ln2 * row.t / row.s0);
        }
        continue;
      }
      const double* q = ks_.key(p);
      if (p != last) {  // the fit at key p, once for all its rows
        last = p;
        const Span s = gather(q, no_key, w, with_gradient);  // key p is in reach of itself: K(0) > 0
        fit = reduce(q, s, w, with_gradient ? g.data() : nullptr, c.data());
        ep = w.e[p];
        if (with_gradient) {
          // c = S^-1 e_1 and dS = sum_i de_i z_i z_i^T (rescaling z leaves c_0 unchanged), so
          // d l_pp / dlog h = e_p (dlog_p c_0 - sum_i e_i dlog_i (c^T z_i)^2).
          const double* xb = ks_.key(s.b);
          s.each([&](std::size_t lo, std::size_t hi) { kernel::linear(keys(), lo, hi, q, s.inv_h, c.data(), w.a); });
          for (std::size_t kk = 0; kk < d; ++kk) {
            const double t = s.sum([&](std::size_t lo, std::size_t hi) {  // sum e_i dlog_i (c^T z_i)^2
              return kernel::dlog_dot(options_.kernel, keys(), kk, lo, hi, q, xb, s.inv_h, w.e, {w.a}, {w.a});
            });
            dtrace[kk] = ep * (dlog_weight(q, xb, p, kk) * c[0] - t);
          }
        }
      }
      // l_pp = e_p c^T z_p, z_p = (1, 0, ..., 0): NW's a_pp = e_p / S0 included (c = (1/S0, 0..0));
      // a row of a merged key has its share of e_p.
      const std::size_t t = at[k].slot;
      const double resid = ks_.y_of(t) - fit.f, sw = ks_.w_of(t), part = ks_.share(t, p);
      sq[k] = sw * resid * resid;
      own[k] = ep * c[0] * part;
      if (!with_gradient) continue;
      for (std::size_t kk = 0; kk < d; ++kk) {
        grad[k * 2 * d + kk] = -2 * sw * resid * g[kk];
        grad[k * 2 * d + d + kk] = dtrace[kk] * part;
      }
    }
  });
  // Summed in a fixed order: the result does not depend on the number of threads.
  InSample out;
  const double unit = ks_.y_scale * ks_.y_scale, scale = static_cast<double>(ks_.rows) / static_cast<double>(cnt);
  double sse = 0, total = 0, tr = 0;
  for (std::size_t k = 0; k < cnt; ++k) {
    sse += sq[k];
    tr += own[k];
    total += ks_.w_of(at[k].slot);
  }
  out.mse = sse / total * unit;
  out.trace = tr * scale;  // a sample of rows stands for every row
  if (with_gradient) {
    out.d_mse.assign(d, 0.0);
    out.d_trace.assign(d, 0.0);
    for (std::size_t k = 0; k < cnt; ++k)
      for (std::size_t m = 0; m < d; ++m) {
        out.d_mse[m] += grad[k * 2 * d + m];
        out.d_trace[m] += grad[k * 2 * d + d + m];
      }
    for (double& v : out.d_mse) v = v / total * unit;
    for (double& v : out.d_trace) v *= scale;
  }
  return out;
}

LooDetail Attention::loo_detail(std::size_t neighbour_rows, bool residuals) const {
  return loo_pass(neighbour_rows, residuals, true);
}

LooDetail Attention::loo_residuals() const { return loo_pass(0, true, false); }

LooDetail Attention::loo_pass(std::size_t neighbour_rows, bool residuals, bool neighbours) const {
  check_loo_rows();
  LooDetail out;
  if (residuals) out.residual.assign(ks_.n_in, 0.0);
  // Every row's residual (the fast path where it applies); the effective number of neighbours
  // from every row, or from `neighbour_rows` spread over the rows in engine order, or from no_key.
  std::vector<char> sampled(ks_.rows, neighbours && (neighbour_rows == 0 || neighbour_rows >= ks_.rows));
  if (neighbours && !sampled[0])
    for (std::size_t k = 0; k < neighbour_rows; ++k) sampled[(2 * k + 1) * ks_.rows / (2 * neighbour_rows)] = 1;
  std::vector<double> inv_w2(ks_.rows, 0.0);
  const std::unique_ptr<GaussTransform> fgt = residuals ? transform(ks_.n) : nullptr;
  const std::size_t bad = for_queries(options_.pool, options_.progress, ks_.n, index_.kind() == KeyIndex::Kind::line ? 256 : 16, shape(), [&](std::size_t p, Work& w) {
    const double* q = ks_.key(p);
    const std::size_t lo = ks_.first(p), hi = ks_.first(p + 1);
    const bool any = std::any_of(sampled.begin() + lo, sampled.begin() + hi, [](char c) { return c != 0; });
    if (!residuals && !any && !is_compact(options_.kernel)) return true;  // never out of reach
    if (fused_ && !sampled[p]) {
      out.residual[ks_.order[p]] = (ks_.ys[p] - (fgt ? fused_->row(*fgt, q[0], p, false) : fused_->row(q[0], p, false)).f) * ks_.y_scale;
      return true;
    }
    Rest cache;
    std::vector<double> c(estimator_.p());
    // The rest of a merged key's rows, each without the row: sum of w^2 (each row's own
    // weight in it is w c_0), as a prefix and a suffix, each kept scaled (weights 1e-200
    // apart would underflow their squares).
    const std::size_t m = hi - lo;
    std::vector<SumSquares> pre(m + 1), suf(m + 1);
    if (ks_.merged && any) {
      for (std::size_t k = 0; k < m; ++k) pre[k + 1] = pre[k].plus(ks_.w_of(lo + k));
      for (std::size_t k = m; k-- > 0;) suf[k] = suf[k + 1].plus(ks_.w_of(lo + k));
    }
    for (std::size_t t = lo; t < hi; ++t) {
      Span s;
      Row r;
      if (sampled[t]) {
        r = weights_row(Slot{p, t}, w, s, c.data());
        cache.key = no_key;  // the weights were overwritten
      } else {
        r = loo_row(Slot{p, t}, w, cache, s, nullptr, nullptr);
      }
      if (!r.reached) return false;
      if (residuals) out.residual[ks_.row_of(t)] = (ks_.y_of(t) - r.f) * ks_.y_scale;
      if (!sampled[t]) continue;
      double w2 = s.sum([&](std::size_t a, std::size_t z) { return sum_squares(a, z, w.e); });
      if (ks_.merged) w2 += pre[t - lo].merge(suf[t - lo + 1]).times(c[0]);
      inv_w2[t] = 1 / w2;
    }
    return true;
  });
  if (bad != no_key) throw_out_of_reach(ks_.key(bad), ks_.order[bad], true);
  double sum = 0, total = 0;
  for (std::size_t t = 0; t < ks_.rows; ++t) {
    if (!sampled[t]) continue;
    const double sw = ks_.w_of(t);
    sum += sw * inv_w2[t];
    total += sw;
  }
  if (total > 0) out.neighbours = sum / total;
  return out;
}

std::vector<double> Attention::key_columns(const double* v, std::size_t c) const {
  std::vector<double> out(c * ks_.rows);
  for (std::size_t t = 0; t < ks_.rows; ++t)
    for (std::size_t k = 0; k < c; ++k) out[k * ks_.rows + t] = v[ks_.row_of(t) * c + k];
  return out;
}

bool Attention::loo_moments(std::size_t j, const std::vector<double>& v, std::size_t c, double& f, double* M) const {
  const std::uint32_t p = ks_.rank.at(j);
  if (p == std::numeric_limits<std::uint32_t>::max() || ks_.rows < 2 + 2 * options_.leave_out) return false;
  const std::vector<std::size_t> row{j};
  const Slot at = slots(&row).front();
  Work w(ks_.n, ks_.d, estimator_.p());
  Span s;
  std::vector<double> cc(estimator_.p());
  const Row r = weights_row(at, w, s, cc.data());
  if (!r.reached) return false;
  // a[t] = a_jt (y_t - f) per row t over the keys' slots (a merged key's rows their shares;
  // the rest of row j's own key w_t c_0 each, row j no_key); then each moment in one
  // vectorised pass per range of slots.
  std::vector<double> a(ks_.rows);
  std::vector<Range> spans;
  s.each([&](std::size_t lo, std::size_t hi) {
    spans.emplace_back(ks_.first(lo), ks_.first(hi));
    for (std::size_t g = lo; g < hi; ++g)
      for (std::size_t t = ks_.first(g); t < ks_.first(g + 1); ++t) {
        const double l = g == p ? (t == at.slot ? 0.0 : cc[0] * ks_.w_of(t)) : w.e[g] * ks_.share(t, g);
        a[t] = l * (ks_.y_of(t) - r.f) * ks_.y_scale;
      }
  });
  for (std::size_t k = 0; k < c; ++k)
    for (std::size_t l = 0; l <= k; ++l) {
      double sum = 0;
      for (const auto& [lo, hi] : spans)
        sum += kernel::dot(lo, hi, a.data(), {&v[k * ks_.rows], v[k * ks_.rows + at.slot]},
                           {&v[l * ks_.rows], v[l * ks_.rows + at.slot]});
      M[k * c + l] = M[l * c + k] = sum;
    }
  f = r.f * ks_.y_scale;
  return true;
}

}  // namespace nwreg
