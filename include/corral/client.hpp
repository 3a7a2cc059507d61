// corral/client.hpp: a C++ client for the executor protocol.
//
// `Client::connect` opens a WebSocket to a corral executor server, asks its
// protocol version and refuses a server that speaks another one. `execute`
// sends code and the tools the guest may call; while the run goes on, the
// server's `tool.call` requests are answered by the ToolHandler on a small
// thread pool of the client's own, so a slow tool never stalls the socket.
// Several executions may be in flight at once, from several threads.
//
// Example:
//   auto client = corral::client::Client::connect("ws://127.0.0.1:8080");
//   corral::client::ExecuteRequest request;
//   request.code = "async () => (await codemode.echo({hi: 1})).hi";
//   request.tools = {{.name = "echo", .description = "returns its input"}};
//   corral::client::Outcome outcome = client->execute(request,
//       [](const std::string& name, const std::string& input) { return input; });
//   outcome.execution().value();  // "1"
//
// Failures:
//   connect throws corral::Error with connection_rejected (the upgrade was
//   refused: 403 or 503), protocol_mismatch (another protocol version),
//   unavailable (nothing listens there, or the URL is not ws://HOST:PORT[/]),
//   connection_broken (the connection failed during the handshake).
//   execute returns the run's own failure in Outcome::failure; when the
//   connection dies before the answer it is connection_broken (retryable).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corral/execution.hpp"
#include "corral/failure.hpp"
#include "corral/language.hpp"
#include "corral/outcome.hpp"

namespace corral::client {

// ToolSpec: one tool the guest may call as `codemode.<name>(input)`.
struct ToolSpec {
  std::string name;  // identifier, or a dotted path of identifiers
  std::string description;
  std::string input_schema;  // JSON Schema text; empty sends none
};

// Timeout: what a request asks for. The server clamps it between its own
// default and ceiling and names the bound it resolved in a timeout's message.
struct Timeout {
  enum class Kind { server_default, widest, millis };
  Kind kind = Kind::server_default;
  std::chrono::milliseconds millis{0};

  static Timeout server_default() { return {}; }
  // null on the wire: the server's ceiling.
  static Timeout widest() { return {Kind::widest, {}}; }
  static Timeout of(std::chrono::milliseconds ms) { return {Kind::millis, ms}; }
};

struct ExecuteRequest {
  std::string code;
  std::vector<ToolSpec> tools;
  Timeout timeout;
  // Ruby code calls the tools as Codemode constants: `echo` is
  // `Codemode.echo(...)`, `math.add` is `Codemode::Math.add(...)`.
  Language language = Language::javascript;
};

// ToolHandler: answers one tool call with JSON text. Throwing answers the
// call with an error whose message is what(); the guest sees a rejected
// promise. Runs on one of the client's tool threads.
using ToolHandler = std::function<std::string(const std::string& name, const std::string& input)>;

// How a run ended: exactly one of an Execution and a Failure.
using Outcome = corral::Outcome;

struct ConnectOptions {
  // Sent as the Authorization header when set (the server's identity hook
  // decides what it is worth).
  std::string authorization;
  // Bounds the TCP connect, the upgrade and the version call.
  std::chrono::milliseconds connect_timeout{10'000};
  // Threads that run ToolHandlers.
  std::size_t tool_threads = 4;
};

// The protocol version this client speaks (see corral/server.hpp).
const char* protocol_version() noexcept;

// Client: one WebSocket connection. Thread-safe.
class Client {
 public:
  // Connects to `url` (ws://HOST:PORT or ws://HOST:PORT/, or
  // ws+unix:///path/to.sock) and checks the protocol version. Throws as the
  // file comment says.
  static std::unique_ptr<Client> connect(const std::string& url, ConnectOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Runs one execution and waits for its outcome. `tools` calls arrive at
  // `handler`; a call to a tool the handler throws on is an error answer.
  Outcome execute(const ExecuteRequest& request, ToolHandler handler = {});

  // Closes the connection (1000); executions still waiting fail with
  // connection_broken. Idempotent; the destructor calls it.
  void close();

  // True until the connection ended (closed by either side or broken).
  bool connected() const noexcept;
  // The close code and reason the server sent, once it closed (0 before).
  int close_code() const noexcept;
  std::string close_reason() const;

  class Impl;

 private:
  explicit Client(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace corral::client
