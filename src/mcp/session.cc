#include "mcp/session.hpp"

#include <fmt/format.h>

#include <charconv>
#include <exception>

#include "core/utf8.hpp"

namespace corral::mcp {

namespace {

constexpr const char* kRevisions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
constexpr const char* kLevels[] = {"debug", "info",     "notice", "warning",
                                   "error", "critical", "alert",  "emergency"};
constexpr const char* kVersion = "0.1.0";

bool integer_token(std::string_view t) {
  if (!t.empty() && t.front() == '-') t.remove_prefix(1);
  if (t.empty()) return false;
  for (char c : t)
    if (c < '0' || c > '9') return false;
  return true;
}

bool valid_id(const json::value& id) { return id.is_string() || id.is_int64() || id.is_uint64(); }

int to_mcp_level(LogLevel level) {
  switch (level) {
    case LogLevel::debug:
      return 0;
    case LogLevel::info:
      return 1;
    case LogLevel::warn:
      return 3;
    case LogLevel::error:
      return 4;
  }
  return 1;
}

}  // namespace

bool is_supported_revision(std::string_view revision) noexcept {
  for (const char* r : kRevisions)
    if (revision == r) return true;
  return false;
}

int log_level_from_string(std::string_view level) noexcept {
  for (int i = 0; i < 8; ++i)
    if (level == kLevels[i]) return i;
  return -1;
}

namespace {

// `id` (parsed) as an Id, with `raw` its token when it was found.
std::optional<Id> id_from(std::optional<std::string_view> raw, const json::value& id) {
  if (id.is_string()) {
    if (raw && !raw->empty() && raw->front() == '"') {
      if (std::optional<Id> exact = Id::from_token(*raw)) return exact;
    }
    return Id(id);
  }
  if (!id.is_number()) return std::nullopt;
  if (raw && integer_token(*raw)) return Id::from_token(*raw);
  if (raw || !valid_id(id)) return std::nullopt;  // 1.5, 1e3: not an integer token
  return Id(id);
}

}  // namespace

std::optional<Id> request_id(std::string_view message_text, const json::value& id) {
  return id_from(raw_member(message_text, "id"), id);
}

std::string call_key(const Id& id) {
  return id.is_string() ? json::serialize(id.value()) : id.text();
}

// Session::Call: one tools/call in flight.
class Session::Call : public CallContext, public std::enable_shared_from_this<Session::Call> {
 public:
  Call(std::weak_ptr<Session> session, std::shared_ptr<Stream> stream, Id id, std::string key,
       std::optional<json::value> token)
      : session_(std::move(session)),
        stream_(std::move(stream)),
        id_(std::move(id)),
        key_(std::move(key)),
        token_(std::move(token)) {}

  void progress(const std::string& message) override {
    if (!token_) return;
    std::lock_guard lock(mutex_);
    if (done_) return;
    stream_->send(notification_message(
        "notifications/progress",
        json::object{{"progressToken", *token_}, {"progress", ++progress_}, {"message", message}}));
  }

  void log(LogLevel level, const std::string& message) override {
    auto session = session_.lock();
    const int threshold = session ? session->log_level_.load() : -1;
    const int mcp_level = to_mcp_level(level);
    if (threshold < 0 || mcp_level < threshold) return;
    std::lock_guard lock(mutex_);
    if (done_) return;
    stream_->send(notification_message(
        "notifications/message",
        json::object{{"level", kLevels[mcp_level]}, {"logger", "corral"}, {"data", message}}));
  }

  std::uint64_t on_cancel(std::function<void()> stop) override {
    std::unique_lock lock(mutex_);
    if (cancelled_) {
      lock.unlock();
      stop();
      return 0;
    }
    const std::uint64_t id = ++next_stop_;
    stops_[id] = std::move(stop);
    return id;
  }

  void forget(std::uint64_t id) override {
    std::lock_guard lock(mutex_);
    stops_.erase(id);
  }

  bool cancelled() const override {
    std::lock_guard lock(mutex_);
    return cancelled_;
  }

