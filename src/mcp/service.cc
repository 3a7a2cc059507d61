// The tool catalogue and how each kind of tool call runs.
#include "mcp/service.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <thread>

#include "core/json.hpp"
#include "mcp/budget.hpp"
#include "mcp/typescript.hpp"
#include "sandbox/ruby/engine_ruby.hpp"

namespace corral::mcp {

namespace {

constexpr const char* kExecuteDescription =
    "Run JavaScript in corral's sandbox (code mode). Write one async arrow function, "
    "`async () => { ... }`, whose return value (JSON) is the result; console.log output is "
    "captured. The code has no network, files, timers or processes: only the functions below, "
    "called as `await codemode.<name>(input)`, so one run can chain many tool calls. Every run "
    "starts from a fresh context. `timeout` (milliseconds) bounds the run.";

constexpr const char* kRubyDescription =
    "\n\nWith `language: \"ruby\"` the code is Ruby (mruby 3.1) instead: the value of its last "
    "expression is the result, `puts`/`p` output is captured, and each function above is a "
    "method of a `Codemode` constant with every namespace capitalised, called with keyword "
    "arguments as its input: `codemode.a.b({x: 1})` is `Codemode::A.b(x: 1)`, "
    "`codemode.f({})` is `Codemode.f`. Calls return the answer directly (no await).";

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
                                     {"enum", json::array{"javascript", "ruby"}},
                                     {"default", "javascript"},
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

// The text block that says output bytes were replaced (core/utf8.hpp).
constexpr const char* kReplacedNote =
    "[the output held bytes that are not UTF-8: each ill-formed sequence reads U+FFFD]";

bool replaced(const Execution& e) { return e.stdout_replaced() || e.stderr_replaced(); }

json::object failure_json(const Failure& failure) {
  json::object o{{"code", to_string(failure.code)},
                 {"message", failure.message},
                 {"retryable", failure.retryable()}};
  return o;
}

double seconds_since(process::Clock::time_point at) {
  return std::chrono::duration<double>(process::Clock::now() - at).count();
}

// An RFC 3339 UTC time (whole seconds) for a steady-clock instant.
std::string rfc3339(process::Clock::time_point at) {
  const auto system =
      std::chrono::system_clock::now() -
      std::chrono::duration_cast<std::chrono::system_clock::duration>(process::Clock::now() - at);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::floor<std::chrono::seconds>(system));
}

// What a busy call's answer adds: who holds the slots.
std::string held_slots(const bind::Binding& binding) {
  const process::Status status = binding.status();
  std::string out;
  for (std::size_t i = 0; i < status.slot_status.size(); ++i) {
    const process::SlotStatus& slot = status.slot_status[i];
    if (slot.state == process::SlotState::idle) continue;
    out += fmt::format("{} slot {} is held: {}", out.empty() ? "" : ";", i,
                       process::to_string(slot.state));
    if (slot.pid > 0) out += fmt::format(", pid {}", slot.pid);
    if (!slot.program.empty()) out += ", " + slot.program;
    out += fmt::format(", since {} ({:.1f} s ago)", rfc3339(slot.since), seconds_since(slot.since));
    if (slot.state == process::SlotState::cleanup_failed)
      out += " (a unit not yet seen empty; corral re-checks it and frees the slot when it is)";
  }
  return out.empty() ? out : " The" + out + ".";
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

json::value parse_or_null(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(json::string_view(text.data(), text.size()), ec);
  return ec ? json::value(nullptr) : v;
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

// What a guest gets back from an upstream tool: its structured content, else
// the JSON (or text) of a single text block, else the content blocks.
std::optional<std::string> upstream_value(const json::object& result, std::string& error) {
  const json::value* content = result.if_contains("content");
  auto text_of = [&]() {
    std::string text;
    if (content && content->is_array()) {
      for (const auto& block : content->get_array()) {
        const json::object* b = block.if_object();
        const json::value* t = b ? b->if_contains("text") : nullptr;
        if (t && t->is_string()) text += (text.empty() ? "" : "\n") + std::string(t->get_string());
      }
    }
    return text;
  };
  if (const json::value* e = result.if_contains("isError"); e && e->is_bool() && e->get_bool()) {
    error = text_of();
    if (error.empty()) error = "The upstream tool failed.";
    return std::nullopt;
  }
  if (const json::value* s = result.if_contains("structuredContent"); s && !s->is_null())
    return json::serialize(*s);
  if (content && content->is_array() && content->get_array().size() == 1) {
    const json::object* b = content->get_array()[0].if_object();
    const json::value* t = b ? b->if_contains("text") : nullptr;
    if (t && t->is_string()) {
      json::value parsed = parse_or_null(t->get_string());
      if (!parsed.is_null()) return json::serialize(parsed);
      return json::serialize(*t);
    }
  }
  return json::serialize(content ? *content : json::value(json::array{}));
}

// A command's output view (bind::output_view: stdout, stderr, exitCode,
// truncated, replaced?) whose JSON fits in about `budget` bytes and still
// follows bind::output_schema(): only the two strings are cut (between
// characters, each cut marked), every other field stays, and `truncated`
// becomes true when anything was cut. Sets `cut` then.
json::object command_view(const Execution& execution, std::size_t budget, bool& cut) {
  json::value parsed = parse_or_null(bind::output_view(execution));
  if (!parsed.is_object())  // output_view always writes an object; a bug otherwise
    throw std::logic_error("the command's output view did not read back as an object");
  json::object view = std::move(parsed.as_object());
  if (json::serialize(view).size() <= budget) return view;
  const std::string out(view.at("stdout").as_string());
  const std::string err(view.at("stderr").as_string());
  json::object frame = view;
  frame["stdout"] = "";
  frame["stderr"] = "";
  frame["truncated"] = true;
  const std::size_t fixed = json::serialize(frame).size() - 4;  // less the two empty strings
  const std::size_t room = budget > fixed ? budget - fixed : 0;
  const std::size_t out_size = json::serialize(json::string_view(out)).size();
  const std::size_t err_size = json::serialize(json::string_view(err)).size();
  // Each string gets half the room; one that needs less leaves the rest to the other.
  const std::size_t err_room =
      std::min(err_size, std::max(room / 2, room - std::min(out_size, room)));
  const std::size_t out_room = room - err_room;
  view["stdout"] = cut_json_string(out, out_room, cut);
  view["stderr"] = cut_json_string(err, err_room, cut);
  view["truncated"] = true;
  cut = true;
  return view;
}

std::string budget_note(std::size_t budget) {
  return fmt::format(
      "[the output was cut to fit the result budget of {} bytes: stdout and stderr lost their "
      "end, each cut is marked; `truncated` is true]",
      budget);
}

}  // namespace

json::object text_block(std::string text) {
  return json::object{{"type", "text"}, {"text", std::move(text)}};
}

Tasks::~Tasks() { wait_idle(); }

void Tasks::spawn(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    ++active_;
  }
  // A thread that cannot start (EAGAIN) throws to the caller, which answers
  // its call; it must not count as running, or wait_idle() would never return.
  struct Uncount {
    Tasks* tasks;
    bool armed = true;
    ~Uncount() {
      if (!armed) return;
      std::lock_guard lock(tasks->mutex_);
      --tasks->active_;
      tasks->idle_.notify_all();
    }
  } uncount{this};
  std::thread([this, fn = std::move(fn)] {
    auto escaped = [this](const std::string& message) noexcept {
      try {
        if (escaped_) {
          escaped_(message);
        } else {
          std::fprintf(stderr, "corral mcp: %s\n", message.c_str());
        }
      } catch (...) {  // a logger that throws: nothing left to tell
      }
    };
    try {
      fn();
    } catch (const std::exception& e) {
      escaped(std::string("a task ended in an exception: ") + e.what());
    } catch (...) {
      escaped("a task ended in an exception that is not a std::exception");
    }
    std::lock_guard lock(mutex_);
    --active_;
    idle_.notify_all();
  }).detach();
  uncount.armed = false;
}

void Tasks::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return active_ == 0; });
}

