// The series over boxes (several columns, wide bandwidths) against sums over every key in long
// double, and the passes that use it against the same passes summed key by key.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "helpers.h"
#include "nwreg/engine/attention.h"
#include "nwreg/kernel/gauss_boxes.h"
#include "nwreg/learn/bandwidth.h"

using namespace nwreg;

namespace {

// n keys uniform on [offset, offset + 5] x [0, 5]^(d - 1), by column; y = sin x1 + x2 + noise +
// 100 (an offset y0 takes out); weights in [0, 1], a tenth of them 0, where asked.
struct BoxKeys {
  std::size_t n = 0, d = 0;
  std::vector<double> x, y, w;
};
BoxKeys box_keys(std::size_t n, std::size_t d, double offset, bool weighed, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 5), noise(-0.5, 0.5), unit(0, 1);
  BoxKeys k;
  k.n = n, k.d = d;
  k.x.resize(n * d);
  for (std::size_t c = 0; c < d; ++c)
    for (std::size_t i = 0; i < n; ++i) k.x[c * n + i] = (c == 0 ? offset : 0.0) + u(g);
  for (std::size_t i = 0; i < n; ++i) {
    k.y.push_back(std::sin(k.x[i] - offset) + k.x[n + i] + noise(g) + 100);
    if (weighed) k.w.push_back(i % 10 == 3 ? 0.0 : unit(g));
  }
  return k;
}

// The sums over every key, and the gradient's: t_k = sum w E D_k, v_k = sum w (y - y0) E D_k,
// D_k = (x_k - q_k)^2 / h_k^2 (tabs: the sum of |v_k|'s terms).
struct BoxExact {
  long double s0 = 0, s1 = 0, abs1 = 0;
  std::vector<long double> t, v, tabs;
};
BoxExact box_exact(const BoxKeys& k, const double* q, const std::vector<double>& h, double y0) {
  BoxExact e;
  e.t.assign(k.d, 0), e.v.assign(k.d, 0), e.tabs.assign(k.d, 0);
  std::vector<long double> z(k.d);
  for (std::size_t i = 0; i < k.n; ++i) {
    long double r2 = 0;
    for (std::size_t c = 0; c < k.d; ++c) {
      z[c] = (static_cast<long double>(k.x[c * k.n + i]) - q[c]) / h[c];
      r2 += z[c] * z[c];
    }
    const long double wt = (k.w.empty() ? 1.0L : k.w[i]) * std::exp(-r2 / 2);
    e.s0 += wt;
    e.s1 += wt * (k.y[i] - y0);
    e.abs1 += wt * std::fabs(k.y[i] - y0);
    for (std::size_t c = 0; c < k.d; ++c) {
      e.t[c] += wt * z[c] * z[c];
      e.v[c] += wt * z[c] * z[c] * (k.y[i] - y0);
      e.tabs[c] += wt * z[c] * z[c] * std::fabs(k.y[i] - y0);
    }
  }
  return e;
}

// The series' sums at q against long-double sums over every key (and the gradient's where the
// series was made for it: within 1e-12 of the sum of their terms' sizes).
void check_sums(const GaussBoxes& boxes, const BoxKeys& k, const double* q, const std::vector<double>& h, double y0,
                bool gradient = false) {
  const BoxExact e = box_exact(k, q, h, y0);
  double s0, s1;
  std::vector<double> t(k.d, -1), v(k.d, -1);
  REQUIRE(boxes.sums(q, s0, s1, gradient ? t.data() : nullptr, gradient ? v.data() : nullptr));
  CHECK(std::abs(s0 - static_cast<double>(e.s0)) <= 1e-13 * static_cast<double>(e.s0));
  CHECK(std::abs(s1 - static_cast<double>(e.s1)) <= 1e-13 * static_cast<double>(e.abs1 + e.s0));
  if (!gradient) return;
  for (std::size_t c = 0; c < k.d; ++c) {
    CAPTURE(c);
    CHECK(std::abs(t[c] - static_cast<double>(e.t[c])) <= 1e-12 * static_cast<double>(e.t[c] + e.s0));
    CHECK(std::abs(v[c] - static_cast<double>(e.v[c])) <= 1e-12 * static_cast<double>(e.tabs[c] + e.s0));
  }
}

