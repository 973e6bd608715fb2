#pragma once
/// Self-contained SVG pictures: the fitted curve over the training points (or, with two x
/// columns, the fitted surface), and the attention-weight matrix as a heat map (as the d2l
/// textbook shows it).

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace nwreg {

/// What the fit plot shows.
struct FitPlot {
  std::vector<double> x, y;             //!< training points
  std::vector<double> qx, f;            //!< the curve: query points and predictions (any order)
  std::vector<double> lower, upper;     //!< a band around the curve, or empty
  std::string x_name, y_name;           //!< axis titles
  std::string title;                    //!< e.g. the bandwidth and LOO error
  bool x_time = false;                  //!< x holds instants (seconds): date and time ticks, UTC
};

/// Writes an 800 x 500 SVG: points (at most 20000 drawn, evenly thinned, said in the picture),
/// the curve, the band if any, axes with ticks (dates and times for a time x), the title.
void write_fit_svg(std::ostream& out, const FitPlot& plot);

/// What the surface plot (two x columns) shows: the fit on a lattice over both columns'
/// ranges, the training points on top.
struct SurfacePlot {
  std::vector<double> x1, x2;           //!< training points
  std::vector<double> g1, g2;           //!< the lattice's coordinates in each column, ascending
  std::vector<double> f;                //!< g2.size() x g1.size(), row j at g2[j]; NaN: no value
  std::vector<char> far;                //!< as f (or empty): 1 where the point lies more than
                                        //!< far_distance bandwidths from every training point
  double far_distance = 3;
  std::string x1_name, x2_name, y_name; //!< axis and colour bar titles
  std::string title;
  bool x1_time = false, x2_time = false;  //!< a column holds instants: date and time ticks, UTC
};

/// Writes an SVG of the surface as a filled contour: the lattice's cells coloured by the band
/// of values they fall in (bands at round values, viridis), cells with no value left grey, cells
/// far from the data hatched over their colour, the points (at most 20000, evenly thinned) on
/// top, axes, a colour bar with the bands' bounds, and a note saying what grey and hatching mean.
void write_surface_svg(std::ostream& out, const SurfacePlot& plot);

/// What the criterion plot (fit --plot) shows: curves over a grid of bandwidths (or K, F), each
/// relative to its own minimum, so that LOO, GCV (squared errors) and AICc (a logarithm) share
/// an axis: v / min v, or exp(v - min v) for a logarithmic one.
struct CurvePlot {
  std::vector<double> x;                                   //!< the grid, > 0, drawn on a log axis
  std::vector<std::string> names;                          //!< each curve's legend entry
  std::vector<std::vector<std::optional<double>>> values;  //!< per curve, per x; absent where undefined
  std::vector<bool> logarithmic;                           //!< per curve
  std::optional<double> chosen;                            //!< the chosen x: a dashed line
  std::string x_name, title;
};

/// Writes an 800 x 500 SVG of the curves (ratios above 3 drawn at 3), each minimum marked.
void write_curve_svg(std::ostream& out, const CurvePlot& plot);

struct HeatmapStyle {
  std::string x_name;      //!< the x column, for the axis titles
  std::string title;
  bool x_time = false;     //!< x holds instants: date and time tick labels
  bool log_scale = false;  //!< --heatmap-scale log
};

/// Accumulates an m x n attention matrix into at most `max_bins` x `max_bins` cells, rows and
/// columns in x order, then writes it as an SVG heat map with a colour bar. A cell is the mean
/// over its queries of the weight summed over its keys; with no binning, the weight itself.
class Heatmap {
 public:
  /// query_x: the m queries in input order; key_x: the n training x in input order.
  Heatmap(const std::vector<double>& query_x, const std::vector<double>& key_x, std::size_t max_bins = 150);
  /// Adds row i (a query, in input order) of weights over the keys in input order.
  void row(std::size_t i, const double* weights);
  /// Writes the map: colours on a sequential scale from 0 to the largest weight, or on a
  /// diverging one (blue below 0, red above) when a weight is negative (local linear); with
  /// `log_scale`, the magnitude in decades (at most six) below the largest.
  void write_svg(std::ostream& out, const HeatmapStyle& style) const;

 private:
  std::vector<double> qx_sorted_, kx_sorted_;
  std::vector<std::size_t> q_bin_, k_bin_;  // input index -> bin
  std::vector<std::size_t> q_count_;        // queries per row bin
  std::size_t m_, n_, rb_, cb_;
  std::vector<double> cells_;               // rb x cb sums
};

}  // namespace nwreg
