// The execute tool: a code-mode run in the pool, and the guest's
// `codemode.<path>(input)` calls it makes, to bound commands (on Tasks
// threads) and upstream tools (asynchronously); RunScope cancels what a run
// started when it settles.
#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "core/utf8.hpp"
#include "mcp/results.hpp"
#include "mcp/service.hpp"

namespace corral::mcp {

namespace {

// An approval question shows this much of the call's input (its head and
// its tail when longer), and a run asks at most this many questions.
constexpr std::size_t kApprovalHeadBytes = 700;
constexpr std::size_t kApprovalTailBytes = 200;
constexpr int kMaxQuestionsPerRun = 8;

// The sequences that could make an approval question show something else
// than the input (line and paragraph separators, next line, zero-width and
// direction marks, bidi embeddings, overrides and isolates, the BOM), by
// their UTF-8 bytes; each is shown as its \uXXXX escape instead (still JSON).
constexpr std::pair<std::string_view, std::string_view> kDisguises[] = {
    {"\xC2\x85", "\\u0085"},     {"\xD8\x9C", "\\u061c"},     {"\xE2\x80\x8B", "\\u200b"},
    {"\xE2\x80\x8C", "\\u200c"}, {"\xE2\x80\x8D", "\\u200d"}, {"\xE2\x80\x8E", "\\u200e"},
    {"\xE2\x80\x8F", "\\u200f"}, {"\xE2\x80\xA8", "\\u2028"}, {"\xE2\x80\xA9", "\\u2029"},
    {"\xE2\x80\xAA", "\\u202a"}, {"\xE2\x80\xAB", "\\u202b"}, {"\xE2\x80\xAC", "\\u202c"},
    {"\xE2\x80\xAD", "\\u202d"}, {"\xE2\x80\xAE", "\\u202e"}, {"\xE2\x81\xA0", "\\u2060"},
    {"\xE2\x81\xA6", "\\u2066"}, {"\xE2\x81\xA7", "\\u2067"}, {"\xE2\x81\xA8", "\\u2068"},
    {"\xE2\x81\xA9", "\\u2069"}, {"\xEF\xBB\xBF", "\\ufeff"},
};

std::string undisguised(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    for (const auto& [bytes, escape] : kDisguises) {
      if (text.substr(i, bytes.size()) == bytes) {
        out += escape;
        i += bytes.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

// The call's input as the approval question shows it: whole when short,
// else its head and tail around how much is not shown.
std::string shown_input(std::string_view input) {
  if (input.size() <= kApprovalHeadBytes + kApprovalTailBytes) return undisguised(input);
  const std::size_t head = core::utf8_cut(input, kApprovalHeadBytes);
  std::size_t tail = input.size() - kApprovalTailBytes;
  while (tail < input.size() && (static_cast<unsigned char>(input[tail]) & 0xC0) == 0x80) ++tail;
  return undisguised(input.substr(0, head)) +
         fmt::format(" ... [{} bytes in all; {} in the middle not shown] ... ", input.size(),
                     tail - head) +
         undisguised(input.substr(tail));
}

// The execute tool's arguments, checked.
struct ExecuteCall {
  std::string code;
  std::chrono::milliseconds timeout;
  // TypeScript by default: the description shows declarations, so models
  // write annotations; plain JavaScript strips to itself.
  sandbox::Language language = sandbox::Language::typescript;
};

// `arguments` as an ExecuteCall, or what is wrong with them.
std::variant<ExecuteCall, std::string> read_execute(const json::object& arguments,
                                                    const Options& options) {
  const json::value* code = arguments.if_contains("code");
  if (!code || !code->is_string() || code->get_string().empty())
    return "execute: `code` must be a non-empty string";
  ExecuteCall call{std::string(code->get_string()),
                   std::min(options.default_timeout, options.max_timeout)};
  if (const json::value* t = arguments.if_contains("timeout"); t && !t->is_null()) {
    if (!t->is_number() || t->to_number<double>() <= 0)
      return "execute: `timeout` must be a positive number of milliseconds";
    const double ms =
        std::min(t->to_number<double>(), static_cast<double>(options.max_timeout.count()));
    call.timeout =
        std::chrono::milliseconds(std::max<std::int64_t>(1, static_cast<std::int64_t>(ms)));
  }
  if (const json::value* l = arguments.if_contains("language"); l && !l->is_null()) {
    if (!l->is_string())
      return "execute: `language` must be \"typescript\", \"javascript\" or \"ruby\"";
    try {
      call.language = sandbox::parse_language(std::string(l->get_string()));
    } catch (const std::invalid_argument& e) {
      return std::string("execute: ") + e.what();
    }
  }
  for (const auto& [key, v] : arguments)
    if (key != "code" && key != "timeout" && key != "language")
      return "execute: unknown argument " + std::string(key);
  return call;
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
        if (!t || !t->is_string()) continue;
        if (!text.empty()) text += '\n';
        text.append(t->get_string().data(), t->get_string().size());
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

}  // namespace

void Service::Impl::run_execute(const json::object& arguments, std::shared_ptr<CallContext> context,
                                ResultDone done) {
  auto read = read_execute(arguments, options_);
  if (auto* problem = std::get_if<std::string>(&read)) return done(refusal(std::move(*problem)));
  ExecuteCall& call = std::get<ExecuteCall>(read);
  auto scope = std::make_shared<RunScope>();
  pool::Request request;
  request.code = std::move(call.code);
  request.limits = options_.run_limits;
  request.limits.language = call.language;
  // The worker binds "codemode." + each name; for Ruby only the ones it
  // can spell, so that one unspellable upstream tool does not fail them all.
  request.tools = call.language == sandbox::Language::ruby ? ruby_paths_ : callable_paths_;
  request.limits.timeout = call.timeout;
  request.dispatcher = [this, context, scope](const std::string& name, std::string args,
                                              pool::ToolAnswer answer) {
    context->progress("codemode." + name);
    context->log(LogLevel::debug, "codemode." + name + "(" + args + ")");
    dispatch(name, std::move(args), std::move(answer), scope, context);
  };
  std::uint64_t id = 0;
  {
    std::lock_guard lock(runs_mutex_);
    id = ++next_run_;
    runs_[id] = 0;
  }
  context->log(LogLevel::debug,
               fmt::format("execute: run {} starts ({} ms)", id, call.timeout.count()));
  const pool::Ticket ticket = pool_.submit(
      std::move(request), [this, id, scope, context, done,
                           started = std::chrono::steady_clock::now()](pool::Outcome outcome) {
        // The pool's thread: deliver() keeps every exception here.
        deliver(
            done, [&] { return settle_execute(id, started, *scope, *context, outcome); },
            fmt::format("execute: run {}", id));
        std::lock_guard lock(runs_mutex_);
        runs_.erase(id);
        runs_done_.notify_all();
      });
  {
    std::lock_guard lock(runs_mutex_);
    if (auto it = runs_.find(id); it != runs_.end()) it->second = ticket;
  }
  context->on_cancel([this, ticket, scope] {
    pool_.cancel(ticket);
    scope->settle();
  });
}

json::object Service::Impl::settle_execute(std::uint64_t id,
                                           std::chrono::steady_clock::time_point started,
                                           RunScope& scope, CallContext& context,
                                           const pool::Outcome& outcome) {
  scope.settle();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  executions_.counts[outcome.ok() ? 0 : 1 + static_cast<int>(outcome.failure().code)].fetch_add(1);
  execution_micros_.fetch_add(static_cast<std::uint64_t>(ms * 1000));
  context.log(outcome.ok() ? LogLevel::info : LogLevel::warn,
              fmt::format("execute: run {} {} in {:.0f} ms", id,
                          outcome.ok() ? std::string("succeeded")
                                       : std::string(to_string(outcome.failure().code)),
                          ms));
  return execution_result(
      outcome, options_.result_budget,
      [&context](std::vector<ResultStore::Text> parts) { return context.keep(std::move(parts)); });
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
                             pool::ToolAnswer answer, const std::shared_ptr<RunScope>& scope,
                             const std::shared_ptr<CallContext>& context) {
  if (finder_ && (path == kSearchPath || path == kDescribePath)) {
    try {  // the pool's thread: answered here, whatever happens
      answer.resolve(path == kSearchPath ? finder_->search(args_json)
                                         : finder_->describe(args_json));
    } catch (const FinderError& e) {
      answer.reject(e.what());
    } catch (const std::exception& e) {
      log(LogLevel::error, std::string("codemode.") + path + ": internal error: " + e.what());
      answer.reject(std::string("internal: ") + e.what());
    }
    return;
  }
  const Callable* callable = nullptr;
  for (const Callable& c : callables_)
    if (c.path == path) callable = &c;
  if (!callable) {
    answer.reject("No function codemode." + path);
    return;
  }
  if (callable->needs_approval) {
    approve_then_run(*callable, std::move(args_json), std::move(answer), scope, context);
  } else {
    run_callable(*callable, std::move(args_json), std::move(answer), scope);
  }
}

void Service::Impl::run_callable(const Callable& callable, std::string args_json,
                                 pool::ToolAnswer answer, const std::shared_ptr<RunScope>& scope) {
  try {  // the pool's thread: a thread that cannot start is this call's failure
    if (callable.binding) {
      process::CancelSource cancel;
      if (!scope->track([cancel]() mutable { cancel.cancel(); })) {
        answer.reject("Execution has already completed.");
        return;
      }
      spawn_command(callable.binding, callable.operation, std::move(args_json), answer, cancel);
    } else {
      dispatch_upstream(callable, std::move(args_json), answer, scope);
    }
  } catch (const std::exception& e) {
    log(LogLevel::error,
        std::string("codemode.") + callable.path + ": internal error: " + e.what());
    answer.reject(std::string("internal: ") + e.what());
  }
}

void Service::Impl::approve_then_run(const Callable& callable, std::string args_json,
                                     pool::ToolAnswer answer,
                                     const std::shared_ptr<RunScope>& scope,
                                     const std::shared_ptr<CallContext>& context) {
  const std::string name = "codemode." + callable.path;
  if (!context->can_elicit()) {
    // A bound command is a tool of its own too (the client asks before a
    // direct call); an upstream tool is reachable from code mode only.
    answer.reject(fmt::format(
        "invalid_request: {} needs the user's approval (it is destructive or the operator "
        "listed it), and this client cannot be asked (it declared no elicitation capability); "
        "nothing was run. {}",
        name,
        callable.binding ? "Call it as a tool of its own, where the client asks, or use a client "
                           "that supports elicitation."
                         : "Use a client that supports elicitation."));
    return;
  }
  {
    std::lock_guard lock(scope->mutex);
    std::string refused;
    if (scope->declined) {
      refused = fmt::format(
          "cancelled: the user turned down an earlier call of this run; {} was not asked about "
          "and nothing was run",
          name);
    } else if (scope->questions >= kMaxQuestionsPerRun) {
      refused = fmt::format(
          "invalid_request: this run asked the user {} times already (at most {} a run); {} was "
          "not asked about and nothing was run",
          scope->questions, kMaxQuestionsPerRun, name);
    }
    if (!refused.empty()) {
      answer.reject(std::move(refused));
      return;
    }
    ++scope->questions;
  }
  const std::string shown = shown_input(args_json);
  context->log(LogLevel::info, name + ": asking the user for approval");
  // Answered once: by the user's action, or by the run settling first (the
  // pool then answers the guest itself).
  auto asked = std::make_shared<std::atomic<bool>>(false);
  std::function<void()> drop = context->elicit(
      fmt::format("Code running in corral wants to call {} ({}) with this input:\n{}\nAllow it?",
                  name, callable.binding ? "a bound command" : "an upstream tool", shown),
      [this, &callable, args = std::move(args_json), answer, scope, name,
       asked](std::string action) mutable {
        if (asked->exchange(true)) return;
        if (action == "accept") {
          run_callable(callable, std::move(args), answer, scope);
          return;
        }
        {  // not approved: the rest of the run is not asked again
          std::lock_guard lock(scope->mutex);
          scope->declined = true;
        }
        if (action.starts_with("error: ")) {
          answer.reject(fmt::format("cancelled: {} was not approved ({}); nothing was run", name,
                                    action.substr(7)));
        } else {
          answer.reject(fmt::format("cancelled: the user {} {}; nothing was run",
                                    action == "decline" ? "declined" : "cancelled the approval of",
                                    name));
        }
      });
  if (!scope->track([drop, asked] {
        if (!asked->exchange(true)) drop();
      })) {
    if (!asked->exchange(true)) drop();
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

void Service::Impl::dispatch_upstream(const Callable& callable, std::string args_json,
                                      pool::ToolAnswer answer,
                                      const std::shared_ptr<RunScope>& scope) {
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
  std::function<void()> stop = callable.upstream->call_tool(
      callable.upstream_tool, std::move(input), options_.max_timeout,
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

}  // namespace corral::mcp