// n rows over [0, 10]^d with y = sin x1 + cos x2 + noise; `repeat`: every fifth row a copy of
// the one before (merged keys); `offset` added to the first column.
Dataset box_columns(std::size_t n, std::size_t d, double offset, bool repeat, bool weighed) {
  std::mt19937_64 g(20261202);
  std::uniform_real_distribution<double> u(0, 10), unit(0, 1);
  std::normal_distribution<double> noise(0, 0.5);
  Dataset out = testing::make_dataset({0.0}, {0.0});
  out.d = d;
  out.x.clear(), out.y.clear();
  out.x_names.clear();
  for (std::size_t c = 0; c < d; ++c) out.x_names.push_back("x" + std::to_string(c + 1));
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> x(d);
    for (double& v : x) v = u(g);
    x[0] += offset;
    if (repeat && i % 5 == 4) std::copy(out.x.end() - static_cast<std::ptrdiff_t>(d), out.x.end(), x.begin());
    out.x.insert(out.x.end(), x.begin(), x.end());
    out.y.push_back(std::sin(x[0] - offset) + std::cos(x[1]) + noise(g));
    if (weighed) out.weight.push_back(i % 7 == 2 ? 0.0 : 0.5 + unit(g));
  }
  out.n = n;
  return out;
}

}  // namespace

TEST_CASE("series over boxes: the sums over every key to the tolerance, at any offset, with weights") {
  // 20,000 keys in 2 and 3 columns at bandwidths from a fifth of the span to four times it,
  // for many rows (the series pays); queries at keys and at the box's corners; outside it the
  // series does not answer.
  for (std::size_t d : {2, 3})
    for (double offset : {0.0, 1.7e9})
      for (bool weighed : {false, true})
        for (double h0 : d == 2 ? std::vector<double>{1.0, 2.5, 20.0} : std::vector<double>{8.0, 20.0}) {
          // (Three columns at narrower bandwidths: the series would cost more than the keys' sums.)
          CAPTURE(d);
          CAPTURE(offset);
          CAPTURE(weighed);
          CAPTURE(h0);
          const BoxKeys k = box_keys(20000, d, offset, weighed, 7);
          std::vector<double> h(d, h0);
          h[1] *= 1.5;
          const double y0 = 100;
          const GaussBoxes boxes(k.x.data(), k.n, d, weighed ? k.w.data() : nullptr, k.y.data(), y0, h.data(), 1e-16,
                                 1000000, 1e6 * 2e4);
          // And made for the gradient too.
          const GaussBoxes with_gradient(k.x.data(), k.n, d, weighed ? k.w.data() : nullptr, k.y.data(), y0,
                                         h.data(), 1e-16, 1000000, 1e6 * 2e4, true);
          REQUIRE(boxes.usable());
          REQUIRE(with_gradient.usable());
          CHECK(boxes.order() >= 2);
          for (int j = 0; j < 20 + (1 << d); ++j) {
            std::vector<double> q(d);
            for (std::size_t c = 0; c < d; ++c) {
              if (j < 20) {
                q[c] = k.x[c * k.n + static_cast<std::size_t>(j) * (k.n / 20)];
              } else {  // the extreme keys' corners
                double lo = k.x[c * k.n], hi = lo;
                for (std::size_t i = 0; i < k.n; ++i) lo = std::min(lo, k.x[c * k.n + i]), hi = std::max(hi, k.x[c * k.n + i]);
                q[c] = (j >> c) & 1 ? hi : lo;
              }
            }
            CAPTURE(j);
            check_sums(boxes, k, q.data(), h, y0);
            check_sums(with_gradient, k, q.data(), h, y0, true);
          }
          {  // the gradient's sums asked of a series made without them: not answered
            std::vector<double> q, t(d), v(d);
            for (std::size_t c = 0; c < d; ++c) q.push_back(k.x[c * k.n]);
            double s0, s1;
            CHECK_FALSE(boxes.sums(q.data(), s0, s1, t.data(), v.data()));
          }
          std::vector<double> out(d, offset + 2.5);
          out[d - 1] = 5.5;  // (every column's keys lie in [0, 5] but the first's)
          double s0, s1;
          CHECK_FALSE(boxes.sums(out.data(), s0, s1));
        }
}

