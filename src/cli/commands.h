#pragma once
/// The subcommands: each has an options struct, a setup function that binds it to CLI11, and a
/// run function. Run functions throw nwreg errors; main maps them to messages and exit codes.

#include <cstdint>
#include <string>
#include <vector>

#include "cli/common.h"

namespace nwreg::cli {

struct FitCommand {
  std::vector<std::string> trains;  //!< TRAIN...: one file (or -), or several / globs for a batch
  InputOptions input;
  BandwidthOptions bandwidth;
  EngineCliOptions engine;
  std::string output;            //!< -o: model JSON file, "-" = stdout; empty = none
  std::string format = "text";   //!< --format of the stdout report: text or json
  std::string curve;             //!< --curve: the criteria over the bandwidth grid, CSV
  std::string plot;              //!< --plot: the same drawn, SVG
};
CLI::App* setup_fit(CLI::App& app, FitCommand& cmd);
/// Returns false when some files of a batch failed (each reported on stderr and its row).
bool run_fit(const FitCommand& cmd);
bool run_fit_one(const FitCommand& cmd, const BandwidthPlan& plan);

struct PredictCommand {
  InputOptions input;
  BandwidthOptions bandwidth;
  EngineCliOptions engine;
  std::string model;             //!< --model: a file written by fit -o
  std::string grid;              //!< --grid START:STOP:STEP
  std::size_t grid_n = 0;        //!< --grid-n N
  std::string query;             //!< --query FILE ("-" = stdin)
  std::string output = "-";      //!< -o
  std::string format;            //!< --format csv|json; empty = from the -o name, else csv
  std::string weights;           //!< --weights FILE
  std::string weights_layout = "wide";  //!< --weights-layout wide|long
  std::uint64_t max_weights = 100000000;  //!< --max-weights: most matrix entries --weights may write
  std::string shard;             //!< --shard K/N: only the K-th of N slices of the queries
  std::string plot;              //!< --plot FILE.svg: points, curve, band
  std::string heatmap;           //!< --heatmap FILE.svg: the attention-weight matrix
  std::string heatmap_scale = "linear";  //!< --heatmap-scale linear|log
  std::vector<std::string> keep;  //!< --keep: columns copied from the query (or training) rows
  bool se = false;               //!< --se: add se, lower, upper columns
  bool derivative = false;       //!< --derivative: add the slope d_<x> per continuous x column (and d_<x>_se)
  std::string slope_unit;        //!< --slope-unit: a time column's slope per this span (empty: per second)
  double level = 0.95;           //!< --level of the band
  std::string interval = "auto"; //!< --interval: rbc, plain, or auto (rbc where it exists)
  bool simultaneous = false;     //!< --simultaneous: a band over every query at once (tube formula)
};
CLI::App* setup_predict(CLI::App& app, PredictCommand& cmd);
void run_predict(const PredictCommand& cmd);

struct TestCommand {
  std::vector<std::string> trains;  //!< TRAIN...: one file (or -), or several / globs for a batch
  InputOptions input;
  BandwidthOptions bandwidth;
  EngineCliOptions engine;
  std::string null = "constant";  //!< --null: constant (no effect) or linear
  std::string permutations = "auto";  //!< --permutations B, 0 (chi-square), or auto
  std::string format = "text";    //!< --format: text or json; a batch: csv or json
};
CLI::App* setup_test(CLI::App& app, TestCommand& cmd);
/// Returns false when some files of a batch failed (each reported on stderr and its row).
bool run_test(const TestCommand& cmd);

}  // namespace nwreg::cli
