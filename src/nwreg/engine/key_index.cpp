#include "nwreg/engine/key_index.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace nwreg {

KeyIndex::KeyIndex(const KeySet& keys, Kernel kernel, double tolerance, bool line, std::size_t leave_out, double edge)
    : keys_(keys),
      kernel_(kernel),
      tolerance_(tolerance),
      leave_out_(leave_out),
      edge_(edge),
      kind_(line ? Kind::line : keys.tree ? Kind::tree : Kind::every),
      search_(kind_ == Kind::line ? Search::window : kind_ == Kind::tree ? Search::leaves : Search::every) {
  const std::size_t n = keys.n;
  const bool sorted = keys.d == 1 && !keys.categorical;  // (one continuous column: keys in x order)
  if (!sorted || std::all_of(keys.ws.begin(), keys.ws.end(), [](double w) { return w > 0; })) return;
  weighed_left_.resize(n);
  weighed_right_.resize(n);
  auto none = static_cast<std::uint32_t>(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (keys.weight(i) > 0) none = static_cast<std::uint32_t>(i);
    weighed_left_[i] = none;
  }
  none = static_cast<std::uint32_t>(n);
  for (std::size_t i = n; i-- > 0;) {
    if (keys.weight(i) > 0) none = static_cast<std::uint32_t>(i);
    weighed_right_[i] = none;
  }
}

void KeyIndex::weighed_anchor(const double* qt, std::size_t exclude, const double* tree_inv_h, std::size_t& c,
                              double& rc) const {
  const std::size_t n = keys_.n;
  if (c < n && keys_.weight(c) > 0) return;
  const Block ex = block(exclude);
  if (kind_ == Kind::tree) {
    double r;
    const std::size_t a = keys_.tree->nearest_where(
        qt, tree_inv_h, nearest_norm(), [&](std::size_t i) { return !ex.contains(i) && keys_.weight(i) > 0; }, r);
    if (a < n) c = a, rc = r;
    return;
  }
  if (weighed_left_.empty()) return;
  // The nearest weighed key on each side of q, stepping over the left-out block.
  const double q = qt[0];
  const std::span<const double> xs = keys_.xs;
  const auto p = static_cast<std::size_t>(std::lower_bound(xs.begin(), xs.end(), q) - xs.begin());
  std::size_t left = p == 0 ? n : weighed_left_[p - 1];
  if (left < n && ex.contains(left)) left = ex.lo == 0 ? n : weighed_left_[ex.lo - 1];
  std::size_t right = p < n ? weighed_right_[p] : n;
  if (right < n && ex.contains(right)) right = ex.hi < n ? weighed_right_[ex.hi] : n;
  if (left < n && (right == n || !(xs[right] - q < q - xs[left]))) c = left;
  else if (right < n) c = right;
}

Norm KeyIndex::nearest_norm() const {
  return visit_kernel(kernel_, []<class K>(K) { return K::l1 ? Norm::l1 : Norm::l2; });
}

void KeyIndex::choose(const double* tree_inv_h, const kernel::Keys& keys, bool per_query) {
  if (kind_ != Kind::tree) return;
  search_ = Search::leaves;
  if (per_query) return;
  // The tree prunes where keys lie beyond reach; where a query reaches most of them (many
  // columns, a wide bandwidth) its leaves cost more than summing every key. Measured at this
  // bandwidth: 32 keys spread over the tree, as queries, and the keys their leaves hold.
  const std::size_t n = keys_.n, m = 32;
  const Norm norm = visit_kernel(kernel_, []<class K>(K) { return K::norm; });
  std::uint64_t reached = 0;
  std::vector<Range> ranges;
  std::vector<double> qc(keys_.d);
  for (std::size_t k = 0; k < m; ++k) {
    const double* q = keys_.key((2 * k + 1) * n / (2 * m));
    const double* qt = keys_.continuous(q, qc.data());
    double rb = 0;
    std::size_t b = keys_.tree->nearest(qt, tree_inv_h, nearest_norm(), no_key, rb);
    weighed_anchor(qt, no_key, tree_inv_h, b, rb);
    ranges.clear();
    keys_.tree->ranges(qt, tree_inv_h, norm, reach_bound(keys_.weight(b) * level_factor(b, q, keys), rb), ranges);
    for (const auto& [lo, hi] : ranges) reached += hi - lo;
  }
  if (2 * reached > m * n) search_ = Search::every;
}

