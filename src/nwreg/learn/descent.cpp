// The descents the learners step with: fixed steps (SGD, Adam) and a line search with
// quasi-Newton directions (bandwidth.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/learn/bandwidth.h"

namespace nwreg {
namespace {

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double a : v) m = std::max(m, std::abs(a));
  return m;
}

// The loss's last digits are rounding (its rows' sums, each prediction's weights): a decrease
// below loss_resolution of it is beyond what the Armijo test can see, and a step that promises
// no more only trades rounding for rounding, backtracking pass after pass.
constexpr double loss_resolution = 64 * std::numeric_limits<double>::epsilon();

// Whether the quadratic model's decrease by the full quasi-Newton step, g' H^-1 g / 2 over the
// parameters not held at a bound, is below the loss's resolution: the loss is then at its
// minimum as closely as it can be measured (h within about sqrt(2 resolution L / curvature)).
template <class Held>
bool below_resolution(const LooResult& cur, const std::vector<double>& inv, const Held& held) {
  const std::size_t d = cur.gradient.size();
  double predicted = 0;
  for (std::size_t k = 0; k < d; ++k)
    for (std::size_t j = 0; j < d; ++j)
      if (!held(k) && !held(j)) predicted += cur.gradient[k] * inv[k * d + j] * cur.gradient[j];
  return predicted > 0 && predicted / 2 <= loss_resolution * std::abs(cur.mse);
}

// The loss as the passes compute it errs by up to about 1e-13 of itself (the fast sums'
// series and each row's rounding): near the minimum that noise outweighs the decrease the
// Armijo test asks for, and a step onto the minimum can measure a little higher than where it
// came from.
constexpr double loss_noise = 1e-12;

// Whether a trial point that fails the Armijo test is the minimum all the same: its gradient
// within the tolerance (the stopping test), its loss above the current one by no more than the
// loss's noise. The gradient is the sharper measure there: backtracking from such a point only
// trades noise for noise, pass after pass.
bool within_tolerance(const LooResult& r, double tol) { return max_abs(r.gradient) <= tol * std::abs(r.mse); }
bool settled(const LooResult& trial, const LooResult& cur, double tol) {
  return std::isfinite(trial.mse) && within_tolerance(trial, tol) && trial.mse <= cur.mse + loss_noise * std::abs(cur.mse);
}

// BFGS's update of the inverse Hessian estimate (d x d, row-major) from a step s and the change
// y in the gradient along it, sy = s'y > 0: inv <- (I - rho s y') inv (I - rho y s') + rho s s',
// rho = 1 / sy.
void bfgs_update(std::vector<double>& inv, const std::vector<double>& s, const std::vector<double>& y, double sy) {
  const std::size_t d = s.size();
  const double rho = 1 / sy;
  std::vector<double> hy(d, 0.0);  // inv y
  for (std::size_t k = 0; k < d; ++k)
    for (std::size_t j = 0; j < d; ++j) hy[k] += inv[k * d + j] * y[j];
  const double yhy = std::inner_product(y.begin(), y.end(), hy.begin(), 0.0);
  for (std::size_t k = 0; k < d; ++k)
    for (std::size_t j = 0; j < d; ++j)
      inv[k * d + j] += -rho * (hy[k] * s[j] + s[k] * hy[j]) + (rho * rho * yhy + rho) * s[k] * s[j];
}

