// nwreg: Nadaraya-Watson kernel regression as attention pooling, from the command line.
// Errors are caught here, once: one line on stderr and the exit code (docs/errors.md).

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <iostream>
#include <sstream>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/generate.h"
#include "cli/output_file.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

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

// Every whole-number option is read one way: decimal digits (a sign only where negatives mean
// something), within its type's range. CLI11 alone reads 0x10 as 16 and wraps -1 to 2^64 - 1.
void refuse_loose_integers(const CLI::App& sub) {
  for (const CLI::Option* opt : sub.get_options()) {
    // (CLI11 names the type INT or UINT, followed by a check's text where there is one)
    const std::string name_of_type = opt->get_type_name();
    const std::string type = name_of_type.rfind("UINT", 0) == 0 ? "UINT" : name_of_type.rfind("INT", 0) == 0 ? "INT" : "";
    if (type.empty()) continue;
    for (const std::string& value : opt->results()) {
      const bool negative = !value.empty() && value[0] == '-';
      bool digits = value.size() > (negative ? 1u : 0u);
      for (std::size_t i = negative ? 1 : 0; i < value.size(); ++i) digits = digits && value[i] >= '0' && value[i] <= '9';
      const std::string name = opt->get_name();
      if (!digits || (negative && type == "UINT"))
        throw nwreg::UsageError(name + ": expected a whole number" + (type == "UINT" ? " from 0" : "") +
                                ", in decimal digits, got " + nwreg::quote(value));
      long long s = 0;
      unsigned long long u = 0;
      const auto r = type == "UINT" ? std::from_chars(value.data(), value.data() + value.size(), u)
                                    : std::from_chars(value.data(), value.data() + value.size(), s);
      if (r.ec != std::errc()) throw nwreg::UsageError(name + ": " + nwreg::quote(value) + " is out of range");
      if (name == "--threads" && u > nwreg::cli::max_threads)
        throw nwreg::UsageError("--threads: at most " + std::to_string(nwreg::cli::max_threads) + ", got " + value);
    }
  }
}

// TRAIN left out: standard input, unless it is a terminal (nobody is typing a CSV file).
std::string default_train() {
  if (isatty(STDIN_FILENO))
    throw nwreg::UsageError("TRAIN is required: a CSV file, or - for standard input (it is a terminal here)");
  return "-";
}

// Help that fits 80 columns (the man page is made from it): option names and their value
// types in a column, each description wrapped beside or below them; CLI11's "Excludes:" lists
// left to the descriptions, which say them in words.
class Formatter : public CLI::Formatter {
 public:
  static constexpr std::size_t width = 80, indent = 30;

  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string s = CLI::Formatter::make_option_opts(opt);
    for (const char* cut : {" Excludes:", " Needs:"})
      if (const auto at = s.find(cut); at != std::string::npos) s.erase(at);
    return s;
  }

  // A section: its name and its options, one blank line before it (not two).
  std::string make_group(std::string group, bool positional, std::vector<const CLI::Option*> opts) const override {
    std::string out = group + ":\n";
    for (const CLI::Option* opt : opts) out += make_option(opt, positional);
    return out;
  }

  std::string make_usage(const CLI::App* app, std::string name) const override {
    return CLI::Formatter::make_usage(app, std::move(name)) + "\n";
  }
  std::string make_positionals(const CLI::App* app) const override {
    const std::string p = CLI::Formatter::make_positionals(app);
    return p.empty() ? p : p + "\n";
  }

  std::string make_option(const CLI::Option* opt, bool positional) const override {
    return entry(make_option_name(opt, positional) + make_option_opts(opt), make_option_desc(opt));
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    return entry(sub->get_display_name(true), sub->get_description());
  }

 private:
  // "  NAME   description..." with the description wrapped at `width`, beside the name or, for
  // a long name, below it.
  static std::string entry(const std::string& name, const std::string& description) {
    std::string out = "  " + name, line;
    std::vector<std::string> lines;
    std::istringstream words(description);
    for (std::string word; words >> word;) {
      if (!line.empty() && indent + line.size() + 1 + word.size() > width) lines.push_back(std::move(line)), line.clear();
      line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) lines.push_back(line);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i == 0 && out.size() + 2 <= indent) out += std::string(indent - out.size(), ' ') + lines[0];
      else out += "\n" + std::string(indent, ' ') + lines[i];
    }
    return out + "\n";
  }
};

// Levenshtein distance, for "did you mean".
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// " (did you mean --bandwidth?)" for an option of `app` within two edits of the first unknown
// argument of an ExtrasError, else "".
std::string suggestion(const CLI::App& app, const std::string& what) {
  const std::string marker = "not expected: ";
  const auto at = what.find(marker);
  if (at == std::string::npos) return "";
  std::istringstream words(what.substr(at + marker.size()));
  std::string word;
  while (words >> word && word.rfind("--", 0) != 0) {
  }
  word = word.substr(0, word.find('='));
  if (word.rfind("--", 0) != 0) return "";
  std::string best;
  std::size_t best_d = 3;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& name : o->get_lnames()) {
      const std::size_t d = edit_distance(word, "--" + name);
      if (d < best_d) best_d = d, best = "--" + name;
    }
  }
  if (best_d == 0) return " (" + best + " is an option of the command: give it after the command's name, before any --)";
  return best.empty() ? "" : " (did you mean " + best + "?)";
}

}  // namespace

