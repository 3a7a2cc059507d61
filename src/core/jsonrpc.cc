#include "core/jsonrpc.hpp"

#include <iterator>

namespace corral::core::jsonrpc {

namespace {

json::object base(const json::value& id) {
  json::object out;
  out["jsonrpc"] = "2.0";
  out["id"] = id;
  return out;
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
  return reply_with(id, error_message(id, kInvalidRequest, message, FailureCode::invalid_request));
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

namespace {

// The error member: {"code":..,"message":..} and, when given, "data".
json::object error_object(int code, std::string_view message, std::optional<FailureCode> failure) {
  json::object error{{"code", code}, {"message", message}};
  if (failure) error["data"] = json::object{{"code", to_string(*failure)}};
  return error;
}

std::string error_text(const Id& id, int code, std::string_view message,
                       std::optional<FailureCode> failure) {
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += id.text();
  out += R"(,"error":)";
  out += json::serialize(error_object(code, message, failure));
  out += '}';
  return out;
}

std::string error_text(const json::value& id, int code, std::string_view message,
                       std::optional<FailureCode> failure) {
  json::object out = base(id);
  out["error"] = error_object(code, message, failure);
  return json::serialize(out);
}

}  // namespace

std::string error_message(const Id& id, int code, std::string_view message, FailureCode failure) {
  return error_text(id, code, message, failure);
}

std::string error_message(const Id& id, int code, std::string_view message) {
  return error_text(id, code, message, std::nullopt);
}

std::string error_message(const json::value& id, int code, std::string_view message,
                          FailureCode failure) {
  return error_text(id, code, message, failure);
}

std::string error_message(const json::value& id, int code, std::string_view message) {
  return error_text(id, code, message, std::nullopt);
}

std::optional<std::string_view> raw_member(std::string_view text, std::string_view key) {
  const std::size_t start = skip_space(text, 0);
  if (start >= text.size() || text[start] != '{') return std::nullopt;
  std::optional<std::string_view> found;
  for (const Member& member : members_of(text)) {
    if (member.key == key) found = member.value;
  }
  return found;
}

Incoming decode(std::string_view text) {
  boost::system::error_code ec;
  json::value message = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec) {
    std::string why = "Parse error: ";
    why += ec.message();
    return reply_with(Id(), error_message(Id(), kParseError, why, FailureCode::invalid_request));
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

std::string request_message(const json::value& id, std::string_view method, json::value params) {
  json::object out = base(id);
  out["method"] = method;
  if (!params.is_null()) out["params"] = std::move(params);
  return json::serialize(out);
}

std::string notification_message(std::string_view method, json::value params) {
  json::object out;
  out["jsonrpc"] = "2.0";
  out["method"] = method;
  if (!params.is_null()) out["params"] = std::move(params);
  return json::serialize(out);
}

}  // namespace corral::core::jsonrpc