  bool can_elicit() const override {
    auto session = session_.lock();
    return session && session->client_elicits_.load();
  }

  std::function<void()> elicit(std::string message,
                               std::function<void(std::string action)> done) override {
    auto session = session_.lock();
    if (!session) {
      done("error: the session ended");
      return [] {};
    }
    json::object params{
        {"message", std::move(message)},
        {"requestedSchema", json::object{{"type", "object"}, {"properties", json::object{}}}}};
    // Sent like a notification of this call: never after its answer (a
    // question withdrawn after it is not sent).
    auto send = [weak = weak_from_this()](std::string message) {
      auto call = weak.lock();
      if (!call) return false;
      std::lock_guard lock(call->mutex_);
      if (call->done_) return false;
      call->stream_->send(std::move(message));
      return true;
    };
    return session->ask(
        send, "elicitation/create", std::move(params),
        [done](std::optional<json::object> response) {
          if (!response) return done("error: the session ended");
          // An error wins: a response holding both is no approval.
          const json::value* result =
              response->contains("error") ? nullptr : response->if_contains("result");
          const json::value* action =
              result && result->is_object() ? result->get_object().if_contains("action") : nullptr;
          if (action && action->is_string()) {
            const std::string a(action->get_string());
            if (a == "accept" || a == "decline" || a == "cancel") return done(a);
            return done("error: the client answered the action \"" +
                        a.substr(0, core::utf8_cut(a, 40)) + "\"");
          }
          const json::value* error = response->if_contains("error");
          const json::value* text =
              error && error->is_object() ? error->get_object().if_contains("message") : nullptr;
          done("error: " + (text && text->is_string()
                                ? std::string(text->get_string())
                                : std::string("the client's answer had no action")));
        });
  }

  std::vector<std::optional<json::object>> keep(std::vector<ResultStore::Text> parts) override {
    auto session = session_.lock();
    if (!session || session->closed_.load() || cancelled()) return {};
    return session->keep(std::move(parts));
  }

  void cancel() {
    std::map<std::uint64_t, std::function<void()>> stops;
    {
      std::lock_guard lock(mutex_);
      if (cancelled_ || done_) return;
      cancelled_ = true;
      stops.swap(stops_);
    }
    for (auto& [id, stop] : stops) stop();
  }

  // Answers now with `result` (unless cancelled or answered already), then
  // runs the stops: the call's own answer, when it comes, is dropped.
  // The stops run even when the answer could not be written (rethrown after).
  void abort(json::object result) {
    std::map<std::uint64_t, std::function<void()>> stops;
    std::exception_ptr failed;
    {
      std::lock_guard lock(mutex_);
      if (done_) return;
      done_ = true;
      const bool answer = !cancelled_;
      cancelled_ = true;
      stops.swap(stops_);
      try {
        if (answer) {
          stream_->finish(result_message(id_, std::move(result)));
        } else {
          stream_->finish(std::nullopt);
        }
      } catch (...) {
        failed = std::current_exception();
      }
    }
    for (auto& [id, stop] : stops) stop();
    if (auto session = session_.lock()) session->finished(key_);
    if (failed) std::rethrow_exception(failed);
  }

  void finish(json::object result) {
    {
      std::lock_guard lock(mutex_);
      if (done_) return;
      done_ = true;
      stops_.clear();
      // A cancelled request gets no response (the client stopped waiting).
      if (cancelled_) {
        stream_->finish(std::nullopt);
      } else {
        stream_->finish(result_message(id_, std::move(result)));
      }
    }
    if (auto session = session_.lock()) session->finished(key_);
  }

