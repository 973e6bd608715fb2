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

#include "nwreg/engine/key_index.h"
#include "nwreg/engine/key_set.h"
#include "nwreg/engine/pass.h"
#include "nwreg/kernel/gauss_transform.h"

namespace nwreg {

class ThreadPool;

class FusedLine {
 public:
  /// `pairs` counts the kernel evaluations; `transform` false never builds a transform.
  FusedLine(const KeySet& keys, const KeyIndex& index, double tolerance, bool transform, ThreadPool* pool,
            std::atomic<std::uint64_t>& pairs);
  void set_bandwidth(double h);

  /// Whether the vectorised sweep applies to query q (keys and q bounded, the bandwidth normal).
  bool fast(double q) const;
  /// -log2(e) / (2 h^2): the sweep's score factor.
  double K2() const { return K2_; }

  /// The row of query q, less key `exclude` and its left-out block, reduced: the prediction (in
  /// units of y_scale), with its derivative in log h if `gradient`, and s0, t.
  Row row(double q, std::size_t exclude, bool gradient) const;
  /// The same row through a fast Gauss transform where its bound holds (the nearest key within
  /// sqrt(2) h), else as above.
  Row row(const GaussTransform& fgt, double q, std::size_t exclude, bool gradient) const;
  /// A transform for a pass over `rows` rows, where it pays; else null.
  std::unique_ptr<GaussTransform> transform(std::size_t rows) const;

 private:
  const KeySet& keys_;
  const KeyIndex& index_;
  double tolerance_;
  bool transform_, fast_keys_;
  ThreadPool* pool_;
  std::atomic<std::uint64_t>& pairs_;
  double h_ = 1, inv_h_ = 1, K2_ = 0;
};

}  // namespace nwreg
