#pragma once
/// The engine behind Attention's facade (internal to engine/; the math is in attention.h): its
/// parts, each a type chosen once per engine, the bandwidth, and the passes. Each pass says what
/// it needs of its rows (Needs) and takes the plan the one chooser makes for it (backends.h);
/// its rows then go through the plan's row functions (rows.cpp), which try the plan's backends
/// in order and gather the rest key by key (gather.cpp).
///
///   KeySet (key_set.h)            the keys in engine order, merged where identical
///   KeyIndex (key_index.h)        which keys a query reaches: line window, k-d tree, every key
///   BandwidthPolicy (bandwidth_policy.h)  each query's bandwidths: fixed, knn, adaptive
///   Estimator (estimator.h)       what a row reduces to: NW or a local polynomial
///   Backends (backends.h)         what sums a pass's rows whole: fused line, line sums, none

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/engine/backends.h"
#include "nwreg/engine/bandwidth_policy.h"
#include "nwreg/engine/estimator.h"
#include "nwreg/engine/key_index.h"
#include "nwreg/engine/key_set.h"
#include "nwreg/engine/options.h"
#include "nwreg/engine/pass.h"
#include "nwreg/engine/pooling.h"
#include "nwreg/engine/results.h"
#include "nwreg/kernel/categorical.h"
#include "nwreg/kernel/kernel_nd.h"

namespace nwreg {

class Engine {
 public:
  Engine(const Dataset& train, EngineOptions options);

  void set_bandwidth(std::vector<double> bandwidth);
  void set_neighbours(NeighbourBandwidth neighbours);
  void set_tolerance(double tolerance);

  // The passes, as Attention's (attention.h).
  void predict(const double* queries, std::size_t m, double* out) const;
  void nearest_distances(const double* queries, std::size_t m, double* out) const;
  void predict_detail(const double* queries, std::size_t m, const std::vector<double>& v, double* out, double* sum_w2,
                      double* smooth, double* kernel_w2 = nullptr) const;
  void slopes(const double* queries, std::size_t m, double* out, double* l_norm) const;
  void weights(const double* queries, std::size_t m, const std::function<void(std::size_t, const double*)>& row) const;
  LooResult loo(bool with_gradient, const std::vector<std::size_t>* rows) const;
  InSample insample(bool with_gradient, const std::vector<std::size_t>* rows) const;
  LooDetail loo_pass(std::size_t neighbour_rows, bool residuals, bool neighbours) const;

  // What the learners read besides the passes (inspect.h, Attention::spread_rows).
  std::vector<double> key_columns(const double* v, std::size_t c) const;
  bool loo_moments(std::size_t slot, const std::vector<double>& v, std::size_t c, double& f, double* M) const;
  std::vector<std::uint32_t> slot_of_rows() const { return ks_.slot_of_rows(); }
  std::vector<std::size_t> spread_rows(std::size_t count) const;
  std::size_t spread_size(std::size_t count) const { return std::min(count, ks_.rows); }
  std::vector<double> reach(std::size_t count) const;
  Counters counters() const;

 private:
  friend class Backends;
  WorkShape shape() const { return {ks_.n, ks_.d, estimator_.p(), estimator_.local() ? estimator_.p() : 0}; }
  // A row of the training data as the engine holds it: its key and its slot (KeySet).
  struct Slot {  // (4 bytes each: the keys and rows number below 2^32, KeySet's limit)
    std::uint32_t key, slot;
    static Slot of(std::size_t key, std::size_t slot) {
      return {static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(slot)};
    }
  };
  // The slots of these input rows (those of sample weight > 0), in engine order: found by one
  // walk over the slots, and kept for the next pass over the same rows (the learner's sample).
  std::shared_ptr<const std::vector<Slot>> slots(const std::vector<std::size_t>& rows) const;
  class SlotChunks;  // a pass's slots, a chunk at a time (loo.cpp)
  // The slots of sample weight > 0 in engine order, each with its key, one at a time.
  struct SlotWalk {
    const KeySet& ks;
    std::size_t g = 0, t = 0;
    bool next(Slot& s) {
      for (; t < ks.rows; ++t) {
        while (ks.first(g + 1) <= t) ++g;
        if (ks.w_of(t) > 0) {
          s = Slot::of(g, t++);
          return true;
        }
      }
      return false;
    }
  };
  void check_loo_rows() const;             // DataError unless the leave-one-out rows are defined
  kernel::Keys keys() const;               // the keys by column, for kernel_nd's loops

