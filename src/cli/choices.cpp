#include "cli/choices.h"

#include "nwreg/data/csv.h"
#include "nwreg/io/writers.h"
#include "nwreg/kernel/categorical.h"
#include "nwreg/learn/significance.h"

namespace nwreg::cli {

std::vector<std::string> option_choices(const std::string& sub, const std::string& option) {
  if (option == "format" && sub != "predict") return choice_names<ReportFormat>(report_format_choices);
  if (option == "null") return choice_names<NullModel>(null_choices);
  if (option == "out-of-reach") return choice_names<Unsupported>(unsupported_choices);
  if (option == "categorical-kernel") return choice_names<CategoricalKernel>(categorical_kernel_choices);
  if (option == "categorical-fit") return choice_names<bool>(categorical_fit_choices);
  if (option == "optimizer") return choice_names<std::optional<Optimizer>>(optimizer_choices);
  if (option == "loss") return choice_names<Loss>(loss_choices);
  if (option == "param") return choice_names<Parameter>(param_choices);
  if (option == "metric") return choice_names<bool>(metric_choices);
  if (option == "weights-layout") return choice_names<WeightsLayout>(layout_choices);
  if (option == "heatmap-scale") return choice_names<bool>(heatmap_scale_choices);
  if (option == "interval") return choice_names<std::optional<Interval>>(interval_choices);
  if (option == "na") return choice_names<NaPolicy>(na_choices);
  if (option == "like") return choice_names<bool>(like_choices);
  return {};
}

}  // namespace nwreg::cli
