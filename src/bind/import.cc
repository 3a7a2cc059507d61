// src/bind/import.cc: a program's help pages -> a manifest (YAML). The walk
// runs each help under a process::Supervisor (the command sandbox) and
// reads it with bind/help_text; the writer emits only what load_manifest
// reads, with the guesses as `# review:` comments.
#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "bind/help_text.hpp"
#include "core/json.hpp"
#include "core/utf8.hpp"
#include "corral/bind.hpp"
#include "corral/bind_import.hpp"
#include "process/spawn.hpp"

namespace corral::bind {

namespace {

namespace json = core::json;
using Clock = std::chrono::steady_clock;

// What the walk learned about one command.
struct Imported {
  std::vector<std::string> path;  // below the root
  std::string description;
  help::HelpPage page;
  bool read = false;                  // its own help was read
  std::size_t parent = 0;             // index into the walk's list (the root's: itself)
  std::vector<std::size_t> children;  // indexes into the walk's list
};

// YAML scalars: plain when nothing could misread them, else JSON's double
// quotes (which YAML reads the same).
std::string scalar(std::string_view text) {
  static const std::set<std::string, std::less<>> kWords = {
      "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~",   "yes",
      "Yes",  "YES",  "no",   "No",    "NO",    "on",    "On",   "ON",   "off",  "Off", "OFF"};
  bool plain =
      !text.empty() && std::isalpha(static_cast<unsigned char>(text[0])) && !kWords.contains(text);
  for (char c : text) {
    plain =
        plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  }
  return plain ? std::string(text) : json::serialize(json::string(text));
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) out += separator;
    out += parts[i];
  }
  return out;
}

