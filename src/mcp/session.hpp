// src/mcp/session.hpp: one MCP session, independent of its transport.
//
// The transport hands each incoming JSON-RPC message (text) to handle(),
// with the Stream its answers go to: zero or more notifications related to
// the request (progress, log), then at most one final message (the
// response), then the stream is finished. Messages that are not requests
// finish their stream at once with nothing.
//
// Thread safety: handle(), close() and the accessors may be called from any
// thread; a Stream may be called from any thread, never concurrently with
// itself for one exchange.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/json.hpp"
#include "core/jsonrpc.hpp"
#include "mcp/service.hpp"

namespace corral::mcp {

namespace json = core::json;  // Boost.JSON with corral's writer

// The revisions this server speaks, newest first.
inline constexpr const char* kLatestRevision = "2025-11-25";
bool is_supported_revision(std::string_view revision) noexcept;

// Stream: where the messages of one exchange go.
class Stream {
 public:
  virtual ~Stream() = default;
  // A message related to the request (a notification); not the last.
  virtual void send(std::string message) = 0;
  // Ends the exchange: with the response, or with nothing (a notification,
  // a cancelled request). Called exactly once.
  virtual void finish(std::optional<std::string> response) = 0;
};

// JSON-RPC 2.0, as every corral channel speaks it (core/jsonrpc.hpp). An
// MCP error carries no failure code in "data": use the three-argument
// error_message.
using core::jsonrpc::error_message;
using core::jsonrpc::Id;
using core::jsonrpc::kInternalError;
using core::jsonrpc::kInvalidParams;
using core::jsonrpc::kInvalidRequest;
using core::jsonrpc::kMethodNotFound;
using core::jsonrpc::kParseError;
using core::jsonrpc::notification_message;
using core::jsonrpc::raw_member;
using core::jsonrpc::result_message;

// The id of `message` (its text and parsed form), its token kept byte for
// byte (a 30-digit number stays that number, not a double); nothing when it
// is not a string or an integer (MCP allows no other).
std::optional<Id> request_id(std::string_view message_text, const json::value& id);
// What a request in flight is matched by (notifications/cancelled names it
// parsed): a number's token, a string's canonical JSON.
std::string call_key(const Id& id);

class Session : public std::enable_shared_from_this<Session> {
 public:
  explicit Session(std::shared_ptr<Service> service);
  ~Session();

  void handle(std::string_view text, std::shared_ptr<Stream> stream);
  // Ends the session: every call still running is answered at once with
  // `reason` as a failed tool result (isError, the failure's JSON), unless the
  // client had cancelled it, then stopped; later requests are refused.
  void close(const Failure& reason = Failure{FailureCode::cancelled,
                                             "The MCP session ended before this call finished; "
                                             "it was stopped.",
                                             nullptr});

  bool initialized() const noexcept { return initialized_.load(); }
  std::string revision() const;
  // Server-to-client messages not related to a request (log notifications
  // outside a call) go here when set.
  void set_background(std::function<void(std::string)> sink);

  class Call;

 private:
  void request(const Id& id, const std::string& method, const json::value* params,
               const std::shared_ptr<Stream>& stream);
  void notification(std::string_view text, const std::string& method, const json::value* params);
  void tools_list(const Id& id, const json::value* params, Stream& stream);
  void tools_call(const Id& id, const json::value* params, const std::shared_ptr<Stream>& stream);
  // What cuts dropped, kept in the service's ResultStore under number_.
  std::vector<std::optional<json::object>> keep(std::vector<ResultStore::Text> parts);
  void resources_list(const Id& id, Stream& stream);
  // A request to the client, written by `send` (false: not sent, the call
  // has ended); `answered` gets the client's response object (result or
  // error), or nothing when it could not be sent or the session closed
  // first. Returns what forgets it.
  std::function<void()> ask(const std::function<bool(std::string)>& send, std::string_view method,
                            json::object params,
                            std::function<void(std::optional<json::object>)> answered);
  void answer(const Id& id, const json::object& response);  // a client's response
  void resources_read(const Id& id, const json::object& params, Stream& stream);
  void finished(const std::string& key);

  std::shared_ptr<Service> service_;
  const std::uint64_t number_;  // this session's, in the service's ResultStore
  mutable std::mutex mutex_;
  std::atomic<bool> initialized_{false};
  std::atomic<bool> closed_{false};
  std::string revision_ = kLatestRevision;
  // Log notifications at or above this level reach the client (-1: none,
  // until logging/setLevel).
  std::atomic<int> log_level_{-1};
  std::map<std::string, std::shared_ptr<Call>> calls_;  // by serialized request id
  std::atomic<bool> client_elicits_{false};             // its initialize declared elicitation
  // Requests this server sent the client, by call_key of their id.
  std::map<std::string, std::function<void(std::optional<json::object>)>> asked_;
  std::uint64_t next_ask_ = 0;
  std::function<void(std::string)> background_;
};

// MCP's eight syslog levels, 0 (debug) to 7 (emergency); -1 if unknown.
int log_level_from_string(std::string_view level) noexcept;

}  // namespace corral::mcp
