#pragma once
/// A learned metric applied: the engine runs on the mapped points z = A (x - c), c the
/// training column means (the shift changes no distance and keeps z exact for data far from 0),
/// with every bandwidth 1.

#include <cstddef>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/model/settings.h"

namespace nwreg {

/// The training data in the metric's coordinates, and queries mapped the same way.
class MetricMap {
 public:
  MetricMap(const Metric& metric, const Dataset& train);
  /// z_i = A (x_i - c), columns named z1..zr; y and sample weights as in `train`.
  Dataset data() const;
  /// m queries (m x d) mapped to m x r.
  std::vector<double> queries(const double* q, std::size_t m) const;

 private:
  Metric metric_;
  const Dataset& train_;  // must outlive the map
  std::vector<double> centre_;
};

}  // namespace nwreg
