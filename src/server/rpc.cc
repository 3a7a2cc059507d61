#include "server/rpc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <stdexcept>

#include "sandbox/identifier.hpp"

namespace corral::server::rpc {

namespace {

constexpr std::size_t kMaxTools = 1024;

bool is_tool_name(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string_view segment =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!sandbox::is_identifier(segment)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

void check_execute_fields(const json::object& object) {
  for (const auto& field : object) {
    if (field.key() != "code" && field.key() != "tools" && field.key() != "timeout" &&
        field.key() != "language") {
      throw std::invalid_argument(
          fmt::format("execute has no parameter \"{}\"", std::string_view(field.key())));
    }
  }
}

std::string parse_code(const json::object& object) {
  const json::value* code = object.if_contains("code");
  if (!code || !code->is_string()) throw std::invalid_argument("code must be a string");
  std::string out(code->get_string());
  if (out.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw std::invalid_argument("code is empty");
  }
  return out;
}

// The name of tools[index], after checking the descriptor's fields.
std::string checked_tool_name(const json::value& tool, std::size_t index) {
  if (!tool.is_object()) {
    throw std::invalid_argument(fmt::format("tools[{}] must be an object", index));
  }
  const json::object& descriptor = tool.get_object();
  const json::value* name = descriptor.if_contains("name");
  if (!name || !name->is_string() || !is_tool_name(name->get_string())) {
    throw std::invalid_argument(fmt::format(
        "tools[{}].name must be a JavaScript identifier or a dotted path of them", index));
  }
  if (const json::value* d = descriptor.if_contains("description"); d && !d->is_string()) {
    throw std::invalid_argument(fmt::format("tools[{}].description must be a string", index));
  }
  if (const json::value* s = descriptor.if_contains("inputSchema"); s && !s->is_object()) {
    throw std::invalid_argument(fmt::format("tools[{}].inputSchema must be an object", index));
  }
  return std::string(name->get_string());
}

// Refuses a name equal to one already listed, or a prefix of one at a dot
// ("a" and "a.b"), in either order.
void check_no_collision(const std::set<std::string, std::less<>>& seen,
                        const std::string& tool_name, std::size_t index) {
  for (const std::string& other : seen) {
    const std::string& a = other.size() < tool_name.size() ? other : tool_name;
    const std::string& b = other.size() < tool_name.size() ? tool_name : other;
    if (a == b || (b.compare(0, a.size(), a) == 0 && b[a.size()] == '.')) {
      throw std::invalid_argument(
          fmt::format("tools[{}].name \"{}\" collides with \"{}\"", index, tool_name, other));
    }
  }
}

std::vector<std::string> parse_tools(const json::value& tools) {
  if (!tools.is_array()) throw std::invalid_argument("tools must be an array");
  if (tools.get_array().size() > kMaxTools) {
    throw std::invalid_argument(fmt::format("tools lists more than {} tools", kMaxTools));
  }
  std::vector<std::string> out;
  std::set<std::string, std::less<>> seen;
  std::size_t index = 0;
  for (const json::value& tool : tools.get_array()) {
    std::string name = checked_tool_name(tool, index);
    check_no_collision(seen, name, index);
    seen.insert(name);
    out.push_back(std::move(name));
    ++index;
  }
  return out;
}

TimeoutAsk parse_timeout(const json::value& timeout) {
  TimeoutAsk ask;
  if (timeout.is_null()) {
    ask.kind = TimeoutAsk::Kind::widest;
  } else if (timeout.is_number()) {
    const double millis = timeout.to_number<double>();
    if (!std::isfinite(millis) || millis <= 0) {
      throw std::invalid_argument("timeout must be a positive number of milliseconds or null");
    }
    ask = {TimeoutAsk::Kind::millis, millis};
  } else {
    throw std::invalid_argument("timeout must be a positive number of milliseconds or null");
  }
  return ask;
}

sandbox::Language parse_language_param(const json::value& language) {
  if (!language.is_string()) {
    throw std::invalid_argument("language must be \"javascript\", \"typescript\" or \"ruby\"");
  }
  return sandbox::parse_language(
      std::string_view(language.get_string().data(), language.get_string().size()));
}

}  // namespace

ExecuteParams parse_execute(const json::value* params) {
  if (!params || !params->is_object()) {
    throw std::invalid_argument("execute takes params {code, tools?, timeout?, language?}");
  }
  const json::object& object = params->get_object();
  check_execute_fields(object);
  ExecuteParams out;
  out.code = parse_code(object);
  if (const json::value* tools = object.if_contains("tools"); tools && !tools->is_null()) {
    out.tools = parse_tools(*tools);
  }
  if (const json::value* timeout = object.if_contains("timeout")) {
    out.timeout = parse_timeout(*timeout);
  }
  if (const json::value* language = object.if_contains("language")) {
    out.language = parse_language_param(*language);
  }
  return out;
}

std::chrono::milliseconds resolve_timeout(const TimeoutAsk& ask, const Options& options) {
  const std::chrono::milliseconds ceiling = std::min(options.max_timeout, kMaxSupportedTimeout);
  switch (ask.kind) {
    case TimeoutAsk::Kind::absent:
      return std::min(options.default_timeout, ceiling);
    case TimeoutAsk::Kind::widest:
      return ceiling;
    case TimeoutAsk::Kind::millis:
      break;
  }
  const double asked = std::ceil(ask.millis);
  if (asked >= static_cast<double>(ceiling.count())) return ceiling;
  return std::chrono::milliseconds(static_cast<std::int64_t>(asked));
}

std::string timeout_message(std::chrono::milliseconds bound) {
  return fmt::format("Execution timed out at its {} ms bound.", bound.count());
}

}  // namespace corral::server::rpc
