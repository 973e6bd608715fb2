#include "nwreg/learn/significance.h"

#include <algorithm>
#include <numeric>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "nwreg/base/distributions.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/random.h"
#include "nwreg/base/simd.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/engine/fitted.h"

namespace nwreg {

NullModel parse_null_model(const std::string& name) {
  return parse_choice<NullModel>(name, null_choices, "null", "null model");
}

std::string to_string(NullModel null) { return null == NullModel::constant ? "constant" : "linear"; }

namespace {

// An m x m matrix, row-major.
struct Square {
  std::size_t m = 0;
  std::vector<double> a;
  explicit Square(std::size_t size) : m(size), a(size * size, 0.0) {}
  double* row(std::size_t i) { return a.data() + i * m; }
  const double* row(std::size_t i) const { return a.data() + i * m; }
};

// sum_k a_k b_k in kernel::lanes fixed lanes (the same sum on every instruction set).
NWREG_CLONES double dot(const double* a, const double* b, std::size_t n) {
  double lane[kernel::lanes] = {};
  std::size_t k = 0;
  for (; k + kernel::lanes <= n; k += kernel::lanes)
    for (int l = 0; l < kernel::lanes; ++l) lane[l] += a[k + l] * b[k + l];
  double s = 0;
  for (; k < n; ++k) s += a[k] * b[k];
  for (double v : lane) s += v;
  return s;
}

// Runs fn(i) for every row i, on the pool's threads where there is one.
void each_row(ThreadPool* pool, std::size_t m, const std::function<void(std::size_t)>& fn) {
  parallel_for(pool, m, 8, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) fn(i);
  });
}

// The null model's design, its columns made orthonormal in the weighted inner product:
// u_k = D^1/2 x_k orthonormalised (modified Gram-Schmidt, twice); a column that adds nothing
// (a constant x, a level seen once with an intercept) is left out. Returns the columns, each m long.
std::vector<std::vector<double>> null_basis(const Dataset& data, const std::vector<std::size_t>& rows,
                                            const std::vector<double>& root_w, NullModel null) {
  const std::size_t m = rows.size();
  std::vector<std::vector<double>> columns{root_w};
  if (null == NullModel::linear) {
    for (std::size_t k = 0; k < data.d; ++k) {
      if (data.kind(k) == ColumnKind::unordered) {
        // Indicators of each level seen but the first: a factor's effects.
        std::map<double, std::size_t> seen;
        for (std::size_t i : rows) seen.emplace(data.row(i)[k], seen.size());
        for (auto it = std::next(seen.begin()); it != seen.end(); ++it) {
          std::vector<double> c(m);
          for (std::size_t r = 0; r < m; ++r) c[r] = data.row(rows[r])[k] == it->first ? root_w[r] : 0.0;
          columns.push_back(std::move(c));
        }
        continue;
      }
      // Centred and scaled first, so that a time stamp of 1.7e9 s loses nothing.
      double lo = data.row(rows[0])[k], hi = lo, mean = 0;
      for (std::size_t i : rows) {
        lo = std::min(lo, data.row(i)[k]);
        hi = std::max(hi, data.row(i)[k]);
      }
      for (std::size_t i : rows) mean += data.row(i)[k] / static_cast<double>(m);
      const double scale = hi > lo ? hi - lo : 1.0;
      std::vector<double> c(m);
      for (std::size_t r = 0; r < m; ++r) c[r] = root_w[r] * ((data.row(rows[r])[k] - mean) / scale);
      columns.push_back(std::move(c));
    }
  }
  std::vector<std::vector<double>> basis;
  for (auto& c : columns) {
    const double before = std::sqrt(dot(c.data(), c.data(), m));
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& u : basis) {
        const double p = dot(u.data(), c.data(), m);
        for (std::size_t r = 0; r < m; ++r) c[r] -= p * u[r];
      }
    const double norm = std::sqrt(dot(c.data(), c.data(), m));
    if (!(norm > 1e-9 * before)) continue;
    for (double& v : c) v /= norm;
    basis.push_back(std::move(c));
  }
  return basis;
}

// v - U U' v
void project_off(const std::vector<std::vector<double>>& basis, std::vector<double>& v) {
  for (const auto& u : basis) {
    const double p = dot(u.data(), v.data(), v.size());
    for (std::size_t r = 0; r < v.size(); ++r) v[r] -= p * u[r];
  }
}

