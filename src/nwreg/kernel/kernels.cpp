#include "nwreg/kernel/kernels.h"

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

namespace nwreg {

namespace {
constexpr Kernel all_kernels[] = {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov, Kernel::tricube,
                                  Kernel::uniform};
}  // namespace

std::string to_string(Kernel kernel) {
  return visit_kernel(kernel, []<class K>(K) { return std::string(K::name); });
}

Kernel parse_kernel(const std::string& name) {
  std::string known;
  for (Kernel k : all_kernels) {
    if (name == to_string(k)) return k;
    known += (known.empty() ? "" : ", ") + to_string(k);
  }
  throw ParameterError("kernel", "unknown kernel " + quote(name) + " (known: " + known + ")");
}

bool is_compact(Kernel kernel) {
  return visit_kernel(kernel, []<class K>(K) { return K::compact; });
}

}  // namespace nwreg
