#pragma once
/// What the learners read off an Attention engine beside its passes (pooling.h): the moments a
/// learned metric's gradient needs, and a nearest-neighbour policy's bandwidths as it reaches.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nwreg/engine/attention.h"

namespace nwreg {

/// Over columns v given per input row (n_in x c, row-major), rearranged once: row j's
/// leave-one-out prediction f (as loo makes it) and M[k * c + l] = sum_i a_ji (y_i - f)
/// (v_ik - v_jk) (v_il - v_jl), summed over the keys in reach only.
class LooMoments {
 public:
  /// `engine` must outlive this.
  LooMoments(const Attention& engine, const double* v, std::size_t c);
  /// False, M untouched, for a row out of reach or of sample weight 0.
  bool at(std::size_t j, double& f, double* M) const;

 private:
  const Attention& engine_;
  std::vector<double> v_;  // by column, one entry per row of sample weight > 0, in the engine's order of keys
  std::size_t c_;
  std::vector<std::uint32_t> slot_;  // each input row's slot in the engine
};

/// A nearest-neighbour policy's bandwidths as the leave-one-out fit uses them, at `count` rows
/// spread over the keys (all where count >= n): count x d, row-major, h_k s(row) in column k's
/// units (NaN for a categorical column's lambda, which no policy scales). Empty without a
/// policy.
std::vector<double> reach(const Attention& engine, std::size_t count);

}  // namespace nwreg
