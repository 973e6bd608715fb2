// nwreg_bench: speed of the attention engine, the bandwidth learner and the CSV reader, each
// against a naive scalar loop measured in the same run. Prints one table per part.
//
//   nwreg_bench [--quick] [--full-check] [--only TABLE]
//
// --quick skips the largest sizes; --full-check also runs a full-data descent at n = 1e5 to
// compare the sampled descent's LOO error with it; --only runs one table (predict, direct,
// sweep, pruned, learn, columns, ties, csv, features, span, scores). Data: the seeds' function
// y = 2 sin x + x^0.8 + N(0, 0.5^2), x uniform on [0, 5), fixed seed.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nwreg/engine/attention.h"
#include "nwreg/learn/bandwidth.h"
#include "nwreg/data/csv.h"
#include "nwreg/data/dataset.h"
#include "nwreg/learn/metric.h"
#include "nwreg/engine/score_attention.h"
#include "nwreg/kernel/kernel_nd.h"
#include "nwreg/learn/score_fit.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/thread_pool.h"

using namespace nwreg;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Median wall time of `runs` calls.
double median_time(int runs, const std::function<void()>& fn) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

Dataset seeds(std::size_t n, std::uint64_t seed = 42) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 5);
  std::normal_distribution<double> noise(0, 0.5);
  Dataset d;
  d.n = n;
  d.d = 1;
  d.x_names = {"x"};
  d.y_name = "y";
  for (std::size_t i = 0; i < n; ++i) {
    const double x = u(g);
    d.x.push_back(x);
    d.y.push_back(2 * std::sin(x) + std::pow(x, 0.8) + noise(g));
  }
  return d;
}

// n points uniform on [0, 5]^d, y = sum_k sin(x_k) + N(0, 0.3^2).
Dataset uniform(std::size_t n, std::size_t d, std::uint64_t seed = 7) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 5);
  std::normal_distribution<double> noise(0, 0.3);
  Dataset data;
  data.n = n;
  data.d = d;
  for (std::size_t k = 0; k < d; ++k) data.x_names.push_back("x" + std::to_string(k + 1));
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0;
    for (std::size_t k = 0; k < d; ++k) {
      data.x.push_back(u(g));
      s += std::sin(data.x.back());
    }
    data.y.push_back(s + noise(g));
  }
  return data;
}

std::vector<double> grid(std::size_t m) {
  std::vector<double> q(m);
  for (std::size_t i = 0; i < m; ++i) q[i] = 5.0 * static_cast<double>(i) / static_cast<double>(m);
  return q;
}

// The naive loop: std::exp on every pair, one thread. Returns pairs per second.
double naive_rate(const Dataset& d, double h, std::size_t max_pairs) {
  const std::size_t m = std::max<std::size_t>(1, std::min<std::size_t>(d.n, max_pairs / d.n));
  const auto q = grid(m);
  std::vector<double> out(m);
  const double inv = 1 / h;
  const double t = median_time(3, [&] {
    for (std::size_t j = 0; j < m; ++j) {
      double s0 = 0, s1 = 0;
      for (std::size_t i = 0; i < d.n; ++i) {
        const double u = (q[j] - d.x[i]) * inv;
        const double e = std::exp(-0.5 * u * u);
        s0 += e;
        s1 += e * d.y[i];
      }
      out[j] = s1 / s0;
    }
  });
  return static_cast<double>(m) * static_cast<double>(d.n) / t;
}