Service::Impl::Impl(Options options, pool::WorkerPool& pool)
    : options_(std::move(options)), pool_(pool) {}

Service::Impl::~Impl() { shutdown(); }

void Service::Impl::log(LogLevel level, const std::string& message) const {
  if (options_.logger) {
    options_.logger(level, message);
  } else if (level >= LogLevel::warn) {
    std::fprintf(stderr, "corral mcp: %s\n", message.c_str());
  }
}

void Service::Impl::start() {
  bind_manifests();
  connect_upstreams();
  build_catalogue();
  ticking_ = true;
  ticker_ = std::thread([this] { tick_loop(); });
}

void Service::Impl::tick_loop() {
  std::unique_lock lock(tick_mutex_);
  while (ticking_) {
    tick_wake_.wait_for(lock, options_.progress_interval);
    if (!ticking_) break;
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::pair<std::shared_ptr<CallContext>, double>> due;
    std::erase_if(live_, [&](const auto& entry) {
      auto context = entry.first.lock();
      if (!context) return true;
      due.emplace_back(std::move(context),
                       std::chrono::duration<double>(now - entry.second).count());
      return false;
    });
    lock.unlock();
    for (auto& [context, seconds] : due) {
      try {  // the ticker's thread: a failed notification costs that notification
        context->progress(fmt::format("still running after {:.0f} s", seconds));
      } catch (const std::exception& e) {
        log(LogLevel::error, std::string("a progress notification failed: ") + e.what());
      }
    }
    due.clear();
    lock.lock();
  }
}

void Service::Impl::bind_manifests() {
  std::vector<std::pair<std::string, std::function<bind::CommandTree()>>> sources;
  for (const std::string& path : options_.manifests)
    sources.emplace_back("manifest " + path, [path] { return bind::load_manifest_file(path); });
  for (bind::CommandTree& tree : options_.trees)
    sources.emplace_back("command tree " + tree.root.name, [&tree] { return std::move(tree); });
  for (auto& [path, load] : sources) {
    std::unique_ptr<bind::Binding> binding;
    std::string name;
    try {
      bind::CommandTree tree = load();
      name = tree.root.name.empty() ? path : tree.root.name;
      binding = bind::Binding::bind(std::move(tree));
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("{}: {}", path, e.what()));
    }
    for (const bind::Operation& op : binding->operations()) {
      if (!commands_.emplace(op.name, std::make_pair(binding.get(), &op)).second)
        throw std::invalid_argument(
            fmt::format("{}: the command tool {} is already bound by an earlier "
                        "manifest or tree",
                        path, op.name));
    }
    outcomes_.emplace(binding.get(), std::make_unique<Outcomes>());
    bindings_.push_back(std::move(binding));
    binding_names_.push_back(std::move(name));
  }
}

void Service::Impl::connect_upstreams() {
  for (const Upstream& upstream : options_.upstreams) {
    upstreams_.push_back(UpstreamClient::connect(
        upstream, options_.upstream_timeout,
        [this](LogLevel l, const std::string& m) { log(l, m); }, options_.restart_backoff_min,
        options_.restart_backoff_max));
    log(LogLevel::info,
        fmt::format("upstream {}: {} tools", upstream.name, upstreams_.back()->tools().size()));
  }
}

