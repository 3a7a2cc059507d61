// src/daemon/log.hpp: the daemon's log: one line per event on stderr, as
// text ("2026-11-30T01:02:03.456Z warn  message") or as one JSON object a
// line ({"time":..,"level":..,"message":..}). Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "corral/server.hpp"
#include "daemon/settings.hpp"

namespace corral::daemon {

class Log {
 public:
  Log(std::string_view level, LogFormat format);

  void write(server::LogLevel level, std::string_view message);
  void debug(std::string_view m) { write(server::LogLevel::debug, m); }
  void info(std::string_view m) { write(server::LogLevel::info, m); }
  void warn(std::string_view m) { write(server::LogLevel::warn, m); }
  void error(std::string_view m) { write(server::LogLevel::error, m); }
  void flush();

  // A server::Logger that writes here; `this` must outlive the server.
  server::Logger logger();

 private:
  server::LogLevel threshold_;
  LogFormat format_;
};

}  // namespace corral::daemon
