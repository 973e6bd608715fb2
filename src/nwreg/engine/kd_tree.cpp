#include "nwreg/engine/kd_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace nwreg {

KdTree::KdTree(const double* x, std::size_t n, std::size_t d, std::size_t leaf)
    : n_(n), d_(d), leaf_(std::max<std::size_t>(leaf, 1)) {
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), std::uint32_t{0});
  nodes_.reserve(2 * (n / leaf_ + 1));
  if (n > 0) build(order_, x, 0, n);
}

std::uint32_t KdTree::build(std::vector<std::uint32_t>& idx, const double* x, std::size_t lo, std::size_t hi) {
  const auto id = static_cast<std::uint32_t>(nodes_.size());
  nodes_.push_back({lo, hi, 0, 0});
  box_.resize(box_.size() + 2 * d_);
  double* mn = &box_[id * 2 * d_];
  double* mx = mn + d_;
  std::size_t widest = 0;
  for (std::size_t k = 0; k < d_; ++k) {
    mn[k] = std::numeric_limits<double>::infinity();
    mx[k] = -mn[k];
    for (std::size_t p = lo; p < hi; ++p) {
      const double v = x[k * n_ + idx[p]];
      mn[k] = std::min(mn[k], v);
      mx[k] = std::max(mx[k], v);
    }
    if (mx[k] - mn[k] > mx[widest] - mn[widest]) widest = k;
  }
  if (hi - lo <= leaf_ || !(mx[widest] > mn[widest])) {  // a leaf, or keys all equal
    const auto first = std::min_element(idx.begin() + static_cast<std::ptrdiff_t>(lo), idx.begin() + static_cast<std::ptrdiff_t>(hi));
    nodes_[id].first = *first;
    nodes_[id].first_at = static_cast<std::size_t>(first - idx.begin());
    nodes_[id].point = !(mx[widest] > mn[widest]);
    return id;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  const double* col = x + widest * n_;
  std::nth_element(idx.begin() + static_cast<std::ptrdiff_t>(lo), idx.begin() + static_cast<std::ptrdiff_t>(mid),
                   idx.begin() + static_cast<std::ptrdiff_t>(hi), [&](std::uint32_t a, std::uint32_t b) {
                     return col[a] < col[b] || (col[a] == col[b] && a < b);
                   });
  const std::uint32_t left = build(idx, x, lo, mid);
  const std::uint32_t right = build(idx, x, mid, hi);
  nodes_[id].left = left;
  nodes_[id].right = right;
  nodes_[id].first = std::min(nodes_[left].first, nodes_[right].first);
  return id;
}

double KdTree::box_distance(std::uint32_t node, const double* q, const double* inv_h, Norm norm) const {
  const double* mn = &box_[node * 2 * d_];
  const double* mx = mn + d_;
  double s = 0;
  for (std::size_t k = 0; k < d_; ++k) {
    const double g = std::max({mn[k] - q[k], q[k] - mx[k], 0.0}) * inv_h[k];
    s = norm == Norm::l2 ? s + g * g : norm == Norm::l1 ? s + g : std::max(s, g);
  }
  return s;
}

double KdTree::key_distance(std::size_t i, const double* q, const double* inv_h, Norm norm) const {
  double s = 0;
  for (std::size_t k = 0; k < d_; ++k) {
    const double g = std::abs(x_[k * n_ + i] - q[k]) * inv_h[k];
    s = norm == Norm::l2 ? s + g * g : norm == Norm::l1 ? s + g : std::max(s, g);
  }
  return s;
}

std::size_t KdTree::nearest(const double* q, const double* inv_h, Norm norm, std::size_t skip, double& dmin) const {
  // Ties: the first key as given. A node none of whose keys can be nearer than the best so far
  // nor tie with it from before it in that order is skipped (copies of one key sit in one leaf:
  // without that, every copy would be read, m copies costing m^2 over their queries).
  std::size_t best = skip == 0 ? 1 : 0;
  dmin = std::numeric_limits<double>::infinity();
  walk(q, inv_h, norm, true,
       [&](std::uint32_t id, double r) { return !(r > dmin) && !(r == dmin && nodes_[id].first > order_[best]); },
       [&](std::uint32_t id, std::size_t lo, std::size_t hi) {
         // A leaf of copies of one key: one distance, that of its first key as given.
         if (nodes_[id].point && nodes_[id].first_at != skip) lo = nodes_[id].first_at, hi = lo + 1;
         for (std::size_t i = lo; i < hi; ++i) {
           if (i == skip) continue;
           const double r = key_distance(i, q, inv_h, norm);
           if (r < dmin || (r == dmin && order_[i] < order_[best])) dmin = r, best = i;
         }
       });
  return best;
}

}  // namespace nwreg
