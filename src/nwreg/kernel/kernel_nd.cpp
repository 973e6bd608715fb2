#include "nwreg/kernel/kernel_nd.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "nwreg/base/simd.h"

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

// 2^min(u, 1020), taking u by value: std::min(out[i], 1020.0) returns a reference into the
// array or to the constant, which kept GCC from vectorising the loops over keys ("complicated
// access pattern"), and they ran the polynomial a key at a time. The same value, NaN included.
[[gnu::always_inline]] inline double exp2_capped(double u) { return exp2_inline(1020.0 < u ? 1020.0 : u); }

// Key i's Euclidean distance from q in bandwidths over the continuous columns (Keys::radial).
inline double radial_distance(const Keys& keys, std::size_t i, const double* q, const double* inv_h) {
  double r2 = 0;
  for (std::size_t k = 0; k < keys.d; ++k) {
    if (keys.category(k)) continue;
    const double u = (keys.column(k)[i] - q[k]) * inv_h[k];
    r2 += u * u;
  }
  return std::sqrt(r2);
}

// The Gaussian's term per column as kernel1d computes it, (x - x_b)((x - q) + D) K2 with
// D = x_b - q and K2 = -log2(e) / (2 h^2): no guards, valid when no inf can meet a 0 or
// another column's -inf (keys and q within 4e153, so that each product is finite; K2 a normal
// number). Up to 8 columns.
struct FastGaussian {
  bool on = false;
  double D[8], K2[8];
  FastGaussian(const Keys& keys, const double* q, const double* xb, const double* inv_h) {
    if (!keys.moderate || keys.d > 8) return;
    for (std::size_t k = 0; k < keys.d; ++k) {
      if (keys.category(k)) continue;
      D[k] = xb[k] - q[k];
      K2[k] = -0.5 * kernels::log2e * inv_h[k] * inv_h[k];
      if (!(std::abs(q[k]) <= 4e153) || !std::isnormal(K2[k])) return;  // no inf * 0, no inf - inf
    }
    on = true;
  }
};