void predict_table(bool quick, unsigned cores) {
  std::printf("\n## Predict, h = 0.05, m = n queries on a grid over [0, 5)\n");
  std::printf("G/s = 1e9 query-key pairs per second; pruned: n*m pairs counted as done, and the share\n");
  std::printf("of pairs it actually evaluated (windows key by key). Ratio: against the naive scalar loop\n");
  std::printf("(std::exp, 1 thread). Last column: the windows summed by the fast Gauss transform (the default).\n\n");
  std::printf("| n = m | naive G/s | direct 1 thr | direct %u thr | pruned 1 thr | pruned %u thr | pruned pairs | pruned %u thr time | transform %u thr time |\n",
              cores, cores, cores, cores);
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  ThreadPool pool(cores);
  for (std::size_t n : {std::size_t{1000}, std::size_t{10000}, std::size_t{100000}}) {
    if (quick && n > 10000) continue;
    const Dataset d = seeds(n);
    const auto q = grid(n);
    std::vector<double> out(n);
    const double pairs = static_cast<double>(n) * static_cast<double>(n);
    const double naive = naive_rate(d, 0.05, 200'000'000);
    const int runs = n >= 100000 ? 3 : 7;
    double rate[4], share = 0, pruned_time = 0;
    int k = 0;
    for (double tol : {0.0, default_tolerance}) {
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        EngineOptions o(tol, p);
        o.shortcuts = o.shortcuts.without(Shortcut::gauss_transform);
        Attention e(d, {0.05}, o);
        const double t = median_time(runs, [&] { e.predict(q.data(), n, out.data()); });
        rate[k++] = pairs / t;
        if (tol > 0) {
          share = static_cast<double>(e.counters().pairs) / runs / pairs;
          if (p) pruned_time = t;
        }
      }
    }
    const Attention fast(d, {0.05}, EngineOptions(default_tolerance, &pool));
    const double fast_time = median_time(runs, [&] { fast.predict(q.data(), n, out.data()); });
    std::printf("| %zu | %.3f | %.2f (%.1fx) | %.2f (%.1fx) | %.2f (%.1fx) | %.2f (%.1fx) | %.1f%% | %.3f s | %.3f s |\n", n,
                naive / 1e9, rate[0] / 1e9, rate[0] / naive, rate[1] / 1e9, rate[1] / naive, rate[2] / 1e9,
                rate[2] / naive, rate[3] / 1e9, rate[3] / naive, 100 * share, pruned_time, fast_time);
  }
}

void learn_table(bool quick, bool full_check, unsigned cores) {
  std::printf("\n## Learning the bandwidth (auto: scan on 1000 rows, descent on 50000, full LOO reported), %u threads\n", cores);
  std::printf("Naive: the same number of LOO passes through the naive loop, from its measured rate.\n\n");
  std::printf("| n | time | h | LOO MSE | LOO passes | naive estimate | speed-up |\n|---|---|---|---|---|---|---|\n");
  ThreadPool pool(cores);
  std::vector<std::size_t> sizes = {1000, 10000, 100000, 1000000, 10000000};
  if (quick) sizes = {1000, 10000};
  std::vector<double> times;
  for (std::size_t n : sizes) {
    const Dataset d = seeds(n);
    const double naive = naive_rate(d, 0.05, 50'000'000);
    FitOptions o;
    o.engine = EngineOptions(default_tolerance, &pool);
    FitResult r;
    const double t = median_time(n >= 100000 ? 1 : 3, [&] { r = fit_bandwidth(d, o); });
    times.push_back(t);
    // The same passes through the naive loop: scan passes over min(n, 1000) rows, descent
    // passes over the descent's rows, and the final pass over all n (when sampled); n keys each.
    const double scan = r.scan_evaluations, desc = r.evaluations - r.scan_evaluations;
    const double rows = scan * std::min<double>(n, 1000) + desc * static_cast<double>(r.descent_rows) +
                        (r.descent_rows < n ? -static_cast<double>(r.descent_rows) + static_cast<double>(n) : 0);
    const double naive_time = rows * static_cast<double>(n) / naive;
    std::printf("| %zu | %.3f s | %.6g | %.10g | %d | %.3g s | %.0fx |\n", n, t, r.bandwidth[0], r.loo_mse,
                r.evaluations, naive_time, naive_time / t);
    if (full_check && n == 100000) {
      FitOptions f = o;
      f.scan_rows = 0;
      f.descent_rows = 0;
      FitResult full;
      const double tf = median_time(1, [&] { full = fit_bandwidth(d, f); });
      std::printf("| %zu full-data descent | %.3f s | %.6g | %.10g | %d | | sampled LOO / full LOO - 1 = %.2e |\n", n, tf,
                  full.bandwidth[0], full.loo_mse, full.evaluations, r.loo_mse / full.loo_mse - 1);
    }
  }
  auto ratio = [&](std::size_t big, std::size_t small) {
    const auto at = [&](std::size_t n) { return std::find(sizes.begin(), sizes.end(), n) - sizes.begin(); };
    if (at(big) < static_cast<long>(times.size()))
      std::printf("Time at n = %zu over the time at n = %zu: %.1f\n", big, small, times[at(big)] / times[at(small)]);
  };
  std::printf("\n");
  ratio(1000000, 100000);  // target <= 4, and <= 10 s at 1e6
  ratio(10000000, 1000000);  // target: <= 60 s at 1e7
}

