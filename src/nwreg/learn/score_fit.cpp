#include "nwreg/learn/score_fit.h"

#include <cmath>
#include <limits>

#include "nwreg/base/errors.h"
#include "nwreg/base/random.h"
#include "nwreg/engine/score_attention.h"

namespace nwreg {
namespace {

// Normal deviates by Box-Muller from SplitMix64: the same stream on every platform, unlike
// std::normal_distribution.
class Normal {
 public:
  explicit Normal(std::uint64_t seed) : random_(seed) {}
  double operator()() {
    const double u1 = random_.uniform(true), u2 = random_.uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  }

 private:
  SplitMix64 random_;
};

// The coordinates learning runs in: x' = (x - c) / s per column, s the column's standard
// deviation (1 if it has none) and c its mean (0 for general and for additive without b,
// whose scores cannot absorb a shift). Scores are unchanged under the map of the parameters
// below (up to rounding), so the fit is that of x; only the steps no longer depend on x's units
// (x in years or in seconds since 1970, times 1e-100 or 1e100).
struct ScoreFrame {
  std::vector<double> c, s;
  ScoreFrame(const Dataset& data, const ScoreParameters& p) : c(data.d, 0.0), s(data.d, 1.0) {
    const bool shift = p.score == Score::additive && p.bias;
    for (std::size_t k = 0; k < data.d; ++k) {
      const double sd = column_stats(data, k).sd;
      if (sd > 0 && std::isfinite(sd)) s[k] = sd;
      if (!shift) continue;
      long double mean = 0;
      for (std::size_t i = 0; i < data.n; ++i) mean += data.x[i * data.d + k];
      c[k] = static_cast<double>(mean / static_cast<long double>(data.n));
    }
  }
  Dataset data(const Dataset& raw) const {
    Dataset z = raw;
    for (std::size_t i = 0; i < raw.n; ++i)
      for (std::size_t k = 0; k < raw.d; ++k) z.x[i * raw.d + k] = (raw.x[i * raw.d + k] - c[k]) / s[k];
    return z;
  }
  // The parameters for x' (to_frame) or back for x (!to_frame). general: W'_ab = s_a W_ab s_b;
  // additive: W_q' = W_q S, W_k' = W_k S, b' = b + (W_q + W_k) c.
  ScoreParameters map(ScoreParameters p, bool to_frame) const {
    const std::size_t d = p.d, H = p.hidden;
    double* t = p.theta.data();
    if (p.score == Score::general)
      for (std::size_t a = 0; a < d; ++a)
        for (std::size_t b = 0; b < d; ++b) t[a * d + b] = to_frame ? t[a * d + b] * s[a] * s[b] : t[a * d + b] / s[a] / s[b];
    if (p.score != Score::additive) return p;
    for (std::size_t h = 0; h < H; ++h) {
      double shift = 0;  // (W_q + W_k) c in x's parameters
      for (std::size_t k = 0; k < d; ++k) {
        double& wq = t[H + h * d + k];
        double& wk = t[H + H * d + h * d + k];
        if (to_frame) shift += (wq + wk) * c[k];
        wq = to_frame ? wq * s[k] : wq / s[k];
        wk = to_frame ? wk * s[k] : wk / s[k];
        if (!to_frame) shift += (wq + wk) * c[k];
      }
      if (p.bias) t[H + 2 * H * d + h] += to_frame ? shift : -shift;
    }
    return p;
  }
};

}  // namespace

ScoreParameters score_start(Score score, const Dataset& data, std::size_t hidden, bool bias, std::uint64_t seed) {
  ScoreParameters p;
  p.score = score;
  p.d = data.d;
  const std::size_t d = data.d;
  if (score == Score::general) {
    p.theta.assign(d * d, 0.0);
    for (std::size_t k = 0; k < d; ++k) p.theta[k * d + k] = 1;
  }
  if (score != Score::additive) return p;
  p.hidden = hidden;
  p.bias = bias;
  check_score(ScoreParameters{score, d, hidden, bias, std::vector<double>(p.size())}, "`hidden`");
  std::vector<double> mean(d), scale(d);
  for (std::size_t k = 0; k < d; ++k) {
    for (std::size_t i = 0; i < data.n; ++i) mean[k] += data.x[i * d + k] / static_cast<double>(data.n);
    const double sd = column_stats(data, k).sd;
    scale[k] = 1 / ((sd > 0 ? sd : std::max(std::abs(mean[k]), 1.0)) * std::sqrt(static_cast<double>(d)));
  }
  Normal normal(seed);
  const std::size_t H = hidden;
  p.theta.assign(p.size(), 0.0);
  for (std::size_t h = 0; h < H; ++h) p.theta[h] = normal();
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t k = 0; k < d; ++k) p.theta[H + h * d + k] = normal() * scale[k];
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t k = 0; k < d; ++k) p.theta[H + H * d + h * d + k] = normal() * scale[k];
  if (bias)
    for (std::size_t h = 0; h < H; ++h) {
      double centre = 0;
      for (std::size_t k = 0; k < d; ++k) centre += (p.theta[H + h * d + k] + p.theta[H + H * d + h * d + k]) * mean[k];
      p.theta[H + 2 * H * d + h] = -centre + 0.5 * normal();
    }
  return p;
}

ScoreFit fit_score(const Dataset& raw, const ScoreParameters& raw_start, const FitOptions& options,
                   const std::function<void(const Epoch&)>& on_epoch) {
  EngineOptions engine = options.engine;
  engine.progress = nullptr;
  const ScoreAttention first(raw, raw_start, engine);
  const std::size_t most = options.descent_rows.value_or(sampled_descent_rows);
  const std::vector<std::size_t> rows = first.spread_rows(most == 0 ? std::numeric_limits<std::size_t>::max() : most);
  first.loo(false, &rows);  // names a row whose score overflows at the start, or too few rows
  const ScoreFrame frame(raw, raw_start);
  const Dataset data = frame.data(raw);
  const ScoreParameters start = frame.map(raw_start, true);
  const bool sum = options.loss == Loss::sum;
  ScoreFit res;
  auto at = [&](const std::vector<double>& theta) {
    ScoreParameters p = start;
    p.theta = theta;
    return p;
  };
  auto eval = [&](const std::vector<double>& theta) {
    ++res.evaluations;
    for (double v : theta)
      if (!std::isfinite(v)) return LooResult{std::numeric_limits<double>::infinity(), {}, 0, 0};
    try {
      return ScoreAttention(data, at(theta), engine).objective(true, &rows, sum);
    } catch (const DataError&) {  // a step so long that a score overflows: unusable
      return LooResult{std::numeric_limits<double>::infinity(), {}, 0, 0};
    }
  };
  auto record = [&](int epoch, const std::vector<double>&, double loss) {
    Epoch e{epoch, {}, loss, {}};
    if (on_epoch) on_epoch(e);
    record_epoch(res.history, std::move(e));
  };
  const Descent dsc = options.optimizer == Optimizer::line_search
                          ? line_search(start.theta, options, eval, record)
                          : fixed_steps(start.theta, options, options.optimizer == Optimizer::adam, eval, record);
  res.parameters = frame.map(at(dsc.theta), false);
  res.stop_reason = dsc.stop_reason;
  res.loo_mse = ScoreAttention(raw, res.parameters, engine).loo(false).mse;  // over every row, the mean, in x
  return res;
}

}  // namespace nwreg
