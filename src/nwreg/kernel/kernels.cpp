#include "nwreg/kernel/kernels.h"

#include <optional>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

namespace nwreg {

std::string to_string(Kernel kernel) {
  return visit_kernel(kernel, []<class K>(K) { return std::string(K::name); });
}

Kernel parse_kernel(const std::string& name) {
  std::string known;
  std::optional<Kernel> found;
  for_each_kernel([&]<class K>(K) {
    if (name == K::name) found = K::id;
    known += (known.empty() ? "" : ", ") + std::string(K::name);
  });
  if (found) return *found;
  throw ParameterError("kernel", "unknown kernel " + quote(name) + " (known: " + known + ")");
}

std::string kernel_help() {
  std::string help;
  for_each_kernel([&]<class K>(K) {
    help += (help.empty() ? "" : ", ") + std::string(K::name) + (*K::formula ? " " : "") + K::formula;
  });
  return help;
}

bool is_compact(Kernel kernel) {
  return visit_kernel(kernel, []<class K>(K) { return K::compact; });
}

}  // namespace nwreg