// The weights of keys [a, a + m) into out[0..m).
template <class K>
[[gnu::always_inline]] inline void block_weights(const Keys& keys, std::size_t a, std::size_t m, const double* q,
                                                 const double* xb, const double* inv_h, const FastGaussian& fast,
                                                 double* out, double ref) {
  const double* w = keys.w ? keys.w + a : nullptr;
  if (keys.inv_s) {  // adaptive: each key its own bandwidths and normalisation
    const double* is = keys.inv_s + a;
    const double* ln = keys.lognorm + a;
    if constexpr (K::compact) {
      for (std::size_t i = 0; i < m; ++i) out[i] = (w ? w[i] : 1.0) * std::exp2(ln[i]);
    } else {
      for (std::size_t i = 0; i < m; ++i) out[i] = ln[i] - ref;
    }
    for (std::size_t k = 0; k < keys.d; ++k) {
      const double* x = keys.column(k) + a;
      const double qk = q[k], ih = inv_h[k];
      const Category* c = keys.category(k);
      for (std::size_t i = 0; i < m; ++i) {
        if constexpr (K::compact)
          out[i] *= c ? std::exp2(-c->cost(x[i] - qk)) : K::value((x[i] - qk) * ih * is[i]);
        else
          out[i] += c ? -c->cost(x[i] - qk) : K::term(x[i], qk, qk, ih * is[i]);
      }
    }
    if constexpr (!K::compact) {
      for (std::size_t i = 0; i < m; ++i) out[i] = exp2_capped(out[i]);
      if (w)
        for (std::size_t i = 0; i < m; ++i) out[i] *= w[i];
    }
    return;
  }
  if constexpr (K::compact) {
    if (w)
      std::copy_n(w, m, out);
    else
      std::fill_n(out, m, 1.0);
    if (keys.radial) {
      double r2[block];
      std::fill_n(r2, m, 0.0);
      for (std::size_t k = 0; k < keys.d; ++k) {
        const double* x = keys.column(k) + a;
        const double qk = q[k], ih = inv_h[k];
        if (const Category* c = keys.category(k)) {
          for (std::size_t i = 0; i < m; ++i) out[i] *= std::exp2(-c->cost(x[i] - qk));
          continue;
        }
        for (std::size_t i = 0; i < m; ++i) {
          const double u = (x[i] - qk) * ih;
          r2[i] += u * u;
        }
      }
      for (std::size_t i = 0; i < m; ++i) out[i] *= K::value(std::sqrt(r2[i]));
      return;
    }
    for (std::size_t k = 0; k < keys.d; ++k) {
      const double* x = keys.column(k) + a;
      const double qk = q[k], ih = inv_h[k];
      if (const Category* c = keys.category(k))
        for (std::size_t i = 0; i < m; ++i) out[i] *= std::exp2(-c->cost(x[i] - qk));
      else
        for (std::size_t i = 0; i < m; ++i) out[i] *= K::value((x[i] - qk) * ih);
    }
  } else {
    std::fill_n(out, m, 0.0);
    for (std::size_t k = 0; k < keys.d; ++k) {
      const double* x = keys.column(k) + a;
      const double qk = q[k], bk = xb[k], ih = inv_h[k];
      if (const Category* c = keys.category(k)) {
        const double cb = c->cost(bk - qk);  // b is nearest counting this cost: no exponent > 0
        for (std::size_t i = 0; i < m; ++i) out[i] += cb - c->cost(x[i] - qk);
      } else if (std::is_same_v<K, kernels::Gaussian> && fast.on) {
        const double D = fast.D[k], K2 = fast.K2[k];
        for (std::size_t i = 0; i < m; ++i) out[i] += (x[i] - bk) * ((x[i] - qk) + D) * K2;
      } else {
        for (std::size_t i = 0; i < m; ++i) out[i] += K::term(x[i], bk, qk, ih);
      }
    }
    for (std::size_t i = 0; i < m; ++i) out[i] = exp2_capped(out[i]);
    if (w)
      for (std::size_t i = 0; i < m; ++i) out[i] *= w[i];
  }
}

