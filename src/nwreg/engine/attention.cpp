#include "nwreg/engine/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/engine/hermite_line.h"
#include "nwreg/kernel/gauss_transform.h"

namespace nwreg {

void check_tolerance(double tolerance) {
  if (!(tolerance >= 0 && tolerance < 1))
    throw ParameterError("tolerance", "must be >= 0 and < 1, got " + format_double(tolerance));
}

kernel::Keys Attention::keys() const {
  return {ks_.xs.data(),
          ks_.n,
          ks_.d,
          ks_.ws.empty() ? nullptr : ks_.ws.data(),
          ks_.bounded,
          ks_.categorical ? cat_.data() : nullptr,
          estimator_.design(),
          policy_.inv_s(),
          policy_.lognorm(),
          policy_.radial() && ks_.cont.size() >= 2};
}

namespace {

// One continuous x column: keys sorted by x, windows (not with adaptive bandwidths, whose
// per-key scales reach unevenly).
bool per_key(const EngineOptions& o) {
  const NeighbourDef* def = neighbour_def(o.neighbour_policy.kind);
  return def && def->per_key;
}

bool line_index(const Dataset& train, const EngineOptions& o) {
  return train.d == 1 && !is_categorical(train.kind(0)) && !per_key(o);
}

// The fused 1-D Gaussian NW path (kernel1d.h): one column, a fixed bandwidth, no sample weights.
bool fused_line(const Dataset& train, const EngineOptions& o) {
  return line_index(train, o) && !o.neighbour_policy && o.kernel == Kernel::gaussian && method_degree(o.method, o.degree) == 0 &&
         train.weight.empty();
}

// Checks the options against the data and lays out the keys for them: merged unless rows must
// stay apart (leave-block-out counts rows, neighbour bandwidths count keys); sorted windows for
// one continuous column; a k-d tree for several, except with adaptive bandwidths.
KeyLayout layout_for(const Dataset& train, const EngineOptions& o) {
  check_tolerance(o.tolerance);
  const bool neighbours = static_cast<bool>(o.neighbour_policy);
  if (o.leave_out > 0 && !(train.d == 1 && !is_categorical(train.kind(0))))
    throw ParameterError("leave_out", "only for one continuous x column (it leaves out the nearest keys in x order)");
  check_degree(o.degree);
  KeyLayout layout;
  layout.merge = o.merge && o.leave_out == 0 && !neighbours;
  layout.prefer_rows = fused_line(train, o);
  layout.tree = !per_key(o);  // keys with their own scales reach as far as those: every key
  layout.keep_zero = neighbours;  // neighbours are counted over every row, weighed or not
  return layout;
}

}  // namespace

Attention::Attention(const Dataset& train, EngineOptions options)
    : options_(options),
      ks_(train, layout_for(train, options_)),
      index_(ks_, options_.kernel, options_.tolerance, line_index(train, options_), options_.leave_out),
      estimator_(options_.method, options_.degree, ks_.d),
      policy_(options_.neighbour_policy),
      cat_(ks_.d) {
  if (fused_line(train, options_) && !ks_.merged)
    fused_.emplace(ks_, index_, options_.tolerance, options_.transform, options_.pool, pairs_);
  if (options_.moments && index_.kind() == KeyIndex::Kind::line && options_.leave_out == 0 &&
      MomentLine::applies(ks_, options_.kernel))
    moments_.emplace(ks_, options_.kernel, method_degree(options_.method, options_.degree), LineData::of(ks_));
}

Attention::Attention(const Dataset& train, std::vector<double> bandwidth, EngineOptions options)
    : Attention(train, options) {
  set_bandwidth(std::move(bandwidth));
}

Attention::~Attention() = default;

void Attention::set_bandwidth(std::vector<double> bandwidth) {
  check_bandwidth(bandwidth, ks_.d, "--bandwidth");
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
  if (fused_) fused_->set_bandwidth(h_[0]);
  policy_.set(ks_, index_, inv_h_.data(), options_.pool);
  index_.set_scales(policy_.inv_s(), policy_.lognorm());
  tree_ih_.clear();
  for (std::size_t k : ks_.cont) tree_ih_.push_back(inv_h_[k]);
  index_.choose(tree_ih_.data(), keys(), policy_.per_query());
}

void Attention::set_neighbours(NeighbourBandwidth neighbours) {
  if (neighbours.kind != options_.neighbour_policy.kind || !neighbours)
    throw ParameterError("neighbour_policy", "set_neighbours keeps the policy: " +
                                                 to_string(options_.neighbour_policy.kind) + ", got " +
                                                 to_string(neighbours.kind));
  const NeighbourBandwidth was = options_.neighbour_policy;
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

void Attention::check_loo_rows() const {
  if (ks_.rows < 2) throw DataError("leave-one-out needs at least 2 training rows, got " + std::to_string(ks_.rows));
  check_leave_out(ks_.rows, options_.leave_out);
}

void check_leave_out(std::size_t rows, std::size_t leave_out) {
  if (rows < 2 + 2 * leave_out)
    throw DataError("--leave-out " + std::to_string(leave_out) + " leaves " + std::to_string(leave_out) +
                    " keys out on each side of each row: it needs at least " + std::to_string(2 + 2 * leave_out) +
                    " training rows, got " + std::to_string(rows));
}

double Attention::dlog_weight(const double* q, const double* xb, std::size_t i, std::size_t k) const {
  // For the Gaussian measured from b (the weights' residuals sum to 0, so a constant shift
  // changes nothing, and r_i^2 - r_b^2 does not cancel).
  return kernel::dlog(options_.kernel, keys(), k, i, q, xb, inv_h_.data());
}

void Attention::throw_out_of_reach(const double* q, std::size_t index, bool loo) const {
  std::string at;
  for (std::size_t k = 0; k < ks_.d; ++k) at += (k ? ", " : "") + format_double(q[k]);
  std::string bw;
  for (std::size_t k = 0; k < ks_.d; ++k) bw += (k ? " " : "") + format_double(h_[k]);
  const NeighbourBandwidth& n = options_.neighbour_policy;
  const NeighbourDef* def = neighbour_def(n.kind);
  const std::string detail =
      " (x = " + at + ") has no " + (loo ? "other " : "") + "training point within reach of the " +
      to_string(options_.kernel) + " kernel (bandwidth " + (def ? to_string(n) : bw) + "): " +
      (def ? std::string("give a larger ") + (def->fraction ? "F" : "K") + " or --out-of-reach nearest"
           : std::string("widen --bandwidth or give --out-of-reach nearest"));
  if (!loo) throw QueryError(index, detail);
  throw DataError("training row " + std::to_string(index + 1) + detail);
}

Row Attention::reduce(const double* q, const Span& s, Work& w, double* grad, double* c) const {
  return estimator_.reduce(options_.kernel, keys(), ks_.ys.data(), q, ks_.key(s.b), s, w, grad, c);
}

void Attention::equivalent(const double* q, const Span& s, const double* c, Work& w) const {
  estimator_.equivalent(keys(), q, s, c, w);
}

bool Attention::lines_apply() const {
  if (!options_.moments || index_.kind() != KeyIndex::Kind::line || options_.leave_out > 0 || ks_.d != 1 ||
      ks_.categorical)
    return false;
  // Compact kernels: the tree kept. Else a backend made for the pass, worth building (O(n)) over
  // many keys: the Gaussian's at one bandwidth for every row (the fused path has its own
  // transform) or at each row's own (HermiteLine), Laplace's at one.
  const bool per_query = policy_.per_query();
  return moments_ || (!fused_ && ks_.n >= line_min_keys &&
                      (options_.kernel == Kernel::gaussian || (options_.kernel == Kernel::laplace && !per_query)));
}

double Attention::mean_window(double h) const {
  // Over 16 keys spread over x, as queries, at their own scale where the policy gives one.
  const std::size_t m = 16;
  double window = 0, buf = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t b = (2 * k + 1) * ks_.n / (2 * m);
    double hb = h;
    policy_.query(index_, &ks_.xs[b], no_key, inv_h_.data(), cat_.data(), 1, &buf, nullptr, hb);
    std::size_t lo, hi;  // (a key of weight 0, kept as a neighbour, measured as weighing 1)
    index_.window_1d(ks_.xs[b], hb, b, ks_.weight(b) > 0 ? ks_.weight(b) : 1.0, lo, hi);
    window += static_cast<double>(hi - lo) / m;
  }
  return window;
}

std::unique_ptr<LineSums> Attention::make_line(std::size_t degree, const LineData& data, bool squared,
                                               std::size_t rows, bool gradient) const {
  const Kernel k = options_.kernel;
  if (moments_) return std::make_unique<MomentLine>(ks_, k, degree, data, squared);
  // K(z)^2 = K(r z): the Gaussian at h / sqrt(2), Laplace at h / 2, read in powers of z.
  const double r = !squared ? 1.0 : k == Kernel::gaussian ? std::sqrt(2.0) : 2.0;
  std::unique_ptr<LineSums> line;
  if (policy_.per_query()) {  // the Gaussian (lines_apply), each row at its own bandwidth
    const double window = options_.tolerance > 0 ? mean_window(h_[0]) : 0.0;  // 0: every key, exactly
    if (window < HermiteLine::min_window ||
        static_cast<double>(rows) * window < HermiteLine::terms_per_key * static_cast<double>(ks_.n))
      return nullptr;
    line = std::make_unique<HermiteLine>(ks_, degree, data, options_.tolerance);
  } else if (k == Kernel::gaussian) {
    auto g = std::make_unique<GaussLine>(ks_, h_[0] / r, degree, options_.tolerance, rows, options_.pool, data);
    if (!g->usable()) return nullptr;
    line = std::move(g);
  } else {
    // The recursion costs about terms_per_key key-by-key terms a key: a pass whose rows'
    // windows hold fewer in all (the scan's 1000 rows at a narrow h) sums key by key. At the
    // pass's h: the squared kernel's line is built where the pass's is.
    if (static_cast<double>(rows) * mean_window(h_[0]) < LaplaceLine::terms_per_key * static_cast<double>(ks_.n))
      return nullptr;
    line = std::make_unique<LaplaceLine>(ks_, h_[0] / r, degree, data, &buffers_, gradient, options_.pool);
  }
  return squared ? std::make_unique<ScaledLine>(std::move(line), r) : std::move(line);
}

Attention::PassLine Attention::line_sums(std::size_t rows, bool gradient) const {
  PassLine out;
  if (!lines_apply()) return out;
  if (moments_) {
    out.line = &*moments_;
    return out;
  }
  out.owned = make_line(method_degree(options_.method, options_.degree), LineData::of(ks_), false, rows, gradient);
  out.line = out.owned.get();
  return out;
}

double Attention::squared_weights(const double* c, const LineMoments& sq) const {
  const std::size_t P = estimator_.local() ? estimator_.p() - 1 : 0;
  double v = 0;
  for (std::size_t a = 0; a <= P; ++a)
    for (std::size_t b = 0; b <= P; ++b) v += c[a] * c[b] * sq.M[a + b];
  return v;
}

Attention::DetailLines Attention::detail_lines(std::size_t rows, bool squares, const std::vector<double>* v) const {
  DetailLines out;
  if (!lines_apply()) return out;
  // A merged key's rows share its weight e_g: their squares add up to e_g^2 q2_g.
  auto square_weights = [&](std::vector<double>& w2) {
    w2.resize(ks_.n);
    for (std::size_t g = 0; g < ks_.n; ++g) w2[g] = ks_.weight(g) * ks_.weight(g) * (ks_.merged ? ks_.q2[g] : 1.0);
  };
  const std::size_t P = method_degree(options_.method, options_.degree);
  if (squares && moments_) {  // the kept tree, any bandwidth
    const std::lock_guard<std::mutex> lock(squares_mutex_);
    if (!squares_) {
      square_weights(squares_w2_);
      squares_ = std::make_unique<MomentLine>(ks_, options_.kernel, P, LineData{squares_w2_.data(), ks_.ys.data(), ks_.y_mid}, true);
    }
    out.squares = squares_.get();
  } else if (squares) {
    square_weights(out.w2);
    out.owned = make_line(P, {out.w2.data(), ks_.ys.data(), ks_.y_mid}, true, rows);
    out.squares = out.owned.get();
  }
  // Values v >= 0 (squared residuals) summed as they are: measured from an offset, a local mean
  // many orders below the largest v would cancel.
  if (v) out.values = make_line(0, {ks_.ws.empty() ? nullptr : ks_.ws.data(), v->data(), 0.0}, false, rows);
  return out;
}

std::unique_ptr<GaussTransform> Attention::transform(std::size_t rows) const {
  return fused_ ? fused_->transform(rows) : nullptr;
}

double Attention::sum_squares(std::size_t lo, std::size_t hi, const double* e) const {
  // A merged key's rows share its weight e_g: their squares add up to e_g^2 q2_g.
  return ks_.merged ? kernel::dot(lo, hi, e, {e}, {ks_.q2.data()}) : kernel::dot(lo, hi, e, {e});
}

std::vector<std::size_t> Attention::spread_rows(std::size_t count) const {
  std::vector<std::size_t> rows;
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

std::vector<double> Attention::reach(std::size_t count) const {
  if (!options_.neighbour_policy || ks_.merged) return {};  // a policy keeps every row its own key
  count = std::min(count, ks_.n);
  std::vector<double> out(count * ks_.d), buf(ks_.d), scratch(ks_.n);
  for (std::size_t r = 0; r < count; ++r) {
    const std::size_t p = (2 * r + 1) * ks_.n / (2 * count);
    double h = h_[0];
    const double* inv_h = policy_.query(index_, ks_.key(p), p, inv_h_.data(), cat_.data(), ks_.d, buf.data(),
                                        scratch.data(), h);
    for (std::size_t k = 0; k < ks_.d; ++k)
      out[r * ks_.d + k] = is_categorical(ks_.kinds[k]) ? std::numeric_limits<double>::quiet_NaN()
                           : policy_.inv_s()            ? h_[k] / policy_.inv_s()[p]
                                                        : 1 / inv_h[k];
  }
  return out;
}

std::vector<Attention::Slot> Attention::slots(const std::vector<std::size_t>* rows) const {
  std::vector<Slot> out;  // keys only: a row of sample weight 0 counts for nothing
  if (!rows) {
    for (std::size_t g = 0; g < ks_.n; ++g)
      for (std::size_t t = ks_.first(g); t < ks_.first(g + 1); ++t)
        if (ks_.w_of(t) > 0) out.push_back({g, t});
    return out;
  }
  for (std::size_t r : *rows) {
    const std::uint32_t g = ks_.rank.at(r);
    if (g == std::numeric_limits<std::uint32_t>::max() || ks_.w_of(g) == 0) continue;  // (kept keys: not merged)
    if (!ks_.merged) {
      out.push_back({g, g});
      continue;
    }
    // A key's slots hold its rows in input order.
    const auto* lo = ks_.slot_row.data() + ks_.first_slot[g];
    const auto* at = std::lower_bound(lo, ks_.slot_row.data() + ks_.first_slot[g + 1], static_cast<std::uint32_t>(r));
    out.push_back({g, static_cast<std::size_t>(at - ks_.slot_row.data())});
  }
  // By slot: the rows of a merged key one after another, gathered once.
  if (ks_.merged) std::stable_sort(out.begin(), out.end(), [](const Slot& a, const Slot& b) { return a.slot < b.slot; });
  return out;
}

std::vector<double> Attention::key_columns(const double* v, std::size_t c) const {
  std::vector<double> out(c * ks_.rows);
  for (std::size_t t = 0; t < ks_.rows; ++t)
    for (std::size_t k = 0; k < c; ++k) out[k * ks_.rows + t] = v[ks_.row_of(t) * c + k];
  return out;
}

}  // namespace nwreg
