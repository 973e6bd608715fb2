#pragma once
/// Learning a score's parameters (--score general, additive; engine/score_attention.h) by
/// gradient descent on the same leave-one-out error as the bandwidths: row j attends to every
/// key but its own. From W = I (general: the dot product it contains) or a random start drawn
/// from --seed (additive), by Adam, plain fixed-rate steps or the line search.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/learn/bandwidth.h"

namespace nwreg {

/// The descent's start. general: W = I. additive: each unit's W_q and W_k rows drawn N(0, 1)
/// over each column's standard deviation and sqrt(d), b centring the unit on the data's means
/// (q = k = the column means) plus N(0, 1/4), w_v N(0, 1); from a SplitMix64 stream seeded by
/// `seed` (the same start on every machine). dot and scaled-dot: no parameters.
ScoreParameters score_start(Score score, const Dataset& data, std::size_t hidden, bool bias, std::uint64_t seed);

struct ScoreFit {
  ScoreParameters parameters;
  double loo_mse = 0;          //!< mean LOO squared error over every row at the parameters reached
  std::vector<Epoch> history;  //!< the loss after each step (no parameters: they may be many)
  std::string stop_reason;
  int evaluations = 0;
};

/// Learns start's parameters, stepping in x standardised per column (each column's mean and
/// standard deviation; mean 0 for scores that cannot absorb a shift) so that the steps do not
/// depend on x's units, the parameters mapped back to x's own: options.optimizer adam or sgd takes options.epochs steps of
/// options.lr (keeping the lowest point met), line_search descends as for the bandwidths;
/// the rows follow options.descent_rows (unset: sampled_descent_rows), the objective options.loss. Threads from
/// options.engine. Each step costs O(rows n H d) (general: O(rows n d)).
ScoreFit fit_score(const Dataset& data, const ScoreParameters& start, const FitOptions& options,
                   const std::function<void(const Epoch&)>& on_epoch = {});

}  // namespace nwreg
