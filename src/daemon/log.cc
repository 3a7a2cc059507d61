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
  write(level, message, boost::json::object());
}

void Log::write(server::LogLevel level, std::string_view message,
                const boost::json::object& fields) {
  if (static_cast<int>(level) < static_cast<int>(threshold_)) return;
  std::string line;
  if (format_ == LogFormat::json) {
    boost::json::object o{{"time", timestamp()},
                          {"level", level_name(level)},
                          {"message", boost::json::string_view(message.data(), message.size())}};
    for (const auto& field : fields) o.emplace(field.key(), field.value());
    line = core::json::serialize(o);
  } else {
    line = timestamp() + " " + std::string(level_name(level));
    line.resize(std::max<std::size_t>(line.size() + 1, 31), ' ');
    line += message;
    for (const auto& field : fields) {
      line += ' ';
      line += field.key();
      line += '=';
      line += core::json::serialize(field.value());
    }
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

std::function<void(const server::ExecutionRecord&)> Log::execution_recorder() {
  return [this](const server::ExecutionRecord& r) {
    // Refusals before the pool (busy, invalid_request) cost a caller one
    // small frame each: at info they would let it fill the log.
    const server::LogLevel level = r.admitted ? server::LogLevel::info : server::LogLevel::debug;
    if (static_cast<int>(level) < static_cast<int>(threshold_)) return;
    // The id as the caller sent it: as JSON when it reads back to the same
    // text (1, "a"), else its text as a string (1.50 stays 1.50), cut at a
    // character boundary past 256 bytes (id_bytes then says how long).
    constexpr std::size_t kIdShown = 256;
    boost::json::value id;
    boost::system::error_code error;
    if (r.id.size() <= kIdShown) id = boost::json::parse(r.id, error);
    if (r.id.size() > kIdShown || error || core::json::serialize(id) != r.id) {
      std::size_t cut = std::min(r.id.size(), kIdShown);
      while (cut > 0 && cut < r.id.size() && (static_cast<unsigned char>(r.id[cut]) & 0xC0) == 0x80)
        --cut;
      id = boost::json::string(r.id.substr(0, cut));
    }
    boost::json::object fields{{"identity", r.identity},
                               {"id", id},
                               {"language", r.language},
                               {"outcome", r.failure ? "failure" : "ok"}};
    if (r.failure) fields["failure"] = to_string(*r.failure);
    fields["seconds"] = r.seconds;
    fields["queue_seconds"] = r.queue_seconds;
    fields["run_seconds"] = r.run_seconds;
    fields["tool_calls"] = r.tool_calls;
    fields["output_bytes"] = r.output_bytes;
    fields["response_bytes"] = r.response_bytes;
    fields["worker"] = r.worker;
    if (r.id.size() > kIdShown) fields["id_bytes"] = r.id.size();
    write(level, "execution", fields);
  };
}

}  // namespace corral::daemon
