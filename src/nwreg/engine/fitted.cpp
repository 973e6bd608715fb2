#include "nwreg/engine/fitted.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nwreg/base/distributions.h"
#include "nwreg/base/errors.h"
#include "nwreg/model/model.h"
#include "nwreg/base/numbers.h"
#include "nwreg/engine/inspect.h"
#include "nwreg/engine/score_attention.h"

namespace nwreg {
namespace {

EngineOptions with_model(EngineOptions e, const Model& m) {
  static_cast<Smoother&>(e) = m;
  return e;
}

// The engine for the model's score: ScoreAttention, or Attention on x (or on the metric's map of x).
std::unique_ptr<const Pooling> make_engine(const Dataset& train, const Model& m, const EngineOptions& e,
                                           const std::optional<MetricMap>& map) {
  if (!m.score.distance()) return std::make_unique<const ScoreAttention>(train, m.score, e);
  if (map) return std::make_unique<const Attention>(map->data(), std::vector<double>(m.metric.rank, 1.0), with_model(e, m));
  return std::make_unique<const Attention>(train, m.bandwidth, with_model(e, m));
}

}  // namespace



void check_level(double level) {
  if (!(level > 0 && level < 1)) throw ParameterError("level", "must be > 0 and < 1, got " + format_double(level));
}

double loo_r2(const Dataset& data, double loo_mse) {
  long double mean = 0, ss = 0, total = 0;
  auto w = [&](std::size_t i) { return data.weight.empty() ? 1.0L : static_cast<long double>(data.weight[i]); };
  for (std::size_t i = 0; i < data.n; ++i) {
    mean += w(i) * data.y[i];
    total += w(i);
  }
  mean /= total;
  for (std::size_t i = 0; i < data.n; ++i) ss += w(i) * (data.y[i] - mean) * (data.y[i] - mean);
  const double var = static_cast<double>(ss / total);
  return var > 0 ? 1 - loo_mse / var : 0.0;
}

Fitted::Fitted(const Dataset& train, const Model& model, EngineOptions engine)
    : rows_(train, model.robustness),
      map_(model.metric.rank ? std::optional<MetricMap>(std::in_place, model.metric, *rows_) : std::nullopt),
      d_(train.d),
      n_(train.n),
      weight_(rows_->weight),
      engine_(make_engine(*rows_, model,
                          [&] {
                            engine.loss = rows_.reweighed() ? LossFunction::bisquare : LossFunction::squared;
                            return engine;
                          }(),
                          map_)) {}

const double* Fitted::mapped(const double* q, std::size_t m, std::vector<double>& z) const {
  if (!map_) return q;
  z = map_->queries(q, m);
  return z.data();
}

std::vector<double> Fitted::reach(std::size_t count) const {
  const auto* attention = dynamic_cast<const Attention*>(engine_.get());
  return attention && !map_ ? nwreg::reach(*attention, count) : std::vector<double>{};
}

std::vector<double> Fitted::nearest_distances(const double* q, std::size_t m) const {
  std::vector<double> z, out(m);
  engine_->nearest_distances(mapped(q, m, z), m, out.data());
  return out;
}

void Fitted::predict(const double* q, std::size_t m, double* out) const {
  std::vector<double> z;
  engine_->predict(mapped(q, m, z), m, out);
}

void Fitted::weights(const double* q, std::size_t m,
                     const std::function<void(std::size_t, const double*)>& row) const {
  std::vector<double> z;
  engine_->weights(mapped(q, m, z), m, row);
}

namespace {

// The squared residuals in units of 2^2k, 2^k the binary scale of the largest |r|: no square
// over- or underflows, whatever the units of y (1e300 or 1e-300); a standard error made from
// them is multiplied back by 2^k.
std::vector<double> scaled_squares(const LooDetail& loo, int& k) {
  double top = 0;
  for (double r : loo.residual) top = std::max(top, std::abs(r));
  k = top > 0 && std::isfinite(top) ? std::ilogb(top) : 0;
  std::vector<double> r2;
  for (double r : loo.residual) r2.push_back(std::ldexp(r, -k) * std::ldexp(r, -k));
  return r2;
}

}  // namespace

namespace {

// The mean of values weighted (none: equally), and Kish's effective count of the weights,
// (sum w)^2 / sum w^2: the mean's degrees of freedom.
std::pair<double, double> weighted_mean(const std::vector<double>& v, const std::vector<double>& weight) {
  double sum = 0, total = 0, squares = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double w = weight.empty() ? 1.0 : weight[i];
    sum += w * v[i], total += w, squares += w * w;
  }
  return {total > 0 ? sum / total : 0.0, squares > 0 ? total * total / squares : 1.0};
}

// The band's degrees of freedom at nu = 1 / sum w^2: nu, or where sigma^2(q) is topped up to
// (nu / R) sigma^2(q) + (1 - nu / R) s^2 (R = min_band_df, s^2 the mean of `rows` residuals'
// worth) Satterthwaite's for that mixture, 1 / ((nu / R)^2 / nu + (1 - nu / R)^2 / rows).
double band_df(double nu, double rows) {
  if (nu >= min_band_df) return nu;
  const double share = nu / min_band_df;
  return 1 / (share * share / nu + (1 - share) * (1 - share) / rows);
}

}  // namespace

