#include "nwreg/kernel/categorical.h"

#include <algorithm>
#include <cmath>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

namespace nwreg {

std::string to_string(CategoricalKernel kernel) {
  return kernel == CategoricalKernel::li_racine ? "li-racine" : "aitchison-aitken";
}

CategoricalKernel parse_categorical_kernel(const std::string& name) {
  return parse_choice<CategoricalKernel>(name, categorical_kernel_choices, "categorical_kernel", "kernel");
}

double lambda_max(CategoricalKernel kernel, ColumnKind kind, std::size_t levels) {
  if (kernel == CategoricalKernel::aitchison_aitken && kind == ColumnKind::unordered && levels > 1)
    return static_cast<double>(levels - 1) / static_cast<double>(levels);
  return 1;
}

kernel::Category category(CategoricalKernel kernel, ColumnKind kind, std::size_t levels, double lambda) {
  kernel::Category c;
  c.on = true;
  c.ordered = kind == ColumnKind::ordered;
  if (levels < 2 && !c.ordered) return c;  // every key matches: cost 0, no gradient
  c.gain = 1;
  if (kernel == CategoricalKernel::li_racine) {
    c.step = -std::log2(lambda);
  } else if (c.ordered) {  // (1 - lambda) / 2 lambda^delta over 1 - lambda
    c.base = 1;
    c.step = -std::log2(lambda);
  } else {  // lambda / (c - 1) over 1 - lambda; d log / d log lambda = 1 / (1 - lambda)
    c.step = -(std::log2(lambda) - std::log2(static_cast<double>(levels - 1)) - std::log2(1 - lambda));
    c.gain = 1 / (1 - lambda);
  }
  c.step = std::max(c.step, 0.0);  // lambda at its top: rounding must not favour other levels
  return c;
}

}  // namespace nwreg
