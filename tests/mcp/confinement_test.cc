// tests/mcp/confinement_test.cc: stdio upstream MCP servers run confined like
// bound commands: what a server sees of identity, network, session and
// environment, what it leaves behind when closed, what the status says, and
// how the entry's "confinement" is read. Real processes: a bash server
// (fixtures/confined_upstream.sh), real `corral worker`s.
#include <fstream>
#include <sstream>

#include "mcp_test_util.hpp"

namespace corral::mcp::testing {
namespace {

const std::string kFixtures = std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures";

// The setting of one stdio upstream "confined" running the fixture;
// `confinement` is the entry's value (JSON text), empty for none.
std::string setting(const Listener& listener, const WatchFifo& fifo,
                    const std::string& confinement) {
  json::object entry{
      {"command", json::array{"/bin/bash", kFixtures + "/confined_upstream.sh"}},
      {"env", json::object{{"set", json::object{{"PROBE_PORT", std::to_string(listener.port())},
                                                {"PROBE_FIFO", fifo.path()}}}}}};
  if (!confinement.empty()) entry["confinement"] = json::parse(confinement);
  return json::serialize(json::object{{"confined", std::move(entry)}});
}

// The default profile with what the fixture needs of the host: its folder
// read-only, the FIFO's folder writable.
std::string default_with_binds(const WatchFifo& fifo) {
  return json::serialize(json::object{
      {"binds", json::array{json::object{{"source", kFixtures}},
                            json::object{{"source", fifo.dir()}, {"writable", true}}}}});
}

std::string call_upstream(Harness& h, const std::string& tool) {
  json::object r = h.call(
      "execute", {{"code", "async () => { try { return await codemode.confined." + tool +
                               "({}); } catch (e) { return 'ERR ' + String(e.message ?? e); } }"}});
  return text_of(r);
}

// "uid=0 sid=12 net=open names=,A,B," -> the value of `key`.
std::string field(const std::string& text, const std::string& key) {
  const auto at = text.find(key + "=");
  if (at == std::string::npos) return {};
  const auto start = at + key.size() + 1;
  return text.substr(start, text.find_first_of(" \"", start) - start);
}

const json::object* upstream_status(Harness& h) {
  static thread_local json::object status;
  status = json::parse(h.service().status_json()).as_object();
  for (const auto& u : status.at("upstreams").as_array())
    if (u.at("name") == "confined") return &u.as_object();
  return nullptr;
}

bool protection_enforced(const json::object& upstream, const std::string& name) {
  for (const auto& p : upstream.at("protections").as_array())
    if (p.at("name").as_string() == name) return p.at("enforced").as_bool();
  return false;
}

// Deny by default: an entry without "confinement" runs as nobody (when
// corral is root and the kernel gives a user namespace), without the host's
// network, in a session of its own, without CORRAL_*; the status says what
// is enforced.
TEST(McpUpstreamConfinement, DefaultProfileWithholdsIdentityNetworkSessionAndSecrets) {
  ::setenv("CORRAL_AUTH_TOKEN", "secret-token", 1);
  Listener listener;
  WatchFifo fifo;
  Options options;
  options.upstreams = parse_upstreams(setting(listener, fifo, default_with_binds(fifo)));
  Harness h(std::move(options));
  const std::string seen = call_upstream(h, "probe");
  ::unsetenv("CORRAL_AUTH_TOKEN");
  std::fprintf(stderr, "the confined server saw: %s\n", seen.c_str());
  ASSERT_EQ(seen.find("ERR"), std::string::npos) << seen;
  const bool userns = kernel_allows_user_namespaces();
  if (::geteuid() == 0 && userns) {
    EXPECT_EQ(field(seen, "uid"), "65534") << seen;
  }
  if (::geteuid() == 0 || userns) {
    EXPECT_EQ(field(seen, "net"), "closed") << seen;
  }
  EXPECT_NE(field(seen, "sid"), std::to_string(::getsid(0))) << seen;
  EXPECT_FALSE(field(seen, "sid").empty()) << seen;
  EXPECT_EQ(seen.find("CORRAL_"), std::string::npos) << seen;
  EXPECT_NE(seen.find(",PROBE_PORT,"), std::string::npos) << seen;

  const json::object* up = upstream_status(h);
  ASSERT_NE(up, nullptr);
  EXPECT_FALSE(up->at("unit").as_string().empty());
  EXPECT_TRUE(protection_enforced(*up, "environment")) << json::serialize(*up);
  EXPECT_TRUE(protection_enforced(*up, "session"));
  EXPECT_TRUE(protection_enforced(*up, "unit"));
  EXPECT_EQ(protection_enforced(*up, "user_namespace"), userns) << json::serialize(*up);
  if (::geteuid() == 0 || userns) {
    EXPECT_TRUE(protection_enforced(*up, "network"));
  }
}

// "host" is the opt-out: the host's identity and network (the environment
// rule and the new session still apply).
TEST(McpUpstreamConfinement, HostProfileReachesTheHost) {
  Listener listener;
  WatchFifo fifo;
  Options options;
  options.upstreams = parse_upstreams(setting(listener, fifo, "\"host\""));
  Harness h(std::move(options));
  const std::string seen = call_upstream(h, "probe");
  std::fprintf(stderr, "the host-profile server saw: %s\n", seen.c_str());
  EXPECT_EQ(field(seen, "uid"), std::to_string(::geteuid())) << seen;
  EXPECT_EQ(field(seen, "net"), "open") << seen;
  EXPECT_NE(field(seen, "sid"), std::to_string(::getsid(0))) << seen;
  const json::object* up = upstream_status(h);
  ASSERT_NE(up, nullptr);
  EXPECT_FALSE(protection_enforced(*up, "user_namespace"));
}

// Closing the upstream (the service's shutdown), or its exit and restart,
// leaves nothing it started: a grandchild that double-forked and called
// setsid is gone too, on the default profile and on the host one (no pid
// namespace: only the unit holds it).
void expect_no_survivor(bool host, bool by_restart) {
  Listener listener;
  WatchFifo fifo;
  {
    Options options;
    options.upstreams =
        parse_upstreams(setting(listener, fifo, host ? "\"host\"" : default_with_binds(fifo)));
    options.restart_backoff_min = std::chrono::milliseconds(50);
    Harness h(std::move(options));
    EXPECT_NE(call_upstream(h, "spawn").find("spawned"), std::string::npos);
    ASSERT_TRUE(fifo.ready()) << "the grandchild never opened the FIFO";
    if (by_restart) {
      EXPECT_NE(call_upstream(h, "quit").find("ERR"), std::string::npos);
      EXPECT_TRUE(fifo.writers_gone()) << "a process the server started outlived its exit";
      return;
    }
  }  // the harness shuts the service down: the upstream is closed
  EXPECT_TRUE(fifo.writers_gone()) << "a process the server started outlived its close";
}

TEST(McpUpstreamConfinement, CloseKillsASetsidGrandchild) { expect_no_survivor(false, false); }

TEST(McpUpstreamConfinement, CloseKillsASetsidGrandchildOnTheHostProfile) {
  expect_no_survivor(true, false);
}

TEST(McpUpstreamConfinement, RestartKillsTheExitedServersSetsidGrandchild) {
  expect_no_survivor(false, true);
}

TEST(McpUpstreamConfinement, RestartKillsTheExitedServersSetsidGrandchildOnTheHostProfile) {
  expect_no_survivor(true, true);
}

std::string refusal(const std::string& text) {
  try {
    parse_upstreams(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

// The entry's "confinement" has the manifests' fields and meanings, and is
// read as strictly: each bad value is a typed error naming entry and field.
TEST(McpUpstreamConfinement, SettingIsReadStrictly) {
  auto one = [](const std::string& confinement) {
    return parse_upstreams(R"({"p": {"command": ["x"], "confinement": )" + confinement + "}}")
        .at(0)
        .confinement;
  };
  EXPECT_EQ(parse_upstreams(R"({"p": {"command": ["x"]}})").at(0).confinement,
            process::Confinement{});
  EXPECT_EQ(one(R"("confined")"), process::Confinement{});
  EXPECT_EQ(one(R"("host")"), process::Confinement::none());
  const process::Confinement c = one(
      R"({"user": "confined", "uid": 1000, "gid": 1000, "seccomp": false, "network": "host",
          "filesystem": "host_read_only", "binds": ["/srv/data:/data:rw", {"source": "/opt"}],
          "limits": {"processes": 32, "memory": "256MiB", "cpus": 0.5}, "strict": true})");
  EXPECT_EQ(c.uid, 1000u);
  EXPECT_FALSE(c.seccomp);
  EXPECT_TRUE(c.network);
  EXPECT_EQ(c.filesystem, process::FilesystemView::host_read_only);
  ASSERT_EQ(c.binds.size(), 2u);
  EXPECT_EQ(c.binds[0], (process::Bind{"/srv/data", "/data", true}));
  EXPECT_EQ(c.binds[1], (process::Bind{"/opt", "", false}));
  EXPECT_EQ(c.limits.processes, 32u);
  EXPECT_EQ(c.limits.memory_bytes, 256u << 20);
  EXPECT_EQ(c.limits.cpus, 0.5);
  EXPECT_TRUE(c.strict);

  const std::string entry = R"({"p": {"command": ["x"], "confinement": )";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"network": "host", "nope": 1})", R"(upstream "p": confinement: unknown key "nope")"},
      {R"({"network": true})", R"(upstream "p": confinement.network)"},
      {R"({"seccomp": "off"})", R"(upstream "p": confinement.seccomp)"},
      {R"({"binds": ["data"]})", R"(upstream "p": confinement.binds[0])"},
      {R"({"binds": [{"source": "/a", "target": "b"}]})", R"(upstream "p": confinement.binds[0])"},
      {R"({"limits": {"memory": "lots"}})", R"(upstream "p": confinement.limits.memory)"},
      {R"({"limits": {"processes": 0}})", R"(upstream "p": confinement.limits.processes)"},
      {R"({"user": "host", "uid": 5})", R"(upstream "p": confinement)"},
      {R"("sideways")", R"(upstream "p": confinement)"},
      {R"(null)", R"(upstream "p": confinement)"},
      {R"(["host"])", R"(upstream "p": confinement)"},
      {R"({"network": "none", "network": "host"})", R"("network" appears twice)"},
  };
  for (const auto& [value, message] : bad) {
    const std::string why = refusal(entry + value + "}}");
    EXPECT_NE(why.find(message), std::string::npos) << value << " -> " << why;
  }
  EXPECT_NE(refusal(R"({"p": {"url": "http://127.0.0.1:1/mcp", "confinement": "host"}})")
                .find("not a url"),
            std::string::npos);
}

// The upstream settings docs/mcp.md shows parse (the ```json blocks of the
// section on upstream servers; the client configurations are tested by
// tests/e2e/mcp.test.mjs).
TEST(McpUpstreamConfinement, DocsExamplesParse) {
  std::ifstream in(std::string(CORRAL_SOURCE_DIR) + "/docs/mcp.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  int parsed = 0, confined = 0;
  for (std::size_t at = text.find("```json\n"); at != std::string::npos;
       at = text.find("```json\n", at)) {
    at += 8;
    const std::string block = text.substr(at, text.find("```", at) - at);
    const json::value v = json::parse(block);
    bool upstreams = v.is_object() && !v.as_object().empty();
    if (upstreams)
      for (const auto& [name, e] : v.as_object())
        upstreams = upstreams && e.is_object() &&
                    (e.as_object().contains("command") || e.as_object().contains("url"));
    if (!upstreams) continue;
    const std::vector<Upstream> ups = parse_upstreams(block);
    ++parsed;
    for (const auto& u : ups) confined += u.confinement != process::Confinement{} ? 1 : 0;
  }
  EXPECT_GE(parsed, 3);
  EXPECT_GE(confined, 1) << "an example sets \"confinement\"";
}

}  // namespace
}  // namespace corral::mcp::testing