// Every key in reach (h = 10 on [0, 5]^d, tolerance 0), one thread: pairs per second of each
// kernel and method in 1 to 3 columns, against the 1-D Gaussian NW path.
void engine_table(bool quick) {
  const std::size_t n = quick ? 2000 : 4000;
  std::printf("\n## Direct sums: every key in reach (h = 10 on [0, 5]^d, tolerance 0), n = m = %zu, 1 thread\n", n);
  std::printf("G/s = 1e9 query-key pairs per second; ratio: against 1 column, gaussian, nw (target >= 0.5).\n\n");
  std::printf("| kernel | method | 1 column | 2 columns | 3 columns |\n|---|---|---|---|---|\n");
  double base = 0;
  for (Kernel k : {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov, Kernel::tricube, Kernel::uniform}) {
    for (Method m : {Method::nw, Method::local_linear}) {
      std::printf("| %s | %s |", to_string(k).c_str(), to_string(m).c_str());
      for (std::size_t d = 1; d <= 3; ++d) {
        const Dataset data = uniform(n, d);
        EngineOptions o(0.0, nullptr);
        o.kernel = k;
        o.method = m;
        const Attention e(data, std::vector<double>(d, 10.0), o);
        std::vector<double> out(n);
        const double t = median_time(5, [&] { e.predict(data.x.data(), n, out.data()); });
        const double rate = static_cast<double>(n) * static_cast<double>(n) / t;
        if (base == 0) base = rate;
        std::printf(" %.2f G/s (%.2f) |", rate / 1e9, rate / base);
      }
      std::printf("\n");
    }
  }
}

// NW's fused sweep over one range of keys (kernel::fill, Gaussian), with and without the
// gradient's terms, in 2 to 5 columns, one thread: the cost of a query-key pair in the passes
// that learn NW in several columns (nearly all their keys are weighed here: about three quarters
// of their time).
void sweep_table(bool quick) {
  const std::size_t n = 12000, reps = quick ? 100 : 300;
  std::printf("\n## NW's sweep key by key: %zu keys in one range, Gaussian, 1 thread\n", n);
  std::printf("ns a key; ratio: against 2 columns without the gradient.\n\n");
  std::printf("| columns | weights and values | with the gradient |\n|---|---|---|\n");
  double base = 0;
  for (std::size_t d = 2; d <= 5; ++d) {
    std::mt19937_64 rng(20261203);
    std::uniform_real_distribution<double> u(0, 4);
    std::vector<double> x(d * n), y(n), e(n);
    for (double& a : x) a = u(rng);
    for (double& a : y) a = u(rng);
    kernel::Keys keys;
    keys.x = x.data(), keys.stride = n, keys.d = d, keys.moderate = true;
    const std::vector<double> q(d, 2.0), xb(d, 2.01), inv_h(d, 2.0);
    std::printf("| %zu |", d);
    for (bool gradient : {false, true}) {
      double s1 = 0;
      volatile double sink = 0;  // (the sums kept, so the loop is not optimised away)
      std::vector<double> t(d), v(d);
      kernel::Targets sums{y.data(), 2.0, &s1};
      if (gradient) sums.t = t.data(), sums.v = v.data();
      const double secs = median_time(9, [&] {  // (a shared machine: short runs, their median)
        for (std::size_t r = 0; r < reps; ++r)
          sink = sink + kernel::fill(Kernel::gaussian, keys, 0, n, q.data(), xb.data(), inv_h.data(), e.data(), sums);
      });
      const double ns = secs / static_cast<double>(reps * n) * 1e9;
      if (base == 0) base = ns;
      std::printf(" %.2f ns (%.2f) |", ns, ns / base);
    }
    std::printf("\n");
  }
}

