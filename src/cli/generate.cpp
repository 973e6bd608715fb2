#include "cli/choices.h"
#include "cli/generate.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/io/writers.h"
#include "nwreg/kernel/kernels.h"
#include "nwreg/model/settings.h"

namespace nwreg::cli {
namespace {

// The values an option takes, where they are a closed set: from the registries where there is
// one: the core's (kernels, methods, scores, criteria, output formats) and the closed choices
// of cli/choices.h.
std::vector<std::string> choices(const CLI::App& sub, const std::string& option) {
  if (option == "kernel") {
    std::vector<std::string> out;
    for_each_kernel([&]<class K>(K) { out.emplace_back(K::name); });
    return out;
  }
  if (option == "method") {
    std::vector<std::string> out;
    for (const MethodDef& m : method_table) out.emplace_back(m.name);
    return out;
  }
  if (option == "score") {
    std::vector<std::string> out;
    for (const ScoreDef& d : score_table) out.emplace_back(d.name);
    return out;
  }
  if (option == "bandwidth") {
    std::vector<std::string> out = {"auto", "silverman", "scott", "plugin"};
    for (const NeighbourDef& n : neighbour_table) out.push_back(std::string(n.name) + ":auto");
    return out;
  }
  if (option == "COMMAND" && sub.get_name() == "help") {
    std::vector<std::string> out;
    for (const CLI::App* c : sub.get_parent()->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
      if (c->get_name() != "help") out.push_back(c->get_name());
    return out;
  }
  if (option == "criterion") {
    std::vector<std::string> out;
    for (const auto& [c, name] : criterion_names) out.emplace_back(name);
    return out;
  }
  if (option == "format" && sub.get_name() == "predict") {
    std::vector<std::string> out;
    for (const FormatDef& f : format_table) out.emplace_back(f.name);
    return out;
  }
  return option_choices(sub.get_name(), option);
}

// Options whose value is a file name.
bool takes_file(const std::string& option) {
  static const char* files[] = {"output", "model", "query", "weights", "plot", "heatmap"};
  return std::find(std::begin(files), std::end(files), option) != std::end(files);
}

struct Opt {
  std::string name;   // long name without dashes (or the positional's name)
  std::string short_name;
  std::string description, type, default_value, group;
  bool flag = false, positional = false;
  std::vector<std::string> excludes;  // the long names of the options it excludes (CLI11's excludes())
};

std::vector<Opt> options_of(const CLI::App& sub) {
  std::vector<Opt> out;
  for (const CLI::Option* o : sub.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    Opt opt;
    opt.positional = o->nonpositional() == false;
    opt.name = !o->get_lnames().empty() ? o->get_lnames()[0] : o->get_name();
    if (opt.name == "help") continue;
    if (!o->get_snames().empty()) opt.short_name = o->get_snames()[0];
    opt.description = o->get_description();
    opt.type = o->get_type_name();
    opt.default_value = o->get_default_str();
    opt.group = o->get_group();
    opt.flag = o->get_expected_max() == 0;
    for (const CLI::Option* x : o->get_excludes())
      opt.excludes.push_back(!x->get_lnames().empty() ? x->get_lnames()[0] : x->get_name());
    std::sort(opt.excludes.begin(), opt.excludes.end());
    out.push_back(std::move(opt));
  }
  return out;
}

std::vector<const CLI::App*> commands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    out.push_back(sub);
  return out;
}

// roff: backslashes as \e, a dash as \-, and a line that starts with . or ' escaped.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
    line_start = c == '\n';
  }
  return out;
}

// A single-quoted shell word.
std::string sh_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// One line of description, short, for the completions' lists.
std::string summary(const std::string& text, std::size_t most = 80) {
  std::string s = text.substr(0, text.find('\n'));
  for (std::size_t stop = s.find(". "); stop != std::string::npos; stop = s.find(". ", stop + 1))
    if (stop + 2 < s.size() && std::isupper(static_cast<unsigned char>(s[stop + 2]))) {
      s = s.substr(0, stop);  // the first sentence (". or ," is a value, not its end)
      break;
    }
  if (s.size() > most) s = s.substr(0, most - 3) + "...";
  return s;
}

