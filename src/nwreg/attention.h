#pragma once
/// The attention engine: every prediction, every attention row written out, and the
/// leave-one-out loss and gradient go through this one class.
///
///   score  s_i(q) = -1/2 sum_k ((q_k - x_ik) / h_k)^2          (Gaussian kernel, log scale)
///   weight a_i(q) = exp(s_i - M) / sum_j exp(s_j - M),  M = max_j s_j   (stable softmax)
///   f(q)          = sum_i a_i(q) y_i
///
/// M is the score of the nearest key b, found by an exact comparison, and each s_i - M is
/// computed in the factored form -1/2 sum_k (x_ik - x_bk)(x_ik + x_bk - 2 q_k) / h_k^2, which
/// neither overflows nor cancels where (q - x)^2 would (q = 1e200, keys a unit apart).
///
/// With one x column the keys are sorted once, and each query sums only over the window of keys
/// whose weight relative to the nearest key is at least e^-T, T = ln(n / (tolerance S0_low)),
/// S0_low a lower bound on the row's weight sum: the omitted weights add up to less than
/// tolerance * S0, so each prediction is within tolerance * (max y - min y) of the sum over
/// all keys, and each omitted attention weight is below tolerance / n. The sums run in vectorised kernels (kernel1d.h), in parallel over
/// queries; each result is summed in a fixed order, whatever the number of threads.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nwreg/dataset.h"

namespace nwreg {

class ThreadPool;

enum class Kernel { gaussian };

std::string to_string(Kernel kernel);
/// Throws UsageError naming `--kernel` for an unknown name.
Kernel parse_kernel(const std::string& name);

/// Checks a bandwidth vector for `d` columns: each entry finite, > 0, with a finite inverse.
/// Throws UsageError that starts with `option`.
void check_bandwidth(const std::vector<double>& h, std::size_t d, const std::string& option);

/// The default pruning tolerance: omitted weights below double rounding.
inline constexpr double default_tolerance = 1e-16;

struct EngineOptions {
  // Constructors, not aggregate braces, so that Attention(data, {h}) means a bandwidth.
  EngineOptions() = default;
  EngineOptions(double tolerance_, ThreadPool* pool_) : tolerance(tolerance_), pool(pool_) {}

  double tolerance = default_tolerance;  //!< pruning bound (see above); 0 = sum over every key
  ThreadPool* pool = nullptr;            //!< threads to use; nullptr = the calling thread only
  /// Called as predict and weights advance: (queries done, queries in all), from any thread.
  std::function<void(std::size_t, std::size_t)> progress;
};

/// Throws UsageError naming `--tolerance` unless 0 <= tolerance < 1.
void check_tolerance(double tolerance);

/// Leave-one-out mean squared error and its gradient with respect to log h_k.
struct LooResult {
  double mse = 0;                 //!< (1/|rows|) sum_j (y_j - f_-j)^2
  std::vector<double> gradient;   //!< d mse / d log h_k (empty unless asked for)
};

class Attention {
 public:
  /// Prepares the keys: copies them (sorted when d = 1), so `train` need not outlive the engine.
  /// set_bandwidth must be called before use.
  explicit Attention(const Dataset& train, EngineOptions options = {});
  /// Prepares the keys and sets the bandwidth. Throws UsageError for a bad bandwidth.
  Attention(const Dataset& train, std::vector<double> bandwidth, EngineOptions options = {});

  /// Throws UsageError naming --bandwidth for a bad bandwidth (see check_bandwidth).
  void set_bandwidth(std::vector<double> bandwidth);
  const std::vector<double>& bandwidth() const { return h_; }

  /// Predicts at m query points (m x d, row-major) into out[0..m).
  void predict(const double* queries, std::size_t m, double* out) const;

  /// Calls row(i, a) for each query i in order, with a[0..n) its attention row over the
  /// training points in input order (non-negative, summing to 1; pruned keys get 0).
  void weights(const double* queries, std::size_t m,
               const std::function<void(std::size_t, const double*)>& row) const;

  /// Leave-one-out error at this bandwidth: row j attends to every key but j itself (equal keys
  /// stay in). `rows` (input indices) restricts the mean to those rows, each still attending
  /// to all other keys; by default every row. Needs n >= 2 (throws DataError otherwise).
  LooResult loo(bool with_gradient, const std::vector<std::size_t>* rows = nullptr) const;

  /// Input indices of `count` rows spread evenly over the keys in x order (d = 1) or input
  /// order: a stratified, deterministic sample for LOO estimates. All rows if count >= n.
  std::vector<std::size_t> spread_rows(std::size_t count) const;

  /// Kernel evaluations (query-key pairs) summed so far: for benchmarks.
  std::uint64_t pairs() const { return pairs_.load(std::memory_order_relaxed); }

 private:
  struct Row;
  Row row_1d(double q, std::size_t exclude, bool gradient) const;
  Row row_any(const double* q, std::size_t exclude, double* e) const;
  std::size_t nearest_1d(double q, std::size_t exclude) const;
  bool fast_row(double q) const;  // whether the vectorised kernels apply to query q
  void window_1d(double q, double xb, std::size_t& lo, std::size_t& hi) const;

  EngineOptions options_;
  std::size_t n_, d_;
  std::vector<double> h_, inv_h_;
  // Keys in engine order (sorted by x when d = 1), their targets divided by y_scale_ (the
  // power of two in (max|y|/2, max|y|], so sums of weighted values never overflow), and the
  // maps between engine order and input order.
  std::vector<double> xs_, ys_;
  std::vector<std::uint32_t> order_, rank_;  // 32 bits: half the memory at 1e7 rows
  double y_scale_ = 1;
  bool fast_keys_ = false;  // every |x| <= 4e307: the vectorised kernels apply
  double K2_ = 0;           // -log2(e) / (2 h^2), d = 1
  mutable std::atomic<std::uint64_t> pairs_{0};
};

}  // namespace nwreg
