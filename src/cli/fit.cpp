#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/output_file.h"
#include "nwreg/errors.h"
#include "nwreg/numbers.h"
#include "nwreg/thread_pool.h"

namespace nwreg::cli {

CLI::App* setup_fit(CLI::App& app, FitCommand& cmd) {
  CLI::App* sub = app.add_subcommand("fit", "Learn the bandwidth and report it with its leave-one-out error");
  add_input_options(*sub, cmd.input);
  add_bandwidth_options(*sub, cmd.bandwidth);
  add_engine_options(*sub, cmd.engine);
  sub->add_option("-o,--output", cmd.output, "Write the model (JSON) to this file; - for stdout");
  sub->add_option("--format", cmd.format, "Report on stdout: text or json (the model)")
      ->capture_default_str();
  sub->footer(R"(Examples:
  nwreg fit data/synthetic.csv                       learn h, print h and the LOO error
  nwreg fit data/mcycle.csv -o mcycle.json           ... and save the model for predict --model
  nwreg fit data/faithful.csv -x waiting -y eruptions --verbose
  nwreg fit data.csv --bandwidth 0.3                 LOO error at a fixed h
  nwreg fit data/synthetic.csv --optimizer sgd --param w --init-w 0.3 --loss sum --lr 0.5 --epochs 5
                                                     the d2l textbook's training run)");
  return sub;
}

void run_fit(const FitCommand& cmd) {
  if (cmd.format != "text" && cmd.format != "json")
    throw UsageError("--format: unknown format \"" + cmd.format + "\" (known: text, json)");
  const BandwidthPlan plan = plan_bandwidth(cmd.bandwidth);
  check_tolerance(cmd.engine.tolerance);
  std::optional<OutputFile> model_file;  // opened first: an unwritable path fails at once
  if (!cmd.output.empty() && cmd.output != "-") model_file.emplace(cmd.output, "-o");
  auto reader = open_csv(cmd.input.train, cmd.input, std::cin);
  const Dataset data = load_training(*reader, cmd.input, nullptr);
  ThreadPool pool(cmd.engine.threads);
  const Model m = choose_bandwidth(data, plan, cmd.engine.options(pool), true, std::cerr);

  const bool json_to_stdout = cmd.output == "-" || (cmd.output.empty() && cmd.format == "json");
  if (model_file) {
    model_file->write([&](std::ostream& os) { write_model(os, m); });
    model_file->commit();
  }
  OutputFile out("-", "stdout");
  if (json_to_stdout) {
    out.write([&](std::ostream& os) { write_model(os, m); });
  } else {
    std::string bw;
    for (double h : m.bandwidth) bw += (bw.empty() ? "" : " ") + format_double(h);
    std::ostream& s = out.stream();
    s << "bandwidth: " << bw << '\n'
      << "loo_mse: " << (m.loo_mse ? format_double(*m.loo_mse) : "none") << '\n'
      << "n: " << m.n << '\n'
      << "source: " << m.bandwidth_source << '\n';
    if (!m.history.empty())
      s << "epochs: " << m.history.back().epoch << " (" << m.stop_reason << ")\n";
  }
  out.commit();
}

}  // namespace nwreg::cli
