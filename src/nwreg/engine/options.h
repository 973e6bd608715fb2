#pragma once
/// What the engine computes and how: the kernel, the estimator, the bandwidth policy, the
/// pruning tolerance, threads and progress (see attention.h for what each means).

#include <cstddef>
#include <functional>
#include <string>

#include "nwreg/kernel/categorical.h"
#include "nwreg/kernel/kernels.h"
#include "nwreg/model/settings.h"

namespace nwreg {

class ThreadPool;

/// What a query with no key in reach of a compact kernel gets.
enum class OutOfReach {
  error,   //!< DataError naming the query (and, in the leave-one-out error, the row)
  nearest, //!< the value of the nearest key (scaled distance), all the weight on it; identical
           //!< nearest keys share it by sample weight (their weighted mean)
  empty    //!< no answer: NaN for the prediction and its detail, a weight row of 0 (the caller
           //!< leaves the cells empty); in the leave-one-out error as `error`
};


/// The default pruning tolerance: omitted weights below double rounding.
inline constexpr double default_tolerance = 1e-16;

/// How the engine computes: what it computes is the Smoother (model/settings.h), whose
/// neighbour_policy means here: knn = K scales each query's bandwidths to h_k s(q), s(q) the
/// distance from q to its K-th nearest key in the space scaled by h (the continuous columns, in
/// the kernel's norm: Gaussian L2, Laplace L1, compact kernels the largest coordinate; a
/// leave-one-out row's K-th nearest other key); adaptive = K gives key i the bandwidths h_k s_i,
/// s_i its distance (as for knn) to its K-th nearest other key, and divides its weight by s_i^d
/// (d its continuous columns), as R np's adaptive_nn. Keys are then not merged.
struct EngineOptions : Smoother {
  // Constructors, not aggregate braces, so that Attention(data, {h}) means a bandwidth.
  EngineOptions() = default;
  EngineOptions(double tolerance_, ThreadPool* pool_) : tolerance(tolerance_), pool(pool_) {}

  double tolerance = default_tolerance;  //!< pruning bound (see above); 0 = sum over every key
  ThreadPool* pool = nullptr;            //!< threads to use; nullptr = the calling thread only
  OutOfReach out_of_reach = OutOfReach::error;  //!< and a query no key reaches
  /// The sample weights carry robustness weights (--robust): a query at a key whose whole window
  /// weighs nothing (every row about it an outlier) answers with that key's y, as R's lowess
  /// does; else such a query is out of reach. Only where rows of weight 0 stay keys: under a
  /// nearest-neighbour bandwidth (span, knn), lowess's; at a fixed h they are no keys and such a
  /// query follows out_of_reach. Set by Fitted from the model.
  bool robustness_weights = false;
  /// Identical keys are merged into one (see above); false keeps every row its own key: the
  /// same results up to rounding, slower with many ties. For tests and benchmarks.
  bool merge = true;
  /// Long windows of the fused 1-D path are summed by a fast Gauss transform (above); false
  /// sums them key by key: the same results within the tolerance. For tests and benchmarks.
  bool transform = true;
  /// Wide windows of one column are summed by moments (line_sums.h: every kernel); false sums
  /// them key by key: the same results within the bound of docs/numerics.md. For tests and
  /// benchmarks.
  bool moments = true;
  /// Called as predict and weights advance: (queries done, queries in all), from any thread.
  std::function<void(std::size_t, std::size_t)> progress;
};

/// Throws UsageError naming `--tolerance` unless 0 <= tolerance < 1.
void check_tolerance(double tolerance);

}  // namespace nwreg
