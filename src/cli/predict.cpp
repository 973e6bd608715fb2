#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/output_file.h"
#include "nwreg/attention.h"
#include "nwreg/errors.h"
#include "nwreg/estimator.h"
#include "nwreg/grid.h"
#include "nwreg/numbers.h"
#include "nwreg/plot.h"
#include "nwreg/thread_pool.h"
#include "nwreg/writers.h"
#include "nwreg/csv.h"

namespace nwreg::cli {
namespace {

Model load_model(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "", "is a directory, not a file");
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  return read_model(in, path);
}

// The query points: `grid` (parsed before the data were read), an even grid over the data,
// a query file, or the training x.
std::string describe_columns(const std::vector<std::string>& x, const std::string& y) {
  std::string s = "x column";
  if (x.size() > 1) s += "s";
  for (std::size_t i = 0; i < x.size(); ++i) s += (i ? ", " : " ") + quote(x[i]);
  return s + " and y column " + quote(y);
}

std::vector<double> queries_for(const PredictCommand& cmd, const Dataset& data, std::vector<double> grid) {
  if (!cmd.grid.empty() || cmd.grid_n > 0) {
    if (data.d != 1) throw UsageError("--grid: only for one x column; give --query FILE");
    if (!cmd.grid.empty()) return grid;
    if (cmd.grid_n > max_grid_points)
      throw UsageError("--grid-n: at most " + std::to_string(max_grid_points) + " points");
    const ColumnStats s = column_stats(data, 0);
    double lo = data.x[0];
    for (double v : data.x) lo = std::min(lo, v);
    return linspace(lo, lo + s.range, cmd.grid_n);
  }
  if (!cmd.query.empty()) {
    auto reader = open_csv(cmd.query, cmd.input, std::cin);
    std::vector<double> q = read_queries(*reader, data);
    report_skipped(*reader, "query row", std::cerr);
    return q;
  }
  return data.x;  // fitted values at the training points
}

// The model read with --model, checked against the data it is to be used with.
Model checked_model(Model model, const std::string& path, const Dataset& data) {
  if (model.x_columns != data.x_names || model.y_column != data.y_name)
    throw InputError(path, 0, "",
                     "fitted on " + describe_columns(model.x_columns, model.y_column) + ", not on " +
                         describe_columns(data.x_names, data.y_name) + " of " + data.source);
  const std::string sum = checksum(data);
  if (sum != model.checksum || model.n != data.n)
    std::cerr << "nwreg: warning: " << data.source << " is not the data " << path << " was fitted on (" << data.n
              << " rows, " << sum << "; the model has " << model.n << " rows, " << model.checksum << ")\n";
  model.bandwidth_source = "model";
  model.n = data.n;
  model.checksum = sum;
  model.history.clear();
  return model;
}

// A size for people: "29 kB", "2.1 GB".
std::string about_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 999.5 && u < 6) bytes /= 1000, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes < 9.95 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

// "h = 0.2685 (learned)", plus the kernel and method when not the defaults: for picture titles.
std::string bandwidth_label(const Model& model) {
  char h[64];
  std::snprintf(h, sizeof h, "h = %.4g (%s)", model.bandwidth[0], model.bandwidth_source.c_str());
  std::string label = h;
  if (model.kernel != Kernel::gaussian) label += ", " + to_string(model.kernel);
  if (model.method != Method::nw) label += ", " + to_string(model.method);
  return label;
}

// The value columns: the prediction, and with --se its standard error and band.
std::vector<ValueColumn> value_columns(const std::vector<double>& pred, const Band* band) {
  std::vector<ValueColumn> c{{"prediction", pred.data()}};
  if (band) {
    c.push_back({"se", band->se.data()});
    c.push_back({"lower", band->lower.data()});
    c.push_back({"upper", band->upper.data()});
  }
  return c;
}

