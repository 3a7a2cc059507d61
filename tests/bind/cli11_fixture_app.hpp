// tests/bind/cli11_fixture_app.hpp: one CLI11 app tree, used both by the
// fixture program (which runs it) and by the test (which binds it).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace corral::bind::testing {

struct FixtureValues {
  std::string name = "world";
  int times = 1;
  double ratio = 0.5;
  bool loud = false;
  unsigned port = 0;
  std::vector<std::string> tags;
  std::vector<std::string> words;
  std::string secret;
  std::string level = "info";
  std::string ran;
  enum class Color { red, green } color = Color::red;
};

inline void build_fixture_app(CLI::App& app, FixtureValues& v) {
  app.name("fixture");
  app.require_subcommand(1);
  auto* greet = app.add_subcommand("greet", "Say hello");
  greet->add_option("--name", v.name, "who to greet")->capture_default_str();
  greet->add_option("--times", v.times, "how often")->required();
  greet->add_option("--ratio", v.ratio, "a float")->capture_default_str();
  greet->add_flag("--loud", v.loud, "shout");
  greet->add_option("--port", v.port, "an unsigned");
  greet->add_option("--tag", v.tags, "repeatable");
  greet->add_option("--secret", v.secret, "hidden")->group("");
  greet->add_option("words", v.words, "positional words");
  greet->callback([&v] { v.ran = "greet"; });

  auto* admin = app.add_subcommand("admin", "Administration");
  admin->require_subcommand(1);
  auto* hidden = admin->add_subcommand("purge", "Dangerous");
  hidden->group("");
  hidden->callback([&v] { v.ran = "purge"; });
  auto* level = admin->add_subcommand("level", "Set the log level");
  level->add_option("--level", v.level, "log level")
      ->check(CLI::IsMember({"debug", "info", "warn"}));
  level->add_option("--color", v.color, "an enum: CLI11 names its type ENUM");
  level->callback([&v] { v.ran = "level"; });
}

}  // namespace corral::bind::testing
