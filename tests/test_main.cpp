#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
#if defined(NWREG_ASAN)
  // The nwreg processes the tests start skip LeakSanitizer's scan at exit and keep two frames of
  // each allocation's stack: `nwreg --version` then takes 48 ms where it took 90, and the
  // catalogue of errors 31 s where it took 62. The tests' own process keeps both (its options
  // were read before main), and the CLI fuzzer runs the binary with leak detection on
  // (cli_fuzz.cpp). An ASAN_OPTIONS given from outside is left as it is.
  setenv("ASAN_OPTIONS", "detect_leaks=0:malloc_context_size=2", 0);
#endif
  doctest::Context context(argc, argv);
  return context.run();
}
