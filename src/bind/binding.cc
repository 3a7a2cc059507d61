// src/bind/binding.cc: tree -> operations (filters, names, flags, schemas),
// input -> argv, and calls through the Supervisor.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "bind/codecs.hpp"
#include "core/units.hpp"
#include "corral/bind.hpp"
#include "process/filesystem_view.hpp"
#include "process/spawn.hpp"

namespace corral::bind {

namespace {

// ^[A-Za-z0-9_.-]{1,128}$
bool is_operation_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
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

// BoundFlag: a published flag with its codec.
struct BoundFlag {
  FlagSpec spec;
  std::shared_ptr<const Codec> codec;
};

// Bound: an operation plus what a call needs.
struct Bound {
  Operation operation;
  std::vector<std::string> command_path;
  std::vector<BoundFlag> flags;  // in flag order
  std::optional<std::vector<ArgSpec>> args;
  std::vector<std::string> environment;  // for the exec size check
};

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
      codec.encode(flag.name, def, scratch);
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
    root_segment_ = options.prefix ? *options.prefix : tree_.root.name;
    for (const auto& [flag, codec] : options.codecs) {
      try {
        codecs_[flag] = text_codec(codec.constraints_json);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("codec for flag --" + flag + ": " + e.what());
      }
    }
    std::vector<std::string> path;
    std::vector<FlagSpec> inherited;
    visit(tree_.root, path, inherited, false, tree_.hardening.confinement, options);
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
    argv.insert(argv.end(), b->command_path.begin(), b->command_path.end());
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
        flag.codec->encode(flag.spec.name, *value, argv);
      } catch (const std::invalid_argument& e) {
        invalid_input(op, "flag \"" + flag.spec.name + "\": " + e.what());
      }
      if (argv.size() != before) last_greedy = flag.spec.greedy;
    }
    if (last_greedy) argv.push_back("--");  // ends the greedy flag's values
    argv.push_back("--");
    size_t arg_count = 0;
    if (auto* a = object.if_contains("args")) {
      if (!a->is_array()) invalid_input(op, "args must be an array of strings");
      for (const auto& arg : a->get_array()) {
        if (!arg.is_string()) invalid_input(op, "args must be an array of strings");
        std::string text(arg.get_string());
        if (text.find('\0') != std::string::npos) invalid_input(op, "an arg contains a NUL byte");
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
    process::Command command{std::move(argv), find(name)->operation.hardening};
    auto with_view = [](const Execution& e) {
      ExecutionData data = e.data();
      data.value = output_view(e);
      return Execution(std::move(data));
    };
    try {
      return with_view(supervisor_->run(command, options));
    } catch (const Error& e) {
      if (!e.execution()) throw;
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
             const std::vector<FlagSpec>& inherited, bool ancestor_withheld,
             process::Confinement confinement, const BindOptions& options) {
    spec.confinement.apply_to(confinement);
    bool withheld = ancestor_withheld || spec.hidden || spec.deprecated;
    bool root_builtin = path.size() == 1 && (path[0] == "help" || path[0] == "completion");
    CommandInfo info{path, &spec};
    if (spec.runnable && !withheld && !root_builtin && !spec.omit &&
        (!options.exposure || options.exposure(info))) {
      bind_command(spec, path, inherited, confinement, options);
    }
    // Children see this command's persistent flags after their own.
    std::vector<FlagSpec> next = spec.persistent_flags;
    next.insert(next.end(), inherited.begin(), inherited.end());
    for (const auto& child : spec.commands) {
      path.push_back(child.name);
      visit(child, path, next, withheld, confinement, options);
      path.pop_back();
    }
  }

  void bind_command(const CommandSpec& spec, const std::vector<std::string>& path,
                    const std::vector<FlagSpec>& inherited, const process::Confinement& confinement,
                    const BindOptions& options) {
    std::string where = display_path(tree_.root.name, path);
    Bound b;
    b.command_path = path;
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
      throw std::invalid_argument("command \"" + where + "\": operation name \"" + name +
                                  "\" does not match ^[A-Za-z0-9_.-]{1,128}$");
    }
    if (auto it = names_.find(name); it != names_.end()) {
      throw std::invalid_argument("commands \"" + it->second + "\" and \"" + where +
                                  "\" both map to operation \"" + name +
                                  "\"; rename one (BindOptions::operation_names)");
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
      if (options.flag_filter && !options.flag_filter(info, flag)) continue;
      std::shared_ptr<const Codec> codec = codec_for(flag, where);
      json::object schema = flag_schema(flag, *codec, where);
      properties[flag.name] = std::move(schema);
      if (flag.required) required.push_back(json::value(flag.name));
      bound.push_back(BoundFlag{flag, codec});
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
    return codec;
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
