#pragma once
/// Categorical x columns (--categorical, --ordered): their levels, and the kernels that weigh a
/// key by how far its level lies from the query's.
///
/// A categorical column's x holds each level's value: its position 0, 1, ... in the column's
/// order of levels, or, for an ordered column whose labels are all numbers, the number itself
/// (so that distances are their differences, as in statsmodels). Kernels, with lambda the
/// column's smoothing parameter and delta = |x_i - q| (0: the same level):
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
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nwreg/kernel_nd.h"
#include "nwreg/timestamp.h"

namespace nwreg {

/// The levels of a categorical column.
struct Levels {
  std::vector<std::string> labels;  //!< in the column's order
  std::vector<double> values;       //!< each label's value in x, ascending
  bool numeric = false;             //!< ordered labels that are all numbers: values are those numbers

  std::size_t size() const { return labels.size(); }
  /// The value of a label (a number also by value: "4.0" is level "4"); nullopt for a label
  /// that is not a level.
  std::optional<double> find(std::string_view label) const;
  /// The label of a level's value (values[i] gives labels[i]).
  const std::string& label(double value) const;
  /// "a, b, c", the first few labels quoted short, for messages.
  std::string list() const;
};

/// The labels of a column as a reader meets them: while learning, each new label gets the next
/// code 0, 1, ... (in order of first appearance, see seen); against known levels (queries), a
/// label's level value, and nullopt for a label that is not one.
class LabelMap {
 public:
  LabelMap() = default;
  explicit LabelMap(const Levels* known) : known_(known) {}
  std::optional<double> code(std::string_view label);
  const std::vector<std::string>& seen() const { return seen_; }
  const Levels* known() const { return known_; }

 private:
  std::unordered_map<std::string, double> codes_;
  std::vector<std::string> seen_;
  const Levels* known_ = nullptr;
};

/// A column's levels from the labels read (LabelMap::seen, codes in that order) and the
/// value of each code (into `value_of_code`). Order: `order` when given (--levels; every label
/// read must be in it, and listed labels never read are levels too), else, for an ordered
/// column whose labels are all numbers, by value; else numbers by value before text, text as
/// bytes sort. Throws UsageError naming --levels for a label read that `order` lacks or a
/// label listed twice.
Levels make_levels(const std::vector<std::string>& seen, ColumnKind kind, const std::vector<std::string>& order,
                   const std::string& column, std::vector<double>& value_of_code);

/// Which kernels categorical columns take (--categorical-kernel).
enum class CategoricalKernel {
  aitchison_aitken,  //!< Aitchison-Aitken for unordered columns, Wang-van Ryzin for ordered (statsmodels, np)
  li_racine,         //!< Li-Racine for both
};
std::string to_string(CategoricalKernel kernel);
/// Throws UsageError naming --categorical-kernel for an unknown name.
CategoricalKernel parse_categorical_kernel(const std::string& name);

/// The largest lambda a column's kernel takes (see above); a column of one level takes any
/// lambda up to 1 (its keys all match).
double lambda_max(CategoricalKernel kernel, ColumnKind kind, std::size_t levels);
/// The column's kernel at lambda for the engine's loops (kernel_nd.h); lambda within its range.
kernel::Category category(CategoricalKernel kernel, ColumnKind kind, std::size_t levels, double lambda);

}  // namespace nwreg
