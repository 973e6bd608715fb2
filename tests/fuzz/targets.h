#pragma once
// Fuzz targets: each takes arbitrary bytes and must either succeed or throw an nwreg::Error;
// anything else (a crash, another exception, a sanitizer report, a hang) is a bug. They are
// run by libFuzzer (fuzz_main.cpp, clang) and, over the seed corpus and every input that ever
// failed, by the unit tests (test_fuzz_inputs.cpp), so a fixed crash stays fixed.

#include <cstddef>
#include <cstdint>
#include <string>

namespace fuzz {

/// The CSV reader and data set: the first byte picks delimiter and header mode, the rest is
/// the file. A data set that reads is also fed to the engine.
void csv(const std::uint8_t* data, std::size_t size);
/// The model-file reader.
void model(const std::uint8_t* data, std::size_t size);
/// The option parsers: lines of the input go to --grid, --delimiter, --bandwidth (lists
/// included), a number, --format, --weights-layout, and -x column lists and --shard.
void options(const std::uint8_t* data, std::size_t size);

/// Runs the target named `name` ("csv", "model", "options"); false for an unknown name.
bool run(const std::string& name, const std::uint8_t* data, std::size_t size);

}  // namespace fuzz
