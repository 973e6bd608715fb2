#pragma once
/// The attention engine: every prediction, every attention row written out, and the
/// leave-one-out loss and gradient go through this one class.
///
///   score  s_i(q) = -1/2 sum_k ((q_k - x_ik) / h_k)^2          (Gaussian kernel, log scale)
///   weight a_i(q) = exp(s_i - M) / sum_j exp(s_j - M),  M = max_j s_j   (stable softmax)
///   f(q)          = sum_i a_i(q) y_i
///
/// Subtracting the row maximum makes every row well defined for any h > 0: the nearest key gets
/// exp(0) = 1. When even the nearest key's score overflows (a key 1e154 bandwidths away), the
/// row is recomputed in long double, whose exponent range holds any square of a double ratio.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "nwreg/dataset.h"

namespace nwreg {

enum class Kernel { gaussian };

std::string to_string(Kernel kernel);
/// Throws UsageError naming `--kernel` for an unknown name.
Kernel parse_kernel(const std::string& name);

/// Checks a bandwidth vector for `d` columns: each entry finite, > 0, with a finite inverse.
/// Throws UsageError that starts with `option`.
void check_bandwidth(const std::vector<double>& h, std::size_t d, const std::string& option);

/// Leave-one-out mean squared error and its gradient with respect to log h_k.
struct LooResult {
  double mse = 0;                 //!< (1/n) sum_j (y_j - f_-j)^2
  std::vector<double> gradient;   //!< d mse / d log h_k (empty unless asked for)
};

class Attention {
 public:
  /// Keeps a reference to `train`, which must outlive the engine. Throws UsageError for a bad
  /// bandwidth (see check_bandwidth).
  Attention(const Dataset& train, std::vector<double> bandwidth, Kernel kernel = Kernel::gaussian);

  const std::vector<double>& bandwidth() const { return h_; }

  /// Predicts at m query points (m x d, row-major) into out[0..m).
  void predict(const double* queries, std::size_t m, double* out) const;

  /// Calls row(i, a) for each query i in order, with a[0..n) its attention row over the
  /// training points in input order (non-negative, summing to 1).
  void weights(const double* queries, std::size_t m,
               const std::function<void(std::size_t, const double*)>& row) const;

  /// Leave-one-out error at this bandwidth: row j attends to every key but j itself (equal keys
  /// stay in). Needs n >= 2 (throws DataError otherwise).
  LooResult loo(bool with_gradient) const;

 private:
  // e[0..n) = exp(s_i - M), with e[exclude] = 0; returns their sum (>= 1). Sets *extreme when
  // the row needed the long double path.
  double row(const double* q, std::size_t exclude, double* e, bool* extreme = nullptr) const;
  double row_long_double(const double* q, std::size_t exclude, double* e) const;

  const Dataset& data_;
  std::vector<double> h_;
  std::vector<double> inv_h_;
  Kernel kernel_;
  // y / y_scale_, with y_scale_ a power of two >= max |y|: exact, and sums of n weighted
  // values cannot overflow however large y is.
  std::vector<double> ys_;
  double y_scale_ = 1;
};

}  // namespace nwreg