double band_quantile(double level, double nu) {
  if (!(nu < 1e7)) {
    // From the upper tail, (1 - level) / 2, exact for level >= 1/2: 0.5 + level / 2 would round
    // to 1 (an infinite quantile) for a level within 1e-16 of 1, and lose the tail's digits near it.
    return level >= 0.5 ? -normal_quantile((1 - level) / 2) : normal_quantile(0.5 + level / 2);
  }
  // t with P(T > t) = (1 - level) / 2. The tail is convex and falling for t > 0, so Newton's
  // steps from the normal quantile (below t's) rise to it without overshooting: a few steps a
  // row (standard errors ask one per row, each with its own nu), to 1e-12 as the bisection
  // below, which answers where they fail.
  const double upper = (1 - level) / 2;
  if (level > 0) {
    const double logc = std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2) - 0.5 * std::log(nu * M_PI);
    double t = band_quantile(level);
    for (int i = 0; i < 60; ++i) {
      const double density = std::exp(logc - (nu + 1) / 2 * std::log1p(t * t / nu));
      const double step = (student_upper(t, nu) - upper) / density;
      if (!std::isfinite(step)) break;
      if (step <= 1e-12 * t) return t + std::max(step, 0.0);  // below t's tail's own rounding: a step back is noise
      t += step;
    }
  }
  double lo = band_quantile(level), hi = std::max(2 * lo, 1.0);
  while (student_upper(hi, nu) > upper && hi < 1e150) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_upper(mid, nu) > upper ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

Band Fitted::predict_band(const double* q, std::size_t m, double level, const LooDetail& loo, double* out) const {
  check_level(level);
  return predict_band(q, m, level, loo, out, nullptr, std::nullopt);
}

