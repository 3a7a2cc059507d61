// `corral mcp config CLIENT`: the entry an MCP client's configuration needs
// to start corral (stdio) or reach a running daemon (Streamable HTTP), in
// that client's own schema, printed or (--write) merged into its file.
//
//   claude-desktop  ~/.config/Claude/claude_desktop_config.json  {"mcpServers": {NAME: {command,
//   args}}} claude-code     ./.mcp.json                                  {"mcpServers": {NAME:
//   {type, command, args}}} vscode          ./.vscode/mcp.json {"servers": {NAME: {type, command,
//   args}}} cursor          ./.cursor/mcp.json                           {"mcpServers": {NAME:
//   {command, args}}}
//
// --write keeps every other key of the file, replaces only NAME, and
// refuses a file it cannot read back faithfully (not JSON, not an object,
// or holding comments, which a rewrite would drop). The file is replaced
// atomically (a temporary file renamed over it).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "core/json.hpp"

namespace corral::app {

namespace {

namespace json = core::json;
namespace fs = std::filesystem;

struct ConfigRequest {
  std::string client;
  std::string name = "corral";
  std::string manifest;
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::vector<std::string> extra;    // more `corral mcp` arguments
  bool write = false;
  std::string file;
};

struct ClientShape {
  const char* name;
  const char* servers_key;  // "mcpServers" or VS Code's "servers"
  bool typed;               // entries carry "type": "stdio" | "http"
  bool http;                // the file takes a URL entry
  const char* file;         // relative to $HOME when it starts with "~/"
};

constexpr ClientShape kClients[] = {
    {"claude-desktop", "mcpServers", false, false, "~/.config/Claude/claude_desktop_config.json"},
    {"claude-code", "mcpServers", true, true, ".mcp.json"},
    {"vscode", "servers", true, true, ".vscode/mcp.json"},
    {"cursor", "mcpServers", false, true, ".cursor/mcp.json"},
};

const ClientShape* find_client(std::string_view name) {
  for (const ClientShape& c : kClients) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

int refuse(const std::string& message) {
  std::fprintf(stderr, "corral: invalid_request: %s\n", message.c_str());
  return 2;
}

// This binary's own path, for the client to start.
std::string self_path() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("corral") : self.string();
}

void pretty(const json::value& v, std::string& out, int depth) {
  const std::string pad(static_cast<std::size_t>(depth + 1) * 2, ' ');
  const std::string close_pad(static_cast<std::size_t>(depth) * 2, ' ');
  if (v.is_object() && !v.get_object().empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& [key, member] : v.get_object()) {
      if (!first) out += ",\n";
      first = false;
      out += pad + json::serialize(json::string(key)) + ": ";
      pretty(member, out, depth + 1);
    }
    out += "\n" + close_pad + "}";
  } else if (v.is_array() && !v.get_array().empty()) {
    out += "[\n";
    bool first = true;
    for (const auto& item : v.get_array()) {
      if (!first) out += ",\n";
      first = false;
      out += pad;
      pretty(item, out, depth + 1);
    }
    out += "\n" + close_pad + "]";
  } else {
    out += json::serialize(v);
  }
}

// The server entry in `shape`'s schema, or a refusal in `error`.
std::optional<json::object> entry_for(const ConfigRequest& request, const ClientShape& shape,
                                      std::string& error) {
  json::object headers;
  for (const std::string& header : request.headers) {
    const std::size_t colon = header.find(':');
    if (colon == std::string::npos || colon == 0) {
      error = "--header takes \"Name: value\", not \"" + header + "\"";
      return std::nullopt;
    }
    std::string value = header.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    headers[header.substr(0, colon)] = value;
  }
  json::object entry;
  if (!request.url.empty()) {
    if (!request.url.starts_with("http://") && !request.url.starts_with("https://")) {
      error = "--url is the daemon's MCP endpoint, http(s)://HOST:PORT/mcp";
      return std::nullopt;
    }
    if (!shape.http) {
      // Claude Desktop's file starts processes only: mcp-remote (npm)
      // bridges its stdio to the daemon's Streamable HTTP.
      json::array args{"-y", "mcp-remote", json::string(request.url)};
      for (const auto& [k, v] : headers) {
        args.emplace_back("--header");
        args.emplace_back(std::string(k) + ":" + std::string(v.get_string()));
      }
      entry["command"] = "npx";
      entry["args"] = std::move(args);
      return entry;
    }
    if (shape.typed) entry["type"] = "http";
    entry["url"] = request.url;
    if (!headers.empty()) entry["headers"] = std::move(headers);
    return entry;
  }
  if (!request.headers.empty()) {
    error = "--header goes with --url (a stdio server has no HTTP headers)";
    return std::nullopt;
  }
  json::array args{"mcp"};
  if (!request.manifest.empty()) {
    std::error_code ec;
    const fs::path manifest = fs::absolute(request.manifest, ec);
    if (ec || !fs::exists(manifest)) {
      error = "--manifest " + request.manifest + " does not exist";
      return std::nullopt;
    }
    args.emplace_back("--mcp-manifest");
    args.emplace_back(manifest.lexically_normal().string());
  }
  for (const std::string& a : request.extra) args.emplace_back(a);
  if (shape.typed) entry["type"] = "stdio";
  entry["command"] = self_path();
  entry["args"] = std::move(args);
  return entry;
}

fs::path file_for(const ConfigRequest& request, const ClientShape& shape) {
  if (!request.file.empty()) return request.file;
  std::string path = shape.file;
  if (path.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    return fs::path(home != nullptr ? home : "/") / path.substr(2);
  }
  return fs::current_path() / path;
}

// Merges `entry` into the file as servers_key.NAME, keeping the rest.
int write_config(const ConfigRequest& request, const ClientShape& shape, json::object entry) {
  const fs::path path = file_for(request, shape);
  json::object document;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in.good() && !in.eof()) return refuse("cannot read " + path.string());
    const std::string content = text.str();
    if (content.find_first_not_of(" \t\r\n") != std::string::npos) {
      json::value parsed;
      try {
        parsed = core::parse_json(content, path.string());
      } catch (const std::invalid_argument& e) {
        return refuse(path.string() +
                      " is not plain JSON (comments or trailing commas are lost on a rewrite): "
                      "add the entry `corral mcp config " +
                      shape.name + "` prints by hand");
      }
      if (!parsed.is_object()) return refuse(path.string() + " is not a JSON object");
      document = std::move(parsed.get_object());
    }
  }
  json::value& servers = document[shape.servers_key];
  if (servers.is_null()) servers = json::object{};
  if (!servers.is_object()) {
    return refuse(path.string() + ": \"" + shape.servers_key + "\" is not an object");
  }
  const bool replaced = servers.get_object().contains(request.name);
  servers.get_object()[request.name] = std::move(entry);
  std::string out;
  pretty(document, out, 0);
  out += "\n";
  fs::create_directories(path.parent_path(), ec);
  const fs::path temporary = path.string() + ".corral-" + std::to_string(::getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << out;
    if (!file.flush()) {
      fs::remove(temporary, ec);
      std::fprintf(stderr, "corral: setup_error: cannot write %s\n", temporary.c_str());
      return 1;
    }
  }
  fs::rename(temporary, path, ec);
  if (ec) {
    fs::remove(temporary, ec);
    std::fprintf(stderr, "corral: setup_error: cannot replace %s\n", path.c_str());
    return 1;
  }
  std::fprintf(stderr, "corral mcp config: %s \"%s\" in %s\n", replaced ? "replaced" : "added",
               request.name.c_str(), path.c_str());
  return 0;
}

