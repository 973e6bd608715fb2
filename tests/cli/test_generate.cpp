// The man page and the shell completions, generated from the option definitions (nwreg
// generate) and installed by `cmake --install`: every option of --help is in each; bash's
// completion, run in a real bash, offers the registry's kernels and criteria; a bad kind is a
// usage error.

#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <string>

#include "cli_helpers.h"

using namespace clitest;

namespace {

// The long options a command's --help lists.
std::set<std::string> help_options(const std::string& command) {
  const Result r = run_nwreg({command, "--help"});
  REQUIRE(r.exit_code == 0);
  std::set<std::string> out;
  const std::regex option(R"((^|[ ,])(--[a-z][a-z0-9-]+))");
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  -", 0) != 0) continue;  // option rows start with two blanks and a dash
    const std::string head = line.substr(0, line.find("  ", 2));
    for (std::sregex_iterator it(head.begin(), head.end(), option), end; it != end; ++it) out.insert((*it)[2]);
  }
  return out;
}

// What bash's completion offers for the words typed so far (the last one being completed).
std::string complete_in_bash(const Scratch& s, const std::string& words) {
  const Result script = run_nwreg({"generate", "bash"});
  REQUIRE(script.exit_code == 0);
  spit(s / "nwreg.bash", script.out);
  spit(s / "ask.sh", "source '" + (s / "nwreg.bash").string() + "'\nCOMP_WORDS=(" + words +
                         ")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_nwreg\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n");
  const std::string cmd = "bash '" + (s / "ask.sh").string() + "' > '" + (s / "out").string() + "' 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return slurp(s / "out");
}

}  // namespace

TEST_CASE("generate: the man page and every completion script name every option of --help") {
  for (const char* kind : {"man", "bash", "zsh", "fish"}) {
    const Result r = run_nwreg({"generate", kind});
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    for (const char* command : {"fit", "predict"})
      for (const std::string& option : help_options(command)) {
        if (option == "--help" || option == "--version") continue;
        // The man page writes dashes as \- (roff); fish names long options without dashes.
        const std::string as = std::string(kind) == "man"    ? std::regex_replace(option, std::regex("-"), "\\-")
                               : std::string(kind) == "fish" ? "-l " + option.substr(2)
                                                             : option;
        CAPTURE(kind);
        CAPTURE(option);
        CHECK(r.out.find(as) != std::string::npos);
      }
  }
  CHECK(run_nwreg({"generate", "man"}).out.rfind(".TH NWREG \"1\"", 0) == 0);
}

TEST_CASE("generate: bash completes commands, options and the registries' values") {
  Scratch s;
  CHECK(complete_in_bash(s, "nwreg p") == "predict\n");
  CHECK(complete_in_bash(s, "nwreg fit --kern") == "--kernel\n");
  CHECK(complete_in_bash(s, "nwreg fit --kernel ''") == "gaussian\nlaplace\nepanechnikov\ntricube\nuniform\n");
  CHECK(complete_in_bash(s, "nwreg fit --criterion ''") == "loo\naicc\ngcv\n");
  CHECK(complete_in_bash(s, "nwreg predict --format j") == "json\njsonl\n");
  CHECK(complete_in_bash(s, "nwreg help ''") == "fit\npredict\ntest\n");
  CHECK(complete_in_bash(s, "nwreg fit -b k") == "knn:auto\n");
  // --opt=value: bash splits the words at '=' (COMP_WORDBREAKS); the option is the word before.
  CHECK(complete_in_bash(s, "nwreg fit --kernel =") == "gaussian\nlaplace\nepanechnikov\ntricube\nuniform\n");
  CHECK(complete_in_bash(s, "nwreg fit --kernel = ep") == "epanechnikov\n");
  CHECK(complete_in_bash(s, "nwreg predict --format = j") == "json\njsonl\n");
}

TEST_CASE("generate: zsh's specs carry the options' exclusion groups") {
  const Result r = run_nwreg({"generate", "zsh"});
  REQUIRE(r.exit_code == 0);
  for (const char* spec : {"'(--grid-n --query)--grid[", "'(--grid --query)--grid-n[", "'(--grid --grid-n)--query["})
    CHECK(r.out.find(spec) != std::string::npos);
}

TEST_CASE("generate: an unknown kind is a usage error") {
  const Result r = run_nwreg({"generate", "powershell"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "nwreg: error: generate: unknown kind \"powershell\" (known: man, bash, zsh, fish)\n");
  CHECK(r.out.empty());
}

TEST_CASE("generate: hidden from the help") {
  CHECK(run_nwreg({"--help"}).out.find("generate") == std::string::npos);
}
