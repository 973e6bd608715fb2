#pragma once
/// A fitted model: what `fit -o FILE` writes and `predict --model FILE` reads.

#include <cstddef>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "nwreg/base/timestamp.h"
#include "nwreg/data/levels.h"
#include "nwreg/kernel/categorical.h"
#include "nwreg/kernel/kernels.h"
#include "nwreg/model/settings.h"

namespace nwreg {

inline constexpr const char* model_format = "nwreg-model";
inline constexpr int model_format_version = 1;
/// Limits on what read_model accepts: a model nwreg writes is far smaller and flatter.
inline constexpr std::size_t max_model_bytes = std::size_t{64} << 20;
inline constexpr int max_model_depth = 32;
/// The most robustness iterations a fit takes (--robust N) and a model file may hold.
inline constexpr std::size_t max_robust = 100;

/// A point of the criterion curve (fit --curve): the criteria at one bandwidth of the grid the
/// bandwidth is chosen on. Each is absent where undefined there (a row with no other key in
/// reach; n - tr(H) too small).
struct CurvePoint {
  std::vector<double> bandwidth;        //!< per x column (lambda for a categorical one)
  double parameter = 0;                 //!< a nearest-neighbour policy's K, or F for span; else 0
  std::optional<double> loo, gcv, aicc, df;
};

/// A fitted model as its file holds it; what the estimate is (Smoother: kernel, method, degree,
/// leave-out, neighbour policy, categorical kernels) is shared with the engine.
struct Model : Smoother {
  ScoreParameters score;                //!< --score: gaussian (the kernels and bandwidths) or another, with its parameters
  std::vector<double> bandwidth;        //!< one per x column (with a metric: where its descent began)
  Metric metric;                        //!< --metric full: the learned map A (rank 0 = none)
  std::string bandwidth_source;         //!< "learned", "fixed", "silverman", "scott", "plugin" or "model"
  std::vector<std::string> x_columns;   //!< training x column names
  std::vector<ColumnKind> x_kinds;      //!< per x column: numbers, dates, times or categorical; empty = all numbers
  std::vector<UtcOffset> x_offsets;     //!< per x column: a time column's one offset in training (output is
                                        //!< written at it); empty or none = UTC
  std::vector<Levels> levels;           //!< per x column its levels (categorical), else empty; none at all = no such column
  std::string y_column;                 //!< training y column name
  std::string sample_weight;            //!< the sample-weight column's name; empty = none
  std::size_t n = 0;                    //!< training rows
  std::string checksum;                 //!< checksum(Dataset) of the training data
  std::optional<double> loo_mse;        //!< mean LOO squared error at `bandwidth`
  std::optional<double> loo_r2;         //!< 1 - loo_mse / var(y)
  std::optional<double> neighbours;     //!< mean effective number of neighbours, 1 / sum a^2
  /// A nearest-neighbour policy's bandwidths over the training rows (leaving each out), per x
  /// column: the least, the median and the largest (NaN for a categorical column); empty
  /// without a policy.
  struct Reach {
    std::vector<double> min, median, max;
  } reach;
  std::optional<double> df;             //!< degrees of freedom tr(H) (reported for the scores other than gaussian)
  std::vector<Epoch> history;           //!< loss per epoch when learned
  std::vector<CurvePoint> curve;        //!< FitPlan::curve: the criteria over the grid (not in the model file)
  std::string stop_reason;              //!< why learning stopped, when learned
  std::optional<Criterion> criterion;   //!< what learning minimised, when learned
  std::optional<double> criterion_value;  //!< its value at `bandwidth`, over every row
  std::vector<std::string> warnings;    //!< why a learned bandwidth is suspect (fit_warnings)
  std::size_t robust = 0;               //!< robustness iterations after the first fit (--robust N)
  std::vector<double> robustness;       //!< their final weights, per training row (empty: none)
};

/// Column k's output offset (none: UTC).
inline UtcOffset column_offset(const Model& m, std::size_t k) { return k < m.x_offsets.size() ? m.x_offsets[k] : std::nullopt; }
/// Column k's kind (numbers when x_kinds is empty).
inline ColumnKind column_kind(const Model& m, std::size_t k) {
  return k < m.x_kinds.size() ? m.x_kinds[k] : ColumnKind::number;
}

class JsonObjectWriter;

/// The model's fields (kernel, bandwidth, columns, n, checksum, LOO error, history), shared by
/// the model file and the JSON predictions.
void write_model_fields(JsonObjectWriter& w, const Model& m);

/// Writes the model as a JSON object (see docs/output.md, "Model file"). Throws DataError if a number
/// is not finite (JSON cannot hold it).
void write_model(std::ostream& out, const Model& model);

/// Reads a model file. Throws InputError naming `source` for text that is not JSON, another
/// format or version, missing or ill-typed fields, more than max_model_bytes or nesting deeper
/// than max_model_depth, and for a read error.
Model read_model(std::istream& in, const std::string& source);

}  // namespace nwreg
