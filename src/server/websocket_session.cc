#include "server/websocket_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>

namespace corral::server {

namespace json = rpc::json;

namespace {

// Options::on_execution for one answered run, when a recorder is set.
void record_execution(ServerState& state, const std::string& identity, const Run& run,
                      const pool::Outcome& outcome, std::optional<FailureCode> failure,
                      double seconds, std::size_t response_bytes) {
  if (!state.options.on_execution) return;
  ExecutionRecord record;
  record.identity = identity;
  record.id = run.id.text();
  record.language = run.language;
  record.failure = failure;
  record.seconds = seconds;
  record.response_bytes = response_bytes;
  record.worker = run.worker.load();
  record.queue_seconds = run.queue_seconds.load();
  const Execution* execution =
      outcome.ok() ? &outcome.execution() : outcome.failure().execution.get();
  if (execution) {
    record.run_seconds = execution->usage().wall_time;
    record.tool_calls = execution->usage().tool_calls;
    record.output_bytes = execution->usage().output_bytes;
  }
  state.options.on_execution(record);
}

// Beast's timer for the closing handshake (and the opening one, which the
// HTTP session's headers timeout has already bounded).
constexpr std::chrono::seconds kCloseHandshakeTimeout{10};
// Past the latest deadline of a connection's runs (plus the pool's grace),
// the age limit stops waiting for them.
constexpr std::chrono::seconds kAgeMargin{1};

bool is_ending(const beast::error_code& ec) {
  return ec == websocket::error::closed || ec == asio::error::eof ||
         ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
         ec == beast::error::timeout;
}

}  // namespace

WebSocketSession::WebSocketSession(std::shared_ptr<ServerState> state, Stream&& stream,
                                   std::string identity, std::string remote_address)
    : state_(std::move(state)),
      ws_(std::move(stream)),
      identity_(std::move(identity)),
      remote_address_(std::move(remote_address)),
      age_timer_(ws_.get_executor()) {
  std::random_device random;
  ping_salt_ = (std::uint64_t{random()} << 32) ^ random();
}

WebSocketSession::~WebSocketSession() {
  if (!ended_) end();
}

void WebSocketSession::start(http::request<http::string_body> request) {
  state_->add(this, weak_from_this(), ws_.get_executor());
  beast::get_lowest_layer(ws_).expires_never();
  websocket::stream_base::timeout timeouts{};
  timeouts.handshake_timeout = kCloseHandshakeTimeout;
  timeouts.idle_timeout = websocket::stream_base::none();
  timeouts.keep_alive_pings = false;
  ws_.set_option(timeouts);
  // Checked from each frame header: Beast sends close 1009 and tears down
  // through SessionStream's teardown, which drains what the caller is still
  // sending, so the caller reads the 1009 (not a reset, 1006).
  ws_.read_message_max(state_->options.max_message_size);
  ws_.set_option(websocket::stream_base::decorator(
      [](websocket::response_type& response) { response.set(http::field::server, "corral"); }));
  ws_.control_callback([this](websocket::frame_type kind, beast::string_view payload) {
    // Only the answer to our own last ping counts.
    if (kind == websocket::frame_type::pong && !ping_payload_.empty() &&
        std::string_view(payload.data(), payload.size()) == ping_payload_) {
      alive_ = true;
    }
  });
  ws_.async_accept(request,
                   beast::bind_front_handler(&WebSocketSession::on_accept, shared_from_this()));
}

void WebSocketSession::on_accept(beast::error_code ec) {
  if (ec) {
    state_->log(LogLevel::debug, fmt::format("WebSocket handshake from {} failed: {}",
                                             remote_address_, ec.message()));
    end();
    return;
  }
  open_ = true;
  counted_ = true;
  state_->metrics.connection_opened();
  if (const auto& age = state_->options.max_connection_age) {
    age_timer_.expires_after(*age);
    age_timer_.async_wait(
        beast::bind_front_handler(&WebSocketSession::on_age_limit, shared_from_this()));
  }
  do_read();
}

void WebSocketSession::do_read() {
  if (reading_ || read_stopped_ || ended_ || closing_) return;
  // Backpressure: past the bound, reading resumes from on_write once the
  // queue drained to it.
  if (queued_bytes_ > state_->options.max_write_queue) return;
  reading_ = true;
  ws_.async_read(buffer_,
                 beast::bind_front_handler(&WebSocketSession::on_read, shared_from_this()));
}

void WebSocketSession::on_read(beast::error_code ec, std::size_t) {
  reading_ = false;
  if (ec) {
    if (ec == websocket::error::message_too_big) {
      state_->log(LogLevel::info,
                  fmt::format("closed the connection from {} with 1009: a message above {} bytes",
                              remote_address_, state_->options.max_message_size));
    } else if (!is_ending(ec)) {
      state_->log(LogLevel::debug,
                  fmt::format("connection from {} ended: {}", remote_address_, ec.message()));
    }
    end();
    return;
  }
  if (ended_ || closing_ || read_stopped_) return;
  if (ws_.got_binary()) {
    buffer_.consume(buffer_.size());
    refuse_message(websocket::close_code::unknown_data,
                   "binary messages are not supported: send JSON-RPC as text");
    return;
  }
  std::string text = beast::buffers_to_string(buffer_.data());
  buffer_.consume(buffer_.size());
  handle_message(text);
  do_read();
}

void WebSocketSession::refuse_message(websocket::close_code code, std::string reason) {
  state_->log(LogLevel::info, fmt::format("closing the connection from {} with {}: {}",
                                          remote_address_, static_cast<int>(code), reason));
  read_stopped_ = true;
  // The reason travels in the close frame, whose payload is at most 123
  // bytes of reason.
  if (reason.size() > 123) reason.resize(123);
  close_after_writes(code, std::move(reason));
}

void WebSocketSession::handle_message(std::string_view text) {
  // What to do is decided without I/O (rpc::decode, fuzzed in
  // fuzz/executor_fuzzer.cc); ids keep their bytes as received.
  rpc::Incoming incoming = rpc::decode(text);
  switch (incoming.kind) {
    case rpc::Incoming::Kind::reply:
      send(std::move(incoming.reply));
      return;
    case rpc::Incoming::Kind::ignore:
      return;  // a notification: the protocol defines none
    case rpc::Incoming::Kind::request:
      handle_request(incoming.id, incoming.method, incoming.params ? &*incoming.params : nullptr);
      return;
    case rpc::Incoming::Kind::response:
      handle_response(incoming);
      return;
  }
}

void WebSocketSession::handle_request(const rpc::Id& id, std::string_view method,
                                      const json::value* params) {
  if (method == "protocolVersion") {
    send(rpc::result_message(id, json::string(kProtocolVersion)));
  } else if (method == "execute") {
    start_execution(id, params);
  } else {
    send(rpc::error_message(id, rpc::kMethodNotFound, fmt::format("Method not found: {}", method),
                            FailureCode::invalid_request));
  }
}

void WebSocketSession::handle_response(const rpc::Incoming& response) {
  // The server's call ids are strings ("c1"); nothing else is ours.
  if (!response.id.is_string()) return;
  auto found = calls_.find(std::string(response.id.value().get_string()));
  if (found == calls_.end()) {
    state_->log(LogLevel::debug,
                fmt::format("dropped an answer to unknown or settled call {}", response.id.text()));
    return;
  }
  pool::ToolAnswer answer = std::move(found->second.answer);
  calls_.erase(found);
  if (response.error) {
    const json::object* object = response.error->if_object();
    const json::value* text = object ? object->if_contains("message") : nullptr;
    answer.reject(text && text->is_string() ? std::string(text->get_string())
                                            : std::string("The tool failed."));
    return;
  }
  answer.resolve(json::serialize(response.result));
}

std::shared_ptr<void> WebSocketSession::admit_run(std::string& why) {
  const std::size_t cap = state_->options.max_runs_per_connection;
  if (cap != 0 && runs_held_ >= cap) {
    why = fmt::format("{} runs of this connection are in flight (the cap per connection is {})",
                      runs_held_, cap);
    return nullptr;
  }
  std::shared_ptr<void> identity_slot = state_->admit_run(identity_, why);
  if (!identity_slot) return nullptr;
  ++runs_held_;
  // Both slots go together: the session's count and the identity's.
  struct Slot {
    std::size_t& held;
    std::shared_ptr<void> identity;
    ~Slot() { --held; }
  };
  return std::shared_ptr<Slot>(new Slot{runs_held_, std::move(identity_slot)});
}

void WebSocketSession::record_refusal(const rpc::Id& id, FailureCode failure) {
  if (!state_->options.on_execution) return;
  ExecutionRecord record;
  record.identity = identity_;
  record.id = id.text();
  record.failure = failure;
  record.admitted = false;
  state_->options.on_execution(record);
}

void WebSocketSession::refuse_busy(const rpc::Id& id, std::string message) {
  state_->metrics.execution_finished(FailureCode::busy, 0);
  record_refusal(id, FailureCode::busy);
  send(rpc::result_message(id,
                           rpc::envelope(Failure{FailureCode::busy, std::move(message), nullptr})));
}

void WebSocketSession::start_execution(const rpc::Id& id, const json::value* params) {
  std::string key = id.text();
  if (runs_.contains(key)) {
    send(rpc::error_message(id, rpc::kInvalidRequest,
                            fmt::format("An execute request with id {} is still running.", key),
                            FailureCode::invalid_request));
    return;
  }
  if (aged_) {
    refuse_busy(id,
                "This connection reached its age limit and takes no new execute; open a new "
                "connection and retry.");
    return;
  }
  std::string why;
  std::shared_ptr<void> slot = admit_run(why);
  if (!slot) {
    refuse_busy(id, fmt::format("Too many runs in flight: {}; retry when one has answered.", why));
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  rpc::ExecuteParams request;
  try {
    request = rpc::parse_execute(params);
  } catch (const std::invalid_argument& e) {
    state_->metrics.execution_finished(FailureCode::invalid_request, 0);
    record_refusal(id, FailureCode::invalid_request);
    json::object envelope = rpc::envelope(Failure{FailureCode::invalid_request, e.what(), nullptr});
    send(rpc::result_message(id, std::move(envelope)));
    return;
  }
  auto run = std::make_shared<Run>();
  run->id = id;
  run->key = std::move(key);
  run->timeout = rpc::resolve_timeout(request.timeout, state_->options);
  run->started = started;
  run->caller = weak_from_this();
  run->language = std::string(to_string(request.language));

  pool::Request pool_request;
  pool_request.code = std::move(request.code);
  pool_request.tools = std::move(request.tools);
  pool_request.limits = state_->options.run_limits;
  pool_request.limits.timeout = run->timeout;
  pool_request.limits.language = request.language;
  pool_request.dispatcher = make_dispatcher(run);
  if (state_->options.on_execution) {
    pool_request.on_start = [run](std::uint64_t worker, std::chrono::duration<double> waited) {
      run->queue_seconds.store(waited.count());
      run->worker.store(worker);
    };
  }
  Active& active = runs_[run->key];
  active.run = run;
  active.slot = std::move(slot);
  std::shared_ptr<ServerState> state = state_;
  // The completion may run before submit returns (a refusal), but it only
  // posts to this strand, so finish() always sees the ticket set.
  const pool::Ticket ticket = state_->pool.submit(
      std::move(pool_request), make_completion(run, [state, identity = identity_](
                                                        const Run& orphan, const pool::Outcome& o) {
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - orphan.started)
                .count();
        const auto code = o.ok() ? std::nullopt : std::optional<FailureCode>(o.failure().code);
        state->metrics.execution_finished(code, seconds);
        record_execution(*state, identity, orphan, o, code, seconds, 0);
      }));
  if (auto found = runs_.find(run->key); found != runs_.end() && found->second.run == run) {
    found->second.ticket = ticket;
  }
}

void WebSocketSession::cancel_runs() {
  for (auto& [key, active] : runs_) {
    // A settled run needs nothing (and after close() the pool may be gone).
    if (active.ticket && !active.run->settled.load()) state_->pool.cancel(*active.ticket);
  }
}

void WebSocketSession::call_tool(std::shared_ptr<Run> run, std::string name, std::string args_json,
                                 pool::ToolAnswer answer) {
  asio::post(ws_.get_executor(),
             [self = shared_from_this(), run = std::move(run), name = std::move(name),
              args_json = std::move(args_json), answer = std::move(answer)]() mutable {
               // No `settled` check here: the pool called the dispatcher while the
               // run was live, and this handler runs before the run's finish()
               // (both are posted in order to this executor), which rejects the
               // call if the run settled meanwhile. Checking here instead would
               // drop a call the caller is entitled to see, depending on timing.
               if (self->ended_ || self->closing_ || self->pending_close_) {
                 answer.reject(rpc::kCallerGone);
                 return;
               }
               boost::system::error_code ec;
               json::value input = json::parse(args_json, ec);
               if (ec) input = nullptr;
               std::string call_id = fmt::format("c{}", ++self->next_call_);
               self->calls_.emplace(call_id, PendingCall{std::move(answer), run->key});
               self->state_->metrics.tool_call();
               // Built by hand so the execution id keeps the bytes it came with.
               std::string message = R"({"jsonrpc":"2.0","id":)";
               message += json::serialize(json::string(call_id));
               message += R"(,"method":"tool.call","params":{"execution":)";
               message += run->id.text();
               message += R"(,"name":)";
               message += json::serialize(json::string(name));
               message += R"(,"input":)";
               message += json::serialize(input);
               message += "}}";
               self->send(std::move(message));
             });
}

void WebSocketSession::deliver(std::shared_ptr<Run> run, pool::Outcome outcome) {
  asio::post(ws_.get_executor(),
             [self = shared_from_this(), run = std::move(run),
              outcome = std::move(outcome)]() mutable { self->finish(run, std::move(outcome)); });
}

void WebSocketSession::finish(const std::shared_ptr<Run>& run, pool::Outcome outcome) {
  std::shared_ptr<void> slot;
  if (auto found = runs_.find(run->key); found != runs_.end() && found->second.run == run) {
    slot = std::move(found->second.slot);
    runs_.erase(found);
  }
  for (auto it = calls_.begin(); it != calls_.end();) {
    if (it->second.run_key == run->key) {
      it->second.answer.reject(rpc::kExecutionCompleted);
      it = calls_.erase(it);
    } else {
      ++it;
    }
  }
  if (!outcome.ok() && outcome.failure().code == FailureCode::timeout) {
    outcome = Failure{FailureCode::timeout, rpc::timeout_message(run->timeout),
                      outcome.failure().execution};
  }
  // The value goes out as the text the engine made (checked by the pool).
  std::string envelope = rpc::envelope_text(outcome);
  std::optional<FailureCode> code;
  if (!outcome.ok()) code = outcome.failure().code;
  if (const auto& limit = state_->options.response_limit; limit && envelope.size() > *limit) {
    Failure too_large{FailureCode::response_too_large,
                      fmt::format("The result envelope is {} bytes, above the response limit "
                                  "of {} bytes.",
                                  envelope.size(), *limit),
                      nullptr};
    envelope = rpc::envelope_text(too_large);
    code = FailureCode::response_too_large;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - run->started).count();
  state_->metrics.execution_finished(code, seconds);
  // An answer to a connection already gone is recorded with 0 bytes sent.
  record_execution(*state_, identity_, *run, outcome, code, seconds, ended_ ? 0 : envelope.size());
  if (ended_) return;
  std::string message = R"({"jsonrpc":"2.0","id":)";
  message += run->id.text();
  message += R"(,"result":)";
  message += envelope;
  message += '}';
  // The slot goes with the answer: it is released once written.
  send(std::move(message), std::move(slot));
  if (aged_ && runs_.empty()) {
    close_after_writes(websocket::close_code::normal, "connection age limit");
  }
}

void WebSocketSession::send(std::string text, std::shared_ptr<void> slot) {
  if (ended_ || closing_) return;
  queued_bytes_ += text.size();
  queue_.push_back(Outgoing{std::move(text), std::move(slot)});
  if (!writing_) do_write();
}

void WebSocketSession::do_write() {
  writing_ = true;
  ws_.text(true);
  ws_.async_write(asio::buffer(queue_.front().text),
                  beast::bind_front_handler(&WebSocketSession::on_write, shared_from_this()));
}

void WebSocketSession::on_write(beast::error_code ec, std::size_t) {
  writing_ = false;
  if (ec) {
    if (!is_ending(ec)) {
      state_->log(LogLevel::debug,
                  fmt::format("write to {} failed: {}", remote_address_, ec.message()));
    }
    terminate();
    return;
  }
  queued_bytes_ -= queue_.front().text.size();
  queue_.pop_front();
  if (!queue_.empty()) {
    do_write();
  } else if (pending_close_ && !closing_) {
    do_close();
    return;
  }
  do_read();  // resumes a read paused by backpressure
}

void WebSocketSession::close_after_writes(websocket::close_code code, std::string reason) {
  if (ended_ || closing_ || pending_close_) return;
  pending_close_ = websocket::close_reason(code, reason);
  if (!writing_) do_close();
}

void WebSocketSession::do_close() {
  closing_ = true;
  age_timer_.cancel();
  // No answer can reach the caller any more (send() drops it): free the
  // workers now rather than at each run's timeout.
  cancel_runs();
  // Tool calls still waiting can no longer be answered on this socket.
  for (auto& [id, call] : calls_) call.answer.reject(rpc::kCallerGone);
  calls_.clear();
  ws_.async_close(*pending_close_, [self = shared_from_this()](beast::error_code ec) {
    if (ec && !is_ending(ec)) {
      self->state_->log(LogLevel::debug, fmt::format("closing the connection from {} failed: {}",
                                                     self->remote_address_, ec.message()));
    }
    if (ec) self->terminate();
  });
}

void WebSocketSession::on_age_limit(beast::error_code ec) {
  if (ec || ended_ || closing_ || pending_close_) return;
  aged_ = true;
  if (runs_.empty()) {
    close_after_writes(websocket::close_code::normal, "connection age limit");
    return;
  }
  // Wait for the runs in flight (no new one is admitted), at most until the
  // latest of them passed what the pool allows it: its timeout counts from
  // when a worker took it, which may itself be starting (start_timeout),
  // then the pool's grace. Counting from admission alone cut runs whose
  // worker took over a second to start and dropped their answers.
  auto deadline = std::chrono::steady_clock::now();
  for (const auto& [key, active] : runs_) {
    deadline = std::max(deadline, active.run->started + active.run->timeout);
  }
  const pool::Options& pool_options = state_->pool.options();
  deadline += pool_options.start_timeout + pool_options.grace + kAgeMargin;
  age_timer_.expires_at(deadline);
  age_timer_.async_wait(
      beast::bind_front_handler(&WebSocketSession::on_age_bound, shared_from_this()));
}

void WebSocketSession::on_age_bound(beast::error_code ec) {
  if (ec || ended_) return;
  if (!runs_.empty()) {
    state_->log(LogLevel::info,
                fmt::format("closing the connection from {} at its age limit with {} run(s) still "
                            "in flight (cancelled)",
                            remote_address_, runs_.size()));
  }
  close_after_writes(websocket::close_code::normal, "connection age limit");
}

void WebSocketSession::heartbeat() {
  if (!open_ || ended_ || closing_) return;
  if (!alive_) {
    state_->log(LogLevel::info, fmt::format("terminating the connection from {}: it missed a ping",
                                            remote_address_));
    terminate();
    return;
  }
  alive_ = false;
  if (pinging_) return;  // the last ping is still waiting to go out: its payload stands
  pinging_ = true;
  ping_payload_ = fmt::format("{:016x}{:08x}", ping_salt_, ++pings_);
  ws_.async_ping(websocket::ping_data(ping_payload_.data(), ping_payload_.size()),
                 [self = shared_from_this()](beast::error_code) { self->pinging_ = false; });
}

void WebSocketSession::shut_down() {
  if (!open_) {
    terminate();
    return;
  }
  close_after_writes(websocket::close_code::going_away, "server shutting down");
}

void WebSocketSession::terminate() {
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().shutdown(Protocol::socket::shutdown_both, ignored);
  beast::get_lowest_layer(ws_).socket().close(ignored);
}

void WebSocketSession::end() {
  if (ended_) return;
  ended_ = true;
  for (auto& [id, call] : calls_) call.answer.reject(rpc::kCallerGone);
  calls_.clear();
  cancel_runs();
  runs_.clear();
  age_timer_.cancel();
  if (counted_) {
    counted_ = false;
    state_->metrics.connection_closed();
  }
  state_->remove(this);
}

}  // namespace corral::server
