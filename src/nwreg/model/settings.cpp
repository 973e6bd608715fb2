#include "nwreg/model/settings.h"

#include <cmath>
#include <limits>
#include <utility>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

namespace nwreg {

namespace {

const MethodDef& method_def(Method method) {
  for (const MethodDef& m : method_table)
    if (m.id == method) return m;
  return method_table[0];
}

}  // namespace

std::string to_string(Method method) { return method_def(method).name; }

std::string method_help() {
  std::string help;
  for (const MethodDef& m : method_table) help += (help.empty() ? "" : "; ") + std::string(m.name) + ": " + m.help;
  return help;
}

std::size_t method_degree(Method method, std::size_t degree) {
  const int d = method_def(method).degree;
  return d < 0 ? degree : static_cast<std::size_t>(d);
}

void check_degree(std::size_t degree) {
  if (degree > max_degree)
    throw ParameterError("degree", "must be between 0 and " + std::to_string(max_degree) + ", got " + std::to_string(degree));
}

Method parse_method(const std::string& name) {
  std::string known;
  for (const MethodDef& m : method_table) {
    if (name == m.name) return m.id;
    known += (known.empty() ? "" : ", ") + std::string(m.name);
  }
  throw ParameterError("method", "unknown method " + quote(name) + " (known: " + known + ")");
}

std::string to_string(Criterion criterion) {
  for (const auto& [c, name] : criterion_names)
    if (c == criterion) return name;
  return "loo";
}

Criterion parse_criterion(const std::string& name) {
  std::string known;
  for (const auto& [c, text] : criterion_names) {
    if (name == text) return c;
    known += (known.empty() ? "" : ", ") + std::string(text);
  }
  throw ParameterError("criterion", "unknown criterion " + quote(name) + " (known: " + known + ")");
}

void record_epoch(std::vector<Epoch>& history, Epoch e) {
  const int first = history.empty() ? e.epoch : history.front().epoch;
  const int stride = history.size() >= 2 ? history[1].epoch - first : 1;
  // The previous row was only the latest, off the stride: this one takes its place.
  if (history.size() >= 2 && (history.back().epoch - first) % stride != 0) history.pop_back();
  history.push_back(std::move(e));
  if (history.size() <= max_history) return;
  std::vector<Epoch> kept;
  for (std::size_t i = 0; i < history.size(); ++i)
    if ((history[i].epoch - first) % (2 * stride) == 0 || i + 1 == history.size()) kept.push_back(std::move(history[i]));
  history = std::move(kept);
}

void check_bandwidth(const std::vector<double>& h, std::size_t d, const std::string& option) {
  if (h.size() != d)
    throw UsageError(option + ": needs " + std::to_string(d) + " value" + (d == 1 ? "" : "s") +
                     " (one per x column), got " + std::to_string(h.size()));
  for (double v : h) {
    if (!(v > 0)) throw UsageError(option + ": must be > 0, got " + format_double(v));
    if (!std::isfinite(v) || !std::isfinite(1 / v))
      throw UsageError(option + ": " + format_double(v) + " is outside the usable range (" +
                       format_double(1 / std::numeric_limits<double>::max()) + " to " +
                       format_double(std::numeric_limits<double>::max()) + ")");
  }
}

const NeighbourDef* neighbour_def(Neighbours kind) {
  for (const NeighbourDef& n : neighbour_table)
    if (n.id == kind) return &n;
  return nullptr;
}

std::string to_string(Neighbours kind) {
  const NeighbourDef* def = neighbour_def(kind);
  return def ? def->name : "none";
}

std::string to_string(const NeighbourBandwidth& n) {
  const NeighbourDef* def = neighbour_def(n.kind);
  if (!def) return "none";
  return std::string(def->name) + ":" + (def->fraction ? format_double(n.F) : std::to_string(n.K));
}

std::size_t span_count(double F, std::size_t n) {
  // As R's loess counts: floor(n F + 1e-5), so that n F a rounding below a whole number (100 x
  // 0.29 = 28.999...) counts that number.
  const double q = std::floor(static_cast<double>(n) * F + 1e-5);
  return q < 1 ? 1 : q >= static_cast<double>(n) ? n : static_cast<std::size_t>(q);
}

void check_span(double F, const std::string& option) {
  if (!(F > 0 && F <= 1e6))
    throw UsageError(option + ": span:F takes a fraction of the rows F > 0 and at most 1e6 (above 1 widens as loess does), "
                     "or auto; got " + format_double(F));
}

namespace {

// Each policy as `form` makes it, listed as "a, b or c".
template <class F>
std::string neighbour_list(const F& form) {
  std::vector<std::string> items;
  for (const NeighbourDef& n : neighbour_table) items.push_back(form(n));
  return or_list(items);
}

}  // namespace

std::string neighbour_help() {
  return neighbour_list([](const NeighbourDef& n) {
    return std::string(n.name) + (n.fraction ? ":F (" : ":K (") + n.help + ")";
  });
}
std::string neighbour_forms() {
  return neighbour_list([](const NeighbourDef& n) { return std::string(n.name) + (n.fraction ? ":F" : ":K"); });
}
std::string neighbour_names() {
  return neighbour_list([](const NeighbourDef& n) { return std::string(n.name); });
}

void check_metric(const Metric& m, std::size_t d, const std::string& option) {
  if (m.rank == 0 || m.a.size() != m.rank * d)
    throw UsageError(option + ": needs " + std::to_string(d) + " numbers per row (one per x column), got " +
                     std::to_string(m.a.size()) + " in " + std::to_string(m.rank) + " rows");
  for (double v : m.a)
    if (!std::isfinite(v)) throw UsageError(option + ": " + format_double(v) + " is not a finite number");
}

const ScoreDef& score_def(Score score) {
  for (const ScoreDef& s : score_table)
    if (s.id == score) return s;
  return score_table[0];
}

std::string to_string(Score score) { return score_def(score).name; }

Score parse_score(const std::string& name) {
  std::string known;
  for (const ScoreDef& s : score_table) {
    if (name == s.name) return s.id;
    known += (known.empty() ? "" : ", ") + std::string(s.name);
  }
  throw ParameterError("score", "unknown score " + quote(name) + " (known: " + known + ")");
}

std::string score_help() {
  std::string help;
  for (const ScoreDef& s : score_table) help += (help.empty() ? "" : "; ") + std::string(s.name) + ": " + s.help;
  return help;
}

std::size_t ScoreParameters::size() const {
  switch (score) {
    case Score::general:
      return d * d;
    case Score::additive:
      return hidden * (2 * d + 1) + (bias ? hidden : 0);
    default:
      return 0;
  }
}

void check_score(const ScoreParameters& p, const std::string& option) {
  if (p.score == Score::additive && (p.hidden < 1 || p.hidden > max_hidden))
    throw UsageError(option + ": the additive score needs between 1 and " + std::to_string(max_hidden) +
                     " hidden units, got " + std::to_string(p.hidden));
  if (p.theta.size() != p.size())
    throw UsageError(option + ": the " + to_string(p.score) + " score over " + std::to_string(p.d) + " x column" +
                     (p.d == 1 ? "" : "s") + " has " + std::to_string(p.size()) + " parameters, got " +
                     std::to_string(p.theta.size()));
  for (double v : p.theta)
    if (!std::isfinite(v)) throw UsageError(option + ": the score's parameters must be finite numbers");
}

}  // namespace nwreg
