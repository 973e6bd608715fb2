#pragma once
/// The estimator at each query, chosen once per engine: Nadaraya-Watson (a weighted mean, local
/// constant) or a local polynomial of degree P >= 1 (local linear at P = 1). It says which sums
/// the kernel sweep must make and reduces them to the prediction:
///
/// - NW: s0 = sum e_i and s1 = sum e_i (y_i - y_b); f = y_b + s1 / s0, and for the gradient in
///   log h_k also t_k = sum e_i dlog_ik and v_k = sum e_i (y_i - y_b) dlog_ik:
///   df/dlog h_k = (v_k - (f - y_b) t_k) / s0.
/// - Local polynomial: the moments S = sum e_i z_i z_i^T and tz = sum e_i (y_i - y_b) z_i over
///   the design z_i (every monomial up to P in (x_i - q) / h); beta = S^-1 tz, f = y_b + beta_0.
///   The prediction is linear in y, sum_i l_i y_i, with the equivalent weights
///   l_i = e_i c^T z_i, c = S^-1 (1, 0, ..., 0). A direction in which the keys in reach do not
///   spread is dropped (SmallSystem), down to NW.

#include <cstddef>
#include <optional>
#include <memory>

#include "nwreg/engine/options.h"
#include "nwreg/engine/pass.h"
#include "nwreg/kernel/kernel_nd.h"
#include "nwreg/kernel/kernels.h"
#include "nwreg/model/settings.h"

namespace nwreg {

class Estimator {
 public:
  /// `d` x columns; the degree of `method` (NW 0, local linear 1, local polynomial `degree`).
  /// `min_spread` > 0 (a local line in one column): lowess's rule, a window whose weighted
  /// standard deviation of x is at most that is fitted as a constant (its weighted mean), not a
  /// line (clowess fits the slope only where sqrt(sum w (x - xbar)^2) > 0.001 (max x - min x),
  /// the weights summing to 1).
  Estimator(Method method, std::size_t degree, std::size_t d, LossFunction loss = LossFunction::squared, double min_spread = 0);

  /// What it is, for the chooser (backends.h) and the passes.
  ///
  /// Its loss (options.h): squared, linear in y (f = sum_i l_i y_i), or bisquare by robustness
  /// weights that the rows carry.
  LossFunction loss() const { return loss_; }
  /// Whether the fit is linear in y, as standard errors, tr(H) and the tests of fit assume.
  bool linear() const { return loss_ == LossFunction::squared; }
  /// Whether it fits a polynomial (degree >= 1): the sweep then sums its moments.
  bool local() const { return degree_ > 0; }
  /// The degree of its polynomial (NW 0): its row sums the moments of z up to 2 degree.
  std::size_t degree() const { return degree_; }
  /// Whether the fused line computes it: NW's weighted mean of unit-weight rows, summed as s0
  /// and s1 alone (a robust loss's rows carry weights).
  bool fuses() const { return degree_ == 0 && linear(); }
  /// The rows of its design (NW: d + 1 all the same, the length of an equivalent-weight c).
  std::size_t p() const { return p_; }
  /// The design of a polynomial of degree >= 2 (kernel_nd.h); nullptr: local linear's (1, z).
  const kernel::Design* design() const { return design_.get(); }

  /// Points the sweep's targets at the sums this estimator reduces (w's moments, or NW's
  /// gradient sums when `gradient`), zeroed.
  void prepare(kernel::Targets& sums, Work& w, bool gradient) const;

  /// The row gathered into s and w reduced: its prediction (units of y_scale; unreached where
  /// s0 = 0), the gradient in log h into grad, and c (the equivalent weights' coefficients,
  /// p of them) into c, each if not null. A row the nearest-key fallback made reduces as NW.
  Row reduce(Kernel kernel, const kernel::Keys& keys, const double* ys, const double* q, const double* xb,
             const Span& s, Work& w, double* grad, double* c) const;

  /// A row gathered at key b = s.b itself (the in-sample fit at a key: z_b = e_1, y_b its own
  /// y), whose own weight in the sums is `own` and the other keys' weights sum to `others`
  /// (summed apart, so that nothing cancels): 1 - l_bb and y_b - f_b without the cancellation
  /// that 1 - own / s0 and y_b - f suffer where the fit nearly interpolates. Key b adds to
  /// S_00 only and nothing to the sums of y - y_b, so the fit without it has S_o (S_00 less
  /// own) and the same t: 1 - l_bb = 1 / (1 + own g), g = (S_o^-1)_00, and y_b - f_b =
  /// (1 - l_bb) (y_b - f_-b), f_-b - y_b = (S_o^-1 t)_0 (NW: others / s0 and -s1 / s0). nullopt
  /// where S_o is degenerate (the fit without b is undefined): use the plain forms.
  struct OwnFit {
    double room;      //!< 1 - l_bb
    double residual;  //!< y_b - f_b
  };
  std::optional<OwnFit> own_fit(const Span& s, const Work& w, double own, double others) const;

  /// w.e over the span times c^T z_i: the equivalent weights, unnormalised for NW.
  void equivalent(const kernel::Keys& keys, const double* q, const Span& s, const double* c, Work& w) const;

 private:
  // A local fit whose moments about q lost a direction, solved again from moments about the
  // weights' mean of each design column (key by key over the gathered weights): beta and c in
  // z's basis, and whether it kept every term. False where the weights sum to 0 or S_00 holds
  // more than the gathered weights (a merged key's rest).
  bool centred_solve(const kernel::Keys& keys, const double* ys, const double* q, const Span& s, Work& w, double yb,
                     double* beta, double* c, bool& full) const;
  // Lowess's rule (above): whether the local line's window spreads too little for a slope.
  bool too_narrow(const Work& w, double inv_h) const;
  std::size_t degree_;
  std::unique_ptr<kernel::Design> design_;
  std::size_t p_;
  LossFunction loss_;
  double min_spread_;
};

}  // namespace nwreg
