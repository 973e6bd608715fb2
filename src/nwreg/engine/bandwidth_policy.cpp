#include "nwreg/engine/bandwidth_policy.h"

#include <cmath>

#include "nwreg/base/thread_pool.h"

namespace nwreg {

BandwidthPolicy::BandwidthPolicy(NeighbourBandwidth neighbours) : K_(neighbours.K) {
  if (const NeighbourDef* def = neighbour_def(neighbours.kind)) (def->per_key ? per_key_ : per_query_) = true;
}

void BandwidthPolicy::set(const KeySet& keys, const KeyIndex& index, const double* inv_h, ThreadPool* pool) {
  if (!per_key_) return;
  inv_s_.assign(keys.n, 1.0);
  lognorm_.assign(keys.n, 0.0);
  parallel_for(pool, keys.n, 64, [&](std::size_t a, std::size_t z) {
    std::vector<double> scratch(keys.n);
    for (std::size_t i = a; i < z; ++i) {
      const double s = index.kth_distance(keys.key(i), i, K_, inv_h, scratch.data());
      inv_s_[i] = 1 / s;
      lognorm_[i] = -static_cast<double>(keys.cont.size()) * std::log2(s);
    }
  });
}

const double* BandwidthPolicy::query(const KeyIndex& index, const double* q, std::size_t exclude, const double* inv_h,
                                     const kernel::Category* cat, std::size_t d, double* buf, double* scratch,
                                     double& h) const {
  if (!per_query_) return inv_h;
  const double scale = index.kth_distance(q, exclude, K_, inv_h, scratch);
  for (std::size_t k = 0; k < d; ++k) buf[k] = cat[k].on ? inv_h[k] : inv_h[k] / scale;
  h *= scale;
  return buf;
}

}  // namespace nwreg
