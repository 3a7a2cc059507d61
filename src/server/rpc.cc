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

}  // namespace

ExecuteParams parse_execute(const json::value* params) {
  if (!params || !params->is_object()) {
    throw std::invalid_argument("execute takes params {code, tools?, timeout?, language?}");
  }
  const json::object& object = params->get_object();
  for (const auto& field : object) {
    if (field.key() != "code" && field.key() != "tools" && field.key() != "timeout" &&
        field.key() != "language") {
      throw std::invalid_argument(
          fmt::format("execute has no parameter \"{}\"", std::string_view(field.key())));
    }
  }
  ExecuteParams out;
  const json::value* code = object.if_contains("code");
  if (!code || !code->is_string()) throw std::invalid_argument("code must be a string");
  out.code = std::string(code->get_string());
  if (out.code.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw std::invalid_argument("code is empty");
  }

  if (const json::value* tools = object.if_contains("tools"); tools && !tools->is_null()) {
    if (!tools->is_array()) throw std::invalid_argument("tools must be an array");
    if (tools->get_array().size() > kMaxTools) {
      throw std::invalid_argument(fmt::format("tools lists more than {} tools", kMaxTools));
    }
    std::set<std::string, std::less<>> seen;
    std::size_t index = 0;
    for (const json::value& tool : tools->get_array()) {
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
      std::string tool_name(name->get_string());
      for (const std::string& other : seen) {
        const std::string& a = other.size() < tool_name.size() ? other : tool_name;
        const std::string& b = other.size() < tool_name.size() ? tool_name : other;
        if (a == b || (b.compare(0, a.size(), a) == 0 && b[a.size()] == '.')) {
          throw std::invalid_argument(
              fmt::format("tools[{}].name \"{}\" collides with \"{}\"", index, tool_name, other));
        }
      }
      seen.insert(tool_name);
      out.tools.push_back(std::move(tool_name));
      ++index;
    }
  }

  if (const json::value* timeout = object.if_contains("timeout")) {
    if (timeout->is_null()) {
      out.timeout.kind = TimeoutAsk::Kind::widest;
    } else if (timeout->is_number()) {
      const double millis = timeout->to_number<double>();
      if (!std::isfinite(millis) || millis <= 0) {
        throw std::invalid_argument("timeout must be a positive number of milliseconds or null");
      }
      out.timeout = {TimeoutAsk::Kind::millis, millis};
    } else {
      throw std::invalid_argument("timeout must be a positive number of milliseconds or null");
    }
  }

  if (const json::value* language = object.if_contains("language")) {
    if (!language->is_string()) {
      throw std::invalid_argument("language must be \"javascript\" or \"ruby\"");
    }
    out.language = sandbox::parse_language(
        std::string_view(language->get_string().data(), language->get_string().size()));
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