Block KeyIndex::block(std::size_t exclude) const {
  if (exclude == no_key) return {};
  return {exclude - std::min(exclude, leave_out_), std::min(keys_.n, exclude + leave_out_ + 1)};
}

void KeyIndex::set_scales(const double* inv_s, const double* lognorm) {
  scale_nodes_.clear();
  tree_scales_.clear();
  if (!inv_s) return;
  weight_top_ = keys_.ws.empty() ? 1.0 : *std::max_element(keys_.ws.begin(), keys_.ws.end());
  auto summary = [&](std::size_t lo, std::size_t hi) {
    ScaleNode v{lo, hi, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
    for (std::size_t i = lo; i < hi; ++i) {
      v.inv_s = std::min(v.inv_s, inv_s[i]);
      v.lognorm = std::max(v.lognorm, lognorm[i]);
    }
    return v;
  };
  auto merge = [](const ScaleNode& a, const ScaleNode& z) {
    return ScaleNode{a.lo, std::max(a.hi, z.hi), std::min(a.inv_s, z.inv_s), std::max(a.lognorm, z.lognorm)};
  };
  if (kind_ == Kind::tree) {
    tree_scales_ = keys_.tree->summarise<ScaleNode>(summary, merge);
    return;
  }
  if (keys_.d != 1 || keys_.categorical || kind_ != Kind::every) return;
  const std::size_t n = keys_.n, blocks = (n + scale_block - 1) / scale_block;
  scale_leaf_ = 1;
  while (scale_leaf_ < blocks) scale_leaf_ *= 2;
  scale_nodes_.assign(2 * scale_leaf_, ScaleNode{n, n, std::numeric_limits<double>::infinity(),
                                                 -std::numeric_limits<double>::infinity()});
  for (std::size_t j = 0; j < blocks; ++j) scale_nodes_[scale_leaf_ + j] = summary(j * scale_block, std::min(n, (j + 1) * scale_block));
  for (std::size_t j = scale_leaf_ - 1; j >= 1; --j) {
    const ScaleNode &a = scale_nodes_[2 * j], &z = scale_nodes_[2 * j + 1];
    scale_nodes_[j] = z.lo == n ? a : merge(a, z);
  }
}

std::size_t KeyIndex::cover_scaled(const double* q, std::size_t exclude, const double* inv_h, const double* tree_inv_h,
                                   const kernel::Keys& keys, std::vector<Range>& ranges, double* buf) const {
  // Key i weighs w_i 2^lognorm_i K(|x_i - q| / (h s_i)): a node's keys at least D bandwidths
  // from q (its interval in one column, its box in several, in the kernel's norm) weigh at most
  // w_top 2^lognorm K(D / s), its heaviest normalisation and widest scale. Compact kernels:
  // nodes beyond every key's support are left out. Exponential ones: relative to c, the key
  // nearest q (by x, or by the tree's scaled distance; S0 >= its weight), nodes whose keys weigh
  // below tolerance / n of it (their sum below tolerance S0, as window_1d). Where c weighs 0,
  // the nearest key that weighs something; where none does, every key.
  const std::size_t n = keys_.n;
  const bool tree = kind_ == Kind::tree;
  const double* qt = tree ? keys_.continuous(q, buf) : q;
  double rc = 0;
  std::size_t c = tree ? keys_.tree->nearest(qt, tree_inv_h, nearest_norm(), exclude, rc) : nearest_1d(q[0], exclude);
  weighed_anchor(qt, exclude, tree_inv_h, c, rc);
  double floor = -std::numeric_limits<double>::infinity();  // log2 of the weight a node must reach
  const bool compact = is_compact(kernel_);
  bool prune = compact;
  if (!compact && tolerance_ > 0 && c != no_key && c < n && keys_.weight(c) > 0) {
    floor = kernel::log2_weight(kernel_, keys, c, q, inv_h) + std::log2(keys_.weight(c) / weight_top_) +
            std::log2(tolerance_ / static_cast<double>(n));
    prune = std::isfinite(floor);
  }
  // D in bandwidths of h (ih = 1 / h of its column; the tree's distances are scaled already).
  auto reaches = [&](const ScaleNode& v, double D, double ih) {
    if (!prune) return true;
    ih *= v.inv_s;
    return visit_kernel(kernel_, [&]<class K>(K) {
      if constexpr (K::compact) return D * ih <= 1 + 1e-12;
      else return v.lognorm + K::term(D, 0, 0, ih) >= floor - 1e-9;
    });
  };
  ranges.clear();
  if (tree) {
    const Norm norm = visit_kernel(kernel_, []<class K>(K) { return K::norm; });
    keys_.tree->ranges_where(qt, tree_inv_h, norm, [&](std::uint32_t id, double r) {
      return reaches(tree_scales_[id], norm == Norm::l2 ? std::sqrt(r) : r, 1.0);
    }, ranges);
  } else {
    const double* xs = keys_.xs.data();
    std::vector<std::size_t> stack{1};
    while (!stack.empty()) {
      const std::size_t j = stack.back();
      stack.pop_back();
      const ScaleNode& v = scale_nodes_[j];
      if (v.lo >= n || !reaches(v, std::max({0.0, xs[v.lo] - q[0], q[0] - xs[v.hi - 1]}), inv_h[0])) continue;
      if (j >= scale_leaf_) {
        if (!ranges.empty() && ranges.back().second == v.lo) ranges.back().second = v.hi;
        else ranges.emplace_back(v.lo, v.hi);
        continue;
      }
      stack.push_back(2 * j + 1);  // left first: ranges in x order
      stack.push_back(2 * j);
    }
  }
  // b: the key of largest weight (kernel::nearest's distance of equal weight), as a scan of
  // every key finds it: no key weighs more than c without sample weights, so none left out.
  const Block ex = block(exclude);
  std::size_t b = no_key;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [lo, hi] : ranges)
    for (const auto& [a, z] : {Range{lo, std::clamp(ex.lo, lo, hi)}, Range{std::clamp(ex.hi, lo, hi), hi}}) {
      if (a >= z) continue;
      double r;
      const std::size_t i = kernel::nearest(kernel_, keys, a, z, exclude, q, inv_h, r);
      if (i != no_key && (b == no_key || r < best)) best = r, b = i;
    }
  // No key kept whose support holds q (compact: a node is kept where its widest scale reaches,
  // not each key's own): the nearest of all, for the nearest-key fallback.
  if (b == no_key || (compact && !(best <= 1))) {
    double r;
    b = nearest(q, exclude, inv_h, keys, r);
  }
  return b;
}

