#pragma once
/// The man page and the shell completions (bash, zsh, fish), generated from the same CLI11
/// definitions that parse the options and print --help: `nwreg generate man|bash|zsh|fish`
/// (hidden), run at build time and installed by `cmake --install`.

#include <ostream>
#include <string>

namespace CLI {  // CLI11's classes; the files that build the options include <CLI/CLI.hpp>
class App;
}  // namespace CLI

namespace nwreg::cli {

/// Writes the man page (roff) or a completion script for `kind`; throws UsageError for another
/// kind. `app` is nwreg's whole command line.
void generate(const CLI::App& app, const std::string& kind, const std::string& version, std::ostream& out);

}  // namespace nwreg::cli
