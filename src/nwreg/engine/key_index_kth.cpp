// The key index's neighbour distances (key_index.h): the K-th nearest distance by the
// bandwidth policy's rule, in one column (a binary search over the sorted keys) and in several
// (a search of the k-d tree, bounded by the last query's), and the distances it is made of.
#include "nwreg/engine/key_index.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace nwreg {

namespace {

// Where K keys lie at q (s = 0), or widened (a compact kernel), the next distance beyond s: the
// smallest distance above `after`, from `next_above` (+inf where there is none), 2^-40 of it
// where K keys lie at q and `limit`; with no key beyond, twice the K-th distance. 1 where no positive finite scale exists (every key at q,
// or distances that overflow): any positive scale then gives q the keys' mean.
template <class F>
double settle(double s, bool widen, bool limit, const F& next_above) {
  if (!(s > 0) || widen) {
    const double after = s;
    s = next_above(after);
    if (!std::isfinite(s) && after > 0) s = 2 * after;
    else if (!(after > 0) && !widen && limit) s = std::ldexp(s, -40);
  }
  return std::isfinite(s) && s > 0 ? s : 1.0;
}

}  // namespace

Norm KeyIndex::norm(Neighbours policy) const {
  return policy == Neighbours::span ? Norm::l2 : visit_kernel(kernel_, []<class K>(K) { return K::norm; });
}

bool KeyIndex::widens(Neighbours policy) const { return policy != Neighbours::span && is_compact(kernel_); }

template <class F>
double KeyIndex::settled(double s, Neighbours policy, const F& next_above) const {
  return settle(s, widens(policy), policy == Neighbours::knn, next_above);
}

double KeyIndex::kth_distance(const double* q, std::size_t exclude, std::size_t K, const double* inv_h,
                              double* scratch, Neighbours policy, KthHint* hint, double* in_sample) const {
  if (in_sample) *in_sample = std::numeric_limits<double>::quiet_NaN();
  if (keys_.d == 1 && !keys_.categorical && keys_.merged) return kth_rows_1d(q[0], exclude, K, inv_h[0], policy);
  if (keys_.d == 1 && !keys_.categorical) {  // sorted by x
    const Block out = policy == Neighbours::adaptive || exclude == no_key
                          ? Block{exclude, exclude == no_key ? exclude : exclude + 1}
                                                         : block(exclude);
    return kth_distance_1d(q[0], out, K, inv_h[0], policy);
  }
  if (kind_ == Kind::tree) {
    if (in_sample && (policy != Neighbours::span || exclude >= keys_.n)) in_sample = nullptr;
    if (!hint)
      return kth_distance_tree(q, exclude, K, inv_h, policy, std::numeric_limits<double>::infinity(), nullptr, in_sample);
    const double s = kth_distance_tree(q, exclude, K, inv_h, policy, hinted_bound(*hint, q, exclude, inv_h, policy),
                                       &hint->kth, in_sample);
    hint->q.assign(q, q + keys_.d);
    hint->inv_h.assign(inv_h, inv_h + keys_.d);
    hint->at_key = exclude != no_key;
    return s;
  }
  // Every key's distance into scratch; the K-th smallest.
  const Norm norm = this->norm(policy);
  std::size_t m = 0;
  for (std::size_t i = 0; i < keys_.n; ++i)
    if (i != exclude) scratch[m++] = neighbour_distance(i, q, inv_h, norm);
  if (m == 0) return 1;
  const std::size_t k = std::min(K, m) - 1;
  std::nth_element(scratch, scratch + k, scratch + m);
  return settled(scratch[k], policy, [&](double after) {
    double s = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < m; ++i)
      if (scratch[i] > after) s = std::min(s, scratch[i]);
    return s;
  });
}

std::size_t KeyIndex::kth_scratch() const {
  return kind_ == Kind::every && (keys_.d > 1 || keys_.categorical) ? keys_.n : 0;
}

