#pragma once
/// Each kernel is one type that carries everything the engine and the bandwidth rules need:
///
/// - its weight relative to the key b nearest the query q, one column at a time. Exponential
///   kernels (Gaussian, Laplace) give a term of log2 e_i per column, summed over the columns
///   and raised to 2^: e_b = 1 and no key of a query outweighs b, so nothing overflows however
///   far q lies. Compact kernels give a factor K(u), u = (x_ik - q_k) / h_k, multiplied over
///   the columns; they are bounded and need no reference key.
/// - dlog: d log e_i / d log h_k, up to a constant per query and column (the engine uses it
///   only in sums with weighted residuals that add up to 0, where a constant cancels).
///   0 outside a compact kernel's support.
/// - dq: d log e_i / d q_k, the slope of a key's log weight as the query moves (0 outside a
///   compact kernel's support, and for Laplace at the key itself).
/// - its reach: the radius around q beyond which every key's weight relative to b is below
///   e^-T (exponential kernels), or its support (compact kernels).
/// - floor = K(1): every key within one bandwidth of q weighs at least this, relative to b.
/// - compact kernels: K(a) on its support as a polynomial in a = |u|, terms (coefficient,
///   power), for sums by moments (engine/moment_line.h).
/// - compact kernels: g(a) = -K'(a) / (a K(a)) for 0 <= a < 1, so that dq = g(|u|) u / h and
///   dlog = g(|u|) u^2; weighed radially, K(r) of the Euclidean distance r (Keys::radial),
///   column k's are g(r) u_k / h and g(r) u_k^2.
/// - R(K) = int K^2 and mu2(K) = int u^2 K of K scaled to integrate to 1, for the plug-in rule.
///
/// The engine picks the type once per call (visit_kernel) and runs its loops on it, never
/// asking per key which kernel it has. Adding a kernel means one new type here, its value in
/// `Kernel` and its entry in `AllKernels` (the registry: names, --help and dispatch follow from
/// it), and its tests.

#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