TEST_CASE("series over boxes: keys in two tight clusters at opposite corners, ties among them") {
  // Half the keys within 0.01 of (0, 0), half within 0.01 of (5, 5), every tenth a copy of the
  // one before: a query's own cluster carries its sum, the far one's terms cancel most.
  std::mt19937_64 g(9);
  std::uniform_real_distribution<double> u(0, 0.01);
  BoxKeys k;
  k.n = 10000, k.d = 2;
  k.x.resize(2 * k.n);
  for (std::size_t i = 0; i < k.n; ++i) {
    const double c = i % 2 ? 5.0 : 0.0;
    for (std::size_t col = 0; col < 2; ++col)
      k.x[col * k.n + i] = i % 10 == 9 ? k.x[col * k.n + i - 2] : c + u(g);
    k.y.push_back(c + u(g) + 100);
  }
  for (double h0 : {1.5, 3.0, 10.0}) {
    CAPTURE(h0);
    const std::vector<double> h = {h0, h0};
    const GaussBoxes boxes(k.x.data(), k.n, 2, nullptr, k.y.data(), 100, h.data(), 1e-16, 1000000, 1e6 * 1e4);
    REQUIRE(boxes.usable());
    for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{19}, std::size_t{5000}}) {
      const double q[2] = {k.x[i], k.x[k.n + i]};
      CAPTURE(i);
      check_sums(boxes, k, q, h, 100);
    }
  }
}

TEST_CASE("series over boxes: keys along the anti-diagonal, queries at the empty corners") {
  // Where a key's terms cancel most (a.b < 0 across the box): every key on the line from (0, 5)
  // to (5, 0), the queries at (0, 0) and (5, 5), far from all of them.
  BoxKeys k;
  k.n = 8000, k.d = 2;
  k.x.resize(2 * k.n);
  for (std::size_t i = 0; i < k.n; ++i) {
    const double t = 5.0 * static_cast<double>(i) / static_cast<double>(k.n - 1);
    k.x[i] = t, k.x[k.n + i] = 5 - t;
    k.y.push_back(std::sin(t) + 100);
  }
  for (double h0 : {1.0, 1.5, 3.0, 10.0}) {
    CAPTURE(h0);
    const std::vector<double> h = {h0, h0};
    const GaussBoxes boxes(k.x.data(), k.n, 2, nullptr, k.y.data(), 100, h.data(), 1e-16, 1000000, 1e6 * 8e3);
    if (!boxes.usable()) continue;
    for (double c : {0.0, 5.0}) {
      const double q[2] = {c, c};
      CAPTURE(c);
      check_sums(boxes, k, q, h, 100);
    }
  }
}

TEST_CASE("series over boxes: not made where the bandwidth is narrow or the rows few") {
  const BoxKeys k = box_keys(20000, 2, 0.0, false, 8);
  const std::vector<double> narrow = {0.1, 0.1}, wide = {5.0, 5.0};
  CHECK_FALSE(GaussBoxes(k.x.data(), k.n, 2, nullptr, k.y.data(), 100, narrow.data(), 1e-16, 1000000, 1e6 * 2e4).usable());
  // Ten rows: making the series costs more than their 200,000 key-by-key terms.
  CHECK_FALSE(GaussBoxes(k.x.data(), k.n, 2, nullptr, k.y.data(), 100, wide.data(), 1e-16, 10, 10 * 2e4).usable());
  CHECK(GaussBoxes(k.x.data(), k.n, 2, nullptr, k.y.data(), 100, wide.data(), 1e-16, 1000, 1000 * 2e4).usable());
}

