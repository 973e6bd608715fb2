// A CSV line's fields: missing values, the delimiter and decimal mark given or detected, and
// the split of a line into its fields (csv.h).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/data/csv.h"

namespace nwreg {

bool is_missing(std::string_view field) {
  const std::string_view f = trim(field);
  for (std::string_view m : {"", "NA", "N/A", "NaN", "nan", "null", "NULL", "NaT"})
    if (f == m) return true;
  return false;
}

NaPolicy parse_na(const std::string& text) { return parse_choice<NaPolicy>(text, na_choices, "na", "policy"); }

char parse_delimiter(const std::string& text) {
  if (text.empty()) return 0;
  if (text == "tab" || text == "\\t" || text == "\t") return '\t';
  if (text == "space" || text == " ") return ' ';
  if (text.size() != 1)
    throw ParameterError("delimiter", "must be one character, \"tab\" or \"space\", got " + quote(text));
  const char c = text[0];
  if (c == '"' || c == '\n' || c == '\r')
    throw UsageError(std::string("`delimiter`: cannot be ") + (c == '"' ? "a quote" : "a line break"));
  return c;
}

char parse_decimal(const std::string& text) {
  if (text != "." && text != ",") throw ParameterError("decimal", "must be . (a point) or , (a comma), got " + quote(text));
  return text[0];
}

char detect_delimiter(std::string_view line, char decimal) {
  // With decimal commas a comma is part of a number, not a separator: ';' when nothing else.
  const std::string_view candidates = decimal == ',' ? ";\t|" : ",;\t|";
  std::size_t counts[4] = {};
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    for (std::size_t k = 0; k < candidates.size(); ++k) counts[k] += c == candidates[k];
  }
  std::size_t best = 0;
  for (std::size_t k = 1; k < candidates.size(); ++k)
    if (counts[k] > counts[best]) best = k;
  if (counts[best] > 0) return candidates[best];
  // None of them: blanks between fields (R's write.table, whitespace-aligned tables) where a
  // blank stands between two fields outside quotes; else the first candidate (one column).
  quoted = false;
  bool field = false, gap = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (!quoted && is_blank(c)) {
      gap = field;
    } else if (gap) {
      return ' ';
    } else {
      field = true;
    }
  }
  return candidates[0];
}

// How to name a delimiter in a hint: ';' or tab.
std::string delimiter_name(char c) { return c == '\t' ? "tab" : std::string("'") + c + "'"; }

void split_fields(char* line, char delimiter, std::vector<std::string_view>& fields,
                  const std::string& source, std::size_t line_number) {
  fields.clear();
  char* p = line;
  // A space delimiter is a run of blanks (spaces and tabs), as R's read.table's sep = "": no
  // empty fields between them, none at either end.
  const bool blanks = delimiter == ' ';
  if (blanks) {
    while (is_blank(*p)) ++p;
    if (*p == '\0') return;
  }
  for (;;) {
    while (is_blank(*p) && *p != delimiter) ++p;
    if (*p == '"') {
      // Quoted field: "" stands for one quote; the text is unescaped in place.
      char* out = ++p;
      char* begin = out;
      for (;;) {
        if (*p == '\0')
          throw InputError(source, line_number, "",
                           "unterminated quoted field (a field cannot span lines)");
        if (*p == '"') {
          if (p[1] == '"') {
            *out++ = '"';
            p += 2;
            continue;
          }
          ++p;
          break;
        }
        *out++ = *p++;
      }
      fields.emplace_back(begin, static_cast<std::size_t>(out - begin));
      while (!blanks && is_blank(*p) && *p != delimiter) ++p;
      if (!(blanks ? is_blank(*p) : *p == delimiter) && *p != '\0') {
        const bool other = *p == ',' || *p == ';' || *p == '\t' || *p == '|';
        throw InputError(source, line_number, "",
                         "unexpected text after a closing quote" +
                             (other ? " (the fields look separated by " + delimiter_name(*p) +
                                          ": give `delimiter` " + delimiter_name(*p) + ")"
                                    : std::string()));
      }
    } else {
      char* begin = p;
      while (!(blanks ? is_blank(*p) : *p == delimiter) && *p != '\0') ++p;
      char* end = p;
      while (end > begin && is_blank(end[-1])) --end;
      fields.emplace_back(begin, static_cast<std::size_t>(end - begin));
    }
    if (blanks) {
      while (is_blank(*p)) ++p;
      if (*p == '\0') return;
      continue;
    }
    if (*p == '\0') return;
    ++p;  // past the delimiter; a delimiter at the end of the line leaves one empty field
  }
}

}  // namespace nwreg