// The step to try after a refusal at `step` (the losses f0 at 0 and ft at step, the slopes
// along the step df0 and dft per unit of it): the minimiser of the cubic through those four
// values (Nocedal and Wright, Numerical Optimization, eq. 3.59), or where the cubic has none
// of the quadratic through f0, df0 and ft, kept within [step / 100, step / 2]; half the step
// where ft is not finite. Halving alone takes 20 passes to come down from a first step of 0.5
// in log h to the 1e-6 a descent started at its minimum needs (`init` at a learned h); the
// cubic, which knows the slopes at both ends, gets there in three or four. (The lower bound
// keeps a cubic misled by a step across a kink or a jump from shrinking the step a thousandfold
// at once.)
double shorter_step(double step, double f0, double df0, double ft, double dft) {
  const double lo = step / 100, hi = step / 2;
  if (!std::isfinite(ft) || !std::isfinite(dft)) return hi;
  double next = std::numeric_limits<double>::quiet_NaN();
  const double d1 = df0 + dft - 3 * (ft - f0) / step, disc = d1 * d1 - df0 * dft;
  if (disc >= 0) {
    const double d2 = std::sqrt(disc), denom = dft - df0 + 2 * d2;
    if (denom > 0) next = step - step * (dft + d2 - d1) / denom;
  }
  if (!(next > 0 && next < step)) {  // the quadratic's
    const double curv = ft - f0 - df0 * step;
    if (curv > 0 && df0 < 0) next = -df0 * step * step / (2 * curv);
  }
  return std::isfinite(next) ? std::clamp(next, lo, hi) : hi;
}

}  // namespace

Descent fixed_steps(std::vector<double> theta, const FitOptions& opt, bool adam,
                    const std::function<LooResult(const std::vector<double>&)>& eval,
                    const std::function<void(int, const std::vector<double>&, double)>& record) {
  constexpr double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  LooResult cur = eval(theta);
  if (!std::isfinite(cur.mse)) throw DataError("the start point of the descent is out of bounds (its loss is not finite)");
  record(0, theta, cur.mse);
  Descent res{theta, cur.mse, 0, false, "epochs done", {}};
  std::vector<double> m1(theta.size(), 0.0), m2(theta.size(), 0.0);
  for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
    for (std::size_t k = 0; k < theta.size(); ++k) {
      const double g = cur.gradient[k];
      if (!adam) {
        theta[k] -= opt.lr * g;
        continue;
      }
      m1[k] = beta1 * m1[k] + (1 - beta1) * g;
      m2[k] = beta2 * m2[k] + (1 - beta2) * g * g;
      const double mh = m1[k] / (1 - std::pow(beta1, epoch)), vh = m2[k] / (1 - std::pow(beta2, epoch));
      theta[k] -= opt.lr * mh / (std::sqrt(vh) + eps);
    }
    cur = eval(theta);
    if (!std::isfinite(cur.mse)) {
      res.stop_reason = "not finite";
      break;
    }
    res.epochs = epoch;
    record(epoch, theta, cur.mse);
    if (cur.mse < res.loss) {
      res.loss = cur.mse;
      res.theta = theta;
    }
  }
  return res;
}

