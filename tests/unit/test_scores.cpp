// The attention scores other than gaussian (engine/score_attention.h, learn/score_fit.h):
// predictions, attention rows, slopes, leave-one-out errors (mean and sum) and their gradients
// in the parameters, tr(H) and effective neighbours at given parameters, against PyTorch's
// autograd (tests/golden/make_golden_scores.py -> tests/golden/scores.json); gradients against
// finite differences; thread invariance; the model file's round trip; what the learner reaches.

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/engine/score_attention.h"
#include "nwreg/learn/fit.h"
#include "nwreg/learn/score_fit.h"
#include "nwreg/model/model.h"

using namespace nwreg;
using Json = nlohmann::json;

namespace {

const Json& golden() {
  static const Json j = [] {
    std::ifstream in(testing::source_path("tests/golden/scores.json"));
    return Json::parse(in);
  }();
  return j;
}

// The case's data: the first `rows` rows of its file, with its sample weights.
Dataset case_data(const Json& c) {
  CsvReader r(testing::source_path("data/" + c["file"].get<std::string>()), CsvOptions{});
  ColumnChoice choice;
  choice.x = c["x"].get<std::vector<std::string>>();
  choice.y = c["y"].get<std::string>();
  Dataset d = read_dataset(r, choice);
  d.n = c["rows"].get<std::size_t>();
  d.x.resize(d.n * d.d);
  d.y.resize(d.n);
  if (!c["weights"].is_null()) d.weight = c["weights"].get<std::vector<double>>();
  return d;
}

ScoreParameters case_parameters(const Json& c, std::size_t d) {
  ScoreParameters p;
  p.score = parse_score(c["score"].get<std::string>());
  p.d = d;
  p.hidden = c["hidden"].get<std::size_t>();
  p.bias = c["bias"].get<bool>();
  p.theta = c["theta"].get<std::vector<double>>();
  return p;
}

std::vector<double> flat(const Json& rows) {
  std::vector<double> v;
  for (const auto& r : rows)
    for (double x : r.get<std::vector<double>>()) v.push_back(x);
  return v;
}

// |a - b| within rel of the larger magnitude (or of `scale` where given).
void check_close(double a, double b, double rel, double scale = 0) {
  CHECK(std::abs(a - b) <= rel * std::max({std::abs(a), std::abs(b), scale}));
}

}  // namespace

TEST_CASE("scores: predictions, rows, slopes, LOO errors and gradients equal PyTorch's") {
  int cases = 0;
  for (const Json& c : golden()["cases"]) {
    CAPTURE(c["name"].get<std::string>());
    const Dataset data = case_data(c);
    const ScoreParameters p = case_parameters(c, data.d);
    const ScoreAttention e(data, p);
    const std::vector<double> q = flat(c["queries"]);
    const std::size_t m = q.size() / data.d;
    std::vector<double> f(m), slope(m * data.d);
    e.predict(q.data(), m, f.data());
    double yrange = 0;
    for (double y : data.y) yrange = std::max(yrange, std::abs(y));
    for (std::size_t j = 0; j < m; ++j) check_close(f[j], c["predict"][j].get<double>(), 1e-12, yrange);
    e.slopes(q.data(), m, slope.data());
    const std::vector<double> want_slope = flat(c["slopes"]);
    double slope_scale = 0;
    for (double s : want_slope) slope_scale = std::max(slope_scale, std::abs(s));
    for (std::size_t k = 0; k < slope.size(); ++k) check_close(slope[k], want_slope[k], 1e-10, slope_scale);
    e.weights(q.data(), 1, [&](std::size_t, const double* a) {
      for (std::size_t i = 0; i < data.n; ++i) check_close(a[i], c["attention"][i].get<double>(), 1e-12, 1e-300);
    });
    for (const char* loss : {"mean", "sum"}) {
      const bool sum = std::string(loss) == "sum";
      const LooResult r = e.objective(!p.theta.empty(), nullptr, sum);
      check_close(r.mse, c[std::string("loo_") + loss].get<double>(), 1e-12);
      if (p.theta.empty()) continue;
      const auto g = c[std::string("gradient_") + loss].get<std::vector<double>>();
      double scale = 0;
      for (double v : g) scale = std::max(scale, std::abs(v));
      REQUIRE(r.gradient.size() == g.size());
      for (std::size_t k = 0; k < g.size(); ++k) check_close(r.gradient[k], g[k], 1e-10, scale);
    }
    const InSample in = e.insample();
    check_close(in.trace, c["trace"].get<double>(), 1e-12);
    check_close(in.mse, c["insample_mse"].get<double>(), 1e-12);
    check_close(e.loo_detail().neighbours, c["neighbours"].get<double>(), 1e-12);
    ++cases;
  }
  CHECK(cases == 8);
}

