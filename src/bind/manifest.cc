// src/bind/manifest.cc: manifest files (YAML or JSON) -> CommandTree. YAML is
// read with yaml-cpp and turned into the same JSON value a JSON manifest
// parses to, so one strict reader checks both.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "bind/confinement_reader.hpp"
#include "core/json.hpp"
#include "core/units.hpp"
#include "corral/bind.hpp"

namespace corral::bind {

namespace {

namespace json = core::json;

[[noreturn]] void bad(const std::string& where, const std::string& message) {
  throw std::invalid_argument("manifest: " + where + ": " + message);
}

// ^[-+]?[0-9]+$ and ^[-+]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?$,
// each in one pass.
std::size_t skip_digits(std::string_view text, std::size_t i) {
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  return i;
}
std::size_t skip_sign(std::string_view text, std::size_t i) {
  return i < text.size() && (text[i] == '-' || text[i] == '+') ? i + 1 : i;
}
bool is_integer_text(std::string_view text) {
  const std::size_t start = skip_sign(text, 0);
  const std::size_t end = skip_digits(text, start);
  return end > start && end == text.size();
}
bool is_number_text(std::string_view text) {
  std::size_t i = skip_sign(text, 0);
  const std::size_t whole = skip_digits(text, i);
  bool digits = whole > i;
  i = whole;
  if (i < text.size() && text[i] == '.') {
    const std::size_t fraction = skip_digits(text, i + 1);
    digits = digits || fraction > i + 1;
    i = fraction;
  }
  if (!digits) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    const std::size_t exponent = skip_sign(text, i + 1);
    i = skip_digits(text, exponent);
    if (i == exponent) return false;
  }
  return i == text.size();
}

json::value from_yaml(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Sequence: {
      json::array out;
      for (const auto& item : node) out.push_back(from_yaml(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json::object out;
      for (const auto& entry : node) out[entry.first.as<std::string>()] = from_yaml(entry.second);
      return out;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return json::value(text);  // quoted: always a string
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (text == "null" || text == "~" || text == "Null" || text == "NULL") return nullptr;
  try {
    if (is_integer_text(text)) {
      if (text[0] == '-') return static_cast<std::int64_t>(std::stoll(text));
      return static_cast<std::uint64_t>(std::stoull(text));
    }
    if (is_number_text(text)) return std::stod(text);
  } catch (const std::out_of_range&) {
    // too large for an integer: keep the text
  }
  return json::value(text);
}

// Reader: strict access to one JSON object of the manifest.
class Reader {
 public:
  Reader(const json::value& value, std::string where, std::set<std::string> allowed)
      : where_(std::move(where)) {
    if (!value.is_object()) bad(where_, "must be a mapping");
    object_ = &value.get_object();
    for (const auto& [key, v] : *object_) {
      if (allowed.count(std::string(key)) == 0)
        bad(where_, "unknown key \"" + std::string(key) + "\"");
    }
  }
  const json::value* get(const char* key) const { return object_->if_contains(key); }
  std::string string(const char* key, std::string fallback = {}) const {
    const json::value* v = get(key);
    if (v == nullptr || v->is_null()) return fallback;
    if (!v->is_string()) bad(where_ + "." + key, "must be a string");
    return std::string(v->get_string());
  }
  bool boolean(const char* key, bool fallback = false) const {
    const json::value* v = get(key);
    if (v == nullptr || v->is_null()) return fallback;
    if (!v->is_bool()) bad(where_ + "." + key, "must be true or false");
    return v->get_bool();
  }
  std::optional<std::uint64_t> count(const char* key) const {
    const json::value* v = get(key);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (v->is_uint64()) return v->get_uint64();
    if (v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
    bad(where_ + "." + key, "must be a non-negative integer");
  }
  const json::array* list(const char* key) const {
    const json::value* v = get(key);
    if (v == nullptr || v->is_null()) return nullptr;
    if (!v->is_array()) bad(where_ + "." + key, "must be a list");
    return &v->get_array();
  }
  // Text of a scalar that may be written as a number ("5s", 5, "1MiB").
  std::optional<std::string> unit_text(const char* key) const {
    const json::value* v = get(key);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (v->is_string()) return std::string(v->get_string());
    if (v->is_number()) return json::serialize(*v);
    bad(where_ + "." + key, "must be a string or a number");
  }
  const std::string& where() const { return where_; }

 private:
  std::string where_;
  const json::object* object_ = nullptr;
};

FlagSpec read_flag(const json::value& value, const std::string& where) {
  Reader r(value, where,
           {"name", "type", "required", "default", "description", "hidden", "deprecated", "greedy",
            "enum", "pattern", "min", "max", "short", "long", "style"});
  FlagSpec flag;
  flag.name = r.string("name");
  if (flag.name.empty()) bad(where, "a flag needs a name");
  if (flag.name.rfind("-", 0) == 0 || flag.name.find('=') != std::string::npos ||
      flag.name.find_first_of(" \t\r\n") != std::string::npos) {
    bad(where, "flag names are written without dashes, spaces or '='");
  }
  flag.short_name = r.string("short");
  if (flag.short_name.starts_with("-")) bad(where + ".short", "written without the dash");
  flag.long_form = r.boolean("long", true);
  const std::string style = r.string("style", "equals");
  if (style != "equals" && style != "separate") bad(where + ".style", "one of equals, separate");
  flag.style = style == "separate" ? FlagSpec::Style::separate : FlagSpec::Style::equals;
  // enum, pattern, min and max narrow the flag's values (JSON Schema's
  // enum, pattern, minimum and maximum); the binding checks they fit its type.
  json::object constraints;
  if (const json::array* values = r.list("enum")) constraints["enum"] = *values;
  if (r.get("pattern")) constraints["pattern"] = r.string("pattern");
  for (const auto& [key, schema_key] : {std::pair{"min", "minimum"}, {"max", "maximum"}}) {
    if (const json::value* bound = r.get(key); bound != nullptr && !bound->is_null()) {
      if (!bound->is_number()) bad(where + "." + key, "must be a number");
      constraints[schema_key] = *bound;
    }
  }
  if (!constraints.empty()) flag.constraints_json = json::serialize(constraints);
  flag.type = r.string("type", "string");
  flag.required = r.boolean("required");
  if (const json::value* d = r.get("default"); d != nullptr && !d->is_null()) {
    flag.default_json = json::serialize(*d);
  }
  flag.description = r.string("description");
  flag.hidden = r.boolean("hidden");
  flag.greedy = r.boolean("greedy");
  // deprecated: true, or a message (as Cobra spells it)
  if (const json::value* d = r.get("deprecated"); d != nullptr) {
    flag.deprecated = d->is_string() ? !d->get_string().empty() : r.boolean("deprecated");
  }
  return flag;
}

std::vector<FlagSpec> read_flags(const Reader& r, const char* key) {
  std::vector<FlagSpec> flags;
  if (const json::array* list = r.list(key)) {
    for (size_t i = 0; i < list->size(); ++i) {
      flags.push_back(read_flag((*list)[i], r.where() + "." + key + "[" + std::to_string(i) + "]"));
    }
  }
  return flags;
}

const std::set<std::string> kCommandKeys = {
    "name",        "description", "runnable",  "hidden",           "deprecated",     "omit",
    "flags",       "args",        "commands",  "persistent_flags", "operation_name", "annotations",
    "confinement", "fixed_args",  "separator", "ok_exit_codes"};

std::vector<std::string> read_strings(const Reader& r, const char* key) {
  std::vector<std::string> out;
  if (const json::array* list = r.list(key)) {
    for (const auto& item : *list) {
      if (!item.is_string()) bad(r.where() + "." + key, "must list strings");
      std::string text(item.get_string());
      if (text.find('\0') != std::string::npos) bad(r.where() + "." + key, "holds a NUL byte");
      out.push_back(std::move(text));
    }
  }
  return out;
}

// "SRC[:DST][:rw|:ro]" or {source, target?, writable?}.
process::Bind read_bind(const json::value& value, const std::string& where) {
  process::Bind bind;
  if (value.is_string()) {
    std::string text(value.get_string());
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
      std::size_t colon = text.find(':', start);
      parts.push_back(text.substr(start, colon - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (parts.size() > 1 && (parts.back() == "rw" || parts.back() == "ro")) {
      bind.writable = parts.back() == "rw";
      parts.pop_back();
    }
    if (parts.size() > 2)
      bad(where, "a bind is \"SRC[:DST][:rw]\" (got " + core::quoted(text) + ")");
    bind.source = parts[0];
    if (parts.size() == 2) bind.target = parts[1];
  } else {
    Reader b(value, where, {"source", "target", "writable"});
    bind.source = b.string("source");
    bind.target = b.string("target");
    bind.writable = b.boolean("writable");
  }
  if (bind.source.empty()) bad(where, "a bind needs a source");
  if (!bind.target.empty() && bind.target[0] != '/') {
    bad(where, "the target must be an absolute path (got " + core::quoted(bind.target) + ")");
  }
  return bind;
}

// A limit that may be "none" (no limit).
bool is_none(const json::value* v) {
  return v != nullptr && v->is_string() &&
         (v->get_string() == "none" || v->get_string() == "unlimited");
}

// `confinement: confined` or `confinement: host`: every field the preset
// sets, overridden.
ConfinementOverride read_confinement_preset(const json::value& value, const std::string& where) {
  ConfinementOverride o;
  process::Confinement c;
  if (value.get_string() == "host") {
    c = process::Confinement::none();
  } else if (value.get_string() != "confined") {
    bad(where, "one of confined, host, or a mapping");
  }
  o.user_namespace = c.user_namespace;
  o.seccomp = c.seccomp;
  o.pid_namespace = c.pid_namespace;
  o.filesystem = c.filesystem;
  o.binds = c.binds;
  o.network = c.network;
  o.processes = c.limits.processes;
  o.memory_bytes = c.limits.memory_bytes;
  o.cpus = c.limits.cpus;
  return o;
}

// `limits:` of a confinement mapping at `where`, into `o`.
void read_limits(const json::value& limits, const std::string& where, ConfinementOverride& o) {
  Reader l(limits, where + ".limits", {"processes", "memory", "cpus"});
  const std::string at = where + ".limits.";
  if (const json::value* p = l.get("processes")) {
    if (is_none(p)) {
      o.processes = std::optional<std::uint64_t>{};
    } else {
      auto n = l.count("processes");
      if (n && *n == 0) bad(at + "processes", "must be at least 1 (or none)");
      o.processes = n;
    }
  }
  if (auto text = l.unit_text("memory")) {
    auto bytes = core::parse_size(*text, at + "memory");
    if (bytes && *bytes == 0) bad(at + "memory", "must be more than 0 (or none)");
    o.memory_bytes = bytes;
  }
  if (const json::value* c = l.get("cpus"); c != nullptr && !c->is_null()) {
    if (is_none(c)) {
      o.cpus = std::optional<double>{};
    } else {
      if (!c->is_number()) bad(at + "cpus", "must be a number of CPUs (1.5) or none");
      double cpus = c->to_number<double>();
      if (!(cpus >= 0.01 && cpus <= 4096)) bad(at + "cpus", "must be between 0.01 and 4096");
      o.cpus = cpus;
    }
  }
}

// `confinement:` of the tree or of a command: "confined", "host", or a
// mapping whose keys each override one field.
ConfinementOverride read_confinement(const json::value& value, const std::string& where) {
  if (value.is_string()) return read_confinement_preset(value, where);
  ConfinementOverride o;
  Reader r(value, where,
           {"user", "uid", "gid", "seccomp", "pid_namespace", "filesystem", "binds", "network",
            "limits", "strict"});
  if (r.get("user")) {
    std::string user = r.string("user");
    if (user != "confined" && user != "host") bad(where + ".user", "one of confined, host");
    o.user_namespace = user == "confined";
  }
  auto id = [&](const char* key) -> std::optional<std::uint32_t> {
    auto n = r.count(key);
    if (!n) return std::nullopt;
    if (*n > 0xFFFFFFFEu) bad(where + "." + key, "must be below 4294967295");
    return static_cast<std::uint32_t>(*n);
  };
  o.uid = id("uid");
  o.gid = id("gid");
  if ((o.uid || o.gid) && o.user_namespace == false) {
    bad(where, "uid and gid map the command in a user namespace; user: host has none");
  }
  if (r.get("seccomp")) o.seccomp = r.boolean("seccomp");
  if (r.get("pid_namespace")) o.pid_namespace = r.boolean("pid_namespace");
  if (r.get("filesystem")) {
    std::string view = r.string("filesystem");
    o.filesystem = process::filesystem_view_from_string(view);
    if (!o.filesystem) bad(where + ".filesystem", "one of minimal, host_read_only, host");
  }
  if (const json::array* binds = r.list("binds")) {
    o.binds.emplace();
    for (std::size_t i = 0; i < binds->size(); ++i) {
      o.binds->push_back(read_bind((*binds)[i], where + ".binds[" + std::to_string(i) + "]"));
    }
  }
  if (r.get("network")) {
    std::string network = r.string("network");
    if (network != "host" && network != "none") bad(where + ".network", "one of none, host");
    o.network = network == "host";
  }
  if (const json::value* limits = r.get("limits"); limits != nullptr && !limits->is_null()) {
    read_limits(*limits, where, o);
  }
  if (r.get("strict")) o.strict = r.boolean("strict");
  return o;
}

void read_command_body(const Reader& r, CommandSpec& spec) {
  spec.description = r.string("description");
  spec.hidden = r.boolean("hidden");
  if (const json::value* d = r.get("deprecated"); d != nullptr) {
    spec.deprecated = d->is_string() ? !d->get_string().empty() : r.boolean("deprecated");
  }
  spec.omit = r.boolean("omit");
  if (r.get("operation_name")) spec.operation_name = r.string("operation_name");
  if (const json::value* a = r.get("annotations"); a != nullptr && !a->is_null()) {
    Reader n(*a, r.where() + ".annotations",
             {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"});
    spec.annotations.title = n.string("title");
    auto hint = [&](const char* key) -> std::optional<bool> {
      if (n.get(key) == nullptr || n.get(key)->is_null()) return std::nullopt;
      return n.boolean(key);
    };
    spec.annotations.read_only = hint("readOnlyHint");
    spec.annotations.destructive = hint("destructiveHint");
    spec.annotations.idempotent = hint("idempotentHint");
    spec.annotations.open_world = hint("openWorldHint");
  }
  if (const json::value* c = r.get("confinement"); c != nullptr && !c->is_null()) {
    spec.confinement = read_confinement(*c, r.where() + ".confinement");
  }
  spec.fixed_args = read_strings(r, "fixed_args");
  if (r.get("separator") && !r.get("separator")->is_null()) spec.separator = r.boolean("separator");
  if (const json::array* codes = r.list("ok_exit_codes")) {
    spec.ok_exit_codes.emplace();
    for (const auto& code : *codes) {
      if (!code.is_int64() && !code.is_uint64())
        bad(r.where() + ".ok_exit_codes", "must list integers");
      const std::int64_t n = code.to_number<std::int64_t>();
      if (n < 0 || n > 255) bad(r.where() + ".ok_exit_codes", "exit statuses are 0 to 255");
      spec.ok_exit_codes->push_back(static_cast<int>(n));
    }
  }
  spec.flags = read_flags(r, "flags");
  spec.persistent_flags = read_flags(r, "persistent_flags");
  if (const json::array* args = r.list("args")) {
    spec.args.emplace();
    for (size_t i = 0; i < args->size(); ++i) {
      std::string where = r.where() + ".args[" + std::to_string(i) + "]";
      Reader a((*args)[i], where, {"name", "description", "required", "variadic"});
      ArgSpec arg{a.string("name"), a.string("description"), a.boolean("required"),
                  a.boolean("variadic")};
      if (arg.variadic && i + 1 != args->size()) bad(where, "only the last arg can be variadic");
      spec.args->push_back(std::move(arg));
    }
  }
  if (const json::array* commands = r.list("commands")) {
    for (size_t i = 0; i < commands->size(); ++i) {
      std::string where = r.where() + ".commands[" + std::to_string(i) + "]";
      Reader c((*commands)[i], where, kCommandKeys);
      CommandSpec child;
      child.name = c.string("name");
      if (child.name.empty() || child.name.find_first_of(" \t\n") != std::string::npos ||
          child.name[0] == '-') {
        bad(where, "a command needs a name without spaces or leading dash");
      }
      read_command_body(c, child);
      spec.commands.push_back(std::move(child));
    }
  }
  // A command with subcommands is a pure group unless it says otherwise.
  spec.runnable = r.boolean("runnable", spec.commands.empty());
}

void read_supervisor(const json::value& value, process::SupervisorOptions& options) {
  Reader r(value, "supervisor", {"slots", "deadline", "cleanup_budget", "output_budget", "unit"});
  if (auto slots = r.count("slots")) {
    if (*slots < 1 || *slots > 1024) bad("supervisor.slots", "must be between 1 and 1024");
    options.slots = static_cast<int>(*slots);
  }
  auto duration = [&](const char* key, std::chrono::milliseconds& out) {
    if (auto text = r.unit_text(key)) {
      auto parsed = core::parse_duration(*text, std::string("supervisor.") + key);
      if (!parsed) bad(std::string("supervisor.") + key, "cannot be none");
      out = *parsed;
    }
  };
  duration("deadline", options.deadline);
  duration("cleanup_budget", options.cleanup_budget);
  if (auto text = r.unit_text("output_budget")) {
    auto parsed = core::parse_size(*text, "supervisor.output_budget");
    if (!parsed) bad("supervisor.output_budget", "cannot be none");
    options.output_budget = *parsed;
  }
  std::string unit = r.string("unit", "auto");
  if (unit != "auto") {
    options.unit = process::unit_kind_from_string(unit);
    if (!options.unit) bad("supervisor.unit", "one of auto, cgroup, pid_namespace, process_group");
  }
}

void read_hardening(const json::value& value, process::Hardening& hardening) {
  Reader r(value, "hardening", {"network", "rlimits", "environment", "working_directory"});
  if (r.get("network")) {
    // An alias of confinement.network (load_manifest refuses both).
    std::string network = r.string("network");
    if (network != "host" && network != "none") bad("hardening.network", "one of host, none");
    hardening.new_network_namespace = network == "none";
    hardening.confinement.network = network == "host";
  }
  if (const json::value* limits = r.get("rlimits")) {
    Reader l(*limits, "hardening.rlimits", {"cpu", "address_space", "open_files", "processes"});
    if (auto cpu = l.unit_text("cpu")) {
      auto parsed = core::parse_duration(*cpu, "hardening.rlimits.cpu");
      if (parsed) {
        auto seconds = std::chrono::ceil<std::chrono::seconds>(*parsed).count();
        hardening.rlimits.cpu_seconds = static_cast<std::uint64_t>(seconds);
      }
    }
    if (auto as = l.unit_text("address_space")) {
      hardening.rlimits.address_space = core::parse_size(*as, "hardening.rlimits.address_space");
    }
    hardening.rlimits.open_files = l.count("open_files");
    hardening.rlimits.processes = l.count("processes");
  }
  if (const json::value* env = r.get("environment")) {
    Reader e(*env, "hardening.environment", {"allow", "set"});
    if (const json::array* allow = e.list("allow")) {
      hardening.environment_allow.emplace();
      for (const auto& name : *allow) {
        if (!name.is_string()) bad("hardening.environment.allow", "must list names");
        hardening.environment_allow->emplace_back(name.get_string());
      }
    }
    if (const json::value* set = e.get("set")) {
      if (!set->is_object()) bad("hardening.environment.set", "must be a mapping");
      for (const auto& [k, v] : set->get_object()) {
        if (!v.is_string()) bad("hardening.environment.set." + std::string(k), "must be a string");
        hardening.environment_set[std::string(k)] = std::string(v.get_string());
      }
    }
  }
  if (r.get("working_directory")) hardening.working_directory = r.string("working_directory");
}

}  // namespace

void ConfinementOverride::apply_to(process::Confinement& c) const {
  if (user_namespace) c.user_namespace = *user_namespace;
  if (uid) c.uid = *uid;
  if (gid) c.gid = *gid;
  if (seccomp) c.seccomp = *seccomp;
  if (pid_namespace) c.pid_namespace = *pid_namespace;
  if (filesystem) c.filesystem = *filesystem;
  if (binds) c.binds = *binds;
  if (network) c.network = *network;
  if (processes) c.limits.processes = *processes;
  if (memory_bytes) c.limits.memory_bytes = *memory_bytes;
  if (cpus) c.limits.cpus = *cpus;
  if (strict) c.strict = *strict;
}

CommandTree load_manifest(std::string_view text) {
  json::value document;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    document = core::parse_json(text, "manifest");
  } else {
    try {
      document = from_yaml(YAML::Load(std::string(text)));
    } catch (const YAML::Exception& e) {
      throw std::invalid_argument(std::string("manifest: ") + e.what());
    }
  }
  std::set<std::string> keys = kCommandKeys;
  keys.insert({"corral", "executable", "supervisor", "hardening", "prefix", "expose"});
  Reader r(document, "manifest", keys);
  if (const json::value* version = r.get("corral")) {
    if (!(version->is_number() && version->to_number<double>() == 1)) {
      bad("corral", "unsupported manifest version (this build reads 1)");
    }
  }
  CommandTree tree;
  tree.executable = r.string("executable");
  if (tree.executable.empty()) bad("executable", "required");
  tree.root.name = r.string("name", std::filesystem::path(tree.executable).filename().string());
  read_command_body(r, tree.root);
  if (r.get("prefix") && !r.get("prefix")->is_null()) tree.prefix = r.string("prefix");
  if (const json::value* e = r.get("expose"); e != nullptr && !e->is_null()) {
    Reader x(*e, "expose", {"include", "exclude", "exclude_flags"});
    tree.selectors.include = read_strings(x, "include");
    tree.selectors.exclude = read_strings(x, "exclude");
    tree.selectors.exclude_flags = read_strings(x, "exclude_flags");
    try {
      tree.selectors.validate();
    } catch (const std::invalid_argument& error) {
      bad("expose", error.what());
    }
  }
  if (const json::value* s = r.get("supervisor")) read_supervisor(*s, tree.supervisor);
  if (const json::value* h = r.get("hardening")) read_hardening(*h, tree.hardening);
  // The root's `confinement` is the tree's: every operation starts from it.
  if (tree.root.confinement.network && r.get("hardening") && r.get("hardening")->is_object() &&
      r.get("hardening")->get_object().contains("network")) {
    bad("hardening.network", "give the network in confinement.network only");
  }
  tree.root.confinement.apply_to(tree.hardening.confinement);
  tree.root.confinement = {};
  return tree;
}

CommandTree load_manifest_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("manifest: cannot read " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  CommandTree tree = load_manifest(buffer.str());
  auto dir = std::filesystem::absolute(path).parent_path();
  if (tree.executable.find('/') != std::string::npos && tree.executable[0] != '/') {
    tree.executable = (dir / tree.executable).lexically_normal().string();
  }
  if (tree.hardening.working_directory && !tree.hardening.working_directory->empty() &&
      (*tree.hardening.working_directory)[0] != '/') {
    tree.hardening.working_directory =
        (dir / *tree.hardening.working_directory).lexically_normal().string();
  }
  auto resolve = [&](std::vector<process::Bind>& binds) {
    for (auto& b : binds) {
      if (!b.source.empty() && b.source[0] != '/') {
        b.source = (dir / b.source).lexically_normal().string();
      }
    }
  };
  resolve(tree.hardening.confinement.binds);
  std::function<void(CommandSpec&)> visit = [&](CommandSpec& spec) {
    if (spec.confinement.binds) resolve(*spec.confinement.binds);
    for (auto& child : spec.commands) visit(child);
  };
  visit(tree.root);
  return tree;
}

process::Confinement read_confinement_json(const json::value& value, const std::string& where) {
  process::Confinement c;
  try {
    read_confinement(value, where).apply_to(c);
  } catch (const std::invalid_argument& e) {
    // The reader's errors speak of a manifest; this value is not in one.
    std::string_view text = e.what();
    constexpr std::string_view kPrefix = "manifest: ";
    if (text.substr(0, kPrefix.size()) == kPrefix) text.remove_prefix(kPrefix.size());
    throw std::invalid_argument(std::string(text));
  }
  return c;
}

}  // namespace corral::bind