void Service::Impl::build_catalogue() {
  // Code mode: every bound command, then every upstream tool.
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
    callables_.push_back(std::move(c));
  }
  for (const auto& upstream : upstreams_) {
    if (paths.count(upstream->name()))
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
      callables_.push_back(std::move(c));
    }
  }
  std::vector<DeclaredTool> declared;
  std::vector<std::string> ruby_bound;  // as the worker binds them
  for (const Callable& c : callables_) {
    callable_paths_.push_back(c.path);
    try {
      sandbox::check_ruby_tool_path("codemode." + c.path, ruby_bound);
      ruby_bound.push_back("codemode." + c.path);
      ruby_paths_.push_back(c.path);
    } catch (const std::invalid_argument&) {
      ruby_unreachable_.push_back(c.path);
    }
    DeclaredTool d;
    std::string_view rest = c.path;
    while (true) {
      const auto dot = rest.find('.');
      d.path.emplace_back(rest.substr(0, dot));
      if (dot == std::string_view::npos) break;
      rest.remove_prefix(dot + 1);
    }
    d.description = c.description;
    d.input_schema = c.input_schema;
    d.output_schema = c.output_schema;
    declared.push_back(std::move(d));
  }
  declarations_ = mcp::declarations(declared);

  // MCP tools: execute, then the commands (direct) or the compact trio.
  auto add = [&](std::string name, json::object definition) {
    for (const Tool& t : tools_) {
      if (t.name == name)
        throw std::invalid_argument(fmt::format("two MCP tools would be named {}", name));
    }
    definition["name"] = name;
    tools_.push_back(Tool{std::move(name), std::move(definition)});
  };
  std::string description = kExecuteDescription;
  description += fmt::format(" Default timeout {} ms, at most {} ms.",
                             options_.default_timeout.count(), options_.max_timeout.count());
  description += callables_.empty()
                     ? "\n\nNo functions are bound: `codemode` is empty.\n"
                     : "\n\nThe functions available, as TypeScript declarations:\n\n```ts\n" +
                           declarations_ + "```\n";
  description += kRubyDescription;
  if (!ruby_unreachable_.empty()) {
    std::string names;
    for (const std::string& path : ruby_unreachable_)
      names += (names.empty() ? "" : ", ") + ("codemode." + path);
    description += " Ruby cannot name " + names + ": use JavaScript for those.";
  }
  description += "\n";
  add("execute",
      json::object{{"title", "Execute code"},
                   {"description", description},
                   {"inputSchema", execute_input_schema()},
                   {"outputSchema", execute_output_schema()},
                   {"annotations", json::object{{"title", "Execute code"},
                                                {"readOnlyHint", false},
                                                {"destructiveHint", !commands_.empty()},
                                                {"idempotentHint", false},
                                                {"openWorldHint", !upstreams_.empty()}}}});
  if (options_.mode == Mode::direct) {
    for (const auto& [name, entry] : commands_) {
      const bind::Operation& op = *entry.second;
      json::object d;
      if (!op.annotations.title.empty()) d["title"] = op.annotations.title;
      d["description"] = op.description.empty() ? "Runs the command " + name : op.description;
      d["inputSchema"] = core::parse_json(op.input_schema, "input schema");
      d["outputSchema"] = core::parse_json(op.output_schema, "output schema");
      json::object a = annotations_json(op.annotations);
      if (!a.empty()) d["annotations"] = std::move(a);
      add(name, std::move(d));
    }
  } else if (!commands_.empty()) {
    add("search_tools",
        json::object{
            {"title", "Search command tools"},
            {"description",
             fmt::format("Search the {} command tools by words in their names and descriptions; "
                         "an empty query lists them. Then read one with get_tool_details and run "
                         "it with call_tool.",
                         commands_.size())},
            {"inputSchema",
             json::object{{"type", "object"},
                          {"properties", json::object{{"query", json::object{{"type", "string"}}},
                                                      {"limit", json::object{{"type", "integer"},
                                                                             {"minimum", 1},
                                                                             {"maximum", 100}}}}},
                          {"additionalProperties", false}}},
            {"annotations", json::object{{"readOnlyHint", true}, {"openWorldHint", false}}}});
    add("get_tool_details",
        json::object{
            {"title", "Describe a command tool"},
            {"description",
             "The description, input schema, output schema and annotations of one command tool."},
            {"inputSchema",
             json::object{{"type", "object"},
                          {"properties", json::object{{"name", json::object{{"type", "string"}}}}},
                          {"required", json::array{"name"}},
                          {"additionalProperties", false}}},
            {"annotations", json::object{{"readOnlyHint", true}, {"openWorldHint", false}}}});
    add("call_tool",
        json::object{
            {"title", "Run a command tool"},
            {"description",
             "Runs one command tool with `input` as its get_tool_details input schema describes "
             "(`{\"flags\": {...}, \"args\": [...]}`)."},
            {"inputSchema",
             json::object{{"type", "object"},
                          {"properties", json::object{{"name", json::object{{"type", "string"}}},
                                                      {"input", json::object{{"type", "object"}}}}},
                          {"required", json::array{"name"}},
                          {"additionalProperties", false}}},
            {"annotations", json::object{{"destructiveHint", true}}}});
  }
}

const Tool* Service::Impl::find_tool(std::string_view name) const noexcept {
  for (const Tool& t : tools_)
    if (t.name == name) return &t;
  return nullptr;
}

void Service::Impl::shutdown() {
  if (shut_down_.exchange(true)) return;
  {
    std::lock_guard lock(tick_mutex_);
    ticking_ = false;
    live_.clear();
  }
  tick_wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  {
    std::unique_lock lock(runs_mutex_);
    for (const auto& [id, ticket] : runs_)
      if (ticket) pool_.cancel(ticket);
  }
  const auto deadline = process::Clock::now() + std::chrono::seconds(10);
  for (auto& binding : bindings_) binding->shutdown(deadline);
  {
    std::unique_lock lock(runs_mutex_);
    runs_done_.wait(lock, [this] { return runs_.empty(); });
  }
  for (auto& upstream : upstreams_) upstream->close();
  tasks_.wait_idle();
}

