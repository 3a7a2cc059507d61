// src/core/json.cc: an Execution and a Failure as JSON objects and text (the
// wire forms); the writer is json_writer.cc, the reader json_parse.cc.
#include <stdexcept>

#include "core/json.hpp"

namespace corral::core {

json::object execution_fields(const Execution& execution) {
  json::object out;
  out["stdout"] = execution.stdout_text();
  out["stderr"] = execution.stderr_text();
  out["stdout_truncated"] = execution.stdout_truncated();
  out["stderr_truncated"] = execution.stderr_truncated();
  if (execution.stdout_replaced()) out["stdout_replaced"] = true;
  if (execution.stderr_replaced()) out["stderr_replaced"] = true;
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

json::object execution_to_object(const Execution& execution) {
  boost::system::error_code ec;
  json::value value = json::parse(execution.value(), ec);
  json::object out;
  out["value"] = ec ? json::value(nullptr) : std::move(value);
  for (auto& member : execution_fields(execution))
    out.emplace(member.key(), std::move(member.value()));
  return out;
}

void append_execution_json(std::string& out, const Execution& execution) {
  // {"value":<the text>,  then the fields' object without its own brace.
  const std::string fields = json::serialize(execution_fields(execution));
  out.reserve(out.size() + execution.value().size() + fields.size() + 10);
  out += R"({"value":)";
  out += execution.value();
  out += ',';
  out.append(fields, 1);
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
  const json::value* value = object.if_contains("value");
  return execution_from_fields(object, value ? json::serialize(*value) : std::string("null"));
}

Execution execution_from_fields(const json::object& object, std::string value) {
  ExecutionData data;
  data.value = std::move(value);
  data.stdout_text = string_or_empty(object, "stdout");
  data.stderr_text = string_or_empty(object, "stderr");
  data.stdout_truncated = bool_or_false(object, "stdout_truncated");
  data.stderr_truncated = bool_or_false(object, "stderr_truncated");
  data.stdout_replaced = bool_or_false(object, "stdout_replaced");
  data.stderr_replaced = bool_or_false(object, "stderr_replaced");
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
  std::string out;
  core::append_execution_json(out, execution);
  return out;
}

}  // namespace corral
