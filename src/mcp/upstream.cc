// src/mcp/upstream.cc: the upstream client's shared parts (the initialize
// request, an upstream message's parsing, a tools/list page) and
// UpstreamClient::connect, which picks the transport: stdio
// (upstream_stdio.cc, kept running by upstream_restarting.cc) or Streamable
// HTTP (upstream_http.cc).
#include "mcp/upstream.hpp"

#include "core/utf8.hpp"
#include "mcp/upstream_internal.hpp"

namespace corral::mcp {

namespace upstream_detail {

json::object initialize_params() {
  return json::object{{"protocolVersion", kClientRevision},
                      {"capabilities", json::object{}},
                      {"clientInfo", json::object{{"name", "corral"}, {"version", "0.1.0"}}}};
}

json::value parse_upstream(std::string text, boost::system::error_code& ec, bool& replaced) {
  replaced = core::replace_invalid_utf8(text);
  return json::parse(text, ec);
}

std::string error_text(const json::object& message) {
  const json::value* error = message.if_contains("error");
  const json::object* e = error ? error->if_object() : nullptr;
  const json::value* text = e ? e->if_contains("message") : nullptr;
  return text && text->is_string() ? std::string(text->get_string()) : "error";
}

}  // namespace upstream_detail

UpstreamStatus UpstreamClient::status() const {
  UpstreamStatus s;
  s.name = name_;
  s.transport = "http";
  s.tools = tools_.size();
  return s;
}

std::string read_tools_page(const json::object& result, std::vector<UpstreamTool>& out) {
  if (const json::value* tools = result.if_contains("tools"); tools && tools->is_array()) {
    for (const auto& t : tools->get_array()) {
      const json::object* o = t.if_object();
      const json::value* name = o ? o->if_contains("name") : nullptr;
      if (!name || !name->is_string()) continue;
      UpstreamTool tool;
      tool.name = std::string(name->get_string());
      if (const json::value* d = o->if_contains("description"); d && d->is_string())
        tool.description = std::string(d->get_string());
      if (const json::value* s = o->if_contains("inputSchema")) tool.input_schema = *s;
      if (const json::value* s = o->if_contains("outputSchema")) tool.output_schema = *s;
      if (const json::value* a = o->if_contains("annotations"); a && a->is_object()) {
        // MCP: destructiveHint defaults to true, and means something only
        // when readOnlyHint is false (its default). Read as the server
        // wrote them: an explicit destructiveHint, or an explicit
        // readOnlyHint false that leaves destructiveHint to its default. A
        // hint that is no boolean is no hint.
        const json::object& hints = a->as_object();
        const json::value* d = hints.if_contains("destructiveHint");
        const json::value* r = hints.if_contains("readOnlyHint");
        tool.destructive = d && d->is_bool() ? d->get_bool() : r && r->is_bool() && !r->get_bool();
      }
      out.push_back(std::move(tool));
    }
  }
  const json::value* next = result.if_contains("nextCursor");
  return next && next->is_string() ? std::string(next->get_string()) : std::string();
}

std::unique_ptr<UpstreamClient> UpstreamClient::connect(const Upstream& upstream,
                                                        std::chrono::milliseconds timeout,
                                                        const Logger& logger,
                                                        std::chrono::milliseconds backoff_min,
                                                        std::chrono::milliseconds backoff_max) {
  const std::string what = "upstream MCP server " + upstream.name;
  try {
    if (!upstream.url.empty()) return upstream_detail::connect_http(upstream, timeout);
    return upstream_detail::start_restarting(upstream, timeout, logger, backoff_min, backoff_max);
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
}

}  // namespace corral::mcp
