#include "nwreg/learn/plugin.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

namespace nwreg {
namespace {

constexpr double pi = 3.14159265358979323846;
constexpr int grid_size = 401;     // KernSmooth's gridsize
constexpr double trim_share = 0.01;      // share of rows left out at each end of x
constexpr double proptrun = 0.05;  // share of the grid left out at each end for theta22
constexpr int block_max = 5;
constexpr int divisor = 20;        // at most n / divisor blocks
constexpr int quartic = 5;         // coefficients of a quartic

// Least-squares polynomial with `terms` coefficients (at most a quartic) in u = (x - mid) / half
// over one block, by Householder QR: c_0..c_4 of u^0..u^4, those past `terms` 0. The block must
// hold at least `terms` distinct x.
std::array<double, quartic> fit_polynomial(const double* u, const double* y, std::size_t n, int terms) {
  std::vector<double> a(n * terms);  // column-major
  for (std::size_t i = 0; i < n; ++i) {
    double p = 1;
    for (int k = 0; k < terms; ++k, p *= u[i]) a[k * n + i] = p;
  }
  std::vector<double> b(y, y + n);
  for (int k = 0; k < terms; ++k) {
    double* col = a.data() + k * n;
    double norm = 0;  // |u| <= 1: no power overflows
    for (std::size_t i = k; i < n; ++i) norm += col[i] * col[i];
    norm = std::sqrt(norm);
    if (col[k] > 0) norm = -norm;  // reflect onto -sign(col[k]) norm: no cancellation
    // v = col[k..] - norm e_k, stored in place; H = I - 2 v v^T / v^T v.
    col[k] -= norm;
    double vv = 0;
    for (std::size_t i = k; i < n; ++i) vv += col[i] * col[i];
    auto reflect = [&](double* t) {
      double s = 0;
      for (std::size_t i = k; i < n; ++i) s += col[i] * t[i];
      s = 2 * s / vv;
      for (std::size_t i = k; i < n; ++i) t[i] -= s * col[i];
    };
    for (int j = k + 1; j < terms; ++j) reflect(a.data() + j * n);
    reflect(b.data());
    col[k] = norm;  // R's diagonal
  }
  std::array<double, quartic> c{};
  for (int k = terms - 1; k >= 0; --k) {
    double s = b[k];
    for (int j = k + 1; j < terms; ++j) s -= a[j * n + k] * c[j];
    c[k] = s / a[k * n + k];
  }
  return c;
}

struct BlockFits {
  double rss = 0;
  double theta24 = 0;     // sum of m'' m'''' over the rows, not yet divided by n
  std::string too_few;    // why the derivatives are undefined (a block with < 5 distinct x), or ""
};

// Quartic fits to `blocks` runs of consecutive sorted rows (the last takes the remainder).
// A block with fewer than 5 distinct x has no unique quartic, but its fitted values are: those
// of the polynomial through as many terms as it has distinct x. That is enough for the RSS (Cp);
// the derivatives then are undefined, and `too_few` says why. `shown` holds x in the user's
// units, for that message.
BlockFits fit_blocks(const std::vector<double>& x, const std::vector<double>& y, int blocks,
                     const std::vector<double>& shown) {
  const std::size_t n = x.size(), per = n / blocks;
  BlockFits out;
  std::vector<double> u;
  for (int j = 0; j < blocks; ++j) {
    const std::size_t lo = j * per, hi = j + 1 == blocks ? n : (j + 1) * per;
    std::size_t distinct = 1;
    for (std::size_t i = lo + 1; i < hi; ++i) distinct += x[i] != x[i - 1];
    if (distinct < quartic && out.too_few.empty())
      out.too_few = "the plug-in bandwidth fits a quartic to each of " + std::to_string(blocks) +
                    " blocks of x, and x values " + format_double(shown[lo]) + " to " + format_double(shown[hi - 1]) +
                    " hold only " + std::to_string(distinct) + " distinct values (it needs 5): use `bandwidth` auto";
    const double mid = 0.5 * (x[lo] + x[hi - 1]), half = distinct > 1 ? 0.5 * (x[hi - 1] - x[lo]) : 1.0;
    u.resize(hi - lo);
    for (std::size_t i = lo; i < hi; ++i) u[i - lo] = (x[i] - mid) / half;
    const auto c = fit_polynomial(u.data(), y.data() + lo, hi - lo, static_cast<int>(std::min<std::size_t>(distinct, quartic)));
    const double s2 = 1 / (half * half);
    for (std::size_t i = 0; i < hi - lo; ++i) {
      const double t = u[i];
      const double fit = c[0] + t * (c[1] + t * (c[2] + t * (c[3] + t * c[4])));
      const double d2 = (2 * c[2] + t * (6 * c[3] + t * 12 * c[4])) * s2;
      out.rss += (y[lo + i] - fit) * (y[lo + i] - fit);
      const double d4 = 24 * c[4] * s2 * s2;
      out.theta24 += d2 * d4;
    }
  }
  return out;
}

// Linear binning of (x, y) onto `grid_size` points over [0, 1] (KernSmooth's rlbin; x within
// [0, 1], so truncation never drops a row).
void bin(const std::vector<double>& x, const std::vector<double>& y, std::vector<double>& xc, std::vector<double>& yc) {
  const int m = grid_size;
  xc.assign(m, 0);
  yc.assign(m, 0);
  const double delta = 1.0 / (m - 1);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double pos = x[i] / delta;
    int li = static_cast<int>(pos);
    double rem = pos - li;
    if (x[i] == 1) li = m - 2, rem = 1;
    if (li < 0 || li >= m - 1) continue;
    xc[li] += 1 - rem;
    xc[li + 1] += rem;
    yc[li] += (1 - rem) * y[i];
    yc[li + 1] += rem * y[i];
  }
}

// Solves the p x p system s z = t in place by Gaussian elimination with partial pivoting
// (LINPACK dgefa/dgesl). Returns false when a pivot is exactly 0.
bool solve(std::vector<double>& s, std::vector<double>& t, int p) {
  for (int k = 0; k < p; ++k) {
    int piv = k;
    for (int i = k + 1; i < p; ++i)
      if (std::abs(s[i * p + k]) > std::abs(s[piv * p + k])) piv = i;
    if (s[piv * p + k] == 0) return false;
    if (piv != k) {
      for (int j = 0; j < p; ++j) std::swap(s[k * p + j], s[piv * p + j]);
      std::swap(t[k], t[piv]);
    }
    for (int i = k + 1; i < p; ++i) {
      const double f = s[i * p + k] / s[k * p + k];
      for (int j = k; j < p; ++j) s[i * p + j] -= f * s[k * p + j];
      t[i] -= f * t[k];
    }
  }
  for (int k = p - 1; k >= 0; --k) {
    for (int j = k + 1; j < p; ++j) t[k] -= s[k * p + j] * t[j];
    t[k] /= s[k * p + k];
  }
  return true;
}

// What a binned local polynomial fit of `degree` at bandwidth h gives at each grid point.
struct BinnedFit {
  std::vector<double> value;  // coefficient `drv` times drv! (the drv-th derivative)
  std::vector<double> s11;    // (S^-1)_11: the binned smoother's diagonal (sdiag)
  std::vector<double> sst;    // (S^-1 U S^-1)_11, U from squared weights (sstdiag)
};

// x in the user's units: x = origin + scale u for u in [0, 1] (for messages).
struct Units {
  double origin = 0, scale = 1;
};

// KernSmooth's binned locpoly / sdiag / sstdiag over [0, 1] with the Gaussian kernel cut at
// 4 h. Throws DataError when h is below a quarter of the bin width or a grid point sees too
// few bins.
BinnedFit binned_fit(const std::vector<double>& xc, const std::vector<double>& yc, double h, int degree, int drv,
                     bool diagonals, const char* stage, Units units) {
  const int m = grid_size, p = degree + 1, pp = 2 * degree + 1;
  const double delta = 1.0 / (m - 1);
  const double reach = std::floor(4 * h / delta);
  if (!(reach >= 1))
    throw DataError(std::string("the plug-in bandwidth: its ") + stage + " pilot bandwidth (" +
                    format_double(h * units.scale) + ") is below a quarter of its binning grid's step (" +
                    format_double(delta * units.scale) + "): use `bandwidth` auto");
  const int l = static_cast<int>(std::min<double>(reach, m - 1));
  std::vector<double> w(l + 1);
  for (int j = 0; j <= l; ++j) w[j] = std::exp(-0.5 * (delta * j / h) * (delta * j / h));
  std::vector<double> ss(static_cast<std::size_t>(m) * pp, 0), tt(static_cast<std::size_t>(m) * p, 0),
      uu(diagonals ? static_cast<std::size_t>(m) * pp : 0, 0);
  for (int k = 0; k < m; ++k) {
    if (xc[k] == 0) continue;
    for (int j = std::max(0, k - l); j <= std::min(m - 1, k + l); ++j) {
      const double wk = w[std::abs(k - j)], dist = delta * (k - j);
      double fac = 1;
      for (int q = 0; q < pp; ++q, fac *= dist) {
        ss[j * pp + q] += xc[k] * wk * fac;
        if (q < p) tt[j * p + q] += yc[k] * wk * fac;
        if (diagonals) uu[j * pp + q] += xc[k] * wk * wk * fac;
      }
    }
  }
  BinnedFit out;
  out.value.resize(m);
  if (diagonals) out.s11.resize(m), out.sst.resize(m);
  std::vector<double> s(p * p), t(p);
  double factorial = 1;
  for (int q = 2; q <= drv; ++q) factorial *= q;
  for (int j = 0; j < m; ++j) {
    auto load = [&] {
      for (int r = 0; r < p; ++r)
        for (int c = 0; c < p; ++c) s[r * p + c] = ss[j * pp + r + c];
    };
    load();
    for (int r = 0; r < p; ++r) t[r] = tt[j * p + r];
    if (!solve(s, t, p))
      throw DataError("the plug-in bandwidth: x has a gap wider than its " + std::string(stage) +
                      " pilot bandwidth (" + format_double(h * units.scale) + ") can bridge near x = " +
                      format_double(units.origin + j * delta * units.scale) + ": use `bandwidth` auto");
    out.value[j] = factorial * t[drv];
    if (!diagonals) continue;
    load();
    std::vector<double> z(p, 0);
    z[0] = 1;
    solve(s, z, p);  // S symmetric: z is the first row of S^-1
    out.s11[j] = z[0];
    double q = 0;
    for (int r = 0; r < p; ++r)
      for (int c = 0; c < p; ++c) q += z[r] * uu[j * pp + r + c] * z[c];
    out.sst[j] = q;
  }
  return out;
}

double checked(double v, const char* what) {
  if (!std::isfinite(v) || v <= 0)
    throw DataError(std::string("the plug-in bandwidth is undefined here: its estimate of ") + what + " is " +
                    (std::isfinite(v) ? format_double(v) : std::string("not finite")) + ": use `bandwidth` auto");
  return v;
}

// x sorted, ties in their input order (R's sort.list), and trimmed by trim_share at each end;
// y in the same order.
void sorted_trimmed(const std::vector<double>& x_in, const std::vector<double>& y_in, std::vector<double>& x,
                    std::vector<double>& y) {
  std::vector<std::size_t> order(x_in.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return x_in[i] < x_in[j]; });
  const auto cut = static_cast<std::size_t>(std::floor(trim_share * static_cast<double>(x_in.size())));
  for (std::size_t i = cut; i + cut < order.size(); ++i) {
    x.push_back(x_in[order[i]]);
    y.push_back(y_in[order[i]]);
  }
}

