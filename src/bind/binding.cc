// src/bind/binding.cc: tree -> operations (filters, names, flags, schemas),
// input -> argv, and calls through the Supervisor.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

#include "bind/codecs.hpp"
#include "core/units.hpp"
#include "corral/bind.hpp"
#include "corral/bind_import.hpp"
#include "process/filesystem_view.hpp"
#include "process/spawn.hpp"

namespace corral::bind {

namespace {

// ^[A-Za-z0-9_-]{1,64}$: what the major MCP clients and model APIs take for
// a tool's name (dots and longer names are refused by some of them).
constexpr std::size_t kMaxOperationName = 64;

bool is_name_character(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool is_operation_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxOperationName) return false;
  return std::all_of(name.begin(), name.end(), is_name_character);
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) out += separator;
    out += parts[i];
  }
  return out;
}

[[noreturn]] void invalid_input(const std::string& operation, const std::string& message) {
  throw_failure(FailureCode::invalid_request, operation + ": " + message);
}

// Linux's exec limits: each string (with its NUL) at most MAX_ARG_STRLEN, and
// all strings plus their pointers at most a quarter of the stack rlimit
// (what sysconf(_SC_ARG_MAX) returns), never more than 6 MiB (_STK_LIM / 4 * 3).
constexpr std::size_t kMaxArgStrlen = 131072;
constexpr std::size_t kMaxArgTotal = 6u << 20;

std::size_t arg_max() {
  long n = ::sysconf(_SC_ARG_MAX);
  std::size_t limit = n > 0 ? static_cast<std::size_t>(n) : kMaxArgStrlen;
  return std::min(limit, kMaxArgTotal);
}

// BoundFlag: a published flag with its codec and how it is written.
struct BoundFlag {
  FlagSpec spec;
  std::shared_ptr<const Codec> codec;
  Spelling spelling;
};

// Bound: an operation plus what a call needs.
struct Bound {
  Operation operation;
  // After the executable, before the flags: the command path with each
  // command's fixed_args after its name.
  std::vector<std::string> leading;
  std::vector<BoundFlag> flags;  // in flag order
  std::optional<std::vector<ArgSpec>> args;
  std::vector<std::string> environment;  // for the exec size check
  bool separator = true;
  std::vector<int> ok_exit_codes;
};

// What a command passes on to its subcommands besides flags and confinement.
struct Inherited {
  std::vector<std::string> leading;
  bool separator = true;
  std::vector<int> ok_exit_codes{0};
};

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// A selector pattern names `path` when its words match the path's first
// words ('*' matches any one).
bool names_path(const std::vector<std::string>& pattern, const std::vector<std::string>& path) {
  if (pattern.size() > path.size()) return false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != "*" && pattern[i] != path[i]) return false;
  }
  return true;
}

bool any_names(const std::vector<std::string>& patterns, const std::vector<std::string>& path) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return names_path(words(p), path); });
}

bool empty_container(const json::value& v) {
  return (v.is_array() && v.get_array().empty()) || (v.is_object() && v.get_object().empty());
}

std::string display_path(const std::string& root, const std::vector<std::string>& path) {
  return path.empty() ? root : root + " " + join(path, " ");
}

// One flag's schema: its codec's, with its description and its default
// (which must encode).
json::object flag_schema(const FlagSpec& flag, const Codec& codec, const std::string& where) {
  json::object schema = codec.schema();
  if (!flag.description.empty()) schema["description"] = flag.description;
  if (flag.default_json) {
    json::value def;
    try {
      def = core::parse_json(*flag.default_json, "default");
      std::vector<std::string> scratch;
      codec.encode(Spelling(std::string_view(flag.name)), def, scratch);
    } catch (const std::exception& e) {
      throw std::invalid_argument("command \"" + where + "\": flag --" + flag.name +
                                  ": bad default: " + e.what());
    }
    schema["default"] = def;
  }
  return schema;
}