double KeyIndex::level_factor(std::size_t i, const double* q, const kernel::Keys& keys) const {
  if (!keys.cat) return 1;
  double cost = 0;
  for (std::size_t k = 0; k < keys_.d; ++k)
    if (keys.cat[k].on) cost += keys.cat[k].cost(keys_.xs[k * keys_.n + i] - q[k]);
  return std::exp2(-cost);
}

std::size_t KeyIndex::weighed_reference(std::size_t b, const double* q, std::size_t exclude, const double* inv_h,
                                        const kernel::Keys& keys, const std::vector<Range>& ranges) const {
  if (is_compact(kernel_) || b >= keys_.n || keys_.weight(b) > 0) return b;
  // kernel::nearest's distance of equal weight (adaptive scales and categorical costs in), as
  // cover_scaled finds b, among the weighed keys.
  const Block ex = block(exclude);
  double best = std::numeric_limits<double>::infinity();
  std::size_t c = b;
  for (const auto& [lo, hi] : ranges)
    for (const auto& [a, z] : {Range{lo, std::clamp(ex.lo, lo, hi)}, Range{std::clamp(ex.hi, lo, hi), hi}}) {
      if (a >= z) continue;
      double r;
      const std::size_t i = kernel::nearest(kernel_, keys, a, z, exclude, q, inv_h, r, true);
      if (r < best) best = r, c = i;  // (strictly: the first of equal distances)
    }
  return c;
}

