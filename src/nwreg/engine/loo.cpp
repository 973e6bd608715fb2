// The training-row passes of Attention: the leave-one-out error and gradient, the in-sample fit
// (AICc, GCV), per-row residuals and effective neighbours, and the moments robust errors need.
#include "nwreg/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <span>

#include "nwreg/base/errors.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/engine/pass.h"
#include "nwreg/engine/small_system.h"
#include "nwreg/kernel/kernel1d.h"
#include "nwreg/kernel/kernel_nd.h"

namespace nwreg {

namespace {

// A pass's rows are made in chunks of this many, each row's terms into a buffer of one chunk,
// and summed in row order: the sums do not depend on the number of threads, and the buffers'
// memory not on the rows (16 bytes a row, 1.6 GB at 1e8 rows, when they held every row).
constexpr std::size_t pass_chunk = std::size_t{1} << 16;

// The most listed rows a pass keeps for the next pass over every row (Engine::RowMemo: 17 MB
// beside the slots the pass lists): the learner's sample is 50,000.
constexpr std::size_t memo_rows = 1000000;

}  // namespace

// A pass's slots, a chunk of at most pass_chunk at a time: those of the listed input rows
// (Engine::slots), or every slot of sample weight > 0 in engine order, made as the pass goes:
// a list of every row would cost 8 bytes a row, and rows in engine order read the keys in order.
class Engine::SlotChunks {
 public:
  SlotChunks(const Engine& e, const std::vector<std::size_t>* rows)
      : walk_{e.ks_}, listed_(rows ? e.slots(*rows) : nullptr), count_(listed_ ? listed_->size() : e.ks_.weighed) {}
  std::size_t size() const { return count_; }
  /// The listed slots (none: every slot).
  const std::shared_ptr<const std::vector<Slot>>& listed() const { return listed_; }
  /// The next chunk, in order; empty when every slot has been given.
  std::span<const Slot> next() {
    if (listed_) {
      const std::size_t from = done_;
      done_ = std::min(count_, done_ + pass_chunk);
      return {listed_->data() + from, done_ - from};
    }
    chunk_.clear();
    for (Slot s; chunk_.size() < pass_chunk && walk_.next(s);) chunk_.push_back(s);
    return chunk_;
  }