class Writer {
 public:
  void line(std::size_t depth, const std::string& text) {
    out_.append(depth * 2, ' ');
    out_ += text;
    out_ += '\n';
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Walk {
 public:
  explicit Walk(const ImportOptions& options)
      : options_(options), hardening_(options.hardening), supervisor_(supervisor_options(options)) {
    // A help page takes a moment of CPU: one that spins (or prints without
    // end) is killed by the kernel at half its time.
    if (!hardening_.rlimits.cpu_seconds) {
      hardening_.rlimits.cpu_seconds = static_cast<std::uint64_t>(std::max<std::int64_t>(
          1, std::chrono::duration_cast<std::chrono::seconds>(options.per_page).count() / 2));
    }
    try {
      process::Command probe{{options.program}, hardening_};
      executable_ = process::resolve_executable(probe);
    } catch (const process::SpawnError& e) {
      throw ExecutableNotFound(std::string("executable: ") + e.what());
    }
    deadline_ = Clock::now() + options.budget;
  }

  ImportResult run() {
    Imported root;
    root.path = options_.start;
    commands_.push_back(std::move(root));
    read(0);
    const help::HelpPage& top = commands_[0].page;
    if (top.flags.empty() && top.commands.empty()) {
      throw std::invalid_argument("the help of " + display(options_.start) +
                                  " shows no flags and no commands corral can read");
    }
    commands_[0].description = top.description;
    // Breadth first, so a budget that runs out leaves the upper levels whole.
    std::deque<std::size_t> queue{0};
    while (!queue.empty()) {
      const std::size_t at = queue.front();
      queue.pop_front();
      for (const help::HelpCommand& listed : commands_[at].page.commands) {
        Imported child;
        child.path = commands_[at].path;
        child.path.push_back(listed.name);
        child.description = listed.description;
        child.parent = at;
        const std::size_t index = commands_.size();
        commands_.push_back(std::move(child));
        commands_[at].children.push_back(index);
        if (commands_[index].path.size() - options_.start.size() > options_.max_depth) {
          note_once("depth", "stopped at depth " + std::to_string(options_.max_depth) +
                                 " (--depth): deeper commands are not listed");
          continue;
        }
        if (read(index)) queue.push_back(index);
      }
    }
    return write();
  }

 private:
  static process::SupervisorOptions supervisor_options(const ImportOptions& options) {
    process::SupervisorOptions s;
    s.slots = 1;
    s.deadline = options.per_page;
    s.output_budget = kHelpBudget;
    return s;
  }

  std::string display(const std::vector<std::string>& path) const {
    std::string out = std::filesystem::path(options_.program).filename().string();
    for (const std::string& p : path) out += " " + p;
    return out;
  }

  void note_once(const std::string& key, std::string text) {
    if (noted_.insert(key).second) notes_.push_back(std::move(text));
  }

  // The text a help run printed: stdout, or stderr when stdout is empty
  // (many programs print usage to stderr on -h).
  std::optional<std::string> help_text(const std::vector<std::string>& path, const char* ask) {
    if (Clock::now() >= deadline_) {
      note_once("budget", "stopped when the time budget (--budget) ran out");
      return std::nullopt;
    }
    if (pages_ >= options_.max_pages) {
      note_once("pages", "stopped after " + std::to_string(options_.max_pages) +
                             " help pages (--max-pages)");
      return std::nullopt;
    }
    ++pages_;
    std::vector<std::string> argv{executable_};
    argv.insert(argv.end(), path.begin(), path.end());
    argv.emplace_back(ask);
    process::RunOptions run;
    run.deadline = std::min(deadline_, Clock::now() + options_.per_page);
    std::optional<Execution> execution;
    try {
      execution = supervisor_.run(process::Command{argv, hardening_}, run);
    } catch (const Error& e) {
      // Help that exits non-zero (git's -h exits 129) still counts.
      if (e.execution() && e.code() == FailureCode::command_failed) {
        execution = *e.execution();
      } else {
        notes_.push_back(display(path) + " " + ask + ": " + e.what());
        return std::nullopt;
      }
    }
    if (execution->stdout_truncated() || execution->stderr_truncated()) {
      notes_.push_back(display(path) + " " + ask + ": more than " +
                       std::to_string(kHelpBudget / 1024) + " KiB of help: not read");
      return std::nullopt;
    }
    std::string text = execution->stdout_text();
    if (trimmed_empty(text)) text = execution->stderr_text();
    return text;
  }

  static bool trimmed_empty(const std::string& text) {
    return text.find_first_not_of(" \t\r\n") == std::string::npos;
  }

  // Reads the help of commands_[index]; true when it lists commands to walk.
  bool read(std::size_t index) {
    const std::vector<std::string> path = commands_[index].path;
    std::optional<std::string> text = help_text(path, "--help");
    if (!text) return false;
    help::HelpPage page = help::parse(*text);
    if (page.manual_page || (page.flags.empty() && page.commands.empty())) {
      if (std::optional<std::string> short_text = help_text(path, "-h")) {
        help::HelpPage other = help::parse(*short_text);
        // -h wins with anything it can read, or with a usage line where
        // --help showed a manual page or less (git shows its manual page
        // where `man` is installed and "failed to exec 'man'" where not).
        if (!other.flags.empty() || !other.commands.empty() ||
            (!other.usage.empty() && (page.manual_page || page.usage.empty()))) {
          page = std::move(other);
          text = std::move(short_text);
        }
      }
    }
    const bool manual = page.manual_page;
    if (manual) page = help::HelpPage{};
    // A program that answers every subcommand with its own top page would
    // be walked forever: a page that lists what its parent listed lists no
    // children of its own.
    if (index != 0 && !page.commands.empty() &&
        same_commands(page, commands_[commands_[index].parent].page)) {
      page.commands.clear();
      note_once("loop", "some subcommands' help repeats their parent's command list: not walked");
    }
    Imported& command = commands_[index];
    command.page = std::move(page);
    command.read = true;
    // A page with no usage, flags or commands is an error message ("fatal:
    // not a git repository"), not a description.
    const bool readable = !command.page.usage.empty() || !command.page.flags.empty() ||
                          !command.page.commands.empty();
    if (command.description.empty() && readable) command.description = command.page.description;
    command.read = readable;
    if (!readable) {
      // What it said instead, on one short line.
      // A manual page's header names the machine's man, not the program.
      std::string said = text->substr(0, text->find('\n'));
      if (said.size() > 120) said = said.substr(0, core::utf8_cut(said, 117)) + "...";
      notes_.push_back(display(path) + ": its help shows no usage, flags or commands (" +
                       (manual ? std::string("a manual page") : "\"" + said + "\"") + ")");
    }
    if (style_ == help::Style::unknown) style_ = command.page.style;
    return !command.page.commands.empty();
  }

  static bool same_commands(const help::HelpPage& a, const help::HelpPage& b) {
    if (a.commands.size() != b.commands.size()) return false;
    for (std::size_t i = 0; i < a.commands.size(); ++i) {
      if (a.commands[i].name != b.commands[i].name) return false;
    }
    return true;
  }

  // Flags listed under "Global Flags" below the root are the root's
  // persistent ones (Cobra).
  std::set<std::string> global_flag_names() const {
    std::set<std::string> names;
    for (std::size_t i = 1; i < commands_.size(); ++i) {
      for (const help::HelpFlag& flag : commands_[i].page.flags) {
        if (flag.global) names.insert(flag.name);
      }
    }
    return names;
  }

  void write_flag(Writer& w, std::size_t depth, const help::HelpFlag& flag) {
    w.line(depth, "- name: " + scalar(flag.name));
    if (!flag.short_name.empty()) w.line(depth + 1, "short: " + scalar(flag.short_name));
    if (!flag.long_form) w.line(depth + 1, "long: false");
    if (flag.type != "string") w.line(depth + 1, "type: " + flag.type);
    if (!flag.choices.empty()) {
      json::array values;
      for (const std::string& c : flag.choices) values.emplace_back(c);
      w.line(depth + 1, "enum: " + json::serialize(values));
    }
    if (flag.default_json) w.line(depth + 1, "default: " + *flag.default_json);
    if (!flag.description.empty()) w.line(depth + 1, "description: " + scalar(flag.description));
    for (const std::string& why : flag.review) {
      w.line(depth + 1, "# review: " + why);
      ++reviews_;
    }
    ++flags_;
  }

  void write_flags(Writer& w, std::size_t depth, const char* key,
                   const std::vector<const help::HelpFlag*>& flags) {
    if (flags.empty()) return;
    w.line(depth, std::string(key) + ":");
    for (const help::HelpFlag* flag : flags) write_flag(w, depth, *flag);
  }

  void write_command(Writer& w, std::size_t depth, std::size_t index,
                     const std::set<std::string>& globals) {
    const Imported& command = commands_[index];
    const bool root = index == 0;
    if (!root) {
      w.line(depth, "- name: " + scalar(command.path.back()));
      ++depth;
    }
    const std::string derived =
        root_name_ + (command.path.size() > options_.start.size() ? "_" : "") +
        join(std::vector<std::string>(
                 command.path.begin() + static_cast<std::ptrdiff_t>(options_.start.size()),
                 command.path.end()),
             "_");
    if (!root && suggested_operation_name(derived) != derived) {
      w.line(depth, "operation_name: " + scalar(suggested_operation_name(derived)));
      w.line(depth, "# review: \"" + derived + "\" is not a name MCP clients take");
      ++reviews_;
    }
    if (!command.description.empty()) w.line(depth, "description: " + scalar(command.description));
    if (!command.read) {
      w.line(depth, "# review: its help was not read (see the notes at the top)");
      ++reviews_;
    }
    const help::HelpPage& page = command.page;
    if (!command.children.empty() && command.read &&
        (page.style == help::Style::cobra || page.style == help::Style::git) && !page.group_only) {
      w.line(depth, "runnable: true");
    }
    std::vector<const help::HelpFlag*> local, persistent;
    for (const help::HelpFlag& flag : page.flags) {
      if (flag.name == "help" || flag.global) continue;
      (root && globals.contains(flag.name) ? persistent : local).push_back(&flag);
    }
    write_flags(w, depth, "persistent_flags", persistent);
    write_flags(w, depth, "flags", local);
    // argparse takes a `--` only before a positional: a command whose help
    // lists none is written with neither.
    if (command.read && page.style == help::Style::argparse && command.children.empty() &&
        page.positionals.empty()) {
      w.line(depth, "args: []");
      w.line(depth, "separator: false");
    }
    if (!command.children.empty()) {
      w.line(depth, "commands:");
      for (std::size_t child : command.children) write_command(w, depth, child, globals);
    }
    ++commands_written_;
  }

  ImportResult write() {
    Writer w;
    std::string shown = display(options_.start);
    std::size_t read_count = 0;
    for (const Imported& c : commands_) read_count += c.read ? 1 : 0;
    root_name_ = std::filesystem::path(options_.program).filename().string();
    if (!options_.start.empty()) root_name_ += "_" + join(options_.start, "_");
    root_name_ = suggested_operation_name(root_name_);
    std::string body;
    {
      Writer b;
      write_command(b, 0, 0, global_flag_names());
      body = b.take();
    }
    w.line(0, "# Written by `corral bind " + shown + "` from the program's own help (" +
                  std::string(help::to_string(style_)) + " style): " + std::to_string(read_count) +
                  " help pages, " + std::to_string(commands_written_) + " commands, " +
                  std::to_string(flags_) + " flags.");
    w.line(0, "# Lines marked \"review:\" (" + std::to_string(reviews_) +
                  ") are guesses from the help's text: check them before serving this.");
    for (const std::string& note : notes_) w.line(0, "# note: " + note);
    w.line(0, "corral: 1");
    w.line(0, "executable: " + scalar(options_.program));
    w.line(0, "name: " + scalar(root_name_));
    if (!options_.start.empty()) {
      json::array fixed;
      for (const std::string& s : options_.start) fixed.emplace_back(s);
      w.line(0, "fixed_args: " + json::serialize(fixed));
    }
    ImportResult result;
    result.manifest = w.take() + body;
    result.pages = read_count;
    result.runs = pages_;
    result.commands = commands_written_;
    result.flags = flags_;
    result.reviews = reviews_;
    result.notes = notes_;
    return result;
  }

  static constexpr std::uint64_t kHelpBudget = 512 * 1024;

  const ImportOptions& options_;
  process::Hardening hardening_;
  process::Supervisor supervisor_;
  std::string executable_;
  Clock::time_point deadline_;
  std::vector<Imported> commands_;
  help::Style style_ = help::Style::unknown;
  std::size_t pages_ = 0;
  std::size_t flags_ = 0;
  std::size_t reviews_ = 0;
  std::size_t commands_written_ = 0;
  std::string root_name_;
  std::vector<std::string> notes_;
  std::set<std::string> noted_;
};

}  // namespace

ImportResult import_manifest(const ImportOptions& options) {
  if (options.program.empty()) throw std::invalid_argument("no program to bind");
  for (const std::string& word : options.start) {
    if (word.empty() || word[0] == '-') {
      throw std::invalid_argument("a subcommand to start from is a word, not \"" + word + "\"");
    }
  }
  return Walk(options).run();
}

}  // namespace corral::bind
