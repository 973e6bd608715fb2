#pragma once
/// The inner loops of the attention engine for every kernel, method and column count: each
/// works on a contiguous range [lo, hi) of keys stored by column (column k of key i at
/// x[k * stride + i]), so that the loops over keys vectorise. The kernel is chosen once per
/// call (kernels.h), never per key. Sums run in eight lanes added in a fixed order, so results
/// do not depend on the instruction set or the number of threads. Each function is compiled
/// for x86-64-v4, v3 and baseline and picks one at run time.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nwreg/kernel/kernels.h"

namespace nwreg::kernel {

/// A categorical column's kernel (levels.h): a key at level distance delta = |x_i - q| weighs
/// 2^-cost relative to a key at the query's level, cost = 0 at delta = 0, else
/// base + step * s, s = delta (ordered) or 1; its d log weight / d log lambda is gain * s there
/// (0 at delta = 0). Such a column takes no part in a local fit's polynomial (z = 0) unless
/// in_line (then z = x - q, the level values' difference, as statsmodels does), and its entry of
/// inv_h is unused. In the nearest-key distances its cost counts as the continuous kernel's
/// distance of equal weight.
struct Category {
  bool on = false, ordered = false, in_line = false;
  double base = 0, step = 0, gain = 0;
  double steps(double delta) const { return delta == 0 ? 0.0 : ordered ? std::abs(delta) : 1.0; }
  double cost(double delta) const { return delta == 0 ? 0.0 : base + step * steps(delta); }
};

/// A local polynomial's design over z_k = (x_k - q_k) / h_k: row 0 is 1, rows 1..d the z_k,
/// each later row r the product of row parent[r] and z_{col[r]}: every monomial up to the
/// degree once (degree 1: local linear's (1, z)).
struct Design {
  std::size_t p = 0;
  std::vector<std::uint32_t> parent, col;
};
Design make_design(std::size_t d, std::size_t degree);

/// Keys by column, and their sample weights (nullptr: all 1).
struct Keys {
  const double* x = nullptr;
  std::size_t stride = 0, d = 0;
  const double* w = nullptr;
  /// Every |x| <= KeySet::moderate_limit (4e153): the Gaussian's factored terms, (x - x_b)
  /// ((x - q) + D) K2 a column, stay finite for a query as moderate, so no column's inf meets
  /// another's -inf (kernel1d.h's one column needs only |x| <= 4e307).
  bool moderate = false;
  const Category* cat = nullptr;  //!< d entries, a categorical column's `on` set; nullptr: none
  const Design* design = nullptr; //!< a local fit's design; nullptr: local linear's (p = d + 1)
  /// Adaptive bandwidths: key i's continuous columns scaled by inv_s[i] more (its bandwidths
  /// h_k s_i) and its weight by 2^lognorm[i] (1 / s_i^d, d its continuous columns). Weights are
  /// then measured from key b's absolute log2 weight (Targets::ref), not in the factored form.
  const double* inv_s = nullptr;
  const double* lognorm = nullptr;
  /// Compact kernels weigh key i by K(r), r the Euclidean norm of its u_k = (x_ik - q_k) / h_k
  /// over the continuous columns (loess's distance), not by the product of K(u_k). Exponential
  /// kernels are unchanged (the Gaussian is radial already; Laplace stays exp(-sum |u_k|)).
  bool radial = false;
  const double* column(std::size_t k) const { return x + k * stride; }
  std::size_t p() const { return design ? design->p : d + 1; }
  const Category* category(std::size_t k) const { return cat && cat[k].on ? &cat[k] : nullptr; }
  /// Column k's scale in a local fit's z: 1 / h, 1 for a categorical column in the line, 0 out of it.
  double z_scale(std::size_t k, const double* inv_h) const {
    const Category* c = category(k);
    return !c ? inv_h[k] : c->in_line ? 1.0 : 0.0;
  }
};

/// A per-key factor (v_i - shift) * scale; 1 for every key when v is nullptr.
struct Factor {
  const double* v = nullptr;
  double shift = 0, scale = 1;
};

/// Keys are swept in blocks of this many (each block's terms stay in L1).
inline constexpr std::size_t block = 256;

/// What fill adds up besides the weights: with y, *s1 += sum e_i (y_i - yb); with t and v
/// too (d entries each), t_k += sum e_i dlog_ik and v_k += sum e_i (y_i - yb) dlog_ik, dlog_ik
/// = d log e_i / d log h_k (kernels.h); or with S, tz and z, a local fit's moments over its
/// design's rows z_i (Keys::design; p = Keys::p()): S[c * p + r] += sum e_i z_ic z_ir for r <= c
/// (the lower triangle), tz[c] += sum e_i z_ic (y_i - yb); z is scratch for p * block values.
struct Targets {
  const double* y = nullptr;
  double yb = 0;
  double* s1 = nullptr;
  double *t = nullptr, *v = nullptr;
  double *S = nullptr, *tz = nullptr, *z = nullptr;
  double ref = 0;  //!< Keys::inv_s: key b's log2 weight (log2_weight), which every weight is measured from
};

/// Key i's log2 weight at q, not relative to any key (Keys::inv_s; exponential kernels).
double log2_weight(Kernel kernel, const Keys& keys, std::size_t i, const double* q, const double* inv_h);

/// e[i] = s_i * kernel weight of key i relative to key b (at xb; see kernels.h) for i in
/// [lo, hi); returns their sum, and makes the sums `sums` asks for in the same sweep.
/// Exponents are clamped to [-1021, 1020]: a key is never that much nearer than b when b is
/// the nearest key to within rounding (see nearest).
double fill(Kernel kernel, const Keys& keys, std::size_t lo, std::size_t hi, const double* q, const double* xb,
            const double* inv_h, double* e, const Targets& sums = {});

/// The first key in [lo, hi), other than `skip`, nearest q by the kernel's distance (the sum
/// over the columns of the squared scaled distance, or of the absolute one for L1 kernels);
/// its distance into rmin (+inf when every distance overflows). The distances are plain sums,
/// so a key within about 1e-15 rmin of it may be nearer: callers with rmin beyond what they can
/// afford (see KeyIndex::nearest) check exactly. `weighed`: among the keys of sample weight
/// > 0 only (rmin +inf where none is).
std::size_t nearest(Kernel kernel, const Keys& keys, std::size_t lo, std::size_t hi, std::size_t skip,
                    const double* q, const double* inv_h, double& rmin, bool weighed = false);

/// sum over i in [lo, hi) with e_i != 0 of e_i a_i b_i.
double dot(std::size_t lo, std::size_t hi, const double* e, Factor a, Factor b = {});

/// sum over i in [lo, hi) with e_i != 0 of e_i dlog_i a_i b_i, dlog_i = d log e_i / d log h_k
/// of column k (q, xb the query's and key b's coordinates).
double dlog_dot(Kernel kernel, const Keys& keys, std::size_t k, std::size_t lo, std::size_t hi, const double* q,
                const double* xb, const double* inv_h, const double* e, Factor a, Factor b = {});

/// d log e_i / d log h_k of key i (as dlog_dot weighs it).
double dlog(Kernel kernel, const Keys& keys, std::size_t k, std::size_t i, const double* q, const double* xb,
            const double* inv_h);

/// out[i] = d e_i / d q_k = e_i d log e_i / d q_k for i in [lo, hi) (0 where e_i = 0): how each
/// key's weight moves with the query's continuous column k.
void slope_weights(Kernel kernel, const Keys& keys, std::size_t k, std::size_t lo, std::size_t hi, const double* q,
                   const double* inv_h, const double* e, double* out);

/// out[i] = sum_r c[r] z_ir over the design's rows (local linear: c[0] + sum_k c[k+1] z_ik,
/// z_ik = (x_ik - q_k) / h_k), for i in [lo, hi): a local fit's value at each key.
void linear(const Keys& keys, std::size_t lo, std::size_t hi, const double* q, const double* inv_h, const double* c,
            double* out);

}  // namespace nwreg::kernel
