#include "nwreg/engine/bandwidth_policy.h"

#include <cmath>
#include <limits>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/thread_pool.h"

namespace nwreg {

BandwidthPolicy::BandwidthPolicy(NeighbourBandwidth neighbours) : K_(neighbours.K), def_(neighbour_def(neighbours.kind)) {
  if (neighbours.kind == Neighbours::span) span_ = neighbours.F;
}

void BandwidthPolicy::set(const KeySet& keys, const KeyIndex& index, const double* inv_h, ThreadPool* pool) {
  if (span_ > 0) {
    if (static_cast<double>(keys.n) * span_ < 1)
      throw DataError("span:" + format_double(span_) + " holds no key of " + std::to_string(keys.n) +
                      " training rows: F must be at least 1/n");
    K_ = span_count(span_, keys.n);
    if (index.kind() == KeyIndex::Kind::tree) {
      keys_ = &keys;
      in_sample_ = std::make_unique<std::atomic<double>[]>(keys.n);
      for (std::size_t i = 0; i < keys.n; ++i) in_sample_[i].store(std::numeric_limits<double>::quiet_NaN());
    }
  }
  if (!per_key()) return;
  inv_s_.assign(keys.n, 1.0);
  lognorm_.assign(keys.n, 0.0);
  parallel_for(pool, keys.n, 64, [&](std::size_t a, std::size_t z) {
    std::vector<double> scratch(index.kth_scratch());
    KthHint hint;
    for (std::size_t i = a; i < z; ++i) {
      const double s = index.kth_distance(keys.key(i), i, K_, inv_h, scratch.data(), Neighbours::adaptive, &hint);
      inv_s_[i] = 1 / s;
      lognorm_[i] = -static_cast<double>(keys.cont.size()) * std::log2(s);
    }
  });
}

const double* BandwidthPolicy::query(const KeyIndex& index, const double* q, std::size_t exclude, const double* inv_h,
                                     const kernel::Category* cat, std::size_t d, double* buf, double* scratch,
                                     double& h, KthHint* hint) const {
  if (!per_query()) return inv_h;
  double scale;
  if (span_ > 0) {
    const std::size_t key = in_sample_ ? keys_->key_at(q) : no_key;  // q a key itself: its rows
    const double kept = key != no_key && exclude == no_key ? in_sample_[key].load(std::memory_order_relaxed)
                                                           : std::numeric_limits<double>::quiet_NaN();
    if (!std::isnan(kept)) {
      scale = kept;  // its in-sample row, the scale its leave-one-out row's search found
    } else if (key != no_key && exclude == key) {
      double in_sample;
      scale = index.kth_distance(q, exclude, K_, inv_h, scratch, Neighbours::span, hint, &in_sample);
      in_sample_[key].store(in_sample, std::memory_order_relaxed);
    } else {
      scale = index.kth_distance(q, exclude, K_, inv_h, scratch, Neighbours::span, hint);
    }
    if (span_ > 1) scale *= std::sqrt(span_);
  } else {
    scale = index.kth_distance(q, exclude, K_, inv_h, scratch, Neighbours::knn, hint);
  }
  for (std::size_t k = 0; k < d; ++k) buf[k] = cat[k].on ? inv_h[k] : inv_h[k] / scale;
  h *= scale;
  return buf;
}

}  // namespace nwreg
