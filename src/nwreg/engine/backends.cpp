#include "nwreg/engine/backends.h"

#include <cmath>
#include <memory>

#include "nwreg/engine/engine.h"
#include "nwreg/engine/hermite_line.h"

namespace nwreg {

bool Backends::fuses(const Dataset& train, const EngineOptions& o, const Estimator& estimator) {
  return train.d == 1 && !is_categorical(train.kind(0)) && !o.neighbour_policy && o.kernel == Kernel::gaussian &&
         estimator.fuses() && train.weight.empty();
}

Backends::Backends(const Engine& e, bool fused) : e_(e) {
  if (fused && !e.ks_.merged)
    fused_.emplace(e.ks_, e.index_, e.options_.tolerance, e.options_.pool, e.pairs_, e.transformed_rows_);
  if (e.options_.shortcuts.allow(Shortcut::line_moments) && e.index_.kind() == KeyIndex::Kind::line && e.options_.leave_out == 0 &&
      MomentLine::applies(e.ks_, e.options_.kernel))
    moments_.emplace(e.ks_, e.options_.kernel, e.estimator_.degree(), LineData::of(e.ks_), false, e.edge());
}

void Backends::set_bandwidth(double h) {
  if (fused_) fused_->set_bandwidth(h);
}

void Backends::set_tolerance(double tolerance) {
  if (fused_) fused_->set_tolerance(tolerance);
}

Plan Backends::plan(const Needs& needs) const {
  Plan plan;
  if (fused_ && !needs.slopes) {
    plan.fused = &*fused_;
    // (Without the transform every window is summed key by key.)
    const bool transform = e_.options_.shortcuts.allow(Shortcut::gauss_transform);
    plan.fused_pass = fused_->pass(transform ? needs.rows : 0, needs.squares || needs.values, needs.values, needs.gradient);
    return plan;
  }
  if (needs.rows > 0 && !needs.squares && !needs.values && !needs.slopes) {
    plan.owned_boxes = make_boxes(needs.rows, needs.gradient);
    plan.boxes = plan.owned_boxes.get();
    if (plan.boxes) return plan;
  }
  if (!lines_apply() || (needs.slopes && !e_.estimator_.local())) return plan;
  if (needs.rows == 0 && !moments_) return plan;  // nothing to build a backend for
  if (moments_) {
    plan.line = plan.kept = &*moments_;
  } else {
    plan.owned_line = make_line(e_.estimator_.degree(), LineData::of(e_.ks_), false, needs.rows, needs.gradient);
    plan.line = plan.owned_line.get();
  }
  if (plan.line && (needs.squares || needs.values)) detail_lines(plan, needs.rows, needs.squares, needs.values);
  return plan;
}

bool Backends::lines_apply() const {
  const EngineOptions& o = e_.options_;
  if (!o.shortcuts.allow(Shortcut::line_moments) || e_.index_.kind() != KeyIndex::Kind::line || o.leave_out > 0 || e_.ks_.d != 1 || e_.ks_.categorical)
    return false;
  // Compact kernels: the tree kept. Else a backend made for the pass, worth building (O(n)) over
  // many keys: the Gaussian's at one bandwidth for every row (the fused path has its own
  // transform) or at each row's own (HermiteLine), Laplace's at one.
  const bool per_query = e_.policy_.per_query();
  return moments_ || (!fused_ && e_.ks_.n >= line_min_keys &&
                      (o.kernel == Kernel::gaussian || (o.kernel == Kernel::laplace && !per_query)));
}

std::unique_ptr<GaussBoxes> Backends::make_boxes(std::size_t rows, bool gradient) const {
  const EngineOptions& o = e_.options_;
  const KeySet& ks = e_.ks_;
  if (!o.shortcuts.allow(Shortcut::box_series) || ks.d < 2 || ks.categorical || o.kernel != Kernel::gaussian ||
      !e_.estimator_.fuses() || o.neighbour_policy || o.leave_out > 0 || !(o.tolerance > 0) ||
      e_.index_.search() != KeyIndex::Search::every)
    return nullptr;
  auto boxes = std::make_unique<GaussBoxes>(ks.xs.data(), ks.n, ks.d, ks.ws.empty() ? nullptr : ks.ws.data(),
                                            ks.ys.data(), ks.y_mid, e_.h_.data(), o.tolerance, rows,
                                            static_cast<double>(rows) * static_cast<double>(ks.n), gradient);
  return boxes->usable() ? std::move(boxes) : nullptr;
}

double Backends::mean_window(double h) const {
  // Over 16 keys spread over x, as queries, at their own scale where the policy gives one.
  const KeySet& ks = e_.ks_;
  const std::size_t m = 16;
  double window = 0, buf = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t b = (2 * k + 1) * ks.n / (2 * m);
    double hb = h;
    e_.policy_.query(e_.index_, &ks.xs[b], no_key, e_.inv_h_.data(), e_.cat_.data(), 1, &buf, nullptr, hb);
    std::size_t lo, hi;  // (a key of weight 0, kept as a neighbour, measured as weighing 1)
    e_.index_.window_1d(ks.xs[b], hb, b, ks.weight(b) > 0 ? ks.weight(b) : 1.0, lo, hi);
    window += static_cast<double>(hi - lo) / m;
  }
  return window;
}