// The schema of the input's "args": strings, as many as the command's args
// allow when it declares them.
json::object args_schema(const std::optional<std::vector<ArgSpec>>& args) {
  json::object schema;
  schema["type"] = "array";
  schema["items"] = json::object{{"type", "string"}};
  if (args) {
    size_t min = 0;
    bool unbounded = false;
    std::string names;
    for (const auto& a : *args) {
      min += a.required ? 1 : 0;
      unbounded = unbounded || a.variadic;
      names += (names.empty() ? "" : " ") + a.name + (a.variadic ? "..." : "");
    }
    if (min > 0) schema["minItems"] = min;
    if (!unbounded) schema["maxItems"] = args->size();
    if (!names.empty()) schema["description"] = "positional: " + names;
  }
  return schema;
}

// The schema of a call's input, {flags, args}; "flags" is required when a
// flag is.
json::object input_schema(json::object flags_schema, json::object args_schema) {
  const bool any_required = flags_schema.contains("required");
  json::object input;
  input["type"] = "object";
  json::object input_props;
  input_props["flags"] = std::move(flags_schema);
  input_props["args"] = std::move(args_schema);
  input["properties"] = std::move(input_props);
  input["additionalProperties"] = false;
  if (any_required) input["required"] = json::array{"flags"};
  return input;
}

}  // namespace

