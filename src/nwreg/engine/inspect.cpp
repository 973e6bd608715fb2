#include "nwreg/engine/inspect.h"

#include "nwreg/engine/engine.h"

namespace nwreg {

LooMoments::LooMoments(const Attention& engine, const double* v, std::size_t c)
    : engine_(engine), v_(engine.e_->key_columns(v, c)), c_(c), slot_(engine.e_->slot_of_rows()) {}

bool LooMoments::at(std::size_t j, double& f, double* M) const {
  return engine_.e_->loo_moments(slot_.at(j), v_, c_, f, M);
}

std::vector<double> reach(const Attention& engine, std::size_t count) { return engine.e_->reach(count); }

}  // namespace nwreg