void Service::Impl::call(const Tool& tool, const json::object& arguments,
                         std::shared_ptr<CallContext> context, ResultDone done) {
  try {
    start_call(tool, arguments, std::move(context), done);
  } catch (const std::exception& e) {
    log(LogLevel::error, fmt::format("tools/call {}: internal error: {}", tool.name, e.what()));
    deliver(
        done, [this] { return internal_result(); }, tool.name);
  }
}

void Service::Impl::start_call(const Tool& tool, const json::object& arguments,
                               std::shared_ptr<CallContext> context, ResultDone done) {
  if (shut_down_.load()) {
    done(command_result(std::nullopt, Failure{FailureCode::unavailable,
                                              "The MCP service is shutting down.", nullptr}));
    return;
  }
  {
    std::lock_guard lock(tick_mutex_);
    live_.emplace_back(context, std::chrono::steady_clock::now());
  }
  if (tool.name == "execute") {
    run_execute(arguments, std::move(context), std::move(done));
  } else if (options_.mode == Mode::compact && tool.name == "search_tools") {
    search_tools(arguments, std::move(done));
  } else if (options_.mode == Mode::compact && tool.name == "get_tool_details") {
    tool_details(arguments, std::move(done));
  } else if (options_.mode == Mode::compact && tool.name == "call_tool") {
    const json::value* name = arguments.if_contains("name");
    const json::value* input = arguments.if_contains("input");
    std::string problem;
    if (!name || !name->is_string())
      problem = "call_tool: `name` must be a string";
    else if (input && !input->is_object())
      problem = "call_tool: `input` must be an object";
    for (const auto& [key, v] : arguments)
      if (key != "name" && key != "input")
        problem = "call_tool: unknown argument " + std::string(key);
    if (!problem.empty()) {
      done(command_result(std::nullopt, Failure{FailureCode::invalid_request, problem, nullptr}));
      return;
    }
    const std::string target(name->get_string());
    if (!commands_.count(target)) {
      done(command_result(
          std::nullopt,
          Failure{FailureCode::no_such_tool,
                  "No command tool is named " + target + " (search_tools lists them).", nullptr}));
      return;
    }
    run_command(target, input ? input->get_object() : json::object{}, std::move(context),
                std::move(done));
  } else {
    run_command(tool.name, arguments, std::move(context), std::move(done));
  }
}

void Service::Impl::run_execute(const json::object& arguments, std::shared_ptr<CallContext> context,
                                ResultDone done) {
  auto refuse = [&](std::string message) {
    done(command_result(std::nullopt,
                        Failure{FailureCode::invalid_request, std::move(message), nullptr}));
  };
  const json::value* code = arguments.if_contains("code");
  if (!code || !code->is_string() || code->get_string().empty())
    return refuse("execute: `code` must be a non-empty string");
  std::chrono::milliseconds timeout = std::min(options_.default_timeout, options_.max_timeout);
  if (const json::value* t = arguments.if_contains("timeout"); t && !t->is_null()) {
    if (!t->is_number() || t->to_number<double>() <= 0)
      return refuse("execute: `timeout` must be a positive number of milliseconds");
    const double ms =
        std::min(t->to_number<double>(), static_cast<double>(options_.max_timeout.count()));
    timeout = std::chrono::milliseconds(std::max<std::int64_t>(1, static_cast<std::int64_t>(ms)));
  }
  sandbox::Language language = sandbox::Language::javascript;
  if (const json::value* l = arguments.if_contains("language"); l && !l->is_null()) {
    if (!l->is_string()) return refuse("execute: `language` must be \"javascript\" or \"ruby\"");
    try {
      language = sandbox::parse_language(std::string(l->get_string()));
    } catch (const std::invalid_argument& e) {
      return refuse(std::string("execute: ") + e.what());
    }
  }
  for (const auto& [key, v] : arguments)
    if (key != "code" && key != "timeout" && key != "language")
      return refuse("execute: unknown argument " + std::string(key));

  auto state = std::make_shared<RunScope>();

  pool::Request request;
  request.code = std::string(code->get_string());
  request.limits = options_.run_limits;
  request.limits.language = language;
  if (language == sandbox::Language::ruby) {
    // The worker binds "codemode." + each name; for Ruby only the ones it
    // can spell, so that one unspellable upstream tool does not fail them all.
    request.tools = ruby_paths_;
  } else {
    request.tools = callable_paths_;
  }
  request.limits.timeout = std::chrono::duration<double>(timeout);
  request.dispatcher = [this, context, state](const std::string& name, std::string args,
                                              pool::ToolAnswer answer) {
    context->progress("codemode." + name);
    context->log(LogLevel::debug, "codemode." + name + "(" + args + ")");
    dispatch(name, std::move(args), std::move(answer), state);
  };
  std::uint64_t id = 0;
  {
    std::lock_guard lock(runs_mutex_);
    id = ++next_run_;
    runs_[id] = 0;
  }
  context->log(LogLevel::debug, fmt::format("execute: run {} starts ({} ms)", id, timeout.count()));
  const auto started = std::chrono::steady_clock::now();
  const pool::Ticket ticket = pool_.submit(std::move(request), [this, id, state, context, done,
                                                                started](pool::Outcome outcome) {
    // The pool's thread: deliver() keeps every exception here.
    deliver(
        done,
        [&] {
          state->settle();
          const double ms =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                  .count();
          executions_.counts[outcome.ok() ? 0 : 1 + static_cast<int>(outcome.failure().code)]
              .fetch_add(1);
          execution_micros_.fetch_add(static_cast<std::uint64_t>(ms * 1000));
          context->log(outcome.ok() ? LogLevel::info : LogLevel::warn,
                       fmt::format("execute: run {} {} in {:.0f} ms", id,
                                   outcome.ok() ? std::string("succeeded")
                                                : std::string(to_string(outcome.failure().code)),
                                   ms));
          return execution_result(outcome);
        },
        fmt::format("execute: run {}", id));
    std::lock_guard lock(runs_mutex_);
    runs_.erase(id);
    runs_done_.notify_all();
  });
  {
    std::lock_guard lock(runs_mutex_);
    if (auto it = runs_.find(id); it != runs_.end()) it->second = ticket;
  }
  context->on_cancel([this, ticket, state] {
    pool_.cancel(ticket);
    state->settle();
  });
}