// Learning h in 2 and 3 columns, and a full metric in 3, against 1 column at the same n: with
// its long windows summed by the fast Gauss transform (the default) and key by key.
void columns_table(bool quick, unsigned cores) {
  const std::size_t n = quick ? 3000 : 10000;
  std::printf("\n## Learning with several columns, n = %zu, uniform on [0, 5]^d, %u threads\n", n, cores);
  std::printf("Ratio: time against 1 column, and against 1 column summed key by key (no fast Gauss transform)\n");
  std::printf("(targets: 2 and 3 columns <= 20, --metric full <= 40).\n\n");
  std::printf("| columns | time | LOO passes | LOO MSE | ratio | ratio key by key |\n|---|---|---|---|---|---|\n");
  ThreadPool pool(cores);
  FitOptions o;
  o.engine = EngineOptions(default_tolerance, &pool);
  double base = 0, keywise = 0;
  auto row = [&](const char* name, double t, const std::string& passes, double mse) {
    std::printf("| %s | %.2f s | %s | %.6g | %.1f | %.1f |\n", name, t, passes.c_str(), mse, t / base, t / keywise);
  };
  for (std::size_t d = 1; d <= 3; ++d) {
    const Dataset data = uniform(n, d);
    FitResult r;
    const double t = median_time(d == 1 ? 3 : 1, [&] { r = fit_bandwidth(data, o); });
    if (d == 1) {
      base = t;
      FitOptions k = o;
      k.engine.shortcuts = k.engine.shortcuts.without(Shortcut::gauss_transform);
      FitResult rk;
      keywise = median_time(3, [&] { rk = fit_bandwidth(data, k); });
      row("1", t, std::to_string(r.evaluations), r.loo_mse);
      row("1, key by key", keywise, std::to_string(rk.evaluations), rk.loo_mse);
      continue;
    }
    row(d == 2 ? "2" : "3", t, std::to_string(r.evaluations), r.loo_mse);
    if (d == 3) {  // --metric full: the diagonal fit, then the metric from it
      MetricFit mf;
      const double tm = median_time(1, [&] {
        const FitResult diag = fit_bandwidth(data, o);
        mf = fit_metric(data, o, diag.bandwidth, d);
      });
      row("3, --metric full", tm, std::to_string(mf.evaluations) + " + diagonal", mf.loo_mse);
    }
  }
}

// Two columns, n = m = 1e5 (2e4 with --quick) uniform on [0, 5]^2, h = 0.05: the k-d tree's
// pruned sums against every key.
void pruned_2d_table(bool quick, unsigned cores) {
  const std::size_t n = quick ? 20000 : 100000;
  const Dataset data = uniform(n, 2, 11);
  ThreadPool pool(cores);
  std::vector<double> out(n);
  double t[2], share = 0;
  int k = 0;
  for (double tol : {0.0, default_tolerance}) {
    const Attention e(data, {0.05, 0.05}, EngineOptions(tol, &pool));
    t[k++] = median_time(1, [&] { e.predict(data.x.data(), n, out.data()); });
    share = static_cast<double>(e.counters().pairs) / (static_cast<double>(n) * static_cast<double>(n));
  }
  std::printf("\n## Two columns pruned by the k-d tree: n = m = %zu, h = 0.05, uniform on [0, 5]^2, %u threads\n\n",
              n, cores);
  std::printf("| sum over | time | pairs evaluated | ratio |\n|---|---|---|---|\n");
  std::printf("| every key | %.2f s | 100%% | 1 |\n", t[0]);
  std::printf("| leaves within reach | %.3f s | %.2f%% | %.1fx faster (target >= 10x) |\n", t[1], 100 * share,
              t[0] / t[1]);
}

void csv_table(bool quick) {
  const std::size_t n = quick ? 200000 : 2000000;
  const Dataset d = seeds(n);
  const auto path = std::filesystem::temp_directory_path() / "nwreg_bench.csv";
  {
    std::ofstream f(path);
    std::string buf = "x,y\n";
    for (std::size_t i = 0; i < n; ++i) {
      append_double(buf, d.x[i]);
      buf += ',';
      append_double(buf, d.y[i]);
      buf += '\n';
    }
    f << buf;
  }
  const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  std::size_t rows = 0;
  const double t = median_time(3, [&] {
    CsvReader r(path.string(), CsvOptions{});
    rows = read_dataset(r, ColumnChoice{}).n;
  });
  // Naive: std::getline, split at the comma, std::stod.
  const double tn = median_time(3, [&] {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    std::vector<double> x, y;
    while (std::getline(in, line)) {
      const auto c = line.find(',');
      x.push_back(std::stod(line.substr(0, c)));
      y.push_back(std::stod(line.substr(c + 1)));
    }
  });
  std::printf("\n## CSV reading: %zu rows, %.1f MB\n\n| reader | time | MB/s | ratio |\n|---|---|---|---|\n", rows, mb);
  std::printf("| nwreg (fccp LineReader + from_chars) | %.3f s | %.0f | %.1fx |\n", t, mb / t, tn / t);
  std::printf("| naive (getline + stod) | %.3f s | %.0f | 1.0x |\n", tn, mb / tn);
  std::filesystem::remove(path);
}