 private:
  std::weak_ptr<Session> session_;
  std::shared_ptr<Stream> stream_;
  Id id_;
  std::string key_;
  std::optional<json::value> token_;
  mutable std::mutex mutex_;
  bool done_ = false;
  bool cancelled_ = false;
  std::uint64_t progress_ = 0;
  std::uint64_t next_stop_ = 0;
  std::map<std::uint64_t, std::function<void()>> stops_;
};

namespace {
std::atomic<std::uint64_t> sessions_made{0};
// MCP's "Resource not found" (its resources page).
constexpr int kResourceNotFound = -32002;
}  // namespace

Session::Session(std::shared_ptr<Service> service)
    : service_(std::move(service)), number_(++sessions_made) {}

Session::~Session() { close(); }

std::vector<std::optional<json::object>> Session::keep(std::vector<ResultStore::Text> parts) {
  struct Shown {  // what a part's block says of it
    std::string name, mime, description;
    std::size_t size;
  };
  std::vector<Shown> shown;
  for (const ResultStore::Text& p : parts)
    shown.push_back({p.name, p.mime, p.description, p.text.size()});
  const std::vector<std::optional<std::string>> uris =
      service_->impl().results().keep(number_, std::move(parts));
  std::vector<std::optional<json::object>> blocks(uris.size());
  for (std::size_t i = 0; i < uris.size(); ++i) {
    if (!uris[i]) continue;
    const Shown& p = shown[i];
    // resource_link is 2025-06-18's: an older client gets the URI in a note.
    if (revision() < "2025-06-18")
      blocks[i] =
          text_block(fmt::format("[{} is kept as the resource {}]", p.description, *uris[i]));
    else
      blocks[i] =
          json::object{{"type", "resource_link"},      {"uri", *uris[i]},    {"name", p.name},
                       {"description", p.description}, {"mimeType", p.mime}, {"size", p.size}};
  }
  return blocks;
}

std::function<void()> Session::ask(const std::function<bool(std::string)>& send,
                                   std::string_view method, json::object params,
                                   std::function<void(std::optional<json::object>)> answered) {
  std::string key;
  {
    std::lock_guard lock(mutex_);
    if (closed_.load()) {
      key.clear();
    } else {
      key = "\"corral-" + std::to_string(++next_ask_) + "\"";
      asked_[key] = answered;
    }
  }
  if (key.empty()) {
    answered(std::nullopt);
    return [] {};
  }
  // Forgetting a question still asked withdraws it from the client too
  // (notifications/cancelled), so that no stale prompt stays on its screen.
  auto forget = [weak = weak_from_this(), key, send] {
    auto session = weak.lock();
    if (!session) return;
    bool was_asked = false;
    {
      std::lock_guard lock(session->mutex_);
      was_asked = session->asked_.erase(key) > 0;
    }
    if (was_asked)
      send(notification_message(
          "notifications/cancelled",
          json::object{{"requestId", json::parse(key)},
                       {"reason", "The run that asked ended before the answer."}}));
  };
  if (!send(core::jsonrpc::request_message(json::parse(key), method, std::move(params)))) {
    forget();
    answered(std::nullopt);
  }
  return forget;
}

void Session::answer(const Id& id, const json::object& response) {
  std::function<void(std::optional<json::object>)> answered;
  {
    std::lock_guard lock(mutex_);
    const auto it = asked_.find(call_key(id));
    if (it == asked_.end()) return;  // unknown, late or repeated: nothing waits for it
    answered = std::move(it->second);
    asked_.erase(it);
  }
  answered(response);
}

void Session::resources_list(const Id& id, Stream& stream) {
  json::array list;
  for (const ResultStore::Entry& e : service_->impl().results().list(number_))
    list.push_back(json::object{{"uri", e.uri},
                                {"name", e.name},
                                {"description", e.description},
                                {"mimeType", e.mime},
                                {"size", e.size}});
  stream.finish(result_message(id, json::object{{"resources", std::move(list)}}));
}

void Session::resources_read(const Id& id, const json::object& params, Stream& stream) {
  const json::value* uri = params.if_contains("uri");
  if (!uri || !uri->is_string()) {
    stream.finish(error_message(id, kInvalidParams,
                                "Invalid params: resources/read needs a "
                                "\"uri\" string."));
    return;
  }
  std::optional<ResultStore::Page> page;
  try {
    page = service_->impl().results().read(number_, uri->get_string());
  } catch (const std::invalid_argument& e) {
    stream.finish(error_message(id, kInvalidParams, std::string("Invalid params: ") + e.what()));
    return;
  }
  if (!page) {
    const std::string_view shown =
        uri->get_string().subview(0, core::utf8_cut(uri->get_string(), 200));
    stream.finish(error_message(
        id, kResourceNotFound,
        fmt::format(
            "Resource not found: {} (kept results last {} s and belong to the session "
            "that made them)",
            shown,
            std::chrono::duration_cast<std::chrono::seconds>(service_->impl().results().retention())
                .count())));
    return;
  }
  // Where the page begins and how large the whole is: a page's ends move
  // back to character boundaries, so its length alone does not say whether
  // more follows.
  json::object meta{{"corral/offset", page->offset}, {"corral/size", page->size}};
  stream.finish(result_message(
      id, json::object{{"contents", json::array{json::object{{"uri", page->uri},
                                                             {"mimeType", page->mime},
                                                             {"text", std::move(page->text)},
                                                             {"_meta", std::move(meta)}}}}}));
}

std::string Session::revision() const {
  std::lock_guard lock(mutex_);
  return revision_;
}

void Session::set_background(std::function<void(std::string)> sink) {
  std::lock_guard lock(mutex_);
  background_ = std::move(sink);
}

void Session::close(const Failure& reason) {
  closed_.store(true);
  service_->impl().results().forget(number_);
  std::map<std::string, std::function<void(std::optional<json::object>)>> asked;
  {
    std::lock_guard lock(mutex_);
    asked.swap(asked_);
  }
  for (auto& [key, answered] : asked) answered(std::nullopt);
  std::map<std::string, std::shared_ptr<Call>> calls;
  {
    std::lock_guard lock(mutex_);
    calls = calls_;
  }
  for (auto& [key, call] : calls) {
    try {  // the answer is built per call: a throw costs that answer, not the others' stop
      call->abort(failure_result(reason));
    } catch (const std::exception& e) {
      service_->impl().log(
          LogLevel::error,
          std::string("closing a session: a call could not be answered: ") + e.what());
      call->cancel();  // when the answer was not even built; else a no-op
    }
  }
}

void Session::handle(std::string_view text, std::shared_ptr<Stream> stream) {
  boost::system::error_code ec;
  json::value message = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec) {
    stream->finish(error_message(nullptr, kParseError, "Parse error: " + ec.message()));
    return;
  }
  if (message.is_array()) {
    stream->finish(error_message(nullptr, kInvalidRequest,
                                 "Invalid Request: JSON-RPC batches are not supported (MCP "
                                 "2025-06-18 removed batching); send one message at a time."));
    return;
  }
  const json::object* object = message.if_object();
  if (!object) {
    stream->finish(
        error_message(nullptr, kInvalidRequest, "Invalid Request: a message is a JSON object."));
    return;
  }
  const json::value* id = object->if_contains("id");
  const json::value* method = object->if_contains("method");
  const json::value* jsonrpc = object->if_contains("jsonrpc");
  const std::optional<Id> parsed_id = id ? request_id(text, *id) : std::optional<Id>();
  const Id reply_id = parsed_id ? *parsed_id : Id();
  if (!jsonrpc || !jsonrpc->is_string() || jsonrpc->get_string() != "2.0") {
    stream->finish(
        error_message(reply_id, kInvalidRequest, "Invalid Request: \"jsonrpc\" must be \"2.0\"."));
    return;
  }
  if (!method) {
    if (id && (object->contains("result") || object->contains("error"))) {
      if (parsed_id) answer(*parsed_id, *object);  // to a request this server sent
      stream->finish(std::nullopt);
    } else {
      stream->finish(error_message(reply_id, kInvalidRequest,
                                   "Invalid Request: no \"method\", and not a response."));
    }
    return;
  }
  if (!method->is_string()) {
    stream->finish(
        error_message(reply_id, kInvalidRequest, "Invalid Request: \"method\" must be a string."));
    return;
  }
  const json::value* params = object->if_contains("params");
  if (params && !params->is_object()) {
    if (!id) {
      stream->finish(std::nullopt);
    } else {
      stream->finish(
          error_message(reply_id, kInvalidParams, "Invalid params: \"params\" must be an object."));
    }
    return;
  }
  if (!id) {
    notification(text, std::string(method->get_string()), params);
    stream->finish(std::nullopt);
    return;
  }
  if (!parsed_id) {
    stream->finish(error_message(nullptr, kInvalidRequest,
                                 "Invalid Request: \"id\" must be a string or an integer."));
    return;
  }
  // The session's thread boundary: a request that throws gets a JSON-RPC
  // internal error and a log line, and the session reads the next message.
  try {
    request(*parsed_id, std::string(method->get_string()), params, stream);
  } catch (const std::exception& e) {
    service_->impl().log(LogLevel::error, "request " + parsed_id->text() + " (" +
                                              std::string(method->get_string()) +
                                              "): internal error: " + e.what());
    stream->finish(error_message(*parsed_id, kInternalError, "Internal error: see corral's log."));
  }
}

