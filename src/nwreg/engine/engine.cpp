#include "nwreg/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/engine/attention.h"

namespace nwreg {

void check_tolerance(double tolerance) {
  if (!(tolerance >= 0 && tolerance < 1))
    throw ParameterError("tolerance", "must be >= 0 and < 1, got " + format_double(tolerance));
}

kernel::Keys Engine::keys() const {
  return {ks_.xs.data(),
          ks_.n,
          ks_.d,
          ks_.ws.empty() ? nullptr : ks_.ws.data(),
          ks_.moderate,
          ks_.categorical ? cat_.data() : nullptr,
          estimator_.design(),
          policy_.inv_s(),
          policy_.lognorm(),
          policy_.radial() && ks_.cont.size() >= 2};
}

namespace {

// Whether each key has its own scale (adaptive bandwidths).
bool per_key(const EngineOptions& o) {
  const NeighbourDef* def = neighbour_def(o.neighbour_policy.kind);
  return def && def->per_key;
}

// One continuous x column: keys sorted by x, windows (not with adaptive bandwidths, whose
// per-key scales reach unevenly).
bool line_index(const Dataset& train, const EngineOptions& o) {
  return train.d == 1 && !is_categorical(train.kind(0)) && !per_key(o);
}

// Lowess's least spread of a local line's window (estimator.h) under a span, the bandwidth of
// loess and lowess: 0.001 of the x range, as clowess; none under other bandwidths (the exact
// line, whatever its spread).
double lowess_spread(const Dataset& train, const EngineOptions& o) {
  if (o.neighbour_policy.kind != Neighbours::span || train.d != 1 || train.n == 0) return 0;
  const auto [lo, hi] = std::minmax_element(train.x.begin(), train.x.end());
  return 0.001 * (*hi - *lo);
}

// The options checked against the data, before any part is built.
EngineOptions checked(EngineOptions o, const Dataset& train) {
  check_tolerance(o.tolerance);
  if (o.leave_out > 0 && !(train.d == 1 && !is_categorical(train.kind(0))))
    throw ParameterError("leave_out", "only for one continuous x column (it leaves out the nearest keys in x order)");
  check_degree(o.degree);
  return o;
}

// Adaptive bandwidths with an exponential kernel in one continuous column over rows that all
// weigh something: the keys may be merged. A key's scale then depends on its x alone (its K
// nearest other rows, counted with multiplicity by KeyIndex), the same for each of its rows,
// and a row repeated m times costs a query one key, not m (m^2 a pass). (Not the compact
// kernels: their weights are not relative to the nearest key's, which a merged key's other
// rows at distance 0 are counted in.)
bool adaptive_merges(const Dataset& train, const EngineOptions& o) {
  return per_key(o) && !is_compact(o.kernel) && train.d == 1 && !is_categorical(train.kind(0)) &&
         std::all_of(train.weight.begin(), train.weight.end(), [](double w) { return w > 0; });
}

// The keys laid out for the options: merged unless rows must stay apart (leave-block-out counts
// rows, neighbour bandwidths count rows as keys but where adaptive_merges, the fused line runs
// over rows); a k-d tree for several columns (with adaptive bandwidths its nodes keep their
// keys' widest scales: KeyIndex).
KeyLayout layout_for(const Dataset& train, const EngineOptions& o, bool fused) {
  // Neighbours are counted over every row, weighed or not (rows of weight 0 stay keys).
  const bool neighbours = static_cast<bool>(o.neighbour_policy) && !adaptive_merges(train, o);
  KeyLayout layout;
  layout.rows = neighbours                                                             ? KeyRows::every_row
                : o.leave_out > 0 || !o.shortcuts.allow(Shortcut::merge_keys) ? KeyRows::weighed_rows
                : fused                                                        ? KeyRows::merged_if_most_repeat
                                                                               : KeyRows::merged;
  layout.tree_leaf = 64;
  layout.x_in_place = o.x_in_place == &train;
  return layout;
}

}  // namespace

Engine::Engine(const Dataset& train, EngineOptions options)
    : options_(checked(std::move(options), train)),
      estimator_(options_.method, options_.degree, train.d, options_.loss, lowess_spread(train, options_)),
      ks_(train, layout_for(train, options_, Backends::fuses(train, options_, estimator_))),
      index_(ks_, options_.kernel, options_.tolerance, line_index(train, options_), options_.leave_out, edge()),
      policy_(options_.neighbour_policy),
      cat_(ks_.d),
      backends_(*this, Backends::fuses(train, options_, estimator_)) {}

void Engine::set_bandwidth(std::vector<double> bandwidth) {
  check_bandwidth(bandwidth, ks_.d, "`bandwidth`");
  for (std::size_t k = 0; k < ks_.d; ++k)
    if (is_categorical(ks_.kinds[k])) {
      const double top = lambda_max(options_.categorical, ks_.kinds[k], ks_.levels[k]);
      if (bandwidth[k] > top)
        throw ParameterError("bandwidth", "column " + quote(ks_.names[k]) + " is categorical: its lambda must be <= " +
                                              format_double(top) + " (" +
                                              to_string(options_.categorical) + " kernel), got " +
                                              format_double(bandwidth[k]));
      cat_[k] = category(options_.categorical, ks_.kinds[k], ks_.levels[k], bandwidth[k]);
      cat_[k].in_line = options_.categorical_in_fit;
    }
  h_ = std::move(bandwidth);
  every_row_reached_ = false;
  // A local polynomial at a bandwidth far past the data's spread is the global polynomial of its
  // degree: past flat_bandwidth times a column's range every kernel weight is 1 within 1e-12
  // (Laplace's; the Gaussian's within 1e-24), while the powers of (x - q) / h would underflow
  // (local cubic lost its cubic term from h = 1e60, its slope from 1e100). It is computed there.
  if (estimator_.local())
    for (std::size_t k : ks_.cont) {
      double lo = INFINITY, hi = -INFINITY;
      for (std::size_t i = 0; i < ks_.n; ++i) lo = std::min(lo, ks_.key(i)[k]), hi = std::max(hi, ks_.key(i)[k]);
      if (hi > lo) h_[k] = std::min(h_[k], flat_bandwidth * (hi - lo));
    }
  inv_h_.clear();
  for (double v : h_) inv_h_.push_back(1 / v);
  backends_.set_bandwidth(h_[0]);
  policy_.set(ks_, index_, inv_h_.data(), options_.pool);
  index_.set_scales(policy_.inv_s(), policy_.lognorm());
  tree_ih_.clear();
  for (std::size_t k : ks_.cont) tree_ih_.push_back(inv_h_[k]);
  index_.choose(tree_ih_.data(), keys(), policy_.per_query());
}

void Engine::set_neighbours(NeighbourBandwidth neighbours) {
  if (neighbours.kind != options_.neighbour_policy.kind || !neighbours)
    throw ParameterError("neighbour_policy", "set_neighbours keeps the policy: " +
                                                 to_string(options_.neighbour_policy.kind) + ", got " +
                                                 to_string(neighbours.kind));
  const NeighbourBandwidth was = options_.neighbour_policy;
  memo_ = {};
  options_.neighbour_policy = neighbours;
  policy_ = BandwidthPolicy(neighbours);
  try {
    set_bandwidth(h_);
  } catch (...) {  // (a span holding no key) the engine as it was
    options_.neighbour_policy = was;
    policy_ = BandwidthPolicy(was);
    set_bandwidth(h_);
    throw;
  }
}

void Engine::set_tolerance(double tolerance) {
  check_tolerance(tolerance);
  options_.tolerance = tolerance;
  index_.set_tolerance(tolerance);
  backends_.set_tolerance(tolerance);
  if (!h_.empty()) set_bandwidth(h_);
}

void Engine::check_loo_rows() const {
  if (ks_.rows < 2) throw DataError("leave-one-out needs at least 2 training rows, got " + std::to_string(ks_.rows));
  check_leave_out(ks_.rows, options_.leave_out);
}

void check_leave_out(std::size_t rows, std::size_t leave_out) {
  if (rows < 2 + 2 * leave_out)
    throw DataError("`leave_out` " + std::to_string(leave_out) + " leaves " + std::to_string(leave_out) +
                    " keys out on each side of each row: it needs at least " + std::to_string(2 + 2 * leave_out) +
                    " training rows, got " + std::to_string(rows));
}

double Engine::dlog_weight(const double* q, const double* xb, std::size_t i, std::size_t k) const {
  // For the Gaussian measured from b (the weights' residuals sum to 0, so a constant shift
  // changes nothing, and r_i^2 - r_b^2 does not cancel).
  return kernel::dlog(options_.kernel, keys(), k, i, q, xb, inv_h_.data());
}

void Engine::throw_out_of_reach(const double* q, std::size_t index, bool loo) const {
  std::string at;
  for (std::size_t k = 0; k < ks_.d; ++k) at += (k ? ", " : "") + format_double(q[k]);
  std::string bw;
  for (std::size_t k = 0; k < ks_.d; ++k) bw += (k ? " " : "") + format_double(h_[k]);
  const NeighbourBandwidth& n = options_.neighbour_policy;
  const NeighbourDef* def = neighbour_def(n.kind);
  const std::string detail =
      " (x = " + at + ") has no " + (loo ? "other " : "") + "training point within reach of the " +
      to_string(options_.kernel) + " kernel (bandwidth " + (def ? to_string(n) : bw) + "): " +
      (def ? std::string("give a larger ") + (def->fraction ? "F" : "K") + " or `out_of_reach` nearest"
           : std::string("widen `bandwidth` or give `out_of_reach` nearest"));
  if (!loo) throw QueryError(index, detail);
  throw DataError("training row " + std::to_string(index + 1) + detail);
}

Row Engine::reduce(const double* q, const Span& s, Work& w, double* grad, double* c) const {
  return estimator_.reduce(options_.kernel, keys(), ks_.ys.data(), q, ks_.key(s.b), s, w, grad, c);
}

void Engine::equivalent(const double* q, const Span& s, const double* c, Work& w) const {
  estimator_.equivalent(keys(), q, s, c, w);
}

double Engine::sum_squares(std::size_t lo, std::size_t hi, const double* e) const {
  // A merged key's rows share its weight e_g: their squares add up to e_g^2 q2_g.
  return ks_.merged ? kernel::dot(lo, hi, e, {e}, {ks_.q2.data()}) : kernel::dot(lo, hi, e, {e});
}

std::vector<std::size_t> Engine::spread_rows(std::size_t count) const {
  std::vector<std::size_t> rows;
  rows.reserve(std::min(count, ks_.rows));
  if (count >= ks_.rows) {
    for (std::size_t t = 0; t < ks_.rows; ++t) rows.push_back(ks_.row_of(t));
    std::sort(rows.begin(), rows.end());
    return rows;
  }
  for (std::size_t k = 0; k < count; ++k) {
    // The middle of the k-th of `count` equal slices of the rows in engine order.
    rows.push_back(ks_.row_of((2 * k + 1) * ks_.rows / (2 * count)));
  }
  return rows;
}

std::vector<double> Engine::reach(std::size_t count) const {
  // Sampled over the rows (slots): merged keys only under adaptive bandwidths, whose scale is
  // the key's.
  if (!options_.neighbour_policy) return {};
  count = std::min(count, ks_.rows);
  std::vector<double> out(count * ks_.d), buf(ks_.d), scratch(ks_.n);
  KthHint hint;
  for (std::size_t r = 0; r < count; ++r) {
    const std::size_t p = ks_.key_of((2 * r + 1) * ks_.rows / (2 * count));
    double h = h_[0];
    const double* inv_h = policy_.query(index_, ks_.key(p), p, inv_h_.data(), cat_.data(), ks_.d, buf.data(),
                                        scratch.data(), h, &hint);
    for (std::size_t k = 0; k < ks_.d; ++k)
      out[r * ks_.d + k] = is_categorical(ks_.kinds[k]) ? std::numeric_limits<double>::quiet_NaN()
                           : policy_.inv_s()            ? h_[k] / policy_.inv_s()[p]
                                                        : 1 / inv_h[k];
  }
  return out;
}

std::shared_ptr<const std::vector<Engine::Slot>> Engine::slots(const std::vector<std::size_t>& rows) const {
  const std::lock_guard<std::mutex> lock(listed_mutex_);
  if (!listed_slots_ || rows != listed_rows_) {
    std::vector<std::size_t> sorted = rows;
    std::sort(sorted.begin(), sorted.end());
    std::vector<Slot> out;  // keys only: a row of sample weight 0 counts for nothing
    out.reserve(rows.size());
    SlotWalk walk{ks_};
    for (Slot s; walk.next(s);) {
      const auto [lo, hi] = std::equal_range(sorted.begin(), sorted.end(), std::size_t{ks_.row_of(s.slot)});
      out.insert(out.end(), static_cast<std::size_t>(hi - lo), s);
    }
    listed_rows_ = rows;
    listed_slots_ = std::make_shared<const std::vector<Slot>>(std::move(out));
  }
  return listed_slots_;
}

Counters Engine::counters() const {
  Counters c;
  c.pairs = pairs_.load(std::memory_order_relaxed);
  c.moment_rows = moment_rows_.load(std::memory_order_relaxed);
  c.transformed_rows = transformed_rows_.load(std::memory_order_relaxed);
  c.dropped_rows = dropped_.load(std::memory_order_relaxed);
  return c;
}

std::vector<double> Engine::key_columns(const double* v, std::size_t c) const {
  std::vector<double> out(c * ks_.rows);
  for (std::size_t t = 0; t < ks_.rows; ++t)
    for (std::size_t k = 0; k < c; ++k) out[k * ks_.rows + t] = v[ks_.row_of(t) * c + k];
  return out;
}

}  // namespace nwreg
