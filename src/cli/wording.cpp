#include "cli/wording.h"

#include <algorithm>
#include <iterator>

namespace nwreg::cli {
namespace {

// The settings the core names that an option sets; each option is the name with dashes.
constexpr std::string_view settings[] = {
    "bandwidth", "categorical", "categorical_kernel", "criterion", "curve", "date_format", "decimal", "degree",
    "delimiter", "derivative", "epochs", "grid", "hidden", "init", "keep", "kernel", "leave_out", "level", "levels",
    "loo_rows", "lr", "method", "metric", "min_neighbours", "na", "null", "optimizer", "ordered", "out_of_reach",
    "permutations", "rank", "robust", "sample_weight", "score", "seed", "shard", "simultaneous", "tol", "tolerance",
    "weights_layout"};

}  // namespace

std::string option_name(std::string_view setting) {
  if (std::find(std::begin(settings), std::end(settings), setting) == std::end(settings)) return std::string(setting);
  std::string out = "--";
  for (char c : setting) out += c == '_' ? '-' : c;
  return out;
}

std::string in_cli_words(std::string_view text) {
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '\\' && i + 1 < text.size()) {
      out += text.substr(i, 2);
      ++i;
      continue;
    }
    if (c == '"') quoted = !quoted;
    const std::size_t end = c == '`' && !quoted ? text.find('`', i + 1) : std::string_view::npos;
    if (end != std::string_view::npos) {
      const std::string_view name = text.substr(i + 1, end - i - 1);
      const std::string option = option_name(name);
      if (option != name) {
        out += option;
        i = end;
        continue;
      }
    }
    out += c;
  }
  return out;
}

}  // namespace nwreg::cli