std::string suggested_operation_name(std::string_view name) {
  std::string out;
  for (char c : name) out += is_name_character(c) ? c : '_';
  if (out.empty()) out = "operation";
  if (out.size() > kMaxOperationName) {
    // A hash of the whole keeps two long names that differ only in their
    // tails apart (FNV-1a).
    std::uint32_t hash = 2166136261u;
    for (char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
    char tail[10];
    std::snprintf(tail, sizeof tail, "_%08x", hash);
    out = out.substr(0, kMaxOperationName - 9) + tail;
  }
  return out;
}

std::string output_schema() {
  json::object props;
  props["stdout"] = json::object{{"type", "string"}};
  props["stderr"] = json::object{{"type", "string"}};
  props["exitCode"] = json::object{{"type", "integer"}};
  props["truncated"] = json::object{{"type", "boolean"}};
  props["replaced"] = json::object{{"type", "boolean"}};
  json::object schema;
  schema["type"] = "object";
  schema["properties"] = std::move(props);
  schema["required"] = json::array{"stdout", "stderr", "exitCode", "truncated"};
  schema["additionalProperties"] = false;
  return json::serialize(schema);
}

std::string profile_json(const process::Hardening& h) {
  const process::Confinement& c = h.confinement;
  json::object p;
  p["user"] = c.user_namespace ? "confined" : "host";
  p["uid"] = c.uid ? json::value(*c.uid) : json::value(nullptr);
  p["gid"] = c.gid ? json::value(*c.gid) : json::value(nullptr);
  p["seccomp"] = c.seccomp;
  p["pid_namespace"] = c.pid_namespace;
  p["filesystem"] = std::string(process::to_string(c.filesystem));
  json::array binds;
  for (const auto& b : c.binds) {
    binds.push_back(json::object{{"source", b.source},
                                 {"target", b.target.empty() ? b.source : b.target},
                                 {"writable", b.writable}});
  }
  p["binds"] = std::move(binds);
  p["network"] = c.network && !h.new_network_namespace ? "host" : "none";
  json::object limits;
  limits["processes"] =
      c.limits.processes ? json::value(*c.limits.processes) : json::value(nullptr);
  limits["memory"] =
      c.limits.memory_bytes ? json::value(*c.limits.memory_bytes) : json::value(nullptr);
  limits["cpus"] = c.limits.cpus ? json::value(*c.limits.cpus) : json::value(nullptr);
  p["limits"] = std::move(limits);
  p["strict"] = c.strict;
  json::object environment;
  if (h.environment_allow) {
    json::array allow;
    for (const auto& name : *h.environment_allow) allow.push_back(json::value(name));
    environment["allow"] = std::move(allow);
  } else {
    environment["allow"] = "all";
  }
  json::object set;
  for (const auto& [k, v] : h.environment_set) set[k] = v;
  environment["set"] = std::move(set);
  p["environment"] = std::move(environment);
  p["working_directory"] =
      h.working_directory ? json::value(*h.working_directory) : json::value(nullptr);
  return json::serialize(p);
}

std::string output_view(const Execution& execution) {
  json::object view;
  view["stdout"] = execution.stdout_text();
  view["stderr"] = execution.stderr_text();
  view["exitCode"] = execution.exit_code() ? *execution.exit_code() : -1;
  view["truncated"] = execution.stdout_truncated() || execution.stderr_truncated();
  if (execution.stdout_replaced() || execution.stderr_replaced()) view["replaced"] = true;
  return json::serialize(view);
}

bool Selectors::offers(const std::vector<std::string>& path) const {
  if (!include.empty() && !any_names(include, path)) return false;
  return !any_names(exclude, path);
}

bool Selectors::offers_flag(const std::vector<std::string>& path, const std::string& flag) const {
  for (const std::string& text : exclude_flags) {
    std::vector<std::string> pattern = words(text);
    if (pattern.empty() || pattern.back() != "--" + flag) continue;
    pattern.pop_back();
    if (names_path(pattern, path)) return false;
  }
  return true;
}

void Selectors::validate() const {
  for (const auto* list : {&include, &exclude}) {
    for (const std::string& pattern : *list) {
      if (words(pattern).empty()) throw std::invalid_argument("an empty command pattern");
      for (const std::string& word : words(pattern)) {
        if (word.starts_with("-")) {
          throw std::invalid_argument("command pattern \"" + pattern +
                                      "\" names a flag: flags go in exclude_flags");
        }
      }
    }
  }
  for (const std::string& pattern : exclude_flags) {
    std::vector<std::string> w = words(pattern);
    if (w.empty() || !w.back().starts_with("--") || w.back().size() < 3) {
      throw std::invalid_argument("flag pattern \"" + pattern +
                                  "\" must end with the flag (\"log --format\", \"--verbose\")");
    }
  }
}

class Binding::Impl {
 public:
  Impl(CommandTree tree, const BindOptions& options) : tree_(std::move(tree)) {
    if (tree_.root.name.empty()) throw std::invalid_argument("the root command has no name");
    try {
      process::Command probe{{tree_.executable}, tree_.hardening};
      executable_ = process::resolve_executable(probe);
    } catch (const process::SpawnError& e) {
      throw ExecutableNotFound(std::string("executable: ") + e.what());
    }
    override_ = options.confinement;
    root_segment_ = options.prefix ? *options.prefix
                    : tree_.prefix ? *tree_.prefix
                                   : tree_.root.name;
    tree_.selectors.validate();
    for (const auto& [flag, codec] : options.codecs) {
      try {
        codecs_[flag] = text_codec(codec.constraints_json);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("codec for flag --" + flag + ": " + e.what());
      }
    }
    std::vector<std::string> path;
    std::vector<FlagSpec> inherited;
    visit(tree_.root, path, inherited, Inherited{}, false, tree_.hardening.confinement, options);
    for (const auto& [key, name] : options.operation_names) {
      if (used_renames_.count(key) == 0) {
        throw std::invalid_argument("operation name given for \"" + key +
                                    "\", which is not a bound command");
      }
    }
    supervisor_ = std::make_unique<process::Supervisor>(tree_.supervisor);
    for (auto& b : bound_) {
      b.operation.protections = supervisor_->protections(b.operation.hardening);
      operations_.push_back(b.operation);
    }
  }

  const std::vector<Operation>& operations() const noexcept { return operations_; }

  const Bound* find(std::string_view name) const noexcept {
    for (const auto& b : bound_) {
      if (b.operation.name == name) return &b;
    }
    return nullptr;
  }

  std::vector<std::string> argv_for(std::string_view name, std::string_view input_json) const {
    const Bound* b = find(name);
    if (b == nullptr) {
      throw_failure(FailureCode::invalid_request, "no such operation: " + std::string(name));
    }
    const std::string& op = b->operation.name;
    json::value input;
    try {
      check_input_text(input_json);
      input = core::parse_json(input_json.empty() ? "{}" : input_json, "input");
    } catch (const std::invalid_argument& e) {
      invalid_input(op, e.what());
    }
    if (!input.is_object()) invalid_input(op, "input must be a JSON object");
    const json::object& object = input.get_object();
    for (const auto& [key, value] : object) {
      if (key != "flags" && key != "args") {
        invalid_input(op, "unknown input key \"" + std::string(key) + "\"");
      }
    }
    const json::object empty;
    const json::object* flags = &empty;
    if (auto* f = object.if_contains("flags")) {
      if (!f->is_object()) invalid_input(op, "flags must be an object");
      flags = &f->get_object();
    }
    std::vector<std::string> argv{executable_};
    argv.insert(argv.end(), b->leading.begin(), b->leading.end());
    for (const auto& [key, value] : *flags) {
      bool known = false;
      for (const auto& flag : b->flags) known = known || flag.spec.name == key;
      if (!known) invalid_input(op, "unknown flag \"" + std::string(key) + "\"");
    }
    bool last_greedy = false;
    for (const auto& flag : b->flags) {
      const json::value* value = flags->if_contains(flag.spec.name);
      if (value == nullptr) {
        if (flag.spec.required) invalid_input(op, "flag \"" + flag.spec.name + "\" is required");
        continue;
      }
      if (empty_container(*value) && flag.spec.default_json &&
          !empty_container(core::parse_json(*flag.spec.default_json, "default"))) {
        // Encoding nothing would leave the program's non-empty default.
        invalid_input(op, "flag \"" + flag.spec.name +
                              "\": an empty value cannot override its non-empty default");
      }
      size_t before = argv.size();
      try {
        flag.codec->encode(flag.spelling, *value, argv);
      } catch (const std::invalid_argument& e) {
        invalid_input(op, "flag \"" + flag.spec.name + "\": " + e.what());
      }
      if (argv.size() != before) last_greedy = flag.spec.greedy;
    }
    if (last_greedy) argv.push_back("--");  // ends the greedy flag's values
    if (b->separator) argv.push_back("--");
    size_t arg_count = 0;
    if (auto* a = object.if_contains("args")) {
      if (!a->is_array()) invalid_input(op, "args must be an array of strings");
      for (const auto& arg : a->get_array()) {
        if (!arg.is_string()) invalid_input(op, "args must be an array of strings");
        std::string text(arg.get_string());
        if (text.find('\0') != std::string::npos) invalid_input(op, "an arg contains a NUL byte");
        if (!b->separator && text.starts_with("-")) {
          invalid_input(op, "the arg " + core::quoted(text) +
                                " starts with '-': this command has no `--` before its args "
                                "(separator: false), so the program would read it as an option");
        }
        argv.push_back(std::move(text));
        ++arg_count;
      }
    }
    check_arg_count(*b, arg_count);
    check_exec_size(*b, argv);
    return argv;
  }

  Execution call(std::string_view name, std::string_view input_json,
                 const process::RunOptions& options) {
    std::vector<std::string> argv = argv_for(name, input_json);
    const Bound& bound = *find(name);
    process::Command command{std::move(argv), bound.operation.hardening};
    auto with_view = [](const Execution& e) {
      ExecutionData data = e.data();
      data.value = output_view(e);
      return Execution(std::move(data));
    };
    try {
      return with_view(supervisor_->run(command, options));
    } catch (const Error& e) {
      if (!e.execution()) throw;
      // An exit status the command declares a success is one.
      const std::optional<int> status = e.execution()->exit_code();
      if (e.code() == FailureCode::command_failed && status &&
          std::find(bound.ok_exit_codes.begin(), bound.ok_exit_codes.end(), *status) !=
              bound.ok_exit_codes.end()) {
        ExecutionData data = e.execution()->data();
        data.failed = false;
        return with_view(Execution(std::move(data)));
      }
      throw_failure(e.code(), e.what(),
                    std::make_shared<const Execution>(with_view(*e.execution())));
    }
  }

  process::Status status() const { return supervisor_->status(); }
  bool shutdown(process::Clock::time_point deadline) { return supervisor_->shutdown(deadline); }

 private:
  // Refuses what execve would refuse with E2BIG, before any process starts.
  void check_exec_size(const Bound& b, const std::vector<std::string>& argv) const {
    std::size_t total = executable_.size() + 1;  // the kernel copies the filename too
    auto add = [&](const std::string& s, const char* what) {
      if (s.size() + 1 > kMaxArgStrlen) {
        invalid_input(b.operation.name, std::string(what) + " of " + std::to_string(s.size()) +
                                            " bytes is over the kernel's " +
                                            std::to_string(kMaxArgStrlen - 1) +
                                            "-byte limit for one argument");
      }
      total += s.size() + 1 + sizeof(char*);
    };
    for (const auto& s : argv) add(s, "an argument");
    for (const auto& s : b.environment) add(s, "an environment variable");
    total += 2 * sizeof(char*);  // the NULL ends of argv and envp
    const std::size_t limit = arg_max();
    if (total > limit) {
      invalid_input(b.operation.name, "the arguments and environment take " +
                                          std::to_string(total) + " bytes; exec takes at most " +
                                          std::to_string(limit));
    }
  }

  // Refuses a bind the process layer could not make (its one rule).
  void check_binds(const std::string& where, const process::Confinement& c) const {
    if (std::string problem = process::bind_problem(c.binds); !problem.empty()) {
      throw std::invalid_argument("command \"" + where + "\": " + problem);
    }
  }

  void check_arg_count(const Bound& b, size_t given) const {
    if (!b.args) return;
    size_t min = 0, max = b.args->size();
    bool unbounded = false;
    for (const auto& a : *b.args) {
      min += a.required ? 1 : 0;
      unbounded = unbounded || a.variadic;
    }
    if (given < min) {
      invalid_input(b.operation.name, "needs at least " + std::to_string(min) + " args");
    }
    if (!unbounded && given > max) {
      invalid_input(b.operation.name, "takes at most " + std::to_string(max) + " args");
    }
  }

  void visit(const CommandSpec& spec, std::vector<std::string>& path,
             const std::vector<FlagSpec>& inherited, Inherited passed, bool ancestor_withheld,
             process::Confinement confinement, const BindOptions& options) {
    spec.confinement.apply_to(confinement);
    if (!path.empty()) passed.leading.push_back(path.back());
    passed.leading.insert(passed.leading.end(), spec.fixed_args.begin(), spec.fixed_args.end());
    if (spec.separator) passed.separator = *spec.separator;
    if (spec.ok_exit_codes) passed.ok_exit_codes = *spec.ok_exit_codes;
    bool withheld = ancestor_withheld || spec.hidden || spec.deprecated;
    bool root_builtin = path.size() == 1 && (path[0] == "help" || path[0] == "completion");
    CommandInfo info{path, &spec};
    if (spec.runnable && !withheld && !root_builtin && !spec.omit && tree_.selectors.offers(path) &&
        (!options.exposure || options.exposure(info))) {
      bind_command(spec, path, inherited, passed, confinement, options);
    }
    // Children see this command's persistent flags after their own.
    std::vector<FlagSpec> next = spec.persistent_flags;
    next.insert(next.end(), inherited.begin(), inherited.end());
    for (const auto& child : spec.commands) {
      path.push_back(child.name);
      visit(child, path, next, passed, withheld, confinement, options);
      path.pop_back();
    }
  }

  void bind_command(const CommandSpec& spec, const std::vector<std::string>& path,
                    const std::vector<FlagSpec>& inherited, const Inherited& passed,
                    const process::Confinement& confinement, const BindOptions& options) {
    std::string where = display_path(tree_.root.name, path);
    Bound b;
    b.leading = passed.leading;
    b.separator = passed.separator;
    b.ok_exit_codes = passed.ok_exit_codes;
    b.args = spec.args;
    b.operation.hardening = tree_.hardening;
    b.operation.hardening.confinement = override_ ? *override_ : confinement;
    // One switch for the network: the confinement's (the older flag follows).
    b.operation.hardening.new_network_namespace = !b.operation.hardening.confinement.network;
    check_binds(where, b.operation.hardening.confinement);
    b.environment = process::command_environment(b.operation.hardening);

    std::string name = claim_operation_name(spec, path, where, options);
    json::object flags = bind_flags(spec, path, inherited, where, options, b.flags);
    json::object args = args_schema(spec.args);
    json::object input = input_schema(std::move(flags), std::move(args));

    b.operation.name = name;
    b.operation.description = spec.description;
    b.operation.command_path = path;
    b.operation.input_schema = json::serialize(input);
    b.operation.output_schema = output_schema();
    b.operation.annotations = spec.annotations;
    bound_.push_back(std::move(b));
  }

  // The operation's name ("<root>_<path>" unless the manifest or
  // BindOptions::operation_names renames it), checked and claimed for the
  // command at `where`.
  std::string claim_operation_name(const CommandSpec& spec, const std::vector<std::string>& path,
                                   const std::string& where, const BindOptions& options) {
    std::vector<std::string> segments{root_segment_};
    segments.insert(segments.end(), path.begin(), path.end());
    std::string name = join(segments, "_");
    std::string key = join(path, " ");
    if (spec.operation_name) name = *spec.operation_name;
    if (auto it = options.operation_names.find(key); it != options.operation_names.end()) {
      name = it->second;
      used_renames_.insert(key);
    }
    if (!is_operation_name(name)) {
      throw std::invalid_argument(
          "command \"" + where + "\": operation name \"" + name +
          "\" does not match ^[A-Za-z0-9_-]{1,64}$ (MCP clients and model APIs refuse other "
          "tool names); give it one with operation_name, for example \"" +
          suggested_operation_name(name) + "\"");
    }
    if (auto it = names_.find(name); it != names_.end()) {
      throw std::invalid_argument("commands \"" + it->second + "\" and \"" + where +
                                  "\" both map to operation \"" + name +
                                  "\"; rename one (operation_name in a manifest, "
                                  "BindOptions::operation_names in C++)");
    }
    names_[name] = where;
    return name;
  }

  // The flags a call may give, appended to `bound` with their codecs, and
  // the schema of the input's "flags" object.
  json::object bind_flags(const CommandSpec& spec, const std::vector<std::string>& path,
                          const std::vector<FlagSpec>& inherited, const std::string& where,
                          const BindOptions& options, std::vector<BoundFlag>& bound) const {
    // Flags: local, the command's persistent ones, then inherited; a nearer
    // flag shadows a farther one of the same name.
    std::vector<FlagSpec> all = spec.flags;
    all.insert(all.end(), spec.persistent_flags.begin(), spec.persistent_flags.end());
    all.insert(all.end(), inherited.begin(), inherited.end());
    std::set<std::string> seen;
    CommandInfo info{path, &spec};
    json::object properties;
    json::array required;
    for (const auto& flag : all) {
      if (!seen.insert(flag.name).second) continue;
      if (flag.name == "help" || flag.hidden || flag.deprecated) continue;
      if (!tree_.selectors.offers_flag(path, flag.name)) continue;
      if (options.flag_filter && !options.flag_filter(info, flag)) continue;
      std::shared_ptr<const Codec> codec = codec_for(flag, where);
      Spelling spelling = spelling_of(flag, *codec, where);
      json::object schema = flag_schema(flag, *codec, where);
      properties[flag.name] = std::move(schema);
      if (flag.required) required.push_back(json::value(flag.name));
      bound.push_back(BoundFlag{flag, codec, std::move(spelling)});
    }

    json::object flags_schema;
    flags_schema["type"] = "object";
    flags_schema["properties"] = std::move(properties);
    flags_schema["additionalProperties"] = false;
    if (!required.empty()) flags_schema["required"] = std::move(required);
    return flags_schema;
  }

  // The codec registered for the flag's name, else its type's built-in one.
  std::shared_ptr<const Codec> codec_for(const FlagSpec& flag, const std::string& where) const {
    std::shared_ptr<const Codec> codec;
    if (auto it = codecs_.find(flag.name); it != codecs_.end()) {
      codec = it->second;
    } else {
      codec = builtin_codec(flag.type);
    }
    if (!codec) {
      throw std::invalid_argument("command \"" + where + "\": flag --" + flag.name +
                                  " has type \"" + flag.type +
                                  "\" with no codec (register one in BindOptions::codecs)");
    }
    if (!flag.constraints_json.empty()) {
      try {
        codec = narrowed(std::move(codec), flag.constraints_json);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("command \"" + where + "\": flag --" + flag.name + ": " +
                                    e.what());
      }
    }
    return codec;
  }

  // `--name=value`, `--name value` or `-n value`, checked against the type.
  static Spelling spelling_of(const FlagSpec& flag, const Codec& codec, const std::string& where) {
    auto refuse = [&](const std::string& why) {
      throw std::invalid_argument("command \"" + where + "\": flag --" + flag.name + ": " + why);
    };
    if (!flag.short_name.empty()) {
      const unsigned char c = static_cast<unsigned char>(flag.short_name[0]);
      if (flag.short_name.size() != 1 || !(std::isalnum(c) || c == '?' || c == '@')) {
        refuse("a short name is one letter or digit, not \"" + flag.short_name + "\"");
      }
    }
    const bool separate = !flag.long_form || flag.style == FlagSpec::Style::separate;
    if (separate && codec.takes_value() && flag.type == "bool") {
      refuse(
          "a bool written as a separate argument (`--name true`) is read by most parsers as the "
          "flag and then an arg: give the flag type switch");
    }
    if (!flag.long_form) {
      if (flag.short_name.empty()) refuse("long: false needs a short name");
      return Spelling("-" + flag.short_name, true);
    }
    return Spelling("--" + flag.name, separate);
  }

  CommandTree tree_;
  std::string executable_;
  std::string root_segment_;
  std::map<std::string, std::shared_ptr<const Codec>> codecs_;
  std::map<std::string, std::string> names_;  // operation name -> command path
  std::set<std::string> used_renames_;
  std::vector<Bound> bound_;
  std::vector<Operation> operations_;
  std::unique_ptr<process::Supervisor> supervisor_;
  std::optional<process::Confinement> override_;
};

std::unique_ptr<Binding> Binding::bind(CommandTree tree, const BindOptions& options) {
  return std::unique_ptr<Binding>(new Binding(std::make_unique<Impl>(std::move(tree), options)));
}

Binding::Binding(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Binding::~Binding() = default;

const std::vector<Operation>& Binding::operations() const noexcept { return impl_->operations(); }

const Operation* Binding::find(std::string_view name) const noexcept {
  const Bound* b = impl_->find(name);
  return b != nullptr ? &b->operation : nullptr;
}

std::vector<std::string> Binding::argv_for(std::string_view name,
                                           std::string_view input_json) const {
  return impl_->argv_for(name, input_json);
}

Execution Binding::call(std::string_view name, std::string_view input_json,
                        const process::RunOptions& options) {
  return impl_->call(name, input_json, options);
}

process::Status Binding::status() const { return impl_->status(); }

bool Binding::shutdown(process::Clock::time_point deadline) { return impl_->shutdown(deadline); }

}  // namespace corral::bind