Band Fitted::predict_band(const double* q, std::size_t m, double level, const LooDetail& loo, double* out,
                          const Fitted* centre, std::optional<double> critical) const {
  int k = 0;
  const std::vector<double> r2 = scaled_squares(loo, k);
  Band band;
  band.se.resize(m);
  std::vector<double> w2(m), sigma2(m), a2(centre ? m : 0), zq;
  engine_->predict_detail(mapped(q, m, zq), m, r2, out, w2.data(), sigma2.data(), centre ? a2.data() : nullptr);
  for (std::size_t j = 0; j < m; ++j) band.se[j] = std::ldexp(std::sqrt(sigma2[j] * w2[j]), k);
  const double z = critical ? *critical : band_quantile(level);
  if (!centre) {
    for (std::size_t j = 0; j < m; ++j) {
      band.lower.push_back(out[j] - z * band.se[j]);
      band.upper.push_back(out[j] + z * band.se[j]);
    }
    return band;
  }
  // The bias-corrected estimate and its standard error (the same residuals: the same noise),
  // the multiplier Student's t with the variance estimate's degrees of freedom: sigma^2(q) is
  // the kernel-weighted mean of squared residuals sum a_i r_i^2, a_i the normalised kernel
  // weights (NW's, whatever the method), and Satterthwaite's for it is nu = 1 / sum a_i^2 (NW's
  // a are its estimate's weights; a local polynomial's equivalent weights vary more, and their
  // 1 / sum w_i^2 would understate sigma^2's degrees of freedom).
  // Where fewer than min_band_df residuals inform sigma^2(q) (a gap, past the data), it is topped
  // up to min_band_df of them by the mean squared residual of all rows: (nu sigma^2(q) +
  // (min_band_df - nu) s^2) / min_band_df, with that mixture's degrees of freedom (below).
  // (The mean weighted as the rows are: sample times robustness weights.)
  const auto [mean_r2, rows_df] = weighted_mean(r2, weight_);
  std::vector<double> fc(m), w2c(m), zc;
  centre->engine_->predict_detail(centre->mapped(q, m, zc), m, r2, fc.data(), w2c.data(), sigma2.data());
  // Where data are thin (a gap, past the ends) the degree-q fit extrapolates and its standard
  // error runs away from the estimate's. The correction is then taken in part: the centre
  // f + lambda (f_q - f), lambda = min(1, (R se / se_q)^2), a linear smoother with weights
  // (1 - lambda) w + lambda w_q, whose variance is sigma^2 ((1 - lambda)^2 sum w^2 + 2 lambda
  // (1 - lambda) sum w w_q + lambda^2 sum w_q^2): the cross sum from both fits' weight rows,
  // or where those would be too many (over 1e9 weights) its bound sqrt(sum w^2 sum w_q^2),
  // se <= (1 - lambda) se_p + lambda se_q. lambda = 1 (the whole correction) wherever
  // se_q <= R se, as in dense data; the correction's own variance, lambda^2 se_q^2 = R^4 se^4 /
  // se_q^2, fades as se_q grows, and far into a gap the band is the estimate's.
  std::vector<double> lambda(m, 1.0), cross(m, std::numeric_limits<double>::quiet_NaN());
  std::vector<std::size_t> partial;
  for (std::size_t j = 0; j < m; ++j)
    if (w2c[j] > rbc_ratio * rbc_ratio * w2[j]) {
      lambda[j] = rbc_ratio * rbc_ratio * w2[j] / w2c[j];
      partial.push_back(j);
    }
  if (!partial.empty() && static_cast<double>(partial.size()) * static_cast<double>(n_) <= 1e9) {
    // In chunks of about 1e7 weights held at once (80 MB): the estimate's rows, then the centre's.
    const std::size_t chunk = std::max<std::size_t>(1, 10000000 / std::max<std::size_t>(n_, 1));
    for (std::size_t at = 0; at < partial.size(); at += chunk) {
      const std::size_t count = std::min(chunk, partial.size() - at);
      std::vector<double> qs, rows(count * n_);
      for (std::size_t i = 0; i < count; ++i) qs.insert(qs.end(), q + partial[at + i] * d_, q + (partial[at + i] + 1) * d_);
      weights(qs.data(), count, [&](std::size_t i, const double* a) { std::copy_n(a, n_, rows.begin() + i * n_); });
      centre->weights(qs.data(), count, [&](std::size_t i, const double* a) {
        double c = 0;
        for (std::size_t r = 0; r < n_; ++r) c += rows[i * n_ + r] * a[r];
        cross[partial[at + i]] = c;
      });
    }
  }
  for (std::size_t j = 0; j < m; ++j) {
    const double nu = a2[j] > 0 ? 1 / a2[j] : 1e300;
    const double t = critical ? *critical : band_quantile(level, band_df(nu, rows_df));
    const double s2 = nu >= min_band_df ? sigma2[j] : (nu * sigma2[j] + (min_band_df - nu) * mean_r2) / min_band_df;
    const double l = lambda[j];
    const double c = std::isnan(cross[j]) ? std::sqrt(w2[j] * w2c[j]) : cross[j];
    const double v = (1 - l) * (1 - l) * w2[j] + 2 * l * (1 - l) * c + l * l * w2c[j];
    const double centre_j = out[j] + l * (fc[j] - out[j]), se = std::ldexp(std::sqrt(s2 * std::max(v, 0.0)), k);
    // A query so far beyond the data that the corrected fit's powers of (x - q) / h overflow
    // (NW and local linear still answer there): the band about the estimate itself.
    const bool finite = std::isfinite(centre_j - t * se) && std::isfinite(centre_j + t * se);
    band.lower.push_back(finite ? centre_j - t * se : out[j] - t * band.se[j]);
    band.upper.push_back(finite ? centre_j + t * se : out[j] + t * band.se[j]);
  }
  return band;
}

