#pragma once
/// What the fast Gauss transform's two halves share (gauss_transform.cpp: the boxes' series;
/// gauss_targets.cpp: the target-side series and the bins): the series' limits, factorial and
/// Hermite tables, and the per-box sums made in parallel.

#include <algorithm>
#include <cstddef>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "nwreg/base/thread_pool.h"
#include "nwreg/kernel/gauss_transform.h"

namespace nwreg::gauss {

inline constexpr std::size_t max_terms = 64;
inline constexpr double e_const = 2.718281828459045;

// Factorials and the Hermite functions' recurrence, for k < 2 max_terms + max_target_order + 2
// (the target-side series' cells use h_k up to k = 2 p + max_target_order - 2).
struct Tables {
  static constexpr std::size_t size = 2 * max_terms + GaussTransform::max_target_order + 2;
  double inv_fact[size], sign_fact[size];  // 1 / k!, (-1)^k / k!
  double scale[size];                      // sqrt(2^k k!)
  double up[size], back[size];             // sqrt(2 / (k + 1)), sqrt(k / (k + 1))
  Tables() {
    for (std::size_t k = 0; k < size; ++k) {
      const double kd = static_cast<double>(k);
      inv_fact[k] = k == 0 ? 1 : inv_fact[k - 1] / kd;
      sign_fact[k] = k % 2 ? -inv_fact[k] : inv_fact[k];
      scale[k] = std::exp(0.5 * (kd * std::log(2.0) + std::lgamma(kd + 1)));
      up[k] = std::sqrt(2 / (kd + 1));
      back[k] = std::sqrt(kd / (kd + 1));
    }
  }
};
inline const Tables& tables() {
  static const Tables t;
  return t;
}

// A pure function's results kept by its arguments, across transforms and threads: the series'
// term counts come from thousands of logarithms and lgammas (about 10 ms a transform), asked
// again with the same arguments at every bandwidth and pass. At most `limit` kept.
template <class Key, class Value>
class Memo {
 public:
  template <class F>
  Value get(const Key& key, const F& compute) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (const auto it = kept_.find(key); it != kept_.end()) return it->second;
    }
    Value v = compute();
    const std::lock_guard<std::mutex> lock(mutex_);
    if (kept_.size() >= limit) kept_.clear();
    kept_.emplace(key, v);
    return v;
  }

 private:
  static constexpr std::size_t limit = 4096;
  std::mutex mutex_;
  std::map<Key, Value> kept_;
};

// Sums of `width` values over each box's keys ([start[B], start[B + 1])), over segments of at
// most 4096 keys in parallel (a few wide boxes hold every key when h is large), each box's
// segments then added in order: the same sums whatever the threads. sum(lo, hi, B, out) writes
// out[0, width) for keys [lo, hi) of box B. The result: box B's at [B * width, (B + 1) * width).
template <class Sum>
std::vector<double> per_box(const std::vector<std::size_t>& start, std::size_t width, ThreadPool* pool, const Sum& sum) {
  constexpr std::size_t seg = 4096;
  const std::size_t boxes = start.size() - 1;
  std::vector<std::size_t> first_seg;  // each box's first segment
  std::vector<std::pair<std::size_t, std::size_t>> segs;
  std::vector<std::size_t> seg_box;
  for (std::size_t B = 0; B < boxes; ++B) {
    first_seg.push_back(segs.size());
    for (std::size_t i = start[B]; i < start[B + 1]; i += seg) {
      segs.emplace_back(i, std::min(i + seg, start[B + 1]));
      seg_box.push_back(B);
    }
  }
  first_seg.push_back(segs.size());
  std::vector<double> part(segs.size() * width);
  parallel_for(pool, segs.size(), 4, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t g = lo; g < hi; ++g) sum(segs[g].first, segs[g].second, seg_box[g], &part[g * width]);
  });
  std::vector<double> out(boxes * width, 0.0);
  for (std::size_t B = 0; B < boxes; ++B)
    for (std::size_t g = first_seg[B]; g < first_seg[B + 1]; ++g)
      for (std::size_t k = 0; k < width; ++k) out[B * width + k] += part[g * width + k];
  return out;
}

// A box's power sums (gauss_transform.cpp): m[k] = sum w b^k g(b), m[P + k] the same times
// y - y0, k < P, b = (x - c) inv, g(b) = exp(-b^2) where `damped`, else 1.
void box_moments(const double* x, const double* y, const double* w, std::size_t lo, std::size_t hi, double c,
                 double inv, double y0, std::size_t P, bool damped, double* m);

/// The fewest terms p of the target-side series that bound every function of `fns` within
/// `bound` a key (gauss_targets.cpp); 0 past max_terms.
std::size_t target_terms(double bound, const std::vector<GaussTransform::Fn>& fns);

}  // namespace nwreg::gauss
