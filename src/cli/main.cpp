// nwreg: Nadaraya-Watson kernel regression as attention pooling, from the command line.
// Errors are caught here, once: one line on stderr and the exit code (README, "Exit codes").

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <csignal>
#include <iostream>

#include "cli/commands.h"
#include "cli/output_file.h"
#include "nwreg/errors.h"
#include "nwreg/numbers.h"

#ifndef NWREG_VERSION
#define NWREG_VERSION "unknown"
#endif

namespace {

constexpr int exit_data = 1;
constexpr int exit_usage = 2;

int fail(int code, const std::string& what) {
  std::cerr << "nwreg: error: " << what << '\n';
  return code;
}

// CLI11 reads an empty value as 0 for numbers (--threads '') and as "not given" for files
// (-o ''): no option of nwreg means anything by an empty value, so each is refused at once.
void refuse_empty_values(const CLI::App& sub) {
  for (const CLI::Option* opt : sub.get_options())
    for (const std::string& value : opt->results())
      if (value.empty())
        throw nwreg::UsageError((opt->get_snames().empty() ? opt->get_name() : "-" + opt->get_snames()[0]) +
                                ": empty value");
}

// TRAIN left out: standard input, unless it is a terminal (nobody is typing a CSV file).
std::string default_train() {
  if (isatty(STDIN_FILENO))
    throw nwreg::UsageError("TRAIN is required: a CSV file, or - for standard input (it is a terminal here)");
  return "-";
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // A closed pipe shows up as EPIPE on write, so temporary files are removed before exiting.
  std::signal(SIGPIPE, SIG_IGN);
  nwreg::cli::install_signal_cleanup();

  CLI::App app{"nwreg: Nadaraya-Watson kernel regression as attention pooling.\n"
               "Each query attends to the training x through a softmax over Gaussian kernel\n"
               "scores; its prediction is the attention-weighted mean of the training y."};
  app.name("nwreg");
  app.set_version_flag("--version", "nwreg " NWREG_VERSION);
  app.require_subcommand(1);
  app.footer("Run nwreg <command> --help for a command's options and examples.\n"
             "Exit codes: 0 ok, 1 data or runtime error, 2 usage error.");
  nwreg::cli::FitCommand fit;
  nwreg::cli::PredictCommand predict;
  CLI::App* fit_app = nwreg::cli::setup_fit(app, fit);
  CLI::App* predict_app = nwreg::cli::setup_predict(app, predict);
  std::string help_topic;
  CLI::App* help_app = app.add_subcommand("help", "Show the help of nwreg, or of one command: nwreg help fit");
  help_app->add_option("COMMAND", help_topic, "fit or predict");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Point at the help of the command whose options were being read.
    const char* where = fit_app->parsed() ? "nwreg fit --help" : predict_app->parsed() ? "nwreg predict --help"
                                                                                        : "nwreg --help";
    return fail(exit_usage, std::string(e.what()) + " (see " + where + ")");
  }

  try {
    if (help_app->parsed()) {
      // What --help prints (app.help() would show the help subcommand's own).
      const auto formatter = app.get_formatter();
      if (help_topic.empty()) std::cout << formatter->make_help(&app, "nwreg", CLI::AppFormatMode::Normal);
      else if (help_topic == "fit") std::cout << fit_app->help("nwreg");
      else if (help_topic == "predict") std::cout << predict_app->help("nwreg");
      else throw nwreg::UsageError("help: unknown command " + nwreg::quote(help_topic) + " (known: fit, predict)");
      std::cout.flush();
      return std::cout ? 0 : fail(exit_data, "cannot write the help to standard output");
    }
    for (const CLI::App* sub : {fit_app, predict_app})
      if (sub->parsed()) refuse_empty_values(*sub);
    if (fit_app->parsed() && fit.trains.empty()) fit.trains = {default_train()};
    if (predict_app->parsed() && predict.input.train.empty()) predict.input.train = default_train();
    if (fit_app->parsed() && !nwreg::cli::run_fit(fit)) return exit_data;
    if (predict_app->parsed()) nwreg::cli::run_predict(predict);
  } catch (const nwreg::OutputError& e) {
    if (e.broken_pipe()) {
      // The reader went away (| head): end quietly, as if by SIGPIPE, like other filters.
      std::signal(SIGPIPE, SIG_DFL);
      std::raise(SIGPIPE);
    }
    return fail(exit_data, e.what());
  } catch (const nwreg::UsageError& e) {
    return fail(exit_usage, e.what());
  } catch (const nwreg::Error& e) {
    return fail(exit_data, e.what());
  } catch (const std::bad_alloc&) {
    return fail(exit_data, "out of memory");
  } catch (const std::exception& e) {
    return fail(exit_data, e.what());
  }
  return 0;
}