// Identical keys: learning with x rounded to a few values, keys merged (the default) against
// every row its own key (without Shortcut::merge_keys), in the same run.
void ties_table(bool quick, unsigned cores) {
  const std::size_t n = quick ? 3000 : 10000;
  std::printf("\n## Identical keys: learning h, n = %zu, %u threads, merged against every row its own key\n\n", n,
              cores);
  std::printf("| data | kernel | method | distinct keys | merged | apart | ratio |\n|---|---|---|---|---|---|---|\n");
  ThreadPool pool(cores);
  struct Case {
    const char* name;
    Dataset data;
    std::size_t distinct;
  };
  std::vector<Case> cases;
  {  // one column, x in {1, 2, 3}
    Dataset d = seeds(n);
    for (double& x : d.x) x = 1 + std::floor(x * 3 / 5);
    cases.push_back({"1 column, 3 values", d, 3});
  }
  {  // two columns rounded to 0.1 on [0, 5]^2: about 4 rows a key
    Dataset d = uniform(n, 2);
    for (double& x : d.x) x = std::round(x * 10) / 10;
    std::vector<std::pair<double, double>> keys;
    for (std::size_t i = 0; i < n; ++i) keys.emplace_back(d.x[2 * i], d.x[2 * i + 1]);
    std::sort(keys.begin(), keys.end());
    const auto distinct = static_cast<std::size_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
    cases.push_back({"2 columns, x rounded to 0.1", d, distinct});
  }
  for (const Case& c : cases) {
    for (const auto& [k, m] : {std::pair{Kernel::gaussian, Method::nw}, std::pair{Kernel::laplace, Method::nw},
                               std::pair{Kernel::gaussian, Method::local_linear}}) {
      if (c.data.d > 1 && m == Method::local_linear) continue;
      double t[2];
      for (int apart = 0; apart < 2; ++apart) {
        FitOptions o;
        o.engine = EngineOptions(default_tolerance, &pool);
        o.engine.kernel = k;
        o.engine.method = m;
        if (apart != 0) o.engine.shortcuts = o.engine.shortcuts.without(Shortcut::merge_keys);
        t[apart] = median_time(apart ? 1 : 3, [&] { fit_bandwidth(c.data, o); });
      }
      std::printf("| %s | %s | %s | %zu | %.3f s | %.3f s | %.0fx faster |\n", c.name, to_string(k).c_str(),
                  to_string(m).c_str(), c.distinct, t[0], t[1], t[1] / t[0]);
    }
  }
}

