#include "nwreg/engine/key_set.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "nwreg/base/errors.h"

namespace nwreg {

KeySet::KeySet(const Dataset& train, const KeyLayout& layout) : n_in(train.n), d(train.d) {
  for (std::size_t k = 0; k < d; ++k) {
    const ColumnKind kind = train.kind(k);
    kinds.push_back(is_categorical(kind) ? kind : ColumnKind::number);
    names.push_back(k < train.x_names.size() ? train.x_names[k] : "x" + std::to_string(k + 1));
    levels.push_back(is_categorical(kind) && k < train.levels.size() ? train.levels[k].size() : 0);
    categorical = categorical || is_categorical(kind);
    if (!is_categorical(kind)) cont.push_back(k);
  }
  if (n_in > std::numeric_limits<std::uint32_t>::max())
    throw DataError("more than " + std::to_string(std::numeric_limits<std::uint32_t>::max()) + " training rows");
  std::vector<double> w;  // sample weights over the largest; rows of weight 0 are no keys unless kept
  unit_weights = train.weight.empty();
  if (!unit_weights) {
    double wmax = 0;
    for (double v : train.weight) wmax = std::max(wmax, v);
    if (!(wmax > 0)) throw DataError("every sample weight is 0: there is nothing to attend to");
    for (double v : train.weight) w.push_back(v / wmax);
  }
  auto kept = [&](std::size_t i) { return w.empty() || w[i] > 0 || layout.rows == KeyRows::every_row; };
  std::size_t keys = 0;
  for (std::size_t i = 0; i < n_in; ++i) keys += kept(i);
  order.reserve(keys);  // (4 bytes a row, not the up to 8 of growing by doubling)
  for (std::size_t i = 0; i < n_in; ++i)
    if (kept(i)) order.push_back(static_cast<std::uint32_t>(i));
  rows = n = order.size();
  order_keys(train, layout, w);
  bounded = std::all_of(xs.begin(), xs.end(), [](double v) { return std::abs(v) <= bounded_limit; });
  moderate = std::all_of(xs.begin(), xs.end(), [](double v) { return std::abs(v) <= moderate_limit; });
  for (std::size_t s = 0; s < rows; ++s) weighed += w_of(s) > 0;
}

namespace {

// Rows (ascending) sorted by their x, as a stable sort would: pairs (x, row) sorted in place,
// without a stable sort's buffer, read in sequence rather than x at random.
void sort_by_x(const std::vector<double>& x, std::vector<std::uint32_t>& rows) {
  std::vector<std::pair<double, std::uint32_t>> by_x(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) by_x[i] = {x[rows[i]], rows[i]};
  std::sort(by_x.begin(), by_x.end());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = by_x[i].second;
}

}  // namespace

void KeySet::order_keys(const Dataset& train, const KeyLayout& layout, const std::vector<double>& w) {
  // Rows sorted by x (every column in turn; input order among equal ones): identical keys
  // are neighbours. One column keeps this order; several sort a copy.
  auto less = [&](std::uint32_t a, std::uint32_t b) {
    if (d == 1) return train.x[a] < train.x[b];
    return std::lexicographical_compare(train.row(a), train.row(a) + d, train.row(b), train.row(b) + d);
  };
  auto same = [&](std::uint32_t a, std::uint32_t b) { return std::equal(train.row(a), train.row(a) + d, train.row(b)); };
  std::vector<std::uint32_t> copy;
  if (d > 1) copy = order;
  std::vector<std::uint32_t>& sorted = d == 1 ? order : copy;
  // (Data in x order are in key order already: no copy of x to sort, 16 bytes a row.)
  const bool in_x_order = d == 1 && std::is_sorted(train.x.begin(), train.x.end());
  if (d == 1 && !in_x_order) sort_by_x(train.x, order);
  else std::stable_sort(sorted.begin(), sorted.end(), less);
  std::size_t distinct = n == 0 ? 0 : 1;
  for (std::size_t i = 1; i < n; ++i) distinct += !same(sorted[i - 1], sorted[i]);
  merged = (layout.rows == KeyRows::merged || (layout.rows == KeyRows::merged_if_most_repeat && 2 * distinct <= n)) &&
           distinct < n;
  // Merged: the keys in engine order as indices into start, each distinct key's first
  // position in `sorted`; its first row names it, and they stand in the order of those rows.
  std::vector<std::uint32_t> start, key;
  if (merged) {
    for (std::size_t i = 0; i < n; ++i)
      if (i == 0 || !same(sorted[i - 1], sorted[i])) start.push_back(static_cast<std::uint32_t>(i));
    start.push_back(static_cast<std::uint32_t>(n));
    key.resize(distinct);
    std::iota(key.begin(), key.end(), std::uint32_t{0});
    if (d > 1)
      std::sort(key.begin(), key.end(), [&](std::uint32_t a, std::uint32_t b) { return sorted[start[a]] < sorted[start[b]]; });
    std::vector<std::uint32_t> firsts;
    for (std::uint32_t k : key) firsts.push_back(sorted[start[k]]);
    if (d == 1) copy = order;  // order becomes the keys; the rows stay sorted in copy
    order = std::move(firsts);
  } else if (d > 1) {
    copy = {};
  }
  const std::vector<std::uint32_t>& rows_sorted = d == 1 && !merged ? order : copy;  // (one column, not merged: order stays)
  n = order.size();
  // Several columns: keys in the leaf order of a k-d tree over the continuous ones.
  if (layout.tree_leaf && d >= 2 && !cont.empty() && n >= 2 * *layout.tree_leaf) {
    const std::size_t dc = cont.size();
    std::vector<double> cols(n * dc);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < dc; ++c) cols[c * n + i] = train.row(order[i])[cont[c]];
    tree = std::make_unique<KdTree>(cols.data(), n, dc, *layout.tree_leaf);
    std::vector<std::uint32_t> leaf_order(n), leaf_key(merged ? n : 0);
    for (std::size_t p = 0; p < n; ++p) {
      leaf_order[p] = order[tree->order()[p]];
      if (merged) leaf_key[p] = key[tree->order()[p]];
    }
    order = std::move(leaf_order);
    key = std::move(leaf_key);
  }
  double ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
  for (std::uint32_t i : merged ? rows_sorted : order) {
    ylo = std::min(ylo, train.y[i]);
    yhi = std::max(yhi, train.y[i]);
  }
  const double ymax = ylo <= yhi ? std::max(std::abs(ylo), std::abs(yhi)) : 0.0;
  if (ymax > 0) {
    int e;
    std::frexp(ymax, &e);  // 2^(e-1) <= ymax < 2^e, and 2^e may overflow
    y_scale = std::ldexp(1.0, e - 1);
  }
  y_mid = ymax > 0 ? (0.5 * ylo + 0.5 * yhi) / y_scale : 0.0;
  ys.resize(n);
  if (merged) {
    merge_slots(train, w, start, key, rows_sorted);
  } else {
    if (!w.empty())
      for (std::size_t i = 0; i < n; ++i) ws.push_back(w[order[i]]);
    for (std::size_t i = 0; i < n; ++i) ys[i] = train.y[order[i]] / y_scale;
  }
  // Every row its own key, in x order: key i is row i, and x serves as it is.
  store(train, layout.x_in_place && in_x_order && !merged && n == n_in);
}

