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

json::object base(const json::value& id) {
  json::object out;
  out["jsonrpc"] = "2.0";
  out["id"] = id;
  return out;
}

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

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_space(std::string_view text, std::size_t at) {
  while (at < text.size() && is_space(text[at])) ++at;
  return at;
}

// The scanners below read text json::parse accepted, so they only find ends:
// one pass, no recursion, no validation. Each returns the index just past
// the token that starts at `at`.
std::size_t skip_string(std::string_view text, std::size_t at) {
  for (++at; at < text.size(); ++at) {
    if (text[at] == '\\') {
      ++at;
    } else if (text[at] == '"') {
      return at + 1;
    }
  }
  return text.size();
}

std::size_t skip_value(std::string_view text, std::size_t at) {
  if (at >= text.size()) return at;
  if (text[at] == '"') return skip_string(text, at);
  if (text[at] == '{' || text[at] == '[') {
    std::size_t depth = 0;
    while (at < text.size()) {
      const char c = text[at];
      if (c == '"') {
        at = skip_string(text, at);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return at + 1;
      ++at;
    }
    return at;
  }
  while (at < text.size() && !is_space(text[at]) && text[at] != ',' && text[at] != '}' &&
         text[at] != ']')
    ++at;
  return at;
}

// One member of the top-level object: its key unescaped, its value's text.
struct Member {
  std::string key;
  std::string_view value;
};

// The members of the object `text` (which json::parse accepted as one).
std::vector<Member> members_of(std::string_view text) {
  std::vector<Member> out;
  std::size_t at = skip_space(text, 0) + 1;  // past '{'
  while (true) {
    at = skip_space(text, at);
    if (at >= text.size() || text[at] != '"') return out;  // '}'
    const std::size_t key_end = skip_string(text, at);
    const std::string_view key_text = text.substr(at, key_end - at);
    Member member;
    if (key_text.find('\\') == std::string_view::npos) {
      member.key = std::string(key_text.substr(1, key_text.size() - 2));
    } else {
      boost::system::error_code ec;
      const json::value key = json::parse(json::string_view(key_text.data(), key_text.size()), ec);
      if (!ec && key.is_string()) member.key = std::string(key.get_string());
    }
    at = skip_space(text, skip_space(text, key_end) + 1);  // past ':'
    const std::size_t value_end = skip_value(text, at);
    member.value = text.substr(at, value_end - at);
    out.push_back(std::move(member));
    at = skip_space(text, value_end);
    if (at >= text.size() || text[at] != ',') return out;
    ++at;
  }
}

Incoming reply_with(const Id& id, std::string text) {
  Incoming out;
  out.kind = Incoming::Kind::reply;
  out.id = id;
  out.reply = std::move(text);
  return out;
}

Incoming invalid(const Id& id, std::string_view why) {
  std::string message = "Invalid Request: ";
  message += why;
  return reply_with(id, error_message(id, kInvalidRequest, message));
}

}  // namespace

Id::Id(const json::value& value) {
  if (value.is_string() || value.is_number()) text_ = json::serialize(value);
}

std::optional<Id> Id::from_token(std::string_view token) {
  if (token.empty() || is_space(token.front()) || is_space(token.back())) return std::nullopt;
  boost::system::error_code ec;
  const json::value value = json::parse(json::string_view(token.data(), token.size()), ec);
  if (ec || !(value.is_string() || value.is_number() || value.is_null())) return std::nullopt;
  Id id;
  id.text_ = std::string(token);
  return id;
}

json::value Id::value() const {
  boost::system::error_code ec;
  json::value out = json::parse(json::string_view(text_.data(), text_.size()), ec);
  return ec ? json::value(nullptr) : out;
}

std::string result_message_text(const Id& id, std::string_view result_json) {
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += id.text();
  out += R"(,"result":)";
  out += result_json;
  out += '}';
  return out;
}

std::string result_message(const Id& id, const json::value& result) {
  return result_message_text(id, json::serialize(result));
}

std::string error_message(const Id& id, int code, std::string_view message, FailureCode failure) {
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += id.text();
  out += R"(,"error":)";
  out += json::serialize(json::object{
      {"code", code},
      {"message", message},
      {"data", json::object{{"code", to_string(failure)}}},
  });
  out += '}';
  return out;
}

