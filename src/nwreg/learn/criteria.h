#pragma once
/// The selection criteria: what a learned bandwidth minimises. A table, one row per criterion
/// (model/settings.h names them): the leave-one-out error itself, or a formula in the in-sample
/// fit's mean squared residual RSS / n and tr(H) with its gradient. Adding a criterion is its
/// value and name in model/settings.h and its row and formula in criteria.cpp.

#include <string>

#include "nwreg/engine/results.h"
#include "nwreg/model/settings.h"

namespace nwreg {

/// How a criterion's value changes with the scale of y: as y^2 (an error, GCV), or by an added
/// constant (a logarithm of one, AICc): what taking it back to y's units does.
enum class CriterionScale { squared, logarithm };

struct CriterionDef {
  Criterion id;
  const char* help;  //!< for --criterion's help
  /// The value at an in-sample fit of n keys, with its gradient in log h when asked (from the
  /// fit's d_mse, d_trace); +inf where undefined. nullptr: the leave-one-out error.
  LooResult (*in_sample)(const InSample& fit, double n, bool gradient);
  CriterionScale scale;
  /// It is defined where n - tr(H) > reserved (AICc 2, GCV 0).
  double reserved;
};

/// A criterion's value `v` taken on y times 2^-k, in y's units.
double in_units_of_y(Criterion criterion, double v, int k);

/// The criterion's row.
const CriterionDef& criterion_def(Criterion criterion);
/// Whether the criterion is computed from the in-sample fit (not the leave-one-out error).
bool uses_in_sample(Criterion criterion);
/// Every criterion's name and help, as --criterion lists them.
std::string criterion_help();

/// The criterion at an in-sample fit of n keys; +inf where it is undefined (AICc once
/// tr(H) + 2 >= n, GCV once tr(H) >= n). With `gradient`, its gradient in log h from the
/// fit's (`fit.d_mse`, `fit.d_trace` must be set).
LooResult criterion_value(Criterion criterion, const InSample& fit, double n, bool gradient);

}  // namespace nwreg
