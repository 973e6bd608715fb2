#pragma once
/// The training rows as the engine holds them: its keys, in engine order, and the maps back to
/// the input rows. Built once per engine and read-only after.
///
/// - Rows of sample weight 0 are no keys (unless KeyRows::every_row). Sample weights are divided by the largest (empty:
///   every key weighs 1); targets by y_scale, the power of two in (max|y|/2, max|y|], so that
///   sums of weighted values never overflow.
/// - Engine order: sorted by x with one x column (windows are then sorted ranges); the leaf
///   order of a k-d tree over the continuous columns with several (each leaf a contiguous
///   range); else input order. Keys are stored by column (xs[k * n + i]) and, with several
///   columns, also by row (xr[i * d + k]).
/// - x read in place (KeyLayout::x_in_place): one column of data already in x order, every row
///   a key and none merged: xs is the data's x itself, not a copy (8 bytes a row less); the
///   data then outlive the keys.
/// - Merged keys: identical keys (equal in every column) are one key whose weight is the sum W
///   of their rows' sample weights and whose value is their weighted mean. Its rows are its
///   slots, in input order: slots [first(g), first(g + 1)) of key g, each with its input row,
///   value and weight, and the rest of its key without it (weight rest_w, sum of w (y - y_key)
///   rest_dy: each a prefix plus a suffix, never a total less the slot, so nothing cancels).
///   Without merged keys slot and key are the same.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/engine/kd_tree.h"

namespace nwreg {

/// "No key": an exclusion that excludes nothing, or a search that found nothing.
inline constexpr std::size_t no_key = static_cast<std::size_t>(-1);

/// Which rows become keys, and how identical ones are kept.
enum class KeyRows {
  every_row,     //!< every row its own key, those of sample weight 0 too (of weight 0): neighbour
                 //!< bandwidths count them
  weighed_rows,  //!< every row of sample weight > 0 its own key (leave-block-out counts rows)
  merged,        //!< the weighed rows, identical ones merged into one key where there are some
  merged_if_most_repeat,  //!< merged only where at least half the keys are repeats (the fused
                          //!< 1-D path's loop over every row beats the weighted one over groups)
};

/// How the keys are laid out.
struct KeyLayout {
  KeyRows rows = KeyRows::merged;
  /// Several columns: the keys in the leaf order of a k-d tree with leaves of this many keys
  /// (none: no tree, in input order).
  std::optional<std::size_t> tree_leaf;
  /// The data outlive the keys (EngineOptions::x_in_place): where their one column is in x order
  /// and every row its own key, the keys read x in place.
  bool x_in_place = false;
};

class KeySet {
 public:
  /// Throws DataError when every sample weight is 0 or there are more than 2^32 - 1 rows.
  KeySet(const Dataset& train, const KeyLayout& layout);
  // xs points into xs_own_ or the data: a copy would point into the original's, while a move
  // takes the buffer xs points into along.
  KeySet(const KeySet&) = delete;
  KeySet& operator=(const KeySet&) = delete;
  KeySet(KeySet&&) = default;
  KeySet& operator=(KeySet&&) = default;

  std::size_t n_in = 0;  //!< input rows
  std::size_t n = 0;     //!< keys (distinct when merged)
  std::size_t rows = 0;  //!< rows of sample weight > 0: slots
  std::size_t weighed = 0;  //!< slots of sample weight > 0 (rows, less the kept rows of weight 0: KeyRows::every_row)
  std::size_t d = 0;     //!< columns
  std::span<const double> xs;                //!< keys by column (n * d): xs_own_, or the data's x read in place
  std::vector<double> xr, ys, ws;            //!< keys by row, values / y_scale, weights
  std::vector<std::uint32_t> order;          //!< engine -> input row (a key's first)
  bool unit_weights = true;  //!< no sample weights given: every key weighs at least 1
  bool bounded = false;      //!< every |x| <= bounded_limit: the kernels' factored form cannot overflow
  bool moderate = false;     //!< every |x| <= moderate_limit: nor their products over several columns (kernel::Keys)
  bool merged = false;
  std::vector<std::uint32_t> first_slot, slot_row;
  std::vector<double> slot_y, slot_w, rest_w, rest_dy;
  std::vector<double> q2;  //!< merged: per key, sum over its rows of (s_i / W)^2
  std::vector<double> least_rest;  //!< merged: per key, the least rest_w of its rows (one window serves them all)
  double y_scale = 1;
  double y_mid = 0;  //!< the middle of the values' range (over y_scale)
  // The columns: kind (number for continuous ones), name, levels (categorical), and the indices
  // of the continuous ones.
  std::vector<ColumnKind> kinds;
  std::vector<std::string> names;
  std::vector<std::size_t> levels;
  std::vector<std::size_t> cont;
  bool categorical = false;  //!< some column is categorical
  /// The k-d tree over the continuous columns (KeyLayout::tree_leaf, n >= 2 leaves); with categorical
  /// columns its own copy of the continuous columns in leaf order (xc).
  std::unique_ptr<KdTree> tree;
  std::vector<double> xc;