Incoming decode(std::string_view text) {
  boost::system::error_code ec;
  json::value message = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec) {
    std::string why = "Parse error: ";
    why += ec.message();
    return reply_with(Id(), error_message(Id(), kParseError, why));
  }
  if (message.is_array()) return invalid(Id(), "Batches are not supported.");
  json::object* object = message.if_object();
  if (!object) return invalid(Id(), "not a JSON-RPC 2.0 message.");

  // The protocol's members, each at most once; the id's own bytes.
  static constexpr std::string_view kMembers[] = {"jsonrpc", "id",     "method",
                                                  "params",  "result", "error"};
  std::optional<std::string_view> id_token;
  {
    int seen[std::size(kMembers)] = {};
    for (const Member& member : members_of(text)) {
      for (std::size_t i = 0; i < std::size(kMembers); ++i) {
        if (member.key != kMembers[i]) continue;
        if (++seen[i] > 1) {
          std::string why = "the member \"";
          why += kMembers[i];
          why += "\" appears more than once.";
          return invalid(Id(), why);
        }
        if (i == 1) id_token = member.value;
      }
    }
  }

  const json::value* id_value = object->if_contains("id");
  std::optional<Id> id;
  if (id_value) {
    if (!id_value->is_string() && !id_value->is_number() && !id_value->is_null()) {
      return invalid(Id(), "id must be a string, a number or null.");
    }
    if (id_token) id = Id::from_token(*id_token);
    if (!id) id = Id(*id_value);  // unreachable for parsed text; never a wrong id
  }
  const Id answer_id = id ? *id : Id();

  const json::value* version = object->if_contains("jsonrpc");
  if (!version || !version->is_string() || version->get_string() != "2.0") {
    return invalid(answer_id, "not a JSON-RPC 2.0 message.");
  }
  if (const json::value* method = object->if_contains("method")) {
    if (!method->is_string()) return invalid(answer_id, "method must be a string.");
    Incoming out;
    out.method = std::string(method->get_string());
    if (!id) return out;  // a notification: the protocol defines none, so it is ignored
    const json::value* params = object->if_contains("params");
    if (params && !params->is_object() && !params->is_array()) {
      return invalid(answer_id, "params must be an object or an array.");
    }
    out.kind = Incoming::Kind::request;
    out.id = answer_id;
    if (params) out.params = *params;
    return out;
  }
  const json::value* result = object->if_contains("result");
  const json::value* error = object->if_contains("error");
  if (id && (result || error)) {
    Incoming out;
    out.kind = Incoming::Kind::response;
    out.id = answer_id;
    if (error) {
      out.error = *error;
    } else {
      out.result = *result;
    }
    return out;
  }
  return invalid(answer_id, "neither a request nor a response.");
}

std::string result_message(const json::value& id, json::value result) {
  json::object out = base(id);
  out["result"] = std::move(result);
  return json::serialize(out);
}

std::string error_message(const json::value& id, int code, std::string_view message,
                          FailureCode failure) {
  json::object out = base(id);
  out["error"] = json::object{
      {"code", code},
      {"message", message},
      {"data", json::object{{"code", to_string(failure)}}},
  };
  return json::serialize(out);
}

std::string request_message(const json::value& id, std::string_view method, json::value params) {
  json::object out = base(id);
  out["method"] = method;
  if (!params.is_null()) out["params"] = std::move(params);
  return json::serialize(out);
}

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

json::object failure_envelope(const Failure& failure) {
  return json::object{{"ok", false}, {"failure", core::failure_to_object(failure)}};
}

json::object envelope(const pool::Outcome& outcome) {
  if (outcome.ok()) {
    return json::object{{"ok", true},
                        {"execution", core::execution_to_object(outcome.execution())}};
  }
  return failure_envelope(outcome.failure());
}

pool::Outcome outcome_from_envelope(const json::value& value) {
  const json::object* object = value.if_object();
  const json::value* ok = object ? object->if_contains("ok") : nullptr;
  if (!ok || !ok->is_bool()) throw std::invalid_argument("the result is not an envelope");
  if (ok->get_bool()) {
    const json::value* execution = object->if_contains("execution");
    if (!execution || !execution->is_object()) {
      throw std::invalid_argument("the envelope carries no execution");
    }
    return core::execution_from_object(execution->get_object());
  }
  const json::value* failure = object->if_contains("failure");
  if (!failure || !failure->is_object()) {
    throw std::invalid_argument("the envelope carries no failure");
  }
  return core::failure_from_object(failure->get_object());
}

}  // namespace corral::server::rpc