TEST_CASE("scores: the gradient in the parameters equals central finite differences") {
  for (const Json& c : golden()["cases"]) {
    if (c["theta"].empty()) continue;
    CAPTURE(c["name"].get<std::string>());
    const Dataset data = case_data(c);
    const ScoreParameters p = case_parameters(c, data.d);
    const LooResult r = ScoreAttention(data, p).loo(true);
    for (std::size_t k = 0; k < p.theta.size(); ++k) {
      ScoreParameters up = p, down = p;
      const double step = 1e-5 * std::max(1.0, std::abs(p.theta[k]));
      up.theta[k] += step;
      down.theta[k] -= step;
      const double fd = (ScoreAttention(data, up).loo(false).mse - ScoreAttention(data, down).loo(false).mse) / (2 * step);
      CHECK(std::abs(fd - r.gradient[k]) <= 1e-5 * std::max(1.0, std::abs(fd)));
    }
  }
}

TEST_CASE("scores: every result is the same for any number of threads") {
  const Json& c = golden()["cases"][7];  // additive, two columns, sample weights
  const Dataset data = case_data(c);
  const ScoreParameters p = case_parameters(c, data.d);
  ThreadPool pool(4);
  EngineOptions threaded;
  threaded.pool = &pool;
  const ScoreAttention one(data, p), many(data, p, threaded);
  const LooResult a = one.loo(true), b = many.loo(true);
  CHECK(a.mse == b.mse);
  CHECK(a.gradient == b.gradient);
  std::vector<double> fa(data.n), fb(data.n);
  one.predict(data.x.data(), data.n, fa.data());
  many.predict(data.x.data(), data.n, fb.data());
  CHECK(fa == fb);
  CHECK(one.loo_detail().residual == many.loo_detail().residual);
}

TEST_CASE("scores: a score that overflows is an error naming the query, never a NaN") {
  const Dataset data = testing::make_dataset({1, 2, 3}, {1, 2, 3});
  ScoreParameters p;
  p.score = Score::dot;
  const ScoreAttention e(data, p);
  const double q[] = {1, 1e308};
  double f[2];
  try {
    e.predict(q, 2, f);
    FAIL("no error");
  } catch (const QueryError& err) {
    CHECK(err.index() == 1);
    CHECK(std::string(err.what()).find("overflows its dot score") != std::string::npos);
  }
}

TEST_CASE("scores: a dot score favours large keys, with keys of equal norm it is a Gaussian kernel") {
  // On the unit circle |q - k|^2 = 2 - 2 q.k: the dot score's softmax is the Gaussian kernel's
  // at h = 1, the query's norm cancelling and every key's the same.
  Dataset circle;
  circle.n = 12;
  circle.d = 2;
  circle.x_names = {"a", "b"};
  for (std::size_t i = 0; i < circle.n; ++i) {
    const double t = 2 * M_PI * static_cast<double>(i) / 12.5;
    circle.x.insert(circle.x.end(), {std::cos(t), std::sin(t)});
    circle.y.push_back(std::sin(3 * t) + static_cast<double>(i % 3));
  }
  ScoreParameters p;
  p.score = Score::dot;
  const ScoreAttention dot(circle, p);
  const Attention gauss(circle, {1.0, 1.0});
  const double q[] = {0.3, -2.0, 1.5, 0.7};
  double fd[2], fg[2];
  dot.predict(q, 2, fd);
  gauss.predict(q, 2, fg);  // the query's norm differs from the keys': it cancels
  CHECK(fd[0] == doctest::Approx(fg[0]).epsilon(1e-12));
  CHECK(fd[1] == doctest::Approx(fg[1]).epsilon(1e-12));
  CHECK(dot.loo(false).mse == doctest::Approx(gauss.loo(false).mse).epsilon(1e-12));
}