void Session::notification(std::string_view text, const std::string& method,
                           const json::value* params) {
  if (method == "notifications/initialized") {
    initialized_.store(true);
  } else if (method == "notifications/cancelled" && params) {
    const json::value* request = params->get_object().if_contains("requestId");
    if (!request) return;
    const std::optional<std::string_view> raw_params = raw_member(text, "params");
    const std::optional<Id> named =
        id_from(raw_params ? raw_member(*raw_params, "requestId") : std::nullopt, *request);
    if (!named) return;
    std::shared_ptr<Call> call;
    {
      std::lock_guard lock(mutex_);
      auto it = calls_.find(call_key(*named));
      if (it != calls_.end()) call = it->second;
    }
    if (call) call->cancel();
  }
}

void Session::request(const Id& id, const std::string& method, const json::value* params,
                      const std::shared_ptr<Stream>& stream) {
  const json::object empty;
  const json::object& p = params ? params->get_object() : empty;
  if (closed_.load()) {
    stream->finish(error_message(id, kInvalidRequest, "The session is closed."));
    return;
  }
  if (method == "initialize") {
    const json::value* version = p.if_contains("protocolVersion");
    if (!version || !version->is_string()) {
      stream->finish(error_message(
          id, kInvalidParams, "Invalid params: initialize needs a \"protocolVersion\" string."));
      return;
    }
    std::string revision = is_supported_revision(version->get_string())
                               ? std::string(version->get_string())
                               : std::string(kLatestRevision);
    {
      std::lock_guard lock(mutex_);
      revision_ = revision;
    }
    const json::value* capabilities = p.if_contains("capabilities");
    // Elicitation is 2025-06-18's: an older revision cannot be asked.
    const json::value* elicitation = capabilities && capabilities->is_object()
                                         ? capabilities->get_object().if_contains("elicitation")
                                         : nullptr;
    client_elicits_.store(revision >= "2025-06-18" && elicitation && elicitation->is_object());
    initialized_.store(true);
    json::object result{
        {"protocolVersion", revision},
        {"capabilities",
         json::object{{"tools", json::object{{"listChanged", false}}},
                      {"resources", json::object{{"subscribe", false}, {"listChanged", false}}},
                      {"logging", json::object{}}}},
        {"serverInfo",
         json::object{{"name", "corral"}, {"title", "corral"}, {"version", kVersion}}},
        {"instructions",
         "corral runs code and commands within bounds. Prefer `execute` to chain several tool "
         "calls in one JavaScript function; its description lists what `codemode` offers."}};
    stream->finish(result_message(id, std::move(result)));
    return;
  }
  if (method == "ping") {
    stream->finish(result_message(id, json::object{}));
    return;
  }
  if (!initialized_.load()) {
    stream->finish(error_message(id, kInvalidRequest,
                                 "The session is not initialized: send initialize first."));
    return;
  }
  if (method == "tools/list") {
    tools_list(id, params, *stream);
  } else if (method == "tools/call") {
    tools_call(id, params, stream);
  } else if (method == "resources/list") {
    resources_list(id, *stream);
  } else if (method == "resources/templates/list") {
    stream->finish(result_message(id, json::object{{"resourceTemplates", json::array{}}}));
  } else if (method == "resources/read") {
    resources_read(id, p, *stream);
  } else if (method == "logging/setLevel") {
    const json::value* level = p.if_contains("level");
    const int value = level && level->is_string() ? log_level_from_string(level->get_string()) : -1;
    if (value < 0) {
      stream->finish(error_message(
          id, kInvalidParams,
          "Invalid params: \"level\" must be one of debug, info, notice, warning, error, "
          "critical, alert, emergency."));
      return;
    }
    log_level_.store(value);
    stream->finish(result_message(id, json::object{}));
  } else {
    stream->finish(error_message(id, kMethodNotFound, "Method not found: " + method));
  }
}

