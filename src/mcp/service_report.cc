// The service's report: the status document (`corral mcp` status, the
// daemon's admin endpoint) and the Prometheus families of the bound commands,
// code-mode runs and upstream servers.
#include <fmt/format.h>

#include <iterator>
#include <map>

#include "mcp/results.hpp"
#include "mcp/service.hpp"

namespace corral::mcp {

json::object Service::Impl::status() const {
  json::array commands;
  for (std::size_t b = 0; b < bindings_.size(); ++b) {
    const process::Status st = bindings_[b]->status();
    json::object failures;
    for (const auto& [code, n] : st.failures) failures[to_string(code)] = n;
    json::array slots;
    for (std::size_t i = 0; i < st.slot_status.size(); ++i) {
      const process::SlotStatus& slot = st.slot_status[i];
      json::object o{{"slot", i}, {"state", process::to_string(slot.state)}};
      if (slot.state != process::SlotState::idle) {
        o["pid"] = slot.pid;
        o["program"] = slot.program;
        o["unit"] = slot.unit;
      }
      if (slot.since != process::Clock::time_point{}) {
        o["since"] = rfc3339(slot.since);
        o["since_seconds"] = seconds_since(slot.since);
      }
      slots.push_back(std::move(o));
    }
    json::object calls;
    if (const auto it = outcomes_.find(bindings_[b].get()); it != outcomes_.end()) {
      calls["ok"] = it->second->counts[0].load();
      for (int c = 0; c < kFailureCodeCount; ++c)
        calls[to_string(static_cast<FailureCode>(c))] = it->second->counts[1 + c].load();
    }
    json::array operations;
    for (const bind::Operation& op : bindings_[b]->operations())
      operations.push_back(json::value(op.name));
    commands.push_back(json::object{{"name", binding_names_[b]},
                                    {"operations", std::move(operations)},
                                    {"unit", process::to_string(st.unit)},
                                    {"slots", st.slots},
                                    {"running", st.running},
                                    {"cleanup_failed", st.cleanup_failed},
                                    {"accepting", st.accepting},
                                    {"runs_started", st.runs_started},
                                    {"runs_failed", st.runs_failed},
                                    {"failures", std::move(failures)},
                                    {"calls", std::move(calls)},
                                    {"slot_status", std::move(slots)}});
  }
  json::array upstreams;
  for (const auto& upstream : upstreams_) {
    const UpstreamStatus u = upstream->status();
    json::object o{{"name", u.name},  {"transport", u.transport}, {"state", u.state},
                   {"pid", u.pid},    {"restarts", u.restarts},   {"last_exit", u.last_exit},
                   {"tools", u.tools}};
    if (u.transport == "stdio") {
      o["since"] = rfc3339(u.since);
      o["since_seconds"] = seconds_since(u.since);
    }
    if (u.next_attempt) o["next_attempt"] = rfc3339(*u.next_attempt);
    if (!u.unit.empty()) {
      o["unit"] = u.unit;
      json::array protections;
      for (const process::Protection& p : u.protections)
        protections.push_back(
            json::object{{"name", p.name}, {"enforced", p.enforced}, {"detail", p.detail}});
      o["protections"] = std::move(protections);
    }
    upstreams.push_back(std::move(o));
  }
  json::object kept{
      {"bytes", results_.bytes()},
      {"max_bytes", options_.result_retention_bytes},
      {"retention_seconds", std::chrono::duration<double>(options_.result_retention).count()}};
  return json::object{{"commands", std::move(commands)},
                      {"upstreams", std::move(upstreams)},
                      {"kept_results", std::move(kept)}};
}

namespace {

// A Prometheus label value: backslash, quote and newline escaped.
std::string label(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string Service::metrics() const { return impl_->metrics(); }

std::string Service::Impl::metrics() const {
  std::string out;
  auto family = [&out](std::string_view name, std::string_view type, std::string_view help) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  std::vector<process::Status> statuses;
  for (const auto& binding : bindings_) statuses.push_back(binding->status());
  // Bounded cardinality: one series per binding and failure code (every code
  // always present, so rates work from the first scrape), one per binding
  // and slot state; never per call.
  family("corral_command_runs_total", "counter",
         "Bound-command runs started (busy refusals included), per binding.");
  for (std::size_t b = 0; b < statuses.size(); ++b)
    fmt::format_to(std::back_inserter(out), "corral_command_runs_total{{binding=\"{}\"}} {}\n",
                   label(binding_names_[b]), statuses[b].runs_started);
  family("corral_command_failures_total", "counter",
         "Bound-command calls that did not succeed, per binding and failure code.");
  for (std::size_t b = 0; b < statuses.size(); ++b) {
    for (int c = 0; c < kFailureCodeCount; ++c) {
      const auto code = static_cast<FailureCode>(c);
      const auto it = statuses[b].failures.find(code);
      fmt::format_to(std::back_inserter(out),
                     "corral_command_failures_total{{binding=\"{}\",code=\"{}\"}} {}\n",
                     label(binding_names_[b]), to_string(code),
                     it == statuses[b].failures.end() ? 0 : it->second);
    }
  }
  family("corral_command_calls_total", "counter",
         "Calls of bound commands (MCP tools and code mode) answered, per binding and outcome "
         "(ok or the failure code).");
  for (std::size_t b = 0; b < statuses.size(); ++b) {
    const auto it = outcomes_.find(bindings_[b].get());
    if (it == outcomes_.end()) continue;
    const std::string name = label(binding_names_[b]);
    fmt::format_to(std::back_inserter(out),
                   "corral_command_calls_total{{binding=\"{}\",outcome=\"ok\"}} {}\n", name,
                   it->second->counts[0].load());
    for (int c = 0; c < kFailureCodeCount; ++c)
      fmt::format_to(std::back_inserter(out),
                     "corral_command_calls_total{{binding=\"{}\",outcome=\"{}\"}} {}\n", name,
                     to_string(static_cast<FailureCode>(c)), it->second->counts[1 + c].load());
  }
  family("corral_mcp_executions_total", "counter",
         "Code-mode runs (the MCP execute tool) answered, by outcome (ok or the failure code).");
  fmt::format_to(std::back_inserter(out), "corral_mcp_executions_total{{outcome=\"ok\"}} {}\n",
                 executions_.counts[0].load());
  for (int c = 0; c < kFailureCodeCount; ++c)
    fmt::format_to(std::back_inserter(out), "corral_mcp_executions_total{{outcome=\"{}\"}} {}\n",
                   to_string(static_cast<FailureCode>(c)), executions_.counts[1 + c].load());
  family("corral_mcp_execution_seconds_total", "counter",
         "Wall time of the code-mode runs counted in corral_mcp_executions_total.");
  fmt::format_to(std::back_inserter(out), "corral_mcp_execution_seconds_total {}\n",
                 static_cast<double>(execution_micros_.load()) / 1e6);
  family("corral_command_slots", "gauge",
         "Execution slots of each binding, by state (idle, running, cleaning_up, "
         "cleanup_failed).");
  for (std::size_t b = 0; b < statuses.size(); ++b) {
    std::map<std::string_view, int> by_state{
        {"idle", 0}, {"running", 0}, {"cleaning_up", 0}, {"cleanup_failed", 0}};
    for (const auto& slot : statuses[b].slot_status) ++by_state[process::to_string(slot.state)];
    for (const auto& [state, n] : by_state)
      fmt::format_to(std::back_inserter(out),
                     "corral_command_slots{{binding=\"{}\",state=\"{}\"}} {}\n",
                     label(binding_names_[b]), state, n);
  }
  family("corral_upstream_up", "gauge", "1 while the upstream MCP server is up, else 0.");
  std::vector<UpstreamStatus> ups;
  for (const auto& upstream : upstreams_) ups.push_back(upstream->status());
  for (const auto& u : ups)
    fmt::format_to(std::back_inserter(out), "corral_upstream_up{{upstream=\"{}\"}} {}\n",
                   label(u.name), u.state == "up" ? 1 : 0);
  family("corral_upstream_restarts_total", "counter",
         "Restart attempts of an upstream MCP server (failed ones included).");
  for (const auto& u : ups)
    fmt::format_to(std::back_inserter(out),
                   "corral_upstream_restarts_total{{upstream=\"{}\"}} {}\n", label(u.name),
                   u.restarts);
  return out;
}

}  // namespace corral::mcp