// NW's sweep in one pass over the keys for an exponential kernel over D continuous columns (no
// category, no adaptive per-key scale): each key's weight, and its terms of s1 and the
// gradient, made in registers as it is weighed, not read back from e. The same terms, summed
// in the same lanes and order as block_weights and the separate sums of fill_impl.
template <class K, bool Grad, int D, bool W>
[[gnu::always_inline]] inline double fused_nw(const Keys& keys, std::size_t lo, std::size_t hi, const double* q,
                                              const double* xb, const double* inv_h, const FastGaussian& fast,
                                              double* e, const Targets& sums) {
  const double* x[D];
  double qk[D], bk[D], ih[D], Dk[D], K2[D];
  for (int k = 0; k < D; ++k) {
    x[k] = keys.column(k);
    qk[k] = q[k], bk[k] = xb[k], ih[k] = inv_h[k];
    if constexpr (std::is_same_v<K, kernels::Gaussian>) Dk[k] = fast.D[k], K2[k] = fast.K2[k];
  }
  const double* w = keys.w;
  const double* y = sums.y;
  const double yb = sums.yb;
  double s0 = 0, s1 = 0;
  // Key i's weight (returned), and its gradient terms into g[k].
  auto key = [&](std::size_t i, double* g) NWREG_INLINE {
    double t = 0;
    for (int k = 0; k < D; ++k) {
      if constexpr (std::is_same_v<K, kernels::Gaussian>)
        t += (x[k][i] - bk[k]) * ((x[k][i] - qk[k]) + Dk[k]) * K2[k];
      else
        t += K::term(x[k][i], bk[k], qk[k], ih[k]);
    }
    double v = exp2_capped(t);
    if constexpr (W) v *= w[i];  // (a run-time test here would mask the load: slow where w is null)
    if constexpr (Grad)
      for (int k = 0; k < D; ++k) g[k] = v != 0 ? v * K::dlog(x[k][i], bk[k], qk[k], ih[k]) : 0.0;
    return v;
  };
  for (std::size_t a = lo; a < hi; a += block) {
    const std::size_t m = std::min(block, hi - a);
    double a0[lanes] = {}, a1[lanes] = {}, at[Grad ? D : 1][lanes] = {}, av[Grad ? D : 1][lanes] = {};
    std::size_t j = 0;
    // (The weights go to e in a loop of their own: stored as they are made, they could alias
    // the columns read, and GCC checked at run time, every eight keys, that they did not.)
    for (; j + lanes <= m; j += lanes) {
      double vs[lanes];
      for (int l = 0; l < lanes; ++l) {
        const std::size_t i = a + j + l;
        double g[D];
        const double v = key(i, g);
        const double dy = y[i] - yb;
        vs[l] = v;
        a0[l] += v;
        a1[l] += v * dy;
        if constexpr (Grad)
          for (int k = 0; k < D; ++k) at[k][l] += g[k], av[k][l] += g[k] * dy;
      }
      for (int l = 0; l < lanes; ++l) e[a + j + l] = vs[l];
    }
    double b0 = 0, b1 = 0, bt[D] = {}, bv[D] = {};
    for (int l = 0; l < lanes; ++l) {
      b0 += a0[l], b1 += a1[l];
      if constexpr (Grad)
        for (int k = 0; k < D; ++k) bt[k] += at[k][l], bv[k] += av[k][l];
    }
    for (; j < m; ++j) {
      const std::size_t i = a + j;
      double g[D];
      const double v = key(i, g);
      e[i] = v;
      const double dy = y[i] - yb;
      b0 += v, b1 += v * dy;
      if constexpr (Grad)
        for (int k = 0; k < D; ++k) bt[k] += g[k], bv[k] += g[k] * dy;
    }
    s0 += b0, s1 += b1;
    if constexpr (Grad)
      for (int k = 0; k < D; ++k) sums.t[k] += bt[k], sums.v[k] += bv[k];
  }
  *sums.s1 += s1;
  return s0;
}

// fused_nw where it applies (D a compile-time count of 2 to 5); false where it does not.
template <class K, bool Grad>
[[gnu::always_inline]] inline bool try_fused(const Keys& keys, std::size_t lo, std::size_t hi, const double* q,
                                            const double* xb, const double* inv_h, const FastGaussian& fast,
                                            double* e, const Targets& sums, double& s0) {
  if constexpr (K::compact) return false;
  if (keys.inv_s || keys.cat) return false;
  if (std::is_same_v<K, kernels::Gaussian> && !fast.on) return false;
  auto run = [&]<int D>(std::integral_constant<int, D>) NWREG_INLINE {
    s0 = keys.w ? fused_nw<K, Grad, D, true>(keys, lo, hi, q, xb, inv_h, fast, e, sums)
                : fused_nw<K, Grad, D, false>(keys, lo, hi, q, xb, inv_h, fast, e, sums);
    return true;
  };
  switch (keys.d) {
    case 2: return run(std::integral_constant<int, 2>{});
    case 3: return run(std::integral_constant<int, 3>{});
    case 4: return run(std::integral_constant<int, 4>{});
    case 5: return run(std::integral_constant<int, 5>{});
    default: return false;
  }
}