// Categorical columns, slopes, local polynomials and neighbour bandwidths: one LOO pass (and
// predictions with and without slopes) against the fixed-bandwidth NW pass on the same data.
void features_table(bool quick, unsigned cores) {
  const std::size_t n = quick ? 2000 : 10000;
  ThreadPool pool(cores);
  EngineOptions base(default_tolerance, &pool);
  std::printf("\n## Categorical columns, slopes, local polynomials, neighbour bandwidths: n = %zu, %u threads\n\n", n,
              cores);
  std::printf("| case | LOO pass | against |  ratio |\n|---|---|---|---|\n");
  auto loo = [](const Attention& e) { return median_time(3, [&] { e.loo(false); }); };
  {  // x and a factor of 4 levels (y shifts by level): against x and a second continuous column
    Dataset d = uniform(n, 2);
    Dataset c = d;
    c.x_kind = {ColumnKind::number, ColumnKind::unordered};
    c.levels.resize(2);
    c.levels[1] = {{"a", "b", "c", "d"}, {0, 1, 2, 3}, false};
    for (std::size_t i = 0; i < n; ++i) c.x[2 * i + 1] = std::floor(c.x[2 * i + 1] * 4 / 5);
    const double t = loo(Attention(c, {0.3, 0.2}, base)), t2 = loo(Attention(d, {0.3, 0.5}, base));
    std::printf("| x + factor (4 levels), NW | %.4f s | 2 continuous columns %.4f s | %.2f |\n", t, t2, t / t2);
  }
  const Dataset one = seeds(n);
  const double fixed = loo(Attention(one, {0.1}, base));
  for (std::size_t degree : {1, 2, 3}) {
    EngineOptions o = base;
    o.method = Method::local_polynomial;
    o.degree = degree;
    const double t = loo(Attention(one, {0.1}, o));
    std::printf("| local polynomial, degree %zu | %.4f s | 1-D NW %.4f s | %.1f |\n", degree, t, fixed, t / fixed);
  }
  for (const char* kind : {"knn:20", "adaptive:20"}) {
    EngineOptions o = base;
    o.neighbour_policy = {kind[0] == 'k' ? Neighbours::knn : Neighbours::adaptive, 20};
    const double t = loo(Attention(one, {1.0}, o));
    std::printf("| %s, NW | %.4f s | 1-D NW %.4f s | %.1f |\n", kind, t, fixed, t / fixed);
  }
  const Attention e(one, {0.1}, base);
  const auto q = grid(n);
  std::vector<double> out(n), slope(n), l2(n);
  const double tp = median_time(3, [&] { e.predict(q.data(), n, out.data()); });
  const double ts = median_time(3, [&] { e.slopes(q.data(), n, slope.data(), l2.data()); });
  std::printf("| slopes with squared weights, %zu queries | %.4f s | predict %.4f s | %.1f |\n", n, ts, tp, ts / tp);
}

void span_table(bool quick, unsigned cores) {
  ThreadPool pool(cores);
  std::printf("\n## span:0.3, tricube, local linear: fitted values at every training row (m = n), %u threads\n", cores);
  std::printf("Sums by moments (the default) against the same windows key by key; at 1e6 rows key by key is\n");
  std::printf("estimated from its rate at 1e5 (its cost grows as n^2).\n\n");
  std::printf("| n | by moments | key by key | ratio |\n|---|---|---|---|\n");
  std::vector<std::size_t> sizes = {10000, 100000, 1000000};
  if (quick) sizes = {10000, 100000};
  double rate = 0;  // key by key: seconds per n^2
  for (std::size_t n : sizes) {
    const Dataset d = seeds(n);
    EngineOptions o(default_tolerance, &pool);
    o.kernel = Kernel::tricube;
    o.method = Method::local_linear;
    o.neighbour_policy = {Neighbours::span, 0, 0.3};
    std::vector<double> out(n);
    const Attention fast(d, {1.0}, o);
    const double tf = median_time(3, [&] { fast.predict(d.x.data(), n, out.data()); });
    if (n <= 100000) {
      o.shortcuts = o.shortcuts.without(Shortcut::line_moments);
      const Attention slow(d, {1.0}, o);
      const double ts = median_time(n >= 100000 ? 1 : 3, [&] { slow.predict(d.x.data(), n, out.data()); });
      rate = ts / (static_cast<double>(n) * static_cast<double>(n));
      std::printf("| %zu | %.3f s | %.3f s | %.0f |\n", n, tf, ts, ts / tf);
    } else {
      const double ts = rate * static_cast<double>(n) * static_cast<double>(n);
      std::printf("| %zu | %.3f s | about %.0f s | about %.0f |\n", n, tf, ts, ts / tf);
    }
  }
}