  static constexpr double bounded_limit = 4e307, moderate_limit = 4e153;

  /// Each input row's slot (uint32 max: none, a row of sample weight 0 that is no key): n_in
  /// entries, made on demand (4 bytes a row that a pass over every row does without).
  std::vector<std::uint32_t> slot_of_rows() const;
  /// The key slot s belongs to.
  std::size_t key_of(std::size_t s) const {
    if (!merged) return s;
    return static_cast<std::size_t>(std::upper_bound(first_slot.begin(), first_slot.end(), s) - first_slot.begin()) - 1;
  }
  /// Key g's slots: [first(g), first(g + 1)).
  std::size_t first(std::size_t g) const { return merged ? first_slot[g] : g; }
  /// Slot s's input row, value (over y_scale) and sample weight (over the largest).
  std::size_t row_of(std::size_t s) const { return merged ? slot_row[s] : order[s]; }
  double y_of(std::size_t s) const { return merged ? slot_y[s] : ys[s]; }
  double w_of(std::size_t s) const {
    if (merged) return slot_w.empty() ? 1.0 : slot_w[s];
    return ws.empty() ? 1.0 : ws[s];
  }
  /// Key i's weight (the sum over a merged key's rows).
  double weight(std::size_t i) const { return ws.empty() ? 1.0 : ws[i]; }
  /// Slot s's share of key g's weight.
  double share(std::size_t s, std::size_t g) const { return merged ? w_of(s) / ws[g] : 1.0; }
  /// Key i's coordinates (d of them).
  const double* key(std::size_t i) const { return d == 1 ? &xs[i] : &xr[i * d]; }
  /// The key whose coordinates q points at (key(i) == q), else no_key.
  std::size_t key_at(const double* q) const {
    const std::span<const double> v = d == 1 ? xs : std::span<const double>(xr);
    if (v.empty() || std::less<const double*>()(q, v.data()) || !std::less<const double*>()(q, v.data() + v.size()))
      return no_key;
    const auto offset = static_cast<std::size_t>(q - v.data());
    return offset % d == 0 ? offset / d : no_key;
  }
  /// Column k of the keys.
  const double* column(std::size_t k) const { return xs.data() + k * n; }
  /// The continuous columns the tree was built on, in leaf order by column.
  const double* tree_columns() const { return categorical ? xc.data() : xs.data(); }
  /// q's continuous coordinates (q itself without categorical columns; else copied into buf).
  const double* continuous(const double* q, double* buf) const {
    if (!categorical) return q;
    for (std::size_t c = 0; c < cont.size(); ++c) buf[c] = q[cont[c]];
    return buf;
  }

 private:
  void order_keys(const Dataset& train, const KeyLayout& layout, const std::vector<double>& w);
  void merge_slots(const Dataset& train, const std::vector<double>& w, const std::vector<std::uint32_t>& start,
                   const std::vector<std::uint32_t>& key, const std::vector<std::uint32_t>& rows_sorted);
  void store(const Dataset& train, bool x_in_place);
  std::vector<double> xs_own_;  // xs, where it is not the data's x
};

}  // namespace nwreg
