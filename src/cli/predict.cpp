#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include "cli/choices.h"
#include "cli/predict_parts.h"
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/pictures.h"
#include "nwreg/engine/results.h"
#include "nwreg/base/errors.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/data/grid.h"
#include "nwreg/base/numbers.h"
#include "nwreg/io/plot.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/io/writers.h"
#include "nwreg/data/csv.h"
#include "nwreg/data/dataset.h"
#include "nwreg/learn/fit.h"

namespace nwreg::cli {

CLI::App* setup_predict(CLI::App& app, PredictCommand& cmd) {
  CLI::App* sub = app.add_subcommand("predict", "Predict by attention pooling; optionally write the attention weights");
  add_input_options(*sub, cmd.input);
  add_bandwidth_options(*sub, cmd.bandwidth);
  add_method_options(*sub, cmd.engine);
  add_like_option(*sub, cmd.engine);
  sub->option_defaults()->group("Bandwidth");
  auto* model = sub->add_option("--model", cmd.model,
                                "Use the bandwidth (kernel, method, metric) of a model written by fit -o; not with "
                                "the Method or Bandwidth options, --categorical, --ordered or --levels (the model holds them)");
  sub->option_defaults()->group("Input");
  auto* grid = sub->add_option("--grid", cmd.grid,
                               "Query points START:STOP:STEP (stop excluded); between dates or times START/STOP/STEP "
                               "with ISO 8601 ends and a time-span step, e.g. 2024-01-01/2024-02-01/6h. Not with "
                               "--grid-n or --query");
  auto* grid_n = sub->add_option("--grid-n", cmd.grid_n, "N query points spanning the training x range (1 to 1e8); with two x columns an N x N grid over both")
                     ->check(CLI::Range(std::size_t{1}, max_grid_points));
  auto* query = sub->add_option("--query", cmd.query,
                                "Query points from a CSV file; - for stdin, each line answered as it arrives");
  grid->excludes(grid_n)->excludes(query);
  grid_n->excludes(query);
  sub->option_defaults()->group("Output");
  sub->add_option("-o,--output", cmd.output, "Predictions file; - for stdout")->capture_default_str();
  sub->add_option("--format", cmd.format,
                  format_names() + " (jsonl: one object a line, written as computed; with --query - each "
                  "query is answered as it arrives), for -o and --weights. Default: from each file's name (" +
                      format_extensions() + "), else csv");
  sub->add_option("--weights", cmd.weights,
                  "Also write the attention-weight matrix to this file (format from its name, or --format)");
  sub->add_option("--weights-layout", cmd.weights_layout,
                  "wide: one row per query; long: one query,key,weight row per pair")
      ->capture_default_str();
  sub->add_option("--plot", cmd.plot, "Draw the training points and the fitted curve (two x columns: the fitted surface) to this SVG file");
  sub->add_option("--heatmap", cmd.heatmap,
                  "Draw the attention-weight matrix (queries by keys, sorted by x) to this SVG file");
  sub->add_option("--heatmap-scale", cmd.heatmap_scale,
                  "Colours of --heatmap: linear in the weight, or log (six decades below the largest)")
      ->check(CLI::IsMember(choice_names<bool>(heatmap_scale_choices)))
      ->capture_default_str();
  sub->add_option("--shard", cmd.shard,
                  "K/N: compute only the K-th of N equal slices of the queries; the N outputs, joined "
                  "in order, are the whole output (csv, tsv and jsonl)")
      ->group("Performance");
  sub->add_option("--keep", cmd.keep,
                  "Copy these columns (names or 1-based indices, comma-separated) of each query row, or of each "
                  "training row for fitted values, into the output, first: results join back to their input");
  sub->add_flag("--se", cmd.se,
                "Add pointwise standard errors and a confidence band: columns se, lower, upper (see "
                "docs/methods.md, \"Standard errors\")");
  sub->add_option("--level", cmd.level, "Confidence level of the --se band")->capture_default_str();
  sub->add_option("--interval", cmd.interval,
                  "The --se band: rbc (robust bias correction: centred on the local polynomial of degree "
                  "max(p + 1, 2) at the same bandwidth, with its standard error), plain (prediction -+ z se, "
                  "ignoring bias), or auto (rbc where it exists: not for other scores or degree 3)")
      ->capture_default_str();
  sub->add_flag("--simultaneous", cmd.simultaneous,
                "Make the --se band cover the whole curve over the queries at --level at once (one x column; the "
                "tube formula's critical value, said on stderr)");
  sub->add_flag("--derivative", cmd.derivative,
                "Add the slope df/dx of each continuous x column (d_<x>; per second for time, or per "
                "--slope-unit), with --se its standard error (d_<x>_se): NW's analytic derivative, local "
                "linear's fitted slope");
  sub->add_option("--slope-unit", cmd.slope_unit,
                  "--derivative of a time column: the slope per this span (s, min, h, d, w, or 7d, 0.5h), not "
                  "per second");
  sub->add_option("--max-weights", cmd.max_weights,
                  "Refuse a --weights matrix of more entries than this (m queries x n keys)")
      ->capture_default_str();
  add_performance_options(*sub, cmd.engine);
  // One rule for options that cannot apply: what chooses or learns the model (the Method and
  // Bandwidth groups, the columns' kinds and levels) excludes a model read from a file, and an
  // option that refines another needs it.
  for (CLI::Option* o : sub->get_options())
    if (o != model && (o->get_group() == "Method" || o->get_group() == "Bandwidth" ||
                       o->check_name("--categorical") || o->check_name("--ordered") || o->check_name("--levels")))
      o->excludes(model);
  for (auto [option, needs] : {std::pair{"--heatmap-scale", "--heatmap"}, {"--weights-layout", "--weights"},
                               {"--max-weights", "--weights"}, {"--level", "--se"},
                               {"--interval", "--se"}, {"--simultaneous", "--se"},
                               {"--slope-unit", "--derivative"}})
    sub->get_option(option)->needs(sub->get_option(needs));
  sub->footer(R"(Without --grid, --grid-n or --query, predicts at the training x (fitted values).
Examples:
  nwreg predict data/synthetic.csv --grid 0:5:0.1     learn h, predict on a grid
  nwreg predict data/mcycle.csv --bandwidth 2 --grid-n 200 -o fit.csv
  nwreg predict data/mcycle.csv --model mcycle.json --query new_times.csv
  nwreg predict data/synthetic.csv --grid 0:5:0.5 --weights w.csv \
                --weights-layout long
  seq 0 0.5 5 | nwreg predict data/synthetic.csv --query -    queries from stdin
  nwreg predict data/airquality_daily.csv -y Temp -b 3d \
                --grid 1973-06-01/1973-07-01/1d --plot temp.svg   a daily series)");
  return sub;
}

namespace {

// The options checked against each other before anything is read or opened.
struct PredictSetup {
  bool fitted_values = false;  // no --grid, --grid-n or --query: the training rows
  Format format = Format::csv, weights_format = Format::csv;
  WeightsLayout layout = WeightsLayout::wide;
  std::vector<double> grid;
  bool grid_time = false;
  Shard shard;
  bool streaming = false;  // --query -: queries answered one by one as they arrive
  BandwidthPlan plan;
};

PredictSetup check_predict(const PredictCommand& cmd) {
  PredictSetup s;
  s.fitted_values = cmd.grid.empty() && cmd.grid_n == 0 && cmd.query.empty();
  s.format = cmd.format.empty() ? format_for_path(cmd.output, Format::csv) : parse_format(cmd.format, "--format");
  s.layout = parse_layout(cmd.weights_layout);
  if (cmd.query == "-" && cmd.input.train == "-")
    throw UsageError("--query -: standard input already carries the training data");
  if (!cmd.grid.empty()) s.grid = parse_grid(cmd.grid, max_grid_points, &s.grid_time);
  if (!cmd.shard.empty()) s.shard = parse_shard(cmd.shard);
  // Each output file's format follows its name; --format overrides both.
  s.weights_format = cmd.format.empty() ? format_for_path(cmd.weights, Format::csv) : s.format;
  check_svg_name(cmd.plot, "--plot");
  check_svg_name(cmd.heatmap, "--heatmap");
  if (!cmd.shard.empty() &&
      (!format_def(s.format).shardable || (!cmd.weights.empty() && !format_def(s.weights_format).shardable)))
    throw UsageError("--shard: JSON output cannot be joined from pieces; use csv or jsonl");
  s.streaming = cmd.query == "-" && cmd.weights.empty() && cmd.shard.empty() && cmd.plot.empty() && cmd.heatmap.empty();
  if (cmd.simultaneous && s.streaming)
    throw UsageError("--simultaneous: a band over every query needs them all first; not with --query - (give a file)");
  parse_choice<std::optional<Interval>>(cmd.interval, interval_choices, "--interval", "interval");
  s.plan = plan_bandwidth(cmd.bandwidth, cmd.engine);
  check_input_options(cmd.input);
  if (cmd.model.empty()) check_plan_columns(s.plan, cmd.engine, cmd.input);
  if (cmd.se) check_level(cmd.level);
  check_tolerance(cmd.engine.tolerance);
  std::vector<FileUse> uses{{cmd.input.train, "the training data", false}, {cmd.output, "-o", true}};
  if (!cmd.model.empty()) uses.push_back({cmd.model, "the --model file", false});
  if (!cmd.query.empty()) uses.push_back({cmd.query, "the --query file", false});
  for (auto [path, option] : {std::pair{&cmd.weights, "--weights"}, {&cmd.plot, "--plot"}, {&cmd.heatmap, "--heatmap"}})
    if (!path->empty()) uses.push_back({*path, option, true});
  check_distinct(uses);
  return s;
}

// --plot's picture: the training points, the curve at the m queries q and its band.
FitPlot fit_plot(const Dataset& data, const Model& model, const double* q, std::size_t m, const Block& all) {
  // Cells left empty are not drawn: NaN breaks the curve and the band there; a query row with a
  // missing x is left out (one x column).
  std::vector<double> qx, f, lower, upper;
  for (std::size_t j = 0; j < m; ++j) {
    if (std::isnan(q[j])) continue;
    qx.push_back(q[j]);
    f.push_back(all.none[j] ? NAN : all.pred[j]);
    if (!all.band) continue;
    const bool empty = all.none[j] || all.no_band[j];
    lower.push_back(empty ? NAN : all.band->lower[j]);
    upper.push_back(empty ? NAN : all.band->upper[j]);
  }
  FitPlot p{data.x,
            data.y,
            std::move(qx),
            std::move(f),
            std::move(lower),
            std::move(upper),
            data.x_names[0],
            data.y_name,
            picture_title(model, data),
            is_time(data.kind(0))};
  return p;
}

// --weights writes m x n entries: refused past --max-weights, before any work.
void check_weights_size(std::size_t m, std::size_t n, std::uint64_t most) {
  const double entries = static_cast<double>(m) * static_cast<double>(n);
  if (entries > static_cast<double>(most))
    throw UsageError("--weights: " + std::to_string(m) + " queries x " + std::to_string(n) + " keys = " +
                     std::to_string(static_cast<unsigned long long>(entries)) + " entries (about " + about_bytes(entries * 20) +
                     " as text), over the limit of " + std::to_string(most) + "; raise it with --max-weights");
}

// What every output of one predict run is written from: the queries [first, first + m) of
// rows (q), and their answers.
struct Run {
  const PredictCommand& cmd;
  const PredictSetup& setup;
  const Dataset& data;
  const Rows& rows;
  const Model& model;
  const Fitted& fitted;
  const EngineOptions& engine;
  const PredictionWriter::Columns& columns;
  const std::vector<SlopeColumn>& slope_cols;
  const double* q;
  std::size_t m, first;
  bool header;  // the first shard: CSV headers
};

// The note on queries past the data, for this shard's `m` queries (`past`). Sharded, it is said
// once for the whole run, by shard 1 (whose CSV header the joined output keeps), over every
// shard's queries: each shard holds them all.
void report_run_past(const Shard& shard, const PastRange& past, std::size_t m, const Rows& rows, const Dataset& data,
                     Unsupported policy, bool se) {
  if (shard.n == 1) return report_past(past, m, data, policy, se);
  if (shard.k != 1) return;
  const std::size_t total = rows.x.size() / data.d;
  report_past(TrainingRange(data).past(rows.x.data(), total), total, data, policy, se);
}

// The note on queries far from every training row, as report_run_past's: for this shard's
// queries, or sharded by shard 1 for every shard's.
void report_run_far(const Shard& shard, const Fitted& fitted, const Model& model, const PastRange& past, const double* q,
                    std::size_t m, const Rows& rows, const Dataset& data) {
  FarQueries far;
  if (shard.n == 1) {
    far.add(fitted, model, q, m, 0, past.past);
    return report_far(far, m);
  }
  if (shard.k != 1) return;
  const std::size_t total = rows.x.size() / data.d;
  far.add(fitted, model, rows.x.data(), total, 0, TrainingRange(data).past(rows.x.data(), total).past);
  report_far(far, total);
}

void write_outputs(const Run& a, const Block& all, OutputFile& out, std::optional<OutputFile>& weights_file,
                   std::optional<OutputFile>& plot_file, std::optional<OutputFile>& heatmap_file, const char*& task) {
  const Dataset& data = a.data;
  const double* q = a.q;
  const std::size_t m = a.m;
  // Every output is written before any is committed, files before standard output: a failure
  // anywhere (a full disk) leaves every file as it was and, where it can, stdout untouched.
  std::vector<std::pair<OutputFile*, std::function<void()>>> writes;
  if (weights_file)
    writes.emplace_back(&*weights_file, [&] {
      task = "writing weights";
      weights_file->write([&](std::ostream& os) {
        WeightsWriter w(os, a.setup.weights_format, a.setup.layout, data, q, m, a.first, a.header, a.rows.kinds);
        // A query left without an answer (past the data under --out-of-reach empty) weighs no
        // key, as a query no key reaches: a row of 0, not the weights its prediction would have had.
        const std::vector<double> nothing(std::find(all.none.begin(), all.none.end(), 1) != all.none.end() ? data.n : 0);
        a.fitted.weights(q, m, [&](std::size_t i, const double* row) { w.row(i, all.none[i] ? nothing.data() : row); });
        w.finish();
      });
    });
  writes.emplace_back(&out, [&] {
    out.write([&](std::ostream& os) {
      PredictionWriter w(os, a.setup.format, a.model, a.columns, a.header);
      write_block(w, a.rows, data.d, a.first, all, a.slope_cols);
      w.finish();
    });
  });
  if (plot_file)
    writes.emplace_back(&*plot_file, [&] {
      if (data.d == 2) {
        task = "drawing the surface";
        const SurfacePlot p = surface_plot(data, a.model, a.engine);
        plot_file->write([&](std::ostream& os) { write_surface_svg(os, p); });
        return;
      }
      const FitPlot p = fit_plot(data, a.model, q, m, all);
      plot_file->write([&](std::ostream& os) { write_fit_svg(os, p); });
    });
  if (heatmap_file)
    writes.emplace_back(&*heatmap_file, [&] {
      task = "drawing the heat map";
      write_heatmap(*heatmap_file, data, a.fitted, a.model, q, m,
                    parse_choice<bool>(a.cmd.heatmap_scale, heatmap_scale_choices, "--heatmap-scale", "scale"));
    });
  std::stable_partition(writes.begin(), writes.end(), [](const auto& w) { return !w.first->in_place(); });
  for (auto& w : writes) w.second();
  OutputFile::commit_all({&out, weights_file ? &*weights_file : nullptr, plot_file ? &*plot_file : nullptr,
                          heatmap_file ? &*heatmap_file : nullptr});
}

// "a,b" and repeated --keep: one list.
std::vector<std::string> keep_list(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const auto& part : given)
    for (auto& name : parse_column_list(part, "--keep")) out.push_back(std::move(name));
  return out;
}

// `option` (--weights, --heatmap) writes each query's weights: a query with a missing x has none.
void check_no_missing(const double* q, std::size_t m, std::size_t d, std::size_t first, const char* option) {
  for (std::size_t j = 0; j < m * d; ++j)
    if (std::isnan(q[j]))
      throw UsageError(std::string(option) + ": query " + std::to_string(first + j / d + 1) +
                       " has a missing x and no weights; drop such rows from the --query file");
}

// --se: every row's leave-one-out residual, and the band's setup (into band); `task` names the
// step for the progress bar.
LooDetail band_for(BandSetup& band, const PredictCommand& cmd, const Dataset& data, const Model& model,
                   const EngineOptions& engine, const Fitted& fitted, const Rows& rows, const char*& task) {
  task = "leave-one-out residuals";
  LooDetail loo = fitted.loo_residuals();
  task = cmd.simultaneous ? "the simultaneous band" : "predicting";
  set_band(band, cmd, data, model, engine, fitted, rows.x.data(), rows.x.size() / data.d);
  task = "predicting";
  return loo;
}

// Only predictions, line by line (CSV, TSV, JSON Lines): written in blocks as they are computed
// (a reader of the pipe sees the first rows at once), blocks growing from 256 rows so the
// threads stay busy; `done` counts the rows written, for the progress bar.
void write_blocks(const Run& a, OutputFile& out, const LooDetail* loo, const BandSetup& band, const Reach& reach,
                  std::size_t& done) {
  const std::size_t d = a.data.d;
  out.write([&](std::ostream& os) {
    PredictionWriter w(os, a.setup.format, a.model, a.columns, a.header);
    for (std::size_t size = 256; done < a.m; size = std::min<std::size_t>(size * 2, 65536)) {
      const std::size_t count = std::min(size, a.m - done);
      write_block(w, a.rows, d, a.first + done,
                  answer(a.fitted, a.q + done * d, count, d, a.first + done, loo, band, a.cmd.derivative,
                         {reach.policy, reach.past ? reach.past + done : nullptr}),
                  a.slope_cols);
      w.flush();
      done += count;
    }
    w.finish();
  });
  out.commit();
}

}  // namespace