std::size_t KeyIndex::cover(const double* q, std::size_t exclude, double rest, double h, const double* inv_h,
                            const double* tree_inv_h, const kernel::Keys& keys, std::vector<Range>& ranges,
                            double* buf) const {
  if (!scale_nodes_.empty() || !tree_scales_.empty()) {
    const std::size_t b = cover_scaled(q, exclude, inv_h, tree_inv_h, keys, ranges, buf);
    // rest > 0: q is this key, the rest of its rows the nearest at distance 0
    return rest > 0 ? exclude : weighed_reference(b, q, exclude, inv_h, keys, ranges);
  }
  ranges.clear();
  double rb = 0, wb = rest;
  const Norm norm = visit_kernel(kernel_, []<class K>(K) { return K::norm; });
  if (search_ == Search::leaves && keys_.categorical) {
    // The leaves within reach of the key nearest in the continuous columns (its weight counts
    // its levels' factor: every key's factor is at most 1), then b, the key of largest weight,
    // among them.
    const double* qt = keys_.continuous(q, buf);
    if (rest == 0) {
      std::size_t c = keys_.tree->nearest(qt, tree_inv_h, nearest_norm(), exclude, rb);
      weighed_anchor(qt, exclude, tree_inv_h, c, rb);
      wb = keys_.weight(c) * level_factor(c, q, keys);
    }
    keys_.tree->ranges(qt, tree_inv_h, norm, reach_bound(wb, rb), ranges);
    if (rest > 0) return exclude;  // q is this key, the rest of its rows the nearest at distance 0
    double best = std::numeric_limits<double>::infinity();
    std::size_t b = no_key;
    for (const auto& [lo, hi] : ranges) {
      if (hi - lo == 1 && lo == exclude) continue;
      double r;
      const std::size_t i = kernel::nearest(kernel_, keys, lo, hi, exclude, q, inv_h, r);
      if (r < best || b == no_key) best = r, b = i;
    }
    return weighed_reference(b, q, exclude, inv_h, keys, ranges);
  }
  // rest > 0: q is this key, the rest of its rows the nearest at distance 0. a: the key the
  // reach is measured from, one that weighs something.
  std::size_t b = exclude, a = exclude;
  if (rest == 0) {
    a = b = nearest(q, exclude, inv_h, keys, rb);
    if (search_ != Search::every) weighed_anchor(q, exclude, tree_inv_h, a, rb);
    wb = keys_.weight(a);
  }
  if (kind_ == Kind::line) {
    std::size_t lo, hi;
    window_1d(q[0], h, a, wb, lo, hi);
    ranges.emplace_back(lo, hi);
  } else if (search_ == Search::leaves) {
    keys_.tree->ranges(q, tree_inv_h, norm, reach_bound(wb, rb), ranges);
  } else {
    ranges.emplace_back(0, keys_.n);
  }
  if (rest > 0) return b;
  // (a, where found, is the weighed key of largest weight: the nearest.)
  return weighed_reference(keys_.weight(a) > 0 && !is_compact(kernel_) ? a : b, q, exclude, inv_h, keys, ranges);
}

void KeyIndex::identical(std::size_t b, std::size_t exclude, const double* tree_inv_h, std::vector<Range>& ranges,
                         double* buf) const {
  const Block ex = block(exclude);
  const double* xb = keys_.key(b);
  if (keys_.merged) {
    ranges.assign(1, {b, b + 1});
  } else if (kind_ == Kind::line) {
    std::size_t lo = b, hi = b + 1;
    while (lo > 0 && keys_.xs[lo - 1] == xb[0] && !ex.contains(lo - 1)) --lo;
    while (hi < keys_.n && keys_.xs[hi] == xb[0] && !ex.contains(hi)) ++hi;
    ranges.assign(1, {lo, hi});
  } else if (keys_.tree) {
    ranges.clear();
    keys_.tree->ranges(keys_.continuous(xb, buf), tree_inv_h, Norm::linf, 0, ranges);
  } else {
    ranges.assign(1, {0, keys_.n});
  }
}

