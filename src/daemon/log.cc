#include "daemon/log.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "core/json.hpp"

namespace corral::daemon {
namespace {

std::mutex g_write_mutex;

std::string_view level_name(server::LogLevel level) {
  switch (level) {
    case server::LogLevel::debug:
      return "debug";
    case server::LogLevel::info:
      return "info";
    case server::LogLevel::warn:
      return "warn";
    case server::LogLevel::error:
      return "error";
  }
  return "info";
}

server::LogLevel parse_level(std::string_view text) {
  if (text == "debug") return server::LogLevel::debug;
  if (text == "warn") return server::LogLevel::warn;
  if (text == "error") return server::LogLevel::error;
  return server::LogLevel::info;
}

std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &utc);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buffer, static_cast<int>(millis));
  return out;
}

}  // namespace

Log::Log(std::string_view level, LogFormat format)
    : threshold_(parse_level(level)), format_(format) {}

void Log::write(server::LogLevel level, std::string_view message) {
  if (static_cast<int>(level) < static_cast<int>(threshold_)) return;
  std::string line;
  if (format_ == LogFormat::json) {
    boost::json::object o{{"time", timestamp()},
                          {"level", level_name(level)},
                          {"message", boost::json::string_view(message.data(), message.size())}};
    line = core::json::serialize(o);
  } else {
    line = timestamp() + " " + std::string(level_name(level));
    line.resize(std::max<std::size_t>(line.size() + 1, 31), ' ');
    line += message;
  }
  line += '\n';
  std::lock_guard lock(g_write_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void Log::flush() {
  std::lock_guard lock(g_write_mutex);
  std::fflush(stderr);
}

server::Logger Log::logger() {
  return [this](server::LogLevel level, const std::string& message) { write(level, message); };
}

}  // namespace corral::daemon
