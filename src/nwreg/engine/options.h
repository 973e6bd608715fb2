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
struct Dataset;

/// What a query with no key in reach of a compact kernel gets.
enum class OutOfReach {
  error,   //!< DataError naming the query (and, in the leave-one-out error, the row)
  nearest, //!< the value of the nearest key (scaled distance), all the weight on it; identical
           //!< nearest keys share it by sample weight (their weighted mean)
  empty    //!< no answer: NaN for the prediction and its detail, a weight row of 0 (the caller
           //!< leaves the cells empty); in the leave-one-out error as `error`
};


/// The shortcuts the chooser (backends.h) may take, each with the same results as summing every
/// key within the bound docs/numerics.md states. All by default; tests and benchmarks leave some
/// out to compare against key-by-key sums.
enum class Shortcut : unsigned {
  merge_keys = 1,       //!< identical keys merged into one (see above); else every row its own key
  gauss_transform = 2,  //!< long windows of the fused 1-D path by a fast Gauss transform
  line_moments = 4,     //!< wide windows of one column by moments (line_sums.h, every kernel)
  box_series = 8,       //!< several columns at wide bandwidths by series over boxes (gauss_boxes.h)
};
class Shortcuts {
 public:
  static constexpr Shortcuts all() { return Shortcuts(15); }
  constexpr Shortcuts without(Shortcut s) const { return Shortcuts(bits_ & ~static_cast<unsigned>(s)); }
  constexpr bool allow(Shortcut s) const { return (bits_ & static_cast<unsigned>(s)) != 0; }

 private:
  constexpr explicit Shortcuts(unsigned bits) : bits_(bits) {}
  unsigned bits_;
};

/// The loss a fit minimises. Squared: every estimator here is then linear in y (f = sum_i l_i
/// y_i), which standard errors, tr(H) and the tests of fit rest on. Bisquare: Cleveland's
/// robustness iterations (learn/robust.h) reweigh the rows by the bisquare of their residuals
/// and fit again by weighted least squares; the fit is then no longer linear in y, and a query
/// at a key whose whole window those weights leave weighing nothing answers with that key's y,
/// as R's lowess does (where rows of weight 0 stay keys: under a nearest-neighbour bandwidth).
enum class LossFunction { squared, bisquare };

/// The default pruning tolerance: omitted weights below double rounding.
inline constexpr double default_tolerance = 1e-16;

/// How the engine computes: what it computes is the Smoother (model/settings.h), whose
/// neighbour_policy means here: knn = K scales each query's bandwidths to h_k s(q), s(q) the
/// distance from q to its K-th nearest key in the space scaled by h (the continuous columns, in
/// the kernel's norm: Gaussian L2, Laplace L1, compact kernels the largest coordinate; a
/// leave-one-out row's K-th nearest other key); adaptive = K gives key i the bandwidths h_k s_i,
/// s_i its distance (as for knn) to its K-th nearest other key, and divides its weight by s_i^d
/// (d its continuous columns), as R np's adaptive_nn. Keys are then not merged, except adaptive's
/// with an exponential kernel in one continuous column whose rows all weigh something (a key's
/// scale then depends on its x alone: its rows count with multiplicity).
struct EngineOptions : Smoother {
  // Constructors, not aggregate braces, so that Attention(data, {h}) means a bandwidth.
  EngineOptions() = default;
  EngineOptions(double tolerance_, ThreadPool* pool_) : tolerance(tolerance_), pool(pool_) {}

  double tolerance = default_tolerance;  //!< pruning bound (see above); 0 = sum over every key
  ThreadPool* pool = nullptr;            //!< threads to use; nullptr = the calling thread only
  OutOfReach out_of_reach = OutOfReach::error;  //!< and a query no key reaches
  /// The loss the fit minimises (estimator.h): squared, or bisquare by robustness iterations
  /// (--robust), whose robustness weights the sample weights then carry. Set by Fitted from
  /// the model.
  LossFunction loss = LossFunction::squared;
  /// The shortcuts the engine may take (all; without merge_keys the results are the same up to
  /// rounding, slower with many ties).
  Shortcuts shortcuts = Shortcuts::all();
  /// Called as predict and weights advance: (queries done, queries in all), from any thread.
  std::function<void(std::size_t, std::size_t)> progress;
  /// Training data that outlive every engine built from them with these options: where they
  /// have one column in x order and every row is its own key, the engine reads their x in place
  /// rather than copying it (KeyLayout::x_in_place). Engines built from other data copy.
  const Dataset* x_in_place = nullptr;
};

/// Throws UsageError naming `--tolerance` unless 0 <= tolerance < 1.
void check_tolerance(double tolerance);

}  // namespace nwreg
