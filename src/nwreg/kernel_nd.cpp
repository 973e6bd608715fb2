#include "nwreg/kernel_nd.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nwreg/simd.h"

namespace nwreg::kernel {
namespace {

// sum over i in [0, n) of f(i), in `lanes` partial sums added in a fixed order.
template <class F>
[[gnu::always_inline]] inline double lane_sum(std::size_t n, const F& f) {
  double acc[lanes] = {};
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes)
    for (int l = 0; l < lanes; ++l) acc[l] += f(i + l);
  double s = 0;
  for (int l = 0; l < lanes; ++l) s += acc[l];
  for (; i < n; ++i) s += f(i);
  return s;
}

template <class K>
[[gnu::always_inline]] inline double fill_impl(const Keys& keys, std::size_t lo, std::size_t hi, const double* q,
                                               const double* xb, const double* inv_h, double* e) {
  const std::size_t n = hi - lo;
  double* out = e + lo;
  const double* w = keys.w ? keys.w + lo : nullptr;
  if constexpr (K::compact) {
    if (w)
      std::copy_n(w, n, out);
    else
      std::fill_n(out, n, 1.0);
    for (std::size_t k = 0; k < keys.d; ++k) {
      const double* x = keys.column(k) + lo;
      const double qk = q[k], ih = inv_h[k];
      for (std::size_t i = 0; i < n; ++i) out[i] *= K::value((x[i] - qk) * ih);
    }
  } else {
    std::fill_n(out, n, 0.0);
    for (std::size_t k = 0; k < keys.d; ++k) {
      const double* x = keys.column(k) + lo;
      const double qk = q[k], bk = xb[k], ih = inv_h[k];
      for (std::size_t i = 0; i < n; ++i) out[i] += K::term(x[i], bk, qk, ih);
    }
    for (std::size_t i = 0; i < n; ++i) out[i] = exp2_inline(std::min(out[i], 1020.0));
    if (w)
      for (std::size_t i = 0; i < n; ++i) out[i] *= w[i];
  }
  return lane_sum(n, [&](std::size_t i) NWREG_INLINE { return out[i]; });
}

template <class K>
[[gnu::always_inline]] inline void distances(const Keys& keys, std::size_t lo, std::size_t hi, const double* q,
                                             const double* inv_h, double* r) {
  const std::size_t n = hi - lo;
  double* out = r + lo;
  std::fill_n(out, n, 0.0);
  for (std::size_t k = 0; k < keys.d; ++k) {
    const double* x = keys.column(k) + lo;
    const double qk = q[k], ih = inv_h[k];
    for (std::size_t i = 0; i < n; ++i) {
      const double z = (x[i] - qk) * ih;
      out[i] += K::l1 ? std::abs(z) : z * z;
    }
  }
}

// The factor (v_i - shift) * scale, or 1.
template <bool Has>
[[gnu::always_inline]] inline double at(const Factor& f, std::size_t i) {
  if constexpr (Has)
    return (f.v[i] - f.shift) * f.scale;
  else
    return 1.0;
}

// sum over i in [lo, hi) with e_i != 0 of e_i g_i a_i b_i, g_i = 1 or the kernel's dlog.
template <bool A, bool B, class G>
[[gnu::always_inline]] inline double dot_impl(std::size_t lo, std::size_t hi, const double* e, const Factor& a,
                                              const Factor& b, const G& g) {
  return lane_sum(hi - lo, [&](std::size_t j) NWREG_INLINE {
    const std::size_t i = lo + j;
    return e[i] != 0 ? e[i] * g(i) * at<A>(a, i) * at<B>(b, i) : 0.0;
  });
}

template <class G>
[[gnu::always_inline]] inline double dot_any(std::size_t lo, std::size_t hi, const double* e, Factor a, Factor b,
                                             const G& g) {
  if (!a.v) std::swap(a, b);
  if (!a.v) return dot_impl<false, false>(lo, hi, e, a, b, g);
  if (!b.v) return dot_impl<true, false>(lo, hi, e, a, b, g);
  return dot_impl<true, true>(lo, hi, e, a, b, g);
}

}  // namespace

NWREG_CLONES
double fill(Kernel kernel, const Keys& keys, std::size_t lo, std::size_t hi, const double* q, const double* xb,
            const double* inv_h, double* e) {
  return visit_kernel(kernel, [&]<class K>(K) NWREG_INLINE { return fill_impl<K>(keys, lo, hi, q, xb, inv_h, e); });
}

NWREG_CLONES
std::size_t nearest(Kernel kernel, const Keys& keys, std::size_t lo, std::size_t hi, std::size_t skip,
                    const double* q, const double* inv_h, double* r, double& rmin) {
  visit_kernel(kernel, [&]<class K>(K) NWREG_INLINE { distances<K>(keys, lo, hi, q, inv_h, r); });
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (skip >= lo && skip < hi) r[skip] = inf;
  double m[lanes];
  std::fill_n(m, lanes, inf);
  std::size_t i = lo;
  for (; i + lanes <= hi; i += lanes)
    for (int l = 0; l < lanes; ++l) m[l] = std::min(m[l], r[i + l]);
  rmin = inf;
  for (int l = 0; l < lanes; ++l) rmin = std::min(rmin, m[l]);
  for (; i < hi; ++i) rmin = std::min(rmin, r[i]);
  for (i = lo; i < hi; ++i)
    if (r[i] == rmin && i != skip) return i;
  return lo == skip ? lo + 1 : lo;  // every distance NaN: not reached for finite keys
}

NWREG_CLONES
double dot(std::size_t lo, std::size_t hi, const double* e, Factor a, Factor b) {
  return dot_any(lo, hi, e, a, b, [](std::size_t) NWREG_INLINE { return 1.0; });
}

NWREG_CLONES
double dlog_dot(Kernel kernel, const double* xk, std::size_t lo, std::size_t hi, double qk, double xbk, double inv_hk,
                const double* e, Factor a, Factor b) {
  return visit_kernel(kernel, [&]<class K>(K) NWREG_INLINE {
    return dot_any(lo, hi, e, a, b, [&](std::size_t i) NWREG_INLINE { return K::dlog(xk[i], xbk, qk, inv_hk); });
  });
}

NWREG_CLONES
void linear(const Keys& keys, std::size_t lo, std::size_t hi, const double* q, const double* inv_h, const double* c,
            double* out) {
  std::fill(out + lo, out + hi, c[0]);
  for (std::size_t k = 0; k < keys.d; ++k) {
    const double* x = keys.column(k);
    const double qk = q[k], ck = c[k + 1] * inv_h[k];
    for (std::size_t i = lo; i < hi; ++i) out[i] += ck * (x[i] - qk);
  }
}

}  // namespace nwreg::kernel
