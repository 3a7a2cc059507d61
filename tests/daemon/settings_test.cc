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
