#pragma once
/// The one place that picks what sums a pass's rows (internal to engine/). A pass says what it
/// needs of its rows (Needs); the chooser answers with a Plan: the backends that can sum those
/// rows whole, each where it pays for the pass's number of rows. The engine's row functions
/// (engine.h) try the plan's backends in order and gather a row key by key where none answers.
///
/// The backends, and the rule that picks them:
///
/// - the fused line (fused_line.h): one continuous column, the Gaussian kernel, an estimator that
///   fuses (Estimator::fuses: NW's weighted mean), a fixed bandwidth and no sample weights; with
///   a fast Gauss transform for passes over many rows (FusedLine::transform). Where it applies it
///   answers every row but the slopes (NW's slope is gathered).
/// - line sums by moments (line_sums.h): one continuous column otherwise, every kernel; the
///   compact kernels' segment tree is built once and kept, the Gaussian's and Laplace's backends
///   are built for the pass where the rows' windows hold more key-by-key terms in all than the
///   backend costs to build (make_line). With squared weights or a smooth of values, their own
///   line sums beside (DetailLines).
/// - series over boxes (gauss_boxes.h): several continuous columns, the Gaussian kernel, NW at a
///   fixed bandwidth, a pass of values and perhaps the gradient (no squares, smooth or slopes),
///   where every key is in reach (KeyIndex::Search::every) and the series, made for the pass,
///   costs less than half the key-by-key sums (its cost rule): the scan's widest common scales,
///   descents where the bandwidths are wide against the data. Rows outside the keys' box, or
///   whose sum is too small for the series' error, are gathered.
/// - none: rows gathered key by key (the k-d tree's leaves or every key: several columns).
///
/// Adding a backend: its own file, its condition and cost rule in Backends::plan, and its row in
/// rows.cpp.

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/engine/estimator.h"
#include "nwreg/engine/fused_line.h"
#include "nwreg/engine/line_sums.h"
#include "nwreg/engine/moment_line.h"
#include "nwreg/engine/options.h"
#include "nwreg/kernel/gauss_boxes.h"
#include "nwreg/kernel/gauss_transform.h"

namespace nwreg {

class Engine;

/// What a pass needs of its rows.
struct Needs {
  std::size_t rows = 0;  //!< how many rows it reduces (0: none by a backend: it only gathers)
  bool gradient = false; //!< each row's derivative in log h
  bool squares = false;  //!< each row's sum of squared weights
  const std::vector<double>* values = nullptr;  //!< each row's NW smooth of these values (per key)
  bool slopes = false;   //!< the local fit's slope instead of its value
};

/// The backends the chooser picked for one pass.
struct Plan {
  const FusedLine* fused = nullptr;        //!< the fused line,
  FusedLine::Pass fused_pass;              //!< and its transforms for this pass
  const LineSums* line = nullptr;          //!< sums by moments
  const MomentLine* kept = nullptr;        //!< line, where it is the compact kernels' kept tree
  const GaussBoxes* boxes = nullptr;       //!< series over boxes (several columns)
  const LineSums* squares = nullptr;       //!< the squared weights' sums by moments
  const LineSums* values = nullptr;        //!< the values' sums by moments
  std::vector<double> w2;                  //!< the squared sample weights `squares` reads
  std::unique_ptr<LineSums> owned_line, owned_squares, owned_values;
  std::unique_ptr<GaussBoxes> owned_boxes;
  /// Queries taken in x order: neighbouring rows share their windows in cache.
  bool sorted() const { return fused != nullptr; }
};

class Backends {
 public:
  /// Whether the fused line applies to this data and these options: the keys are then laid out
  /// one row a key.
  static bool fuses(const Dataset& train, const EngineOptions& options, const Estimator& estimator);
  /// The backends kept for every bandwidth; `fused` as fuses() said.
  Backends(const Engine& engine, bool fused);
  void set_bandwidth(double h);
  /// Another pruning tolerance (the engine's options hold it for the backends made per pass).
  void set_tolerance(double tolerance);
  /// The backends for a pass with these needs.
  Plan plan(const Needs& needs) const;
  /// Whether passes take the fused line (one continuous column, Gaussian NW, no merged keys).
  bool fused() const { return fused_.has_value(); }

 private:
  bool lines_apply() const;  // whether a backend by moments may apply (the options and the layout allow one)
  // The series over boxes for a pass of `rows` rows of values (and NW's gradient, where asked),
  // where it applies and pays; else null.
  std::unique_ptr<GaussBoxes> make_boxes(std::size_t rows, bool gradient) const;
  // The mean window (keys in reach, one column) of 16 keys spread over x, as queries at h (each
  // at its own scale under knn or span): what a pass costs key by key, per row.
  double mean_window(double h) const;
  // The backend for this kernel over `data`, of degree `degree`, for the kernel squared if asked;
  // null where it would not pay for `rows` rows. Builds on the pool: never from inside a pool task.
  // `spread`: data whose values span many orders (a smooth of squared residuals), which the
  // Gaussian's target-side series would round too coarsely.
  std::unique_ptr<LineSums> make_line(std::size_t degree, const LineData& data, bool squared, std::size_t rows,
                                      bool gradient = false, bool spread = false) const;
  void detail_lines(Plan& plan, std::size_t rows, bool squares, const std::vector<double>* v) const;
  static constexpr std::size_t line_min_keys = 2048;  // fewer keys: the windows are summed key by key

  const Engine& e_;
  std::optional<FusedLine> fused_;     // the fused 1-D Gaussian NW path, where it applies
  std::optional<MomentLine> moments_;  // the compact kernels' sums by moments, kept
  // Compact kernels: the squared weights' tree, built on first use (it holds for every bandwidth).
  mutable std::mutex squares_mutex_;
  mutable std::vector<double> squares_w2_;
  mutable std::unique_ptr<MomentLine> squares_;
  mutable BufferPool buffers_;  // per-pass backends' storage, kept between passes
};

}  // namespace nwreg