namespace {

// A distance in `norm` from the sums of its scaled offsets z_k over the columns: the largest
// (top), their sum (r1) and the sum of their squares (r2). NaN where the plain sums do not
// serve (an L1 sum that overflows; for L2, a largest coordinate beyond 1e+-140, where a square
// could overflow or matter underflowing): neighbour_distance's guarded form then.
// The scaled offsets z_k = |x_k - q_k| inv_h_k over the continuous columns, as plain_distance
// takes them: their largest, sum and sum of squares (x(k): the point's coordinate k).
struct Offsets {
  double top = 0, r1 = 0, r2 = 0;
};
template <class X>
Offsets offsets(const std::vector<std::size_t>& cont, const X& x, const double* q, const double* inv_h) {
  Offsets o;
  for (std::size_t k : cont) {
    const double z = std::abs(x(k) - q[k]) * inv_h[k];
    o.top = std::max(o.top, z);
    o.r1 += z;
    o.r2 += z * z;
  }
  return o;
}

double plain_distance(double top, double r1, double r2, Norm norm) {
  if (norm == Norm::linf || top == 0 || !std::isfinite(top)) return top;
  if (norm == Norm::l1) return std::isfinite(r1) ? r1 : std::numeric_limits<double>::quiet_NaN();
  return top >= 1e-140 && top <= 1e140 ? std::sqrt(r2) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

double KeyIndex::neighbour_distance(std::size_t i, const double* q, const double* inv_h, Norm norm) const {
  // Plain sums where no square can overflow or matter underflowing (the largest coordinate
  // within 1e+-140); else L2 is summed over the largest coordinate, so that 1e300 and 1e-300
  // neither overflow nor underflow when squared.
  const std::size_t n = keys_.n;
  auto x = [&](std::size_t k) { return keys_.xs[k * n + i]; };
  const Offsets o = offsets(keys_.cont, x, q, inv_h);
  if (const double plain = plain_distance(o.top, o.r1, o.r2, norm); !std::isnan(plain)) return plain;
  double r = 0;
  for (std::size_t k : keys_.cont) {
    const double z = std::abs(x(k) - q[k]) * inv_h[k] / o.top;
    r += norm == Norm::l2 ? z * z : z;
  }
  return (norm == Norm::l2 ? std::sqrt(r) : r) * o.top;
}

double KeyIndex::nearest_distance(const double* q, const double* inv_h, const double* tree_inv_h, double* buf,
                                  const double* inv_s) const {
  if (keys_.n == 0) return std::numeric_limits<double>::quiet_NaN();
  if (keys_.cont.empty()) return 0;
  const Norm norm = nearest_norm();
  if (keys_.tree && !inv_s) {
    double dmin = 0;
    return neighbour_distance(keys_.tree->nearest(keys_.continuous(q, buf), tree_inv_h, norm, no_key, dmin), q, inv_h,
                              norm);
  }
  double best = std::numeric_limits<double>::infinity();
  auto scan = [&](std::size_t lo, std::size_t hi) {  // (adaptive keeps rows of weight 0 as keys: no rows here)
    for (std::size_t i = lo; i < hi; ++i)
      if (keys_.weight(i) > 0) best = std::min(best, neighbour_distance(i, q, inv_h, norm) * (inv_s ? inv_s[i] : 1));
  };
  // A node whose keys lie at least D bandwidths from q holds none nearer than D times its
  // smallest 1 / s_i (widened against the distances' rounding; a box distance that overflows,
  // past 1e154 bandwidths squared, bounds nothing).
  auto keep = [&](const ScaleNode& v, double D) { return !std::isfinite(D) || !(D * v.inv_s > best * (1 + 1e-12)); };
  if (inv_s && kind_ == Kind::tree) {
    keys_.tree->nearest_first(keys_.continuous(q, buf), tree_inv_h, norm, [&](std::uint32_t id, double r) {
      return keep(tree_scales_[id], norm == Norm::l2 ? std::sqrt(r) : r);
    }, scan);
    return best;
  }
  if (inv_s && !scale_nodes_.empty()) {  // one column: the tree over blocks in x order, the nearer child first
    const std::size_t n = keys_.n;
    const double* xs = keys_.xs.data();
    auto gap = [&](const ScaleNode& v) { return std::max({0.0, xs[v.lo] - q[0], q[0] - xs[v.hi - 1]}) * inv_h[0]; };
    std::vector<std::size_t> stack{1};
    while (!stack.empty()) {
      const std::size_t j = stack.back();
      stack.pop_back();
      const ScaleNode& v = scale_nodes_[j];
      if (v.lo >= n || !keep(v, gap(v))) continue;
      if (j >= scale_leaf_) {
        scan(v.lo, v.hi);
        continue;
      }
      const bool right_empty = scale_nodes_[2 * j + 1].lo >= n;
      const bool left_first = right_empty || gap(scale_nodes_[2 * j]) <= gap(scale_nodes_[2 * j + 1]);
      stack.push_back(left_first ? 2 * j + 1 : 2 * j);
      stack.push_back(left_first ? 2 * j : 2 * j + 1);
    }
    return best;
  }
  scan(0, keys_.n);
  return best;
}

double KeyIndex::hinted_bound(const KthHint& hint, const double* q, std::size_t exclude, const double* inv_h,
                              Neighbours policy) const {
  const std::size_t d = keys_.d;
  const bool at_key = exclude != no_key;
  if (hint.q.size() != d || hint.at_key != at_key || !std::equal(inv_h, inv_h + d, hint.inv_h.begin()) ||
      (at_key && !std::equal(q, q + d, keys_.key(exclude))))
    return std::numeric_limits<double>::infinity();
  // The distance D between the two queries, as neighbour_distance measures a key's: the last
  // query's K-th distance s' bounds this one's by s' + D, widened against rounding.
  const Offsets o = offsets(keys_.cont, [&](std::size_t k) { return hint.q[k]; }, q, inv_h);
  const double upper = (hint.kth + plain_distance(o.top, o.r1, o.r2, norm(policy))) * (1 + 1e-12);
  return std::isfinite(upper) ? upper : std::numeric_limits<double>::infinity();  // (NaN: none)
}

void KeyIndex::neighbour_distances(std::size_t lo, std::size_t hi, const double* q, const double* inv_h, Norm norm,
                                   double* r) const {
  // neighbour_distance's sums, column by column over a block (they vectorise), in the same
  // order, so each value is the same; its guarded path where the plain one does not serve.
  const std::size_t n = keys_.n, m = hi - lo;
  double top[distance_block] = {}, r1[distance_block] = {}, r2[distance_block] = {};
  for (std::size_t k : keys_.cont) {
    const double* x = keys_.xs.data() + k * n + lo;
    const double qk = q[k], ih = inv_h[k];
    for (std::size_t j = 0; j < m; ++j) {
      const double z = std::abs(x[j] - qk) * ih;
      top[j] = std::max(top[j], z);
      r1[j] += z;
      r2[j] += z * z;
    }
  }
  for (std::size_t j = 0; j < m; ++j) {
    r[j] = plain_distance(top[j], r1[j], r2[j], norm);
    if (std::isnan(r[j])) r[j] = neighbour_distance(lo + j, q, inv_h, norm);
  }
}

double KeyIndex::kth_distance_tree(const double* q, std::size_t exclude, std::size_t K, const double* inv_h,
                                   Neighbours policy, double upper, double* found, double* in_sample) const {
  // The tree's boxes over the continuous columns bound each key's distance from below (in the
  // tree's units: squared for L2); the search keeps candidate distances, cut to the K smallest
  // (a linear selection) whenever they reach 2K, and prunes boxes beyond the K-th of them,
  // widened against rounding, or beyond `upper`, known before (a KthHint's), until then. (A
  // heap of K cost log K a candidate: span:0.01 at 1e5 rows spent most of its time there.)
  const Norm norm = this->norm(policy);
  std::vector<double> qc(keys_.cont.size()), ih(keys_.cont.size());
  for (std::size_t c = 0; c < keys_.cont.size(); ++c) qc[c] = q[keys_.cont[c]], ih[c] = inv_h[keys_.cont[c]];
  auto box_units = [&](double r) { return (norm == Norm::l2 ? r * r : r) * (1 + 1e-9); };
  struct Nearest {
    const KeyIndex& index;
    const double* q;
    const double* inv_h;
    Norm norm;
    std::size_t exclude, K;
    const decltype(box_units)& units;
    std::vector<double> kept;  // candidates: every distance below the K-th of those cut so far
    double kth;
    double bound() const { return std::isfinite(kth) ? units(kth) : kth; }
    bool cut() {  // the K smallest kept (with multiplicity), the K-th of them last
      if (kept.size() < K) return false;  // the bound given was wrong
      std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(K - 1), kept.end());
      kept.resize(K);
      kth = kept.back();
      return true;
    }
    void leaf(std::size_t lo, std::size_t hi, bool point) {
      if (point) {  // copies of one key: one distance, at most K of its copies kept
        const std::size_t i = lo != exclude ? lo : lo + 1;
        if (i >= hi) return;
        const double r = index.neighbour_distance(i, q, inv_h, norm);
        const std::size_t copies = hi - lo - (exclude >= lo && exclude < hi ? 1 : 0);
        if (r < kth) kept.insert(kept.end(), std::min(copies, K), r);
        if (kept.size() >= 2 * K) cut();
        return;
      }
      double r[distance_block];
      for (std::size_t a = lo; a < hi; a += distance_block) {
        const std::size_t z = std::min(hi, a + distance_block);
        index.neighbour_distances(a, z, q, inv_h, norm, r);
        for (std::size_t i = a; i < z; ++i)
          if (r[i - a] < kth && i != exclude) kept.push_back(r[i - a]);  // (one equal to the K-th leaves it unchanged)
      }
      if (kept.size() >= 2 * K) cut();
    }
  };
  const std::size_t m = keys_.n - (exclude < keys_.n ? 1 : 0);
  if (m == 0) return 1;
  Nearest near{*this, q, inv_h, norm, exclude, std::min(K, m), box_units, {}, upper};
  near.kept.reserve(2 * near.K + 64);
  keys_.tree->search(qc.data(), ih.data(), norm, near);
  if (!near.cut())
    return kth_distance_tree(q, exclude, K, inv_h, policy, std::numeric_limits<double>::infinity(), found, in_sample);
  if (found) *found = near.kth;  // the K-th distance itself, for the next query's bound
  if (in_sample) {
    // q's in-sample row counts q itself at distance 0 among its K nearest: the (K-1)-th of the
    // others (the largest but one kept), or with K past them all the K-th. Where that is 0
    // (a key equal to q) the in-sample rule looks beyond it: left to its own search.
    const double s = K <= m ? (K >= 2 ? *std::max_element(near.kept.begin(), near.kept.end() - 1) : 0.0) : near.kth;
    if (s > 0 && std::isfinite(s)) *in_sample = s;
  }
  // The smallest distance beyond `after`: the same search for one key, farther than after.
  struct Beyond {
    const KeyIndex& index;
    const double* q;
    const double* inv_h;
    Norm norm;
    std::size_t exclude;
    const decltype(box_units)& units;
    double after, best = std::numeric_limits<double>::infinity();
    double bound() const { return std::isfinite(best) ? units(best) : best; }
    void leaf(std::size_t lo, std::size_t hi, bool point) {
      if (point) hi = std::min(hi, lo + 2);  // copies of one key: one distance (one other than exclude)
      double r[distance_block];
      for (std::size_t a = lo; a < hi; a += distance_block) {
        const std::size_t z = std::min(hi, a + distance_block);
        index.neighbour_distances(a, z, q, inv_h, norm, r);
        for (std::size_t i = a; i < z; ++i)
          if (i != exclude && r[i - a] > after) best = std::min(best, r[i - a]);
      }
    }
  };
  return settled(near.kth, policy, [&](double after) {
    Beyond beyond{*this, q, inv_h, norm, exclude, box_units, after};
    keys_.tree->search(qc.data(), ih.data(), norm, beyond);
    return beyond.best;
  });
}

double KeyIndex::kth_distance_1d(double q, Block out, std::size_t K, double inv_h, Neighbours policy) const {
  // Keys sorted by x: the K nearest are a window [L, L + K) of the keys less the block `out`
  // (the left-out row and its leave-out neighbours), found by a binary search on L (the window
  // moves right while its left end lies farther from q than the key just past its right end);
  // the K-th distance is the farther of its two ends.
  const std::span<const double> xs = keys_.xs;
  const std::size_t n = keys_.n, skip = out.hi > out.lo ? out.hi - out.lo : 0, m = n - skip;
  if (m == 0) return 1;
  auto at = [&](std::size_t j) { return xs[j < out.lo ? j : j + skip]; };  // j-th key less the block
  auto dist = [&](double x) { return std::abs(x - q) * inv_h; };
  const std::size_t k = std::min(K, m);
  std::size_t lo = 0, hi = m - k;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if ((q - at(mid)) * inv_h > (at(mid + k) - q) * inv_h) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const double s = std::max(dist(at(lo)), dist(at(lo + k - 1)));
  return settled(s, policy, [&](double after) { return next_above_1d(q, out, inv_h, after); });
}

std::pair<std::size_t, std::size_t> KeyIndex::within_1d(double q, std::size_t p, double inv_h, double r) const {
  // Distances rise away from q on each side of p.
  const std::span<const double> xs = keys_.xs;
  auto dist = [&](double x) { return std::abs(x - q) * inv_h; };
  const auto mid = xs.begin() + static_cast<std::ptrdiff_t>(p);
  const auto lo = std::partition_point(xs.begin(), mid, [&](double x) { return dist(x) > r; });
  const auto hi = std::partition_point(mid, xs.end(), [&](double x) { return !(dist(x) > r); });
  return {static_cast<std::size_t>(lo - xs.begin()), static_cast<std::size_t>(hi - xs.begin())};
}

double KeyIndex::next_above_1d(double q, Block out, double inv_h, double after) const {
  // The nearest key on each side of q farther than `after`: those just outside the keys within it.
  const std::span<const double> xs = keys_.xs;
  const std::size_t n = keys_.n;
  const auto p = static_cast<std::size_t>(std::lower_bound(xs.begin(), xs.end(), q) - xs.begin());
  auto [l, r] = within_1d(q, p, inv_h, after);
  double best = std::numeric_limits<double>::infinity();
  if (out.contains(r)) r = out.hi;
  if (r < n) best = std::min(best, std::abs(xs[r] - q) * inv_h);
  if (l > 0 && out.contains(l - 1)) l = out.lo;
  if (l > 0) best = std::min(best, std::abs(xs[l - 1] - q) * inv_h);
  return best;
}

double KeyIndex::kth_rows_1d(double q, std::size_t self, std::size_t K, double inv_h, Neighbours policy) const {
  // Merged keys sorted by x, each counted with its rows: the K-th distance is the least key
  // distance r within which K other rows lie (one row of key `self` left out). The rows within r
  // rise with r, so on each side of q a binary search over the keys finds the least such r
  // (each step counting the rows within by two more); the nearer side's is the K-th distance,
  // as the K-th smallest of every other row's distance.
  const std::span<const double> xs = keys_.xs;
  const std::size_t n = keys_.n, others = keys_.rows - (self == no_key ? 0 : 1);
  if (others == 0) return 1;
  const std::size_t k = std::min(K, others);
  auto dist = [&](double x) { return std::abs(x - q) * inv_h; };
  const auto p = static_cast<std::size_t>(std::lower_bound(xs.begin(), xs.end(), q) - xs.begin());
  auto enough = [&](double r) {  // at least k other rows within r
    const auto [lo, hi] = within_1d(q, p, inv_h, r);
    return keys_.first(hi) - keys_.first(lo) - (self == no_key ? 0 : 1) >= k;
  };
  double s = std::numeric_limits<double>::infinity();
  std::size_t lo = p, hi = n;  // right of q: the first key far enough
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (enough(dist(xs[mid]))) hi = mid;
    else lo = mid + 1;
  }
  if (lo < n) s = dist(xs[lo]);
  lo = 0, hi = p;  // left of q: the last key far enough (the first not, less one)
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (enough(dist(xs[mid]))) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0) s = std::min(s, dist(xs[lo - 1]));
  return settled(s, policy, [&](double after) { return next_above_1d(q, Block{}, inv_h, after); });
}

}  // namespace nwreg
