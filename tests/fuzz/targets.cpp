#include "targets.h"

#include <cmath>
#include <sstream>
#include <string_view>
#include <vector>

#include "nwreg/engine/attention.h"
#include "nwreg/learn/bandwidth.h"
#include "nwreg/data/csv.h"
#include "nwreg/data/dataset.h"
#include "nwreg/base/errors.h"
#include "nwreg/data/grid.h"
#include "nwreg/model/model.h"
#include "nwreg/base/numbers.h"
#include "nwreg/io/writers.h"
#include "nwreg/engine/score_attention.h"

namespace fuzz {

void csv(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  nwreg::CsvOptions opts;
  const std::uint8_t mode = data[0];
  opts.delimiter = mode & 1 ? '\t' : (mode & 2 ? ';' : ',');
  opts.header = mode & 4 ? nwreg::HeaderMode::absent : (mode & 8 ? nwreg::HeaderMode::present : nwreg::HeaderMode::detect);
  std::istringstream in(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  try {
    nwreg::CsvReader reader(in, "fuzz.csv", opts);
    const nwreg::Dataset d = nwreg::read_dataset(reader, nwreg::ColumnChoice{});
    if (d.n > 5000) return;  // the engine is O(n^2) in the worst case; keep executions fast
    std::vector<double> h;
    try {
      h = nwreg::silverman_bandwidth(d);
    } catch (const nwreg::DataError&) {
      h = {1.0};
    }
    nwreg::Attention engine(d, h);
    const std::vector<double> q = {d.x[0], d.x[0] + 1e-3, -1e300, 1e300, 0.0};
    std::vector<double> out(q.size());
    engine.predict(q.data(), q.size(), out.data());
    if (d.n >= 2) (void)engine.loo(true);
    // The dot score over the same rows (every key, O(n^2) for the LOO error: small files only):
    // overflowing scores are errors, never NaNs.
    if (d.n > 300) return;
    nwreg::ScoreParameters dot;
    dot.score = nwreg::Score::dot;
    const nwreg::ScoreAttention scores(d, dot);
    scores.predict(q.data(), q.size(), out.data());
    for (double f : out)
      if (!std::isfinite(f)) __builtin_trap();
    if (d.n >= 2) (void)scores.loo(false);
  } catch (const nwreg::Error&) {
  }
}

void model(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const nwreg::Model m = nwreg::read_model(in, "fuzz.json");
    std::ostringstream out;
    nwreg::write_model(out, m);
  } catch (const nwreg::Error&) {
  }
}

void options(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line) && lines.size() < 7;) lines.push_back(line);
  lines.resize(7);
  auto guard = [](auto&& fn) {
    try {
      fn();
    } catch (const nwreg::UsageError&) {
    }
  };
  guard([&] { (void)nwreg::parse_grid(lines[0], 100000); });
  guard([&] { (void)nwreg::parse_delimiter(lines[1]); });
  guard([&] { (void)nwreg::parse_bandwidth_spec(lines[2], "--bandwidth"); });
  (void)nwreg::parse_double(lines[3]);
  guard([&] { (void)nwreg::parse_format(lines[4], "--format"); });
  guard([&] { (void)nwreg::parse_layout(lines[5]); });
  guard([&] { (void)nwreg::parse_column_list(lines[6], "-x"); });
  guard([&] { (void)nwreg::parse_shard(lines[6]); });
}

bool run(const std::string& name, const std::uint8_t* data, std::size_t size) {
  if (name == "csv") csv(data, size);
  else if (name == "model") model(data, size);
  else if (name == "options") options(data, size);
  else return false;
  return true;
}

}  // namespace fuzz