// The rows taking part (a positive weight), sqrt(w) of each, and the null model's basis.
struct Setup {
  const Dataset& data;
  std::vector<std::size_t> rows;
  std::vector<double> root_w;
  std::vector<std::vector<double>> basis;
  /// The null model's residuals scaled by sqrt(w), e~ = P D^1/2 y (y data.n long; rows outside
  /// `rows` unused), in units of 2^shift about y's largest magnitude: the projection's sums
  /// cannot overflow (y of 1e300). Throws DataError where sqrt(w) y itself does not fit a double.
  std::vector<double> residuals(const std::vector<double>& y, int& shift) const {
    std::vector<double> e(rows.size());
    double top = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      e[r] = root_w[r] * y[rows[r]];
      top = std::max(top, std::abs(e[r]));
    }
    if (!std::isfinite(top)) throw DataError("y times the square root of its sample weight overflows a double");
    shift = top > 0 ? std::ilogb(top) : 0;
    for (double& v : e) v = std::ldexp(v, -shift);
    project_off(basis, e);
    return e;
  }
  /// The rows' x as queries (m x d).
  std::vector<double> queries() const {
    std::vector<double> q(rows.size() * data.d);
    for (std::size_t r = 0; r < rows.size(); ++r) std::copy_n(data.row(rows[r]), data.d, q.begin() + r * data.d);
    return q;
  }
};

// F at `model`'s smooth for targets y (data.n long; rows outside setup.rows unused):
// e~ = P D^1/2 y, s = D^1/2 L e, RSS0 = |e~|^2, RSS1 = |e~ - s|^2, RSS0 - RSS1 = sum 2 e~ s - s^2
// (formed directly, nothing cancelling), in units of a power of two about the largest residual
// so that no square over- or underflows; RSS0 and RSS1 are scaled back (they may not fit in a
// double where F does). `flat`: the residuals are rounding noise about y's magnitude (y is the
// null model's fit), F is then 0; F is infinite where RSS1 vanishes against RSS0.
struct Statistic {
  double f = 0, rss0 = 0, rss1 = 0;
  bool flat = false;
};
Statistic statistic(const Setup& setup, const std::vector<double>& y, const Model& model, const EngineOptions& engine) {
  const Dataset& data = setup.data;
  const std::size_t m = setup.rows.size();
  int first = 0;
  std::vector<double> e = setup.residuals(y, first);
  double top = 0;
  for (double v : e) top = std::max(top, std::abs(v));
  Statistic out;
  if (!(top > 1e-13)) {  // y is in units of its largest magnitude here
    out.flat = true;
    return out;
  }
  const int second = std::ilogb(top), shift = first + second;
  for (double& v : e) v = std::ldexp(v, -second);
  // The residuals as the smooth's targets (e = D^-1/2 e~; a weight-0 row's target counts for nothing).
  Dataset residuals = data;
  std::fill(residuals.y.begin(), residuals.y.end(), 0.0);
  for (std::size_t r = 0; r < m; ++r) residuals.y[setup.rows[r]] = e[r] / setup.root_w[r];
  std::vector<double> smooth(m);
  Fitted(residuals, model, engine).predict(setup.queries().data(), m, smooth.data());
  double rss0 = 0, rss1 = 0, gain = 0;
  for (std::size_t r = 0; r < m; ++r) {
    const double s = setup.root_w[r] * smooth[r];
    rss0 += e[r] * e[r];
    rss1 += (e[r] - s) * (e[r] - s);
    gain += 2 * e[r] * s - s * s;
  }
  out.rss0 = std::ldexp(rss0, 2 * shift);
  out.rss1 = std::ldexp(rss1, 2 * shift);
  out.f = rss1 > 1e-28 * rss0 ? gain / rss1 : std::numeric_limits<double>::infinity();
  return out;
}