bool RunScope::track(std::function<void()> stop) {
  std::lock_guard lock(mutex);
  if (settled) return false;
  stops.push_back(std::move(stop));
  return true;
}

void RunScope::settle() {
  std::vector<std::function<void()>> running;
  {
    std::lock_guard lock(mutex);
    settled = true;
    running.swap(stops);
  }
  for (auto& stop : running) stop();
}

void Service::Impl::dispatch(const std::string& path, std::string args_json,
                             pool::ToolAnswer answer, const std::shared_ptr<RunScope>& scope) {
  const Callable* callable = nullptr;
  for (const Callable& c : callables_)
    if (c.path == path) callable = &c;
  if (!callable) {
    answer.reject("No function codemode." + path);
    return;
  }
  if (callable->binding) {
    process::CancelSource cancel;
    if (!scope->track([cancel]() mutable { cancel.cancel(); })) {
      answer.reject("Execution has already completed.");
      return;
    }
    try {  // the pool's thread: a thread that cannot start is this call's failure
      spawn_command(callable->binding, callable->operation, std::move(args_json), answer, cancel);
    } catch (const std::exception& e) {
      log(LogLevel::error, std::string("codemode.") + path + ": internal error: " + e.what());
      answer.reject(std::string("internal: ") + e.what());
    }
    return;
  }
  try {
    dispatch_upstream(*callable, std::move(args_json), answer, scope);
  } catch (const std::exception& e) {
    log(LogLevel::error, std::string("codemode.") + path + ": internal error: " + e.what());
    answer.reject(std::string("internal: ") + e.what());
  }
}

void Service::Impl::spawn_command(bind::Binding* binding, const std::string& operation,
                                  std::string args_json, pool::ToolAnswer answer,
                                  process::CancelSource cancel) {
  tasks_.spawn([this, binding, op = operation, args = std::move(args_json), answer, cancel] {
    process::RunOptions run;
    run.cancel = cancel;
    try {
      Execution e = binding->call(op, args, run);
      count(binding, std::nullopt);
      answer.resolve(bind::output_view(e));
    } catch (const Error& e) {
      count(binding, e.code());
      std::string message = fmt::format("{}: {}", to_string(e.code()), e.what());
      if (e.code() == FailureCode::busy) message += held_slots(*binding);
      if (e.retryable()) message += " (retryable)";
      if (e.execution()) message += "\n" + bind::output_view(*e.execution());
      answer.reject(std::move(message));
    } catch (const std::exception& e) {
      count(binding, FailureCode::internal);
      answer.reject(std::string("internal: ") + e.what());
    }
  });
}

void Service::Impl::count(const bind::Binding* binding,
                          std::optional<FailureCode> outcome) noexcept {
  const auto it = outcomes_.find(binding);
  if (it == outcomes_.end()) return;
  it->second->counts[outcome ? 1 + static_cast<int>(*outcome) : 0].fetch_add(1);
}

void Service::Impl::dispatch_upstream(const Callable& target, std::string args_json,
                                      pool::ToolAnswer answer,
                                      const std::shared_ptr<RunScope>& scope) {
  const Callable* callable = &target;
  json::value input = parse_or_null(args_json);
  if (input.is_null()) input = json::object{};
  {  // a late call gets what the pool would answer
    std::lock_guard lock(scope->mutex);
    if (scope->settled) {
      answer.reject("Execution has already completed.");
      return;
    }
  }
  // An answered call is not cancelled afterwards.
  auto answered = std::make_shared<std::atomic<bool>>(false);
  std::function<void()> stop = callable->upstream->call_tool(
      callable->upstream_tool, std::move(input), options_.max_timeout,
      [this, answer, answered](std::optional<json::object> result, std::string error) {
        answered->store(true);
        if (!result) {
          answer.reject(error);
          return;
        }
        try {  // the upstream's reader thread: nothing may leave it
          std::string failure;
          if (auto value = upstream_value(*result, failure)) {
            answer.resolve(std::move(*value));
          } else {
            answer.reject(failure);
          }
        } catch (const std::exception& e) {
          log(LogLevel::error, std::string("an upstream answer: internal error: ") + e.what());
          answer.reject("internal: corral could not pass on the upstream tool's answer");
        }
      });
  if (!scope->track([stop, answered] {
        if (!answered->load()) stop();
      }))
    stop();
}

