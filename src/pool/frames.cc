#include "pool/frames.hpp"

#include <cmath>
#include <stdexcept>

namespace corral::pool {

std::string encode_frame(const json::object& message, std::optional<std::string_view> tail) {
  std::string frame;
  const std::size_t start = core::open_frame(frame);
  json::serialize_to(frame, message);
  if (tail) {
    frame.reserve(frame.size() + 1 + tail->size());
    frame += '\n';
    frame += *tail;
  }
  // A body past what a length can say is left with an empty header; no
  // channel's max_frame lets it through (WorkerPool validates max_frame).
  core::seal_frame(frame, start, core::kLargestFrame);
  return frame;
}

std::optional<Message> parse_message(std::string_view body) {
  Message message;
  const std::size_t newline = body.find('\n');
  if (newline != std::string_view::npos) message.tail = body.substr(newline + 1);
  const std::string_view head = body.substr(0, newline);
  boost::system::error_code ec;
  json::value value = json::parse(json::string_view(head.data(), head.size()), ec);
  if (ec || !value.is_object()) return std::nullopt;
  message.fields = std::move(value.get_object());
  if (!get_string(message.fields, "t")) return std::nullopt;
  return message;
}

std::optional<std::uint64_t> get_count(const json::object& object, std::string_view key) {
  const json::value* v = object.if_contains(key);
  if (!v) return std::nullopt;
  if (v->is_uint64()) return v->get_uint64();
  if (v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
  return std::nullopt;
}

const json::string* get_string(const json::object& object, std::string_view key) {
  const json::value* v = object.if_contains(key);
  return v && v->is_string() ? &v->get_string() : nullptr;
}

namespace {

json::value optional_count(const std::optional<std::uint64_t>& value) {
  return value ? json::value(*value) : json::value(nullptr);
}

std::optional<std::uint64_t> read_optional_count(const json::object& object, std::string_view key) {
  const json::value* v = object.if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  if (auto count = get_count(object, key)) return count;
  throw std::invalid_argument("limits: " + std::string(key) + " is not a count");
}

}  // namespace

json::object limits_to_object(const sandbox::Options& limits) {
  json::object out;
  out["timeout_ms"] = limits.timeout ? json::value(limits.timeout->count()) : json::value(nullptr);
  out["memory_limit"] = optional_count(limits.memory_limit);
  out["stdout_limit"] = optional_count(limits.stdout_limit);
  out["stderr_limit"] = optional_count(limits.stderr_limit);
  out["max_tool_calls"] = optional_count(limits.max_tool_calls);
  out["profile"] = std::string(sandbox::to_string(limits.profile));
  if (limits.language != sandbox::Language::javascript) {
    out["language"] = std::string(sandbox::to_string(limits.language));
  }
  return out;
}

sandbox::Options limits_from_object(const json::object& object) {
  sandbox::Options limits;
  const json::value* timeout = object.if_contains("timeout_ms");
  if (!timeout || timeout->is_null()) {
    limits.timeout.reset();
  } else if (timeout->is_int64()) {
    limits.timeout = std::chrono::milliseconds(timeout->get_int64());
  } else {
    throw std::invalid_argument("limits: timeout_ms is not an integer");
  }
  limits.memory_limit = read_optional_count(object, "memory_limit");
  limits.stdout_limit = read_optional_count(object, "stdout_limit");
  limits.stderr_limit = read_optional_count(object, "stderr_limit");
  limits.max_tool_calls = read_optional_count(object, "max_tool_calls");
  const json::string* profile = get_string(object, "profile");
  if (!profile) throw std::invalid_argument("limits: profile is missing");
  limits.profile = sandbox::parse_profile(std::string_view(profile->data(), profile->size()));
  if (const json::value* language = object.if_contains("language")) {
    if (!language->is_string()) throw std::invalid_argument("limits: language is not a string");
    limits.language = sandbox::parse_language(
        std::string_view(language->get_string().data(), language->get_string().size()));
  }
  sandbox::validate(limits);
  return limits;
}

}  // namespace corral::pool