Unsupported parse_unsupported(const std::string& name) {
  return parse_choice<Unsupported>(name, unsupported_choices, "out_of_reach", "policy");
}

OutOfReach engine_reach(Unsupported policy) {
  switch (policy) {
    case Unsupported::extrapolate: return OutOfReach::nearest;
    case Unsupported::empty: return OutOfReach::empty;
    default: return OutOfReach::error;
  }
}

TrainingRange::TrainingRange(const Dataset& train) : lo_(train.d, INFINITY), hi_(train.d, -INFINITY), checked_(train.d) {
  const std::size_t d = train.d;
  for (std::size_t i = 0; i < train.n; ++i)
    for (std::size_t k = 0; k < d; ++k) {
      lo_[k] = std::min(lo_[k], train.x[i * d + k]);
      hi_[k] = std::max(hi_[k], train.x[i * d + k]);
    }
  for (std::size_t k = 0; k < d; ++k) checked_[k] = !is_categorical(train.kind(k)) && hi_[k] > lo_[k];
}

PastRange TrainingRange::past(const double* q, std::size_t m) const {
  const std::size_t d = lo_.size();
  const std::vector<double>&lo = lo_, &hi = hi_;
  PastRange p;
  p.past.assign(m, 0);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t k = 0; k < d; ++k) {
      const double v = q[j * d + k];
      if (!checked_[k] || !(v < lo[k] || v > hi[k])) continue;
      const double beyond = v < lo[k] ? lo[k] - v : v - hi[k];
      const double ranges = beyond / (hi[k] - lo[k]);
      if (!p.past[j] && p.count++ == 0) p.first = j;
      p.past[j] = 1;
      if (p.beyond == 0 || ranges > p.ranges) {  // (beyond > 0 for every query past its column)
        p.column = k, p.beyond = beyond, p.ranges = ranges, p.lo = lo[k], p.hi = hi[k];
      }
    }
  return p;
}



std::string to_string(Interval interval) { return interval == Interval::rbc ? "rbc" : "plain"; }

std::optional<Model> bias_corrected(const Model& model) {
  if (!model.score.distance()) return std::nullopt;
  const std::size_t p = method_degree(model.method, model.degree), degree = std::max<std::size_t>(p + 1, 2);
  if (degree > max_degree) return std::nullopt;
  Model c = model;
  c.method = Method::local_polynomial;
  c.degree = degree;
  return c;
}

