// src/daemon/log.hpp: the daemon's log: one line per event on stderr, as
// text ("2026-11-30T01:02:03.456Z warn  message") or as one JSON object a
// line ({"time":..,"level":..,"message":..}). Thread-safe.
#pragma once

#include <boost/json/object.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "corral/server.hpp"
#include "daemon/settings.hpp"

namespace corral::daemon {

class Log {
 public:
  Log(std::string_view level, LogFormat format);

  void write(server::LogLevel level, std::string_view message);
  // An event with fields: in JSON, members of the line's object beside
  // time, level and message; in text, ` key=value` after the message
  // (strings JSON-quoted).
  void write(server::LogLevel level, std::string_view message, const boost::json::object& fields);
  void debug(std::string_view m) { write(server::LogLevel::debug, m); }
  void info(std::string_view m) { write(server::LogLevel::info, m); }
  void warn(std::string_view m) { write(server::LogLevel::warn, m); }
  void error(std::string_view m) { write(server::LogLevel::error, m); }
  void flush();

  // A server::Logger that writes here; `this` must outlive the server.
  server::Logger logger();
  // A server Options::on_execution that writes one info line per answered
  // execute: "execution", with identity, id, language, outcome, failure
  // (absent on success), seconds, queue_seconds, run_seconds, tool_calls,
  // output_bytes, response_bytes and worker.
  std::function<void(const server::ExecutionRecord&)> execution_recorder();

 private:
  server::LogLevel threshold_;
  LogFormat format_;
};

}  // namespace corral::daemon