std::unique_ptr<LineSums> Backends::make_line(std::size_t degree, const LineData& data, bool squared, std::size_t rows,
                                              bool gradient, bool spread) const {
  const EngineOptions& o = e_.options_;
  const KeySet& ks = e_.ks_;
  const double h = e_.h_[0];
  const Kernel k = o.kernel;
  if (moments_) return std::make_unique<MomentLine>(ks, k, degree, data, squared, e_.edge());
  // K(z)^2 = K(r z): the Gaussian at h / sqrt(2), Laplace at h / 2, read in powers of z.
  const double r = !squared ? 1.0 : k == Kernel::gaussian ? std::sqrt(2.0) : 2.0;
  std::unique_ptr<LineSums> line;
  if (e_.policy_.per_query()) {  // the Gaussian (lines_apply), each row at its own bandwidth
    const double window = o.tolerance > 0 ? mean_window(h) : 0.0;  // 0: every key, exactly
    if (window < HermiteLine::min_window ||
        static_cast<double>(rows) * window < HermiteLine::terms_per_key * static_cast<double>(ks.n))
      return nullptr;
    line = std::make_unique<HermiteLine>(ks, degree, data, o.tolerance);
  } else if (k == Kernel::gaussian) {
    auto g = std::make_unique<GaussLine>(ks, h / r, degree, o.tolerance, rows, o.pool, data, !spread);
    if (!g->usable()) return nullptr;
    line = std::move(g);
  } else {
    // The recursion costs about terms_per_key key-by-key terms a key: a pass whose rows'
    // windows hold fewer in all (the scan's 1000 rows at a narrow h) sums key by key. At the
    // pass's h: the squared kernel's line is built where the pass's is.
    if (static_cast<double>(rows) * mean_window(h) < LaplaceLine::terms_per_key * static_cast<double>(ks.n))
      return nullptr;
    line = std::make_unique<LaplaceLine>(ks, h / r, degree, data, &buffers_, gradient, o.pool);
  }
  return squared ? std::make_unique<ScaledLine>(std::move(line), r) : std::move(line);
}

void Backends::detail_lines(Plan& plan, std::size_t rows, bool squares, const std::vector<double>* v) const {
  const KeySet& ks = e_.ks_;
  // A merged key's rows share its weight e_g: their squares add up to e_g^2 q2_g.
  auto square_weights = [&](std::vector<double>& w2) {
    w2.resize(ks.n);
    for (std::size_t g = 0; g < ks.n; ++g) w2[g] = ks.weight(g) * ks.weight(g) * (ks.merged ? ks.q2[g] : 1.0);
  };
  const std::size_t P = e_.estimator_.degree();
  if (squares && moments_) {  // the kept tree, any bandwidth
    const std::lock_guard<std::mutex> lock(squares_mutex_);
    if (!squares_) {
      square_weights(squares_w2_);
      squares_ = std::make_unique<MomentLine>(ks, e_.options_.kernel, P, LineData{squares_w2_.data(), ks.ys.data(), ks.y_mid},
                                              true, e_.edge());
    }
    plan.squares = squares_.get();
  } else if (squares) {
    square_weights(plan.w2);
    plan.owned_squares = make_line(P, {plan.w2.data(), ks.ys.data(), ks.y_mid}, true, rows);
    plan.squares = plan.owned_squares.get();
  }
  // Values v >= 0 (squared residuals) summed as they are: measured from an offset, a local mean
  // many orders below the largest v would cancel.
  if (v) {
    plan.owned_values = make_line(0, {ks.ws.empty() ? nullptr : ks.ws.data(), v->data(), 0.0}, false, rows, false, true);
    plan.values = plan.owned_values.get();
  }
}

}  // namespace nwreg
