#pragma once
/// The kernels of categorical x columns (data/levels.h holds their levels): each weighs a key
/// by how far its level lies from the query's. With lambda the column's smoothing parameter and
/// delta = |x_i - q| (0: the same level; x a level's value):
///
///   Aitchison-Aitken (unordered, c levels):  1 - lambda at delta = 0, else lambda / (c - 1);
///                                            0 < lambda <= (c - 1) / c
///   Wang-van Ryzin (ordered):                1 - lambda at delta = 0, else (1 - lambda) / 2 lambda^delta;
///                                            0 < lambda <= 1 (at 1, the limit of the ratios:
///                                            another level weighs 1/2 at any distance)
///   Li-Racine (--categorical-kernel li-racine): 1 at delta = 0, else lambda (unordered) or
///                                            lambda^delta (ordered); 0 < lambda <= 1
///
/// Only ratios of weights matter (every estimate divides by their sum), so the engine weighs a
/// key 2^-cost relative to one at the query's level: cost = 0 at delta = 0, else
/// base + step * (ordered ? delta : 1) (kernel_nd.h).

#include <cstddef>
#include <string>

#include "nwreg/base/choice.h"
#include "nwreg/base/timestamp.h"
#include "nwreg/kernel/kernel_nd.h"

namespace nwreg {

/// Which kernels categorical columns take (--categorical-kernel).
enum class CategoricalKernel {
  aitchison_aitken,  //!< Aitchison-Aitken for unordered columns, Wang-van Ryzin for ordered (statsmodels, np)
  li_racine,         //!< Li-Racine for both
};
inline constexpr Choice<CategoricalKernel> categorical_kernel_choices[] = {
    {"aitchison-aitken", CategoricalKernel::aitchison_aitken}, {"li-racine", CategoricalKernel::li_racine}};
std::string to_string(CategoricalKernel kernel);
/// Throws ParameterError (categorical_kernel) for an unknown name.
CategoricalKernel parse_categorical_kernel(const std::string& name);

/// The largest lambda a column's kernel takes (see above); a column of one level takes any
/// lambda up to 1 (its keys all match).
double lambda_max(CategoricalKernel kernel, ColumnKind kind, std::size_t levels);
/// The column's kernel at lambda for the engine's loops (kernel_nd.h); lambda within its range.
kernel::Category category(CategoricalKernel kernel, ColumnKind kind, std::size_t levels, double lambda);

}  // namespace nwreg