std::size_t KeyIndex::nearest_1d(double q, std::size_t exclude) const {
  const std::span<const double> xs = keys_.xs;
  const auto p = static_cast<std::size_t>(std::lower_bound(xs.begin(), xs.end(), q) - xs.begin());
  const Block ex = block(exclude);
  const std::size_t right = ex.contains(p) ? ex.hi : p;
  std::size_t left = p == 0 ? no_key : p - 1;
  if (left != no_key && ex.contains(left)) left = ex.lo == 0 ? no_key : ex.lo - 1;
  if (left == no_key) return right;
  if (right >= keys_.n) return left;
  // x_l <= q <= x_r: both distances are differences of nearby numbers, exact or nearly, and
  // never underflow to a tie the way a product of them can (keys near 1e-200).
  return xs[right] - q < q - xs[left] ? right : left;
}

std::size_t KeyIndex::nearest_weighted(const double* q, std::size_t exclude, const double* inv_h) const {
  const Norm norm = nearest_norm();
  std::size_t best = no_key;
  double rmin = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < keys_.n; ++i) {
    if (i == exclude || !(keys_.weight(i) > 0)) continue;
    const double r = neighbour_distance(i, q, inv_h, norm);
    if (best == no_key || r < rmin || (r == rmin && keys_.order[i] < keys_.order[best])) rmin = r, best = i;
  }
  return best;
}

void KeyIndex::window_1d(double q, double h, std::size_t b, double wb, std::size_t& lo, std::size_t& hi) const {
  const std::span<const double> xs = keys_.xs;
  const double xb = xs[b];
  if (!is_compact(kernel_) && tolerance_ == 0) {
    lo = 0;
    hi = keys_.n;
    return;
  }
  // Keys with |x - q| <= r; the margins absorb rounding at the edge.
  const double r = visit_kernel(kernel_, [&]<class K>(K) {
    if constexpr (K::compact) {
      // The support, whose margin absorbs rounding at the edge (weights past it are exactly 0);
      // lowess's cut exactly, as the moment line's.
      return edge_ < 1 ? h * edge_ : h * (1 + 1e-12);
    } else {
      // The omitted weights E0 move the prediction by at most E0 (max y - min y) / S0, so keys
      // may be left out while E0 <= tolerance S0. Relative to the nearest key (weight wb: its
      // sample weight, 1 without them, the sum of a merged key's), every key within h of q
      // weighs at least K(1) (e^-1/2 Gaussian, e^-1 Laplace) times its weight, at least 1
      // without sample weights: S0 >= max(wb, count K(1)). Keys with weight below e^-T,
      // T = ln(n / (tolerance S0_low)), add up to less than that; each such normalised weight
      // is below tolerance / n.
      const auto near_lo = std::lower_bound(xs.begin(), xs.end(), q - h);
      const auto near_hi = std::upper_bound(near_lo, xs.end(), q + h);
      const double s0_low = keys_.unit_weights ? std::max(wb, static_cast<double>(near_hi - near_lo) * K::floor) : wb;
      const double T = std::max(0.5, std::log(static_cast<double>(keys_.n) / (tolerance_ * s0_low)));
      return K::reach(std::abs(q - xb), h, T) * (1 + 1e-12);
    }
  });
  lo = static_cast<std::size_t>(std::lower_bound(xs.begin(), xs.end(), q - r) - xs.begin());
  hi = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), q + r) - xs.begin());
}

double KeyIndex::reach_bound(double wb, double rb) const {
  return visit_kernel(kernel_, [&]<class K>(K) {
    if constexpr (K::compact) {
      return 1 + 1e-12;  // the support
    } else {
      // As window_1d: keys below e^-T relative to b, T = ln(n / (tolerance S0_low)), add up to
      // less than tolerance S0; S0 >= wb, b's own weight (1 without sample weights, the sum
      // over a merged key's rows).
      if (tolerance_ == 0) return std::numeric_limits<double>::infinity();
      const double T = std::max(0.5, std::log(static_cast<double>(keys_.n) / (tolerance_ * wb)));
      return K::bound(rb, T) * (1 + 1e-12);
    }
  });
}