void Service::Impl::run_command(const std::string& name, const json::object& input,
                                std::shared_ptr<CallContext> context, ResultDone done) {
  const auto found = commands_.find(name);
  bind::Binding* binding = found->second.first;
  process::CancelSource cancel;
  const std::uint64_t cancel_id = context->on_cancel([cancel]() mutable { cancel.cancel(); });
  context->progress("running " + name);
  tasks_.spawn([this, binding, name, input = json::serialize(input), cancel, context, cancel_id,
                done] {
    process::RunOptions run;
    run.cancel = cancel;
    std::optional<Execution> execution;
    std::optional<Failure> failure;
    try {
      execution = binding->call(name, input, run);
    } catch (const Error& e) {
      failure = e.to_failure();
      if (failure->code == FailureCode::busy) failure->message += held_slots(*binding);
    } catch (const std::exception& e) {
      failure = Failure{FailureCode::internal, e.what(), nullptr};
    }
    count(binding, failure ? std::optional<FailureCode>(failure->code) : std::nullopt);
    deliver(
        done,
        [&] {
          context->forget(cancel_id);
          context->log(failure ? LogLevel::warn : LogLevel::info,
                       name + (failure ? ": " + std::string(to_string(failure->code)) : ": ok"));
          return command_result(execution, failure);
        },
        name);
  });
}

