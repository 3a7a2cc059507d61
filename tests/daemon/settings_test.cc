// tests/daemon/settings_test.cc: precedence, provenance and validation of
// the daemon's settings, parsed from a real CLI11 command line.
#include "daemon/settings.hpp"

#include <gtest/gtest.h>

#include <map>

namespace corral::daemon {
namespace {

struct Parsed {
  std::optional<Settings> settings;
  std::vector<std::string> errors;
  std::vector<Provenance> provenance;
};

Parsed parse(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  CLI::App app;
  SettingsParser parser(app);
  std::vector<const char*> argv{"corral"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  Parsed out;
  out.settings = parser.parse(out.errors, [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  out.provenance = parser.provenance();
  return out;
}

TEST(Settings, DefaultsAreValidAndSaySo) {
  Parsed p = parse({});
  ASSERT_TRUE(p.settings) << p.errors.at(0);
  EXPECT_EQ(p.settings->host, "127.0.0.1");
  EXPECT_GE(p.settings->workers, 1u);
  EXPECT_EQ(describe_non_defaults(p.provenance),
            std::vector<std::string>{"Every setting is at its default."});
}

TEST(Settings, FlagBeatsEnvironmentBeatsDefault) {
  Parsed p =
      parse({"--max-workers", "1"}, {{"CORRAL_MAX_WORKERS", "3"}, {"CORRAL_MAX_QUEUE", "42"}});
  ASSERT_TRUE(p.settings) << p.errors.at(0);
  EXPECT_EQ(p.settings->workers, 1u);
  EXPECT_EQ(p.settings->max_queue, 42u);
  EXPECT_EQ(describe_non_defaults(p.provenance),
            (std::vector<std::string>{"--max-workers is 1, from the flag.",
                                      "--max-queue is 42, from the environment."}));
}

// Retirement: by growth (a size, 0 turns it off) with a count as backstop,
// both reaching the pool.
TEST(Settings, RetirementByGrowthTakesASizeOrZero) {
  Parsed defaults = parse({});
  ASSERT_TRUE(defaults.settings) << defaults.errors.at(0);
  EXPECT_EQ(defaults.settings->retire_after_executions, 10'000u);
  EXPECT_EQ(defaults.settings->retire_on_growth, std::uint64_t{64} << 20);
  EXPECT_EQ(to_server_options(*defaults.settings).pool.retire_on_growth, std::uint64_t{64} << 20);
  Parsed off = parse({"--retire-on-growth", "0"});
  ASSERT_TRUE(off.settings) << off.errors.at(0);
  EXPECT_EQ(to_server_options(*off.settings).pool.retire_on_growth, 0u);
  Parsed env = parse({}, {{"CORRAL_RETIRE_ON_GROWTH", "128MiB"}});
  ASSERT_TRUE(env.settings) << env.errors.at(0);
  EXPECT_EQ(env.settings->retire_on_growth, std::uint64_t{128} << 20);
  Parsed bad = parse({"--retire-on-growth", "lots"});
  ASSERT_FALSE(bad.settings);
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0].rfind("--retire-on-growth or CORRAL_RETIRE_ON_GROWTH: ", 0), 0u)
      << bad.errors[0];
}

TEST(Settings, EveryProblemAtOnceNamingBothSpellings) {
  Parsed p = parse({"--max-workers", "0", "--max-queue", "0", "--timeout", "0"},
                   {{"CORRAL_RETIRE_AFTER", "0"},
                    {"CORRAL_EXECUTIONS_PER_WORKER", "zero"},
                    {"CORRAL_MEMORY_LIMIT", "0"}});
  EXPECT_FALSE(p.settings);
  const std::vector<std::string> expected = {
      "--max-workers or CORRAL_MAX_WORKERS: must be at least 1",
      "--executions-per-worker or CORRAL_EXECUTIONS_PER_WORKER: \"zero\" is not a whole number",
      "--max-queue or CORRAL_MAX_QUEUE: must be at least 1",
      "--retire-after or CORRAL_RETIRE_AFTER: must be at least 1",
      "--timeout or CORRAL_TIMEOUT: must be at least 1",
      "--memory-limit or CORRAL_MEMORY_LIMIT: must be at least 1",
  };
  ASSERT_EQ(p.errors.size(), expected.size()) << ::testing::PrintToString(p.errors);
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(p.errors[i], expected[i]);
}

TEST(Settings, DurationsAreBoundedAndDelayFitsInsideGrace) {
  Parsed p = parse({"--max-timeout", "30d", "--shutdown-delay", "10s", "--shutdown-grace", "10s"});
  EXPECT_FALSE(p.settings);
  ASSERT_EQ(p.errors.size(), 2u) << ::testing::PrintToString(p.errors);
  EXPECT_EQ(p.errors[0].rfind("--max-timeout or CORRAL_MAX_TIMEOUT: ", 0), 0u) << p.errors[0];
  EXPECT_EQ(p.errors[1],
            "--shutdown-delay or CORRAL_SHUTDOWN_DELAY: must be smaller than --shutdown-grace "
            "(the delay is spent inside the grace)");
}

TEST(Settings, SecretsAreRedactedInProvenance) {
  Parsed p = parse({"--auth-token", "s3cret"});
  ASSERT_TRUE(p.settings);
  EXPECT_EQ(p.settings->auth_token, "s3cret");
  EXPECT_EQ(describe_non_defaults(p.provenance),
            std::vector<std::string>{"--auth-token is (redacted), from the flag."});
}

// Deny by default: beyond loopback, serving without a token is refused
// unless said in so many words; loopback, localhost and unix sockets need
// nothing. The admin listener checks no token: beyond loopback it needs the
// opt-out whatever the tokens. (parse() accepts all of these: `corral mcp`
// on stdio listens nowhere; serve and check ask listening_errors.)
std::vector<std::string> refusals(std::vector<std::string> args,
                                  std::map<std::string, std::string> env = {}) {
  Parsed p = parse(std::move(args), std::move(env));
  EXPECT_TRUE(p.settings) << p.errors.at(0);
  return p.settings ? listening_errors(*p.settings) : std::vector<std::string>{"unparsed"};
}

TEST(Settings, AListenerBeyondLoopbackNeedsATokenOrTheOptOut) {
  for (const std::string host : {"0.0.0.0", "::", "10.1.2.3", "[2001:db8::1]", "corral.internal",
                                 "127.1", "::ffff:10.0.0.1"}) {
    const std::vector<std::string> refused = refusals({"--host", host});
    ASSERT_EQ(refused.size(), 1u) << host;
    EXPECT_NE(refused[0].find("--host or CORRAL_HOST: " + host + " is reachable beyond loopback"),
              std::string::npos)
        << refused[0];
    EXPECT_NE(refused[0].find("CORRAL_ALLOW_UNAUTHENTICATED=true"), std::string::npos);
    EXPECT_TRUE(refusals({"--host", host, "--auth-token", "t"}).empty()) << host;
    EXPECT_TRUE(refusals({"--host", host}, {{"CORRAL_ALLOW_UNAUTHENTICATED", "true"}}).empty())
        << host;
  }
  for (const std::string host :
       {"127.0.0.1", "127.8.9.10", "::1", "[::1]", "::ffff:127.0.0.1", "localhost", "LocalHost."}) {
    EXPECT_TRUE(refusals({"--host", host}).empty()) << host;
  }
  EXPECT_TRUE(refusals({"--host", "0.0.0.0", "--socket", "/tmp/corral.sock"}).empty());

  const std::vector<std::string> admin = refusals({"--admin-host", "0.0.0.0", "--auth-token", "t"});
  ASSERT_EQ(admin.size(), 1u);
  EXPECT_NE(admin[0].find("--admin-host or CORRAL_ADMIN_HOST: 0.0.0.0 is reachable beyond "
                          "loopback and the admin listener checks no token"),
            std::string::npos)
      << admin[0];
  EXPECT_TRUE(refusals({"--admin-host", "0.0.0.0", "--admin", "false"}).empty());
  EXPECT_TRUE(refusals({"--admin-host", "::1"}).empty());
  EXPECT_TRUE(refusals({"--admin-host", "0.0.0.0", "--host", "0.0.0.0", "--allow-unauthenticated"})
                  .empty());
  EXPECT_EQ(refusals({"--admin-host", "0.0.0.0", "--host", "0.0.0.0"}).size(), 2u);
}

TEST(Settings, OneTranslationToServerOptionsWithDerivedDrain) {
  Parsed p = parse({"--max-workers", "3", "--shutdown-grace", "30s", "--shutdown-delay", "5s",
                    "--metrics", "false"});
  ASSERT_TRUE(p.settings);
  server::Options o = to_server_options(*p.settings);
  EXPECT_EQ(o.pool.max_workers, 3u);
  // 30 s grace - 5 s delay - 1 s kill spacing - 1 s for the admin listener and flush.
  EXPECT_EQ(o.shutdown_drain, std::chrono::seconds(23));
  EXPECT_FALSE(o.instrumented);
  EXPECT_FALSE(o.pool.instrumented);
  EXPECT_FALSE(o.metrics.has_value());

  Parsed tight = parse({"--shutdown-grace", "2s", "--shutdown-delay", "1s"});
  ASSERT_TRUE(tight.settings);
  EXPECT_EQ(to_server_options(*tight.settings).shutdown_drain, std::chrono::milliseconds(0));
}

}  // namespace
}  // namespace corral::daemon

namespace corral::daemon {
namespace {

// Parses `args` as CLI11 does in the binary; returns CLI11's refusal, or "".
std::string cli_refusal(std::vector<std::string> args) {
  CLI::App app;
  SettingsParser parser(app);
  std::vector<const char*> argv{"corral"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(Settings, BooleansAreSwitchesAndTakeValues) {
  auto metrics = [](std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    Parsed p = parse(std::move(args), std::move(env));
    EXPECT_TRUE(p.settings) << ::testing::PrintToString(p.errors);
    return p.settings ? std::optional<bool>(p.settings->metrics) : std::nullopt;
  };
  EXPECT_EQ(metrics({}), true);
  EXPECT_EQ(metrics({"--no-metrics"}), false);
  EXPECT_EQ(metrics({"--metrics=false"}), false);
  EXPECT_EQ(metrics({"--metrics", "false"}), false);
  EXPECT_EQ(metrics({"--metrics", "off", "--max-queue", "3"}), false);
  EXPECT_EQ(metrics({"--metrics", "--max-queue", "3"}), true);  // a switch before another flag
  EXPECT_EQ(metrics({"--metrics"}, {{"CORRAL_METRICS", "false"}}), true);  // the flag wins
  EXPECT_EQ(metrics({"--no-metrics"}, {{"CORRAL_METRICS", "true"}}), false);
  EXPECT_EQ(metrics({}, {{"CORRAL_METRICS", "no"}}), false);
  Parsed negated = parse({"--no-admin", "--no-mcp"});
  ASSERT_TRUE(negated.settings);
  EXPECT_FALSE(negated.settings->admin);
  EXPECT_FALSE(negated.settings->mcp);
  EXPECT_EQ(describe_non_defaults(negated.provenance),
            (std::vector<std::string>{"--admin is false, from the flag.",
                                      "--mcp is false, from the flag."}));
  Parsed bad = parse({"--metrics", "maybe"});
  EXPECT_FALSE(bad.settings);
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0],
            "--metrics or CORRAL_METRICS: \"maybe\" is not true or false (also 1/0, yes/no, "
            "on/off)");
  Parsed both = parse({"--metrics", "--no-metrics"});
  EXPECT_FALSE(both.settings);
  EXPECT_EQ(both.errors,
            std::vector<std::string>{
                "--metrics or CORRAL_METRICS: give --metrics or --no-metrics, not both"});
  // A negation that undoes itself is a usage error; --no-metrics=true is
  // only wordy.
  EXPECT_NE(cli_refusal({"--no-metrics=false"}), "");
  EXPECT_EQ(metrics({"--no-metrics=true"}), false);
}

TEST(Settings, OneOriginAndHostAllowListForEveryListener) {
  Parsed p = parse({"--allowed-origins", "https://app.example, http://10.0.0.5:3000"},
                   {{"CORRAL_ALLOWED_HOSTS", "corral.example,api.example:9000"}});
  ASSERT_TRUE(p.settings) << ::testing::PrintToString(p.errors);
  EXPECT_EQ(p.settings->allowed_origins,
            (std::vector<std::string>{"https://app.example", "http://10.0.0.5:3000"}));
  EXPECT_EQ(p.settings->allowed_hosts,
            (std::vector<std::string>{"corral.example", "api.example:9000"}));
  const server::Options options = to_server_options(*p.settings);
  EXPECT_EQ(options.allowed_origins, p.settings->allowed_origins);
  EXPECT_EQ(options.allowed_hosts, p.settings->allowed_hosts);

  Parsed bad = parse({"--allowed-origins", "https://app.example/path", "--allowed-hosts", "a@b"});
  ASSERT_EQ(bad.errors.size(), 2u) << ::testing::PrintToString(bad.errors);
  EXPECT_EQ(bad.errors[0],
            "--allowed-origins or CORRAL_ALLOWED_ORIGINS: \"https://app.example/path\" is not an "
            "origin (scheme://host[:port], no path)");
  EXPECT_EQ(bad.errors[1],
            "--allowed-hosts or CORRAL_ALLOWED_HOSTS: \"a@b\" is not a host (host[:port])");
}

TEST(Settings, HelpShowsEachSettingsType) {
  CLI::App app;
  SettingsParser parser(app);
  const std::string help = app.help();
  for (const char* shown :
       {"--timeout DURATION", "--memory-limit SIZE", "--max-queue INT", "--port PORT",
        "--metrics [BOOL]", "--no-metrics", "--log-format text|json", "--host ADDRESS",
        "--mcp-result-budget SIZE", "--auth-token-file FILE"}) {
    EXPECT_NE(help.find(shown), std::string::npos) << shown << "\n" << help;
  }
  EXPECT_EQ(help.find("TEXT"), std::string::npos) << help;
}

TEST(Settings, CountsRefuseOverflowWithTheBound) {
  Parsed p = parse({"--max-queue", "99999999999999999999", "--mcp-max-sessions", "-1"},
                   {{"CORRAL_PORT", "65536"}});
  EXPECT_FALSE(p.settings);
  ASSERT_EQ(p.errors.size(), 3u) << ::testing::PrintToString(p.errors);
  EXPECT_EQ(p.errors[0], "--port or CORRAL_PORT: \"65536\" is not a port (0 to 65535)");
  EXPECT_EQ(p.errors[1], "--max-queue or CORRAL_MAX_QUEUE: must be at most " +
                             std::to_string(std::numeric_limits<std::size_t>::max()));
  EXPECT_EQ(p.errors[2],
            "--mcp-max-sessions or CORRAL_MCP_MAX_SESSIONS: \"-1\" is not a whole number");
}

TEST(Settings, SizesAndDurationsSayWhatTheyAccept) {
  Parsed p = parse({"--memory-limit", "64 parsecs", "--timeout", "1e10"},
                   {{"CORRAL_RESPONSE_LIMIT", "16MB"}, {"CORRAL_MCP_RESULT_BUDGET", "64k"}});
  EXPECT_FALSE(p.settings);
  ASSERT_EQ(p.errors.size(), 2u) << ::testing::PrintToString(p.errors);
  EXPECT_EQ(p.errors[0].rfind("--timeout or CORRAL_TIMEOUT: \"1e10\" is too long (at most", 0), 0u)
      << p.errors[0];
  EXPECT_EQ(p.errors[1].rfind("--memory-limit or CORRAL_MEMORY_LIMIT: \"parsecs\" is not a size "
                              "unit; a size is a number of bytes",
                              0),
            0u)
      << p.errors[1];
  Parsed units =
      parse({}, {{"CORRAL_RESPONSE_LIMIT", "16MB"}, {"CORRAL_MCP_RESULT_BUDGET", "64k"}});
  ASSERT_TRUE(units.settings);
  EXPECT_EQ(units.settings->response_limit, 16'000'000u);
  EXPECT_EQ(units.settings->mcp_result_budget, 65536u);
}

TEST(Settings, CoreListsEverySettingsVariableInOrder) {
  // core::setting_variables() is what the front binary warns with; the
  // parser is what the daemon reads. Add a setting to both, in the same
  // place (the order breaks ties between suggestions).
  CLI::App scratch;
  const std::vector<std::string> parsed = SettingsParser(scratch).variables();
  const auto listed = corral::core::setting_variables();
  EXPECT_EQ(parsed, std::vector<std::string>(listed.begin(), listed.end()));
}

TEST(Settings, VariablesThatNameNoSettingAreReportedWithTheClosest) {
  const std::vector<std::string> warnings = unknown_variable_warnings(
      {"CORRAL_MAX_WORKER", "CORRAL_WORKERS", "CORRAL_TIMEOUTS", "CORRAL_MEMORY", "CORRAL_PORT",
       "CORRAL_MCP_MODE", "CORRAL_BINARY", "CORRAL_TEST_SERVER", "CORRAL_WERROR", "PATH",
       "corral_port", "CORRAL_", "CORRAL_XYZZY_PLUGH_FROBNICATE", "CORRAL_A\x01"});
  const std::vector<std::string> expected = {
      "CORRAL_MAX_WORKER names no setting; it is ignored (did you mean CORRAL_MAX_WORKERS?)",
      "CORRAL_WORKERS names no setting; it is ignored (did you mean CORRAL_WORKER or "
      "CORRAL_MAX_WORKERS?)",
      "CORRAL_TIMEOUTS names no setting; it is ignored (did you mean CORRAL_TIMEOUT?)",
      "CORRAL_MEMORY names no setting; it is ignored (did you mean CORRAL_MEMORY_LIMIT?)",
      "CORRAL_XYZZY_PLUGH_FROBNICATE names no setting; it is ignored",
      "\"CORRAL_A\\x01\" names no setting; it is ignored",
  };
  EXPECT_EQ(warnings, expected);
  EXPECT_EQ(environment_names(nullptr), std::vector<std::string>{});
  char a[] = "CORRAL_PORT=1", b[] = "EMPTY=", c[] = "ODD";
  char* env[] = {a, b, c, nullptr};
  EXPECT_EQ(environment_names(env), (std::vector<std::string>{"CORRAL_PORT", "EMPTY", "ODD"}));
}

}  // namespace
}  // namespace corral::daemon
