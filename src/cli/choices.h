#pragma once
// The command line's own closed choices, each one table (base/choice.h) that its parser, its
// messages and the shell completions read; the core's choices (kernels, methods, criteria,
// scores, formats, out-of-reach policies, ...) have theirs beside their types.

#include <optional>
#include <string>
#include <vector>

#include "nwreg/base/choice.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/learn/bandwidth.h"

namespace nwreg::cli {

inline constexpr Choice<std::optional<Optimizer>> optimizer_choices[] = {
    {"auto", std::nullopt}, {"line-search", Optimizer::line_search}, {"adam", Optimizer::adam}, {"sgd", Optimizer::sgd}};
inline constexpr Choice<Parameter> param_choices[] = {{"log-h", Parameter::log_h}, {"w", Parameter::w}};
inline constexpr Choice<Loss> loss_choices[] = {{"mean", Loss::mean}, {"sum", Loss::sum}};
/// --metric: whether a full map is learned.
inline constexpr Choice<bool> metric_choices[] = {{"diagonal", false}, {"full", true}};
/// --categorical-fit: whether a local fit's polynomial takes categorical columns' values.
inline constexpr Choice<bool> categorical_fit_choices[] = {{"weights", false}, {"line", true}};
/// --like: whether the R call is loess (else lowess).
inline constexpr Choice<bool> like_choices[] = {{"loess", true}, {"lowess", false}};
/// --interval: the band, or auto (rbc where it exists).
inline constexpr Choice<std::optional<Interval>> interval_choices[] = {
    {"auto", std::nullopt}, {"rbc", Interval::rbc}, {"plain", Interval::plain}};
/// --heatmap-scale: whether the colours are logarithmic.
inline constexpr Choice<bool> heatmap_scale_choices[] = {{"linear", false}, {"log", true}};
/// The report of fit and test (--format).
enum class ReportFormat { text, json, csv };
inline constexpr Choice<ReportFormat> report_format_choices[] = {
    {"text", ReportFormat::text}, {"json", ReportFormat::json}, {"csv", ReportFormat::csv}};
/// What `nwreg generate` writes.
enum class Generated { man, bash, zsh, fish };
inline constexpr Choice<Generated> generated_choices[] = {
    {"man", Generated::man}, {"bash", Generated::bash}, {"zsh", Generated::zsh}, {"fish", Generated::fish}};

/// The names an option of subcommand `sub` takes, where they are a closed set of one of these
/// tables or the core's (empty otherwise): for the completions.
std::vector<std::string> option_choices(const std::string& sub, const std::string& option);

}  // namespace nwreg::cli
