#include "nwreg/engine/metric_map.h"

#include <algorithm>

namespace nwreg {

MetricMap::MetricMap(const Metric& metric, const Dataset& train) : metric_(metric), train_(train), centre_(train.d) {
  for (std::size_t i = 0; i < train.n; ++i)
    for (std::size_t k = 0; k < train.d; ++k) centre_[k] += train.x[i * train.d + k];
  for (double& c : centre_) c /= static_cast<double>(std::max<std::size_t>(train.n, 1));
}

std::vector<double> MetricMap::queries(const double* q, std::size_t m) const {
  const std::size_t d = train_.d, r = metric_.rank;
  std::vector<double> z(m * r, 0.0);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t a = 0; a < r; ++a) {
      double v = 0;
      for (std::size_t k = 0; k < d; ++k) v += metric_.a[a * d + k] * (q[j * d + k] - centre_[k]);
      z[j * r + a] = v;
    }
  return z;
}

Dataset MetricMap::data() const {
  Dataset z;
  z.n = train_.n;
  z.d = metric_.rank;
  z.x = queries(train_.x.data(), train_.n);
  z.y = train_.y;
  z.weight = train_.weight;
  z.weight_name = train_.weight_name;
  for (std::size_t a = 0; a < z.d; ++a) z.x_names.push_back("z" + std::to_string(a + 1));
  z.y_name = train_.y_name;
  z.source = train_.source;
  return z;
}

}  // namespace nwreg
