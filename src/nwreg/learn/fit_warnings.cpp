// What a learned bandwidth's report warns of, and the remedies its messages offer (bandwidth.h).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "nwreg/base/numbers.h"
#include "nwreg/base/timestamp.h"
#include "nwreg/learn/bandwidth.h"

namespace nwreg {

std::vector<std::string> untried(const FitOptions& options, const std::vector<std::string>& remedies) {
  std::vector<std::string> out;
  for (const std::string& r : remedies) {
    if (r.empty() || (r == "`criterion` aicc" && options.criterion == Criterion::aicc) ||
        (r == "`min_neighbours` 5" && options.min_neighbours >= 5))
      continue;
    out.push_back(r);
  }
  return out;
}

std::string either(const std::vector<std::string>& remedies) {
  std::string s;
  for (std::size_t i = 0; i < remedies.size(); ++i)
    s += (i == 0 ? "" : i + 1 == remedies.size() ? (remedies.size() > 2 ? ", or " : " or ") : ", ") + remedies[i];
  return s;
}

std::vector<std::string> fit_warnings(const Dataset& data, const FitResult& fit, std::optional<double> neighbours,
                                      const FitOptions& options) {
  const auto g3 = format_g3;
  std::vector<std::string> out;
  std::string why;
  // The effective number of neighbours decides (repeated x values average many rows at an h
  // below the spacing of distinct x: stackloss, 9.3 of 21). Where it is known and low, or
  // unknown, a bandwidth below the typical spacing of one column says why: each point is left
  // to itself. (With several columns a narrow one can be an exact match on purpose.)
  if (neighbours && *neighbours < few_neighbours(data.n)) why = g3(*neighbours) + " effective neighbours";
  if ((!neighbours || !why.empty()) && data.d == 1 && !fit.bandwidth.empty() && !is_categorical(data.kind(0))) {
    const double spacing = typical_spacing(data, 0);
    // A time column's figures in time units: "h = 1 h is below the typical spacing of "day", 1 d".
    const auto show = is_time(data.kind(0)) ? format_duration : g3;
    if (fit.bandwidth[0] < spacing)
      why += (why.empty() ? "" : "; ") + std::string("h = ") + show(fit.bandwidth[0]) +
             " is below the typical spacing of " + quote(data.x_names[0]) + ", " + show(spacing);
  }
  const std::size_t k = options.engine.leave_out;
  if (!why.empty())
    out.push_back("the fit nearly interpolates (" + why + ")" +
                  (k ? " even leaving out " + std::to_string(k) + " keys on each side" : std::string()) +
                  ": the curve steps from point to point. Try " +
                  either(untried(options, {k ? "a larger `leave_out`" : "", "`criterion` aicc", "`bandwidth` plugin",
                                           k ? "" : "`leave_out` K for a series with correlated errors",
                                           "`min_neighbours` 5"})));
  if (fit.constant_y) {
    out.push_back("y is constant (" + format_double(*fit.constant_y) + " in every row" +
                  (data.weight.empty() ? "" : " of positive weight") +
                  "): every bandwidth fits it exactly; h is set at 4 times the x range, the fit that constant");
    return out;
  }
  if (fit.stop_reason == "epoch cap")
    out.push_back("learning stopped at the epoch cap (" + std::to_string(options.epochs) +
                  (options.epochs == 1 ? " epoch" : " epochs") + ") before it converged; raise `epochs`");
  if (fit.scan_widest)
    out.push_back("the criterion kept falling towards the widest bandwidth tried (4 times the x range): no "
                  "structure found, the fit is close to a constant");
  if (fit.stable_floor > 0 && !fit.bandwidth.empty() && fit.bandwidth[0] <= fit.stable_floor * 1.05)
    out.push_back("the bandwidth is held at h = " + (is_time(data.kind(0)) ? format_duration : g3)(fit.stable_floor) +
                  ": below it the local fit would swing where the data are sparse (its variance somewhere in the x "
                  "range above one observation's); the criterion alone would go lower");
  for (std::size_t c : fit.smoothed_out) {
    // NW then ignores the column; a local polynomial keeps its terms in it, the same everywhere.
    const std::size_t degree = method_degree(options.engine.method, options.engine.degree);
    out.push_back("x column " + quote(data.x_names[c]) + " is smoothed out: its bandwidth rose past " +
                  g3(smoothed_out_from) + " times its range and is set at " + g3(smoothed_out_at) +
                  " times it, where its kernel weighs every pair of rows alike; " +
                  (degree == 0 ? std::string("the criterion sees nothing in it that the other columns do not give")
                   : degree == 1
                       ? std::string("the fit is a straight line along it, one slope over its whole range")
                       : "the fit is a polynomial of degree " + std::to_string(degree) +
                             " along it, the same over its whole range"));
  }
  if (fit.corner_neighbours > 0 && fit.kernel_neighbours <= fit.corner_neighbours * 1.05)
    out.push_back("the bandwidth is held where the kernel weights average " + g3(fit.corner_neighbours) +
                  " effective neighbours, the local polynomial's coefficients + 1: with fewer, each row's fit rests "
                  "on a handful of keys and drops terms; the criterion alone would go lower");
  return out;
}

}  // namespace nwreg
