#pragma once
/// The bandwidth policy, chosen once per engine: how a query's bandwidths follow from the
/// bandwidths h set on the engine.
///
/// - fixed: h for every query.
/// - knn (K): each query's bandwidths are h_k s(q), s(q) the distance from q to its K-th nearest
///   key in the space scaled by h (the continuous columns, in the kernel's norm; a leave-one-out
///   row's K-th nearest other key; key_index.h for ties). Categorical columns keep their lambda.
/// - span (F): loess's neighbourhood. s(q) is the Euclidean distance (in the space scaled by h)
///   from q to its q-th nearest key, q = floor(n F + 1e-5) of the n keys, ties counted with
///   multiplicity and not widened: keys at that distance weigh 0 under a compact kernel, as in
///   loess. Above F = 1 every key is in and s(q) is the largest distance times sqrt(F) (loess's
///   rule, which widens the squared distance by F). Compact kernels then weigh a key by the
///   Euclidean distance (Keys::radial), not column by column.
/// - adaptive (K): key i's bandwidths are h_k s_i, s_i the distance from key i to its K-th
///   nearest other key, and its weight is divided by s_i^d (d its continuous columns), as R np's
///   adaptive_nn. Set once per bandwidth, for every key.
///
/// Rows of sample weight 0 stay keys under every policy here: they count as neighbours (as in
/// loess) though they weigh nothing.

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "nwreg/engine/key_index.h"
#include "nwreg/engine/key_set.h"
#include "nwreg/kernel/kernel_nd.h"
#include "nwreg/model/settings.h"

namespace nwreg {

class ThreadPool;

class BandwidthPolicy {
 public:
  /// A nearest-neighbour policy and its K or F (model/settings.h), or none: fixed.
  explicit BandwidthPolicy(NeighbourBandwidth neighbours);

  /// Whether every query has the same bandwidths (no nearest-neighbour policy).
  bool fixed() const { return !def_; }
  /// Whether each query has its own scale (knn): windows and leaves are then measured per query.
  bool per_query() const { return def_ && !def_->per_key; }
  /// Whether each key has its own scale (adaptive): every key is summed.
  bool per_key() const { return def_ && def_->per_key; }

  /// Whether compact kernels weigh keys by their Euclidean distance (span), not per column.
  bool radial() const { return span_ > 0; }

  /// At new bandwidths (1 / h per column): adaptive's per-key scales; span's count q. Throws
  /// DataError when a span holds no key.
  void set(const KeySet& keys, const KeyIndex& index, const double* inv_h, ThreadPool* pool);

  /// Query q's 1 / h per column: `inv_h` itself, or with knn scaled into `buf` (d entries;
  /// categorical columns, cat[k].on, unscaled). `h` (the one-column bandwidth) is scaled alike.
  /// `scratch`: n doubles for the index's K-th distance; `hint` the thread's last (KthHint).
  const double* query(const KeyIndex& index, const double* q, std::size_t exclude, const double* inv_h,
                      const kernel::Category* cat, std::size_t d, double* buf, double* scratch, double& h,
                      KthHint* hint = nullptr) const;

  /// Adaptive: each key's 1 / s_i and log2(1 / s_i^d); nullptr otherwise.
  const double* inv_s() const { return inv_s_.empty() ? nullptr : inv_s_.data(); }
  const double* lognorm() const { return lognorm_.empty() ? nullptr : lognorm_.data(); }

 private:
  std::size_t K_;
  double span_ = 0;
  const NeighbourDef* def_;  // the policy's row (model/settings.h); null: fixed bandwidths
  std::vector<double> inv_s_, lognorm_;
  // Span in several columns: each key's in-sample scale, kept by its leave-one-out row's search
  // (the same search finds both: KeyIndex::kth_distance) for the in-sample pass that follows;
  // NaN until then. Each key's written by the one thread that answers its row.
  const KeySet* keys_ = nullptr;
  std::unique_ptr<std::atomic<double>[]> in_sample_;
};

}  // namespace nwreg