void KeySet::merge_slots(const Dataset& train, const std::vector<double>& w, const std::vector<std::uint32_t>& start,
                         const std::vector<std::uint32_t>& key, const std::vector<std::uint32_t>& rows_sorted) {
  auto weight = [&](std::uint32_t r) { return w.empty() ? 1.0 : w[r]; };
  // Each key's rows in input order: its slots. Sums over the rest of a key without one row
  // are a prefix and a suffix added, not a total less the row (no cancellation).
  // (Sized once: rows * 28 bytes at 1e8 rows of one key, with no copy made growing them.)
  first_slot.reserve(n + 1);
  first_slot.push_back(0);
  for (auto* v : {&slot_y, &rest_w, &rest_dy}) v->reserve(rows);
  slot_row.reserve(rows);
  if (!w.empty()) slot_w.reserve(rows);
  ws.resize(n);
  q2.resize(n);
  least_rest.resize(n);
  for (std::size_t g = 0; g < n; ++g) {
    const std::size_t a = start[key[g]], z = start[key[g] + 1], s0 = slot_row.size();
    double W = 0, wy = 0;  // wy: sum of w (y - y of the first row): equal values stay exact
    for (std::size_t i = a; i < z; ++i) {
      const std::uint32_t r = rows_sorted[i];
      slot_row.push_back(r);
      slot_y.push_back(train.y[r] / y_scale);
      if (!w.empty()) slot_w.push_back(w[r]);
      W += weight(r);
      wy += weight(r) * (slot_y.back() - slot_y[s0]);
    }
    ws[g] = W;
    ys[g] = slot_y[s0] + wy / W;
    // The suffix sums (the rows after each) first, into the rest's own slots; then each adds
    // its prefix (the rows before), summed as it goes.
    const std::size_t m = z - a;
    rest_w.resize(s0 + m);
    rest_dy.resize(s0 + m);
    auto dy = [&](std::size_t k) { return weight(slot_row[s0 + k]) * (slot_y[s0 + k] - ys[g]); };
    double after_w = 0, after_dy = 0;
    for (std::size_t k = m; k-- > 0;) {
      rest_w[s0 + k] = after_w;
      rest_dy[s0 + k] = after_dy;
      after_w += weight(slot_row[s0 + k]);
      after_dy += dy(k);
    }
    double before_w = 0, before_dy = 0, sq = 0, least = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < m; ++k) {
      const double wk = weight(slot_row[s0 + k]);
      rest_w[s0 + k] = before_w + rest_w[s0 + k];
      rest_dy[s0 + k] = before_dy + rest_dy[s0 + k];
      least = std::min(least, rest_w[s0 + k]);
      before_w += wk;
      before_dy += dy(k);
      sq += (wk / W) * (wk / W);
    }
    least_rest[g] = least;
    q2[g] = sq;
    first_slot.push_back(static_cast<std::uint32_t>(slot_row.size()));
  }
}

std::vector<std::uint32_t> KeySet::slot_of_rows() const {
  std::vector<std::uint32_t> out(n_in, std::numeric_limits<std::uint32_t>::max());
  for (std::size_t s = 0; s < rows; ++s) out[row_of(s)] = static_cast<std::uint32_t>(s);
  return out;
}

void KeySet::store(const Dataset& train, bool x_in_place) {
  if (x_in_place) {
    xs = train.x;
  } else {
    xs_own_.resize(n * d);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < d; ++k) xs_own_[k * n + i] = train.row(order[i])[k];
    xs = xs_own_;
  }
  if (d > 1)
    for (std::size_t i = 0; i < n; ++i) xr.insert(xr.end(), train.row(order[i]), train.row(order[i]) + d);
  if (tree && categorical) {  // the continuous columns in leaf order, for the tree
    for (std::size_t k : cont)
      xc.insert(xc.end(), xs.begin() + static_cast<std::ptrdiff_t>(k * n), xs.begin() + static_cast<std::ptrdiff_t>((k + 1) * n));
  }
  if (tree) tree->attach(tree_columns());
}

}  // namespace nwreg