// Reads queries from stdin line by line and writes each prediction (JSONL) as soon as it is
// made: memory stays bounded however long the stream.
void stream_queries(const PredictCommand& cmd, const Dataset& data, const Model& model, const EngineOptions& engine,
                    OutputFile& out) {
  CsvReader reader(std::cin, "<stdin>", csv_options(cmd.input), true);
  const std::vector<std::size_t> columns = query_columns(reader, data);
  EngineOptions one = engine;
  one.pool = nullptr;
  one.progress = nullptr;
  const Fitted fitted(data, model, one);
  std::optional<LooDetail> loo;
  if (cmd.se) loo = Fitted(data, model, engine).loo_detail();
  std::vector<double> q(data.d), f(1);
  std::string line;
  out.write([&](std::ostream& os) {
    while (reader.next_numeric(columns, q.data())) {
      std::optional<Band> band;
      if (loo) band = fitted.predict_band(q.data(), 1, cmd.level, *loo, f.data());
      else fitted.predict(q.data(), 1, f.data());
      line.clear();
      append_jsonl(line, model.x_columns, q.data(), data.d, value_columns(f, band ? &*band : nullptr), 0);
      os.write(line.data(), static_cast<std::streamsize>(line.size()));
      os.flush();
      check_stream(os);
    }
  });
  report_skipped(reader, "query row", std::cerr);
}

}  // namespace

CLI::App* setup_predict(CLI::App& app, PredictCommand& cmd) {
  CLI::App* sub = app.add_subcommand("predict", "Predict by attention pooling; optionally write the attention weights");
  add_input_options(*sub, cmd.input);
  add_bandwidth_options(*sub, cmd.bandwidth);
  add_engine_options(*sub, cmd.engine);
  auto* model = sub->add_option("--model", cmd.model,
                                "Use the bandwidth (kernel, method, metric) of a model written by fit -o");
  for (const char* o : {"--bandwidth", "--kernel", "--method", "--metric", "--rank", "--leave-out"}) sub->get_option(o)->excludes(model);
  auto* grid = sub->add_option("--grid", cmd.grid, "Query points START:STOP:STEP (stop excluded)");
  auto* grid_n = sub->add_option("--grid-n", cmd.grid_n, "N query points spanning the training x range")
                     ->check(CLI::Range(std::size_t{1}, max_grid_points));
  auto* query = sub->add_option("--query", cmd.query, "Query points from a CSV file (- for stdin)");
  grid->excludes(grid_n)->excludes(query);
  grid_n->excludes(query);
  sub->add_option("-o,--output", cmd.output, "Predictions file; - for stdout")->capture_default_str();
  sub->add_option("--format", cmd.format,
                  "csv, tsv, json or jsonl (one object a line, written as computed; with --query - each "
                  "query is answered as it arrives), for -o and --weights. Default: from each file's name (.csv, "
                  ".tsv, .json, .jsonl, .ndjson), else csv");
  sub->add_option("--weights", cmd.weights,
                  "Also write the attention-weight matrix to this file (format from its name, or --format)");
  sub->add_option("--weights-layout", cmd.weights_layout,
                  "wide: one row per query; long: one query,key,weight row per pair")
      ->capture_default_str();
  sub->add_option("--plot", cmd.plot, "Draw the training points and the fitted curve to this SVG file");
  sub->add_option("--heatmap", cmd.heatmap,
                  "Draw the attention-weight matrix (queries by keys, sorted by x) to this SVG file");
  sub->add_option("--shard", cmd.shard,
                  "K/N: compute only the K-th of N equal slices of the queries; the N outputs, joined "
                  "in order, are the whole output (csv and jsonl)");
  sub->add_flag("--se", cmd.se,
                "Add pointwise standard errors and a confidence band: columns se, lower, upper (see README, "
                "\"Standard errors\")");
  sub->add_option("--level", cmd.level, "Confidence level of the --se band")->capture_default_str();
  sub->add_option("--max-weights", cmd.max_weights,
                  "Refuse a --weights matrix of more entries than this (m queries x n keys)")
      ->capture_default_str();
  sub->footer(R"(Without --grid, --grid-n or --query, predicts at the training x (fitted values).
Examples:
  nwreg predict data/synthetic.csv --grid 0:5:0.1          learn h, predict on a grid
  nwreg predict data/mcycle.csv --bandwidth 2 --grid-n 200 -o fit.csv
  nwreg predict data/mcycle.csv --model mcycle.json --query new_times.csv
  nwreg predict data/synthetic.csv --grid 0:5:0.5 --weights weights.csv --weights-layout long
  seq 0 0.5 5 | nwreg predict data/synthetic.csv --query -      queries from stdin)");
  return sub;
}