// The chi-square calibration at the model's bandwidth: E = P (L~ + L~' - L~'L~) P with
// L~ = D^1/2 L D^-1/2, tr(E^k) for k = 1..3, the cumulants of Q, and the matched chi-square.
void chi_square(const Setup& setup, const Model& model, const EngineOptions& engine, TestResult& result) {
  const Dataset& data = setup.data;
  const auto& rows = setup.rows;
  const auto& root_w = setup.root_w;
  const auto& basis = setup.basis;
  const std::size_t m = rows.size(), p = basis.size();
  Square lt(m);
  {
    const Fitted fitted(data, model, engine);
    const std::vector<double> q = setup.queries();
    std::vector<std::size_t> slot(data.n, m);
    for (std::size_t r = 0; r < m; ++r) slot[rows[r]] = r;
    fitted.weights(q.data(), m, [&](std::size_t r, const double* w) {
      double* out = lt.row(r);
      for (std::size_t i = 0; i < data.n; ++i)
        if (slot[i] < m) out[slot[i]] = root_w[r] * w[i] / root_w[slot[i]];
    });
  }
  // F = L~ + L~' - L~'L~ (so that I - F = (I - L~)'(I - L~) with nothing cancelling against I).
  Square f(m);
  {
    Square lt_t(m);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j) lt_t.row(j)[i] = lt.row(i)[j];
    each_row(engine.pool, m, [&](std::size_t i) {
      for (std::size_t j = i; j < m; ++j) f.row(i)[j] = lt.row(i)[j] + lt.row(j)[i] - dot(lt_t.row(i), lt_t.row(j), m);
    });
  }
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < i; ++j) f.row(i)[j] = f.row(j)[i];
  // E = F - U V' - V U' + U (U'V) U', V = F U.
  std::vector<std::vector<double>> v(p, std::vector<double>(m));
  each_row(engine.pool, m, [&](std::size_t i) {
    for (std::size_t k = 0; k < p; ++k) v[k][i] = dot(f.row(i), basis[k].data(), m);
  });
  std::vector<double> uv(p * p);
  for (std::size_t a = 0; a < p; ++a)
    for (std::size_t b = 0; b < p; ++b) uv[a * p + b] = dot(basis[a].data(), v[b].data(), m);
  each_row(engine.pool, m, [&](std::size_t i) {
    double* row = f.row(i);
    for (std::size_t k = 0; k < p; ++k) {
      const double ui = basis[k][i], vi = v[k][i];
      for (std::size_t j = 0; j < m; ++j) row[j] -= ui * v[k][j] + vi * basis[k][j];
    }
    for (std::size_t a = 0; a < p; ++a)
      for (std::size_t b = 0; b < p; ++b) {
        const double c = basis[a][i] * uv[a * p + b];
        for (std::size_t j = 0; j < m; ++j) row[j] += c * basis[b][j];
      }
  });
  // tr E, tr E^2 = sum E_ij^2, tr E^3 = sum_ij E_ij (e_i . e_j): a sum per row, added in order.
  std::vector<double> t1(m), t2(m), t3(m);
  each_row(engine.pool, m, [&](std::size_t i) {
    const double* ei = f.row(i);
    t1[i] = ei[i];
    t2[i] = dot(ei, ei, m);
    double s = 0;
    for (std::size_t j = i; j < m; ++j) s += (j == i ? 1 : 2) * ei[j] * dot(ei, f.row(j), m);
    t3[i] = s;
  });
  double tr1 = 0, tr2 = 0, tr3 = 0;
  for (std::size_t i = 0; i < m; ++i) {
    tr1 += t1[i];
    tr2 += t2[i];
    tr3 += t3[i];
  }
  result.extra_df = tr1;
  if (!(tr1 > 1e-9)) {
    result.p_fixed_bandwidth = 1;
    return;
  }
  // Q = e'(P - c (P - E)) e with c = 1 + t: M = -t P + c E, and P E = E P = E.
  const double t = result.statistic, s = static_cast<double>(m - p), c = 1 + t;
  const double m1 = -t * s + c * tr1;
  const double m2 = t * t * s - 2 * t * c * tr1 + c * c * tr2;
  const double m3 = -t * t * t * s + 3 * t * t * c * tr1 - 3 * t * c * c * tr2 + c * c * c * tr3;
  const double k1 = m1, k2 = 2 * m2, k3 = 8 * m3;
  if (!(k2 > 0)) {
    result.p_fixed_bandwidth = k1 > 0 ? 0 : 1;
    return;
  }
  // a chi^2_b + shift with a = |k3| / (4 k2), b = 8 k2^3 / k3^2, as sm.regression takes it. Where
  // k3 < 0 (a large F: the form is skewed to the left) this errs on the safe side: the p-value
  // is then larger than the exact one (cars at h = 4: 7.4e-5 against about 5e-12).
  const double a = std::abs(k3) / (4 * k2), b = 8 * k2 * k2 * k2 / (k3 * k3);
  if (!(b < 1e12)) {  // no skew to match: the normal with the same mean and variance
    result.chi_df = std::numeric_limits<double>::infinity();
    result.p_fixed_bandwidth = 0.5 * std::erfc(-k1 / std::sqrt(2 * k2));
    return;
  }
  result.chi_df = b;
  result.chi_scale = a;
  result.chi_shift = k1 - a * b;
  result.skew_negative = k3 < 0;
  result.p_fixed_bandwidth = chi_square_upper(-result.chi_shift / a, b);  // P(shift + a X > 0), X ~ chi^2_b
}