Descent line_search(std::vector<double> theta, const FitOptions& opt,
                    const std::function<LooResult(const std::vector<double>&)>& eval,
                    const std::function<void(int, const std::vector<double>&, double)>& record,
                    const Box& box, const std::vector<double>& curvature, const Accuracy& accuracy,
                    const Rivalry& rivalry) {
  Descent res;
  const std::size_t d = theta.size();
  auto clamp = [&](std::size_t k, double t) { return box.empty() ? t : std::clamp(t, box.lo[k], box.hi[k]); };
  for (std::size_t k = 0; k < d; ++k) theta[k] = clamp(k, theta[k]);
  auto allow = [&](double error, double loss) { return accuracy ? accuracy(error, loss) : 0.0; };
  allow(0, 0);
  LooResult cur = eval(theta);
  double cur_err = 0;  // the bound on cur.mse's error (accuracy); 0: exact
  if (!std::isfinite(cur.mse) && rivalry.optional_start) {
    res.theta = std::move(theta);
    res.loss = std::numeric_limits<double>::infinity();
    res.stop_reason = "the start point is unusable";
    return res;
  }
  if (!std::isfinite(cur.mse) && cur.out_of_reach)
    throw DataError("the start point of the descent leaves " + std::to_string(cur.out_of_reach) +
                    " training rows with no other key in reach (first: row " +
                    std::to_string(cur.first_out_of_reach + 1) + "); start from a wider bandwidth");
  if (!std::isfinite(cur.mse))
    throw DataError("the start point of the descent is out of bounds (the criterion is undefined there, or the fit "
                    "averages fewer than `min_neighbours` neighbours); start from a wider bandwidth");
  record(0, theta, cur.mse);

  // Quasi-Newton directions (BFGS on the inverse Hessian, Nocedal and Wright, Numerical
  // Optimization, ch. 6), Armijo backtracking accepting: no step can raise the loss, so the
  // descent cannot diverge. BFGS learns the curvature of each parameter and between them, which
  // plain gradient steps cannot: with a bandwidth and a categorical lambda on very different
  // scales those zig-zag for hundreds of epochs. With a box, a parameter at a bound whose
  // gradient points out of it is held there (its row and column of the direction are dropped)
  // and every trial point is projected onto the box.
  std::vector<double> inv(d * d, 0.0);  // the inverse Hessian estimate, row-major
  auto reset = [&](double scale) {
    std::fill(inv.begin(), inv.end(), 0.0);
    for (std::size_t k = 0; k < d; ++k) inv[k * d + k] = scale;
  };
  reset(opt.lr / std::max(max_abs(cur.gradient), std::numeric_limits<double>::min()));
  bool curvature_known = curvature.size() == d * d;
  if (curvature_known) inv = curvature;
  auto held = [&](std::size_t k) {
    return !box.empty() && cur.gradient[k] == 0 && (theta[k] <= box.lo[k] || theta[k] >= box.hi[k]);
  };
  // The current point measured again exactly, where it was not.
  auto exact_cur = [&] {
    if (cur_err == 0) return;
    allow(0, cur.mse);
    cur = eval(theta);
    cur_err = 0;
  };
  auto at_minimum = [&] {
    return within_tolerance(cur, opt.tol) || max_abs(cur.gradient) == 0 ||
           (curvature_known && below_resolution(cur, inv, held));
  };
  res.stop_reason = "epoch cap";
  bool gave_up = false;
  std::vector<double> dir(d), trial_theta(d);
  for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
    if (cur_err > 0 && at_minimum()) exact_cur();  // a looser measure's word is not final
    const double gmax = max_abs(cur.gradient);
    if (at_minimum()) {
      res.converged = true;
      res.stop_reason = "tolerance";
      break;
    }
    bool accepted = false, snapped = false;
    LooResult trial;
    double trial_err = 0;
    for (int attempt = 0; attempt < 2 && !accepted; ++attempt) {
      bool redirect = false;  // the current point measured again exactly disowns the direction
      double slope = 0;  // g . dir
      for (std::size_t k = 0; k < d; ++k) {
        dir[k] = 0;
        if (held(k)) continue;
        for (std::size_t j = 0; j < d; ++j)
          if (!held(j)) dir[k] -= inv[k * d + j] * cur.gradient[j];
        slope += cur.gradient[k] * dir[k];
      }
      if (!(slope < 0)) {  // not a descent direction: start the curvature again
        reset(opt.lr / gmax);
        curvature_known = false;
        for (std::size_t k = 0; k < d; ++k) dir[k] = held(k) ? 0 : -inv[k * d + k] * cur.gradient[k];
      }
      // No single step moves any parameter by more than 1 (for log h, a factor e); the scan
      // found the basin.
      double step = std::min(1.0, 1.0 / std::max(max_abs(dir), std::numeric_limits<double>::min()));
      for (int tries = 0; tries < 60 && step * max_abs(dir) > 1e-15; ++tries) {
        double decrease = 0;  // the first-order decrease along the step taken
        snapped = false;
        for (std::size_t k = 0; k < d; ++k) {
          trial_theta[k] = clamp(k, theta[k] + step * dir[k]);
          // Up past its snap, downhill: on to the top at once (the first try only).
          if (tries == 0 && !box.snap.empty() && dir[k] > 0 && cur.gradient[k] < 0 && trial_theta[k] > box.snap[k])
            trial_theta[k] = box.hi[k], snapped = true;
          decrease += cur.gradient[k] * (theta[k] - trial_theta[k]);
        }
        const double armijo = 1e-4 * decrease;  // the decrease the test asks for
        trial_err = allow(decrease > 0 ? 0.01 * decrease : 0.0, cur.mse);
        trial = eval(trial_theta);  // +inf where unusable: rejected below
        auto passes = [&] { return trial.mse <= cur.mse - armijo || settled(trial, cur, opt.tol); };
        const double margin = trial_err + cur_err;
        if (margin > 0 && (std::abs(trial.mse - (cur.mse - armijo)) <= margin || passes() != (trial.mse <= cur.mse - armijo))) {
          // Within the measures' errors of the test (or of settled's): both points again, exactly.
          exact_cur();
          if (trial_err > 0) {
            trial_err = allow(0, cur.mse);
            trial = eval(trial_theta);
          }
        }
        if (passes()) {
          accepted = true;
          break;
        }
        // A refusal may be the current point's error: the shorter steps are tested against it
        // exactly, along the direction only while its exact gradient still descends there.
        if (std::isfinite(trial.mse) && cur_err > 0) {
          exact_cur();
          double along = 0;
          for (std::size_t k = 0; k < d; ++k) along += cur.gradient[k] * dir[k];
          if (!(along < 0)) {
            redirect = true;
            break;
          }
        }
        double trial_slope = 0;  // the trial's slope along the step taken (an unusable trial has none)
        for (std::size_t k = 0; k < trial.gradient.size(); ++k) trial_slope += trial.gradient[k] * (trial_theta[k] - theta[k]);
        step = snapped ? step / 2 : shorter_step(step, cur.mse, -decrease / step, trial.mse, trial_slope / step);
      }
      if (!accepted && redirect) continue;  // once more, from the exact gradient
      if (!accepted && curvature_known) {  // a stale estimate: once more from plain gradient steps
        reset(opt.lr / gmax);
        curvature_known = false;
      } else {
        break;
      }
    }
    if (!accepted) {
      res.converged = true;
      res.stop_reason = "no further decrease";
      break;
    }
    double moved = 0, sy = 0, yy = 0;
    std::vector<double> sv(d), yv(d);
    for (std::size_t k = 0; k < d; ++k) {
      sv[k] = trial_theta[k] - theta[k];
      yv[k] = trial.gradient[k] - cur.gradient[k];
      moved = std::max(moved, std::abs(sv[k]));
      sy += sv[k] * yv[k];
      yy += yv[k] * yv[k];
    }
    // (Not across a snap: its jump in one parameter says nothing of the curvature.)
    if (!snapped && sy > 1e-12 * std::sqrt(yy) * std::sqrt(std::inner_product(sv.begin(), sv.end(), sv.begin(), 0.0))) {
      if (!curvature_known) reset(sy / yy);  // the first estimate: a scaled identity
      curvature_known = true;
      bfgs_update(inv, sv, yv, sy);
    }
    theta = trial_theta;
    cur = trial;
    cur_err = trial_err;
    res.epochs = epoch;
    record(epoch, theta, cur.mse);
    // A step that changed every parameter by tol or less: known to that precision.
    if (moved <= opt.tol) {
      res.converged = true;
      res.stop_reason = "tolerance";
      break;
    }
    if (rivalry.give_up && rivalry.give_up(theta, cur.mse - cur_err)) {
      res.stop_reason = "another start's basin";
      gave_up = true;
      break;
    }
  }
  if (!gave_up) exact_cur();  // (a rival given up keeps its loss as measured: it lost)
  allow(0, cur.mse);
  res.theta = theta;
  res.loss = cur.mse;
  if (curvature_known) res.curvature = std::move(inv);
  return res;
}

}  // namespace nwreg