// y centred and scaled to unit spread, divided first by its largest |y| (so that no square
// overflows); returns the unit: y = unit * (new y) + its mean.
double standardise(std::vector<double>& y) {
  const double nn = static_cast<double>(y.size());
  double y_max = 0, y_mean = 0, y_sd = 0;
  for (double v : y) y_max = std::max(y_max, std::abs(v));
  for (double& v : y) {
    v /= y_max;
    y_mean += v / nn;
  }
  for (double& v : y) {
    v -= y_mean;
    y_sd += v * v / nn;
  }
  y_sd = std::sqrt(y_sd);
  for (double& v : y) v /= y_sd;
  return y_max * y_sd;
}

// The result, found in units where x spans 1 and y has unit spread, back in x's and y's: sx
// and sy x's range and y's unit.
void to_units(PluginResult& r, double sx, double sy) {
  const double sy2 = sy * sy;
  r.bandwidth = checked(r.bandwidth * sx, "the bandwidth");
  r.pilot_g *= sx;
  r.pilot_lambda *= sx;
  r.sigma2_blocks *= sy2;
  r.sigma2 *= sy2;
  r.theta22 *= sy2 / (sx * sx * sx * sx);
  r.theta24_blocks *= sy2 / (sx * sx * sx * sx * sx * sx);
}

}  // namespace

