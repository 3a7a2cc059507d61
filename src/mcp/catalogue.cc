// The tool catalogue: the callables code mode reaches (bound commands, then
// upstream tools), their TypeScript declarations, and the MCP tools published
// (execute, then the commands directly or the compact trio that finds them).
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "core/text.hpp"
#include "corral/sandbox.hpp"
#include "mcp/results.hpp"
#include "mcp/service.hpp"
#include "mcp/typescript.hpp"

namespace corral::mcp {

namespace {

constexpr const char* kExecuteDescription =
    "Run TypeScript (or plain JavaScript) in corral's sandbox (code mode). Write one async "
    "arrow function, `async () => { ... }`, whose return value (JSON) is the result; types are "
    "erased, not checked, and `enum`, `namespace` with values, parameter properties and "
    "decorators are refused (use objects and plain fields); console.log output is "
    "captured. The code has no network, files, timers or processes: only the functions below, "
    "called as `await codemode.<name>(input)`, so one run can chain many tool calls. Every run "
    "starts from a fresh context. `timeout` (milliseconds) bounds the run.";

constexpr const char* kRubyDescription =
    "\n\nWith `language: \"ruby\"` the code is Ruby (mruby 3.1) instead: the value of its last "
    "expression is the result, `puts`/`p` output is captured, and each function above is a "
    "method of a `Codemode` constant with every namespace capitalised, called with keyword "
    "arguments as its input: `codemode.a.b({x: 1})` is `Codemode::A.b(x: 1)`, "
    "`codemode.f({})` is `Codemode.f`. Calls return the answer directly (no await).";

// How a run behaves where a model would guess wrong: the clock and
// randomness of the profile, and how a failed call surfaces.
std::string run_facts(sandbox::Profile profile) {
  std::string facts =
      profile == sandbox::Profile::hermetic
          ? "\n\nThe clock and randomness are fixed: `Date.now()` is 0 and `new Date()` is "
            "1970-01-01T00:00:00Z, and `Math.random()` gives the same sequence in every run; "
            "pass real times in as data."
          : "\n\nThe clock and `Math.random()` are real.";
  facts +=
      " A call that fails throws an Error whose message starts with its failure code, so "
      "`try { ... } catch (e) { ... }` sees e.g. `command_failed: ...` (a command that exited "
      "with a status its manifest does not accept; its output follows the message), "
      "`busy: ... (retryable)`, `timeout`, or an upstream tool's own error text. A command "
      "that returns resolves to `{stdout, stderr, exitCode, truncated}` with an accepted "
      "`exitCode`; an upstream tool resolves to its structured content, else its text (parsed "
      "when it is JSON).";
  return facts;
}

// The worked example's input falls back to `{}` past this many bytes.
constexpr std::size_t kExampleInputBytes = 300;

// A JSON value of the schema's shape made of placeholders (its required
// properties only), for the worked example: `{"flags": {"name": "..."}}`.
std::string example_input(const json::value& schema, int depth = 0) {
  const json::object* o = schema.if_object();
  if (!o || depth > 3) return "{}";
  if (const json::value* e = o->if_contains("enum"); e && e->is_array() && !e->get_array().empty())
    return json::serialize(e->get_array()[0]);
  const json::value* type = o->if_contains("type");
  const std::string t = type && type->is_string() ? std::string(type->get_string()) : "object";
  if (t == "string") return "\"...\"";
  if (t == "number" || t == "integer") return "1";
  if (t == "boolean") return "true";
  if (t == "array") return "[]";
  std::string out;
  const json::value* props = o->if_contains("properties");
  const json::value* required = o->if_contains("required");
  if (props && props->is_object() && required && required->is_array()) {
    for (const json::value& name : required->get_array()) {
      if (!name.is_string()) continue;
      const json::value* sub = props->get_object().if_contains(name.get_string());
      if (!sub) continue;
      out += (out.empty() ? "" : ", ") + std::string(name.get_string()) + ": " +
             example_input(*sub, depth + 1);
    }
  }
  return out.empty() ? "{}" : "{" + out + "}";
}

json::object execute_input_schema() {
  return json::object{
      {"type", "object"},
      {"properties",
       json::object{
           {"code", json::object{{"type", "string"},
                                 {"description",
                                  "An async arrow function, e.g. `async () => { const r = await "
                                  "codemode.tool({}); return r; }`"}}},
           {"timeout", json::object{{"type", "number"},
                                    {"exclusiveMinimum", 0},
                                    {"description", "Milliseconds the run may take."}}},
           {"language", json::object{{"type", "string"},
                                     {"enum", json::array{"typescript", "javascript", "ruby"}},
                                     {"default", "typescript"},
                                     {"description", "The language `code` is written in."}}}}},
      {"required", json::array{"code"}},
      {"additionalProperties", false}};
}

json::object execute_output_schema() {
  return json::object{
      {"type", "object"},
      {"properties",
       json::object{
           {"value", json::object{{"description", "What the function returned."}}},
           {"truncated", json::object{{"type", "boolean"},
                                      {"description",
                                       "True when the result was cut to fit the result "
                                       "budget."}}},
           {"replaced", json::object{{"type", "boolean"},
                                     {"description",
                                      "True when console output held bytes that are not UTF-8: "
                                      "each ill-formed sequence reads U+FFFD."}}}}},
      {"required", json::array{"value"}}};
}

json::object annotations_json(const bind::Annotations& a) {
  json::object o;
  if (!a.title.empty()) o["title"] = a.title;
  if (a.read_only) o["readOnlyHint"] = *a.read_only;
  if (a.destructive) o["destructiveHint"] = *a.destructive;
  if (a.idempotent) o["idempotentHint"] = *a.idempotent;
  if (a.open_world) o["openWorldHint"] = *a.open_world;
  return o;
}

// A dotted path's segments, as the declarations nest them.
std::vector<std::string> segments(std::string_view path) {
  std::vector<std::string> out;
  while (true) {
    const auto dot = path.find('.');
    out.emplace_back(path.substr(0, dot));
    if (dot == std::string_view::npos) return out;
    path.remove_prefix(dot + 1);
  }
}

// A bound command as a direct MCP tool.
json::object command_tool(const std::string& name, const bind::Operation& op) {
  json::object d;
  if (!op.annotations.title.empty()) d["title"] = op.annotations.title;
  d["description"] = op.description.empty() ? "Runs the command " + name : op.description;
  d["inputSchema"] = core::parse_json(op.input_schema, "input schema");
  d["outputSchema"] = core::parse_json(op.output_schema, "output schema");
  json::object a = annotations_json(op.annotations);
  if (!a.empty()) d["annotations"] = std::move(a);
  return d;
}

// The compact mode's three tools that find, describe and run the commands.
std::vector<std::pair<std::string, json::object>> compact_tools(std::size_t commands) {
  auto object_schema = [](json::object properties, json::array required) {
    json::object schema{{"type", "object"}, {"properties", std::move(properties)}};
    if (!required.empty()) schema["required"] = std::move(required);
    schema["additionalProperties"] = false;
    return schema;
  };
  const json::object string_type{{"type", "string"}};
  std::vector<std::pair<std::string, json::object>> tools;
  tools.emplace_back(
      "search_tools",
      json::object{
          {"title", "Search command tools"},
          {"description",
           fmt::format("Search the {} command tools by words in their names and descriptions; "
                       "an empty query lists them. Then read one with get_tool_details and run "
                       "it with call_tool.",
                       commands)},
          {"inputSchema", object_schema(json::object{{"query", string_type},
                                                     {"limit", json::object{{"type", "integer"},
                                                                            {"minimum", 1},
                                                                            {"maximum", 100}}}},
                                        {})},
          {"annotations", json::object{{"readOnlyHint", true}, {"openWorldHint", false}}}});
  tools.emplace_back(
      "get_tool_details",
      json::object{
          {"title", "Describe a command tool"},
          {"description",
           "The description, input schema, output schema and annotations of one command tool."},
          {"inputSchema", object_schema(json::object{{"name", string_type}}, {"name"})},
          {"annotations", json::object{{"readOnlyHint", true}, {"openWorldHint", false}}}});
  tools.emplace_back(
      "call_tool",
      json::object{
          {"title", "Run a command tool"},
          {"description",
           "Runs one command tool with `input` as its get_tool_details input schema describes "
           "(`{\"flags\": {...}, \"args\": [...]}`)."},
          {"inputSchema", object_schema(json::object{{"name", string_type},
                                                     {"input", json::object{{"type", "object"}}}},
                                        {"name"})},
          {"annotations", json::object{{"destructiveHint", true}}}});
  return tools;
}

std::vector<std::string> split_words(const std::string& query) {
  std::vector<std::string> words;
  for (std::size_t at = 0; at < query.size();) {
    const auto end = query.find_first_of(" \t_-", at);
    if (end != at) words.push_back(query.substr(at, end == std::string::npos ? end : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return words;
}

}  // namespace

void Service::Impl::build_catalogue() {
  std::set<std::string> paths = add_command_callables();
  add_upstream_callables(paths);
  check_approvals();
  declare_callables();
  publish_tools();
}

std::set<std::string> Service::Impl::add_command_callables() {
  std::set<std::string> paths;
  for (const auto& [name, entry] : commands_) {
    Callable c;
    c.path = js_identifier(name);
    if (!paths.insert(c.path).second)
      throw std::invalid_argument(fmt::format(
          "the command tools {} and another one are both codemode.{} in code mode", name, c.path));
    c.description = entry.second->description;
    c.input_schema = core::parse_json(entry.second->input_schema, "input schema");
    c.output_schema = core::parse_json(entry.second->output_schema, "output schema");
    c.binding = entry.first;
    c.operation = name;
    c.needs_approval = entry.second->annotations.destructive.value_or(false) ||
                       std::count(options_.approve.begin(), options_.approve.end(), name) > 0;
    callables_.push_back(std::move(c));
  }
  return paths;
}

void Service::Impl::add_upstream_callables(const std::set<std::string>& command_paths) {
  for (const auto& upstream : upstreams_) {
    if (command_paths.count(upstream->name()))
      throw std::invalid_argument(
          fmt::format("the upstream server {} has the name of a command tool (codemode.{})",
                      upstream->name(), upstream->name()));
    std::set<std::string> seen;
    for (const UpstreamTool& tool : upstream->tools()) {
      const std::string id = js_identifier(tool.name);
      if (!seen.insert(id).second) {
        log(LogLevel::warn, fmt::format("upstream {}: tool {} is left out: its name collides "
                                        "with another as codemode.{}.{}",
                                        upstream->name(), tool.name, upstream->name(), id));
        continue;
      }
      Callable c;
      c.path = upstream->name() + "." + id;
      c.description = tool.description;
      c.input_schema = tool.input_schema;
      c.output_schema = tool.output_schema;
      c.upstream = upstream.get();
      c.upstream_tool = tool.name;
      c.needs_approval = tool.destructive ||
                         std::count(options_.approve.begin(), options_.approve.end(),
                                    upstream->name() + "." + tool.name) > 0 ||
                         std::count(options_.approve.begin(), options_.approve.end(), c.path) > 0;
      callables_.push_back(std::move(c));
    }
  }
}

void Service::Impl::check_approvals() const {
  // A misspelt name would leave its function unasked: refused, not ignored.
  for (const std::string& name : options_.approve) {
    bool found = false;
    for (const Callable& c : callables_) {
      found = found ||
              (c.binding ? c.operation == name
                         : c.upstream->name() + "." + c.upstream_tool == name || c.path == name);
    }
    if (!found)
      throw std::invalid_argument(fmt::format(
          "approve names {}, which is no bound command tool (its MCP tool name, e.g. git_status) "
          "and no upstream tool (SERVER.TOOL)",
          name));
  }
}

void Service::Impl::declare_callables() {
  std::vector<DeclaredTool> declared;
  std::vector<std::string> ruby_bound;  // as the worker binds them
  for (const Callable& c : callables_) {
    callable_paths_.push_back(c.path);
    try {
      sandbox::check_tool_path(Language::ruby, "codemode." + c.path, ruby_bound);
      ruby_bound.push_back("codemode." + c.path);
      ruby_paths_.push_back(c.path);
    } catch (const std::invalid_argument&) {
      ruby_unreachable_.push_back(c.path);
    }
    declared.push_back(
        DeclaredTool{segments(c.path), c.description, c.input_schema, c.output_schema});
  }
  declarations_ = mcp::declarations(declared);
  if (options_.mode == Mode::compact && !declared.empty()) add_finder(std::move(declared));
}

void Service::Impl::add_finder(std::vector<DeclaredTool> declared) {
  for (const Callable& c : callables_) {
    for (std::string_view reserved : {kSearchPath, kDescribePath}) {
      if (c.path == reserved || c.path.starts_with(std::string(reserved) + "."))
        throw std::invalid_argument(fmt::format(
            "in compact mode codemode.{} is corral's own (it finds the functions), so "
            "codemode.{} cannot be a tool: rename the command or upstream, or use direct mode",
            reserved, c.path));
    }
  }
  finder_ = std::make_unique<const Finder>(std::move(declared));
  for (std::string_view own : {kSearchPath, kDescribePath}) {
    callable_paths_.emplace_back(own);
    ruby_paths_.emplace_back(own);
  }
}

std::string Service::Impl::compact_preamble() const {
  const std::size_t upstream_tools = callables_.size() - commands_.size();
  std::string out = fmt::format(
      "\n\n{} functions are bound ({} commands, {} upstream tools). Their declarations are not "
      "listed here: find them from your code with two functions that are always there, then "
      "call what they find as `await codemode.<name>(input)`:\n\n```ts\n"
      "declare const codemode: {{\n{}{}}};\n```",
      callables_.size(), commands_.size(), upstream_tools,
      finder_member(kSearchPath, callables_.front().path),
      finder_member(kDescribePath, callables_.front().path));
  // A sample of the names (bounded), so that a first query can be a good one.
  constexpr std::size_t kNamesBytes = 1500;
  std::string names;
  std::size_t shown = 0;
  for (const Callable& c : callables_) {
    if (names.size() + c.path.size() + 2 > kNamesBytes) break;
    names += (names.empty() ? "" : ", ") + c.path;
    ++shown;
  }
  out += shown == callables_.size()
             ? "\n\nTheir names: " + names + "."
             : fmt::format("\n\nThe first {} of their names: {}, ...", shown, names);
  return out;
}

std::string Service::Impl::execute_description() const {
  std::string description = kExecuteDescription;
  description += fmt::format(" Default timeout {} ms, at most {} ms.",
                             options_.default_timeout.count(), options_.max_timeout.count());
  description += run_facts(options_.run_limits.profile);
  if (!callables_.empty()) {
    const Callable& first = callables_.front();
    std::string input = example_input(first.input_schema);
    if (input.size() > kExampleInputBytes) input = "{}";
    const std::string find =
        finder_ ? fmt::format("    // {}\n",
                              "codemode.search(\"words\") and codemode.describe(name) find it")
                : "";
    description += fmt::format(
        "\n\nFor example:\n\n```ts\nasync () => {{\n  try {{\n{}    const r = await "
        "codemode.{}({});\n    return r;\n  }} catch (e) {{\n    return String(e); "
        "// \"command_failed: ...\"\n  }}\n}}\n```",
        find, first.path, input);
  }
  if (callables_.empty()) {
    description += "\n\nNo functions are bound: `codemode` is empty.\n";
  } else if (finder_) {
    description += compact_preamble() + "\n";
  } else {
    description += "\n\nThe functions available, as TypeScript declarations:\n\n```ts\n" +
                   declarations_ + "```\n";
  }
  description += kRubyDescription;
  if (finder_)
    description +=
        " The finders too: `Codemode.search(query: \"words\")`, `Codemode.describe(name: "
        "\"codemode.x\")`.";
  if (!ruby_unreachable_.empty()) {
    // Bounded: a catalogue of unspellable upstream tools must not grow the
    // description without end.
    constexpr std::size_t kListed = 10;
    std::string names;
    for (std::size_t i = 0; i < ruby_unreachable_.size() && i < kListed; ++i)
      names += (names.empty() ? "" : ", ") + ("codemode." + ruby_unreachable_[i]);
    if (ruby_unreachable_.size() > kListed)
      names += fmt::format(" and {} more", ruby_unreachable_.size() - kListed);
    description += " Ruby cannot name " + names + ": use JavaScript for those.";
  }
  return description + "\n";
}

void Service::Impl::publish_tools() {
  auto add = [&](std::string name, json::object definition) {
    for (const Tool& t : tools_) {
      if (t.name == name)
        throw std::invalid_argument(fmt::format("two MCP tools would be named {}", name));
    }
    definition["name"] = name;
    tools_.push_back(Tool{std::move(name), std::move(definition)});
  };
  add("execute",
      json::object{{"title", "Execute code"},
                   {"description", execute_description()},
                   {"inputSchema", execute_input_schema()},
                   {"outputSchema", execute_output_schema()},
                   {"annotations",
                    json::object{{"title", "Execute code"},
                                 {"readOnlyHint", false},
                                 // An upstream tool may be destructive
                                 // whether or not its server says so.
                                 {"destructiveHint", !commands_.empty() || !upstreams_.empty()},
                                 {"idempotentHint", false},
                                 {"openWorldHint", !upstreams_.empty()}}}});
  if (options_.mode == Mode::direct) {
    for (const auto& [name, entry] : commands_) add(name, command_tool(name, *entry.second));
  } else if (!commands_.empty()) {
    for (auto& [name, definition] : compact_tools(commands_.size()))
      add(std::move(name), std::move(definition));
  }
}

const Tool* Service::Impl::find_tool(std::string_view name) const noexcept {
  for (const Tool& t : tools_)
    if (t.name == name) return &t;
  return nullptr;
}

void Service::Impl::search_tools(const json::object& arguments, ResultDone done) const {
  std::string query;
  std::size_t limit = 20;
  if (const json::value* q = arguments.if_contains("query"); q && !q->is_null()) {
    if (!q->is_string()) return done(refusal("search_tools: `query` must be a string"));
    query = core::ascii_lower(q->get_string());
  }
  if (const json::value* l = arguments.if_contains("limit"); l && !l->is_null()) {
    if (!l->is_int64() && !l->is_uint64())
      return done(refusal("search_tools: `limit` must be an integer"));
    limit =
        static_cast<std::size_t>(std::clamp<std::int64_t>(l->to_number<std::int64_t>(), 1, 100));
  }
  const std::vector<std::string> words = split_words(query);
  json::array found;
  std::size_t total = 0;
  for (const auto& [name, entry] : commands_) {
    const std::string haystack = core::ascii_lower(name + " " + entry.second->description + " " +
                                                   entry.second->annotations.title);
    bool all = true;
    for (const auto& w : words) all = all && haystack.find(w) != std::string::npos;
    if (!all) continue;
    ++total;
    if (found.size() < limit)
      found.push_back(json::object{{"name", name}, {"description", entry.second->description}});
  }
  json::object structured{{"tools", std::move(found)}, {"total", total}};
  json::object result{{"content", json::array{text_block(json::serialize(structured))}},
                      {"structuredContent", std::move(structured)}};
  done(std::move(result));
}

void Service::Impl::tool_details(const json::object& arguments, ResultDone done) const {
  const json::value* name = arguments.if_contains("name");
  if (!name || !name->is_string())
    return done(refusal("get_tool_details: `name` must be a string"));
  const auto it = commands_.find(std::string(name->get_string()));
  if (it == commands_.end()) return done(no_such_command(std::string(name->get_string())));
  const bind::Operation& op = *it->second.second;
  json::object details{{"name", op.name},
                       {"description", op.description},
                       {"inputSchema", core::parse_json(op.input_schema, "input schema")},
                       {"outputSchema", core::parse_json(op.output_schema, "output schema")},
                       {"annotations", annotations_json(op.annotations)}};
  json::object result{{"content", json::array{text_block(json::serialize(details))}},
                      {"structuredContent", std::move(details)}};
  done(std::move(result));
}

}  // namespace corral::mcp
