#pragma once
// The parts of `nwreg predict` (cli/predict.cpp runs them): the rows to answer and the model
// checked against the data (predict_queries.cpp), the answers, the band and the notes on
// stderr, and the streamed queries (predict_answers.cpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/pictures.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/data/csv.h"
#include "nwreg/data/grid.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/engine/results.h"
#include "nwreg/io/writers.h"

namespace nwreg::cli {

// The rows to answer: the query points and what each output row carries besides them.
struct Rows {
  std::vector<double> x;                        // m x d, row-major
  std::vector<ColumnKind> kinds;                // how each x column is written
  std::vector<std::string> kept_names;          // --keep
  std::vector<std::vector<std::string>> kept;   // kept[c][i]
  const std::vector<double>* y = nullptr;       // fitted values: the observed y of each row
};

// The x columns that get a slope (--derivative): the continuous ones, each with the factor its
// slope and se are written in: a time column's per --slope-unit (seconds in the model), others 1.
struct SlopeColumn {
  std::size_t k;
  double per = 1;
};

// Predictions (and with --se the band) for a block of query points.
struct Block {
  std::vector<double> pred;
  std::optional<Band> band;
  std::optional<Fitted::Slopes> slopes;  // --derivative: m x d
  std::vector<char> none;     // per row: no answer, every value cell empty (a missing x; --out-of-reach empty)
  std::vector<char> no_band;  // per row: its standard errors and band empty (past the range, --out-of-reach auto)
};

// Queries the data do not support (--out-of-reach) in a block: the policy, and which of its
// rows lie past the training range (nullptr: none).
struct Reach {
  Unsupported policy = Unsupported::flag;
  const char* past = nullptr;
};
// How --se's band is made: its multiplier (the pointwise z, or the simultaneous critical value)
// and the fit it is centred on (--interval rbc: the bias-corrected one), or none.
struct BandSetup {
  double level = 0.95;
  std::optional<double> critical;  // --simultaneous
  std::optional<Fitted> corrected;
};

Model load_model(const std::string& path);

// The query points: `grid` (parsed before the data were read), an even grid over the data,
// a query file, or the training x (fitted values, with their y).
Rows rows_for(const PredictCommand& cmd, const Dataset& data, std::vector<double> grid, bool grid_time);

// The model read with --model, checked against the data it is to be used with.
Model checked_model(Model model, const std::string& path, const Dataset& data);

// A size for people: "29 kB", "2.1 GB".
std::string about_bytes(double bytes);

std::vector<SlopeColumn> slope_columns(const Model& model, const std::string& slope_unit = "");

// The output's columns: kept, x, then the values (the observed y first for fitted values, the
// prediction, with --se its standard error and band, and for fitted values the residual).
PredictionWriter::Columns output_columns(const Model& model, const std::vector<std::string>& kept, bool se,
                                         bool fitted, std::vector<ColumnKind> kinds, bool derivative);

// What the JSON output records of the band (--se), or nothing.
std::optional<PredictionWriter::Columns::Band> band_record(const PredictCommand& cmd, const BandSetup& band);

// The band's setup for a model: rbc where the model has a bias-corrected fit (and --interval
// auto or rbc), and with --simultaneous the tube formula's critical value over the m queries
// q (every query of the run, so that shards share it), said on stderr.
void set_band(BandSetup& band, const PredictCommand& cmd, const Dataset& data, const Model& model,
              const EngineOptions& engine, const Fitted& fitted, const double* q, std::size_t m);

// The same where some queries are none: a row with a missing coordinate (--na skip keeps its
// place) is not asked; a row past the range or out of reach gets what `reach` says.
Block answer(const Fitted& fitted, const double* q, std::size_t m, std::size_t d, std::size_t first,
             const LooDetail* loo, const BandSetup& band, bool derivative, const Reach& reach);

// Says on stderr how many of the `total` queries' local polynomials lost a term (Fitted::dropped_rows).
void report_dropped(const Fitted& fitted, std::size_t total, const Model& model, const Dataset& data);

// Under --out-of-reach error, a query past the training range is refused: a QueryError naming
// the first (first + 1 numbers the first query of `p`).
void refuse_past(const PastRange& p, std::size_t first, const Dataset& data, Unsupported policy);

// Says on stderr, once, after the output, how many queries lie past the training range, how
// far, and what they got.
void report_past(const PastRange& p, std::size_t total, const Dataset& data, Unsupported policy, bool se);

// Queries not past the training range that lie far from every training row: more than
// far_bandwidths bandwidths from the nearest (fixed bandwidths, or adaptive ones each row's own;
// kernels with no compact support: a compact kernel's query out of reach is --out-of-reach's),
// how many, and the farthest.
struct FarQueries {
  std::size_t count = 0, farthest = 0;  // farthest: its query number (from 1)
  double distance = 0;                  // its distance in bandwidths
  // Adds queries [first, first + m) of q (first numbers them from 0), past[j] those past the
  // range (noted apart), empty for none.
  void add(const Fitted& fitted, const Model& model, const double* q, std::size_t m, std::size_t first,
           const std::vector<char>& past);
};

// Says on stderr, once, after the output, how many queries lie far from every training row.
void report_far(const FarQueries& far, std::size_t total);

// Writes block `b`, rows [from, from + m) of `rows`.
void write_block(PredictionWriter& w, const Rows& rows, std::size_t d, std::size_t from, const Block& b,
                 const std::vector<SlopeColumn>& slope_cols);

// Reads queries from stdin line by line and writes each prediction as soon as it is made, in
// any format: memory stays bounded however long the stream.
void stream_queries(const PredictCommand& cmd, const Dataset& data, const Model& model, const EngineOptions& engine,
                    Format format, OutputFile& out);

}  // namespace nwreg::cli
