// tests/bind/cli11_test.cc: bind a CLI11 app tree and run the program it
// belongs to.
#include <gtest/gtest.h>

#include "bind/bind_test_util.hpp"
#include "bind/cli11_fixture_app.hpp"
#include "core/json.hpp"
#include "corral/bind_cli11.hpp"

namespace corral::bind {
namespace {

namespace json = core::json;
using testing::names;

std::unique_ptr<Binding> bind_fixture(BindOptions options = {}) {
  CLI::App app{"fixture"};
  testing::FixtureValues values;
  testing::build_fixture_app(app, values);
  CommandTree tree = tree_from_cli11(app, CORRAL_TEST_CLI11_FIXTURE);
#if defined(__SANITIZE_ADDRESS__)
  // The fixture is an AddressSanitizer binary too. At exit LeakSanitizer
  // ptraces its threads from a helper process; the confined profile's
  // seccomp filter kills that helper, and LeakSanitizer then waits for it
  // forever. The confined environment has no ASAN_OPTIONS of the suite's,
  // so the fixture is given one (docs/security.md, "Bound commands").
  tree.hardening.environment_set["ASAN_OPTIONS"] = "detect_leaks=0";
#endif
  return Binding::bind(std::move(tree), options);
}

TEST(Cli11Tree, MapsCommandsFlagsAndFilters) {
  BindOptions options;
  options.codecs["color"] = TextCodec{R"({"enum":["0","1"]})"};
  auto binding = bind_fixture(options);
  // fixture itself requires a subcommand, admin too; purge is hidden.
  EXPECT_EQ(names(*binding), (std::vector<std::string>{"fixture_greet", "fixture_admin_level"}));
  auto schema = json::parse(binding->find("fixture_greet")->input_schema);
  auto& flags = schema.at("properties").at("flags");
  auto& props = flags.at("properties");
  EXPECT_EQ(props.at("name").at("type"), "string");
  EXPECT_EQ(props.at("name").at("default"), "world");
  EXPECT_EQ(props.at("times").at("type"), "integer");
  EXPECT_EQ(props.at("ratio").at("type"), "number");
  EXPECT_EQ(props.at("loud").at("type"), "boolean");
  EXPECT_EQ(props.at("port").at("minimum"), 0);
  EXPECT_EQ(props.at("tag").at("type"), "array");
  EXPECT_FALSE(props.as_object().contains("secret"));
  EXPECT_FALSE(props.as_object().contains("help"));
  EXPECT_EQ(flags.at("required").as_array(), json::array{"times"});
}

TEST(Cli11Tree, EnumTypeNeedsACodec) {
  try {
    bind_fixture();
    FAIL();
  } catch (const std::invalid_argument& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("fixture admin level"), std::string::npos) << m;
    EXPECT_NE(m.find("--color"), std::string::npos) << m;
    EXPECT_NE(m.find("ENUM"), std::string::npos) << m;
  }
}

TEST(Cli11Tree, CallsRoundTripThroughTheProgram) {
  BindOptions options;
  options.codecs["color"] = TextCodec{R"({"enum":["0","1"]})"};
  auto binding = bind_fixture(options);
  Execution e = binding->call("fixture_greet", R"({
      "flags": {"times": 3, "ratio": 0.25, "loud": true, "port": 8080, "tag": ["a", "-b"],
                "name": "-x"},
      "args": ["--loud", "-rf"]})");
  auto out = json::parse(e.stdout_text());
  EXPECT_EQ(out.at("ran"), "greet");
  EXPECT_EQ(out.at("times"), 3);
  EXPECT_EQ(out.at("ratio"), 0.25);
  EXPECT_EQ(out.at("loud"), true);
  EXPECT_EQ(out.at("port"), 8080);
  EXPECT_EQ(out.at("name"), "-x");
  EXPECT_EQ(out.at("tags"), (json::array{"a", "-b"}));
  EXPECT_EQ(out.at("words"), (json::array{"--loud", "-rf"}));

  // Greedy last flag: the binding sends `--` twice so "-rf" stays an arg.
  EXPECT_EQ(
      binding->argv_for("fixture_greet", R"({"flags":{"times":1,"tag":["a"]},"args":["-rf"]})"),
      (std::vector<std::string>{CORRAL_TEST_CLI11_FIXTURE, "greet", "--times=1", "--tag=a", "--",
                                "--", "-rf"}));
  Execution greedy =
      binding->call("fixture_greet", R"({"flags":{"times":1,"tag":["a"]},"args":["-rf"]})");
  EXPECT_EQ(json::parse(greedy.stdout_text()).at("words"), (json::array{"-rf"}));

  Execution level =
      binding->call("fixture_admin_level", R"({"flags":{"level":"warn","color":"1"}})");
  EXPECT_EQ(json::parse(level.stdout_text()).at("level"), "warn");
  EXPECT_EQ(json::parse(level.stdout_text()).at("color"), 1);
  EXPECT_THROW(binding->call("fixture_admin_level", R"({"flags":{"color":"blue"}})"), SandboxError);
  // CLI11's own validator still guards what the schema does not say.
  EXPECT_THROW(binding->call("fixture_admin_level", R"({"flags":{"level":"loud"}})"), CommandError);
}

}  // namespace
}  // namespace corral::bind