PluginResult plugin_bandwidth(const std::vector<double>& x_in, const std::vector<double>& y_in) {
  std::vector<double> x, y;
  sorted_trimmed(x_in, y_in, x, y);
  const std::size_t n = x.size();
  if (n < 6)
    throw DataError("the plug-in bandwidth needs at least 6 rows after trimming 1% at each end of x, got " +
                    std::to_string(n) + ": use `bandwidth` auto");
  const double nn = static_cast<double>(n);
  // Work in standard units: x mapped onto [0, 1] (its trimmed range), y centred and scaled to
  // unit spread. h moves with the scale of x only, so this changes nothing but rounding, and
  // no magnitude of x or y (years, 1e200, a level of 1e8 with noise of 1) overflows or cancels.
  const double x_lo = x.front(), x_half = 0.5 * x.back() - 0.5 * x.front();
  if (!(x_half > 0))
    throw DataError("the plug-in bandwidth is undefined: x is constant (after trimming 1% at each end): use "
                    "`bandwidth` H");
  const std::vector<double> shown = x;
  for (double& v : x) v = (0.5 * v - 0.5 * x_lo) / x_half;
  if (std::all_of(y.begin(), y.end(), [&](double v) { return v == y.front(); }))
    throw DataError("the plug-in bandwidth is undefined: y is constant (no curve to fit): use `bandwidth` auto");
  const double y_unit = standardise(y);
  const Units units{x_lo, 2 * x_half};

  // Blocks: Mallows' Cp over N = 1..max, the first minimum.
  const int max_blocks = static_cast<int>(std::max<std::size_t>(std::min<std::size_t>(n / divisor, block_max), 1));
  std::vector<BlockFits> fits;
  for (int k = 1; k <= max_blocks; ++k) fits.push_back(fit_blocks(x, y, k, shown));
  // A residual below rounding noise (y, standardised, has a sum of squares of n): y is a quartic
  // of x (R would go on with noise).
  const double rss_max = fits.back().rss;
  if (!(rss_max > 1e-20 * nn))
    throw DataError("the plug-in bandwidth is undefined: y is an exact quartic of x in each block (no noise to "
                    "balance): use `bandwidth` auto");
  PluginResult r;
  double best = std::numeric_limits<double>::infinity();
  for (int k = 1; k <= max_blocks; ++k) {
    const double cp = (nn - quartic * max_blocks) * fits[k - 1].rss / rss_max + 2.0 * quartic * k - nn;
    if (cp < best) best = cp, r.blocks = k;
  }
  const BlockFits& q = fits[r.blocks - 1];
  if (!q.too_few.empty()) throw DataError(q.too_few);
  r.sigma2_blocks = checked(q.rss / (nn - quartic * r.blocks), "the error variance from the block fits");
  r.theta24_blocks = q.theta24 / nn;
  if (!(r.theta24_blocks != 0) || !std::isfinite(r.theta24_blocks))
    throw DataError("the plug-in bandwidth is undefined: the block fits' mean of m'' m'''' is 0: use `bandwidth` auto");

  const double g = r.sigma2_blocks / (std::abs(r.theta24_blocks) * nn);  // b - a = 1
  r.pilot_g = checked(std::pow((r.theta24_blocks < 0 ? 3 / (8 * std::sqrt(pi)) : 15 / (16 * std::sqrt(pi))) * g, 1.0 / 7),
                      "the pilot bandwidth for m''");
  std::vector<double> xc, yc;
  bin(x, y, xc, yc);
  const BinnedFit curvature = binned_fit(xc, yc, r.pilot_g, 3, 2, false, "curvature", units);
  const int lo = static_cast<int>(std::floor(proptrun * grid_size)), hi = grid_size - lo;
  double th22 = 0;
  for (int j = lo; j < hi; ++j) th22 += curvature.value[j] * curvature.value[j] * xc[j];
  r.theta22 = checked(th22 / nn, "the mean squared second derivative");

  const double c3 = std::pow(4 * (0.5 + 2 * std::sqrt(2.0) - 4.0 / 3 * std::sqrt(3.0)) / std::sqrt(2 * pi), 1.0 / 9);
  r.pilot_lambda = checked(c3 * std::pow(r.sigma2_blocks * r.sigma2_blocks / ((r.theta22 * nn) * (r.theta22 * nn)),
                                         1.0 / 9),
                           "the pilot bandwidth for the error variance");
  const BinnedFit fit = binned_fit(xc, yc, r.pilot_lambda, 1, 0, true, "variance", units);
  double tr_s = 0, tr_sst = 0, yy = 0, my = 0, mm = 0;
  for (double v : y) yy += v * v;
  for (int j = 0; j < grid_size; ++j) {
    my += fit.value[j] * yc[j];
    mm += fit.value[j] * fit.value[j] * xc[j];
    tr_s += fit.s11[j] * xc[j];
    tr_sst += fit.sst[j] * xc[j];
  }
  r.sigma2 = checked((yy - 2 * my + mm) / (nn - 2 * tr_s + tr_sst), "the error variance");
  r.bandwidth = checked(std::pow(r.sigma2 / (2 * std::sqrt(pi) * r.theta22 * nn), 0.2), "the bandwidth");
  to_units(r, units.scale, y_unit);
  return r;
}

double plugin_bandwidth(const Dataset& data, Kernel kernel) {
  if (data.d != 1)
    throw DataError("the plug-in bandwidth is for one x column, got " + std::to_string(data.d));
  if (!data.weight.empty()) throw DataError("the plug-in bandwidth does not take sample weights");
  if (is_categorical(data.kind(0)))
    throw DataError("the plug-in bandwidth has no lambda for categorical column " + quote(data.x_names[0]));
  return plugin_bandwidth(data.x, data.y).bandwidth * canonical_ratio(kernel);
}

double canonical_ratio(Kernel kernel) {
  // AMISE-optimal bandwidths scale as (R(K) / mu2(K)^2)^(1/5), of each kernel scaled to
  // integrate to 1 (kernels.h).
  auto delta = []<class K>(K) { return std::pow(K::roughness / (K::mu2 * K::mu2), 0.2); };
  return visit_kernel(kernel, delta) / delta(kernels::Gaussian{});
}

}  // namespace nwreg