// Flushes standard output: 0, or where the reader went away (| head) a quiet end as by SIGPIPE,
// like other filters; else the error `why`. errno is cleared before the writing starts.
int finish_stdout(const char* why) {
  std::cout.flush();
  if (std::cout) return 0;
  if (errno == EPIPE) {
    std::signal(SIGPIPE, SIG_DFL);
    std::raise(SIGPIPE);
  }
  return fail(exit_data, why);
}

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // A closed pipe shows up as EPIPE on write, so temporary files are removed before exiting.
  std::signal(SIGPIPE, SIG_IGN);
  nwreg::cli::install_signal_cleanup();

  CLI::App app{"nwreg: Nadaraya-Watson kernel regression as attention pooling.\n"
               "Each query attends to the training x through a softmax over Gaussian kernel\n"
               "scores; its prediction is the attention-weighted mean of the training y."};
  app.name("nwreg");
  app.formatter(std::make_shared<Formatter>());
  app.set_version_flag("--version", "nwreg " NWREG_VERSION);
  app.require_subcommand(1);
  app.footer("Run nwreg <command> --help for a command's options and examples.\n"
             "Exit codes: 0 ok, 1 data or runtime error, 2 usage error.");
  nwreg::cli::FitCommand fit;
  nwreg::cli::PredictCommand predict;
  nwreg::cli::TestCommand test;
  CLI::App* fit_app = nwreg::cli::setup_fit(app, fit);
  CLI::App* predict_app = nwreg::cli::setup_predict(app, predict);
  CLI::App* test_app = nwreg::cli::setup_test(app, test);
  std::string help_topic;
  CLI::App* help_app = app.add_subcommand("help", "Show the help of nwreg, or of one command: nwreg help fit");
  help_app->add_option("COMMAND", help_topic, "fit, predict or test");
  // Hidden: the man page and shell completions, made from these definitions at build time.
  std::string generate_kind;
  CLI::App* generate_app = app.add_subcommand("generate", "Write the man page or a shell completion script");
  generate_app->group("");
  generate_app->add_option("KIND", generate_kind, "man, bash, zsh or fish")->required();

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
    const CLI::App* parsed = &app;
    for (const CLI::App* sub : {fit_app, predict_app, test_app})
      if (sub->parsed()) parsed = sub;
    const std::string where = parsed == &app ? "nwreg --help" : "nwreg " + parsed->get_name() + " --help";
    // CLI11 echoes the value as given: escaped and cut short here, one line.
    return fail(exit_usage, nwreg::escape_excerpt(e.what(), 300) + suggestion(*parsed, e.what()) + " (see " + where + ")");
  }

  try {
    errno = 0;  // (finish_stdout tells a closed pipe by it)
    if (help_app->parsed()) {
      // What --help prints (app.help() would show the help subcommand's own).
      const auto formatter = app.get_formatter();
      if (help_topic.empty()) std::cout << formatter->make_help(&app, "nwreg", CLI::AppFormatMode::Normal);
      else if (help_topic == "fit") std::cout << fit_app->help("nwreg");
      else if (help_topic == "predict") std::cout << predict_app->help("nwreg");
      else if (help_topic == "test") std::cout << test_app->help("nwreg");
      else throw nwreg::UsageError("help: unknown command " + nwreg::quote(help_topic) + " (known: fit, predict, test)");
      return finish_stdout("cannot write the help to standard output");
    }
    if (generate_app->parsed()) {
      nwreg::cli::generate(app, generate_kind, NWREG_VERSION, std::cout);
      return finish_stdout("cannot write to standard output");
    }
    for (const CLI::App* sub : {fit_app, predict_app, test_app})
      if (sub->parsed()) {
        refuse_empty_values(*sub);
        refuse_loose_integers(*sub);
      }
    if (fit_app->parsed() && fit.trains.empty()) fit.trains = {default_train()};
    if (predict_app->parsed() && predict.input.train.empty()) predict.input.train = default_train();
    if (test_app->parsed() && test.trains.empty()) test.trains = {default_train()};
    if (fit_app->parsed() && !nwreg::cli::run_fit(fit)) return exit_data;
    if (predict_app->parsed()) nwreg::cli::run_predict(predict);
    if (test_app->parsed() && !nwreg::cli::run_test(test)) return exit_data;
  } catch (const nwreg::OutputError& e) {
    if (e.broken_pipe()) {
      // The reader went away (| head): end quietly, as if by SIGPIPE, like other filters.
      std::signal(SIGPIPE, SIG_DFL);
      std::raise(SIGPIPE);
    }
    return fail(exit_data, e.what());
  } catch (const nwreg::UsageError& e) {
    return fail(exit_usage, nwreg::cli::error_message(e));
  } catch (const nwreg::Error& e) {
    return fail(exit_data, nwreg::cli::error_message(e));
  } catch (const std::bad_alloc&) {
    return fail(exit_data, "out of memory");
  } catch (const std::exception& e) {
    return fail(exit_data, e.what());
  }
  return 0;
}
