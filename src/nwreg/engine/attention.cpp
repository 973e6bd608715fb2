#include "nwreg/engine/attention.h"

#include <utility>

#include "nwreg/engine/engine.h"

namespace nwreg {

Attention::Attention(const Dataset& train, EngineOptions options)
    : e_(std::make_unique<Engine>(train, std::move(options))) {}

Attention::Attention(const Dataset& train, std::vector<double> bandwidth, EngineOptions options)
    : Attention(train, std::move(options)) {
  set_bandwidth(std::move(bandwidth));
}

Attention::~Attention() = default;

void Attention::set_bandwidth(std::vector<double> bandwidth) { e_->set_bandwidth(std::move(bandwidth)); }

void Attention::set_neighbours(NeighbourBandwidth neighbours) { e_->set_neighbours(neighbours); }

void Attention::set_tolerance(double tolerance) { e_->set_tolerance(tolerance); }

void Attention::predict(const double* queries, std::size_t m, double* out) const { e_->predict(queries, m, out); }

void Attention::nearest_distances(const double* queries, std::size_t m, double* out) const {
  e_->nearest_distances(queries, m, out);
}

void Attention::predict_detail(const double* queries, std::size_t m, const std::vector<double>& v, double* out,
                               double* sum_w2, double* smooth, double* kernel_w2) const {
  e_->predict_detail(queries, m, v, out, sum_w2, smooth, kernel_w2);
}

void Attention::slopes(const double* queries, std::size_t m, double* out, double* l_norm) const {
  e_->slopes(queries, m, out, l_norm);
}

void Attention::weights(const double* queries, std::size_t m,
                        const std::function<void(std::size_t, const double*)>& row) const {
  e_->weights(queries, m, row);
}

LooResult Attention::loo(bool with_gradient, const std::vector<std::size_t>* rows) const {
  return e_->loo(with_gradient, rows);
}

InSample Attention::insample(bool with_gradient, const std::vector<std::size_t>* rows) const {
  return e_->insample(with_gradient, rows);
}

LooDetail Attention::loo_detail(std::size_t neighbour_rows, bool residuals) const {
  return e_->loo_pass(neighbour_rows, residuals, true);
}

LooDetail Attention::loo_residuals() const { return e_->loo_pass(0, true, false); }

Counters Attention::counters() const { return e_->counters(); }

std::vector<std::size_t> Attention::spread_rows(std::size_t count) const { return e_->spread_rows(count); }
std::size_t Attention::spread_size(std::size_t count) const { return e_->spread_size(count); }

}  // namespace nwreg