  // The rows of a pass through its plan (rows.cpp): each tries the plan's backends in the
  // chooser's order, then gathers key by key.
  //
  // Query q's row less key `exclude` reduced: its prediction, the gradient in log h (grad) and
  // the local fit's c (into c), each if not null. A row summed whole by a backend has s.moments
  // set: s.s0 and s.unit hold its sums, Work::G its gradient's, and w's rows over the keys are
  // not written.
  Row row(const Plan& plan, const double* q, std::size_t exclude, Work& w, Span& s, double* grad, double* c) const;
  // Slot s's leave-one-out row reduced, the rows of its key without it included; a merged key's
  // other rows reuse `cache`, gathered once for the key.
  Row loo_row(const Plan& plan, const Slot& at, Work& w, Rest& cache, Span& s, double* grad, double* c) const;
  // A prediction with what standard errors need (sum_w2, smooth, kernel_w2: each if not null;
  // ve the values in engine order) into out: false for a query out of reach.
  struct Detail {
    double* f;
    double* sum_w2;
    double* smooth;
    double* kernel_w2;
  };
  bool detail_row(const Plan& plan, const double* q, const std::vector<double>& ve, Work& w, Detail out) const;
  // The in-sample fit at key p (its own weight in): its row reduced (with the gradient into g
  // if asked, c always), e_p its own unnormalised weight, and where it nearly interpolates 1 - l_pp
  // and y_p - f_p without cancellation (exact); d l_pp / d log h into dtrace if asked.
  struct KeyFit {
    Row fit;
    double ep = 0;
    std::vector<double> g, c, dtrace;
    std::optional<Estimator::OwnFit> exact;
  };
  void fit_at_key(const Plan& plan, std::size_t p, Work& w, bool gradient, KeyFit& k) const;
  // The local fit's slope by moments (one column), with sqrt(sum_i l_i^2) into l2 if not null:
  // false where the plan's line does not answer.
  bool slope_by_moments(const Plan& plan, const double* q, Work& w, double* slope, double* l2) const;
  // The row --weights writes of query q or of slot `at`'s leave-one-out row: w.e over the ranges
  // (per key: each of its rows gets its share), where reached.
  Row weights_row(const Plan& plan, const double* q, Work& w, Span& s, double* c) const;
  Row weights_row(const Slot& at, Work& w, Span& s, double* c) const;

