// src/daemon/admin.hpp: the admin listener, a second small HTTP server
// (loopback by default) for operators: /__status__, /__config__ and
// /__maintenance__. Every answer is JSON; an unknown route is a JSON 404
// {"error":"No such route."} and a failure inside a handler a JSON 500,
// never a stack. One connection, one request (Connection: close). Every
// request passes the server's request guard first (Host and Origin, the
// same rules and settings as the executor: src/server/request_guard.hpp);
// a refusal is a JSON 400 or 403 and reaches no handler.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "client/admin.hpp"
#include "server/request_guard.hpp"

namespace corral::daemon {

using client::AdminResponse;  // {status, body}

// Routes a request; throwing answers 500 (and the what() goes to `on_error`).
using AdminHandler = std::function<AdminResponse(std::string_view method, std::string_view path)>;

class AdminListener {
 public:
  // `guard`: the allowed origins and hosts (validated: throws
  // std::invalid_argument on a malformed entry).
  AdminListener(std::string host, std::uint16_t port, AdminHandler handler,
                std::function<void(const std::string&)> on_error, server::GuardPolicy guard = {});
  ~AdminListener();
  AdminListener(const AdminListener&) = delete;
  AdminListener& operator=(const AdminListener&) = delete;

  // Binds and serves on its own thread. Throws std::system_error carrying the
  // OS error (std::errc::address_in_use for a taken port).
  void listen();
  // "127.0.0.1:8081"
  std::string address() const;
  std::uint16_t port() const;
  // Stops accepting, ends open connections, joins the thread. Idempotent.
  void close();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The admin routes' JSON error bodies.
inline constexpr std::string_view kNoSuchRoute = R"({"error":"No such route."})";
inline constexpr std::string_view kInternalError = R"({"error":"Internal error."})";

}  // namespace corral::daemon