std::string joined(const std::vector<std::string>& words, const char* sep = " ") {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

void man(const CLI::App& app, const std::string& version, std::ostream& out) {
  out << ".TH NWREG \"1\" \"\" \"nwreg " << version << "\" \"User Commands\"\n"
      << ".SH NAME\nnwreg \\- Nadaraya-Watson kernel regression as attention pooling\n"
      << ".SH SYNOPSIS\n";
  for (const CLI::App* sub : commands(app)) {
    out << ".B nwreg " << sub->get_name() << "\n[\\fIOPTIONS\\fR]";
    for (const Opt& o : options_of(*sub))
      if (o.positional) out << " \\fI" << o.name << "\\fR";
    out << "\n.br\n";
  }
  out << ".SH DESCRIPTION\n" << roff(app.get_description()) << "\n.SH COMMANDS\n";
  for (const CLI::App* sub : commands(app)) {
    out << ".SS \"nwreg " << sub->get_name() << "\"\n" << roff(sub->get_description()) << "\n";
    std::vector<std::string> groups;  // in the order they first appear, as --help lists them
    for (const Opt& o : options_of(*sub))
      if (std::find(groups.begin(), groups.end(), o.group) == groups.end()) groups.push_back(o.group);
    for (const std::string& group : groups) {
      out << ".PP\n\\fI" << roff(group) << "\\fR\n";
      for (const Opt& o : options_of(*sub)) {
        if (o.group != group) continue;
      out << ".TP\n";
      if (o.positional) {
        out << "\\fI" << o.name << "\\fR";
      } else {
        out << "\\fB";
        if (!o.short_name.empty()) out << "\\-" << o.short_name << "\\fR, \\fB";
        out << "\\-\\-" << roff(o.name) << "\\fR";
        if (!o.flag) out << " \\fI" << roff(o.type) << "\\fR";
      }
      out << "\n" << roff(o.description);
      if (!o.default_value.empty()) out << " (default: " << roff(o.default_value) << ")";
      out << "\n";
      }
    }
    if (!sub->get_footer().empty()) out << ".PP\n.nf\n" << roff(sub->get_footer()) << "\n.fi\n";
  }
  out << ".SH \"EXIT STATUS\"\n.TP\n0\nsuccess\n.TP\n1\ndata or runtime error (bad input, unusable model, "
         "output not writable, or some files of a batch failed)\n.TP\n2\nusage error (unknown option, bad "
         "value, unknown column)\n.TP\n130, 143\ninterrupted by SIGINT or SIGTERM: temporary outputs removed\n"
      << ".SH \"SEE ALSO\"\nThe documentation in the nwreg sources: README.md, and docs/ for bandwidths, "
         "methods, input, output, errors, recipes, scale\\-out and numerics.\n";
}

void bash(const CLI::App& app, std::ostream& out) {
  std::vector<std::string> names;
  for (const CLI::App* sub : commands(app)) names.push_back(sub->get_name());
  out << "# bash completion for nwreg (generated by nwreg generate bash)\n"
      << "_nwreg() {\n"
      << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" cmd=\"\" i\n"
      // bash splits --opt=value at '=' (COMP_WORDBREAKS): the option is the word before it.
      << "  if [[ \"$cur\" == \"=\" ]]; then cur=\"\"; elif [[ \"$prev\" == \"=\" && $COMP_CWORD -ge 2 ]]; then "
         "prev=\"${COMP_WORDS[COMP_CWORD-2]}\"; fi\n"
      << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      << "    case \"${COMP_WORDS[i]}\" in " << joined(names, "|") << ") cmd=\"${COMP_WORDS[i]}\"; break ;; esac\n"
      << "  done\n"
      << "  if [[ -z \"$cmd\" ]]; then\n"
      << "    COMPREPLY=($(compgen -W " << sh_quote(joined(names) + " --help --version") << " -- \"$cur\"))\n"
      << "    return\n  fi\n"
      << "  case \"$cmd\" in\n";
  for (const CLI::App* sub : commands(app)) {
    std::vector<std::string> words, operands;  // operands: a positional's closed set of values
    out << "    " << sub->get_name() << ")\n      case \"$prev\" in\n";
    for (const Opt& o : options_of(*sub)) {
      if (o.positional) {
        operands = choices(*sub, o.name);
        continue;
      }
      words.push_back("--" + o.name);
      if (!o.short_name.empty()) words.push_back("-" + o.short_name);
      if (o.flag) continue;
      std::string pattern = "--" + o.name + (o.short_name.empty() ? "" : "|-" + o.short_name);
      const auto values = choices(*sub, o.name);
      if (!values.empty())
        out << "        " << pattern << ") COMPREPLY=($(compgen -W " << sh_quote(joined(values)) << " -- \"$cur\")); return ;;\n";
      else if (takes_file(o.name))
        out << "        " << pattern << ") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n";
      else
        out << "        " << pattern << ") return ;;\n";
    }
    const std::string rest = operands.empty() ? "compgen -f -- \"$cur\"" : "compgen -W " + sh_quote(joined(operands)) + " -- \"$cur\"";
    out << "        *) ;;\n      esac\n"
        << "      if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W " << sh_quote(joined(words) + " --help")
        << " -- \"$cur\")); else COMPREPLY=($(" << rest << ")); fi\n      ;;\n";
  }
  out << "  esac\n}\ncomplete -o filenames -F _nwreg nwreg\n";
}

// zsh's _arguments specs: brackets, colons and backslashes in descriptions would be read as syntax.
std::string zsh_text(const std::string& text) {
  std::string out;
  for (char c : summary(text)) {
    if (c == '[') out += '(';
    else if (c == ']') out += ')';
    else if (c == ':') out += " -";
    else if (c == '\\' || c == '`' || c == '$') continue;
    else out += c;
  }
  return out;
}

void zsh(const CLI::App& app, std::ostream& out) {
  out << "#compdef nwreg\n# zsh completion for nwreg (generated by nwreg generate zsh)\n\n_nwreg() {\n"
      << "  local -a commands\n  commands=(\n";
  for (const CLI::App* sub : commands(app))
    out << "    " << sh_quote(sub->get_name() + ":" + zsh_text(sub->get_description())) << "\n";
  out << "  )\n  if (( CURRENT == 2 )); then\n    _describe 'command' commands\n    return\n  fi\n"
      << "  case $words[2] in\n";
  for (const CLI::App* sub : commands(app)) {
    out << "    " << sub->get_name() << ")\n      _arguments -s \\\n";
    for (const Opt& o : options_of(*sub)) {
      std::string spec;
      if (o.positional) {
        const auto values = choices(*sub, o.name);
        spec = "*:" + zsh_text(o.name) + ":" + (values.empty() ? "_files" : "(" + joined(values) + ")");
      } else {
        const std::string names = o.short_name.empty() ? "--" + o.name : "{-" + o.short_name + ",--" + o.name + "}";
        // An exclusion group: once one of them is on the line, zsh offers none of the others.
        std::string group;
        for (const std::string& x : o.excludes) group += (group.empty() ? "" : " ") + ("--" + x);
        if (!group.empty()) group = "(" + group + ")";
        spec = "[" + zsh_text(o.description) + "]";
        if (!o.flag) {
          const auto values = choices(*sub, o.name);
          spec += ":" + zsh_text(o.type.empty() ? o.name : o.type) + ":";
          spec += !values.empty() ? "(" + joined(values) + ")" : takes_file(o.name) ? "_files" : " ";
        }
        out << "        " << (o.short_name.empty() ? sh_quote(group + names + spec) : sh_quote(group) + names + sh_quote(spec))
            << " \\\n";
        continue;
      }
      out << "        " << sh_quote(spec) << " \\\n";
    }
    out << "        '--help[show the help]'\n      ;;\n";
  }
  out << "  esac\n}\n\n_nwreg \"$@\"\n";
}

void fish(const CLI::App& app, std::ostream& out) {
  std::vector<std::string> names;
  for (const CLI::App* sub : commands(app)) names.push_back(sub->get_name());
  out << "# fish completion for nwreg (generated by nwreg generate fish)\n"
      << "complete -c nwreg -f\n";
  for (const CLI::App* sub : commands(app))
    out << "complete -c nwreg -n " << sh_quote("not __fish_seen_subcommand_from " + joined(names)) << " -a "
        << sub->get_name() << " -d " << sh_quote(summary(sub->get_description())) << "\n";
  for (const CLI::App* sub : commands(app)) {
    const std::string when = " -n " + sh_quote("__fish_seen_subcommand_from " + sub->get_name());
    bool positional = false;
    std::vector<std::string> operands;
    for (const Opt& o : options_of(*sub)) {
      if (o.positional) {
        positional = true;
        operands = choices(*sub, o.name);
        continue;
      }
      out << "complete -c nwreg" << when << " -l " << o.name;
      if (!o.short_name.empty()) out << " -s " << o.short_name;
      if (!o.flag) {
        const auto values = choices(*sub, o.name);
        out << (takes_file(o.name) ? " -r -F" : " -r");
        if (!values.empty()) out << " -a " << sh_quote(joined(values));
      }
      out << " -d " << sh_quote(summary(o.description)) << "\n";
    }
    if (positional)
      out << "complete -c nwreg" << when << (operands.empty() ? " -F" : " -a " + sh_quote(joined(operands))) << "\n";
  }
}

}  // namespace

void generate(const CLI::App& app, const std::string& kind, const std::string& version, std::ostream& out) {
  switch (parse_choice<Generated>(kind, generated_choices, "generate", "kind")) {
    case Generated::man: return man(app, version, out);
    case Generated::bash: return bash(app, out);
    case Generated::zsh: return zsh(app, out);
    case Generated::fish: return fish(app, out);
  }
}

}  // namespace nwreg::cli