  // The weights of a query's row into w.e (see Span); NW's gradient sums if `gradient`. With
  // rest > 0, q is key `exclude` itself, whose other rows weigh at least `rest`: the weights
  // are measured from it (distance 0) and its rows are left for add_rest.
  Span gather(const double* q, std::size_t exclude, Work& w, bool gradient = false, double rest = 0) const;
  // gather's first step, shared with moment_row: the query's bandwidths, the keys it covers
  // (into w.ranges) and its nearest key.
  Span locate(const double* q, std::size_t exclude, Work& w, double rest) const;
  // The row's sums (no weights per key) by the plan's line where its window is wide, with the
  // gradient's (Work::G, Gy) if asked: false where it is not, the line's bound does not hold, or
  // no key is in reach and the nearest key's value answers.
  bool moment_row(const Plan& plan, const double* q, std::size_t exclude, Work& w, Span& s, bool gradient) const;
  // The same by the plan's series over boxes (several columns, NW): the values, and the
  // gradient's sums t and v (Work) where asked.
  bool box_row(const Plan& plan, const double* q, std::size_t exclude, Work& w, Span& s, bool gradient) const;
  // Adds the rest of slot at.slot's key (rest_w, rest_dy) at distance 0 to a row gathered with
  // rest, or made by moments without the key.
  void add_rest(Span& s, Work& w, const Slot& at) const;
  // Its prediction, with the gradient in log h (grad) and the local fit's c (see equivalent).
  Row reduce(const double* q, const Span& s, Work& w, double* grad, double* c) const;
  // w.e[s.lo..s.hi) times c^T z_i: the equivalent-kernel weights, unnormalised for NW.
  void equivalent(const double* q, const Span& s, const double* c, Work& w) const;
  // sum_i l_i^2 of a row by moments, l_i = e_i c^T z_i: sum_(a,b) c_a c_b Q_(a+b), Q the squared
  // weights' moments (NW: c = (1 / s0, 0..0)).
  double squared_weights(const double* c, const LineMoments& sq) const;
  // Sum over keys [lo, hi) of their rows' squared weights, e the keys' (a merged key's rows
  // share its weight).
  double sum_squares(std::size_t lo, std::size_t hi, const double* e) const;
  // d log e_i / d log h_k at query q whose nearest key is at xb.
  double dlog_weight(const double* q, const double* xb, std::size_t i, std::size_t k) const;
  [[noreturn]] void throw_out_of_reach(const double* q, std::size_t index, bool loo) const;
  // A compact kernel's window in one column (keys in x order) as a fraction of h: R clowess's
  // 0.999 under lowess_window (keys beyond weigh 0), else its support (1).
  double edge() const {
    return options_.lowess_window && ks_.d == 1 && !ks_.categorical && is_compact(options_.kernel) ? 0.999 : 1.0;
  }

  EngineOptions options_;
  Estimator estimator_;     // what a row reduces to
  KeySet ks_;               // the keys in engine order
  KeyIndex index_;          // which keys a query reaches
  BandwidthPolicy policy_;  // each query's bandwidths
  std::vector<double> h_, inv_h_;
  // Categorical columns: each column's kernel at this bandwidth (cat_[k].on for categorical
  // ones); the k-d tree's columns' 1 / h (the continuous ones).
  std::vector<kernel::Category> cat_;
  std::vector<double> tree_ih_;
  mutable std::atomic<std::uint64_t> pairs_{0}, moment_rows_{0}, transformed_rows_{0}, dropped_{0};
  // A leave-one-out pass over every row found each in reach at this bandwidth: loo_pass need not
  // look for one out of reach again (with a compact kernel, a row not sampled for its neighbours).
  mutable std::atomic<bool> every_row_reached_{false};
  // The rows of the last leave-one-out pass over listed rows (at most memo_rows, loo.cpp), at
  // the bandwidths and tolerance it ran at, for a pass over every row without gradient at the
  // same ones to take as made (the learner's report after its last descent on a sample): in
  // the listed slots' order (engine order), each row's squared residual term, whether it was
  // reached, and its own weight in the in-sample fit (NaN: none). Only where no backend sums
  // the rows (no line index: several columns, or one with neighbour bandwidths or a category),
  // so a row is summed the same whichever rows a pass lists, with or without gradient. Valid
  // once its pass has ended; a pass holds memo_mutex_ throughout.
  struct RowMemo {
    std::vector<double> h;
    double tolerance = -1;  // (-1: nothing kept)
    std::shared_ptr<const std::vector<Slot>> slots;
    std::vector<double> sq, own;
    std::vector<char> reached;
  };
  mutable RowMemo memo_;
  mutable std::mutex memo_mutex_;
  mutable std::mutex listed_mutex_;  // the last rows slots() was asked for, and their slots
  mutable std::vector<std::size_t> listed_rows_;
  mutable std::shared_ptr<const std::vector<Slot>> listed_slots_;
  Backends backends_;  // what sums a pass's rows whole
};

}  // namespace nwreg