// The permutation calibration: data sets y* = y - e + D^-1/2 (D^1/2 e)_pi, each fitted as
// `relearn` says and its F* computed, in order, until the `stop_after`-th F* >= F or B of them
// (Besag and Clifford 1991: p = stop_after / l after l data sets, else (1 + #) / (B + 1); valid
// either way). They run in batches on the pool's threads, each with its own stream (seeds
// drawn in order from `seed`) and read in order: the result does not depend on the threads.
void permutations(const Setup& setup, const TestOptions& options, const EngineOptions& engine, TestResult& result) {
  const Dataset& data = setup.data;
  const std::size_t m = setup.rows.size(), B = options.permutations;
  // The null's residuals scaled by sqrt(w) (each then exchangeable; in units of 2^shift) and
  // its fitted values.
  int shift = 0;
  std::vector<double> e = setup.residuals(data.y, shift), fitted(data.y);
  for (double& v : e) v = std::ldexp(v, shift);
  for (std::size_t r = 0; r < m; ++r) fitted[setup.rows[r]] -= e[r] / setup.root_w[r];
  // The rows in a canonical order (by x, then y, then weight): which residual each row draws, and
  // so the p-value, does not depend on the order of the rows in the file (identical rows are
  // interchangeable).
  std::vector<std::size_t> canon(m);
  std::iota(canon.begin(), canon.end(), std::size_t{0});
  std::sort(canon.begin(), canon.end(), [&](std::size_t a, std::size_t b) {
    const double *xa = data.row(setup.rows[a]), *xb = data.row(setup.rows[b]);
    for (std::size_t k = 0; k < data.d; ++k)
      if (xa[k] != xb[k]) return xa[k] < xb[k];
    if (data.y[setup.rows[a]] != data.y[setup.rows[b]]) return data.y[setup.rows[a]] < data.y[setup.rows[b]];
    return setup.root_w[a] < setup.root_w[b];
  });
  SplitMix64 seeds(options.seed);
  std::vector<std::uint64_t> seed(B);
  for (auto& s : seed) s = seeds.next();
  FitPlan plan = *options.relearn;
  plan.loo_statistics = false;
  plan.curve = false;
  plan.advise = false;
  plan.fit.on_scan = nullptr;
  EngineOptions single = engine;
  single.pool = nullptr;
  const std::size_t batch = 4 * (engine.pool ? std::max<std::size_t>(1, engine.pool->size()) : 1);
  std::vector<double> star(batch);
  std::size_t done = 0;
  while (done < B) {
    const std::size_t count = std::min(batch, B - done);
    parallel_for(engine.pool, count, 1, [&](std::size_t begin, std::size_t end) {
      std::vector<std::size_t> order(m);
      for (std::size_t k = begin; k < end; ++k) {
        SplitMix64 random(seed[done + k]);
        for (std::size_t r = 0; r < m; ++r) order[r] = r;
        for (std::size_t r = m; r > 1; --r) std::swap(order[r - 1], order[random.below(r)]);  // Fisher-Yates
        Dataset permuted = data;
        for (std::size_t c = 0; c < m; ++c) {
          const std::size_t r = canon[c];
          permuted.y[setup.rows[r]] = fitted[setup.rows[r]] + e[canon[order[c]]] / setup.root_w[r];
        }
        const Model refit = fit_model(permuted, plan, single);
        star[k] = statistic(setup, permuted.y, refit, single).f;
      }
    });
    for (std::size_t k = 0; k < count; ++k) {
      ++done;
      if (star[k] >= result.statistic && ++result.exceed == options.stop_after) {
        result.permutations = done;
        result.p_value = static_cast<double>(result.exceed) / static_cast<double>(done);
        return;
      }
    }
    if (options.on_permutation) options.on_permutation(done, B);
  }
  result.permutations = B;
  result.p_value = static_cast<double>(1 + result.exceed) / static_cast<double>(B + 1);
}

}  // namespace