std::size_t KeyIndex::nearest(const double* q, std::size_t exclude, const double* inv_h, const kernel::Keys& keys,
                              double& rmin) const {
  if (kind_ == Kind::line) return nearest_1d(q[0], exclude);
  if (const Block out = block(exclude); out.hi > out.lo + 1) {
    // Leave-block-out over keys in x order (one column, adaptive): the nearest outside the block.
    std::size_t b = no_key;
    for (const auto& [lo, hi] : {Range{0, out.lo}, Range{out.hi, keys_.n}}) {
      if (lo == hi) continue;
      double r;
      const std::size_t i = kernel::nearest(kernel_, keys, lo, hi, exclude, q, inv_h, r);
      if (b == no_key || r < rmin) b = i, rmin = r;
    }
    return b;
  }
  // (The tree knows the continuous columns only: with categorical ones, every key.)
  // (Adaptive: the key of largest weight, each at its own scale, by a scan of every key.)
  const std::size_t b = keys_.tree && !keys_.categorical && !keys.inv_s
                            ? keys_.tree->nearest(q, inv_h, nearest_norm(), exclude, rmin)
                            : kernel::nearest(kernel_, keys, 0, keys_.n, exclude, q, inv_h, rmin);
  // A sum of d rounded terms errs by less than (d + 3) 2^-53 rmin. Below this bound a key
  // nearer than b by rounding weighs less than 2^46 relative to b: the sums stay finite and
  // exact in their factored form (kernels.h), only measured from a key a hair farther away.
  if (rmin * static_cast<double>(keys_.d + 3) < 0x1p58 || keys.inv_s) return b;  // (adaptive: no exact form)
  return nearest_exact(q, exclude, inv_h, keys);
}

std::size_t KeyIndex::nearest_exact(const double* q, std::size_t exclude, const double* inv_h,
                                    const kernel::Keys& keys) const {
  // The nearest key by an exact comparison of scaled distances (see kernels::gap); L1 for
  // Laplace. Only for queries so far away, or bandwidths so small, that the plain distances
  // lose the nearest key. Only the sign of each comparison matters, so the columns are scaled
  // by 1/h_k over the largest 1/h: no overflow at h = 1e-160. Of keys at the same distance, the
  // first as given.
  const std::size_t d = keys_.d, n = keys_.n;
  auto on = [&](std::size_t k) { return keys.cat && keys.cat[k].on; };
  double top = 0;
  for (std::size_t k = 0; k < d; ++k) top = std::max(top, on(k) ? 0.0 : inv_h[k]);
  std::vector<double> scale(d);
  for (std::size_t k = 0; k < d; ++k) scale[k] = inv_h[k] / top;
  // And by a power of two more where the scaled offsets from q pass 2^500 (x near 1e200 at
  // h = 1): gap's product of two would overflow, and one column's inf meet another's -inf.
  double far = 0;
  for (std::size_t k = 0; k < d; ++k)
    if (!on(k))
      for (std::size_t i = 0; i < n; ++i) far = std::max(far, std::abs(keys_.xs[k * n + i] - q[k]) * scale[k]);
  if (far > 0x1p500 && std::isfinite(far))
    for (double& v : scale) v = std::ldexp(v, -std::ilogb(far));
  // A categorical column's cost as a distance of equal weight (kernel_nd.h), in the same units.
  const double unit = visit_kernel(kernel_, []<class K>(K) { return kernels::distance_per_log2<K>; });
  std::size_t b = exclude == 0 ? 1 : 0;
  visit_kernel(kernel_, [&]<class K>(K) {
    for (std::size_t i = b + 1; i < n; ++i) {
      if (i == exclude) continue;
      double delta = 0;
      for (std::size_t k = 0; k < d; ++k) {
        const double xi = keys_.xs[k * n + i], xb = keys_.xs[k * n + b];
        if (on(k)) {
          delta += unit * (keys.cat[k].cost(xi - q[k]) - keys.cat[k].cost(xb - q[k])) / (K::l1 ? top : top * top);
          continue;
        }
        delta += K::l1 ? kernels::l1_gap(xi, xb, q[k]) * scale[k] : kernels::gap(xi, xb, q[k], scale[k]);
      }
      if (delta < 0 || (delta == 0 && keys_.order[i] < keys_.order[b])) b = i;
    }
  });
  return b;
}

}  // namespace nwreg
