#pragma once
/// Tests of a smooth against a parametric null (Bowman and Azzalini 1997, "Applied Smoothing
/// Techniques for Data Analysis", ch. 5; R's sm.regression(model = "no effect" | "linear")):
///
///   H0: m(x) = constant ("no effect")  or  m(x) = b0 + b.x ("linear"),
///
/// against the model's smooth at its bandwidth. With e the null model's residuals (weighted
/// least squares) and L the smoother matrix (row i: the fit's weights at x_i),
///
///   RSS0 = sum_i w_i e_i^2,  RSS1 = sum_i w_i ((I - L) e)_i^2,  F = (RSS0 - RSS1) / RSS1,
///
/// and under H0 with normal errors (variance sigma^2 / w_i) the p-value P(F > F_obs) is the
/// chance that the quadratic form Q = e' (D - (1 + F_obs) (I - L)' D (I - L)) e is positive.
/// Its first three cumulants are exact traces; the p-value is that of the shifted and scaled
/// chi-square a chi^2_b + c with the same mean and variance and a skewness of the same size, as
/// sm does (accurate to about 5% of p above 1e-3; conservative below, where the form's skew
/// turns negative). The smooth is the residuals', so any smoother works against either
/// null: local constant (NW) against "linear" asks whether a smooth finds structure the line
/// leaves in its residuals.
///
/// That p-value holds for a bandwidth fixed in advance. A bandwidth learned from the same y
/// (LOO, AICc, GCV, the plug-in) is chosen where the smooth fits best, F included: at the
/// learned bandwidth its size is 9-13% at the 5% level (bench/test_power.py). The permutation
/// calibration repeats the whole procedure, learning included, on up to B data sets made under
/// the null, y* = fitted null + the null's residuals permuted (scaled by sqrt(w) so that each
/// is exchangeable), and p = (1 + #{F* >= F}) / (B + 1); it stops early once F* >= F has
/// happened `stop_after` times, with p = stop_after / (data sets made) (Besag and Clifford 1991,
/// Biometrika 78:301: as valid, and a large p costs a few dozen fits, not B). Under the
/// constant null with equal weights that is an exact permutation test; under the linear one it
/// permutes residuals, which are nearly exchangeable.

#include <cstddef>
#include <functional>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nwreg/base/choice.h"
#include "nwreg/data/dataset.h"
#include "nwreg/engine/options.h"
#include "nwreg/learn/fit.h"
#include "nwreg/model/model.h"

namespace nwreg {

enum class NullModel { constant, linear };
inline constexpr Choice<NullModel> null_choices[] = {{"constant", NullModel::constant}, {"linear", NullModel::linear}};
NullModel parse_null_model(const std::string& name);  //!< ParameterError (null) for another name
std::string to_string(NullModel null);

/// The most rows (with a positive sample weight) the chi-square calibration takes: it forms
/// m x m matrices (three of them: 600 MB at 5,000) and two products of them (m^3 each). The
/// permutation calibration has no such bound: each data set costs a fit and a smooth.
inline constexpr std::size_t test_max_rows = 5000;
/// Throws DataError where the chi-square calibration (no permutations) would take more than
/// test_max_rows rows of positive weight: at once, before any bandwidth is chosen.
void check_test_rows(const Dataset& data, std::size_t permutations);

struct TestOptions {
  NullModel null = NullModel::constant;
  /// B > 0: the permutation calibration with B data sets, the bandwidth chosen afresh on each
  /// by `relearn`; 0: the chi-square calibration at the model's bandwidth.
  std::size_t permutations = 0;
  std::size_t stop_after = 10;    //!< stop once this many F* >= F (0: never)
  std::uint64_t seed = 0;         //!< the permutations' SplitMix64 stream
  const FitPlan* relearn = nullptr;  //!< how the bandwidth was chosen (required with permutations)
  /// The permutations done so far, after each batch.
  std::function<void(std::size_t done, std::size_t total)> on_permutation;
};

struct TestResult {
  NullModel null = NullModel::constant;
  std::size_t rows = 0;         //!< rows with a positive weight (the others take no part)
  std::size_t null_terms = 0;   //!< the null model's coefficients
  double statistic = 0;         //!< F = (RSS0 - RSS1) / RSS1
  double p_value = 1;           //!< by the calibration asked
  std::size_t permutations = 0; //!< data sets the permutation calibration made (<= B); 0: none
  std::size_t exceed = 0;       //!< #{F* >= F} among them
  /// The chi-square p-value at the model's bandwidth, as if fixed in advance: p_value itself
  /// without permutations; beside them where there are at most test_max_rows rows.
  std::optional<double> p_fixed_bandwidth;
  double rss_null = 0;          //!< RSS0
  double rss_smooth = 0;        //!< RSS1
  double df_smooth = 0;         //!< tr(L): the smooth's degrees of freedom
  double extra_df = 0;          //!< tr(E), E = P (L + L' - L'L) P, P the projection off the null
  /// The matched chi-square: Q ~ shift + scale chi^2_df; `skew_negative` where the third cumulant is.
  double chi_df = 0, chi_scale = 0, chi_shift = 0;
  bool skew_negative = false;
  std::vector<std::string> warnings;
};

/// The test of the null against the smooth of `model` (its bandwidth chosen on `data` as
/// options.relearn says) on `data`. Throws DataError for more than test_max_rows rows without
/// permutations, too few rows for the null, or a smooth that interpolates (RSS1 = 0);
/// UsageError for a model with robustness weights (the smooth must be linear in y).
TestResult test_null_model(const Dataset& data, const Model& model, const TestOptions& options,
                           const EngineOptions& engine);

}  // namespace nwreg