Simultaneous Fitted::simultaneous(const double* q, std::size_t m, double level, const Fitted* centre) const {
  check_level(level);
  if (d_ != 1) throw UsageError("`simultaneous`: a band over a curve, for one x column; got " + std::to_string(d_));
  std::vector<double> sorted(q, q + m);
  std::sort(sorted.begin(), sorted.end());
  Simultaneous s;
  // A pass over one fit's weight rows for kappa0: the angles between neighbouring unit weight
  // vectors, 2 asin(|T_j - T_j+1| / 2) (accurate for small angles, where acos of their dot
  // product is not).
  auto path = [&](const Fitted& f) {
    std::vector<double> prev;
    f.weights(sorted.data(), m, [&](std::size_t, const double* row) {
      const std::size_t n = f.n_;
      double top = 0, squares = 0;
      for (std::size_t i = 0; i < n; ++i) top = std::max(top, std::abs(row[i]));
      if (!(top > 0)) return;  // no answer here: not on the path
      for (std::size_t i = 0; i < n; ++i) squares += (row[i] / top) * (row[i] / top);
      std::vector<double> t(n, 0.0);
      for (std::size_t i = 0; i < n; ++i) t[i] = row[i] / top / std::sqrt(squares);
      if (!prev.empty()) {
        double gap = 0;
        for (std::size_t i = 0; i < n; ++i) gap += (t[i] - prev[i]) * (t[i] - prev[i]);
        s.kappa0 += 2 * std::asin(std::min(1.0, std::sqrt(gap) / 2));
      }
      prev = std::move(t);
    });
  };
  // The path is the band's own estimate's (the corrected one). The degrees of freedom are the
  // noise variance's, as the pointwise rbc band takes them: nu their harmonic mean over the
  // queries answered, each 1 / sum a_i^2 over its kernel weights, and at least min_band_df.
  path(centre ? *centre : *this);
  double inverse_nu = 0;
  std::size_t answered = 0;  // queries not out of reach (OutOfReach::empty)
  if (centre) {
    std::vector<double> f(m), a2(m), zq;
    const std::uint64_t before = engine_->counters().dropped_rows;  // (the band's own predictions count them)
    engine_->predict_detail(mapped(sorted.data(), m, zq), m, {}, f.data(), nullptr, nullptr, a2.data());
    uncounted_ += engine_->counters().dropped_rows - before;
    for (double v : a2)
      if (std::isfinite(v)) inverse_nu += std::min(1 / min_band_df, v), ++answered;
  }
  // 2 (1 - Phi(c)) + kappa0 / pi exp(-c^2 / 2) falls with c (with t: 2 P(T > c) + kappa0 / pi
  // (1 + c^2 / nu)^(-nu / 2), Sun and Loader's form for an estimated variance): bisect between
  // the pointwise quantile (where it is at least 1 - level) and a bound past it.
  const double alpha = 1 - level;
  s.nu = centre && inverse_nu > 0 ? static_cast<double>(answered) / inverse_nu : std::numeric_limits<double>::infinity();
  auto miss = [&](double c) {
    if (!(s.nu < 1e7)) return std::erfc(c / std::sqrt(2.0)) + s.kappa0 / M_PI * std::exp(-0.5 * c * c);
    return 2 * student_upper(c, s.nu) + s.kappa0 / M_PI * std::exp(-0.5 * s.nu * std::log1p(c * c / s.nu));
  };
  double lo = band_quantile(level, s.nu), hi = std::max(40.0, 4 * lo);
  while (miss(hi) > alpha && hi < 1e150) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (miss(mid) > alpha ? lo : hi) = mid;
  }
  s.critical = hi;
  return s;
}

Fitted::Slopes Fitted::slopes(const double* q, std::size_t m, const LooDetail* loo) const {
  if (map_) throw ParameterError("derivative", "not with a learned metric (`metric` full): its slopes are along A's rows");
  const std::size_t d = d_;  // a metric's map is refused above: queries and engine share x
  Slopes out;
  out.slope.resize(m * d);
  if (!loo) {
    engine_->slopes(q, m, out.slope.data());
    return out;
  }
  std::vector<double> norm(m * d), f(m), sigma2(m);
  engine_->slopes(q, m, out.slope.data(), norm.data());
  int scale = 0;
  const std::uint64_t before = engine_->counters().dropped_rows;  // (the predictions are counted once, by predict)
  engine_->predict_detail(q, m, scaled_squares(*loo, scale), f.data(), nullptr, sigma2.data());
  uncounted_ += engine_->counters().dropped_rows - before;
  out.se.resize(m * d);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t k = 0; k < d; ++k) out.se[j * d + k] = std::ldexp(std::sqrt(sigma2[j]), scale) * norm[j * d + k];
  return out;
}

}  // namespace nwreg