void Service::Impl::search_tools(const json::object& arguments, ResultDone done) const {
  std::string query;
  std::size_t limit = 20;
  if (const json::value* q = arguments.if_contains("query"); q && !q->is_null()) {
    if (!q->is_string())
      return done(
          command_result(std::nullopt, Failure{FailureCode::invalid_request,
                                               "search_tools: `query` must be a string", nullptr}));
    query = lower(q->get_string());
  }
  if (const json::value* l = arguments.if_contains("limit"); l && !l->is_null()) {
    if (!l->is_int64() && !l->is_uint64())
      return done(command_result(std::nullopt,
                                 Failure{FailureCode::invalid_request,
                                         "search_tools: `limit` must be an integer", nullptr}));
    limit =
        static_cast<std::size_t>(std::clamp<std::int64_t>(l->to_number<std::int64_t>(), 1, 100));
  }
  std::vector<std::string> words;
  for (std::size_t at = 0; at < query.size();) {
    const auto end = query.find_first_of(" \t_-", at);
    if (end != at) words.push_back(query.substr(at, end == std::string::npos ? end : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  json::array found;
  std::size_t total = 0;
  for (const auto& [name, entry] : commands_) {
    const std::string haystack =
        lower(name + " " + entry.second->description + " " + entry.second->annotations.title);
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
    return done(command_result(std::nullopt,
                               Failure{FailureCode::invalid_request,
                                       "get_tool_details: `name` must be a string", nullptr}));
  const auto it = commands_.find(std::string(name->get_string()));
  if (it == commands_.end())
    return done(command_result(
        std::nullopt, Failure{FailureCode::no_such_tool,
                              "No command tool is named " + std::string(name->get_string()) +
                                  " (search_tools lists them).",
                              nullptr}));
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

void Service::Impl::deliver(const ResultDone& done, const std::function<json::object()>& make,
                            std::string_view what) const noexcept {
  try {
    json::object result;
    try {
      result = make();
    } catch (const std::exception& e) {
      log(LogLevel::error, fmt::format("{}: internal error: {}", what, e.what()));
      result = internal_result();
    } catch (...) {
      log(LogLevel::error, fmt::format("{}: internal error (not a std::exception)", what));
      result = internal_result();
    }
    done(std::move(result));
  } catch (const std::exception& e) {
    log(LogLevel::error, fmt::format("{}: the answer could not be sent: {}", what, e.what()));
  } catch (...) {
    log(LogLevel::error, fmt::format("{}: the answer could not be sent", what));
  }
}

json::object failure_result(const Failure& failure) {
  return json::object{{"content", json::array{text_block(json::serialize(failure_json(failure)))}},
                      {"isError", true}};
}

json::object Service::Impl::internal_result() const {
  return failure_result(Failure{FailureCode::internal,
                                "corral hit an internal error while answering this call; the "
                                "details are in its log. The session goes on.",
                                nullptr});
}

json::object Service::Impl::execution_result(const pool::Outcome& outcome) const {
  const std::size_t budget = options_.result_budget;
  json::array content;
  bool cut = false;
  if (!outcome.ok()) {
    const Failure& failure = outcome.failure();
    content.push_back(text_block(json::serialize(failure_json(failure))));
    if (failure.execution) {
      const Execution& e = *failure.execution;
      if (!e.stdout_text().empty())
        content.push_back(text_block("stdout:\n" + cut_text(e.stdout_text(), budget / 2, cut)));
      if (!e.stderr_text().empty())
        content.push_back(text_block("stderr:\n" + cut_text(e.stderr_text(), budget / 2, cut)));
      if (replaced(e)) content.push_back(text_block(kReplacedNote));
    }
    if (cut)
      content.push_back(text_block(
          fmt::format("[the output was cut to fit the result budget of {} bytes]", budget)));
    return json::object{{"content", std::move(content)}, {"isError", true}};
  }
  const Execution& e = outcome.execution();
  json::value value = parse_or_null(e.value());
  std::string out = e.stdout_text();
  std::string err = e.stderr_text();
  const std::size_t value_size = json::serialize(value).size();
  if (value_size + out.size() + err.size() > budget) {
    out = cut_text(out, budget / 4, cut);
    err = cut_text(err, budget / 4, cut);
    Cut c = cut_to_budget(value, budget - out.size() - err.size());
    cut = cut || c.cut;
    value = std::move(c.value);
  }
  content.push_back(text_block(json::serialize(value)));
  if (!out.empty()) content.push_back(text_block("stdout:\n" + out));
  if (!err.empty()) content.push_back(text_block("stderr:\n" + err));
  if (e.stdout_truncated() || e.stderr_truncated())
    content.push_back(text_block("[console output past the run's output cap was dropped]"));
  json::object structured{{"value", value}};
  if (replaced(e)) {
    structured["replaced"] = true;
    content.push_back(text_block(kReplacedNote));
  }
  if (cut) {
    structured["truncated"] = true;
    content.push_back(text_block(fmt::format(
        "[the result was cut to fit the result budget of {} bytes: arrays and objects lost their "
        "tail, long strings their end; each cut is marked]",
        budget)));
  }
  return json::object{{"content", std::move(content)},
                      {"structuredContent", std::move(structured)}};
}

json::object Service::Impl::command_result(const std::optional<Execution>& execution,
                                           const std::optional<Failure>& failure) const {
  const std::size_t budget = options_.result_budget;
  if (failure) {
    json::array content;
    json::object f = failure_json(*failure);
    if (failure->code == FailureCode::busy)
      f["message"] = failure->message +
                     " Every execution slot of this command is taken; retry "
                     "after the running call ends.";
    content.push_back(text_block(json::serialize(f)));
    if (failure->execution) {
      bool cut = false;
      content.push_back(
          text_block(json::serialize(command_view(*failure->execution, budget, cut))));
      if (replaced(*failure->execution)) content.push_back(text_block(kReplacedNote));
      if (cut) content.push_back(text_block(budget_note(budget)));
    }
    return json::object{{"content", std::move(content)}, {"isError", true}};
  }
  bool cut = false;
  json::object v = command_view(*execution, budget, cut);
  json::array content;
  const json::value* out = v.if_contains("stdout");
  const json::value* err = v.if_contains("stderr");
  content.push_back(text_block(out && out->is_string() && !out->get_string().empty()
                                   ? std::string(out->get_string())
                                   : std::string("(no output; exit code 0)")));
  if (err && err->is_string() && !err->get_string().empty())
    content.push_back(text_block("stderr:\n" + std::string(err->get_string())));
  if (replaced(*execution)) content.push_back(text_block(kReplacedNote));
  if (cut) content.push_back(text_block(budget_note(budget)));
  return json::object{{"content", std::move(content)}, {"structuredContent", std::move(v)}};
}

// Service

Service::Service(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Service::~Service() { impl_->shutdown(); }

std::shared_ptr<Service> Service::start(Options options, pool::WorkerPool& pool) {
  validate(options);
  auto impl = std::make_unique<Impl>(std::move(options), pool);
  impl->start();
  return std::shared_ptr<Service>(new Service(std::move(impl)));
}

void Service::shutdown() { impl_->shutdown(); }

std::vector<std::string> Service::tool_names() const {
  std::vector<std::string> names;
  for (const Tool& t : impl_->tools()) names.push_back(t.name);
  return names;
}

std::string Service::declarations() const { return impl_->declarations(); }

std::string Service::status_json() const { return json::serialize(impl_->status()); }

json::object Service::Impl::status() const {
  json::array commands;
  for (std::size_t b = 0; b < bindings_.size(); ++b) {
    const process::Status st = bindings_[b]->status();
    json::object failures;
    for (const auto& [code, n] : st.failures) failures[to_string(code)] = n;
    json::array slots;
    for (std::size_t i = 0; i < st.slot_status.size(); ++i) {
      const process::SlotStatus& slot = st.slot_status[i];
      json::object o{{"slot", i}, {"state", process::to_string(slot.state)}};
      if (slot.state != process::SlotState::idle) {
        o["pid"] = slot.pid;
        o["program"] = slot.program;
        o["unit"] = slot.unit;
      }
      if (slot.since != process::Clock::time_point{}) {
        o["since"] = rfc3339(slot.since);
        o["since_seconds"] = seconds_since(slot.since);
      }
      slots.push_back(std::move(o));
    }
    json::object calls;
    if (const auto it = outcomes_.find(bindings_[b].get()); it != outcomes_.end()) {
      calls["ok"] = it->second->counts[0].load();
      for (int c = 0; c < kFailureCodeCount; ++c)
        calls[to_string(static_cast<FailureCode>(c))] = it->second->counts[1 + c].load();
    }
    json::array operations;
    for (const bind::Operation& op : bindings_[b]->operations())
      operations.push_back(json::value(op.name));
    commands.push_back(json::object{{"name", binding_names_[b]},
                                    {"operations", std::move(operations)},
                                    {"unit", process::to_string(st.unit)},
                                    {"slots", st.slots},
                                    {"running", st.running},
                                    {"cleanup_failed", st.cleanup_failed},
                                    {"accepting", st.accepting},
                                    {"runs_started", st.runs_started},
                                    {"runs_failed", st.runs_failed},
                                    {"failures", std::move(failures)},
                                    {"calls", std::move(calls)},
                                    {"slot_status", std::move(slots)}});
  }
  json::array upstreams;
  for (const auto& upstream : upstreams_) {
    const UpstreamStatus u = upstream->status();
    json::object o{{"name", u.name},  {"transport", u.transport}, {"state", u.state},
                   {"pid", u.pid},    {"restarts", u.restarts},   {"last_exit", u.last_exit},
                   {"tools", u.tools}};
    if (u.transport == "stdio") {
      o["since"] = rfc3339(u.since);
      o["since_seconds"] = seconds_since(u.since);
    }
    if (u.next_attempt) o["next_attempt"] = rfc3339(*u.next_attempt);
    if (!u.unit.empty()) {
      o["unit"] = u.unit;
      json::array protections;
      for (const process::Protection& p : u.protections)
        protections.push_back(
            json::object{{"name", p.name}, {"enforced", p.enforced}, {"detail", p.detail}});
      o["protections"] = std::move(protections);
    }
    upstreams.push_back(std::move(o));
  }
  return json::object{{"commands", std::move(commands)}, {"upstreams", std::move(upstreams)}};
}

namespace {

// A Prometheus label value: backslash, quote and newline escaped.
std::string label(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string Service::metrics() const { return impl_->metrics(); }

std::string Service::Impl::metrics() const {
  std::string out;
  auto family = [&out](std::string_view name, std::string_view type, std::string_view help) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  std::vector<process::Status> statuses;
  for (const auto& binding : bindings_) statuses.push_back(binding->status());
  // Bounded cardinality: one series per binding and failure code (every code
  // always present, so rates work from the first scrape), one per binding
  // and slot state; never per call.
  family("corral_command_runs_total", "counter",
         "Bound-command runs started (busy refusals included), per binding.");
  for (std::size_t b = 0; b < statuses.size(); ++b)
    fmt::format_to(std::back_inserter(out), "corral_command_runs_total{{binding=\"{}\"}} {}\n",
                   label(binding_names_[b]), statuses[b].runs_started);
  family("corral_command_failures_total", "counter",
         "Bound-command calls that did not succeed, per binding and failure code.");
  for (std::size_t b = 0; b < statuses.size(); ++b) {
    for (int c = 0; c < kFailureCodeCount; ++c) {
      const auto code = static_cast<FailureCode>(c);
      const auto it = statuses[b].failures.find(code);
      fmt::format_to(std::back_inserter(out),
                     "corral_command_failures_total{{binding=\"{}\",code=\"{}\"}} {}\n",
                     label(binding_names_[b]), to_string(code),
                     it == statuses[b].failures.end() ? 0 : it->second);
    }
  }
  family("corral_command_calls_total", "counter",
         "Calls of bound commands (MCP tools and code mode) answered, per binding and outcome "
         "(ok or the failure code).");
  for (std::size_t b = 0; b < statuses.size(); ++b) {
    const auto it = outcomes_.find(bindings_[b].get());
    if (it == outcomes_.end()) continue;
    const std::string name = label(binding_names_[b]);
    fmt::format_to(std::back_inserter(out),
                   "corral_command_calls_total{{binding=\"{}\",outcome=\"ok\"}} {}\n", name,
                   it->second->counts[0].load());
    for (int c = 0; c < kFailureCodeCount; ++c)
      fmt::format_to(std::back_inserter(out),
                     "corral_command_calls_total{{binding=\"{}\",outcome=\"{}\"}} {}\n", name,
                     to_string(static_cast<FailureCode>(c)), it->second->counts[1 + c].load());
  }
  family("corral_mcp_executions_total", "counter",
         "Code-mode runs (the MCP execute tool) answered, by outcome (ok or the failure code).");
  fmt::format_to(std::back_inserter(out), "corral_mcp_executions_total{{outcome=\"ok\"}} {}\n",
                 executions_.counts[0].load());
  for (int c = 0; c < kFailureCodeCount; ++c)
    fmt::format_to(std::back_inserter(out), "corral_mcp_executions_total{{outcome=\"{}\"}} {}\n",
                   to_string(static_cast<FailureCode>(c)), executions_.counts[1 + c].load());
  family("corral_mcp_execution_seconds_total", "counter",
         "Wall time of the code-mode runs counted in corral_mcp_executions_total.");
  fmt::format_to(std::back_inserter(out), "corral_mcp_execution_seconds_total {}\n",
                 static_cast<double>(execution_micros_.load()) / 1e6);
  family("corral_command_slots", "gauge",
         "Execution slots of each binding, by state (idle, running, cleaning_up, "
         "cleanup_failed).");
  for (std::size_t b = 0; b < statuses.size(); ++b) {
    std::map<std::string_view, int> by_state{
        {"idle", 0}, {"running", 0}, {"cleaning_up", 0}, {"cleanup_failed", 0}};
    for (const auto& slot : statuses[b].slot_status) ++by_state[process::to_string(slot.state)];
    for (const auto& [state, n] : by_state)
      fmt::format_to(std::back_inserter(out),
                     "corral_command_slots{{binding=\"{}\",state=\"{}\"}} {}\n",
                     label(binding_names_[b]), state, n);
  }
  family("corral_upstream_up", "gauge", "1 while the upstream MCP server is up, else 0.");
  std::vector<UpstreamStatus> ups;
  for (const auto& upstream : upstreams_) ups.push_back(upstream->status());
  for (const auto& u : ups)
    fmt::format_to(std::back_inserter(out), "corral_upstream_up{{upstream=\"{}\"}} {}\n",
                   label(u.name), u.state == "up" ? 1 : 0);
  family("corral_upstream_restarts_total", "counter",
         "Restart attempts of an upstream MCP server (failed ones included).");
  for (const auto& u : ups)
    fmt::format_to(std::back_inserter(out),
                   "corral_upstream_restarts_total{{upstream=\"{}\"}} {}\n", label(u.name),
                   u.restarts);
  return out;
}

void validate(const Options& options) {
  if (options.result_budget < 256)
    throw std::invalid_argument("result_budget must be at least 256 bytes");
  if (options.default_timeout.count() <= 0 || options.max_timeout.count() <= 0)
    throw std::invalid_argument("default_timeout and max_timeout must be positive");
  if (options.page_size == 0) throw std::invalid_argument("page_size must be at least 1");
  if (options.progress_interval.count() <= 0)
    throw std::invalid_argument("progress_interval must be positive");
  if (options.upstream_timeout.count() <= 0)
    throw std::invalid_argument("upstream_timeout must be positive");
  std::set<std::string> names;
  for (const Upstream& u : options.upstreams) {
    if (js_identifier(u.name) != u.name)
      throw std::invalid_argument("upstream \"" + u.name +
                                  "\": the name must be a JavaScript identifier");
    if (!names.insert(u.name).second)
      throw std::invalid_argument("upstream \"" + u.name + "\" is named twice");
    if (u.command.empty() == u.url.empty())
      throw std::invalid_argument("upstream \"" + u.name + "\": give a command or a url");
  }
  sandbox::Options limits = options.run_limits;
  limits.timeout = std::chrono::seconds(1);
  sandbox::validate(limits);
}

}  // namespace corral::mcp
