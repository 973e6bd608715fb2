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

#include <cstddef>
#include <string>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/engine/options.h"
#include "nwreg/model/model.h"

namespace nwreg {

enum class NullModel { constant, linear };
NullModel parse_null_model(const std::string& name);  //!< "constant", "linear"; UsageError naming --null
std::string to_string(NullModel null);

/// The most rows (with a positive sample weight) the test takes: it forms m x m matrices
/// (three of them: 600 MB at 5,000) and two products of them (m^3 each).
inline constexpr std::size_t test_max_rows = 5000;

struct TestResult {
  NullModel null = NullModel::constant;
  std::size_t rows = 0;         //!< rows with a positive weight (the others take no part)
  std::size_t null_terms = 0;   //!< the null model's coefficients
  double statistic = 0;         //!< F = (RSS0 - RSS1) / RSS1
  double p_value = 1;
  double rss_null = 0;          //!< RSS0
  double rss_smooth = 0;        //!< RSS1
  double df_smooth = 0;         //!< tr(L): the smooth's degrees of freedom
  double extra_df = 0;          //!< tr(E), E = P (L + L' - L'L) P, P the projection off the null
  /// The matched chi-square: Q ~ shift + scale chi^2_df; `skew_negative` where the third cumulant is.
  double chi_df = 0, chi_scale = 0, chi_shift = 0;
  bool skew_negative = false;
  std::vector<std::string> warnings;
};

/// The test of `null` against the smooth of `model` (a bandwidth chosen as fit chooses it) on
/// `data`. Throws DataError for more than test_max_rows rows, too few rows for the null, or a
/// smooth that interpolates (RSS1 = 0); UsageError for a model with robustness weights (the
/// smooth must be linear in y).
TestResult test_null_model(const Dataset& data, const Model& model, NullModel null, const EngineOptions& engine);

}  // namespace nwreg
