// How `corral check` prints the worker protections, and how `corral status`
// summarises a running daemon's /__status__ for a person.
#include <cstdio>
#include <utility>

#include "cli.hpp"

namespace corral::app {

namespace {

namespace json = core::json;

// The protections' keys in pool::to_json, and how people call them.
constexpr std::pair<const char*, const char*> kProtections[] = {
    {"user_namespace", "user namespace"},   {"network_namespace", "network namespace"},
    {"pid_namespace", "pid namespace"},     {"parent_death_signal", "parent-death signal"},
    {"fds_closed", "inherited fds closed"}, {"rlimits", "rlimits"},
    {"no_new_privs", "no_new_privs"},       {"seccomp", "seccomp allow-list"},
};

std::uint64_t count(const json::value& v) {
  if (v.is_uint64()) return v.get_uint64();
  if (v.is_int64() && v.get_int64() > 0) return static_cast<std::uint64_t>(v.get_int64());
  return 0;
}

// "1 retired, 2 crashed": the non-zero counts of `counts`, in its order.
std::string nonzero_counts(const json::object& counts) {
  std::string out;
  for (const auto& [name, n] : counts) {
    if (count(n) == 0) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(count(n)) + " " + std::string(name);
  }
  return out;
}

std::string uptime(double seconds) {
  const auto s = static_cast<std::uint64_t>(seconds > 0 ? seconds : 0);
  const std::uint64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
  if (d > 0) return std::to_string(d) + "d " + std::to_string(h) + "h";
  if (h > 0) return std::to_string(h) + "h " + std::to_string(m) + "m";
  if (m > 0) return std::to_string(m) + "m " + std::to_string(sec) + "s";
  return std::to_string(sec) + "s";
}

// The string at `key`, or empty.
std::string text_of(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// "5m 3s ago" from `since_seconds`, or "?".
std::string ago(const json::object& o) {
  const json::value* v = o.if_contains("since_seconds");
  return v && v->is_number() ? uptime(v->to_number<double>()) + " ago" : std::string("?");
}

// "corral serve on ADDRESS: accepting, up 3h 2m".
std::string serve_line(const json::object& status) {
  const bool accepting = status.at("accepting").as_bool();
  const bool draining = status.at("draining").as_bool();
  const std::string state = accepting  ? "accepting"
                            : draining ? "draining (stopping)"
                                       : "in maintenance (new connections refused)";
  double up = 0;
  if (const json::value* u = status.if_contains("uptime_seconds"); u && u->is_number())
    up = u->to_number<double>();
  return "corral serve on " + std::string(status.at("address").as_string()) + ": " + state +
         ", up " + uptime(up);
}

// Workers, executions, the queue and tool calls: one line each.
void add_activity_lines(const json::object& status, std::vector<std::string>& lines) {
  const json::object& workers = status.at("workers").as_object();
  std::string line = "  workers      " + std::to_string(count(workers.at("live"))) + " live, " +
                     std::to_string(count(workers.at("started"))) + " started";
  if (const std::string exits = nonzero_counts(workers.at("exits").as_object()); !exits.empty())
    line += "; exits: " + exits;
  lines.push_back(std::move(line));

  const json::object& executions = status.at("executions").as_object();
  line = "  executions   " + std::to_string(count(executions.at("running"))) + " running";
  const std::string outcomes = nonzero_counts(executions.at("by_outcome").as_object());
  line += "; " + (outcomes.empty() ? std::string("none finished yet") : outcomes);
  lines.push_back(std::move(line));

  line = "  queue        " + std::to_string(count(status.at("queue").at("depth"))) + " waiting";
  if (const std::string refused = nonzero_counts(status.at("rejections").as_object());
      !refused.empty())
    line += "; refused: " + refused;
  lines.push_back(std::move(line));
  lines.push_back("  tool calls   " + std::to_string(count(status.at("tool_calls"))));
}

// How many worker protections are active, those that are not, and the notes.
void add_protection_lines(const json::object& protections, std::vector<std::string>& lines) {
  std::string missing;
  std::size_t active = 0;
  for (const auto& [key, name] : kProtections) {
    const json::value* v = protections.if_contains(key);
    if (v && v->is_bool() && v->get_bool()) {
      ++active;
    } else {
      missing += (missing.empty() ? "" : ", ") + std::string(name);
    }
  }
  std::string line = "  protections  " + std::to_string(active) + " of " +
                     std::to_string(std::size(kProtections)) + " active";
  if (!missing.empty()) line += "; not available: " + missing;
  lines.push_back(std::move(line));
  if (const json::value* notes = protections.if_contains("notes"); notes && notes->is_array()) {
    for (const json::value& note : notes->get_array())
      if (note.is_string())
        lines.push_back("               note: " + std::string(note.get_string()));
  }
}

std::string containment_line(const json::object& status) {
  std::string units;
  if (const json::value* c = status.if_contains("containment"); c && c->is_array()) {
    for (const json::value& unit : c->get_array())
      if (unit.is_string()) units += (units.empty() ? "" : ", ") + std::string(unit.get_string());
  }
  return "  containment  " + (units.empty() ? std::string("none") : units) +
         " (for bound commands)";
}

// Bound commands (`--mcp-manifest`): one line per binding, one per slot
// that is not idle.
void add_command_lines(const json::object& status, std::vector<std::string>& lines) {
  const json::value* c = status.if_contains("commands");
  if (!c || !c->is_array()) return;
  for (const json::value& entry : c->get_array()) {
    const json::object* b = entry.if_object();
    if (!b) continue;
    std::string l = "  command      " + text_of(*b, "name") + ": " +
                    std::to_string(count(b->at("running"))) + " of " +
                    std::to_string(count(b->at("slots"))) + " slots taken, " +
                    std::to_string(count(b->at("cleanup_failed"))) + " cleanup_failed; " +
                    std::to_string(count(b->at("runs_started"))) + " runs";
    if (const json::value* f = b->if_contains("failures"); f && f->is_object())
      if (const std::string failed = nonzero_counts(f->get_object()); !failed.empty())
        l += ", failed: " + failed;
    lines.push_back(std::move(l));
    if (const json::value* slots = b->if_contains("slot_status"); slots && slots->is_array()) {
      for (const json::value& sv : slots->get_array()) {
        const json::object* slot = sv.if_object();
        if (!slot || text_of(*slot, "state") == "idle") continue;
        lines.push_back("               slot " + std::to_string(count(slot->at("slot"))) + " " +
                        text_of(*slot, "state") + " pid " + std::to_string(count(slot->at("pid"))) +
                        " " + text_of(*slot, "program") + " since " + text_of(*slot, "since") +
                        " (" + ago(*slot) + ")");
      }
    }
  }
}

// One line per upstream, and one naming what of its confinement is not
// enforced.
void add_upstream_lines(const json::object& status, std::vector<std::string>& lines) {
  const json::value* u = status.if_contains("upstreams");
  if (!u || !u->is_array()) return;
  for (const json::value& entry : u->get_array()) {
    const json::object* up = entry.if_object();
    if (!up) continue;
    std::string l = "  upstream     " + text_of(*up, "name") + " (" + text_of(*up, "transport") +
                    "): " + text_of(*up, "state");
    if (count(up->at("pid")) > 0) l += ", pid " + std::to_string(count(up->at("pid")));
    if (up->contains("since")) l += ", since " + text_of(*up, "since") + " (" + ago(*up) + ")";
    l += ", " + std::to_string(count(up->at("restarts"))) + " restarts";
    if (const std::string exit = text_of(*up, "last_exit"); !exit.empty())
      l += ", last exit: " + exit;
    if (const std::string next = text_of(*up, "next_attempt"); !next.empty())
      l += ", next attempt " + next;
    if (const std::string unit = text_of(*up, "unit"); !unit.empty()) l += ", unit " + unit;
    lines.push_back(std::move(l));
    // What of its confinement this host does not enforce, named.
    std::string missing;
    if (const json::value* ps = up->if_contains("protections"); ps && ps->is_array()) {
      for (const json::value& pv : ps->get_array()) {
        const json::object* p = pv.if_object();
        const json::value* enforced = p ? p->if_contains("enforced") : nullptr;
        if (!enforced || !enforced->is_bool() || enforced->get_bool()) continue;
        missing += (missing.empty() ? "" : "; ") + text_of(*p, "name") + " (" +
                   text_of(*p, "detail") + ")";
      }
    }
    if (!missing.empty()) lines.push_back("               not enforced: " + missing);
  }
}

}  // namespace

void print_protections(const json::object& protections) {
  std::printf("Worker protections on this machine:\n");
  for (const auto& [key, name] : kProtections) {
    const json::value* active = protections.if_contains(key);
    std::printf("  %-22s %s\n", name,
                active && active->is_bool() && active->get_bool() ? "active" : "not available");
  }
  if (const json::value* notes = protections.if_contains("notes"); notes && notes->is_array()) {
    for (const json::value& note : notes->get_array()) {
      if (note.is_string()) std::printf("  note: %s\n", note.get_string().c_str());
    }
  }
}

std::vector<std::string> describe_status(const json::object& status) {
  std::vector<std::string> lines;
  lines.push_back(serve_line(status));
  add_activity_lines(status, lines);
  add_protection_lines(status.at("protections").as_object(), lines);
  lines.push_back(containment_line(status));
  add_command_lines(status, lines);
  add_upstream_lines(status, lines);
  return lines;
}

}  // namespace corral::app