 private:
  SlotWalk walk_;
  std::shared_ptr<const std::vector<Slot>> listed_;  // none: every slot
  std::vector<Slot> chunk_;
  std::size_t count_, done_ = 0;
};

namespace {

// The first (lowest) input row out of reach so far: `row` counted in.
void count_out_of_reach(std::size_t row, std::size_t& count, std::size_t& first) {
  if (count++ == 0 || row < first) first = row;
}

}  // namespace

LooResult Engine::loo(bool with_gradient, const std::vector<std::size_t>* rows) const {
  check_loo_rows();
  SlotChunks chunks(*this, rows);
  const std::size_t cnt = chunks.size(), d = ks_.d, m = std::min(cnt, pass_chunk);
  std::vector<double> sq(m), grad(with_gradient ? m * d : 0);
  std::vector<char> reached(m);
  const Plan plan = backends_.plan({.rows = cnt, .gradient = with_gradient});
  LooResult out;
  if (with_gradient) out.gradient.assign(d, 0.0);
  // NW in several continuous columns at a fixed bandwidth, every row: each row's own weight in
  // the in-sample fit, l_pp = w_p / (w_p + A) with A = sum_(i != p) w_i K_i / K_p, read off its
  // leave-one-out sums: S0 = sum_(i != p) w_i K_i / K_b, so A = S0 K_b / K_p. tr(H) then needs
  // no pass of its own. NaN (no trace) where a row's key holds other rows too, or a row fell
  // back to its nearest keys. The leave-one-out window reaches at least as far as the in-sample
  // one (its nearest key is no nearer than p), so l_pp is within the tolerance's bound.
  const bool traceable = !estimator_.local() && options_.loss == LossFunction::squared && d > 1 &&
                         ks_.cont.size() == d && !options_.neighbour_policy && !is_compact(options_.kernel);
  const bool traced = !rows && traceable;
  // Rows made by the last pass over listed ones at these bandwidths, taken as made (memo_);
  // this pass's, kept for the next.
  const bool memo_on = index_.kind() != KeyIndex::Kind::line;
  std::unique_lock<std::mutex> lock(memo_mutex_, std::defer_lock);
  if (memo_on) lock.lock();
  RowMemo& memo = memo_;
  const bool reuse =
      memo_on && !rows && !with_gradient && memo.tolerance == options_.tolerance && memo.h == h_;
  const bool keep = memo_on && rows && rows->size() <= memo_rows;
  if (keep) {
    memo = {};
    memo.slots = chunks.listed();
  }
  std::size_t next_memo = 0;  // the memo's next row, as the pass walks the slots in engine order
  std::vector<std::size_t> from(reuse ? m : 0);  // each row's place in the memo, or none
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<double> own(traceable && (traced || keep) ? m : 0);
  double sse = 0, total = 0, trace = 0;
  for (std::span<const Slot> at; !(at = chunks.next()).empty();) {
    const std::size_t len = at.size();
    if (reuse)
      for (std::size_t k = 0; k < len; ++k)
        from[k] = next_memo < memo.slots->size() && (*memo.slots)[next_memo].slot == at[k].slot ? next_memo++ : none;
    parallel_for(options_.pool, len, d == 1 ? 64 : 8, [&](std::size_t a, std::size_t z) {
      Work w(shape());
      Rest cache;
      std::vector<double> g(d);
      for (std::size_t k = a; k < z; ++k) {
        Span s;
        const Slot at_k = at[k];
        if (reuse && from[k] != none) {
          reached[k] = memo.reached[from[k]];
          sq[k] = memo.sq[from[k]];
          if (traced) own[k] = memo.own[from[k]];
          continue;
        }
        const Row row = loo_row(plan, at_k, w, cache, s, with_gradient ? g.data() : nullptr, nullptr);
        reached[k] = row.reached;
        if (traceable && (traced || keep)) {
          const std::size_t p = at_k.key;
          own[k] = std::numeric_limits<double>::quiet_NaN();
          if (row.reached && !s.fallback && (s.moments || s.b != p) && (!ks_.merged || ks_.rest_w[at_k.slot] == 0)) {
            const double wp = ks_.weight(p);
            if (s.moments) {  // series over boxes: S0 in the kernel's own units, K_p = 1
              own[k] = wp / (wp + s.s0);
            } else {
              const double* q = ks_.key(p);
              const double log2_b = kernel::log2_weight(options_.kernel, keys(), s.b, q, s.inv_h) -
                                    kernel::log2_weight(options_.kernel, keys(), p, q, s.inv_h);
              own[k] = wp / (wp + s.s0 * std::exp2(log2_b));
            }
          }
        }
        const double resid = row.reached ? ks_.y_of(at_k.slot) - row.f : 0.0, sw = ks_.w_of(at_k.slot);
        sq[k] = sw * resid * resid;
        if (with_gradient)
          for (std::size_t c = 0; c < d; ++c) grad[k * d + c] = row.reached ? -2 * sw * resid * g[c] : 0.0;
      }
    });
    if (keep)
      for (std::size_t k = 0; k < len; ++k) {
        memo.reached.push_back(reached[k]);
        memo.sq.push_back(sq[k]);
        if (traceable) memo.own.push_back(own[k]);
      }
    for (std::size_t k = 0; k < len; ++k) {
      sse += sq[k];
      total += ks_.w_of(at[k].slot);
      if (!reached[k]) count_out_of_reach(ks_.row_of(at[k].slot), out.out_of_reach, out.first_out_of_reach);
      if (traced) trace += own[k];
    }
    if (with_gradient)
      for (std::size_t k = 0; k < len; ++k)
        for (std::size_t c = 0; c < d; ++c) out.gradient[c] += grad[k * d + c];
  }
  const double unit = ks_.y_scale * ks_.y_scale;
  out.mse = out.out_of_reach ? std::numeric_limits<double>::infinity() : sse / total * unit;
  if (keep) {  // (valid only now: a pass that threw keeps nothing)
    memo.h = h_;
    memo.tolerance = options_.tolerance;
  }
  if (!rows && !out.out_of_reach) every_row_reached_ = true;
  for (double& g : out.gradient) g = g / total * unit;
  if (traced && std::isfinite(trace)) out.trace = trace;
  return out;
}

void Engine::fit_at_key(const Plan& plan, std::size_t p, Work& w, bool gradient, KeyFit& k) const {
  const double* q = ks_.key(p);
  k.exact.reset();
  Span s;
  k.fit = row(plan, q, no_key, w, s, gradient ? k.g.data() : nullptr, k.c.data());
  // Summed whole, key p is at distance 0. Nearly interpolating, 1 - l_pp and the residual
  // need the sums without key p apart (Estimator::own_fit): gathered key by key.
  k.ep = s.moments ? ks_.weight(p) * s.unit : w.e[p];
  if (s.moments && k.ep * k.c[0] > 0.5) {
    s = gather(q, no_key, w, gradient);  // key p is in reach of itself: K(0) > 0
    k.fit = reduce(q, s, w, gradient ? k.g.data() : nullptr, k.c.data());
    k.ep = w.e[p];
  }
  if (!s.moments && s.b == p && k.ep * k.c[0] > 0.5) {  // nearly interpolating: see Estimator::own_fit
    const double others = s.sum([&](std::size_t lo, std::size_t hi) {
      double v = 0;
      for (std::size_t i = lo; i < hi; ++i) v += i == p ? 0.0 : w.e[i];
      return v;
    });
    k.exact = estimator_.own_fit(s, w, k.ep, others);
  }
  if (gradient && s.moments) {
    // As below, from the moments: dlog_p = 0 at distance 0 (every kernel), and
    // sum_i e_i dlog_i (c^T z_i)^2 = sum_(a,b) c_a c_b G_(a+b).
    // NW (c = (1 / S0, 0..0)): c_0^2 t_k per column, t_k = sum e dlog_k (Work; the line's G_0).
    if (!estimator_.local()) {
      for (std::size_t kk = 0; kk < ks_.d; ++kk) k.dtrace[kk] = -k.ep * k.c[0] * k.c[0] * w.t[kk];
    } else {
      const std::size_t P = estimator_.p() - 1;
      double t = 0;
      for (std::size_t a2 = 0; a2 <= P; ++a2)
        for (std::size_t b2 = 0; b2 <= P; ++b2) t += k.c[a2] * k.c[b2] * w.G[a2 + b2];
      k.dtrace[0] = -k.ep * t;
    }
  } else if (gradient) {
    // c = S^-1 e_1 and dS = sum_i de_i z_i z_i^T (rescaling z leaves c_0 unchanged), so
    // d l_pp / dlog h = e_p (dlog_p c_0 - sum_i e_i dlog_i (c^T z_i)^2).
    const double* xb = ks_.key(s.b);
    s.each([&](std::size_t lo, std::size_t hi) { kernel::linear(keys(), lo, hi, q, s.inv_h, k.c.data(), w.a); });
    for (std::size_t kk = 0; kk < ks_.d; ++kk) {
      const double t = s.sum([&](std::size_t lo, std::size_t hi) {  // sum e_i dlog_i (c^T z_i)^2
        return kernel::dlog_dot(options_.kernel, keys(), kk, lo, hi, q, xb, s.inv_h, w.e, {w.a}, {w.a});
      });
      k.dtrace[kk] = k.ep * (dlog_weight(q, xb, p, kk) * k.c[0] - t);
    }
  }
}

InSample Engine::insample(bool with_gradient, const std::vector<std::size_t>* rows) const {
  SlotChunks chunks(*this, rows);
  const std::size_t cnt = chunks.size(), d = ks_.d, m = std::min(cnt, pass_chunk);
  // Per row of a chunk: its weighted squared residual, its own weight l_pp, 1 - l_pp, and their
  // gradients; summed in row order.
  std::vector<double> sq(m), own(m), room(m), grad(with_gradient ? m * 2 * d : 0);
  const Plan plan = backends_.plan({.rows = cnt, .gradient = with_gradient});
  InSample out;
  if (with_gradient) out.d_mse.assign(d, 0.0), out.d_trace.assign(d, 0.0);
  double sse = 0, total = 0, tr = 0, free = 0;
  for (std::span<const Slot> at; !(at = chunks.next()).empty();) {
    const std::size_t len = at.size();
    parallel_for(options_.pool, len, d == 1 ? 64 : 8, [&](std::size_t a, std::size_t z) {
      Work w(shape());
      KeyFit key;
      key.g.resize(d), key.c.resize(estimator_.p()), key.dtrace.resize(d);
      std::size_t last = no_key;
      for (std::size_t k = a; k < z; ++k) {
        const std::size_t p = at[k].key;
        if (p != last) fit_at_key(plan, p, w, with_gradient, key), last = p;  // once for all its rows
        const std::optional<Estimator::OwnFit>& exact = key.exact;
        // l_pp = e_p c^T z_p, z_p = (1, 0, ..., 0): NW's a_pp = e_p / S0 included (c = (1/S0, 0..0));
        // a row of a merged key has its share of e_p.
        const std::size_t t = at[k].slot;
        const double sw = ks_.w_of(t), part = ks_.share(t, p);
        const double resid = exact ? (ks_.y_of(t) - ks_.ys[p]) + exact->residual : ks_.y_of(t) - key.fit.f;
        sq[k] = sw * resid * resid;
        own[k] = key.ep * key.c[0] * part;
        room[k] = exact ? (1 - part) + part * exact->room : 1 - own[k];
        if (!with_gradient) continue;
        for (std::size_t kk = 0; kk < d; ++kk) {
          grad[k * 2 * d + kk] = -2 * sw * resid * key.g[kk];
          grad[k * 2 * d + d + kk] = key.dtrace[kk] * part;
        }
      }
    });
    for (std::size_t k = 0; k < len; ++k) {
      sse += sq[k];
      tr += own[k];
      free += room[k];
      total += ks_.w_of(at[k].slot);
    }
    if (with_gradient)
      for (std::size_t k = 0; k < len; ++k)
        for (std::size_t j = 0; j < d; ++j) {
          out.d_mse[j] += grad[k * 2 * d + j];
          out.d_trace[j] += grad[k * 2 * d + d + j];
        }
  }
  const double unit = ks_.y_scale * ks_.y_scale, scale = static_cast<double>(ks_.rows) / static_cast<double>(cnt);
  out.mse = sse / total * unit;
  out.trace = tr * scale;  // a sample of rows stands for every row
  out.room = free * scale;
  for (double& v : out.d_mse) v = v / total * unit;
  for (double& v : out.d_trace) v *= scale;
  return out;
}

namespace {

// The sum of squared sample weights of the slots after each of the sampled slots at(k), k in
// [first, last), among slots [lo, hi): one walk back from hi.
template <class At>
std::vector<SumSquares> rows_after(std::size_t lo, std::size_t hi, std::size_t first, std::size_t last, const At& at,
                                   const KeySet& ks) {
  std::vector<SumSquares> after(last - first);
  SumSquares sum;
  for (std::size_t t = hi, k = last; t-- > lo;) {
    if (k > first && at(k - 1) == t) after[--k - first] = sum;
    sum = sum.plus(ks.w_of(t));
  }
  return after;
}

}  // namespace

LooDetail Engine::loo_pass(std::size_t neighbour_rows, bool residuals, bool neighbours) const {
  check_loo_rows();
  LooDetail out;
  if (residuals) out.residual.assign(ks_.n_in, 0.0);
  // Every row's residual (the fast path where it applies); the effective number of neighbours
  // from every row, or from `neighbour_rows` spread over the rows in engine order (the k-th at
  // slot at(k)), or from none.
  const bool every = neighbour_rows == 0 || neighbour_rows >= ks_.rows;
  const std::size_t count = !neighbours ? 0 : every ? ks_.rows : neighbour_rows;
  auto at = [&](std::size_t k) { return every ? k : (2 * k + 1) * ks_.rows / (2 * neighbour_rows); };
  auto first_at = [&](std::size_t t) {  // the first k with at(k) >= t (at is increasing)
    std::size_t lo = 0, hi = count;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      (at(mid) < t ? lo = mid + 1 : hi = mid);
    }
    return lo;
  };
  std::vector<double> inv_w2(count, 0.0);
  // The fused line sums the sampled rows' squared weights by its transforms too (key by key,
  // 5e4 rows at 1e8 keys and the learned h gather 3e10 weights). Not beside every row's
  // residual: where the squares' transform would not pay, the pass would lose the weights' too.
  const bool fused_squares = backends_.fused() && count > 0 && !residuals;
  const Plan plan = backends_.plan({.rows = residuals ? ks_.n : fused_squares ? count : 0, .squares = fused_squares});
  const std::size_t bad = for_queries(options_.pool, options_.progress, ks_.n, index_.kind() == KeyIndex::Kind::line ? 256 : 16, shape(), [&](std::size_t p, Work& w) {
    const std::size_t lo = ks_.first(p), hi = ks_.first(p + 1);
    std::size_t next = first_at(lo);  // the next sampled row's k
    const bool any = next < count && at(next) < hi;
    if (!residuals && !any && (!is_compact(options_.kernel) || every_row_reached_)) return true;  // none out of reach
    Rest cache;
    double* c = w.c.data();
    // The rest of a merged key's rows, each without the row: sum of w^2 (each row's own
    // weight in it is w c_0), the rows before it (summed as the loop goes) and after it
    // (after[k - first_k], for the sampled rows only: a key of 1e8 rows would hold 3.2 GB of
    // them for every row), each kept scaled (weights 1e-200 apart would underflow their squares).
    const std::size_t first_k = next;
    const auto after = ks_.merged && any ? rows_after(lo, hi, first_k, first_at(hi), at, ks_) : std::vector<SumSquares>{};
    SumSquares before;
    for (std::size_t t = lo; t < hi; ++t) {
      Span s;
      Row r;
      const SumSquares rows_before = before;
      if (!after.empty()) before = before.plus(ks_.w_of(t));
      const std::size_t k = next < count && at(next) == t ? next++ : no_key;  // sampled: its k
      double f, w2;
      if (k != no_key && plan.fused && plan.fused->loo_squares(plan.fused_pass, ks_.key(p)[0], p, f, w2)) {
        if (residuals) out.residual[ks_.row_of(t)] = (ks_.y_of(t) - f) * ks_.y_scale;
        inv_w2[k] = 1 / w2;
        continue;
      }
      if (k != no_key) {
        r = weights_row(Slot::of(p, t), w, s, c);
        cache.key = no_key;  // the weights were overwritten
      } else {
        r = loo_row(plan, Slot::of(p, t), w, cache, s, nullptr, nullptr);
      }
      if (!r.reached) {
        if (ks_.w_of(t) > 0) return false;
        continue;  // a kept row of weight 0 (a neighbour only) counts for nothing
      }
      if (residuals) out.residual[ks_.row_of(t)] = (ks_.y_of(t) - r.f) * ks_.y_scale;
      if (k == no_key) continue;
      w2 = s.sum([&](std::size_t a, std::size_t z) { return sum_squares(a, z, w.e); });
      if (ks_.merged) w2 += rows_before.merge(after[k - first_k]).times(c[0]);
      inv_w2[k] = 1 / w2;
    }
    return true;
  });
  if (bad != no_key) throw_out_of_reach(ks_.key(bad), ks_.order[bad], true);
  double sum = 0, total = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const double sw = ks_.w_of(at(k));
    sum += sw * inv_w2[k];
    total += sw;
  }
  if (total > 0) out.neighbours = sum / total;
  return out;
}

