#include "nwreg/learn/metric.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "nwreg/engine/inspect.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/thread_pool.h"

namespace nwreg {


namespace {

// The start: the r columns with the smallest bandwidth relative to their spread, as B = A diag(h)
// (r x d, row-major).
std::vector<double> metric_start(const Dataset& data, const std::vector<double>& h, std::size_t rank) {
  const std::size_t d = data.d;
  std::vector<std::size_t> cols(d);
  std::iota(cols.begin(), cols.end(), std::size_t{0});
  std::vector<double> rel(d);
  for (std::size_t k = 0; k < d; ++k) rel[k] = h[k] / std::max(column_stats(data, k).sd, 1e-300);
  std::stable_sort(cols.begin(), cols.end(), [&](std::size_t a, std::size_t b) { return rel[a] < rel[b]; });
  std::vector<double> theta(rank * d, 0.0);
  for (std::size_t a = 0; a < rank; ++a) theta[a * d + cols[a]] = 1;
  return theta;
}

// The LOO error's gradient in B at engine e (on the data mapped by B's metric), over `rows`
// (their sample weights summing to wsum); xh is x_ik / h_k by row.
std::vector<double> metric_gradient(const Attention& e, const Dataset& data, const std::vector<std::size_t>& rows,
                                    const std::vector<double>& xh, double wsum, const std::vector<double>& b,
                                    std::size_t rank, ThreadPool* pool) {
  const std::size_t d = data.d;
  // dL/dB = -B M, M = (2 / sum s) sum_j s_j (f_j - y_j) sum_i a_ji (y_i - f_j) u_ji u_ji^T,
  // u_ji = diag(1/h) (x_j - x_i). One M_j per row, summed in order: thread-independent.
  std::vector<double> mj(rows.size() * d * d, 0.0);
  const LooMoments moments(e, xh.data(), d);
  parallel_for(pool, rows.size(), 4, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t r = lo; r < hi; ++r) {
      const std::size_t j = rows[r];
      double f = 0;
      double* M = mj.data() + r * d * d;
      if (!moments.at(j, f, M)) continue;
      const double sj = data.weight.empty() ? 1.0 : data.weight[j];
      const double outer = 2 * sj * (f - data.y[j]) / wsum;
      for (std::size_t k = 0; k < d * d; ++k) M[k] *= outer;
    }
  });
  std::vector<double> M(d * d, 0.0);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t k = 0; k < d * d; ++k) M[k] += mj[r * d * d + k];
  std::vector<double> gradient(rank * d, 0.0);
  for (std::size_t a = 0; a < rank; ++a)
    for (std::size_t l = 0; l < d; ++l) {
      double g = 0;
      for (std::size_t k = 0; k < d; ++k) g -= b[a * d + k] * M[k * d + l];
      gradient[a * d + l] = g;
    }
  return gradient;
}

}  // namespace

MetricFit fit_metric(const Dataset& data, const FitOptions& options, const std::vector<double>& h,
                     std::size_t rank, const std::function<void(const Epoch&)>& on_epoch) {
  const std::size_t d = data.d, n = data.n;
  if (rank < 1 || rank > d)
    throw ParameterError("rank", "must be between 1 and the number of x columns (" + std::to_string(d) + "), got " +
                     std::to_string(rank));
  const std::vector<double> theta = metric_start(data, h, rank);  // B = A diag(h)

  EngineOptions engine = options.engine;
  engine.kernel = Kernel::gaussian;
  engine.method = Method::nw;
  engine.progress = nullptr;
  auto to_metric = [&](const std::vector<double>& b) {
    Metric m{rank, b};
    for (std::size_t a = 0; a < rank; ++a)
      for (std::size_t k = 0; k < d; ++k) m.a[a * d + k] = b[a * d + k] / h[k];
    return m;
  };
  // The rows whose error the descent minimises: spread over the data, fixed for the descent.
  std::vector<std::size_t> rows;
  {
    const Metric m0 = to_metric(theta);
    const Attention e(MetricMap(m0, data).data(), std::vector<double>(rank, 1.0), engine);
    const std::size_t most = options.descent_rows.value_or(sampled_descent_rows);
    rows = e.spread_rows(most == 0 ? std::numeric_limits<std::size_t>::max() : most);
  }
  double wsum = 0;
  for (std::size_t j : rows) wsum += data.weight.empty() ? 1.0 : data.weight[j];

  std::vector<double> xh(n * d);  // x_ik / h_k, by row
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < d; ++k) xh[i * d + k] = data.x[i * d + k] / h[k];

  MetricFit res;
  auto eval = [&](const std::vector<double>& b) {
    ++res.evaluations;
    const Metric m = to_metric(b);
    LooResult out;
    for (double v : m.a)
      if (!std::isfinite(v)) {
        out.mse = std::numeric_limits<double>::infinity();
        return out;
      }
    const Dataset z = MetricMap(m, data).data();
    const Attention e(z, std::vector<double>(rank, 1.0), engine);
    out = e.loo(false, &rows);
    if (out.out_of_reach || !std::isfinite(out.mse)) {
      out.mse = std::numeric_limits<double>::infinity();
      return out;
    }
    out.gradient = metric_gradient(e, data, rows, xh, wsum, b, rank, engine.pool);
    return out;
  };
  auto record = [&](int epoch, const std::vector<double>& b, double loss) {
    Epoch e{epoch, {}, loss, to_metric(b).a};
    if (on_epoch) on_epoch(e);
    record_epoch(res.history, std::move(e));
  };
  const Descent dsc = line_search(theta, options, eval, record);
  res.metric = to_metric(dsc.theta);
  res.stop_reason = dsc.stop_reason;
  res.loo_mse = dsc.loss;
  if (rows.size() < n) {  // the error reported is over every row
    const Attention e(MetricMap(res.metric, data).data(), std::vector<double>(rank, 1.0), engine);
    const LooResult full = e.loo(false);
    if (full.out_of_reach || !std::isfinite(full.mse))
      throw DataError("the leave-one-out error at the learned metric is not finite");
    res.loo_mse = full.mse;
  }
  return res;
}

}  // namespace nwreg