template <class K, bool HasY, bool Grad, bool Moments>
[[gnu::always_inline]] inline double fill_impl(const Keys& keys, std::size_t lo, std::size_t hi, const double* q,
                                               const double* xb, const double* inv_h, double* e, const Targets& sums) {
  double s0 = 0, s1 = 0;
  const FastGaussian fast(keys, q, xb, inv_h);
  if constexpr (HasY && !Moments && (std::is_same_v<K, kernels::Gaussian> || std::is_same_v<K, kernels::Laplace>))
    if (try_fused<K, Grad>(keys, lo, hi, q, xb, inv_h, fast, e, sums, s0)) return s0;
  for (std::size_t a = lo; a < hi; a += block) {
    const std::size_t m = std::min(block, hi - a);
    double* out = e + a;
    block_weights<K>(keys, a, m, q, xb, inv_h, fast, out, sums.ref);
    s0 += lane_sum(m, [&](std::size_t i) NWREG_INLINE { return out[i]; });
    if constexpr (HasY) {
      const double* y = sums.y + a;
      const double yb = sums.yb;
      s1 += lane_sum(m, [&](std::size_t i) NWREG_INLINE { return out[i] * (y[i] - yb); });
      if constexpr (Grad) {
        double gr[block];  // radial: each key's g(r) (kernels.h)
        if constexpr (K::compact)
          if (keys.radial)
            for (std::size_t i = 0; i < m; ++i) gr[i] = K::g(radial_distance(keys, a + i, q, inv_h));
        for (std::size_t k = 0; k < keys.d; ++k) {
          double g[block];
          const double* x = keys.column(k) + a;
          const double qk = q[k], bk = xb[k], ih = inv_h[k];
          if (const Category* c = keys.category(k))
            for (std::size_t i = 0; i < m; ++i) g[i] = out[i] != 0 ? out[i] * c->gain * c->steps(x[i] - qk) : 0.0;
          else if (K::compact && keys.radial)
            for (std::size_t i = 0; i < m; ++i) {
              const double u = (x[i] - qk) * ih;
              g[i] = out[i] != 0 ? out[i] * gr[i] * u * u : 0.0;
            }
          else
            for (std::size_t i = 0; i < m; ++i) g[i] = out[i] != 0 ? out[i] * K::dlog(x[i], bk, qk, ih) : 0.0;
          sums.t[k] += lane_sum(m, [&](std::size_t i) NWREG_INLINE { return g[i]; });
          sums.v[k] += lane_sum(m, [&](std::size_t i) NWREG_INLINE { return g[i] * (y[i] - yb); });
        }
      }
      if constexpr (Moments) {
        // z rows: 1, then (x_k - q_k) / h_k, set to 0 where e = 0 (where z may overflow: no
        // inf * 0 in the sums, which then need no guards); S_cr += sum e z_c z_r,
        // tz_c += sum e z_c (y - yb).
        const std::size_t p = keys.p();
        std::fill_n(sums.z, m, 1.0);
        for (std::size_t k = 0; k < keys.d; ++k) {
          const double* x = keys.column(k) + a;
          double* z = sums.z + (k + 1) * block;
          const double qk = q[k], ih = keys.z_scale(k, inv_h);
          if (ih == 0)  // a categorical column out of the polynomial
            std::fill_n(z, m, 0.0);
          else
            for (std::size_t i = 0; i < m; ++i) z[i] = out[i] != 0 ? (x[i] - qk) * ih : 0.0;
        }
        for (std::size_t r = keys.d + 1; r < p; ++r) {  // higher monomials
          const double* a = sums.z + keys.design->parent[r] * block;
          const double* b = sums.z + (keys.design->col[r] + 1) * block;
          double* z = sums.z + r * block;
          for (std::size_t i = 0; i < m; ++i) z[i] = a[i] * b[i];
        }
        // (e z_c made once a column: the products (e z_c) z_r, rounded as e * z_c * z_r is.)
        double dy[block], ez[block];
        for (std::size_t i = 0; i < m; ++i) dy[i] = y[i] - yb;
        for (std::size_t c = 0; c < p; ++c) {
          const double* zc = sums.z + c * block;
          for (std::size_t i = 0; i < m; ++i) ez[i] = out[i] * zc[i];
          sums.tz[c] += lane_sum(m, [&](std::size_t i) NWREG_INLINE { return ez[i] * dy[i]; });
          for (std::size_t r = 0; r <= c; ++r) {
            const double* zr = sums.z + r * block;
            sums.S[c * p + r] += lane_sum(m, [&](std::size_t i) NWREG_INLINE { return ez[i] * zr[i]; });
          }
        }
      }
    }
  }
  if constexpr (HasY) *sums.s1 += s1;
  return s0;
}