// The additive score's leave-one-out pass, the learner's cost per step, against a scalar loop
// (std::tanh per pair, one thread) in the same run; the learning sizes under a minute follow.
void scores_table(bool quick, unsigned cores) {
  ThreadPool pool(cores);
  std::printf("\n## Scores: the additive score (H = 8), a leave-one-out pass over every row, the d2l sine\n");
  std::printf("One step of learning is a pass with the gradient; fit --score additive takes 300 (Adam).\n\n");
  std::printf("| n | scalar loop, 1 thread | pass, 1 thread | ratio | pass with gradient, %u threads | 300 steps |\n",
              cores);
  std::printf("|---|---|---|---|---|---|\n");
  std::vector<std::size_t> sizes = {1000, 3000, 10000};
  if (quick) sizes = {1000, 3000};
  double per_pair = 0;  // seconds per n^2 of a step with the gradient, at the largest size
  for (std::size_t n : sizes) {
    const Dataset d = seeds(n);
    const ScoreParameters p = score_start(Score::additive, d, 8, true, 0);
    const ScoreAttention one(d, p), many(d, p, EngineOptions(default_tolerance, &pool));
    const std::size_t H = p.hidden;
    volatile double sink = 0;
    const double naive = median_time(1, [&] {
      double total = 0;
      std::vector<double> s(n);
      for (std::size_t j = 0; j < n; ++j) {
        double M = -1e300;
        for (std::size_t i = 0; i < n; ++i) {
          double v = 0;
          for (std::size_t h = 0; h < H; ++h)
            v += p.theta[h] * std::tanh(p.theta[H + h] * d.x[j] + p.theta[2 * H + h] * d.x[i] + p.theta[3 * H + h]);
          s[i] = v;
          if (i != j) M = std::max(M, v);
        }
        double s0 = 0, s1 = 0;
        for (std::size_t i = 0; i < n; ++i)
          if (i != j) s0 += std::exp(s[i] - M), s1 += std::exp(s[i] - M) * d.y[i];
        total += (s1 / s0 - d.y[j]) * (s1 / s0 - d.y[j]);
      }
      sink = total;
    });
    const double fast = median_time(3, [&] { sink = one.loo(false).mse; });
    const double step = median_time(3, [&] { sink = many.loo(true).mse; });
    per_pair = step / (static_cast<double>(n) * static_cast<double>(n));
    std::printf("| %zu | %.3f s | %.4f s | %.1f | %.4f s | %.1f s |\n", n, naive, fast, naive / fast, step, 300 * step);
  }
  std::printf("\nLearning (300 steps over every row) stays under a minute up to about n = %.0f rows here;\n",
              std::sqrt(60 / (300 * per_pair)));
  std::printf("beyond, --loo-rows R makes each step cost R x n (the error of R rows spread over x).\n");
  // Predictions: every key for every query.
  const std::size_t n = 100000, m = quick ? 1000 : 10000;
  const Dataset d = seeds(n);
  const auto q = grid(m);
  std::vector<double> out(m);
  std::printf("\n| predict, n = %zu keys, m = %zu queries, %u threads | time | pairs/s |\n|---|---|---|\n", n, m, cores);
  for (Score score : {Score::dot, Score::additive}) {
    const ScoreAttention e(d, score_start(score, d, 8, true, 0), EngineOptions(default_tolerance, &pool));
    const double t = median_time(3, [&] { e.predict(q.data(), m, out.data()); });
    std::printf("| %s%s | %.3f s | %.2e |\n", to_string(score).c_str(), score == Score::additive ? " (H = 8)" : "", t,
                static_cast<double>(n) * static_cast<double>(m) / t);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, full_check = false;
  std::string only;
  const std::vector<std::string> tables = {"predict", "direct", "sweep", "pruned", "learn", "columns", "ties", "csv", "features", "span", "scores"};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--full-check")) {
      full_check = true;
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc &&
               std::find(tables.begin(), tables.end(), argv[i + 1]) != tables.end()) {
      only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: nwreg_bench [--quick] [--full-check] [--only predict|direct|sweep|pruned|learn|columns|ties|csv|features|span|scores]\n");
      return 2;
    }
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  auto run = [&](const char* name) { return only.empty() || only == name; };
  std::printf("# nwreg_bench: %u hardware threads\n", cores);
  if (run("predict")) predict_table(quick, cores);
  if (run("direct")) engine_table(quick);
  if (run("sweep")) sweep_table(quick);
  if (run("pruned")) pruned_2d_table(quick, cores);
  if (run("learn")) learn_table(quick, full_check, cores);
  if (run("columns")) columns_table(quick, cores);
  if (run("ties")) ties_table(quick, cores);
  if (run("csv")) csv_table(quick);
  if (run("features")) features_table(quick, cores);
  if (run("span")) span_table(quick, cores);
  if (run("scores")) scores_table(quick, cores);
  return 0;
}