void run_predict(const PredictCommand& given) {
  PredictCommand cmd = given;
  cmd.keep = keep_list(given.keep);
  const EndNote note(apply_like(cmd.engine, cmd.bandwidth));
  PredictSetup setup = check_predict(cmd);

  ThreadPool pool(cmd.engine.threads);
  report_threads(pool, std::cerr);
  Progress progress(!cmd.engine.quiet);
  const char* task = "predicting";
  std::size_t blocks_done = 0, block_rows = 0;
  EngineOptions engine = cmd.engine.options(pool);
  if (progress.active())
    // Predictions in blocks report their progress over all the rows: `block_rows` of them, the
    // first `blocks_done` already written.
    engine.progress = [&](std::size_t done, std::size_t total) {
      if (block_rows) progress.bar(task, blocks_done + done, block_rows);
      else progress.bar(task, done, total);
    };

  // Outputs are opened (as temporary files) before any work: a path that cannot be written
  // fails at once, and a signal from here on removes what was started.
  std::optional<OutputFile> weights_file, plot_file, heatmap_file;
  if (!cmd.weights.empty()) weights_file.emplace(cmd.weights, "--weights");
  if (!cmd.plot.empty()) plot_file.emplace(cmd.plot, "--plot");
  if (!cmd.heatmap.empty()) heatmap_file.emplace(cmd.heatmap, "--heatmap");
  OutputFile out(cmd.output, "-o");

  const std::optional<Model> from_file = cmd.model.empty() ? std::nullopt : std::optional(load_model(cmd.model));
  auto reader = open_csv(cmd.input.train, cmd.input, std::cin);
  Dataset data = load_training(*reader, cmd.input, from_file ? &*from_file : nullptr, std::cerr, cmd.model,
                               setup.fitted_values ? cmd.keep : std::vector<std::string>{});
  reader.reset();

  if (plot_file) check_picture(data, "--plot", 2);
  if (heatmap_file) check_picture(data, "--heatmap", 1);
  // Training rows nothing reads in their order (no in-sample output, no --weights or --heatmap,
  // whose columns they are, no --plot, which thins them by position, and no --se, whose band sums
  // residuals over the rows in their order) are given up as `fit` gives them up: where it pays
  // (x_in_place_pays) they are put in x order once the model is checked against them, and the
  // engines read x in place rather than each copying it (8 bytes a row less).
  const bool give_up = !setup.fitted_values && !weights_file && !heatmap_file && !plot_file && !cmd.se;
  if (give_up) engine.x_in_place = &data;
  auto choose_model = [&] {
    if (!from_file)  // (the learner sorts rows given up, where it pays)
      return give_up ? choose_bandwidth(std::move(data), setup.plan, engine, false, std::cerr, &progress)
                     : choose_bandwidth(data, setup.plan, engine, false, std::cerr, &progress);
    Model m = checked_model(*from_file, cmd.model, data);
    if (give_up && x_in_place_pays(data, m.kernel, !m.robustness.empty(), !m.score.distance() || m.metric.rank > 0))
      put_in_x_order(data);
    return m;
  };
  if (setup.streaming) {
    stream_queries(cmd, data, choose_model(), engine, setup.format, out);
    out.commit();
    return;
  }
  // The queries, and the checks on them, before the bandwidth is learned.
  const Rows rows = rows_for(cmd, data, std::move(setup.grid), setup.grid_time);
  const std::size_t first = setup.shard.first(rows.x.size() / data.d), last = setup.shard.last(rows.x.size() / data.d);
  const std::size_t m = last - first;
  const double* q = rows.x.data() + first * data.d;
  const bool header = setup.shard.k == 1;  // the first shard: CSV headers
  if (weights_file) check_weights_size(m, data.n, cmd.max_weights);
  if (weights_file || heatmap_file) check_no_missing(q, m, data.d, first, weights_file ? "--weights" : "--heatmap");
  const Model model = choose_model();
  const Fitted fitted(data, model, engine);
  const Unsupported policy = parse_unsupported(cmd.engine.out_of_reach);
  const PastRange past = TrainingRange(data).past(q, m);
  refuse_past(past, first, data, policy);
  BandSetup band;
  const std::optional<LooDetail> loo = cmd.se ? std::optional(band_for(band, cmd, data, model, engine, fitted, rows, task))
                                              : std::nullopt;
  PredictionWriter::Columns columns =
      output_columns(model, rows.kept_names, cmd.se, rows.y != nullptr, rows.kinds, cmd.derivative);
  columns.band = band_record(cmd, band);
  const std::vector<SlopeColumn> slope_cols = slope_columns(model, cmd.slope_unit);

  // Only predictions, line by line (CSV, TSV, JSON Lines): written in blocks as they are
  // computed. A JSON document, and every other output, once every row is known good.
  const Run run{cmd, setup, data, rows, model, fitted, engine, columns, slope_cols, q, m, first, header};
  const Reach reach{policy, past.past.data()};
  if (!weights_file && !plot_file && !heatmap_file && format_def(setup.format).shardable) {
    block_rows = m;
    write_blocks(run, out, loo ? &*loo : nullptr, band, reach, blocks_done);
  } else {
    const Block all = answer(fitted, q, m, data.d, first, loo ? &*loo : nullptr, band, cmd.derivative, reach);
    write_outputs(run, all, out, weights_file, plot_file, heatmap_file, task);
  }
  report_dropped(fitted, m, model, data);
  report_run_past(setup.shard, past, m, rows, data, policy, cmd.se);
  report_run_far(setup.shard, fitted, model, past, q, m, rows, data);
}

}  // namespace nwreg::cli