template <class K>
[[gnu::always_inline]] inline std::size_t nearest_impl(const Keys& keys, std::size_t lo, std::size_t hi,
                                                       std::size_t skip, const double* q, const double* inv_h,
                                                       double& rmin, bool weighed) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  rmin = inf;
  std::size_t best = lo == skip ? lo + 1 : lo;  // when every distance is +inf
  for (std::size_t a = lo; a < hi; a += block) {
    const std::size_t m = std::min(block, hi - a);
    double r[block];
    std::fill_n(r, m, 0.0);
    for (std::size_t k = 0; k < keys.d; ++k) {
      const double* x = keys.column(k) + a;
      const double qk = q[k], ih = inv_h[k];
      if (const Category* c = keys.category(k)) {
        for (std::size_t i = 0; i < m; ++i) r[i] += kernels::distance_per_log2<K> * c->cost(x[i] - qk);
        continue;
      }
      if (keys.inv_s) {  // adaptive: each key's own scale
        const double* is = keys.inv_s + a;
        for (std::size_t i = 0; i < m; ++i) {
          const double z = (x[i] - qk) * ih * is[i];
          r[i] += K::l1 ? std::abs(z) : z * z;
        }
        continue;
      }
      for (std::size_t i = 0; i < m; ++i) {
        const double z = (x[i] - qk) * ih;
        r[i] += K::l1 ? std::abs(z) : z * z;
      }
    }
    if (keys.inv_s && !K::compact)  // and its normalisation, as a distance of equal weight
      for (std::size_t i = 0; i < m; ++i) r[i] -= kernels::distance_per_log2<K> * keys.lognorm[a + i];
    if (skip >= a && skip < a + m) r[skip - a] = inf;
    if (weighed && keys.w)
      for (std::size_t i = 0; i < m; ++i) r[i] = keys.w[a + i] > 0 ? r[i] : inf;
    double mins[lanes];
    std::fill_n(mins, lanes, inf);
    std::size_t i = 0;
    for (; i + lanes <= m; i += lanes)
      for (int l = 0; l < lanes; ++l) mins[l] = std::min(mins[l], r[i + l]);
    double low = inf;
    for (int l = 0; l < lanes; ++l) low = std::min(low, mins[l]);
    for (; i < m; ++i) low = std::min(low, r[i]);
    if (low < rmin) {  // strictly: the first of equal keys stays
      rmin = low;
      best = a + static_cast<std::size_t>(std::find(r, r + m, low) - r);
    }
  }
  return best;
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
// The term is made for every key and then selected, not made only where e_i != 0: GCC 12's
// x86-64-v3 clone (AVX2) of the conditional form, loop-vectorised at -O3, summed wrongly (20-60%
// off on an AVX2 host, every kernel; right at -O2 and in the v4 and baseline clones). (The
// compiler may still load conditionally in the loop over the keys past the last whole lanes.)
// Tested against a loop over the keys, every count of leftover keys, in test_engine.cpp. The
// same bits where e_i != 0; an inf or NaN term where e_i = 0 is dropped as before.
template <bool A, bool B, class G>
[[gnu::always_inline]] inline double dot_impl(std::size_t lo, std::size_t hi, const double* e, const Factor& a,
                                              const Factor& b, const G& g) {
  return lane_sum(hi - lo, [&](std::size_t j) NWREG_INLINE {
    const std::size_t i = lo + j;
    const double term = e[i] * g(i) * at<A>(a, i) * at<B>(b, i);
    return e[i] != 0 ? term : 0.0;
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
            const double* inv_h, double* e, const Targets& sums) {
  return visit_kernel(kernel, [&]<class K>(K) NWREG_INLINE {
    if (!sums.y) return fill_impl<K, false, false, false>(keys, lo, hi, q, xb, inv_h, e, sums);
    if (sums.S) return fill_impl<K, true, false, true>(keys, lo, hi, q, xb, inv_h, e, sums);
    if (!sums.t) return fill_impl<K, true, false, false>(keys, lo, hi, q, xb, inv_h, e, sums);
    return fill_impl<K, true, true, false>(keys, lo, hi, q, xb, inv_h, e, sums);
  });
}

NWREG_CLONES
std::size_t nearest(Kernel kernel, const Keys& keys, std::size_t lo, std::size_t hi, std::size_t skip,
                    const double* q, const double* inv_h, double& rmin, bool weighed) {
  return visit_kernel(kernel, [&]<class K>(K) NWREG_INLINE {
    return nearest_impl<K>(keys, lo, hi, skip, q, inv_h, rmin, weighed);
  });
}

NWREG_CLONES
double dot(std::size_t lo, std::size_t hi, const double* e, Factor a, Factor b) {
  return dot_any(lo, hi, e, a, b, [](std::size_t) NWREG_INLINE { return 1.0; });
}

NWREG_CLONES
double dlog_dot(Kernel kernel, const Keys& keys, std::size_t k, std::size_t lo, std::size_t hi, const double* q,
                const double* xb, const double* inv_h, const double* e, Factor a, Factor b) {
  const double* xk = keys.column(k);
  const double qk = q[k], xbk = xb[k], inv_hk = inv_h[k];
  if (const Category* c = keys.category(k))
    return dot_any(lo, hi, e, a, b, [&](std::size_t i) NWREG_INLINE { return c->gain * c->steps(xk[i] - qk); });
  return visit_kernel(kernel, [&]<class K>(K) NWREG_INLINE {
    if constexpr (K::compact)
      if (keys.radial)
        return dot_any(lo, hi, e, a, b, [&](std::size_t i) NWREG_INLINE {
          const double u = (xk[i] - qk) * inv_hk;
          return K::g(radial_distance(keys, i, q, inv_h)) * u * u;
        });
    return dot_any(lo, hi, e, a, b, [&](std::size_t i) NWREG_INLINE { return K::dlog(xk[i], xbk, qk, inv_hk); });
  });
}

double dlog(Kernel kernel, const Keys& keys, std::size_t k, std::size_t i, const double* q, const double* xb,
            const double* inv_h) {
  const double xi = keys.column(k)[i];
  if (const Category* c = keys.category(k)) return c->gain * c->steps(xi - q[k]);
  return visit_kernel(kernel, [&]<class K>(K) {
    if constexpr (K::compact)
      if (keys.radial) {
        const double u = (xi - q[k]) * inv_h[k];
        return K::g(radial_distance(keys, i, q, inv_h)) * u * u;
      }
    return K::dlog(xi, xb[k], q[k], inv_h[k]);
  });
}

NWREG_CLONES
void slope_weights(Kernel kernel, const Keys& keys, std::size_t k, std::size_t lo, std::size_t hi, const double* q,
                   const double* inv_h, const double* e, double* out) {
  const double* x = keys.column(k);
  const double qk = q[k], ih = inv_h[k];
  visit_kernel(kernel, [&]<class K>(K) NWREG_INLINE {
    if constexpr (K::compact)
      if (keys.radial) {
        for (std::size_t i = lo; i < hi; ++i) {
          const double u = (x[i] - qk) * ih;
          out[i] = e[i] != 0 ? e[i] * K::g(radial_distance(keys, i, q, inv_h)) * u * ih : 0.0;
        }
        return;
      }
    if (keys.inv_s)
      for (std::size_t i = lo; i < hi; ++i) out[i] = e[i] != 0 ? e[i] * K::dq(x[i], qk, ih * keys.inv_s[i]) : 0.0;
    else
      for (std::size_t i = lo; i < hi; ++i) out[i] = e[i] != 0 ? e[i] * K::dq(x[i], qk, ih) : 0.0;
  });
}

double log2_weight(Kernel kernel, const Keys& keys, std::size_t i, const double* q, const double* inv_h) {
  return visit_kernel(kernel, [&]<class K>(K) {
    double t = keys.lognorm ? keys.lognorm[i] : 0.0;
    for (std::size_t k = 0; k < keys.d; ++k) {
      const double x = keys.column(k)[i];
      if (const Category* c = keys.category(k)) t -= c->cost(x - q[k]);
      else if constexpr (!K::compact) t += K::term(x, q[k], q[k], inv_h[k] * (keys.inv_s ? keys.inv_s[i] : 1.0));
    }
    return t;
  });
}

NWREG_CLONES
void linear(const Keys& keys, std::size_t lo, std::size_t hi, const double* q, const double* inv_h, const double* c,
            double* out) {
  std::fill(out + lo, out + hi, c[0]);
  for (std::size_t k = 0; k < keys.d; ++k) {
    const double* x = keys.column(k);
    const double qk = q[k], ck = c[k + 1] * keys.z_scale(k, inv_h);
    if (ck == 0) continue;
    for (std::size_t i = lo; i < hi; ++i) out[i] += ck * (x[i] - qk);
  }
  const std::size_t p = keys.p();
  if (p == keys.d + 1) return;
  // Higher monomials, in chunks of keys so that the loops over keys vectorise: each design row
  // from its parent (rows come after their parents), each key's sum over them in row order.
  constexpr std::size_t chunk = 64;
  thread_local std::vector<double> rows;  // p rows of chunk values
  rows.resize(p * chunk);
  double* z = rows.data();
  std::fill_n(z, chunk, 1.0);
  for (std::size_t a = lo; a < hi; a += chunk) {
    const std::size_t m = std::min(chunk, hi - a);
    for (std::size_t k = 0; k < keys.d; ++k) {
      const double* x = keys.column(k) + a;
      const double qk = q[k], zk = keys.z_scale(k, inv_h);
      double* row = z + (k + 1) * chunk;
      for (std::size_t i = 0; i < m; ++i) row[i] = (x[i] - qk) * zk;
    }
    double v[chunk] = {};
    for (std::size_t r = keys.d + 1; r < p; ++r) {
      const double* parent = z + keys.design->parent[r] * chunk;
      const double* col = z + (keys.design->col[r] + 1) * chunk;
      double* row = z + r * chunk;
      const double cr = c[r];
      for (std::size_t i = 0; i < m; ++i) {
        row[i] = parent[i] * col[i];
        v[i] += cr * row[i];
      }
    }
    for (std::size_t i = 0; i < m; ++i) out[a + i] += v[i];
  }
}

Design make_design(std::size_t d, std::size_t degree) {
  Design g;
  std::vector<std::uint32_t> last;  // each row's largest column (monomials in nondecreasing column order)
  g.parent.push_back(0), g.col.push_back(0), last.push_back(0);
  std::size_t from = 0, to = 1;  // the rows of the previous degree
  for (std::size_t deg = 1; deg <= degree; ++deg) {
    for (std::size_t r = from; r < to; ++r)
      for (std::size_t k = deg == 1 ? 0 : last[r]; k < d; ++k) {
        g.parent.push_back(static_cast<std::uint32_t>(r));
        g.col.push_back(static_cast<std::uint32_t>(k));
        last.push_back(static_cast<std::uint32_t>(k));
      }
    from = to;
    to = g.parent.size();
  }
  g.p = g.parent.size();
  return g;
}

}  // namespace nwreg::kernel
