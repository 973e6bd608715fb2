#pragma once
/// A fitted model: what `fit -o FILE` writes and `predict --model FILE` reads.

#include <cstddef>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "nwreg/attention.h"
#include "nwreg/bandwidth.h"

namespace nwreg {

inline constexpr const char* model_format = "nwreg-model";
inline constexpr int model_format_version = 1;

struct Model {
  Kernel kernel = Kernel::gaussian;
  std::vector<double> bandwidth;        //!< one per x column
  std::string bandwidth_source;         //!< "learned", "fixed", "silverman", "scott" or "model"
  std::vector<std::string> x_columns;   //!< training x column names
  std::string y_column;                 //!< training y column name
  std::size_t n = 0;                    //!< training rows
  std::string checksum;                 //!< checksum(Dataset) of the training data
  std::optional<double> loo_mse;        //!< mean LOO squared error at `bandwidth`
  std::vector<Epoch> history;           //!< loss per epoch when learned
  std::string stop_reason;              //!< why learning stopped, when learned
};

/// Writes the model as a JSON object (see README, "Model file"). Throws DataError if a number
/// is not finite (JSON cannot hold it).
void write_model(std::ostream& out, const Model& model);

/// Reads a model file. Throws InputError naming `source` for text that is not JSON, another
/// format or version, or missing or ill-typed fields.
Model read_model(std::istream& in, const std::string& source);

}  // namespace nwreg