namespace nwreg {

enum class Kernel { gaussian, laplace, epanechnikov, tricube, uniform };

/// How distances in bandwidths add up over the columns: sum of squares, sum, or maximum.
enum class Norm { l2, l1, linf };

namespace kernels {

inline constexpr double log2e = 1.4426950408889634;

/// ((q - x_i)/h)^2 - ((q - x_b)/h)^2 as (x_i - x_b)(x_i + x_b - 2q) / h^2, without
/// cancellation: x_i - x_b is exact for nearby keys, and (x_i - q) + (x_b - q) is only needed
/// to relative accuracy. A factor of 0 (equal keys, or q midway) gives 0 even if the other
/// factor overflowed.
[[gnu::always_inline]] inline double gap(double xi, double xb, double q, double inv_h) {
  const double a = (xi - xb) * inv_h;
  const double c = ((xi - q) + (xb - q)) * inv_h;
  return (a == 0 || c == 0) ? 0.0 : a * c;
}

/// |x_i - q| - |x_b - q|, without cancellation: on the same side of q it is +-(x_i - x_b),
/// exact for nearby keys however far q lies.
[[gnu::always_inline]] inline double l1_gap(double xi, double xb, double q) {
  const double a = xi - q, c = xb - q;
  return (a >= 0) == (c >= 0) ? (a >= 0 ? xi - xb : xb - xi) : std::abs(a) - std::abs(c);
}

struct Gaussian {  // exp(-u^2 / 2)
  static constexpr Kernel id = Kernel::gaussian;
  static constexpr const char* name = "gaussian";
  static constexpr const char* formula = "exp(-u^2/2)";  // for --help
  static constexpr bool compact = false;
  static constexpr bool l1 = false;  // nearest key by the sum of squared scaled distances
  static constexpr Norm norm = Norm::l2;  // how far a key's weight reaches (see bound)
  static constexpr double floor = 0.6065306597126334;
  static constexpr double roughness = 0.28209479177387814, mu2 = 1;  // 1 / (2 sqrt(pi))
  [[gnu::always_inline]] static double term(double xi, double xb, double q, double inv_h) { return -0.5 * log2e * gap(xi, xb, q, inv_h); }
  [[gnu::always_inline]] static double dlog(double xi, double xb, double q, double inv_h) { return gap(xi, xb, q, inv_h); }
  [[gnu::always_inline]] static double dq(double xi, double q, double inv_h) { return (xi - q) * inv_h * inv_h; }
  /// Keys beyond this distance from q weigh below e^-T relative to b (at distance db).
  [[gnu::always_inline]] static double reach(double db, double h, double T) { return std::hypot(db, std::sqrt(2 * T) * h); }
  /// The same in several columns, in the norm's units: keys farther than this weigh below
  /// e^-T relative to b at distance rb.
  static double bound(double rb, double T) { return rb + 2 * T; }
};

struct Laplace {  // exp(-|u|)
  static constexpr Kernel id = Kernel::laplace;
  static constexpr const char* name = "laplace";
  static constexpr const char* formula = "exp(-|u|)";  // for --help
  static constexpr bool compact = false;
  static constexpr bool l1 = true;  // nearest key by the sum of absolute scaled distances
  static constexpr Norm norm = Norm::l1;
  static constexpr double floor = 0.36787944117144233;
  static constexpr double roughness = 0.25, mu2 = 2;  // of e^-|u| / 2
  [[gnu::always_inline]] static double term(double xi, double xb, double q, double inv_h) {
    return -log2e * (l1_gap(xi, xb, q) * inv_h);  // scaled first: the gap may be near DBL_MAX
  }
  [[gnu::always_inline]] static double dlog(double xi, double, double q, double inv_h) { return std::abs(xi - q) * inv_h; }
  [[gnu::always_inline]] static double dq(double xi, double q, double inv_h) { return xi > q ? inv_h : xi < q ? -inv_h : 0.0; }
  [[gnu::always_inline]] static double reach(double db, double h, double T) { return db + T * h; }
  static double bound(double rb, double T) { return rb + T; }
};

struct Epanechnikov {  // 1 - u^2 on |u| < 1
  static constexpr Kernel id = Kernel::epanechnikov;
  static constexpr const char* name = "epanechnikov";
  static constexpr const char* formula = "1-u^2";  // for --help
  static constexpr bool compact = true;
  static constexpr bool l1 = false;
  static constexpr Norm norm = Norm::linf;  // the support: every |u_k| <= 1
  static constexpr double floor = 0;
  static constexpr double roughness = 0.6, mu2 = 0.2;  // of 3/4 (1 - u^2)
  [[gnu::always_inline]] static double value(double u) {
    const double a = std::abs(u);
    return a < 1 ? 1 - a * a : 0.0;
  }
  [[gnu::always_inline]] static double dlog(double xi, double, double q, double inv_h) {
    const double a = std::abs(xi - q) * inv_h;
    return a < 1 ? 2 * a * a / (1 - a * a) : 0.0;
  }
  [[gnu::always_inline]] static double dq(double xi, double q, double inv_h) {
    const double u = (xi - q) * inv_h;
    return std::abs(u) < 1 ? 2 * u * inv_h / (1 - u * u) : 0.0;
  }
  [[gnu::always_inline]] static double g(double a) { return a < 1 ? 2 / (1 - a * a) : 0.0; }
  static constexpr std::pair<double, int> poly[] = {{1, 0}, {-1, 2}};
};

struct Tricube {  // (1 - |u|^3)^3 on |u| < 1
  static constexpr Kernel id = Kernel::tricube;
  static constexpr const char* name = "tricube";
  static constexpr const char* formula = "(1-|u|^3)^3";  // for --help
  static constexpr bool compact = true;
  static constexpr bool l1 = false;
  static constexpr Norm norm = Norm::linf;  // the support: every |u_k| <= 1
  static constexpr double floor = 0;
  static constexpr double roughness = 175.0 / 247, mu2 = 35.0 / 243;  // of 70/81 (1 - |u|^3)^3
  [[gnu::always_inline]] static double value(double u) {
    const double a = std::abs(u);
    const double t = 1 - a * a * a;
    return a < 1 ? t * t * t : 0.0;
  }
  [[gnu::always_inline]] static double dlog(double xi, double, double q, double inv_h) {
    const double a = std::abs(xi - q) * inv_h;
    return a < 1 ? 9 * a * a * a / (1 - a * a * a) : 0.0;
  }
  [[gnu::always_inline]] static double dq(double xi, double q, double inv_h) {
    const double u = (xi - q) * inv_h, a = std::abs(u);
    return a < 1 ? 9 * u * a * inv_h / (1 - a * a * a) : 0.0;
  }
  [[gnu::always_inline]] static double g(double a) { return a < 1 ? 9 * a / (1 - a * a * a) : 0.0; }
  static constexpr std::pair<double, int> poly[] = {{1, 0}, {-3, 3}, {3, 6}, {-1, 9}};
};

struct Uniform {  // 1 on |u| <= 1
  static constexpr Kernel id = Kernel::uniform;
  static constexpr const char* name = "uniform";
  static constexpr const char* formula = "";  // for --help
  static constexpr bool compact = true;
  static constexpr bool l1 = false;
  static constexpr Norm norm = Norm::linf;  // the support: every |u_k| <= 1
  static constexpr double floor = 0;
  static constexpr double roughness = 0.5, mu2 = 1.0 / 3;  // of 1/2 on [-1, 1]
  [[gnu::always_inline]] static double value(double u) { return std::abs(u) <= 1 ? 1.0 : 0.0; }
  [[gnu::always_inline]] static double dlog(double, double, double, double) { return 0; }  // flat inside its support
  [[gnu::always_inline]] static double dq(double, double, double) { return 0; }
  [[gnu::always_inline]] static double g(double) { return 0; }
  static constexpr std::pair<double, int> poly[] = {{1, 0}};
};

/// The nearest-key distance (sum of squares, or of absolute values for L1 kernels) whose weight
/// is 2^-1 relative to distance 0: a log2 weight (a categorical column's cost, an adaptive key's
/// normalisation) counts as this much distance per unit.
template <class K>
inline constexpr double distance_per_log2 = (K::l1 ? 1.0 : 2.0) / log2e;

}  // namespace kernels

/// The kernel registry: every kernel type, in the order --help lists them.
using AllKernels = std::tuple<kernels::Gaussian, kernels::Laplace, kernels::Epanechnikov, kernels::Tricube, kernels::Uniform>;

/// Calls f(K{}) with the type of `kernel`: the one place a Kernel value becomes a type.
template <std::size_t I = 0, class F>
[[gnu::always_inline]] inline decltype(auto) visit_kernel(Kernel kernel, F&& f) {
  using K = std::tuple_element_t<I, AllKernels>;
  if constexpr (I + 1 == std::tuple_size_v<AllKernels>) {
    return std::forward<F>(f)(K{});  // the last: every other kernel was tried before
  } else {
    if (kernel == K::id) return std::forward<F>(f)(K{});
    return visit_kernel<I + 1>(kernel, std::forward<F>(f));
  }
}

/// Calls f(K{}) for each kernel type, in registry order.
template <class F>
inline void for_each_kernel(F&& f) {
  std::apply([&](auto... k) { (f(k), ...); }, AllKernels{});
}

std::string to_string(Kernel kernel);
/// Throws UsageError naming --kernel for an unknown name.
Kernel parse_kernel(const std::string& name);
/// Whether K(u) = 0 for large |u| (Epanechnikov, tricube, uniform).
bool is_compact(Kernel kernel);
/// Every kernel's name and formula, as --kernel's help lists them ("gaussian exp(-u^2/2), ...").
std::string kernel_help();

}  // namespace nwreg