void check_test_rows(const Dataset& data, std::size_t permutations) {
  std::size_t m = 0;
  for (std::size_t i = 0; i < data.n; ++i) m += data.weight.empty() || data.weight[i] > 0;
  if (m > test_max_rows && !permutations)
    throw DataError("the chi-square calibration forms n x n matrices (memory and time grow as n^2 and n^3): at most " +
                    std::to_string(test_max_rows) + " rows, got " + std::to_string(m) +
                    "; use the permutation calibration (`permutations` B), or test a random subset of the rows");
}

TestResult test_null_model(const Dataset& data, const Model& model, const TestOptions& options,
                           const EngineOptions& engine) {
  if (!model.robustness.empty())
    throw UsageError("the test needs a smooth linear in y; robustness weights depend on y (leave out `robust`)");
  if (options.permutations && !options.relearn)
    throw UsageError("the permutation calibration needs the plan the bandwidth was chosen by");
  TestResult result;
  result.null = options.null;
  Setup setup{data, {}, {}, {}};
  for (std::size_t i = 0; i < data.n; ++i)
    if (data.weight.empty() || data.weight[i] > 0) setup.rows.push_back(i);
  const std::size_t m = setup.rows.size();
  result.rows = m;
  const bool matrices = m <= test_max_rows;
  check_test_rows(data, options.permutations);
  setup.root_w.assign(m, 1.0);
  if (!data.weight.empty())
    for (std::size_t r = 0; r < m; ++r) setup.root_w[r] = std::sqrt(data.weight[setup.rows[r]]);
  setup.basis = null_basis(data, setup.rows, setup.root_w, options.null);
  const std::size_t p = setup.basis.size();
  result.null_terms = p;
  if (m < p + 2)
    throw DataError("the test needs at least " + std::to_string(p + 2) + " rows with a positive weight for a " +
                    to_string(options.null) + " null model, got " + std::to_string(m));
  // The smooth's degrees of freedom, tr(L): each row's own weight, summed by the in-sample pass
  // (not from each row's weight row over every key: n^2).
  result.df_smooth = Fitted(data, model, engine).insample().trace;
  if (!std::isfinite(result.df_smooth))
    throw DataError("the smooth's weights underflow against each other at this scale of x (its degrees of freedom "
                    "are not finite); rescale x");
  const Statistic observed = statistic(setup, data.y, model, engine);
  if (observed.flat) {
    result.warnings.push_back("y has no variation about the " + to_string(options.null) +
                              " null model's fit: nothing to test");
    return result;
  }
  result.statistic = observed.f;
  result.rss_null = observed.rss0;
  result.rss_smooth = observed.rss1;
  if (std::isfinite(result.statistic) && !std::isfinite(result.rss_null))
    result.warnings.push_back("rss_null and rss_smooth are too large for a double at y's scale (reported as none, "
                              "null in JSON); F and its p-value are computed in scaled units and hold");
  else if (std::isfinite(result.statistic) && result.rss_smooth == 0)
    result.warnings.push_back("rss_null and rss_smooth are too small for a double at y's scale (reported as 0); F "
                              "and its p-value are computed in scaled units and hold");
  if (!std::isfinite(result.statistic))
    throw DataError("the smooth interpolates the data (residual sum of squares 0 at this bandwidth): no noise "
                    "left to test against; give a larger bandwidth");
  if (matrices) chi_square(setup, model, engine, result);
  if (result.p_fixed_bandwidth && !std::isfinite(*result.p_fixed_bandwidth))
    throw DataError("the chi-square p-value is not finite: the smooth's weights underflow against each other at this "
                    "scale of x; rescale x");
  if (matrices && !(result.extra_df > 1e-9)) {
    result.warnings.push_back("at this bandwidth the smooth is the null model's own fit (it adds " +
                              format_g3(std::max(0.0, result.extra_df)) +
                              " degrees of freedom to it): nothing to test (a smaller bandwidth may add some, unless x "
                              "has nothing the null model does not already fit)");
    result.statistic = 0;
    result.p_value = 1;
    return result;
  }
  if (options.permutations) permutations(setup, options, engine, result);
  else result.p_value = *result.p_fixed_bandwidth;
  return result;
}

}  // namespace nwreg