int run_config(const ConfigRequest& request) {
  const ClientShape* shape = find_client(request.client);
  if (shape == nullptr) return refuse("no client \"" + request.client + "\"");
  if (request.name.empty()) return refuse("--name is empty");
  std::string error;
  std::optional<json::object> entry = entry_for(request, *shape, error);
  if (!entry) return refuse(error);
  if (request.write) return write_config(request, *shape, std::move(*entry));
  json::object document;
  json::object servers;
  servers[request.name] = std::move(*entry);
  document[shape->servers_key] = std::move(servers);
  std::string out;
  pretty(document, out, 0);
  std::printf("%s\n", out.c_str());
  return 0;
}

}  // namespace

void add_mcp_config_command(CLI::App& mcp, Action& action) {
  auto* config = mcp.add_subcommand(
      "config", "Print (or --write) an MCP client's configuration entry for corral");
  auto request = std::make_shared<ConfigRequest>();
  std::vector<std::string> clients;
  for (const ClientShape& c : kClients) clients.emplace_back(c.name);
  config->add_option("client", request->client, "claude-desktop, claude-code, vscode or cursor")
      ->required()
      ->check(CLI::IsMember(clients));
  config->add_option("--name", request->name, "The server's name in the client (default corral)");
  config->add_option("--manifest", request->manifest, "Bound commands to offer (stdio)")
      ->type_name("FILE");
  config->add_option("--url", request->url,
                     "A running daemon's MCP endpoint instead of stdio (http://HOST:PORT/mcp)");
  config->add_option("--header", request->headers, "An HTTP header for --url, \"Name: value\"");
  config->add_option("--arg", request->extra, "One more `corral mcp` argument (repeatable)")
      ->allow_extra_args(false);
  config->add_flag("--write", request->write, "Merge the entry into the client's file");
  config->add_option("--file", request->file, "The file to --write (default: the client's)")
      ->type_name("PATH");
  config->callback([&action, request] { action = [request] { return run_config(*request); }; });
}

}  // namespace corral::app
