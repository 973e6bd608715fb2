#include "nwreg/learn/criteria.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "nwreg/base/numbers.h"

namespace nwreg {
namespace {

// log(RSS/n) + (n + tr) / (n - tr - 2) (Hurvich, Simonoff and Tsai 1998), n - tr summed
// without cancellation (InSample::room); a perfect fit (constant y) is held at the smallest
// normal mse, so the penalty still decides.
LooResult aicc(const InSample& fit, double n, bool gradient) {
  LooResult r;
  const double t = fit.trace;
  const double mse = std::max(fit.mse, std::numeric_limits<double>::min()), room = fit.room - 2;
  r.mse = room > 0 ? std::log(mse) + (n + t) / room : std::numeric_limits<double>::infinity();
  if (gradient && room > 0)
    for (std::size_t k = 0; k < fit.d_mse.size(); ++k)
      r.gradient.push_back(fit.d_mse[k] / mse + (2 * n - 2) / (room * room) * fit.d_trace[k]);
  return r;
}

// GCV = n RSS / (n - tr)^2 = n^2 mse / (n - tr)^2 (Craven and Wahba 1979), n - tr summed
// without cancellation (InSample::room).
LooResult gcv(const InSample& fit, double n, bool gradient) {
  LooResult r;
  const double room = fit.room;
  r.mse = room > 0 ? n * n * fit.mse / (room * room) : std::numeric_limits<double>::infinity();
  if (gradient && room > 0)
    for (std::size_t k = 0; k < fit.d_mse.size(); ++k)
      r.gradient.push_back(n * n * (fit.d_mse[k] / (room * room) + 2 * fit.mse * fit.d_trace[k] / (room * room * room)));
  return r;
}

constexpr CriterionDef table[] = {
    {Criterion::loo, "leave-one-out error", nullptr, CriterionScale::squared, 0},
    {Criterion::aicc, "Hurvich, Simonoff and Tsai's corrected AIC", aicc, CriterionScale::logarithm, 2},
    {Criterion::gcv, "generalised cross-validation", gcv, CriterionScale::squared, 0},
};

}  // namespace

const CriterionDef& criterion_def(Criterion criterion) {
  for (const CriterionDef& c : table)
    if (c.id == criterion) return c;
  return table[0];
}

double in_units_of_y(Criterion criterion, double v, int k) {
  return criterion_def(criterion).scale == CriterionScale::logarithm ? v + 2 * k * std::log(2.0) : std::ldexp(v, 2 * k);
}

bool uses_in_sample(Criterion criterion) { return criterion_def(criterion).in_sample != nullptr; }

std::string criterion_help() {
  std::vector<std::string> items;
  for (const CriterionDef& c : table) items.push_back(to_string(c.id) + " (" + c.help + ")");
  return or_list(items);
}

LooResult criterion_value(Criterion criterion, const InSample& fit, double n, bool gradient) {
  LooResult r = criterion_def(criterion).in_sample(fit, n, gradient);
  if (gradient && !std::isfinite(r.mse)) r.gradient.assign(fit.d_mse.size(), 0.0);
  return r;
}

}  // namespace nwreg
