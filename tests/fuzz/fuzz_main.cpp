// libFuzzer entry point; NWREG_FUZZ_TARGET names the target (see targets.h).
#include <cstddef>
#include <cstdint>

#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::run(NWREG_FUZZ_TARGET, data, size);
  return 0;
}
