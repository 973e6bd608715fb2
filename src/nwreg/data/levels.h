#pragma once
/// Categorical x columns (--categorical, --ordered): their levels, read from labels. The
/// kernels that weigh a key by how far its level lies from the query's are in
/// kernel/categorical.h.
///
/// A categorical column's x holds each level's value: its position 0, 1, ... in the column's
/// order of levels, or, for an ordered column whose labels are all numbers, the number itself
/// (so that distances are their differences, as in statsmodels).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nwreg/base/timestamp.h"

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
/// bytes sort. An ordered column of numbers keeps the numbers as values with `order` too, which
/// must then list them ascending. Throws UsageError naming --levels for a label read that
/// `order` lacks, a label listed twice, or numbers of an ordered column listed out of order.
Levels make_levels(const std::vector<std::string>& seen, ColumnKind kind, const std::vector<std::string>& order,
                   const std::string& column, std::vector<double>& value_of_code);

}  // namespace nwreg
