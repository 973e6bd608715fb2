#pragma once
/// SplitMix64 (Steele, Lea and Flood 2014): a small generator whose stream is the same on every
/// platform and compiler, unlike the standard distributions'.

#include <cstdint>

namespace nwreg {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform on [0, 1) in steps of 2^-53 (offset by half a step with `open`: on (0, 1)).
  double uniform(bool open = false) { return (static_cast<double>(next() >> 11) + (open ? 0.5 : 0.0)) * 0x1p-53; }
  /// Uniform on {0, ..., k - 1}, k >= 1 (Lemire's multiply; the bias is below 2^-40 for k < 2^24).
  std::uint64_t below(std::uint64_t k) {
    __extension__ using wide = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<wide>(next()) * k) >> 64);
  }

 private:
  std::uint64_t state_;
};

}  // namespace nwreg