void Session::tools_list(const Id& id, const json::value* params, Stream& stream) {
  std::size_t offset = 0;
  if (params) {
    if (const json::value* cursor = params->get_object().if_contains("cursor");
        cursor && !cursor->is_null()) {
      const json::string* text = cursor->if_string();
      bool ok = text && !text->empty();
      if (ok) {
        const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), offset);
        ok = ec == std::errc() && end == text->data() + text->size() &&
             offset < service_->impl().tools().size() && offset > 0;
      }
      if (!ok) {
        stream.finish(error_message(id, kInvalidParams, "Invalid params: unknown cursor."));
        return;
      }
    }
  }
  const auto& tools = service_->impl().tools();
  const std::size_t page = service_->impl().options().page_size;
  json::array list;
  for (std::size_t i = offset; i < tools.size() && i < offset + page; ++i)
    list.push_back(tools[i].definition);
  json::object result{{"tools", std::move(list)}};
  if (offset + page < tools.size()) result["nextCursor"] = std::to_string(offset + page);
  stream.finish(result_message(id, std::move(result)));
}

void Session::tools_call(const Id& id, const json::value* params,
                         const std::shared_ptr<Stream>& stream) {
  if (!params) {
    stream->finish(error_message(id, kInvalidParams, "Invalid params: tools/call needs params."));
    return;
  }
  const json::object& p = params->get_object();
  const json::value* name = p.if_contains("name");
  if (!name || !name->is_string()) {
    stream->finish(
        error_message(id, kInvalidParams, "Invalid params: tools/call needs a \"name\" string."));
    return;
  }
  const Tool* tool = service_->impl().find_tool(name->get_string());
  if (!tool) {
    stream->finish(
        error_message(id, kInvalidParams, "Unknown tool: " + std::string(name->get_string())));
    return;
  }
  const json::value* arguments = p.if_contains("arguments");
  if (arguments && !arguments->is_null() && !arguments->is_object()) {
    stream->finish(
        error_message(id, kInvalidParams, "Invalid params: \"arguments\" must be an object."));
    return;
  }
  std::optional<json::value> token;
  if (const json::value* meta = p.if_contains("_meta"); meta && meta->is_object()) {
    if (const json::value* t = meta->get_object().if_contains("progressToken");
        t && (t->is_string() || t->is_number()))
      token = *t;
  }
  std::string key = call_key(id);
  auto call = std::make_shared<Call>(weak_from_this(), stream, id, key, std::move(token));
  {
    std::lock_guard lock(mutex_);
    if (!calls_.emplace(key, call).second) {
      stream->finish(error_message(
          id, kInvalidRequest, "Invalid Request: a request with id " + key + " is still running."));
      return;
    }
  }
  const json::object no_arguments;
  service_->impl().call(
      *tool, arguments && arguments->is_object() ? arguments->get_object() : no_arguments, call,
      [call](json::object result) { call->finish(std::move(result)); });
}

void Session::finished(const std::string& key) {
  std::lock_guard lock(mutex_);
  calls_.erase(key);
}

}  // namespace corral::mcp
