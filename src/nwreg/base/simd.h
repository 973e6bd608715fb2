#pragma once
// Internal to the vectorised kernels (kernel1d.cpp, kernel_nd.cpp, gauss_transform.cpp): the
// exp2 they share and the attribute that compiles a function for several instruction sets.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

// Built with -fno-trapping-math (see src/CMakeLists.txt): it changes no result, and lets the
// compiler turn the clamp into a vector max on AVX2. Each function so marked is compiled for
// x86-64-v4, v3 and baseline and picks one at run time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NWREG_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NWREG_CLONES
#endif
// For lambdas inside a clone: inlined, so that they are compiled for the clone's instruction set.
#define NWREG_INLINE __attribute__((always_inline))

namespace nwreg::kernel {

/// Sums run in this many lanes, added up in the same order on every instruction set.
inline constexpr int lanes = 8;

// 2^u: u = k + w with k an integer and |w| <= 1/2; 2^w by a degree-11 polynomial (minimax for
// exp on [-ln2/2, ln2/2] with ln 2 folded into the coefficients), 2^k by adding k to the
// exponent bits. Branch-free so that it vectorises.
// Always inlined: a call from a target clone to an out-of-line helper would run the helper's
// baseline code, unvectorised.
[[gnu::always_inline]] inline double exp2_inline(double u) {
  constexpr double magic = 0x1.8p52;  // adding it rounds to an integer kept in the low bits
  const double uc = std::max(u, -1021.0);
  const double kd = uc + magic;
  const std::int64_t k = std::bit_cast<std::int64_t>(kd) - std::bit_cast<std::int64_t>(magic);
  const double w = uc - (kd - magic);
  double p = 4.0780719295883366649e-10;
  p = std::fma(p, w, 7.0725704128144235096e-9);
  p = std::fma(p, w, 1.0180647659234138889e-7);
  p = std::fma(p, w, 1.3215442675329822143e-6);
  p = std::fma(p, w, 0.000015252727385193868197);
  p = std::fma(p, w, 0.0001540353044157213033);
  p = std::fma(p, w, 0.0013333558153439964747);
  p = std::fma(p, w, 0.0096181291076070023796);
  p = std::fma(p, w, 0.05550410866479039455);
  p = std::fma(p, w, 0.24022650695910098007);
  p = std::fma(p, w, 0.69314718055994569675);
  p = std::fma(p, w, 1.0);
  return std::bit_cast<double>(std::bit_cast<std::int64_t>(p) + (k << 52));
}

}  // namespace nwreg::kernel