TEST_CASE("series over boxes: LOO errors and predictions equal the key-by-key sums, which the series replaces") {
  // Wide bandwidths over 6,000 rows: every key is in reach, and the passes (the LOO error,
  // predictions, the in-sample fit, the gradients of both) take the series. Merged keys
  // (repeated rows), sample weights with zeros, a column near 1.7e9, three columns.
  struct Case {
    std::size_t d;
    double offset;
    bool repeat, weighed;
  };
  for (const Case& c : {Case{2, 0, false, false}, Case{2, 0, true, true}, Case{2, 1.7e9, false, true}, Case{3, 0, true, false}})
    for (double h0 : c.d == 2 ? std::vector<double>{6.0, 30.0} : std::vector<double>{30.0, 60.0}) {
      // (Three columns: the series pays from wider bandwidths.)
      CAPTURE(c.d);
      CAPTURE(c.offset);
      CAPTURE(c.repeat);
      CAPTURE(c.weighed);
      CAPTURE(h0);
      const Dataset data = box_columns(6000, c.d, c.offset, c.repeat, c.weighed);
      const std::vector<double> h(c.d, h0);
      EngineOptions keywise;
      keywise.shortcuts = keywise.shortcuts.without(Shortcut::box_series);
      const Attention fast(data, h), slow(data, h, keywise);
      const LooResult a = fast.loo(false), b = slow.loo(false);
      CHECK(a.mse == doctest::Approx(b.mse).epsilon(1e-13));
      if (c.repeat)  // (a merged key's rows read no trace off their sums)
        CHECK((std::isnan(a.trace) && std::isnan(b.trace)));
      else
        CHECK(a.trace == doctest::Approx(b.trace).epsilon(1e-13));  // (NaN: fails)
      CHECK(fast.counters().moment_rows * 2 > data.n);  // (most rows by the series)
      CHECK(slow.counters().moment_rows == 0);
      // Predictions at the keys, between them (each key's first column moved by 0.3) and past
      // the keys' box (by 2 in the first column: gathered key by key).
      const std::uint64_t loo_rows = fast.counters().moment_rows;
      std::vector<double> queries = data.x;
      for (std::size_t i = 0; i < data.n; ++i)
        queries[i * c.d] += i % 3 == 1 ? 0.3 : i % 3 == 2 && i % 100 == 2 ? (i % 200 == 2 ? 12.0 : -2.0) : 0.0;
      std::vector<double> pa(data.n), pb(data.n);
      fast.predict(queries.data(), data.n, pa.data());
      slow.predict(queries.data(), data.n, pb.data());
      for (std::size_t i = 0; i < data.n; ++i) CHECK(pa[i] == doctest::Approx(pb[i]).epsilon(1e-13));
      CHECK(fast.counters().moment_rows - loo_rows > data.n / 2);
      // The in-sample pass (AICc, GCV): the fit and each key's weight on itself, tr(H).
      const std::uint64_t before = fast.counters().moment_rows;
      const InSample ia = fast.insample(false), ib = slow.insample(false);
      CHECK(ia.mse == doctest::Approx(ib.mse).epsilon(1e-13));
      CHECK(ia.trace == doctest::Approx(ib.trace).epsilon(1e-13));
      CHECK(ia.room == doctest::Approx(ib.room).epsilon(1e-13));
      CHECK(fast.counters().moment_rows > before);
      // The gradient's passes by the series too: the LOO error's and the in-sample fit's.
      auto near = [](const std::vector<double>& a, const std::vector<double>& b) {  // each column
        bool ok = a.size() == b.size();
        for (std::size_t k = 0; ok && k < b.size(); ++k) ok = b[k] != 0 && std::abs(a[k] - b[k]) <= 1e-10 * std::abs(b[k]);
        return ok;
      };
      const std::uint64_t before_gradient = fast.counters().moment_rows;
      const LooResult ga = fast.loo(true), gb = slow.loo(true);
      CHECK(ga.mse == doctest::Approx(gb.mse).epsilon(1e-13));
      CHECK(near(ga.gradient, gb.gradient));
      CHECK(fast.counters().moment_rows - before_gradient > data.n / 2);
      const std::uint64_t before_insample = fast.counters().moment_rows;
      const InSample ja = fast.insample(true), jb = slow.insample(true);
      CHECK(fast.counters().moment_rows - before_insample > data.n / 2);
      CHECK(ja.mse == doctest::Approx(jb.mse).epsilon(1e-13));
      CHECK(near(ja.d_mse, jb.d_mse));
      CHECK(near(ja.d_trace, jb.d_trace));
      CHECK(slow.counters().moment_rows == 0);
    }
}