bool Engine::loo_moments(std::size_t slot, const std::vector<double>& v, std::size_t c, double& f, double* M) const {
  if (slot >= ks_.rows || ks_.w_of(slot) == 0 || ks_.rows < 2 + 2 * options_.leave_out) return false;
  const std::size_t p = ks_.key_of(slot);
  const Slot at = Slot::of(p, slot);
  Work w(shape());
  Span s;
  std::vector<double> cc(estimator_.p());
  const Row r = weights_row(at, w, s, cc.data());
  if (!r.reached) return false;
  // a[t] = a_jt (y_t - f) per row t over the keys' slots (a merged key's rows their shares;
  // the rest of row j's own key w_t c_0 each, row j no_key); then each moment in one
  // vectorised pass per range of slots.
  // (Not zeroed: only the slots of the spans are written and read. Zeroing every row's cost
  // n per sampled row: a learned metric's every pass, 5e9 at 1e5 rows.)
  const std::unique_ptr<double[]> a = row_buffer(ks_.rows);
  std::vector<Range> spans;
  s.each([&](std::size_t lo, std::size_t hi) {
    spans.emplace_back(ks_.first(lo), ks_.first(hi));
    for (std::size_t g = lo; g < hi; ++g)
      for (std::size_t t = ks_.first(g); t < ks_.first(g + 1); ++t) {
        const double l = g == p ? (t == at.slot ? 0.0 : cc[0] * ks_.w_of(t)) : w.e[g] * ks_.share(t, g);
        a[t] = l * (ks_.y_of(t) - r.f) * ks_.y_scale;
      }
  });
  for (std::size_t k = 0; k < c; ++k)
    for (std::size_t l = 0; l <= k; ++l) {
      double sum = 0;
      for (const auto& [lo, hi] : spans)
        sum += kernel::dot(lo, hi, a.get(), {&v[k * ks_.rows], v[k * ks_.rows + at.slot]},
                           {&v[l * ks_.rows], v[l * ks_.rows + at.slot]});
      M[k * c + l] = M[l * c + k] = sum;
    }
  f = r.f * ks_.y_scale;
  return true;
}

}  // namespace nwreg
