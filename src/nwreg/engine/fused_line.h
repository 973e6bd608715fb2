#pragma once
/// The fused path of one x column, the Gaussian kernel, NW, a fixed bandwidth and no sample
/// weights: the commonest case, and the one the fast Gauss transform serves. Each row sums its
/// window in one vectorised sweep of the scores measured from the nearest key (kernel1d.h):
/// s0 = sum e_i, s1 = sum e_i (y_i - y_b) and, for the gradient in log h, t = sum e_i u_i and
/// v = sum e_i (y_i - y_b) u_i with u_i = log2 e_i. Passes over many rows with long windows sum
/// them by a fast Gauss transform (gauss_transform.h) within the same bound. The engine makes
/// one where it applies and takes it for every row it can; other rows gather and reduce.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "nwreg/engine/key_index.h"
#include "nwreg/engine/key_set.h"
#include "nwreg/engine/pass.h"
#include "nwreg/kernel/gauss_transform.h"

namespace nwreg {

class ThreadPool;

class FusedLine {
 public:
  /// `pairs` counts the kernel evaluations, `transformed_rows` the rows a transform answers
  /// (Counters).
  FusedLine(const KeySet& keys, const KeyIndex& index, double tolerance, ThreadPool* pool,
            std::atomic<std::uint64_t>& pairs, std::atomic<std::uint64_t>& transformed_rows);
  void set_bandwidth(double h);
  /// Another pruning tolerance, for the passes from here on.
  void set_tolerance(double tolerance) { tolerance_ = tolerance; }

  /// A pass's fast Gauss transforms, where they pay: the weights' (fgt) and, for standard
  /// errors, the squared weights' (fgt2, at h / sqrt 2: E^2 = exp(-(x - q)^2 / h^2)) and a
  /// smooth of values v >= 0 (fgtv; other v are summed key by key).
  struct Pass {
    std::unique_ptr<GaussTransform> fgt, fgt2, fgtv;
    double vsum = 0;  // the sum of the values fgtv smooths
  };
  /// The transforms for a pass over `rows` rows (none for 0), its rows' gradients if asked; with
  /// `detail`, the squared weights' and the smooth of v (per key) beside (the weights' dropped
  /// where the squares' is unusable).
  Pass pass(std::size_t rows, bool detail, const std::vector<double>* v, bool gradient) const;

  /// The row of query q, less key `exclude` and its left-out block, reduced: the prediction (in
  /// units of y_scale), with its derivative in log h if `gradient`, and s0, t; through the pass's
  /// transform where its bound holds (the nearest key within sqrt(2) h), else summed.
  Row row(const Pass& pass, double q, std::size_t exclude, bool gradient) const;
  /// Query q's prediction (f, units of y_scale) with sum_i a_i^2 (into sum_w2) and sum_i a_i v_i
  /// (into smooth), each if not null, v per key: false, nothing written, where the sweep does not
  /// apply to q (the row is then gathered).
  bool detail(const Pass& pass, double q, const double* v, double& f, double* sum_w2, double* smooth) const;
  /// Leave-one-out row q (key `exclude` left out): its prediction (f, units of y_scale) and the
  /// sum of its squared weights sum_i a_i^2, through the pass's transforms (a pass with
  /// `detail`) where both bounds hold (the nearest other key within h): false, nothing written,
  /// elsewhere.
  bool loo_squares(const Pass& pass, double q, std::size_t exclude, double& f, double& sum_w2) const;
  /// Query q's attention row over its window [lo, hi) into a[lo..hi) (summing to 1).
  void weights(double q, double* a, std::size_t& lo, std::size_t& hi) const;

 private:
  // Whether the vectorised sweep applies to query q (keys and q bounded, the bandwidth normal).
  bool fast(double q) const;
  // The row summed over its window, and the same row through a transform where its bound holds.
  Row summed(double q, std::size_t exclude, bool gradient) const;
  Row transformed(const GaussTransform& fgt, double q, std::size_t exclude, bool gradient) const;
  std::unique_ptr<GaussTransform> transform(std::size_t rows, bool gradient) const;  // for a pass over `rows` rows, where it pays
  // The transforms' shape for a pass over `rows` rows: target-side series, over the keys' bins
  // (made at the first pass large enough to pay for them: they serve every bandwidth).
  GaussTransform::Shape targets(std::size_t rows, bool gradient) const;

  const KeySet& keys_;
  const KeyIndex& index_;
  double tolerance_;
  ThreadPool* pool_;
  std::atomic<std::uint64_t>& pairs_;
  std::atomic<std::uint64_t>& transformed_rows_;
  double h_ = 1, inv_h_ = 1, K2_ = 0;
  mutable std::once_flag bins_once_;
  mutable std::unique_ptr<GaussBins> bins_;
};

}  // namespace nwreg
