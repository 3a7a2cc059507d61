#include "core/json.hpp"

#include <stdexcept>

namespace corral::core {

json::value parse_json(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  json::value value = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec) {
    throw std::invalid_argument(std::string(what) + " is not valid JSON: " + ec.message());
  }
  return value;
}

bool is_json_array(std::string_view text) noexcept {
  boost::system::error_code ec;
  const json::value value = json::parse(json::string_view(text.data(), text.size()), ec);
  return !ec && value.is_array();
}

json::object execution_to_object(const Execution& execution) {
  json::object out;
  boost::system::error_code ec;
  json::value value = json::parse(execution.value(), ec);
  out["value"] = ec ? json::value(nullptr) : std::move(value);
  out["stdout"] = execution.stdout_text();
  out["stderr"] = execution.stderr_text();
  out["stdout_truncated"] = execution.stdout_truncated();
  out["stderr_truncated"] = execution.stderr_truncated();
  if (execution.exit_code()) out["exit_code"] = *execution.exit_code();
  out["failed"] = execution.failed();
  const Usage& usage = execution.usage();
  out["usage"] = json::object{
      {"wall_time", usage.wall_time},       {"cpu_time", usage.cpu_time},
      {"memory_peak", usage.memory_peak},   {"tool_calls", usage.tool_calls},
      {"output_bytes", usage.output_bytes},
  };
  return out;
}

namespace {

double number_or(const json::object& object, std::string_view key, double fallback) {
  const json::value* v = object.if_contains(key);
  if (!v) return fallback;
  if (v->is_double()) return v->get_double();
  if (v->is_int64()) return static_cast<double>(v->get_int64());
  if (v->is_uint64()) return static_cast<double>(v->get_uint64());
  return fallback;
}

std::uint64_t count_or_zero(const json::object& object, std::string_view key) {
  const json::value* v = object.if_contains(key);
  if (!v) return 0;
  if (v->is_uint64()) return v->get_uint64();
  if (v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
  return 0;
}

std::string string_or_empty(const json::object& object, std::string_view key) {
  const json::value* v = object.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

bool bool_or_false(const json::object& object, std::string_view key) {
  const json::value* v = object.if_contains(key);
  return v && v->is_bool() && v->get_bool();
}

}  // namespace

Execution execution_from_object(const json::object& object) {
  ExecutionData data;
  if (const json::value* v = object.if_contains("value")) data.value = json::serialize(*v);
  data.stdout_text = string_or_empty(object, "stdout");
  data.stderr_text = string_or_empty(object, "stderr");
  data.stdout_truncated = bool_or_false(object, "stdout_truncated");
  data.stderr_truncated = bool_or_false(object, "stderr_truncated");
  if (const json::value* v = object.if_contains("exit_code"); v && v->is_int64()) {
    data.exit_code = static_cast<int>(v->get_int64());
  }
  data.failed = bool_or_false(object, "failed");
  if (const json::value* u = object.if_contains("usage"); u && u->is_object()) {
    const json::object& usage = u->get_object();
    data.usage.wall_time = number_or(usage, "wall_time", 0);
    data.usage.cpu_time = number_or(usage, "cpu_time", 0);
    data.usage.memory_peak = count_or_zero(usage, "memory_peak");
    data.usage.tool_calls = count_or_zero(usage, "tool_calls");
    data.usage.output_bytes = count_or_zero(usage, "output_bytes");
  }
  return Execution(std::move(data));
}

json::object failure_to_object(const Failure& failure) {
  json::object out;
  out["code"] = to_string(failure.code);
  out["message"] = failure.message;
  out["retryable"] = failure.retryable();
  if (failure.execution) out["execution"] = execution_to_object(*failure.execution);
  return out;
}

Failure failure_from_object(const json::object& object) {
  const json::value* code = object.if_contains("code");
  if (!code || !code->is_string()) {
    throw std::invalid_argument("failure has no string \"code\"");
  }
  auto parsed = failure_code_from_string(code->get_string());
  if (!parsed) {
    throw std::invalid_argument("unknown failure code \"" + std::string(code->get_string()) + "\"");
  }
  Failure failure{*parsed, string_or_empty(object, "message"), nullptr};
  if (const json::value* e = object.if_contains("execution"); e && e->is_object()) {
    failure.execution = std::make_shared<const Execution>(execution_from_object(e->get_object()));
  }
  return failure;
}

}  // namespace corral::core

namespace corral {

std::string to_json(const Execution& execution) {
  return boost::json::serialize(core::execution_to_object(execution));
}

}  // namespace corral