namespace {

// --plot and --heatmap write SVG: a file name must say so (stdout and devices are taken as they
// are). Throws UsageError naming `option`.
void check_svg_name(const std::string& path, const char* option) {
  if (path.empty() || path == "-" || path.rfind("/dev/", 0) == 0 || path.rfind("/proc/self/fd/", 0) == 0) return;
  if (!has_extension(path, ".svg"))
    throw UsageError(std::string(option) + ": writes SVG; give a file name ending in .svg (or - for stdout), got " +
                     quote(path));
}

}  // namespace

void run_predict(const PredictCommand& cmd) {
  const Format format = cmd.format.empty() ? format_for_path(cmd.output, Format::csv)
                                           : parse_format(cmd.format, "--format");
  const WeightsLayout layout = parse_layout(cmd.weights_layout);
  if (cmd.query == "-" && cmd.input.train == "-")
    throw UsageError("--query -: standard input already carries the training data");
  std::vector<double> grid = cmd.grid.empty() ? std::vector<double>{} : parse_grid(cmd.grid);
  const Shard shard = cmd.shard.empty() ? Shard{} : parse_shard(cmd.shard);
  // Each output file's format follows its name; --format overrides both.
  const Format weights_format = cmd.format.empty() ? format_for_path(cmd.weights, Format::csv) : format;
  check_svg_name(cmd.plot, "--plot");
  check_svg_name(cmd.heatmap, "--heatmap");
  if (!cmd.shard.empty() && (format == Format::json || (!cmd.weights.empty() && weights_format == Format::json)))
    throw UsageError("--shard: JSON output cannot be joined from pieces; use csv or jsonl");
  // A stream of queries on stdin, answered one by one as they arrive.
  const bool streaming = format == Format::jsonl && cmd.query == "-" && cmd.weights.empty() && cmd.shard.empty() &&
                         cmd.plot.empty() && cmd.heatmap.empty();
  const BandwidthPlan plan = plan_bandwidth(cmd.bandwidth, cmd.engine);
  check_input_options(cmd.input);
  if (cmd.model.empty()) check_plan_columns(plan, cmd.engine, cmd.input);
  if (cmd.se) check_level(cmd.level);
  check_tolerance(cmd.engine.tolerance);
  std::vector<FileUse> uses{{cmd.input.train, "the training data", false}, {cmd.output, "-o", true}};
  if (!cmd.model.empty()) uses.push_back({cmd.model, "the --model file", false});
  if (!cmd.query.empty()) uses.push_back({cmd.query, "the --query file", false});
  for (auto [path, option] : {std::pair{&cmd.weights, "--weights"}, {&cmd.plot, "--plot"}, {&cmd.heatmap, "--heatmap"}})
    if (!path->empty()) uses.push_back({*path, option, true});
  check_distinct(uses);

  ThreadPool pool(cmd.engine.threads);
  report_threads(pool, std::cerr);
  Progress progress(!cmd.engine.quiet);
  const char* task = "predicting";
  EngineOptions engine = cmd.engine.options(pool);
  if (progress.active())
    engine.progress = [&](std::size_t done, std::size_t total) { progress.bar(task, done, total); };

  // Outputs are opened (as temporary files) before any work: a path that cannot be written
  // fails at once, and a signal from here on removes what was started.
  std::optional<OutputFile> weights_file, plot_file, heatmap_file;
  if (!cmd.weights.empty()) weights_file.emplace(cmd.weights, "--weights");
  if (!cmd.plot.empty()) plot_file.emplace(cmd.plot, "--plot");
  if (!cmd.heatmap.empty()) heatmap_file.emplace(cmd.heatmap, "--heatmap");
  OutputFile out(cmd.output, "-o");

  std::optional<Model> from_file;
  if (!cmd.model.empty()) from_file = load_model(cmd.model);
  auto reader = open_csv(cmd.input.train, cmd.input, std::cin);
  const Dataset data = load_training(*reader, cmd.input, from_file ? &*from_file : nullptr, std::cerr, cmd.model);
  reader.reset();

  if ((plot_file || heatmap_file) && data.d != 1)
    throw UsageError(std::string(plot_file ? "--plot" : "--heatmap") + ": only for one x column");
  auto choose_model = [&] {
    return from_file ? checked_model(*from_file, cmd.model, data)
                     : choose_bandwidth(data, plan, engine, false, std::cerr, &progress);
  };
  if (streaming) {
    stream_queries(cmd, data, choose_model(), engine, out);
    out.commit();
    return;
  }
  // The queries, and the checks on them, before the bandwidth is learned.
  std::vector<double> q = queries_for(cmd, data, std::move(grid));
  const std::size_t first = shard.first(q.size() / data.d), last = shard.last(q.size() / data.d);
  q = std::vector<double>(q.begin() + static_cast<std::ptrdiff_t>(first * data.d),
                          q.begin() + static_cast<std::ptrdiff_t>(last * data.d));
  const std::size_t m = q.size() / data.d;
  const bool header = shard.k == 1;
  if (weights_file) {
    const double entries = static_cast<double>(m) * static_cast<double>(data.n);
    if (entries > static_cast<double>(cmd.max_weights))
      throw UsageError("--weights: " + std::to_string(m) + " queries x " + std::to_string(data.n) + " keys = " +
                       std::to_string(static_cast<unsigned long long>(entries)) + " entries (about " + about_bytes(entries * 20) +
                       " as text), over the limit of " + std::to_string(cmd.max_weights) +
                       "; raise it with --max-weights");
  }
  const Model model = choose_model();
  const Fitted fitted(data, model, engine);
  std::vector<double> pred(m);
  std::optional<Band> band;
  if (cmd.se) {
    task = "leave-one-out residuals";
    const LooDetail loo = fitted.loo_detail();
    task = "predicting";
    band = fitted.predict_band(q.data(), m, cmd.level, loo, pred.data());
  } else {
    fitted.predict(q.data(), m, pred.data());
  }

  // Every output is written before any is committed, files before standard output: a failure
  // anywhere (a full disk) leaves every file as it was and, where it can, stdout untouched.
  std::vector<std::pair<OutputFile*, std::function<void()>>> writes;
  if (weights_file)
    writes.emplace_back(&*weights_file, [&] {
      task = "writing weights";
      weights_file->write([&](std::ostream& os) {
        WeightsWriter w(os, weights_format, layout, data,
                        q.data(), m, first, header);
        fitted.weights(q.data(), m, [&](std::size_t i, const double* a) { w.row(i, a); });
        w.finish();
      });
    });
  writes.emplace_back(&out, [&] {
    out.write([&](std::ostream& os) {
      write_predictions(os, format, model, q.data(), m, data.d, value_columns(pred, band ? &*band : nullptr), header);
    });
  });
  if (plot_file)
    writes.emplace_back(&*plot_file, [&] {
      FitPlot p{data.x,
                data.y,
                q,
                pred,
                band ? band->lower : std::vector<double>{},
                band ? band->upper : std::vector<double>{},
                data.x_names[0],
                data.y_name,
                "nwreg: " + bandwidth_label(model) + ", n = " + std::to_string(data.n)};
      if (model.loo_mse) {
        char loo[48];
        std::snprintf(loo, sizeof loo, ", LOO MSE %.4g", *model.loo_mse);
        p.title += loo;
      }
      plot_file->write([&](std::ostream& os) { write_fit_svg(os, p); });
    });
  if (heatmap_file)
    writes.emplace_back(&*heatmap_file, [&] {
      task = "drawing the heat map";
      Heatmap map(q, data.x);
      fitted.weights(q.data(), m, [&](std::size_t i, const double* a) { map.row(i, a); });
      heatmap_file->write(
          [&](std::ostream& os) { map.write_svg(os, data.x_names[0], "attention weights, " + bandwidth_label(model)); });
    });
  std::stable_partition(writes.begin(), writes.end(), [](const auto& w) { return !w.first->in_place(); });
  for (auto& w : writes) w.second();
  OutputFile::commit_all({&out, weights_file ? &*weights_file : nullptr, plot_file ? &*plot_file : nullptr,
                          heatmap_file ? &*heatmap_file : nullptr});
}

}  // namespace nwreg::cli
