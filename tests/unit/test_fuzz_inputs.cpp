// Every seed input and every input that ever failed a fuzzer, through the same targets, in the
// ordinary test build: a fixed crash stays fixed without clang or libFuzzer.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "fuzz/targets.h"
#include "helpers.h"

namespace fs = std::filesystem;

TEST_CASE("fuzz seed corpus and regression inputs run cleanly") {
  std::size_t files = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    for (const char* target : {"csv", "model", "options"}) {
      const fs::path dir = testing::source_path(std::string("tests/fuzz/") + kind + "/" + target);
      REQUIRE(fs::is_directory(dir));
      for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().filename() == ".keep") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
        CAPTURE(entry.path().string());
        CHECK_NOTHROW(fuzz::run(target, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
        ++files;
      }
    }
  }
  CHECK(files >= 10);
}
