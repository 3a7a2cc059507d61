// src/mcp/upstream_setting.cc: parse_upstreams, the upstream setting
// (`--mcp-upstream`: JSON, or the path of a file holding it) read strictly
// into Upstream entries.
#include <boost/url/parse.hpp>
#include <fstream>
#include <sstream>

#include "bind/codecs.hpp"
#include "mcp/confinement.hpp"
#include "mcp/upstream.hpp"

namespace corral::mcp {

namespace {

bool corral_name(std::string_view name) { return name.starts_with("CORRAL_"); }

std::string read_upstream_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read the upstream file " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The setting's text as the JSON object of upstreams by name.
json::object upstreams_object(const std::string& text) {
  try {  // a key given twice, which the parse below would hide
    bind::check_input_text(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("the upstream setting: ") + e.what());
  }
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object())
    throw std::invalid_argument(
        "must be a JSON object {\"NAME\": {\"command\": [..]} or {\"url\": \"http://..\"}}");
  return std::move(v.get_object());
}

// "command": one string split at blanks, or a list of strings.
void read_command(const json::value& value, const std::string& where, Upstream& u) {
  if (value.is_string()) {
    std::istringstream words{std::string(value.get_string())};
    for (std::string w; words >> w;) u.command.push_back(w);
  } else if (value.is_array()) {
    for (const auto& a : value.get_array()) {
      if (!a.is_string()) throw std::invalid_argument(where + ": command must list strings");
      u.command.emplace_back(a.get_string());
    }
  } else {
    throw std::invalid_argument(where + ": command must be a list of strings");
  }
  if (u.command.empty()) throw std::invalid_argument(where + ": command is empty");
}

// "env": {"allow": [names], "set": {name: value}}, never naming a CORRAL_*
// variable.
void read_env(const json::value& value, const std::string& where, Upstream& u) {
  const json::object* env = value.if_object();
  if (!env) throw std::invalid_argument(where + ": env must be {\"allow\": [..], \"set\": {..}}");
  for (const auto& [k, v] : *env) {
    if (k == "allow" && v.is_array()) {
      for (const auto& a : v.get_array()) {
        if (!a.is_string() || a.get_string().empty())
          throw std::invalid_argument(where + ": env.allow must list variable names");
        u.env_allow.emplace_back(a.get_string());
      }
    } else if (k == "set" && v.is_object()) {
      for (const auto& [n, x] : v.get_object()) {
        if (!x.is_string() || n.empty())
          throw std::invalid_argument(where + ": env.set values are strings");
        u.env_set[std::string(n)] = std::string(x.get_string());
      }
    } else {
      throw std::invalid_argument(where +
                                  ": env takes \"allow\" (a list) and \"set\" (an object), not \"" +
                                  std::string(k) + "\"");
    }
  }
  for (const std::string& n : u.env_allow)
    if (corral_name(n))
      throw std::invalid_argument(where + ": env.allow names " + n +
                                  "; no CORRAL_* variable reaches an upstream");
  for (const auto& [n, x] : u.env_set)
    if (corral_name(n))
      throw std::invalid_argument(where + ": env.set names " + n +
                                  "; no CORRAL_* variable reaches an upstream");
}

void read_url(const json::value& value, const std::string& where, Upstream& u) {
  if (!value.is_string()) throw std::invalid_argument(where + ": url must be a string");
  u.url = std::string(value.get_string());
  auto url = boost::urls::parse_uri(u.url);
  if (!url || url->scheme() != "http" || url->host().empty())
    throw std::invalid_argument(where + ": url must be http://host[:port]/path");
}

void read_headers(const json::value& value, const std::string& where, Upstream& u) {
  if (!value.is_object()) throw std::invalid_argument(where + ": headers must be an object");
  for (const auto& [h, hv] : value.get_object()) {
    if (!hv.is_string()) throw std::invalid_argument(where + ": header values are strings");
    u.headers[std::string(h)] = std::string(hv.get_string());
  }
}

// One upstream of the setting: a command (stdio, maybe confined) or a url.
Upstream upstream_from_json(const std::string& name, const json::value& entry) {
  const std::string where = "upstream \"" + name + "\"";
  const json::object* e = entry.if_object();
  if (!e) throw std::invalid_argument(where + ": must be an object");
  Upstream u;
  u.name = name;
  bool has_confinement = false;
  for (const auto& [key, value] : *e) {
    if (key == "command") {
      read_command(value, where, u);
    } else if (key == "env") {
      read_env(value, where, u);
    } else if (key == "confinement") {
      u.confinement = confinement_from_json(value, where + ": confinement");
      has_confinement = true;
    } else if (key == "url") {
      read_url(value, where, u);
    } else if (key == "headers") {
      read_headers(value, where, u);
    } else {
      throw std::invalid_argument(where + ": unknown key \"" + std::string(key) + "\"");
    }
  }
  if (u.command.empty() == u.url.empty())
    throw std::invalid_argument(where + ": give a command or a url");
  // A key of the other transport would be ignored: refused, so an operator
  // never believes a header is sent to a command or an env reaches a url.
  if (has_confinement && !u.url.empty())
    throw std::invalid_argument(where + ": confinement applies to a command, not a url");
  if (!u.url.empty() && (!u.env_allow.empty() || !u.env_set.empty() || e->contains("env")))
    throw std::invalid_argument(where + ": env applies to a command, not a url");
  if (!u.command.empty() && (!u.headers.empty() || e->contains("headers")))
    throw std::invalid_argument(where + ": headers apply to a url, not a command");
  return u;
}

}  // namespace

std::vector<Upstream> parse_upstreams(const std::string& setting) {
  const auto first = setting.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  // The setting is the JSON itself, or the path of a file holding it.
  const std::string text = setting[first] == '{' ? setting : read_upstream_file(setting);
  std::vector<Upstream> out;
  for (const auto& [name, entry] : upstreams_object(text))
    out.push_back(upstream_from_json(std::string(name), entry));
  return out;
}

}  // namespace corral::mcp
