#pragma once
// The core speaks of its settings by their own names, written `name` in its messages
// (`bandwidth`, `min_neighbours`, `out_of_reach`); ParameterError carries the setting it is
// about. Here alone those names become the options that set them (--bandwidth,
// --min-neighbours, --out-of-reach). No CLI11: the tests read the same table.

#include <string>
#include <string_view>

namespace nwreg::cli {

/// The option that sets the core's setting `setting` ("min_neighbours" -> "--min-neighbours"),
/// or `setting` itself where no option does.
std::string option_name(std::string_view setting);

/// `text` with each `setting` outside double quotes (quoted input stays as it was) written as
/// its option.
std::string in_cli_words(std::string_view text);

}  // namespace nwreg::cli
