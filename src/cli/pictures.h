#pragma once
// The pictures predict draws: titles, the checks on the data, the heat map of attention
// weights and the surface of a fit in two x columns.

#include <cstddef>
#include <string>

#include "cli/output_file.h"
#include "nwreg/data/dataset.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/io/plot.h"
#include "nwreg/model/model.h"

namespace nwreg::cli {

/// "h = 0.2685 (learned)" (with several columns "h = 0.2685, 1.2 (learned)"), plus the kernel and
/// method when not the defaults.
std::string bandwidth_label(const Model& model);
/// "nwreg: <bandwidth_label>, n = N, LOO MSE M": a fit picture's title.
std::string picture_title(const Model& model, const Dataset& data);

/// Throws UsageError naming `option` unless the data have 1 (or, where `most` is 2, 2)
/// continuous x columns.
void check_picture(const Dataset& data, const char* option, std::size_t most);

/// --heatmap's picture: the attention weights of the m queries q, binned.
void write_heatmap(OutputFile& file, const Dataset& data, const Fitted& fitted, const Model& model, const double* q,
                   std::size_t m, bool log_scale);

/// The lattice's points in each column of a surface picture.
inline constexpr std::size_t surface_lattice = 120;
/// --plot's picture with two x columns: the model's fit on a surface_lattice^2 lattice over both
/// columns' training ranges (a lattice point no key of a compact kernel reaches has no value),
/// and the training points.
SurfacePlot surface_plot(const Dataset& data, const Model& model, EngineOptions engine);

}  // namespace nwreg::cli
