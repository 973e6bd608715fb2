#pragma once
/// The attention engine: every prediction, every attention row written out, and the
/// leave-one-out loss and gradient go through this one class.
///
///   score  s_i(q) = -1/2 sum_k ((q_k - x_ik) / h_k)^2          (Gaussian kernel, log scale)
///   weight a_i(q) = exp(s_i - M) / sum_j exp(s_j - M),  M = max_j s_j   (stable softmax)
///   f(q)          = sum_i a_i(q) y_i
///
/// Subtracting the row maximum makes every row well defined for any h > 0: the nearest key gets
/// exp(0) = 1. Each s_i - M is computed in the factored form
///   -1/2 sum_k (x_ik - x_bk)(x_ik + x_bk - 2 q_k) / h_k^2      (b = the nearest key),
/// which neither overflows nor cancels where (q - x)^2 would (q = 1e200, keys a unit apart).

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
  // The key nearest q (other than `exclude`), by an exact comparison of squared distances.
  std::size_t nearest(const double* q, std::size_t exclude) const;
  // e[0..n) = exp(s_i - M), M the score of the nearest key (stored in *ref), e[exclude] = 0;
  // returns their sum (>= 1).
  double row(const double* q, std::size_t exclude, double* e, std::size_t* ref = nullptr) const;

  const Dataset& data_;
  std::vector<double> h_;
  std::vector<double> inv_h_;
  Kernel kernel_;
  // y / y_scale_, with y_scale_ the power of two in (max|y|/2, max|y|]: exact, and sums of n
  // weighted values cannot overflow however large y is.
  std::vector<double> ys_;
  double y_scale_ = 1;
};

}  // namespace nwreg