TEST_CASE("scores: the model file keeps the parameters, the model predicts byte for byte") {
  const Dataset data = testing::bundled("synthetic.csv", "x", "y");
  FitPlan plan;
  plan.score = Score::additive;
  plan.hidden = 3;
  plan.seed = 7;
  plan.fit.optimizer = Optimizer::adam;
  plan.fit.epochs = 20;
  plan.fit.lr = 0.05;
  const Model m = fit_model(data, plan, EngineOptions{});
  std::stringstream file;
  write_model(file, m);
  const Model back = read_model(file, "m.json");
  CHECK(back.score.score == Score::additive);
  CHECK(back.score.hidden == 3);
  CHECK(back.score.bias);
  CHECK(back.score.theta == m.score.theta);
  CHECK(back.df == m.df);
  std::vector<double> a(data.n), b(data.n);
  Fitted(data, m, EngineOptions{}).predict(data.x.data(), data.n, a.data());
  Fitted(data, back, EngineOptions{}).predict(data.x.data(), data.n, b.data());
  CHECK(a == b);
}

TEST_CASE("scores: the same seed gives the same start and fit, another seed another start") {
  const Dataset data = testing::bundled("synthetic.csv", "x", "y");
  const ScoreParameters a = score_start(Score::additive, data, 4, true, 1), b = score_start(Score::additive, data, 4, true, 1),
                        c = score_start(Score::additive, data, 4, true, 2);
  CHECK(a.theta == b.theta);
  CHECK(a.theta != c.theta);
  CHECK(a.theta.size() == 4 * 4);
  CHECK(score_start(Score::additive, data, 4, false, 1).theta.size() == 12);
  const ScoreParameters g = score_start(Score::general, data, 0, true, 0);
  CHECK(g.theta == std::vector<double>{1.0});
}

TEST_CASE("scores: learning reaches the issue's marks on the d2l sine") {
  // Gaussian bandwidth learned: LOO 0.370 (fit data/synthetic.csv). The additive score from the
  // default start (H = 8, seed 0, Adam 300 steps of 0.05) comes within 25% of it (it goes
  // below); general is no worse than the dot product it starts from, W = I.
  const Dataset data = testing::bundled("synthetic.csv", "x", "y");
  FitPlan plan;
  plan.fit.optimizer = Optimizer::adam;
  plan.fit.epochs = 300;
  plan.fit.lr = 0.05;
  const double gaussian = fit_model(data, FitPlan{}, EngineOptions{}).loo_mse.value();
  plan.score = Score::additive;
  const Model additive = fit_model(data, plan, EngineOptions{});
  CHECK(additive.loo_mse.value() <= 1.25 * gaussian);
  plan.score = Score::dot;
  const double dot = fit_model(data, plan, EngineOptions{}).loo_mse.value();
  plan.score = Score::general;
  const Model general = fit_model(data, plan, EngineOptions{});
  CHECK(general.loo_mse.value() <= dot);
  CHECK(general.history.front().loss == doctest::Approx(dot).epsilon(1e-12));  // it starts at W = I
  // The line search never rises: its end is at most its start.
  plan.fit.optimizer = Optimizer::line_search;
  plan.fit.epochs = 30;
  plan.fit.lr = 0.5;
  plan.score = Score::additive;
  const Model ls = fit_model(data, plan, EngineOptions{});
  CHECK(ls.loo_mse.value() <= ls.history.front().loss);
  CHECK(ls.df.value() > 1);
}

TEST_CASE("scores: learning does not depend on the units of x (it steps in standardised x)") {
  // A review found x times 1e6 learned nothing (LOO 0.961 against 0.274) while stepping in raw x.
  const Dataset data = testing::bundled("synthetic.csv", "x", "y");
  // (General starts at W = I, the dot product of x as given, whose softmax does depend on the
  // units; only its steps do not.)
  for (Score score : {Score::additive}) {
    for (Optimizer opt : {Optimizer::adam, Optimizer::sgd}) {
      FitPlan plan;
      plan.score = score;
      plan.fit.optimizer = opt;
      plan.fit.epochs = 60;
      plan.fit.lr = 0.05;
      const double base = fit_model(data, plan, EngineOptions{}).loo_mse.value();
      for (double c : {1e-6, 1e6}) {
        Dataset scaled = data;
        for (double& x : scaled.x) x = x * c + (score == Score::additive ? 1e3 * c : 0.0);  // and shifted
        CAPTURE(to_string(score));
        CAPTURE(c);
        CHECK(fit_model(scaled, plan, EngineOptions{}).loo_mse.value() == doctest::Approx(base).epsilon(1e-6));
      }
    }
  }
}
