// src/bind/help_text.cc: a program's --help text -> HelpPage. One pass over
// the lines, each placed by its shape (usage, heading, option, command,
// prose) and by the section it is in.
#include "bind/help_text.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/json.hpp"
#include "core/text.hpp"
#include "core/utf8.hpp"

namespace corral::bind::help {

namespace {

namespace json = core::json;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::size_t indent_of(std::string_view line) {
  std::size_t n = 0;
  for (char c : line) {
    if (c == ' ') {
      ++n;
    } else if (c == '\t') {
      n += 8;
    } else {
      break;
    }
  }
  return n;
}

// Cut at `limit` bytes on a character boundary.
std::string bounded(std::string text, std::size_t limit) {
  text.resize(core::utf8_cut(text, limit));
  return text;
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

bool is_word(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_word_char);
}

bool is_usage_line(std::string_view trimmed) {
  const std::string l = core::ascii_lower(trimmed.substr(0, 6));
  return l == "usage:" || core::ascii_lower(trimmed.substr(0, 3)) == "or:";
}

// A section heading: at the margin, ending in ':' ("Flags:", "Global
// Flags:", "positional arguments:", "Available Commands:").
bool is_heading(std::string_view line) {
  if (line.empty() || line.size() > 80 || indent_of(line) != 0) return false;
  const std::string_view t = trim(line);
  return !t.empty() && t.back() == ':' && !is_usage_line(t);
}

bool is_option_start(std::string_view trimmed) {
  return trimmed.size() >= 2 && trimmed[0] == '-' &&
         (std::isalnum(static_cast<unsigned char>(trimmed[1])) || trimmed[1] == '-' ||
          trimmed[1] == '?');
}

// pflag's type words (what Cobra prints after a flag when the usage names
// no value) -> corral's codecs.
const std::map<std::string, std::string, std::less<>>& pflag_types() {
  static const std::map<std::string, std::string, std::less<>> types = {
      {"string", "string"},
      {"int", "int"},
      {"int8", "int8"},
      {"int16", "int16"},
      {"int32", "int32"},
      {"int64", "int64"},
      {"uint", "uint"},
      {"uint8", "uint8"},
      {"uint16", "uint16"},
      {"uint32", "uint32"},
      {"uint64", "uint64"},
      {"float32", "float32"},
      {"float64", "float64"},
      {"duration", "duration"},
      {"strings", "stringSlice"},
      {"stringArray", "stringArray"},
      {"ints", "intSlice"},
      {"int32Slice", "int32Slice"},
      {"int64Slice", "int64Slice"},
      {"uints", "uintSlice"},
      {"float32Slice", "float32Slice"},
      {"float64Slice", "float64Slice"},
      {"durationSlice", "durationSlice"},
      {"bools", "boolSlice"},
      {"stringToString", "stringToString"},
      {"stringToInt", "stringToInt"},
      {"stringToInt64", "stringToInt64"},
  };
  return types;
}

bool is_integer_type(std::string_view type) {
  return type.starts_with("int") || type.starts_with("uint") || type == "count";
}

// "a|b|c" or "a, b, c" -> words, if every one is a plain word.
std::vector<std::string> word_list(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  auto flush = [&] {
    const std::string_view w = trim(current);
    if (!w.empty()) out.emplace_back(w);
    current.clear();
  };
  for (char c : text) {
    if (c == '|' || c == ',') {
      flush();
    } else {
      current += c;
    }
  }
  flush();
  for (const std::string& w : out) {
    if (!is_word(w)) return {};
  }
  if (out.size() < 2 || out.size() > 64) return {};
  return out;
}

// "one of (a|b|c)", "One of: a|b|c", "one of: a, b, c" in a description.
std::vector<std::string> choices_in(std::string_view description) {
  const std::string l = core::ascii_lower(description);
  const std::size_t at = l.find("one of");
  if (at == std::string::npos) return {};
  std::size_t i = at + 6;
  while (i < description.size() && (description[i] == ' ' || description[i] == ':')) ++i;
  bool parenthesised = i < description.size() && (description[i] == '(' || description[i] == '[');
  if (parenthesised) ++i;
  std::size_t end = i;
  while (end < description.size() && description[end] != ')' && description[end] != ']' &&
         !(description[end] == '.' &&
           (end + 1 == description.size() || description[end + 1] == ' ')) &&
         description[end] != ';') {
    ++end;
  }
  return word_list(description.substr(i, end - i));
}

// The text of "(default X)" (pflag's own form), or for other parsers
// "(default: X)" and "[default: X]", if any.
std::optional<std::string> default_in(std::string_view description, Style style) {
  const std::vector<std::string_view> forms =
      style == Style::cobra ? std::vector<std::string_view>{"(default "}
                            : std::vector<std::string_view>{"(default: ", "[default: "};
  for (std::string_view open : forms) {
    const std::size_t at = description.rfind(open);
    if (at == std::string_view::npos) continue;
    const char close = open[0] == '(' ? ')' : ']';
    std::size_t start = at + open.size();
    // A quoted default may hold the closing bracket.
    if (start < description.size() && description[start] == '"') {
      const std::size_t quote = description.find('"', start + 1);
      if (quote == std::string_view::npos) return std::nullopt;
      return std::string(description.substr(start, quote - start + 1));
    }
    const std::size_t end = description.find(close, start);
    if (end == std::string_view::npos) return std::nullopt;
    // Words ("use system certificates") describe a default, they are not one.
    const std::string_view text = trim(description.substr(start, end - start));
    if (text.find(' ') != std::string_view::npos) return std::nullopt;
    return std::string(text);
  }
  return std::nullopt;
}

// A default as JSON of the flag's type, or nullopt when it is not one
// ("unlimited" for an int, "$RESTIC_REPOSITORY").
std::optional<std::string> typed_default(const std::string& text, const std::string& type) {
  if (text.empty() || text.find('$') != std::string::npos) return std::nullopt;
  if (type == "bool") {
    if (text == "true" || text == "false") return text;
    return std::nullopt;
  }
  if (is_integer_type(type)) {
    const std::size_t start = text[0] == '-' ? 1 : 0;
    if (start == text.size() || text.size() > 18) return std::nullopt;
    for (std::size_t i = start; i < text.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    }
    if (type.starts_with("uint") && start == 1) return std::nullopt;
    return text;
  }
  if (type == "string" || type == "duration") {
    std::string value = text;
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (value.empty()) return std::nullopt;
    return json::serialize(json::string(value));
  }
  return std::nullopt;
}

// The value's name without decoration: "<pattern>" -> "pattern",
// "[=WHEN]" -> "WHEN", "filename[:header]" stays whole.
std::string bare_value_name(std::string_view name) {
  while (!name.empty() && (name.front() == '<' || name.front() == '[' || name.front() == '=')) {
    name.remove_prefix(1);
  }
  // A closing bracket goes only when its opening one went with the prefix.
  auto opened = [&](char open) { return name.find(open) == std::string_view::npos; };
  while (!name.empty() && ((name.back() == '>' && opened('<')) ||
                           (name.back() == ']' && opened('[')) || name.back() == '.')) {
    name.remove_suffix(1);
  }
  return std::string(name);
}

struct Spec {
  HelpFlag flag;
  bool optional_value = false;
  bool negatable = false;
  bool usable = false;
  // kubectl's form, `--name=DEFAULT:` with the description on the next
  // line: the text after '=' is the default, not the value's name.
  std::optional<std::string> shown_default;
};

// kubectl's `--chunk-size=500:` -> the type its default says and that
// default as JSON.
void type_from_default(HelpFlag& flag, const std::string& text) {
  std::string value = text;
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
    value = value.substr(1, value.size() - 2);
  }
  if (value == "true" || value == "false") {
    flag.type = "bool";
    flag.default_json = value;
  } else if (value == "[]") {
    flag.type = "stringArray";
  } else if (!value.empty() &&
             std::all_of(value.begin() + (value[0] == '-' ? 1 : 0), value.end(),
                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
             value.size() < 18 && value != "-") {
    flag.type = "int";
    flag.default_json = value;
  } else {
    flag.type = "string";
    if (!value.empty()) flag.default_json = json::serialize(json::string(value));
    if (value.find_first_of("0123456789") != std::string::npos &&
        value.find_first_of("smh") != std::string::npos && value.size() < 16) {
      flag.review.push_back("the default \"" + value + "\" may be a duration");
    }
  }
}

// "-f, --file=ARCHIVE", "--decorate-refs <pattern>", "-n, --namespace string",
// "--format {json,yaml}", "--color[=WHEN]", "-L <range:file>".
Spec read_spec(std::string_view spec) {
  Spec out;
  HelpFlag& flag = out.flag;
  std::string long_name;
  std::size_t i = 0;
  auto next_token = [&]() -> std::string_view {
    while (i < spec.size() && (spec[i] == ' ' || spec[i] == ',')) ++i;
    const std::size_t start = i;
    int depth = 0;  // a {a,b} or <a b> list is one token
    while (i < spec.size()) {
      const char c = spec[i];
      if (c == '{' || c == '<' || c == '[') ++depth;
      if (c == '}' || c == '>' || c == ']') --depth;
      if (depth <= 0 && (c == ' ' || c == ',')) break;
      ++i;
    }
    return spec.substr(start, i - start);
  };
  for (std::string_view token = next_token(); !token.empty(); token = next_token()) {
    if (token.starts_with("--")) {
      std::string_view name = token.substr(2);
      if (name.starts_with("[no-]")) {
        out.negatable = true;
        name.remove_prefix(5);
      }
      std::size_t cut = name.find_first_of("=[");
      std::string_view value;
      if (cut != std::string_view::npos) {
        value = name.substr(cut);
        name = name.substr(0, cut);
      }
      if (!is_word(name) || !std::isalnum(static_cast<unsigned char>(name[0]))) return out;
      if (long_name.empty()) long_name = std::string(name);
      if (!value.empty()) {
        out.optional_value = value.starts_with("[");
        flag.value_name = bare_value_name(value);
      }
    } else if (token.starts_with("-")) {
      if (token.size() < 2) return out;
      const char letter = token[1];
      if (!std::isalnum(static_cast<unsigned char>(letter)) && letter != '?') return out;
      if (token.size() > 2) {
        // "-NUM" style or a single-dash long option ("-name"): not a flag
        // corral can write.
        if (token[2] != '[' && token[2] != '=') return out;
        out.optional_value = token[2] == '[';
        flag.value_name = bare_value_name(token.substr(2));
      }
      if (flag.short_name.empty()) flag.short_name = std::string(1, letter);
    } else if (flag.value_name.empty()) {
      flag.value_name = token.front() == '{' ? std::string(token) : bare_value_name(token);
    }
  }
  if (long_name.empty() && flag.short_name.empty()) return out;
  flag.long_form = !long_name.empty();
  flag.name = flag.long_form ? long_name : flag.short_name;
  out.usable = true;
  return out;
}

void type_flag(HelpFlag& flag, bool optional_value, bool negatable, Style style) {
  const std::string& value = flag.value_name;
  if (negatable) flag.review.push_back("the program also takes --no-" + flag.name);
  if (value.empty()) {
    // pflag takes --name=true; other parsers want the bare switch.
    flag.type = style == Style::cobra && flag.long_form ? "bool" : "switch";
    return;
  }
  if (value.size() > 2 && value.front() == '{' && value.back() == '}') {
    flag.choices = word_list(std::string_view(value).substr(1, value.size() - 2));
    flag.type = "string";
    if (flag.choices.empty()) flag.review.push_back("the help lists the values as " + value);
  } else if (style == Style::cobra) {
    if (auto it = pflag_types().find(value); it != pflag_types().end()) {
      flag.type = it->second;
    } else {
      flag.type = "string";
      flag.review.push_back("the help calls the value \"" + value + "\"; typed as a string");
    }
  } else {
    static const std::set<std::string, std::less<>> kNumbers = {
        "N", "NUM", "NUMBER", "INT", "INTEGER", "COUNT", "n", "num", "int", "number", "count"};
    if (kNumbers.contains(value)) {
      flag.type = "int";
      flag.review.push_back("typed int from the value's name \"" + value + "\"");
    } else {
      flag.type = "string";
    }
  }
  if (optional_value) {
    flag.review.push_back("the value is optional to the program; a call always gives one");
  }
  // A flag the help says may be repeated takes a list.
  const std::string said = core::ascii_lower(flag.description);
  if (flag.type == "string" && flag.choices.empty() &&
      (said.find("specified multiple times") != std::string::npos ||
       said.find("can be repeated") != std::string::npos ||
       said.find("may be repeated") != std::string::npos ||
       said.find("may be given more than once") != std::string::npos)) {
    flag.type = "stringArray";
    flag.review.push_back("a list, since the help says the flag may be repeated");
  }
  if (flag.choices.empty() && flag.type == "string") {
    flag.choices = choices_in(flag.description);
    if (!flag.choices.empty()) flag.review.push_back("the values are read from the description");
  }
}

void finish_flag(HelpFlag& flag, bool optional_value, bool negatable, Style style) {
  flag.description = bounded(flag.description, kMaxDescription);
  type_flag(flag, optional_value, negatable, style);
  if (auto text = default_in(flag.description, style)) {
    flag.default_json = typed_default(*text, flag.type);
  }
  // A default outside the values read would fail the bind: the values win.
  if (flag.default_json && !flag.choices.empty() &&
      std::find(flag.choices.begin(), flag.choices.end(),
                json::value_to<std::string>(json::parse(*flag.default_json))) ==
          flag.choices.end()) {
    flag.review.push_back("the help's default " + *flag.default_json +
                          " is not among the values: left out");
    flag.default_json.reset();
  }
}

Style detect(const std::vector<std::string_view>& lines) {
  bool cobra_usage = false, cobra_sections = false, lower_usage = false, argparse_sections = false;
  bool git = false, gnu_usage = false;
  for (std::string_view line : lines) {
    const std::string_view t = trim(line);
    if (line == "Usage:") cobra_usage = true;
    if (t == "Flags:" || t == "Global Flags:" || t == "Available Commands:") cobra_sections = true;
    if (line.starts_with("usage: git ")) git = true;
    if (line.starts_with("usage: ")) lower_usage = true;
    if (line.starts_with("Usage: ")) gnu_usage = true;
    if (t == "options:" || t == "optional arguments:" || t == "positional arguments:") {
      argparse_sections = true;
    }
  }
  if (cobra_usage && cobra_sections) return Style::cobra;
  if (git) return Style::git;
  if (lower_usage && argparse_sections) return Style::argparse;
  if (gnu_usage) return Style::gnu;
  if (lower_usage) return Style::argparse;
  return Style::unknown;
}

bool looks_like_manual_page(const std::vector<std::string_view>& lines) {
  for (std::string_view line : lines) {
    const std::string_view t = trim(line);
    if (t.empty()) continue;
    // "GIT-LOG(1)   Git Manual   GIT-LOG(1)"
    const std::size_t open = t.find('(');
    return open != std::string_view::npos && open > 0 && open + 2 < t.size() &&
           std::isdigit(static_cast<unsigned char>(t[open + 1])) && t[open + 2] == ')' &&
           std::all_of(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(open), [](char c) {
             return std::isupper(static_cast<unsigned char>(c)) ||
                    std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
           });
  }
  return false;
}

}  // namespace

std::string_view to_string(Style style) {
  switch (style) {
    case Style::cobra:
      return "Cobra";
    case Style::gnu:
      return "GNU getopt_long";
    case Style::git:
      return "git parse-options";
    case Style::argparse:
      return "argparse";
    case Style::unknown:
      break;
  }
  return "unrecognised";
}

HelpPage parse(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == text.size()) break;
    start = end + 1;
  }
  HelpPage page;
  page.style = detect(lines);
  page.manual_page = looks_like_manual_page(lines);

  enum class Section { none, usage, flags, global_flags, commands, positional };
  Section section = Section::none;
  bool commands_in_positional = false;
  std::size_t positional_brace_indent = 0;
  std::map<std::string, std::size_t> command_index;
  std::set<std::string> flag_names;
  HelpFlag* open_flag = nullptr;  // the flag whose description may go on
  std::size_t open_indent = 0;
  Spec open_spec;
  bool description_done = false;
  std::string paragraph;
  bool seen_structure = false;  // an option, command or section was seen

  auto add_command = [&](std::string name, std::string description) {
    if (name == "help" || name == "completion") return;
    if (auto it = command_index.find(name); it != command_index.end()) {
      if (!description.empty()) page.commands[it->second].description = description;
      return;
    }
    if (page.commands.size() >= kMaxCommands) return;
    command_index[name] = page.commands.size();
    page.commands.push_back({std::move(name), bounded(std::move(description), kMaxDescription)});
  };
  auto close_flag = [&] {
    if (open_flag != nullptr && open_spec.shown_default) {
      open_flag->description = bounded(open_flag->description, kMaxDescription);
      type_from_default(*open_flag, *open_spec.shown_default);
      if (open_flag->type == "string") {
        open_flag->choices = choices_in(open_flag->description);
        if (!open_flag->choices.empty()) {
          open_flag->review.push_back("the values are read from the description");
          // A default outside them would fail the bind.
          if (open_flag->default_json) open_flag->default_json.reset();
        }
      }
    } else if (open_flag != nullptr) {
      finish_flag(*open_flag, open_spec.optional_value, open_spec.negatable, page.style);
    }
    open_flag = nullptr;
  };
  auto end_paragraph = [&] {
    if (!description_done && !paragraph.empty()) {
      page.description = bounded(paragraph, kMaxDescription);
      description_done = true;
    }
    paragraph.clear();
  };

  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::string_view line = lines[n];
    const std::string_view t = trim(line);
    const std::size_t indent = indent_of(line);
    if (t.empty()) {
      close_flag();
      end_paragraph();
      if (section == Section::usage) section = Section::none;
      continue;
    }
    // A description that goes on under its flag.
    if (open_flag != nullptr && indent > open_indent && !is_option_start(t)) {
      if (!open_flag->description.empty()) open_flag->description += ' ';
      open_flag->description += std::string(t);
      continue;
    }
    close_flag();
    if (is_usage_line(t)) {
      end_paragraph();
      std::string_view rest = trim(t.substr(t.find(':') + 1));
      if (!rest.empty()) page.usage.emplace_back(rest);
      section = Section::usage;
      seen_structure = true;
      continue;
    }
    if (section == Section::usage && indent > 0 && !is_option_start(t)) {
      page.usage.emplace_back(t);
      continue;
    }
    if (is_heading(line)) {
      end_paragraph();
      seen_structure = true;
      const std::string l = core::ascii_lower(t);
      if (l == "usage:") {
        section = Section::usage;
      } else if (l.find("command") != std::string::npos) {
        section = Section::commands;
      } else if (l.find("global") != std::string::npos) {
        section = Section::global_flags;
      } else if (l == "positional arguments:") {
        section = Section::positional;
        commands_in_positional = false;
      } else {
        section = Section::flags;
      }
      continue;
    }
    if (t.starts_with("Use \"")) {
      section = Section::none;
      continue;
    }
    if (indent > 0 && is_option_start(t)) {
      end_paragraph();
      seen_structure = true;
      // The spec ends at two spaces (or a tab); the description follows.
      std::size_t gap = t.find("  ");
      const std::size_t tab = t.find('\t');
      if (tab != std::string_view::npos && (gap == std::string_view::npos || tab < gap)) gap = tab;
      const std::string_view spec = gap == std::string_view::npos ? t : t.substr(0, gap);
      Spec parsed = read_spec(spec);
      // kubectl: `-A, --all-namespaces=false:`, its description below.
      if (const std::size_t equals = spec.rfind('=');
          parsed.usable && spec.ends_with(":") && equals != std::string_view::npos) {
        parsed.shown_default = std::string(spec.substr(equals + 1, spec.size() - equals - 2));
        parsed.flag.value_name.clear();
        parsed.optional_value = false;
      }
      if (!parsed.usable || page.flags.size() >= kMaxFlags ||
          !flag_names.insert(parsed.flag.name).second) {
        continue;
      }
      parsed.flag.global = section == Section::global_flags;
      if (gap != std::string_view::npos) parsed.flag.description = std::string(trim(t.substr(gap)));
      page.flags.push_back(std::move(parsed.flag));
      open_flag = &page.flags.back();
      open_indent = indent;
      open_spec = parsed;
      continue;
    }
    if (section == Section::positional && indent > 0 && t.front() == '{' &&
        t.find('}') != std::string_view::npos) {
      const std::size_t close = t.find('}');
      for (const std::string& name : word_list(t.substr(1, close - 1))) add_command(name, "");
      commands_in_positional = true;
      positional_brace_indent = indent;
      continue;
    }
    if (section == Section::positional &&
        !(commands_in_positional && indent > positional_brace_indent) && indent > 0 &&
        std::isalpha(static_cast<unsigned char>(t[0])) && page.positionals.size() < kMaxCommands) {
      const std::size_t space = t.find_first_of(" \t");
      page.positionals.push_back(
          {std::string(t.substr(0, space)),
           space == std::string_view::npos ? "" : std::string(trim(t.substr(space)))});
      continue;
    }
    const bool in_commands =
        section == Section::commands || (section == Section::positional && commands_in_positional &&
                                         indent > positional_brace_indent);
    if (in_commands && indent > 0 && indent <= 8 &&
        std::isalpha(static_cast<unsigned char>(t[0]))) {
      seen_structure = true;
      const std::size_t space = t.find_first_of(" \t");
      const std::string_view name = t.substr(0, space);
      if (!is_word(name)) continue;
      add_command(std::string(name),
                  space == std::string_view::npos ? "" : std::string(trim(t.substr(space))));
      continue;
    }
    // Prose: the first paragraph at the margin is the description.
    if (indent == 0 && !description_done && section != Section::commands &&
        !(seen_structure && page.style == Style::cobra && section != Section::none)) {
      if (!paragraph.empty()) paragraph += ' ';
      paragraph += std::string(t);
    }
  }
  close_flag();
  end_paragraph();
  // git lists a command's subcommands only in its usage lines ("git remote
  // add ...", "or: git remote rename ..."): the third word, when every
  // line names the same command.
  // A git page that lists commands in sections is git itself: a group.
  if (page.style == Style::git && !page.commands.empty()) page.group_only = true;
  if (page.style == Style::git && page.commands.empty() && page.usage.size() > 1) {
    std::string command;
    bool runs_alone = false;
    std::vector<std::string> seen;
    for (const std::string& line : page.usage) {
      std::vector<std::string_view> words;
      for (std::size_t i = 0; i < line.size() && words.size() < 3;) {
        const std::size_t end = std::min(line.find(' ', i), line.size());
        if (end > i) words.push_back(std::string_view(line).substr(i, end - i));
        i = end + 1;
      }
      if (words.size() < 2 || words[0] != "git") continue;
      if (command.empty()) command = std::string(words[1]);
      if (words[1] != command) continue;
      if (words.size() < 3 || !is_word(words[2]) ||
          !std::isalpha(static_cast<unsigned char>(words[2][0]))) {
        runs_alone = true;
        continue;
      }
      if (words[2] != "help" && words[2] != "completion" &&
          std::find(seen.begin(), seen.end(), words[2]) == seen.end()) {
        seen.emplace_back(words[2]);
      }
    }
    if (seen.size() >= 2) {
      for (std::string& name : seen) {
        if (page.commands.size() < kMaxCommands) page.commands.push_back({std::move(name), ""});
      }
      page.group_only = !runs_alone;
    }
  }
  if (page.style == Style::cobra && !page.usage.empty()) {
    page.group_only = std::all_of(page.usage.begin(), page.usage.end(),
                                  [](const std::string& u) { return u.ends_with("[command]"); });
  }
  return page;
}

}  // namespace corral::bind::help
