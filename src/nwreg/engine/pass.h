#pragma once
/// What every pass of the engine shares (internal to engine/): a query's row reduced (Row), the
/// keys it covers and its sums (Span), a chunk's scratch (Work), and the pass driver
/// (for_queries): queries in chunks over the thread pool, each chunk with its own scratch,
/// progress reported as chunks finish, and the first query that failed, whatever the order
/// the threads ran in. Passes write each query's result into its own slot and sum the slots
/// in a fixed order afterwards, so every result is the same for any number of threads.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "nwreg/base/thread_pool.h"
#include "nwreg/engine/key_index.h"
#include "nwreg/kernel/kernel1d.h"
#include "nwreg/kernel/kernel_nd.h"

namespace nwreg {

inline constexpr double ln2 = 0.6931471805599453;

/// The size of a pass's scratch: keys, columns, rows of a local fit's design (the length of an
/// equivalent-weight c), and the order of the local system whose moments S (system^2) the sweep
/// sums (0 for NW, which sums none: at 20,000 columns S alone would take 3.2 GB).
struct WorkShape {
  std::size_t n = 0, d = 0, p = 0, system = 0;
};

// A row of unnormalised weights and two scratch rows: only the span a query covers is ever
// written and read, so they are not zeroed (at n = 1e6, zeroing 8 MB per chunk of queries cost
// more than the sums).
inline std::unique_ptr<double[]> row_buffer(std::size_t n) { return std::make_unique_for_overwrite<double[]>(n); }


// first = min(first, v), atomically: the first query that failed, whatever the threads' order.
inline void lower_to(std::atomic<std::size_t>& first, std::size_t v) {
  std::size_t cur = first.load();
  while (v < cur && !first.compare_exchange_weak(cur, v)) {
  }
}


// A sum of squares kept as scale^2 * ssq (scale the largest |v|), so that neither overflows
// nor underflows (as BLAS's dnrm2 keeps it).
struct SumSquares {
  double scale = 0, ssq = 0;
  SumSquares plus(double v) const { return merge({std::abs(v), v != 0 ? 1.0 : 0.0}); }
  SumSquares merge(const SumSquares& o) const {
    if (o.scale == 0) return *this;
    if (scale == 0) return o;
    return scale >= o.scale ? SumSquares{scale, ssq + o.ssq * (o.scale / scale) * (o.scale / scale)}
                            : SumSquares{o.scale, o.ssq + ssq * (scale / o.scale) * (scale / o.scale)};
  }
  // sum of (f v)^2, for f * scale <= 1 or so.
  double times(double f) const { return scale == 0 ? 0.0 : (f * scale) * (f * scale) * ssq; }
};


inline void add(kernel::Sums& to, const kernel::Sums& s) {
  to.s0 += s.s0;
  to.s1 += s.s1;
  to.t += s.t;
  to.v += s.v;
}


// One attention row reduced, in units of ks_.y_scale: the prediction, and (fast path) its
// derivative in log h; whether any key was in reach.
struct Row {
  double f = 0;
  double dfdtheta = 0;
  bool reached = true;
  bool dropped = false;  // a local fit lost a term: its gathered keys do not spread along it
  // FusedLine::row: the sums s0 = sum e and t = sum e u (t with the gradient only), relative to the
  // nearest key (what in-sample rows need of their own key).
  double s0 = 0, t = 0;
};


// The ranges of keys [lo, hi) (engine order) that a query's row covers, its nearest key b, the sum s0 of
// the unnormalised weights e_i, and whether the nearest-key fallback made them.
// With NW, also s1 = sum e_i (y_i - y_b), and (when asked) Work::t and Work::v.
struct Span {
  const std::vector<Range>* ranges = nullptr;  // the keys covered: Work::ranges
  std::size_t b = 0;
  double s0 = 0, s1 = 0;
  bool fallback = false;
  bool moments = false;  // made by moments (line_sums.h): Work::G and Gy hold the gradient's sums
  double unit = 1;       // with moments: what a key at distance 0 weighs, per unit of sample weight
  const double* inv_h = nullptr;  // this query's 1 / h (EngineOptions::knn: its own)
  // sum of f(lo, hi) over the ranges, in order; f(lo, hi) for each range.
  template <class F>
  double sum(const F& f) const {
    double t = 0;
    for (const auto& [lo, hi] : *ranges) t += f(lo, hi);
    return t;
  }
  template <class F>
  void each(const F& f) const {
    for (const auto& [lo, hi] : *ranges) f(lo, hi);
  }
};


// A row of weights e and two scratch rows a and b over the keys, one per chunk of queries;
// NW's gradient sums t_k = sum e_i dlog_ik and v_k = sum e_i (y_i - y_b) dlog_ik; local
// linear's moments S and tz (kernel::Targets) and their scratch z; a row by moments' G and Gy.
// The rows over the keys are allocated by ready(), on a chunk's first row that gathers (rows
// summed whole by a backend never need them).
struct Work {
  explicit Work(const WorkShape& shape)
      : n(shape.n), t(shape.d), v(shape.d), S(shape.system * shape.system), tz(shape.system), c(shape.p),
        z(shape.system * kernel::block), inv_h(shape.d), qc(shape.d), tree_inv_h(shape.d), G(2 * shape.p + 1),
        Gy(shape.p + 1) {}
  void ready() {
    if (buffer) return;
    buffer = row_buffer(3 * n);
    e = buffer.get(), a = e + n, b = a + n;
  }
  std::size_t n;
  std::unique_ptr<double[]> buffer;
  double *e = nullptr, *a = nullptr, *b = nullptr;
  std::vector<double> t, v, S, tz, c, z, inv_h, qc, tree_inv_h;  // c: loo_pass's rows' coefficients
  // A row made by moments: the gradient's sums G[m] = sum e dlog z^m and Gy[m] = sum e dlog z^m
  // (y - y_b) (line_sums.h).
  std::vector<double> G, Gy;
  std::vector<Range> ranges;
  KthHint kth_hint;  // the last query's K-th distance (knn, span in several columns)
};


// A merged key's leave-one-out row gathered once for all its rows (each adds its rest after):
// the span, and local linear's moments, as gathered.
struct Rest {
  std::size_t key = no_key;
  Span span;
  std::vector<double> S, tz;
};


template <class F>
std::size_t for_queries(ThreadPool* pool, const std::function<void(std::size_t, std::size_t)>& progress, std::size_t m,
                        std::size_t grain, const WorkShape& shape, const F& body) {
  // Each chunk gets its own rows of work; returns the first query for which body failed (no_key).
  std::atomic<std::size_t> done{0}, first_bad{no_key};
  parallel_for(pool, m, grain, [&](std::size_t a, std::size_t z) {
    Work w(shape);
    for (std::size_t j = a; j < z; ++j) {
      if (!body(j, w)) lower_to(first_bad, j);
    }
    if (progress) progress(done += z - a, m);
  });
  return first_bad.load();
}


}  // namespace nwreg
