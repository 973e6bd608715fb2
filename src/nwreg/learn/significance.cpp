#include "nwreg/learn/significance.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "nwreg/base/distributions.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/simd.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/engine/fitted.h"

namespace nwreg {

NullModel parse_null_model(const std::string& name) {
  if (name == "constant") return NullModel::constant;
  if (name == "linear") return NullModel::linear;
  throw ParameterError("null", "unknown null model " + quote(name) + " (known: constant, linear)");
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
  auto chunk = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) fn(i);
  };
  if (pool) pool->parallel_for(m, 8, chunk);
  else chunk(0, m);
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

}  // namespace

TestResult test_null_model(const Dataset& data, const Model& model, NullModel null, const EngineOptions& engine) {
  if (!model.robustness.empty())
    throw UsageError("the test needs a smooth linear in y; robustness weights depend on y (leave out --robust)");
  TestResult result;
  result.null = null;
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < data.n; ++i)
    if (data.weight.empty() || data.weight[i] > 0) rows.push_back(i);
  const std::size_t m = rows.size();
  result.rows = m;
  if (m > test_max_rows)
    throw DataError("the test forms n x n matrices (memory and time grow as n^2 and n^3): at most " +
                    std::to_string(test_max_rows) + " rows, got " + std::to_string(m) +
                    "; test a random subset of the rows");
  std::vector<double> root_w(m, 1.0);
  if (!data.weight.empty())
    for (std::size_t r = 0; r < m; ++r) root_w[r] = std::sqrt(data.weight[rows[r]]);
  const auto basis = null_basis(data, rows, root_w, null);
  const std::size_t p = basis.size();
  result.null_terms = p;
  if (m < p + 2)
    throw DataError("the test needs at least " + std::to_string(p + 2) + " rows with a positive weight for a " +
                    to_string(null) + " null model, got " + std::to_string(m));

  // L~ = D^1/2 L D^-1/2 over the rows taking part (a weight-0 key has weight 0 in every row).
  Square lt(m);
  {
    const Fitted fitted(data, model, engine);
    std::vector<double> q(m * data.d);
    for (std::size_t r = 0; r < m; ++r) std::copy_n(data.row(rows[r]), data.d, q.begin() + r * data.d);
    std::vector<std::size_t> slot(data.n, m);
    for (std::size_t r = 0; r < m; ++r) slot[rows[r]] = r;
    fitted.weights(q.data(), m, [&](std::size_t r, const double* w) {
      double* out = lt.row(r);
      for (std::size_t i = 0; i < data.n; ++i)
        if (slot[i] < m) out[slot[i]] = root_w[r] * w[i] / root_w[slot[i]];
    });
  }
  for (std::size_t r = 0; r < m; ++r) result.df_smooth += lt.row(r)[r];

  // The null model's residuals e~ = D^1/2 e = P D^1/2 y (P = I - U U') and the smooth's.
  std::vector<double> e(m);
  for (std::size_t r = 0; r < m; ++r) e[r] = root_w[r] * data.y[rows[r]];
  project_off(basis, e);
  // In units of a power of two about the largest residual, so that no square over- or
  // underflows (F and its p-value do not depend on y's units; the sums are scaled back).
  double top = 0;
  for (double v : e) top = std::max(top, std::abs(v));
  const int shift = top > 0 ? std::ilogb(top) : 0;
  for (double& v : e) v = std::ldexp(v, -shift);
  std::vector<double> le(m);
  each_row(engine.pool, m, [&](std::size_t r) { le[r] = dot(lt.row(r), e.data(), m); });
  double rss0 = 0, rss1 = 0, gain = 0;  // gain = RSS0 - RSS1 = e~' (L~ + L~' - L~'L~) e~, formed directly
  for (std::size_t r = 0; r < m; ++r) {
    rss0 += e[r] * e[r];
    rss1 += (e[r] - le[r]) * (e[r] - le[r]);
    gain += 2 * e[r] * le[r] - le[r] * le[r];
  }
  result.rss_null = std::ldexp(rss0, 2 * shift);
  result.rss_smooth = std::ldexp(rss1, 2 * shift);
  if (rss0 == 0) {
    result.warnings.push_back("y has no variation about the " + to_string(null) + " null model's fit: nothing to test");
    return result;
  }
  if (!(rss1 > 1e-28 * rss0))
    throw DataError("the smooth interpolates the data (residual sum of squares 0 at this bandwidth): no noise "
                    "left to test against; give a larger bandwidth");
  const double t = gain / rss1;
  result.statistic = t;

  // F = L~ + L~' - L~'L~ (so that I - F = (I - L~)'(I - L~) with nothing cancelling against I),
  // then E = P F P. tr(E^k), k = 1..3, give the cumulants.
  Square f(m);
  {
    Square lt_t(m);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j) lt_t.row(j)[i] = lt.row(i)[j];
    each_row(engine.pool, m, [&](std::size_t i) {
      for (std::size_t j = i; j < m; ++j) {
        const double v = lt.row(i)[j] + lt.row(j)[i] - dot(lt_t.row(i), lt_t.row(j), m);
        f.row(i)[j] = v;
      }
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
    result.warnings.push_back("at this bandwidth the smooth is the null model's own fit (" + format_g3(tr1) +
                              " degrees of freedom beyond it): nothing to test; give a smaller bandwidth");
    result.statistic = 0;
    return result;
  }
  // Q = e'(P - c (P - E)) e with c = 1 + t: M = -t P + c E, and P E = E P = E.
  const double s = static_cast<double>(m - p), c = 1 + t;
  const double m1 = -t * s + c * tr1;
  const double m2 = t * t * s - 2 * t * c * tr1 + c * c * tr2;
  const double m3 = -t * t * t * s + 3 * t * t * c * tr1 - 3 * t * c * c * tr2 + c * c * c * tr3;
  const double k1 = m1, k2 = 2 * m2, k3 = 8 * m3;
  if (!(k2 > 0)) {
    result.p_value = k1 > 0 ? 0 : 1;
    return result;
  }
  // a chi^2_b + shift with a = |k3| / (4 k2), b = 8 k2^3 / k3^2, as sm.regression takes it. Where
  // k3 < 0 (a large F: the form is skewed to the left) this errs on the safe side: the p-value
  // is then larger than the exact one (cars at h = 4: 7.4e-5 against about 5e-12).
  const double a = std::abs(k3) / (4 * k2), b = 8 * k2 * k2 * k2 / (k3 * k3);
  if (!(b < 1e12)) {  // no skew to match: the normal with the same mean and variance
    result.chi_df = std::numeric_limits<double>::infinity();
    result.p_value = 0.5 * std::erfc(-k1 / std::sqrt(2 * k2));
    return result;
  }
  result.chi_df = b;
  result.chi_scale = a;
  result.skew_negative = k3 < 0;
  result.chi_shift = k1 - a * b;
  result.p_value = chi_square_upper(-result.chi_shift / a, b);  // P(shift + a X > 0), X ~ chi^2_b
  return result;
}

}  // namespace nwreg
