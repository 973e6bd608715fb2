#pragma once
/// A k-d tree over keys with several columns, for exact pruning: the keys are permuted into
/// leaf order, so that each leaf is a contiguous range of the engine's column arrays and the
/// loops over it vectorise (kernel_nd.h). Each node keeps the bounding box of its keys. A query
/// asks for the leaves whose box lies within a distance of it, measured in bandwidths:
///
///   L2: sum_k (gap_k / h_k)^2,  L1: sum_k gap_k / h_k,  Linf: max_k gap_k / h_k,
///
/// gap_k the distance from q_k to the box's interval in column k (0 inside), and for the key
/// nearest it. Distances are plain sums of rounded terms: callers widen bounds by a margin.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "nwreg/kernel/kernels.h"

namespace nwreg {

class KdTree {
 public:
  KdTree() = default;
  /// Builds over n keys given by column (column k at x + k * n). order()[p] is the key at leaf
  /// position p; `leaf` keys per leaf at most.
  KdTree(const double* x, std::size_t n, std::size_t d, std::size_t leaf = 64);
  const std::vector<std::uint32_t>& order() const { return order_; }
  /// Must be called after the keys are stored in leaf order (x by column, n x d).
  void attach(const double* x) { x_ = x; }

  /// Appends to out each leaf range [lo, hi) whose box lies within distance `bound` of q.
  void ranges(const double* q, const double* inv_h, Norm norm, double bound,
              std::vector<std::pair<std::size_t, std::size_t>>& out) const {
    ranges_where(q, inv_h, norm, [bound](std::uint32_t, double r) { return !(r > bound); }, out);
  }
  /// The same, a node kept where keep(node, its box's distance) holds (a node's descendants are
  /// asked only where it is kept); leaves in increasing order, adjacent ones joined.
  template <class Keep>
  void ranges_where(const double* q, const double* inv_h, Norm norm, const Keep& keep,
                    std::vector<std::pair<std::size_t, std::size_t>>& out) const {
    // Leaves in increasing order: sums run over them in that order.
    walk(q, inv_h, norm, false, keep, [&](std::uint32_t, std::size_t lo, std::size_t hi) {
      if (!out.empty() && out.back().second == lo)
        out.back().second = hi;  // adjacent leaves: one range
      else
        out.emplace_back(lo, hi);
    });
  }
  /// A summary per node (indexed as ranges_where's nodes): leaf(lo, hi) of a leaf's keys,
  /// merge(a, b) of a node's two children's summaries.
  template <class T, class Leaf, class Merge>
  std::vector<T> summarise(const Leaf& leaf, const Merge& merge) const {
    std::vector<T> out(nodes_.size());
    for (std::size_t id = nodes_.size(); id-- > 0;) {  // children are built after their parent
      const Node& nd = nodes_[id];
      out[id] = nd.left == 0 ? leaf(nd.lo, nd.hi) : merge(out[nd.left], out[nd.right]);
    }
    return out;
  }
  /// A search in the manner of nanoflann's result sets: visits the leaves nearest q first,
  /// skipping every node whose box lies farther than result.bound() (in box_distance's units:
  /// the sum of squares for L2), and calls result.leaf(lo, hi) for each leaf visited. The bound
  /// may shrink as the result finds keys (K nearest: the K-th distance so far).
  /// A result with leaf(lo, hi, point) is told too whether the leaf's keys are one point (all
  /// equal: the tree cannot split them, and such a leaf holds every copy of a repeated key).
  template <class Result>
  void search(const double* q, const double* inv_h, Norm norm, Result& result) const {
    walk(q, inv_h, norm, true, [&](std::uint32_t, double r) { return !(r > result.bound()); },
         [&](std::uint32_t id, std::size_t lo, std::size_t hi) {
           if constexpr (requires { result.leaf(lo, hi, true); }) result.leaf(lo, hi, nodes_[id].point);
           else result.leaf(lo, hi);
         });
  }
  /// Visits the leaves nearest q first: a node whose box's distance (search's units)
  /// keep(node, distance) refuses is skipped with its descendants (asked as the walk reaches
  /// it, so a bound the leaves tighten prunes more), leaf(lo, hi) called for each leaf kept.
  template <class Keep, class Leaf>
  void nearest_first(const double* q, const double* inv_h, Norm norm, const Keep& keep, const Leaf& leaf) const {
    walk(q, inv_h, norm, true, keep, [&](std::uint32_t, std::size_t lo, std::size_t hi) { leaf(lo, hi); });
  }
  /// The key (leaf position) nearest q by the norm, other than `skip`; its distance into dmin.
  /// Of keys at the same distance, the first in the order the keys were given.
  std::size_t nearest(const double* q, const double* inv_h, Norm norm, std::size_t skip, double& dmin) const;
  /// The same among the keys (leaf positions) `accept` takes; the size of the keys (none) and an
  /// infinite dmin where it takes none.
  template <class Accept>
  std::size_t nearest_where(const double* q, const double* inv_h, Norm norm, const Accept& accept, double& dmin) const {
    std::size_t best = n_;
    dmin = std::numeric_limits<double>::infinity();
    walk(q, inv_h, norm, true, [&](std::uint32_t, double r) { return !(r > dmin); },
         [&](std::uint32_t, std::size_t lo, std::size_t hi) {
           for (std::size_t i = lo; i < hi; ++i) {
             if (!accept(i)) continue;
             const double r = key_distance(i, q, inv_h, norm);
             if (best == n_ || r < dmin || (r == dmin && order_[i] < order_[best])) dmin = r, best = i;
           }
         });
    return best;
  }

 private:
  // From the root down: a node that keep(node, its box's distance) refuses is skipped with its
  // descendants, leaf(lo, hi) called for each leaf kept; children left first, or with
  // `nearer_first` the one whose box lies nearer q.
  template <class Keep, class Leaf>
  void walk(const double* q, const double* inv_h, Norm norm, bool nearer_first, const Keep& keep,
            const Leaf& leaf) const {
    if (nodes_.empty()) return;
    std::uint32_t stack[128];  // depth <= log2(n / leaf) + 1 < 64 for 32-bit counts
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const std::uint32_t id = stack[--top];
      if (!keep(id, box_distance(id, q, inv_h, norm))) continue;
      const Node& nd = nodes_[id];
      if (nd.left == 0) {
        leaf(id, nd.lo, nd.hi);
        continue;
      }
      const bool left_first =
          !nearer_first || box_distance(nd.left, q, inv_h, norm) <= box_distance(nd.right, q, inv_h, norm);
      stack[top++] = left_first ? nd.right : nd.left;  // the one to visit first last
      stack[top++] = left_first ? nd.left : nd.right;
    }
  }
  struct Node {
    std::size_t lo = 0, hi = 0;
    std::uint32_t left = 0, right = 0;  // children; 0 for a leaf (the root is never a child)
    std::uint32_t first = 0;            // the least of its keys' indices as given (order_)
    std::size_t first_at = 0;           // a leaf: that key's leaf position
    bool point = false;                 // a leaf whose keys are all equal
  };
  std::uint32_t build(std::vector<std::uint32_t>& idx, const double* x, std::size_t lo, std::size_t hi);
  double box_distance(std::uint32_t node, const double* q, const double* inv_h, Norm norm) const;
  double key_distance(std::size_t i, const double* q, const double* inv_h, Norm norm) const;

  std::size_t n_ = 0, d_ = 0, leaf_ = 64;
  std::vector<Node> nodes_;
  std::vector<double> box_;  // per node: d minima, then d maxima
  std::vector<std::uint32_t> order_;
  const double* x_ = nullptr;
};

}  // namespace nwreg