TEST_CASE("series over boxes: at a loose tolerance each prediction is within it of every key's sum") {
  // At tolerance 1e-4 the series keeps a low order and rows whose sums are small for its error
  // are gathered; every prediction stays within tolerance * (max y - min y) of the sums over
  // every key (tolerance 0: no series, no pruning).
  const Dataset data = box_columns(6000, 2, 0, false, true);
  for (double h0 : {2.0, 6.0}) {
    CAPTURE(h0);
    const std::vector<double> h = {h0, h0};
    EngineOptions loose(1e-4, nullptr), exact(0, nullptr);
    const Attention fast(data, h, loose), every(data, h, exact);
    std::vector<double> pa(data.n), pb(data.n);
    fast.predict(data.x.data(), data.n, pa.data());
    every.predict(data.x.data(), data.n, pb.data());
    CHECK(fast.counters().moment_rows > 0);
    const auto [lo, hi] = std::minmax_element(data.y.begin(), data.y.end());
    double worst = 0;
    for (std::size_t i = 0; i < data.n; ++i) worst = std::max(worst, std::abs(pa[i] - pb[i]));
    CHECK(worst <= 1e-4 * (*hi - *lo));
    CHECK(worst > 0);  // (the series' order is that low)
    CHECK(fast.loo(false).mse == doctest::Approx(every.loo(false).mse).epsilon(1e-3));
  }
}

TEST_CASE("series over boxes: at a loose tolerance the gradient's sums are within it, columns of unequal span") {
  // Tolerance 1e-4: the series keeps a lower order, and wherever a row's check passes its
  // sums, the gradient's included, err by at most tolerance times its weight sum (times the
  // largest |y - y0| for those of y).
  const BoxKeys k = box_keys(20000, 2, 0, true, 11);
  const std::vector<double> h = {0.6, 4.0};  // (the first column spans 6 of its bandwidths)
  const double y0 = 100, tol = 1e-4;
  const GaussBoxes boxes(k.x.data(), k.n, 2, k.w.data(), k.y.data(), y0, h.data(), tol, 1000000, 1e6 * 2e4, true);
  REQUIRE(boxes.usable());
  double ymax = 0;
  for (double y : k.y) ymax = std::max(ymax, std::abs(y - y0));
  double worst = 0;
  int checked = 0;
  for (std::size_t i = 0; i < k.n; i += 97) {
    const double q[2] = {k.x[i], k.x[k.n + i]};
    double s0, s1, t[2], v[2];
    REQUIRE(boxes.sums(q, s0, s1, t, v));
    if (!boxes.within(s0)) continue;
    ++checked;
    const BoxExact e = box_exact(k, q, h, y0);
    const double S0 = static_cast<double>(e.s0);
    CAPTURE(i);
    CHECK(std::abs(s0 - S0) <= tol * S0);
    CHECK(std::abs(s1 - static_cast<double>(e.s1)) <= tol * S0 * ymax);
    for (std::size_t c = 0; c < 2; ++c) {
      CHECK(std::abs(t[c] - static_cast<double>(e.t[c])) <= tol * S0);
      CHECK(std::abs(v[c] - static_cast<double>(e.v[c])) <= tol * S0 * ymax);
      worst = std::max(worst, std::abs(t[c] - static_cast<double>(e.t[c])) / S0);
    }
  }
  CHECK(checked > 150);
  // (The errors found are far below the bound, which holds over the worst box and query: about
  // 1e-14 of the weight sum here.)
  CHECK(worst < 1e-10);
}

TEST_CASE("series over boxes: a descent towards wide bandwidths learns what the key-by-key sums learn") {
  // y unrelated to either column (2,000 rows): the descent rises towards wide bandwidths, where
  // every key is in reach and its gradient passes take the series. The bandwidths learned agree
  // to 1e-6 relative, the LOO errors to 1e-12.
  Dataset data = box_columns(2000, 2, 0, false, false);
  std::mt19937_64 g(5);
  std::normal_distribution<double> noise(0, 1);
  for (double& y : data.y) y = noise(g);
  FitOptions fast;
  FitOptions keywise = fast;
  keywise.engine.shortcuts = keywise.engine.shortcuts.without(Shortcut::box_series);
  const FitResult a = fit_bandwidth(data, fast), b = fit_bandwidth(data, keywise);
  REQUIRE(a.bandwidth.size() == 2);
  for (std::size_t k = 0; k < 2; ++k) CHECK(a.bandwidth[k] == doctest::Approx(b.bandwidth[k]).epsilon(1e-6));
  CHECK(a.loo_mse == doctest::Approx(b.loo_mse).epsilon(1e-12));
  CHECK(a.work.moment_rows > 10 * data.n);  // (most of the descent's rows by the series)
  CHECK(b.work.moment_rows == 0);
  CHECK(a.work.pairs < b.work.pairs);
}
