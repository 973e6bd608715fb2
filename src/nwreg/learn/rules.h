#pragma once
/// Bandwidths from a rule rather than learned: the --bandwidth syntax, and the rules of thumb.

#include <cstddef>
#include <string>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/model/settings.h"

namespace nwreg {

/// A --bandwidth (or --init) value as given on the command line.
struct BandwidthSpec {
  enum class Kind { learn, fixed, silverman, scott, plugin, knn, df } kind = Kind::learn;
  /// Kind::fixed: one bandwidth, or one per x column; Kind::knn: the given scales; Kind::df: K
  std::vector<double> values;
  NeighbourBandwidth neighbour_policy;  //!< Kind::knn: the policy and K or F (0: auto)
  std::vector<bool> timed;     //!< per value: given as a time span (6h), in seconds
};

/// Parses "auto" (or ""), "silverman", "scott", "plugin", "df:K" (the bandwidth whose fit has K
/// degrees of freedom, tr(H) = K), "NAME:K" for a nearest-neighbour
/// policy (knn:K, adaptive:K, span:F; K, F or auto; "NAME:K:H,H" gives the columns' scales), or bandwidths > 0 separated by commas,
/// each a number or a time span with a unit (90s, 15min, 6h, 3d, 2w; see parse_duration), kept
/// in seconds. Throws UsageError that starts with `option`.
/// `neighbours` false (--init) takes no nearest-neighbour policy.
BandwidthSpec parse_bandwidth_spec(const std::string& text, const std::string& option, bool neighbours = true);

/// Silverman's rule per column: 0.9 min(sd, IQR/1.34) n^(-1/5) (R's bw.nrd0; sd when IQR = 0).
/// Throws DataError when a column's values are all equal.
std::vector<double> silverman_bandwidth(const Dataset& data);
/// Scott's rule per column: 1.06 sd n^(-1/(4+d)). Throws DataError when a column is constant.
std::vector<double> scott_bandwidth(const Dataset& data);

/// loess's scales for span bandwidths over several columns (its normalize = TRUE): each x
/// column's standard deviation (n - 1) over its values less the ceiling(0.1 n) smallest and
/// largest. Throws DataError for a column whose trimmed values are all equal.
std::vector<double> trimmed_sd_scales(const Dataset& data);

/// Every x column's statistics (dataset.h); DataError naming `what` when a column is constant
/// or there are fewer than 2 rows.
std::vector<ColumnStats> x_column_stats(const Dataset& data, const char* what);

}  // namespace nwreg
